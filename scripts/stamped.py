#!/usr/bin/env python3
"""Run an install command only when what it installs from has changed.

    python3 -m scripts.stamped STAMP INPUT... -- COMMAND...

The stamp file holds the SHA-256 of the inputs (their names and bytes) as of the last
successful run. When it matches, the command is skipped; otherwise the command runs and,
if it succeeds, the stamp is written. Content, not modification time: a checkout or a
merge that leaves requirements.txt as it was does not reinstall, and one that changes it
does, whatever the clocks say. The stamp lives inside what the command builds (the venv,
node_modules), so deleting that folder also forgets it. Standard library only: it runs
before the course's virtual environment exists.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path


def digest(inputs: list[Path]) -> str:
    """One SHA-256 over every input's file name and contents, in the order given (the name, not
    the path: make gives relative paths, the build scripts absolute ones)."""
    sha = hashlib.sha256()
    for path in inputs:
        sha.update(Path(path).name.encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return sha.hexdigest()


def up_to_date(stamp: Path, inputs: list[Path]) -> bool:
    return stamp.is_file() and stamp.read_text().strip() == digest(inputs)


def run(stamp: Path, inputs: list[Path], command: list[str], cwd: Path | None = None) -> int:
    """Run ``command`` (in ``cwd``) unless ``stamp`` records these inputs; write the stamp after
    a success. Returns the command's exit status (0 when skipped)."""
    if up_to_date(stamp, inputs):
        print(f"{stamp}: up to date with {', '.join(map(str, inputs))}; not reinstalling", flush=True)
        return 0
    wanted = digest(inputs)  # before the command, which might touch the inputs
    code = subprocess.run(command, cwd=cwd).returncode
    if code == 0:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(wanted + "\n")
    return code


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv or argv.index("--") < 2 or argv.index("--") == len(argv) - 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    split = argv.index("--")
    stamp, inputs, command = Path(argv[0]), [Path(p) for p in argv[1:split]], argv[split + 1:]
    missing = [str(p) for p in inputs if not p.is_file()]
    if missing:
        print(f"stamped: no such input file(s): {', '.join(missing)}", file=sys.stderr)
        return 2
    return run(stamp, inputs, command)


if __name__ == "__main__":
    sys.exit(main())
