#!/usr/bin/env python
"""Re-execute notebooks from a fresh kernel and save them with their outputs.

    python -m scripts.execute_notebooks                      # every notebook
    python -m scripts.execute_notebooks notebooks/02_*.ipynb  # just these

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

from queue import Empty

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
POLL_STEP = 0.25  # seconds


def _poll_in_steps(get_msg):
    """Wrap a channel's async ``get_msg`` so it polls in short steps up to its timeout."""
    async def get_msg_in_steps(timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = POLL_STEP if deadline is None else min(POLL_STEP, max(0.0, deadline - time.monotonic()))
            try:
                return await get_msg(timeout=step)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise
    return get_msg_in_steps


class SteppedPollClient(NotebookClient):
    """nbclient waiting on its channels in short steps. One long asyncio poll can miss the
    kernel's reply while widgets flood the channels (jupyter/nbclient#312): the cell then
    sat out its whole timeout before finishing (seen here in about 1 run in 10 under load).
    A missed wake-up now costs at most POLL_STEP."""

    async def async_start_new_kernel_client(self):
        client = await super().async_start_new_kernel_client()
        for channel in (client.shell_channel, client.iopub_channel):
            channel.get_msg = _poll_in_steps(channel.get_msg)
        return client


def notebook_client(notebook, folder: Path, timeout: int, **options) -> NotebookClient:
    """A client that runs ``notebook`` in ``folder`` as the course's tests do; ``options``
    go to nbclient (the benchmark quiets the kernel's log, for instance)."""
    return SteppedPollClient(notebook, timeout=timeout, kernel_name="python3",
                             resources={"metadata": {"path": str(folder)}}, store_widget_state=True, **options)


def execute(path: Path, timeout: int) -> float:
    """Execute ``path`` in place; return the seconds it took."""
    notebook = nbformat.read(path, as_version=4)
    client = notebook_client(notebook, path.parent, timeout)
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    nbformat.write(notebook, path)
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to run (default: all in notebooks/)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds one cell may take (default 120)")
    args = parser.parse_args(argv)
    from utils.threads import LIBRARY_VARIABLES  # importing utils fits this process's threads: here only

    for variable in LIBRARY_VARIABLES:
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
