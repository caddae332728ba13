"""A Sphinx extension that makes the course site read as a course (site/conf.py loads it).

- Folded content stays folded in search too: the "Check yourself" and homework answers
  (``<details>`` in the notebooks' Markdown) and outputs folded with the ``hide-output`` tag
  are left out of the search index; site/reading/course-reading.js leaves them out of the
  search snippets as well, with the theme's buttons, and writes formulas as plain text there.
- Lessons come before the API reference in search results (site/reading/search-scorer.js).
- The landing page states how long the course takes: the sum of the times in the notebooks'
  headers, computed here at every build (``<!-- course-length -->`` in site/index.md).
- site/reading/ is served from _static: the page script (slider handles named and read out
  with their values, static widgets' controls greyed where they change nothing, no typing
  into a readout, formulas put in the tab order only when the reader asks) and the styles
  (visible focus, the print edition's layout, see scripts/build_pdf.py).
"""
from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes

READING = Path(__file__).resolve().parent.parent / "site" / "reading"
LENGTH_MARKER = "<!-- course-length -->"
NO_SEARCH = "no-search"  # Sphinx's own class for nodes its search index skips
_HEADER_TIME = re.compile(r"\*\*Time:\*\*\s*about (\d+)(?: to (\d+))? minutes")
_MORE = {"going_further": re.compile(r"Going further\* part[^;.]*?about (\d+) more"),
         "homework": re.compile(r"homework questions about (\d+) more")}


def notebook_minutes(header: str) -> dict:
    """The minutes a notebook's header (its first cell) gives: ``core`` as (low, high), and the
    optional ``going_further`` part and ``homework`` questions (0 when it names none)."""
    match = _HEADER_TIME.search(header)
    if match is None:
        raise ValueError("a notebook header must say '**Time:** about N minutes' or '**Time:** about N to M minutes', "
                         f"got {header[:200]!r}")
    low = int(match.group(1))
    minutes = {"core": (low, int(match.group(2) or low))}
    rest = header[match.end():].split("\n", 1)[0]
    for part, pattern in _MORE.items():
        more = pattern.search(rest)
        minutes[part] = int(more.group(1)) if more else 0
    return minutes


def course_length(headers: list[str]) -> str:
    """One sentence for the landing page: the summed core time of ``headers``, and the rest."""
    times = [notebook_minutes(header) for header in headers if "**Time:**" in header]  # a page without one is no lesson
    low, high = (sum(t["core"][i] for t in times) for i in (0, 1))
    more = sum(t["going_further"] + t["homework"] for t in times)
    hours = f"{low / 60:.1f}" if low == high else f"{low / 60:.1f} to {high / 60:.1f}"
    return (f"The {len(times)} notebooks take about {hours} hours for their cores ({low} to {high} minutes, "
            f"the sum of the times in their headers), and about "
            f"{more / 60:.0f} hours more with every optional part and homework question.")


def _notebook_headers(srcdir: Path) -> list[str]:
    import nbformat

    return [nbformat.read(path, as_version=4).cells[0].source for path in sorted((srcdir / "notebooks").glob("[0-9][0-9]_*.ipynb"))]


def _state_length(app, docname: str, source: list) -> None:
    if LENGTH_MARKER in source[0]:
        source[0] = source[0].replace(LENGTH_MARKER, course_length(_notebook_headers(Path(app.srcdir))))


def _opens_details(node) -> int:
    text = node.astext()
    return len(re.findall(r"<details\b", text)) - len(re.findall(r"</details>", text))


class folded_raw(nodes.raw):
    """Raw HTML inside or around a fold (a ``<details>`` line, its ``</details>``): search skips
    it (its ``no-search`` class), and the page gets its HTML as it is. docutils would wrap a raw
    node with a class in ``<div class="no-search">``, and that div's end closes an open
    ``<details>`` early: the folded answer or solution after it would show, unfolded."""


def _visit_folded_raw(translator, node) -> None:
    if "html" in node.get("format", "").split():
        translator.body.append(node.astext())
    raise nodes.SkipNode


def mark_folded_unsearchable(doctree) -> int:
    """Give every folded part of ``doctree`` Sphinx's ``no-search`` class: the nodes between a
    raw ``<details>`` and its ``</details>`` (Markdown between the two HTML lines), raw HTML that
    holds a ``<details>`` (as a ``folded_raw``, written without a wrapper), and myst-nb's folded
    cell parts. Returns how many nodes it marked."""
    from myst_nb.sphinx_ import HideCodeCellNode

    marked = 0
    for node in list(doctree.findall(HideCodeCellNode)):
        node["classes"].append(NO_SEARCH)
        marked += 1
    for parent in list(doctree.findall(nodes.Element)):
        depth = 0
        for child in list(parent.children):
            raw = isinstance(child, nodes.raw)
            opening = _opens_details(child) if raw else 0
            if depth > 0 or opening > 0 or (raw and "<details" in child.astext()):
                if raw and not isinstance(child, folded_raw):
                    parent.replace(child, folded_raw(child.rawsource, child.astext(), format=child.get("format", ""),
                                                     classes=[*child["classes"], NO_SEARCH]))
                    marked += 1
                elif isinstance(child, nodes.Element) and NO_SEARCH not in child["classes"]:
                    child["classes"].append(NO_SEARCH)
                    marked += 1
            depth = max(0, depth + opening)
    return marked


def _fold_in_search(app, doctree, docname: str) -> None:
    mark_folded_unsearchable(doctree)


def _serve_reading_files(app, config) -> None:
    config.html_static_path.append(str(READING))
    if not config.html_search_scorer:
        config.html_search_scorer = str(READING / "search-scorer.js")


def setup(app):
    app.connect("config-inited", _serve_reading_files)
    app.connect("source-read", _state_length)
    app.add_node(folded_raw, html=(_visit_folded_raw, None))
    app.connect("doctree-resolved", _fold_in_search)
    app.add_js_file("course-reading.js")
    app.add_css_file("course-reading.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
