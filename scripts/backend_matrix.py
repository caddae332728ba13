#!/usr/bin/env python
"""Run the unit tests and nbval over every notebook under several numeric backends, so
one machine stands in for the CPUs learners have.

    python scripts/backend_matrix.py            # every backend below
    python scripts/backend_matrix.py avx2       # just these (by name)

The stored outputs were made on one CPU with one thread. Another CPU runs other math
kernels (ATen picks AVX-512, AVX2 or scalar code; Intel MKL picks its own code branch),
and more threads split sums differently, so last digits move. Each run below forces one
such combination and must pass against the same stored outputs (compared as
tests/output_tolerance.py says). The browser and fresh-install tests are left out: they
do not depend on the numeric backend. Prints a table of results and times; exits 1 if
any run failed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@dataclass(frozen=True)
class Backend:
    """One stand-in machine: environment variables, what it stands in for, and how many
    pytest workers share the cores (one when each kernel uses every core: two workers
    with two OpenMP threads each on two cores spin against each other, 50x slower)."""
    name: str
    variables: dict
    stands_in_for: str
    workers: int = 2


def backends(cores: int) -> list[Backend]:
    """The matrix. The native backend with one thread is `make test` itself."""
    all_threads = {variable: str(cores) for variable in THREAD_VARIABLES}
    return [
        Backend("avx2", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"},
                "a laptop or CI runner with AVX2 but not AVX-512"),
        Backend("scalar", {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},
                "a CPU without vector kernels; a proxy for other summation orders (ARM, no MKL)"),
        Backend(f"threads-{cores}", all_threads,
                f"the libraries' default thread count ({cores} here), as a learner's kernel runs", workers=1),
    ]


def command(workers: int = 2) -> list[str]:
    """The test command every stand-in runs (the version environments run it too)."""
    return [sys.executable, "-m", "pytest", "-n", str(workers), "--nbval", "-p", "no:cacheprovider", "-q",
            "-m", "not slow and not browser"]


def environment(backend: Backend) -> dict:
    """This process's environment with the backend's variables set (and no stray ones)."""
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    env.update(backend.variables)
    return env


def closing_line(output: str) -> str:
    """pytest's summary line ("N passed in S s"), or the last line if there is none."""
    lines = [line.strip("= ") for line in output.strip().splitlines() if line.strip()]
    summaries = [line for line in lines if " passed" in line or " failed" in line or " error" in line]
    return (summaries or lines or ["no output"])[-1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cores = os.cpu_count() or 2
    names = [b.name for b in backends(cores)]
    parser.add_argument("names", nargs="*", help=f"backends to run (default: all of {', '.join(names)})")
    args = parser.parse_args(argv)
    unknown = set(args.names) - set(names)
    if unknown:
        parser.error(f"unknown backend(s) {sorted(unknown)}; choose from {names}")
    chosen = [b for b in backends(cores) if not args.names or b.name in args.names]
    rows, failed = [], False
    for backend in chosen:
        settings = " ".join(f"{k}={v}" for k, v in backend.variables.items())
        print(f"\n== backend {backend.name}: {settings} ({backend.stands_in_for})", flush=True)
        start = time.perf_counter()
        result = subprocess.run(command(backend.workers), cwd=ROOT, env=environment(backend), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        seconds = time.perf_counter() - start
        print(result.stdout[-6000:] if result.returncode else closing_line(result.stdout), flush=True)
        failed |= result.returncode != 0
        rows.append((backend.name, settings, "pass" if result.returncode == 0 else "FAIL",
                     f"{seconds:.0f} s", closing_line(result.stdout)))
    print("\nBackend matrix (unit tests + nbval over every notebook, against the same stored outputs):")
    for row in rows:
        print("  " + " | ".join(row))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
