"""What a test run builds once and all its tests share, whichever xdist worker they run on.

    folder = built_once.folder(tmp_path_factory, "student-edition", builder.build)

The first test to ask builds into a folder of the run's own temporary directory (the one both
workers of `make test` share; pytest deletes old runs' directories itself), under a file lock;
a test on the other worker that asks meanwhile waits for it, and every later one reuses it. A
build that fails is tried again by the next test that asks, and fails it the same way. Use it
for anything slow that several tests, or tests on both workers, read without changing: the
student edition, the site.
"""
from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from typing import Callable

DONE = ".built-once"  # written into the folder once its build has finished


def run_directory(tmp_path_factory) -> Path:
    """The temporary directory of this whole test run: under xdist each worker's base directory
    is a subfolder of it; without xdist it is the base directory itself."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def folder(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """The folder ``build(folder)`` fills, built once per test run and shared by every test."""
    target = run_directory(tmp_path_factory) / "built-once" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if the build raises
        if not (target / DONE).is_file():
            shutil.rmtree(target, ignore_errors=True)  # what a failed build left
            target.mkdir()
            build(target)
            (target / DONE).write_text(name + "\n")
    return target
