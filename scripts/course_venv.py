#!/usr/bin/env python3
"""Install the course's virtual environment: requirements.txt, then the course's ``utils``
(editable), reusing a copy of one this machine built today from the same requirements.

    python3 -m scripts.course_venv .venv      # what `make install` runs when requirements change

Building one takes about 75 s here: pip unpacks torch and the rest (45 s on one core), then
``compileall -j 0`` byte-compiles it on every core (pip would do it one file at a time).
Byte-compiling matters: with PYTHONDONTWRITEBYTECODE set (as on this machine and in CI)
nothing is cached later, and every kernel would compile torch again on import.

A venv built from nothing (the folder did not exist) is also copied, without the course, into
the machine's cache (``$XDG_CACHE_HOME/residual-course/course-venv/<key>``, by default under
``~/.cache``); the next install into a missing folder, from any clone, copies it back (a few
seconds) and points its scripts at the new place. The key is the SHA-256 of requirements.txt,
the Python that builds it, PIP_EXTRA and the UTC day: requirements.txt pins the course's
libraries but not all of theirs, so a copy is kept only on the day it was built, as a fresh
install would see the same releases that day. An existing venv is updated in place by pip, as
before, so nothing a learner installed into it is lost, and it is never cached. The two most
recent copies are kept. Standard library only: it runs before the venv exists.
"""
from __future__ import annotations

import datetime
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "residual-course" / "course-venv"
KEPT = 2  # cached copies kept: this key's and the last other one (another branch's requirements)
PIP = ("-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check")


def key(requirements: bytes, python_version: str, pip_extra: str, day: str) -> str:
    """What a cached copy must have been built from to stand for a fresh install today."""
    sha = hashlib.sha256()
    for part in (requirements, python_version.encode(), pip_extra.encode(), day.encode()):
        sha.update(part + b"\0")
    return sha.hexdigest()[:32]


def today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def relocate(venv: Path, old: Path, new: Path) -> None:
    """Point a venv's files that name its folder (console scripts' first lines, the activate
    scripts, pyvenv.cfg) from ``old`` to ``new``. Nothing else in a venv names it: compiled
    files name their source, and Python corrects that name when it loads them."""
    before, after = str(old).encode(), str(new).encode()
    for path in [*(venv / "bin").iterdir(), venv / "pyvenv.cfg"]:
        if path.is_file() and not path.is_symlink():
            text = path.read_bytes()
            if before in text and b"\0" not in text:  # text files only
                mode = path.stat().st_mode
                path.write_bytes(text.replace(before, after))
                path.chmod(mode)


def copy_venv(source: Path, target: Path, works_at: Path | None = None) -> None:
    """A copy of the venv ``source`` at ``target``, its scripts pointed at ``works_at`` (by
    default ``target``: where it will be used). cp keeps the interpreter's symlinks and the
    files' times (which the compiled files are checked against), and takes 3 s for torch's
    58,000 files here."""
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)
    relocate(target, source, works_at or target)


def build(venv: Path, python: str, pip_extra: list[str]) -> None:
    """Create ``venv`` (or update it in place) from requirements.txt and byte-compile it."""
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), *PIP, *pip_extra, "-r", "requirements.txt"], check=True)
    # `check` left off: a few torch test files use newer Python syntax; pip skips them the same way.
    subprocess.run([str(venv / "bin" / "python"), "-m", "compileall", "-qq", "-j", "0", str(venv / "lib")])


def store(venv: Path, cache: Path, name: str) -> None:
    """Copy the freshly built ``venv`` to ``cache/name`` (atomically: another install may be
    reading the cache) and drop all but the KEPT most recent copies."""
    cache.mkdir(parents=True, exist_ok=True)
    staging = cache / f"{name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    copy_venv(venv, staging, works_at=cache / name)
    try:
        staging.rename(cache / name)
    except OSError:  # another install stored the same key first
        shutil.rmtree(staging, ignore_errors=True)
    copies = sorted((p for p in cache.iterdir() if p.is_dir() and ".partial-" not in p.name),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for old in copies[KEPT:]:
        shutil.rmtree(old, ignore_errors=True)


def install(venv: Path, *, pip_extra: str = "", cache: Path = CACHE, day: str | None = None,
            builder=build, requirements: Path = Path("requirements.txt")) -> str:
    """Make ``venv`` hold requirements.txt's packages, built by this Python; says how ("copied
    from", "built and cached", "updated in place"). The course itself is installed by the
    caller: it points at this clone."""
    name = key(requirements.read_bytes(), sys.version, pip_extra, day or today())
    cached = cache / name
    if not venv.exists() and cached.is_dir():
        copy_venv(cached, venv)
        os.utime(cached)  # most recently used: kept longest
        return f"copied from {cached}"
    new = not venv.exists()
    builder(venv, sys.executable, pip_extra.split())
    if new:
        store(venv, cache, name)
        return f"built and cached in {cached}"
    return "updated in place"


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    venv = Path(args[0]).absolute()
    try:
        print(f"{venv}: {install(venv, pip_extra=os.environ.get('PIP_EXTRA', ''))}", flush=True)
        subprocess.run([str(venv / "bin" / "python"), *PIP, "--no-deps", "-e", "."], check=True)
    except subprocess.CalledProcessError as failed:  # the command has said why
        print(f"course_venv: {' '.join(map(str, failed.cmd))} failed (exit {failed.returncode})", file=sys.stderr)
        return failed.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
