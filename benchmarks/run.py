#!/usr/bin/env python
"""Time, memory and widget latency of every notebook, against the course's targets.

    make benchmark                                 # every notebook, 3 runs each
    .venv/bin/python -m benchmarks.run --quick     # 1 run each, for development
    .venv/bin/python -m benchmarks.run 03 06_thirty_layers.ipynb --runs 5

Each run executes a notebook from a fresh kernel (working directory notebooks/, one
BLAS/torch thread as under the tests; the notebook is not saved) and records:

- wall time, from starting the kernel to the end of the last cell (what the execute
  script prints);
- peak resident memory of the kernel: VmHWM from /proc/<pid>/status read when the last
  cell ends (the kernel's true high-water mark), plus the VmHWM of any child process still
  alive then; compared with the floor, a fresh kernel that imports the same libraries
  (numpy, matplotlib, torch, ipywidgets, every utils module) and does nothing;
- widget latency: then, in the same kernel, every control of every
  ``utils.widgets.LivePlot`` is moved across its settings (benchmarks/widget_sweep.py)
  and each move, which redraws synchronously, is timed.

A kernel that sits idle (no CPU) for --stall seconds while a cell waits for its reply has
lost the request (an intermittent nbclient/ipykernel hang); that run starts again in a
fresh kernel (--retries), and the report says so.

Results are the median and the spread (min-max) over the runs, with a pass/miss column
against the targets, written as markdown to benchmarks/RESULTS.md. A benchmark reports,
it never asserts: misses are printed, and the exit status is 0.

Then the classroom part (--no-classroom skips it): two notebooks at once, with the course's
thread choice and the libraries' default (benchmarks/cpu_share.py); a learner's whole session
in JupyterLab within Binder's 2 GB (binder_session.py, needs root and Chromium); the load
test of the classroom hub with 10 and 30 students (classroom.py, as root; needs classroom's npm
packages).
Then the course site is built --runs times from a fresh clone (make site, scripts/build_site.py,
timed by benchmarks/site_build.py; --site-only runs just that part): its cold build time
(median) and CPU seconds, its size and its largest page, against issue 25's limits (a minute,
100 MB, 10 MB a page).

Then the browser part (benchmarks/browser.py): every LivePlot stepped from the keyboard in
JupyterLab in headless Chromium, timed from the input event until the new picture has
decoded, against a bare-Image floor of the same run. --browser-only runs just that part and
keeps the kernel tables of the last RESULTS.md; --no-browser skips it.

The code: kernel.py runs notebooks in kernels, widget_sweep.py moves widgets inside a kernel,
lab_session.py and browser.py drive the browser, report.py turns numbers into RESULTS.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

from benchmarks.kernel import machine, resolve_notebooks, run_floor, run_notebook
from benchmarks.report import (MB, SITE_HEADING, browser_report, build_report, format_summary, site_report,
                               summarize, with_browser_section, with_kept_sections, with_section)
from utils.threads import LIBRARY_VARIABLES

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def _megabytes(measured: dict) -> str:
    return f"{measured['peak_bytes'] / MB:.0f}" if measured.get("peak_bytes") else "–"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", help="notebooks to run: paths, names or prefixes like 03 "
                                                      "(default: every notebooks/NN_*.ipynb)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each notebook (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run of each notebook (development)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds one cell may take (default 600)")
    parser.add_argument("--stall", type=float, default=30.0,
                        help="seconds of an idle kernel with a cell pending that count as a hang (default 30)")
    parser.add_argument("--retries", type=int, default=2, help="fresh-kernel retries of a run that hangs (default 2)")
    parser.add_argument("--steps", type=int, default=12, help="timed keyboard steps per slider in the browser (default 12)")
    parser.add_argument("--browser-only", action="store_true",
                        help="only the browser part; the kernel tables of --output are kept")
    parser.add_argument("--site-only", action="store_true",
                        help="only the site part (--runs cold builds); the other sections of --output are kept")
    parser.add_argument("--no-browser", action="store_true", help="skip the browser part")
    parser.add_argument("--no-classroom", action="store_true",
                        help="skip the classroom part (cpu_share.py, binder_session.py, classroom.py)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"markdown file to write (default {RESULTS})")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    if runs < 1:
        parser.error(f"--runs must be at least 1, got {runs}")
    try:
        paths = resolve_notebooks(args.notebooks)
    except ValueError as error:
        parser.error(str(error))
    for variable in LIBRARY_VARIABLES:
        os.environ[variable] = "1"

    if args.browser_only or args.site_only:
        markdown = args.output.read_text(encoding="utf-8") if args.output.exists() else "# Benchmark results\n"
        if args.browser_only:
            return _browser_part(paths, args, markdown)
        section, misses = _site_part(runs)
        args.output.write_text(with_section(markdown, section, SITE_HEADING), encoding="utf-8")
        print(section + "".join(f"\n  MISS  {miss}" for miss in misses))
        return 0
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    load_start = os.getloadavg()[0]
    print(f"benchmarking {len(paths)} notebook(s), {runs} run(s) each", flush=True)
    floor = {"runs": []}
    results: dict[str, list[dict]] = {}
    for run in range(runs):
        measured = run_floor(args)
        floor["runs"].append(measured)
        print(f"  floor, run {run + 1}: {measured['seconds']:.1f} s, {_megabytes(measured)} MB", flush=True)
    for path in paths:
        results[path.name] = []
        for run in range(runs):
            measured = run_notebook(path, args)
            results[path.name].append(measured)
            controls = sum(len(p["controls"]) for p in measured.get("panels", []))
            status = f"ERROR {measured['error']}" if measured.get("error") else "ok"
            seconds = format_summary(summarize([measured["seconds"]]))
            print(f"  {path.name}, run {run + 1}: {seconds} s, {_megabytes(measured)} MB, "
                  f"{controls} widget control(s) swept, {status}", flush=True)

    markdown, misses = build_report(results, floor, machine(), runs, started, (load_start, os.getloadavg()[0]))
    section, site_misses = _site_part(runs)
    markdown, misses = with_section(markdown, section, SITE_HEADING), misses + site_misses
    if args.output.exists():  # what this run does not measure keeps its last measurement
        markdown = with_kept_sections(markdown, args.output.read_text(encoding="utf-8"))
    args.output.write_text(markdown, encoding="utf-8")
    print()
    print(markdown)
    print(f"written to {args.output}")
    if misses:
        print(f"\n*** {len(misses)} MISS(ES) ***")
        for miss in misses:
            print(f"  MISS  {miss}")
    else:
        print("\nall targets met")
    if not args.no_classroom:
        markdown = _classroom_part(args)
    if not args.no_browser:  # "Run this page" on the site just built (benchmarks/site_live.py)
        from benchmarks import site_live
        site_live.main(["--output", str(args.output)])
        markdown = args.output.read_text(encoding="utf-8")
    return 0 if args.no_browser else _browser_part(paths, args, markdown)


def _classroom_part(args) -> str:
    """Kernels sharing the CPU (benchmarks/cpu_share.py), a learner's session within Binder's
    memory (binder_session.py) and the load test of the classroom hub (classroom.py), each
    written into ``args.output``."""
    from benchmarks import binder_session, classroom, cpu_share

    print("\nclassroom part: two notebooks at once", flush=True)
    cpu_share.main(["--runs", str(1 if args.quick else 3), "--output", str(args.output)])
    print("\nclassroom part: a learner's session in 2 GB", flush=True)
    binder_session.main(["--output", str(args.output)])
    print("\nclassroom part: the hub's load test", flush=True)
    classroom.main(["--students", *(["5"] if args.quick else ["10", "30"]), "--output", str(args.output)])
    return args.output.read_text(encoding="utf-8")


def _site_part(runs: int) -> tuple[str, list[str]]:
    """Build the course site ``runs`` times from a fresh clone (make site, cold) and report its
    build time, CPU seconds and sizes (benchmarks/site_build.py)."""
    from benchmarks import site_build

    print(f"building the course site (make site) from a fresh clone, {runs} time(s)", flush=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    section, misses = site_report(site_build.measure(runs))
    return section.replace("\n\n", f"\n\nMeasured {stamp} UTC.\n\n", 1), misses


def _browser_part(paths, args, markdown: str) -> int:
    """Time every LivePlot in the browser and put that section into ``args.output``."""
    from benchmarks.browser import measure

    print(f"\nbrowser part: {len(paths)} notebook(s) in JupyterLab in headless Chromium", flush=True)
    load = os.getloadavg()[0]
    section, misses = browser_report(measure(paths, steps=args.steps))
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    section = section.replace("\n\n", f"\n\nMeasured {stamp} UTC, load average (1 min) {load:.2f} at its start "
                              f"and {os.getloadavg()[0]:.2f} at its end.\n\n", 1)
    args.output.write_text(with_browser_section(markdown, section), encoding="utf-8")
    print(section)
    print(f"written to {args.output}")
    for miss in misses:
        print(f"  MISS  {miss}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
