#!/usr/bin/env python
"""Run the numeric unit tests (and, on request, nbval over every notebook) under several
numeric backends and thread counts, so one machine stands in for the CPUs learners have.

    python -m scripts.backend_matrix                  # the numeric unit tests of make test's stand-ins
    python -m scripts.backend_matrix scalar-2         # nbval and the numeric tests on that stand-in
    python -m scripts.backend_matrix avx2-2 --only tests/test_gradient_flow.py notebooks/06_thirty_layers.ipynb

The stored outputs were made on one CPU with one thread. Another CPU runs other math
kernels (ATen picks AVX-512, AVX2 or scalar code; Intel MKL and NumPy's OpenBLAS pick
their own code branch), and more threads split sums differently, so last digits move,
and the two combine: a Xeon's AVX2 kernels printed 63.5116 with one thread and 63.5117
with two. So every kernel set runs with one thread and with two (where a split first
changes a sum; more threads split differently again, but no stored output may depend on
any split): six stand-ins, none the same as another.

Each stand-in's notebooks are run once, by a run that happens anyway, and compared with the
stored outputs as nbval compares them (tests/output_tolerance.py):
- three in `make test` (NOTEBOOKS_IN_MAKE_TEST): the site's live kernels
  (tests/test_site_live.py), JupyterLab (tests/test_browser.py) and nbgrader's autograde of
  the teacher edition (tests/autograded_once.py; notebook 00, no assignment, runs on its own
  on nbgrader's two stand-ins, tests/test_nbgrader.py);
- three in the version environments (IN_VERSION_ENVIRONMENTS, scripts/test_versions.py),
  whose nbval run uses that stand-in: another library version and another CPU in one pass,
  where two passes checked them apart. ``newest`` runs only when PyPI has something the
  course loads newer than requirements.txt; its stand-in, this CPU's kernels on one thread,
  is also that of make test's nbgrader run of the released notebooks (RELEASE_IN_MAKE_TEST),
  compared outside the exercises, so every run checks it.
`make test` runs the numeric unit tests on this CPU with one thread; this script runs them
on make test's three stand-ins: every kernel set, with one thread and with two. So no pass
over the notebooks is made twice, every stand-in runs every notebook, and four of the six
run the numeric unit tests too.

It runs only what another backend can change (tests/suites.py); the browser, site,
packaging, classroom, student-edition and text tests give the same result on every CPU and
run once, in `make test`. The stand-ins run at once, sharing the CPUs (workers_each). Prints a
table of results and times; exits 1 if any run failed (pytest collecting no test is a failure too).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests import suites
from utils.threads import LIBRARY_VARIABLES, cpu_share

ROOT = Path(__file__).resolve().parent.parent
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "OPENBLAS_CORETYPE")

# The kernel sets: ATen's (torch), MKL's (torch's matrix products) and OpenBLAS's (NumPy's).
KERNELS = {
    "native": ({}, "this CPU's own kernels"),
    "avx2": ({"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "OPENBLAS_CORETYPE": "Haswell"},
             "a laptop or CI runner with AVX2 but not AVX-512"),
    "scalar": ({"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "OPENBLAS_CORETYPE": "Nehalem"},
               "a CPU without vector kernels; a proxy for other summation orders (ARM, no MKL)"),
}


@dataclass(frozen=True)
class Backend:
    """One stand-in machine: a kernel set (see KERNELS) and a thread count for torch,
    MKL and OpenBLAS."""
    kernels: str
    threads: int

    @property
    def name(self) -> str:
        return self.kernels if self.threads == 1 else f"{self.kernels}-{self.threads}"

    @property
    def variables(self) -> dict:
        return {**KERNELS[self.kernels][0], **{variable: str(self.threads) for variable in LIBRARY_VARIABLES}}

    @property
    def stands_in_for(self) -> str:
        what = KERNELS[self.kernels][1]
        return what if self.threads == 1 else f"{what}, computing on {self.threads} threads"


def stand_ins() -> list[Backend]:
    """Every kernel set with one and with two threads."""
    return [Backend(kernels, threads) for threads in (1, 2) for kernels in KERNELS]


# Stand-ins whose notebooks a run inside `make test` checks, by the file that makes the run: see above.
NOTEBOOKS_IN_MAKE_TEST = {
    "tests/test_site_live.py": Backend("scalar", 1),
    "tests/test_browser.py": Backend("native", 2),
    "tests/autograded_once.py": Backend("avx2", 2),
}
# The stand-in of make test's nbgrader run of the released notebooks (tests/autograded_once.py),
# compared with the stored outputs outside the exercises: the stored outputs' own, on this CPU.
RELEASE_IN_MAKE_TEST = Backend("native", 1)
# Stand-ins a version environment runs (scripts/test_versions.py), by environment: see above.
IN_VERSION_ENVIRONMENTS = {
    "ipywidgets7": Backend("avx2", 1),
    "oldest": Backend("scalar", 2),
    "newest": Backend("native", 1),
}


def backends() -> list[Backend]:
    """The stand-ins this script runs by default: those whose notebooks `make test` checks,
    for their numeric unit tests."""
    return list(NOTEBOOKS_IN_MAKE_TEST.values())


def command(workers: int = 2) -> list[str]:
    """The test command every stand-in runs (the version environments run it too), before the
    paths to run: pytest with ``workers`` xdist workers (0: in its own process)."""
    return [sys.executable, "-m", "pytest", "-n", str(workers), "--nbval", "-p", "no:cacheprovider", "-q",
            "-m", "not slow and not browser"]


def workers_each(runs: int, cpus: float | None = None) -> int:
    """xdist workers for each of ``runs`` pytest runs started at once on ``cpus`` (default: the
    CPUs this process may use): the CPUs shared out, and none (0) where that leaves fewer than
    two. The backend matrix's three runs of the numeric tests, at once in one process each, took
    90 s here where one after another on two workers each took 114 s: every worker imports
    torch and collects every test, and each run's end left a core idle. (Not for notebooks on
    two threads: the version environments at once ran scalar-2's kernels many times slower.)"""
    share = math.floor(cpu_share() if cpus is None else cpus) // max(1, runs)
    return share if share >= 2 else 0


def paths(backend: Backend) -> list[str]:
    """What a stand-in runs: every notebook and the unit tests that compute numbers, the only
    tests whose outcome another CPU or thread count can change (tests/suites.py); only the
    unit tests when a run in `make test` checks its notebooks (NOTEBOOKS_IN_MAKE_TEST)."""
    run = suites.backend_run()
    return [path for path in run if path != suites.NOTEBOOKS] if backend in NOTEBOOKS_IN_MAKE_TEST.values() else run


NO_TESTS = 5  # pytest's exit status when it collected nothing


def outcome(returncode: int) -> str:
    """A run's verdict: pass, FAIL, or FAIL with the reason when pytest collected nothing (a
    selection that matches no test is a broken run, not a passing one)."""
    if returncode == 0:
        return "pass"
    return "FAIL: pytest collected no tests" if returncode == NO_TESTS else f"FAIL (exit {returncode})"


def kernel_variables(backend: Backend) -> dict:
    """The variables that make a process (and the kernels it starts) the stand-in ``backend``.
    Idle OpenMP threads sleep instead of spinning (OMP_WAIT_POLICY=PASSIVE): this changes
    no result, and on a busy two-core machine a loop of small matrix products on two
    spinning threads ran 20-30 times slower than on two sleeping ones."""
    return {**backend.variables, "OMP_WAIT_POLICY": "PASSIVE"}


def environment(backend: Backend) -> dict:
    """This process's environment with the backend's variables set (and no stray ones)."""
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES}
    env.update(kernel_variables(backend))
    return env


def closing_line(output: str) -> str:
    """pytest's summary line ("N passed in S s"), or the last line if there is none."""
    lines = [line.strip("= ") for line in output.strip().splitlines() if line.strip()]
    summaries = [line for line in lines if " passed" in line or " failed" in line or " error" in line]
    return (summaries or lines or ["no output"])[-1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    matrix = stand_ins()
    names = [b.name for b in matrix]
    default = [b.name for b in backends()]
    parser.add_argument("names", nargs="*", help=f"backends to run (default: {', '.join(default)}, "
                        "their numeric unit tests; any other runs nbval too)")
    parser.add_argument("--only", nargs="+", metavar="PATH", default=[],
                        help="test files or notebooks to run instead of all of them")
    args = parser.parse_args(argv)
    unknown = set(args.names) - set(names)
    if unknown:
        parser.error(f"unknown backend(s) {sorted(unknown)}; choose from {names}")
    chosen = [b for b in matrix if b.name in (args.names or default)]
    workers = workers_each(len(chosen))

    def run(backend: Backend) -> tuple[subprocess.CompletedProcess, float]:
        start = time.perf_counter()
        result = subprocess.run(command(workers) + (args.only or paths(backend)), cwd=ROOT, env=environment(backend),
                                text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return result, time.perf_counter() - start

    settings = {backend: " ".join(f"{k}={v}" for k, v in backend.variables.items()) for backend in chosen}
    for backend in chosen:
        print(f"== backend {backend.name}: {settings[backend]} ({backend.stands_in_for})", flush=True)
    print(f"{len(chosen)} at once, each pytest with {workers or 'no'} xdist workers", flush=True)
    rows, failed = [], False
    with concurrent.futures.ThreadPoolExecutor(len(chosen)) as pool:
        runs = {pool.submit(run, backend): backend for backend in chosen}
        for done in concurrent.futures.as_completed(runs):
            backend, (result, seconds) = runs[done], done.result()
            print(f"\n== backend {backend.name}: " + (result.stdout[-6000:] if result.returncode
                                                     else closing_line(result.stdout)), flush=True)
            failed |= result.returncode != 0
            rows.append((backend.name, settings[backend], outcome(result.returncode), f"{seconds:.0f} s",
                         closing_line(result.stdout)))
    rows.sort(key=lambda row: [b.name for b in chosen].index(row[0]))
    print("\nBackend matrix (numeric unit tests; nbval too on a stand-in whose notebooks no other run checks;"
          " against the same stored outputs):")
    for row in rows:
        print("  " + " | ".join(row))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
