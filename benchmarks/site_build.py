#!/usr/bin/env python
"""The course site's cold build, as from a fresh clone: make benchmark's site part.

    .venv/bin/python benchmarks/site_build.py --runs 3     # prints the numbers
    .venv/bin/python benchmarks/run.py --site-only         # writes them into RESULTS.md

Each run clones the repository's committed HEAD into a new temporary folder (so nothing
under build/ is reused), installs site/node_modules there with ``npm ci`` (make's separate
stamp step: timed, not counted), then runs `python -m scripts.build_site` in the clone with this
Python. The build is timed by wall clock and by the CPU seconds (user + system) of its
whole process tree: the build, its picture-drawing processes and Sphinx's. On a loaded
machine the wall time says more about the other users than about the build; the CPU
seconds do not depend on them much, and over the build's two parallel parts (the pictures,
drawn in one process per CPU, and Sphinx's -j 2) they bound what a quiet machine takes.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tree_cpu() -> float:
    """CPU seconds of every waited-for child process of this one and their descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cores() -> int:
    """The CPUs the build's drawing processes are sized to (utils.threads.cpu_share)."""
    from utils.threads import cpu_share

    return max(1, int(cpu_share()))


def _timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Run ``command`` in ``cwd``; its wall seconds and its process tree's CPU seconds."""
    cpu, start = _tree_cpu(), time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, _tree_cpu() - cpu


def cold_build(root: Path = ROOT) -> dict:
    """One build of the site from a fresh clone of ``root``'s HEAD: wall and CPU seconds,
    npm ci's seconds, the load average before it, and the build's own report (sizes); then
    ``rebuild``: the same build again in that clone, nothing changed (its picture cache read)."""
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="course-site-") as folder:
        clone = Path(folder) / "clone"
        subprocess.run(["git", "clone", "--quiet", "--shared", str(root), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", "--detach", commit], check=True)
        npm_seconds, _ = _timed(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], clone / "site")
        report = Path(folder) / "report.json"
        load = os.getloadavg()[0]
        seconds, cpu = _timed([sys.executable, "-m", "scripts.build_site", "--report", str(report)], clone)
        built = json.loads(report.read_text(encoding="utf-8"))
        # Then a rebuild with nothing changed (what a writer runs after an edit): pictures from the cache.
        rebuild_seconds, rebuild_cpu = _timed([sys.executable, "-m", "scripts.build_site", "--report", str(report)], clone)
        rebuild = {"wall_seconds": rebuild_seconds, "cpu_seconds": rebuild_cpu,
                   "phases": json.loads(report.read_text(encoding="utf-8"))["phases"]}
        weights = page_weights(clone / "build" / "site")
        printed = Path(folder) / "pdf.json"
        pdf_seconds, pdf_cpu = _timed([sys.executable, "-m", "scripts.build_pdf", "--report", str(printed)], clone)
        pdf = {**json.loads(printed.read_text(encoding="utf-8")), "wall_seconds": pdf_seconds, "cpu_seconds": pdf_cpu}
    return {**built, "wall_seconds": seconds, "cpu_seconds": cpu, "npm_seconds": npm_seconds, "load": load,
            "rebuild": rebuild, "transferred": weights, "pdf": pdf}


def page_weights(site: Path) -> dict:
    """Bytes each page of the built ``site`` makes a browser fetch (served by 127.0.0.1 without
    compression, nothing cached): the page, its scripts, styles, fonts and pictures."""
    from benchmarks.lab_session import chromium
    from scripts.build_pdf import serve

    pages = sorted(path.relative_to(site).as_posix() for path in site.rglob("*.html")
                   if "_static" not in path.parts and "downloads" not in path.parts)
    weights = {}
    with serve(site) as base_url, chromium() as browser:
        for name in pages:
            context = browser.new_context()
            page = context.new_page()
            finished = []
            page.on("requestfinished", finished.append)
            page.goto(base_url + name, wait_until="load")
            page.wait_for_load_state("networkidle")
            weights[name] = sum(request.sizes()["responseBodySize"] for request in list(finished))
            context.close()
    return weights


def measure(runs: int = 3, root: Path = ROOT) -> dict:
    """``runs`` cold builds: the last one's sizes, every run's times, and the median wall time as
    ``seconds`` (what report.site_report judges)."""
    if not isinstance(runs, int) or isinstance(runs, bool) or runs < 1:
        raise ValueError(f"runs must be a whole number of at least 1, got {runs!r}")
    if shutil.which("npm") is None:
        raise SystemExit("npm is needed for the site's cold build (apt-get install npm)")
    results = []
    for run in range(runs):
        results.append(cold_build(root))
        print(f"  site, cold build {run + 1}: {results[-1]['wall_seconds']:.0f} s wall, "
              f"{results[-1]['cpu_seconds']:.0f} CPU-s (load {results[-1]['load']:.1f}; npm ci "
              f"{results[-1]['npm_seconds']:.0f} s, not counted); rebuild {results[-1]['rebuild']['wall_seconds']:.0f} s "
              f"wall, {results[-1]['rebuild']['cpu_seconds']:.0f} CPU-s", flush=True)
    keys = ("wall_seconds", "cpu_seconds", "npm_seconds", "load")
    return {**results[-1], "runs": [{key: result[key] for key in keys} for result in results],
            "seconds": statistics.median(result["wall_seconds"] for result in results), "cores": _cores()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="cold builds (default 3)")
    args = parser.parse_args(argv)
    from benchmarks.report import site_report

    print(site_report(measure(args.runs))[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
