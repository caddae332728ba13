#!/usr/bin/env python
"""Build the student edition and commit it to a git repository that nbgitpuller pulls from.

    python -m scripts.publish_student_edition                     # build/classroom/student-edition.git
    python -m scripts.publish_student_edition --repo DIR

``make classroom`` runs this before it starts the hub. Run again after changing a notebook
during a term: a new commit appears only when the student edition changed, and each
student's copy takes it the next time they open the hub's link (nbgitpuller merges it:
files the student has not edited are updated, a file they edited keeps their version, and
a file they deleted comes back). To publish on GitHub instead, push this repository's
branch to your fork and point CLASSROOM_REPO at it.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts.build_student_edition import ROOT, build

DEFAULT_REPO = ROOT / "build" / "classroom" / "student-edition.git"
IDENTITY = ["-c", "user.name=Residual course", "-c", "user.email=course@localhost"]


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(repo), *IDENTITY, *args], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def publish(repo: Path = DEFAULT_REPO, branch: str = "main") -> str:
    """Commit the current student edition to ``branch`` of ``repo`` (created if missing);
    return the commit that branch now points at."""
    repo = Path(repo).resolve()
    if not (repo / ".git").is_dir():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "--quiet", f"--initial-branch={branch}")
        # nbgitpuller fetches from this repository while its branch is checked out here
        git(repo, "config", "receive.denyCurrentBranch", "updateInstead")
    with tempfile.TemporaryDirectory(prefix="student-edition-") as folder:
        build(Path(folder) / "student")
        for old in repo.iterdir():
            if old.name != ".git":
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        shutil.copytree(Path(folder) / "student", repo, dirs_exist_ok=True)
    git(repo, "add", "--all")
    if git(repo, "status", "--porcelain"):
        try:
            teacher = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                     text=True, timeout=60).stdout.strip() or "unknown"
        except OSError:
            teacher = "unknown"
        git(repo, "commit", "--quiet", "-m", f"Student edition from the course at {teacher}")
    return git(repo, "rev-parse", "HEAD")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help=f"git repository (default {DEFAULT_REPO})")
    parser.add_argument("--branch", default="main", help="branch (default main)")
    args = parser.parse_args(argv)
    commit = publish(args.repo, args.branch)
    print(f"student edition at {commit[:12]} on {args.branch} of {args.repo.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
