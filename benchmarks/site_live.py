"""How fast "Run this page" answers on the course site, and what it weighs (make benchmark).

    python -m benchmarks.site_live [--site build/site] [--output benchmarks/RESULTS.md]

Serves the built site (building it first when needed) beside a JupyterLab server of its own
(benchmarks/lab_session.py) and, for every notebook page in headless Chromium, times from the
click on *Run this page* to the first output a visible cell shows when run: the kernel's
start, the hidden setup cells and the live plots included. Also sums the bytes the live code
adds: what every notebook page loads (course-live.js and .css) and what the first click loads
(thebe's lib/, as the page fetched it).
"""
from __future__ import annotations

import argparse
import functools
import statistics
import time
from pathlib import Path

from benchmarks import lab_session as lab_tools
from benchmarks.report import with_section
from scripts import site_live

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADING = "## Live code on the site"


def measure(site: Path, base: Path) -> dict:
    """Seconds from the click to the first output, per page, and the bytes the live code adds."""
    from tests.test_site import _QuietHandler, serving
    from tests.test_site_live import PORTS, first_visible, kernel_source, local, run_cell

    pages = sorted((site / "notebooks").glob("[0-9][0-9]_*.html"))
    every_page = sum((site / "_static" / name).stat().st_size for name in site_live.LIVE_FILES)
    seconds, thebe_bytes = {}, []
    with serving(functools.partial(_QuietHandler, directory=str(site)), PORTS) as server, \
            lab_tools.running_lab(base, (f"--ServerApp.allow_origin={server}",)) as lab, \
            kernel_source(site, local(lab)), lab_tools.chromium() as browser:
        for path in pages:
            context = browser.new_context()
            page = context.new_page()
            loaded = []
            page.on("response", lambda response: loaded.append(response) if "/_static/thebe/" in response.url else None)
            page.goto(f"{server}/notebooks/{path.name}", wait_until="load")
            started = time.perf_counter()
            page.locator(".course-live-start").click()
            page.wait_for_function("document.documentElement.dataset.courseLive === 'ready'", timeout=600_000)
            run_cell(page, first_visible(page))
            seconds[path.stem] = time.perf_counter() - started
            thebe_bytes.append(sum(len(response.body()) for response in loaded))
            context.close()
            lab.shut_down_kernels()
    return {"seconds": seconds, "every_page_bytes": every_page, "first_click_bytes": max(thebe_bytes)}


def report(measured: dict) -> str:
    seconds = measured["seconds"]
    slowest = max(seconds, key=seconds.get)
    return (f"{HEADING}\n\nMeasured {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC by benchmarks/site_live.py "
            f"(local JupyterLab, headless Chromium).\n\n"
            f"| what | measured |\n|---|---|\n"
            f"| click on *Run this page* to the first cell's output, median of {len(seconds)} pages | "
            f"{statistics.median(seconds.values()):.1f} s |\n"
            f"| the slowest page | {seconds[slowest]:.1f} s ({slowest}) |\n"
            f"| added to every notebook page (course-live.js and .css) | {measured['every_page_bytes'] / 1e3:.0f} kB |\n"
            f"| loaded on the first click (thebe's lib) | {measured['first_click_bytes'] / 1e6:.2f} MB |\n")


def main(argv=None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "site", help="the built site (built there first if it has no live code)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if not (args.site / "_static" / "thebe" / "index.js").exists():
        from scripts import build_site
        build_site.build(args.site)
    with tempfile.TemporaryDirectory() as base:
        section = report(measure(args.site, Path(base)))
    markdown = args.output.read_text(encoding="utf-8") if args.output.exists() else "# Benchmark results\n"
    args.output.write_text(with_section(markdown, section, HEADING), encoding="utf-8")
    print(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
