"""A lighter copy of the widget renderer the site serves (``@jupyter-widgets/html-manager``'s
``dist/embed-amd.js``, 3.6 MB as published), for pages that load it on every visit.

The published file is several AMD modules one after another. Two of them render widgets saved
by ipywidgets 7 (``@jupyter-widgets/base7`` and ``controls7``, 0.8 MB); the site's pages are
saved by ipywidgets 8 and never ask for them. And every stylesheet inside it carries its
source map, the stylesheet's text a second time (0.5 MB), which no page uses. ``trim`` drops
both and raises ``ValueError`` when the file no longer looks as described, so a new release of
the renderer fails the site build instead of shipping a broken page.
"""
from __future__ import annotations

import re
from pathlib import Path

IPYWIDGETS_7_MODULES = ("@jupyter-widgets/base7", "@jupyter-widgets/controls7")
_MODULE_START = re.compile(r'^(?:/\*! For license information please see [^*]*\*/\n)?define\("([^"]+)"', re.M)
_SOURCE_MAP = re.compile(r"\{version:3,sources:\[")


def _modules(text: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each top-level ``define("name", ...)`` block, its licence line included."""
    starts = [(match.group(1), match.start()) for match in _MODULE_START.finditer(text)]
    return [(name, start, starts[i + 1][1] if i + 1 < len(starts) else len(text))
            for i, (name, start) in enumerate(starts)]


def _object_end(text: str, start: int) -> int:
    """The index just past the JavaScript object literal opening at ``start`` (strings skipped)."""
    depth, i = 0, start
    while i < len(text):
        char = text[i]
        if char in "\"'`":
            i += 1
            while text[i] != char:
                i += 2 if text[i] == "\\" else 1
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("the widget renderer ends inside a source map: not the file scripts/widget_renderer.py knows")


def trim(text: str) -> str:
    """``text`` (embed-amd.js) without the ipywidgets 7 modules and the stylesheets' source maps."""
    names = [name for name, _, _ in _modules(text)]
    missing = [name for name in (*IPYWIDGETS_7_MODULES, "@jupyter-widgets/html-manager") if name not in names]
    if missing:
        raise ValueError(f"the widget renderer has no module {', '.join(missing)} (modules: {', '.join(names)}): "
                         "update scripts/widget_renderer.py for this release of @jupyter-widgets/html-manager")
    kept = "".join(text[start:end] for name, start, end in _modules(text) if name not in IPYWIDGETS_7_MODULES)
    kept = text[:_modules(text)[0][1]] + kept
    maps = [match.start() for match in _SOURCE_MAP.finditer(kept)]
    if not maps:
        raise ValueError("the widget renderer's stylesheets carry no source maps any more: "
                         "update scripts/widget_renderer.py for this release of @jupyter-widgets/html-manager")
    pieces, last = [], 0
    for start in maps:
        # css-loader's entries are [id, css, media, sourceMap]: an empty map makes it return the css alone.
        pieces += [kept[last:start], '""']
        last = _object_end(kept, start)
    return "".join(pieces) + kept[last:]


def trim_file(path: Path) -> tuple[int, int]:
    """Trim the renderer at ``path`` in place; returns its size before and after, in bytes."""
    before = path.read_text(encoding="utf-8")
    after = trim(before)
    path.write_text(after, encoding="utf-8")
    return len(before.encode()), len(after.encode())
