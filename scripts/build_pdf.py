#!/usr/bin/env python
"""The course's printable edition: Chromium's print of the built site's pages, as PDFs.

    make pdf                                   # builds the site, then writes build/pdf/
    python -m scripts.build_pdf                # from an already built build/site/
    python -m scripts.build_pdf --only 01 02   # just these notebooks (no whole-course PDFs)

For every notebook page it writes two PDFs into build/pdf/: ``NN_name.pdf``, the teacher
edition, with every folded part opened (the "Check yourself" answers, the homework answers,
folded outputs), and ``NN_name-student.pdf``, the student edition, without them: folded parts
and homework answers removed, each exercise's solution replaced by its stub from the student
edition notebook, exercises' outputs cleared. Then ``course.pdf`` and ``course-student.pdf``,
every notebook in order, one bookmark each.

The pages are served from 127.0.0.1 and printed by Debian's Chromium (Playwright, as the
browser tests run it), nothing is fetched from outside: formulas are set by the site's own
MathJax, static widgets print their default picture, and the print styles of
site/reading/course-reading.css keep every code line whole and a code cell on one page where
it fits. Needs /usr/bin/chromium (``apt-get install chromium``).
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import re
import sys
import threading
import time
from pathlib import Path

import nbformat

from scripts import build_site

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SITE = build_site.DEFAULT_OUT
DEFAULT_OUT = ROOT / "build" / "pdf"
EDITIONS = ("teacher", "student")
COURSE_PDF = {"teacher": "course.pdf", "student": "course-student.pdf"}
PAGE_TIMEOUT_MS = 120_000

READY_JS = """() => {
  const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
  const areas = Array.from(document.querySelectorAll('.widget-subarea'));
  const widgets = areas.length === views && areas.every(a => a.children.length > 0);
  const images = Array.from(document.images).every(i => i.complete);
  return widgets && images && !!(window.MathJax && MathJax.startup && MathJax.startup.promise);
}"""

# The teacher edition: every folded part open.
TEACHER_JS = "() => { document.querySelectorAll('details').forEach(d => { d.open = true; }); }"

# The student edition, as scripts/build_student_edition.py makes it: homework answers and every
# folded part gone, each solution cell showing its stub, exercises' outputs cleared.
STUDENT_JS = """(stubs) => {
  document.querySelectorAll('details, .no-search, .tag_answer').forEach(e => e.remove());  // .no-search: scripts.site_reading's folded parts
  const solutions = Array.from(document.querySelectorAll('.cell.tag_solution'));
  if (solutions.length !== stubs.length) return `${solutions.length} solution cells on the page, ${stubs.length} stubs`;
  solutions.forEach((cell, i) => {
    const code = cell.querySelector('.cell_input pre');
    if (code) code.textContent = stubs[i];
  });
  document.querySelectorAll('.cell.tag_solution .cell_output, .cell.tag_check .cell_output').forEach(e => e.remove());
  return '';
}"""

FOOTER = ('<div style="font-size: 8px; width: 100%; text-align: center; color: #555;">'
          '<span class="title"></span> · page <span class="pageNumber"></span> of <span class="totalPages"></span></div>')


def notebook_pages(site: Path, only: list[str] | None = None) -> list[str]:
    """The stems of the notebooks the built ``site`` has a page for (``only``: those whose stem starts so)."""
    stems = sorted(path.stem for path in (site / "notebooks").glob("[0-9][0-9]_*.html"))
    if only:
        missing = [prefix for prefix in only if not any(stem.startswith(prefix) for stem in stems)]
        if missing:
            raise ValueError(f"no notebook page starts with {', '.join(missing)} in {site / 'notebooks'}")
        stems = [stem for stem in stems if any(stem.startswith(prefix) for prefix in only)]
    return stems


def student_stubs(site: Path, stem: str) -> list[str]:
    """The sources of the solution cells of ``stem``'s student edition, as the site offers it for download."""
    path = site / "downloads" / "student" / build_site.student_file_name(f"{stem}.ipynb")
    notebook = nbformat.read(path, as_version=4)
    return [cell.source for cell in notebook.cells if "solution" in cell.metadata.get("tags", [])]


def pdf_name(stem: str, edition: str) -> str:
    """``NN_name.pdf`` (teacher) or ``NN_name-student.pdf``: the two editions never share a name."""
    return f"{stem}.pdf" if edition == "teacher" else f"{stem}-student.pdf"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(folder: Path, port: int = 0):
    """``folder`` over HTTP on 127.0.0.1 (any free port unless ``port``); yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def print_page(browser, base_url: str, site: Path, stem: str, edition: str, path: Path) -> int:
    """Print notebook ``stem``'s page in ``edition`` to ``path``; returns the PDF's size in bytes.
    Every request that leaves the site is refused; RuntimeError if the page is not ready in time."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {EDITIONS}, got {edition!r}")
    context = browser.new_context(viewport={"width": 1100, "height": 1400})
    try:
        page = context.new_page()
        page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base_url)
                   or route.request.url.startswith(("data:", "blob:")) else route.abort())
        page.goto(f"{base_url}notebooks/{stem}.html", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        try:
            page.wait_for_function(READY_JS, timeout=PAGE_TIMEOUT_MS)
        except Exception as error:
            raise RuntimeError(f"{stem}: its widgets, pictures or formulas were not ready to print: {error}") from None
        page.evaluate("MathJax.startup.promise")
        if edition == "teacher":
            page.evaluate(TEACHER_JS)
        else:
            problem = page.evaluate(STUDENT_JS, student_stubs(site, stem))
            if problem:
                raise RuntimeError(f"{stem}: the student edition cannot be printed from this page: {problem}")
        path.parent.mkdir(parents=True, exist_ok=True)
        page.pdf(path=str(path), format="A4", print_background=True, outline=True, display_header_footer=True,
                 header_template="<span></span>", footer_template=FOOTER,
                 margin={"top": "14mm", "bottom": "16mm", "left": "13mm", "right": "13mm"})
        return path.stat().st_size
    finally:
        context.close()


def merge(parts: list[tuple[str, Path]], path: Path) -> int:
    """One PDF at ``path`` of ``parts`` (title, PDF) in order, each part a top-level bookmark; returns its pages."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    for title, part in parts:
        writer.append(str(part), outline_item=title)
    with open(path, "wb") as handle:
        writer.write(handle)
    return len(writer.pages)


def _title(site: Path, stem: str) -> str:
    """The page's title as its notebook's first heading says it (``01 · One residual block by hand``)."""
    page = (site / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
    match = re.search(r"<h1>(.*?)<a class=\"headerlink\"", page, re.S)
    return re.sub(r"<[^>]+>", "", match.group(1)).strip() if match else stem


def build(site: Path = DEFAULT_SITE, out: Path = DEFAULT_OUT, only: list[str] | None = None,
          editions=EDITIONS) -> dict:
    """Print the notebook pages of the built ``site`` into ``out``; returns each file's bytes and
    pages, and the seconds it all took. The whole-course PDFs are written only without ``only``."""
    from pypdf import PdfReader

    from benchmarks.lab_session import chromium

    site, out = Path(site).resolve(), Path(out).resolve()
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"no built site in {site}: run `make site` first (or `make pdf`, which does)")
    started = time.perf_counter()
    stems = notebook_pages(site, only)
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    with serve(site) as base_url, chromium() as browser:
        for stem in stems:
            for edition in editions:
                path = out / pdf_name(stem, edition)
                print_page(browser, base_url, site, stem, edition, path)
                files[path.name] = path
    if not only:
        for edition in editions:
            path = out / COURSE_PDF[edition]
            merge([(_title(site, stem), out / pdf_name(stem, edition)) for stem in stems], path)
            files[path.name] = path
    report = {name: {"bytes": path.stat().st_size, "pages": len(PdfReader(str(path)).pages)} for name, path in files.items()}
    return {"seconds": time.perf_counter() - started, "files": report}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=DEFAULT_SITE, help=f"the built site (default {DEFAULT_SITE})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the PDFs go (default {DEFAULT_OUT})")
    parser.add_argument("--only", nargs="+", metavar="NN", help="print only the notebooks whose names start so")
    parser.add_argument("--report", type=Path, help="also write each file's bytes and pages there, as JSON")
    args = parser.parse_args(argv)
    report = build(args.site, args.out, args.only)
    if args.report:
        args.report.write_text(json.dumps(report, indent=1), encoding="utf-8")
    files = report["files"]
    print(f"pdf: {len(files)} files, {sum(f['pages'] for f in files.values())} pages, "
          f"{sum(f['bytes'] for f in files.values()) / 1e6:.1f} MB, in {report['seconds']:.0f} s: {args.out.resolve()}")
    for name in (COURSE_PDF["teacher"], COURSE_PDF["student"]):
        if name in files:
            print(f"  {name}: {files[name]['pages']} pages, {files[name]['bytes'] / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
