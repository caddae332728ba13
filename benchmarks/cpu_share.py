#!/usr/bin/env python
"""Two notebooks at once on this machine's cores: each one's time against its time alone,
with the course's thread choice and with the libraries' default.

    .venv/bin/python -m benchmarks.cpu_share               # 10 and 11, 3 runs, into RESULTS.md
    .venv/bin/python -m benchmarks.cpu_share 06 07 --runs 1 --output /tmp/share.md

A learner with two notebooks running, or two kernels of a hub on the same cores, must not
wait more than about twice as long as alone (issue 26 saw 58 s for 0.42 s with two OpenMP
threads per kernel on two cores). Each setting runs notebook A alone, B alone, then A and
B started together, each in a fresh kernel:

- course: no thread variable set, as on a learner's machine; importing utils picks the
  count (utils.threads._thread_count: one thread here unless COURSE_THREADS says otherwise);
- libraries' default: OMP_NUM_THREADS etc. set to the number of cores, what torch and the
  BLAS libraries use when nobody chooses.

A run that takes longer than --limit seconds is stopped and reported as such. The machine
may be shared: the load average is in the report, and times are medians over --runs.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.kernel import ROOT, resolve_notebooks
from benchmarks.report import markdown_table, write_section
from utils.threads import COURSE_THREADS, LIBRARY_VARIABLES

HEADING = "## Two notebooks at once"
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
TARGET = 2.0  # at most this many times the time alone

RUN_ONE = r'''
import sys, time
from pathlib import Path
import nbformat
from scripts.execute_notebooks import notebook_client  # from the repository root, the working directory
path = Path(sys.argv[1])
notebook = nbformat.read(path, as_version=4)
notebook.cells.append(nbformat.v4.new_code_cell("import torch; print('THREADS', torch.get_num_threads())"))
start = time.perf_counter()
notebook_client(notebook, path.parent, timeout=3600).execute()
print("SECONDS", time.perf_counter() - start, notebook.cells[-1].outputs[0]["text"].split()[1])
'''


def settings() -> dict[str, dict[str, str]]:
    """Environment of each thread setting (both without COURSE_THREADS)."""
    base = {key: value for key, value in os.environ.items() if key not in (*LIBRARY_VARIABLES, COURSE_THREADS)}
    cores = str(os.cpu_count() or 1)
    return {"course": base, "libraries' default": {**base, **{variable: cores for variable in LIBRARY_VARIABLES}}}


def start(path: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUN_ONE, str(path)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def finish(process: subprocess.Popen, deadline: float) -> dict:
    """Seconds and threads of a run, or {"stopped": True} if it passed ``deadline``."""
    try:
        stdout, stderr = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the runner and its kernel: the session it started
        process.communicate()
        return {"stopped": True}
    line = next((line for line in stdout.splitlines() if line.startswith("SECONDS")), None)
    if process.returncode != 0 or line is None:
        return {"error": " | ".join(stderr.strip().splitlines()[-3:]) or "no output"}
    _, seconds, threads = line.split()
    return {"seconds": float(seconds), "threads": int(threads)}


def run(paths: list[Path], env: dict, limit: float) -> dict:
    """A alone, B alone, then both together."""
    alone = [finish(start(path, env), time.monotonic() + limit) for path in paths]
    processes = [start(path, env) for path in paths]
    deadline = time.monotonic() + limit
    return {"alone": alone, "together": [finish(process, deadline) for process in processes]}


def _median(runs: list[dict], key: str, index: int):
    values = [r[key][index]["seconds"] for r in runs if "seconds" in r[key][index]]
    return statistics.median(values) if len(values) == len(runs) else None


def report(paths: list[Path], measured: dict[str, list[dict]], limit: float, load: tuple, stamp: str) -> str:
    rows = []
    for name, runs in measured.items():
        for index, path in enumerate(paths):
            alone, together = _median(runs, "alone", index), _median(runs, "together", index)
            threads = sorted({r[key][index].get("threads") for r in runs for key in ("alone", "together")} - {None})
            problems = [r[key][index].get("error") or f"stopped after {limit:.0f} s"
                        for r in runs for key in ("alone", "together") if "seconds" not in r[key][index]]
            ratio = together / alone if together and alone else None
            rows.append([name, "/".join(map(str, threads)) or "–", len(runs), path.name,
                         f"{alone:.1f}" if alone else "–", f"{together:.1f}" if together else f"> {limit:.0f}",
                         f"{ratio:.2f}" if ratio else "–",
                         "pass" if ratio and ratio <= TARGET else ("miss: " + problems[0] if problems else "miss")])
    return (f"{HEADING}\n\nMeasured {stamp} UTC by benchmarks/cpu_share.py on {os.cpu_count()} cores, "
            f"load average (1 min) {load[0]:.2f} at the start and {load[1]:.2f} at the end (the machine may be "
            "shared, so times are noisy): medians over the runs; in each run each notebook alone, then both "
            f"started at once. Target: together at most {TARGET:.0f}x alone.\n\n"
            + markdown_table(["Threads", "Per kernel", "Runs", "Notebook", "Alone (s)", "Together (s)", "× alone",
                              "Result"], rows))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", default=["10", "11"],
                        help="the two notebooks (default 10 and 11: PyTorch training loops)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each setting (default 3)")
    parser.add_argument("--limit", type=float, default=240.0, help="seconds before a run is stopped (default 240)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"markdown file to update (default {RESULTS})")
    args = parser.parse_args(argv)
    paths = resolve_notebooks(args.notebooks)
    if len(paths) != 2 or args.runs < 1 or args.limit <= 0:
        parser.error("give two notebooks, --runs of at least 1 and a positive --limit")
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    load_start = os.getloadavg()[0]
    measured = {}
    for name, env in settings().items():
        measured[name] = []
        for index in range(args.runs):
            measured[name].append(run(paths, env, args.limit))
            print(f"{name}, run {index + 1}: {json.dumps(measured[name][-1])}", flush=True)
    section = report(paths, measured, args.limit, (load_start, os.getloadavg()[0]), stamp)
    write_section(args.output, section, HEADING)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
