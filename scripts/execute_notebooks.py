#!/usr/bin/env python
"""Re-execute notebooks from a fresh kernel and save them with their outputs.

    python scripts/execute_notebooks.py                      # every notebook
    python scripts/execute_notebooks.py notebooks/02_*.ipynb  # just these

Each notebook runs top to bottom in its own folder, with a cell timeout (a cell that
changes a widget's value can stall an executor), one BLAS/torch thread (as under the
tests, so stored numbers reproduce), and widget state saved for static viewers.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def execute(path: Path, timeout: int) -> float:
    """Execute ``path`` in place; return the seconds it took."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}},
                            store_widget_state=True)
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    nbformat.write(notebook, path)
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to run (default: all in notebooks/)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds one cell may take (default 300)")
    args = parser.parse_args(argv)
    for variable in THREAD_VARIABLES:
        os.environ[variable] = "1"
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for path in paths:
        if not path.is_file():
            parser.error(f"no notebook at {path}")
        print(f"executing {path.name} ...", flush=True)
        print(f"  saved in {execute(path.resolve(), args.timeout):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
