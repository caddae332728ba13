#!/usr/bin/env python
"""A learner's whole session within Binder's memory: JupyterLab with the course's Binder
settings (binder/jupyter_server_config.py, binder/overrides.json) in a 2 GB memory cgroup,
and headless Chromium opening notebooks 00..11 one after another in the same JupyterLab
(earlier tabs left open, as learners leave them) and running each.

    .venv/bin/python -m benchmarks.binder_session                  # into RESULTS.md
    .venv/bin/python -m benchmarks.binder_session --plain          # without the settings
    .venv/bin/python -m benchmarks.binder_session 00 05 08 --output /tmp/session.md

Needs root (a cgroup v1 memory controller at /sys/fs/cgroup/memory: the server and every
kernel it starts are charged to it, with no swap, so going over the limit kills a kernel as
it would on Binder) and Chromium. For each notebook it reports the kernels running after it,
their summed proportional set size (shared libraries counted once), the cgroup's peak,
and any kernel lost: a kernel the out-of-memory killer ended, or a "kernel died" dialog.
--plain runs the same session with JupyterLab's defaults, to show what the settings change.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.kernel import resolve_notebooks
from benchmarks.lab_session import ROOT, chromium, missing_browser, run_all, running_lab, wait_for_idle_kernel
from benchmarks.report import MB, markdown_table, write_section

HEADING = "## A learner's session on Binder"
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
MEMORY_CGROUP = Path("/sys/fs/cgroup/memory")
LIMIT = 2 * 2**30  # mybinder.org's memory per user


class MemoryCgroup:
    """A cgroup v1 memory group of our own with a hard limit and no swap; removed on close."""

    def __init__(self, limit: int):
        if not (MEMORY_CGROUP / "cgroup.procs").is_file() or not os.access(MEMORY_CGROUP, os.W_OK):
            raise RuntimeError(f"needs root and a cgroup v1 memory controller at {MEMORY_CGROUP}")
        self.path = MEMORY_CGROUP / f"course_binder_session_{os.getpid()}"
        self.path.mkdir()
        self._write("memory.limit_in_bytes", limit)
        if (self.path / "memory.memsw.limit_in_bytes").exists():
            self._write("memory.memsw.limit_in_bytes", limit)

    def _write(self, name: str, value) -> None:
        (self.path / name).write_text(str(value))

    def read(self, name: str) -> str:
        return (self.path / name).read_text()

    def add(self, pid: int) -> None:
        self._write("cgroup.procs", pid)

    def ooms(self) -> int:
        """Processes the out-of-memory killer ended in this group so far."""
        for line in self.read("memory.oom_control").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return int(self.read("memory.failcnt"))  # older kernels: times the limit was hit

    def reset_peak(self) -> None:
        self._write("memory.max_usage_in_bytes", 0)

    def close(self) -> None:
        for pid in self.read("cgroup.procs").split():  # what is left goes back to the parent
            try:
                (MEMORY_CGROUP / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        try:
            self.path.rmdir()
        except OSError:
            pass


def kernels_pss(lab) -> tuple[int, int]:
    """How many kernels the server runs, and their summed proportional set size in bytes."""
    import psutil

    count, total = 0, 0
    for child in psutil.Process(lab.process.pid).children(recursive=True):
        try:
            if "ipykernel" in " ".join(child.cmdline()):
                count += 1
                total += child.memory_full_info().pss
        except psutil.Error:
            pass
    return count, total


def session(paths: list[Path], plain: bool, limit: int) -> list[dict]:
    group = MemoryCgroup(limit)
    extra = () if plain else (f"--config={ROOT / 'binder' / 'jupyter_server_config.py'}",
                              f"--LabApp.app_settings_dir={ROOT / 'binder'}")
    rows, errors = [], []
    try:
        with tempfile.TemporaryDirectory(prefix="binder-session-") as base, running_lab(Path(base), extra) as lab:
            group.add(lab.process.pid)  # before any kernel: kernels inherit the group
            with chromium() as browser:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                for index, path in enumerate(paths):
                    relative = f"notebooks/{path.name}"
                    group.reset_peak()
                    ooms_before, started, lost = group.ooms(), time.perf_counter(), ""
                    try:
                        if index == 0:  # a fresh workspace with the first notebook
                            page.goto(f"{lab.url}/lab/tree/{relative}?token={lab.token}&reset", timeout=180_000)
                        else:  # then a new tab in the same JupyterLab, as a learner opens the next one
                            page.evaluate("path => { window.jupyterapp.commands.execute('docmanager:open', {path}); }",
                                          relative)
                        wait_for_idle_kernel(page, lab, relative, errors)
                        run_all(page, lab, relative)
                    except AssertionError as error:
                        lost = str(error).splitlines()[0]
                    died = page.locator(".jp-Dialog:has-text('died')")
                    if died.count():
                        lost = (lost + "; " if lost else "") + died.first.inner_text().replace("\n", " ")[:160]
                        page.keyboard.press("Escape")
                    count, pss = kernels_pss(lab)
                    rows.append({"notebook": path.name, "seconds": time.perf_counter() - started, "kernels": count,
                                 "pss": pss, "peak": int(group.read("memory.max_usage_in_bytes")),
                                 "ooms": group.ooms() - ooms_before, "lost": lost})
                    print(f"  {path.name}: {rows[-1]}", flush=True)
    finally:
        group.close()
    return rows


def report(rows: list[dict], plain: bool, limit: int, stamp: str, load: tuple) -> str:
    lost = sum(1 for row in rows if row["lost"] or row["ooms"])
    table = markdown_table(
        ["Notebook", "Open + run (s)", "Kernels running after", "Kernels' PSS (MB)", "Peak of the group (MB)",
         "Kernels killed (OOM)", "Lost kernel"],
        [[r["notebook"], f"{r['seconds']:.0f}", r["kernels"], f"{r['pss'] / MB:.0f}", f"{r['peak'] / MB:.0f}",
          r["ooms"], r["lost"] or "none"] for r in rows])
    settings = ("JupyterLab's defaults (--plain)" if plain else
                "the course's Binder settings (at most 3 kernels, the longest-idle one shut down to make room; "
                "idle kernels culled after 20 minutes; a kernel shut down with its tab)")
    return (f"{HEADING}\n\nMeasured {stamp} UTC by benchmarks/binder_session.py: JupyterLab and its kernels in a "
            f"{limit / 2**30:.0f} GB memory cgroup without swap, headless Chromium opening the notebooks in order in "
            f"one JupyterLab (earlier tabs left open) and running each, with {settings}. Load average (1 min) "
            f"{load[0]:.2f} at the start and {load[1]:.2f} at the end (a shared machine: times are noisy). "
            f"**{'No kernel lost' if not lost else f'{lost} notebook(s) lost a kernel'}.**\n\n{table}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", help="notebooks in the order to open them (default: all)")
    parser.add_argument("--plain", action="store_true", help="JupyterLab's defaults instead of binder/'s settings")
    parser.add_argument("--limit-gb", type=float, default=LIMIT / 2**30, help="memory limit in GB (default 2)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"markdown file to update (default {RESULTS})")
    args = parser.parse_args(argv)
    problem = missing_browser()
    if problem:
        print(f"binder session skipped: {problem}")
        return 0
    limit = int(args.limit_gb * 2**30)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    load = os.getloadavg()[0]
    rows = session(resolve_notebooks(args.notebooks), args.plain, limit)
    section = report(rows, args.plain, limit, stamp, (load, os.getloadavg()[0]))
    write_section(args.output, section, HEADING)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
