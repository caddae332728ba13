"""The lighter widget renderer the site serves (scripts/widget_renderer.py)."""
from pathlib import Path

import pytest

from scripts import widget_renderer

PUBLISHED = Path(__file__).resolve().parent.parent / "site/node_modules/@jupyter-widgets/html-manager/dist/embed-amd.js"

# The published file's shape in miniature: licence lines, AMD modules, css-loader entries with source maps.
FAKE = ('/*! For license information please see base.js.LICENSE.txt */\ndefine("@jupyter-widgets/base",["module"],(e=>1));\n'
        '/*! For license information please see base7.js.LICENSE.txt */\ndefine("@jupyter-widgets/base7",["module"],(e=>7));\n'
        'define("@jupyter-widgets/controls7",["module"],(e=>"7}"));\n'
        'define("@jupyter-widgets/html-manager",["module"],(e=>{n.push([e.id,".a{content:\\"}\\"}","",'
        '{version:3,sources:["a.css"],names:[],mappings:"AAAA,{",sourcesContent:[".a{}"]}])}));\n')


def test_trim_drops_the_ipywidgets_7_modules_and_the_stylesheets_source_maps():
    trimmed = widget_renderer.trim(FAKE)
    assert trimmed == ('/*! For license information please see base.js.LICENSE.txt */\ndefine("@jupyter-widgets/base",["module"],(e=>1));\n'
                       'define("@jupyter-widgets/html-manager",["module"],(e=>{n.push([e.id,".a{content:\\"}\\"}","",""])}));\n')


def test_trim_says_when_the_renderer_is_not_the_file_it_knows():
    with pytest.raises(ValueError, match="no module @jupyter-widgets/base7"):
        widget_renderer.trim(FAKE.replace("base7", "base8"))
    with pytest.raises(ValueError, match="carry no source maps"):
        widget_renderer.trim(FAKE.replace("version:3", "version:4"))


def test_the_published_renderer_still_trims_to_the_modules_the_site_uses():
    # Fails when a new @jupyter-widgets/html-manager in site/package-lock.json changes the file's shape.
    text = PUBLISHED.read_text(encoding="utf-8")
    trimmed = widget_renderer.trim(text)
    assert [name for name, _, _ in widget_renderer._modules(trimmed)] == [
        "@jupyter-widgets/base", "@jupyter-widgets/controls", "@jupyter-widgets/html-manager",
        "@jupyter-widgets/html-manager/dist/libembed-amd"]
    assert "version:3,sources:[" not in trimmed
    assert len(trimmed) < len(text) - 1_000_000
