#!/usr/bin/env python
"""Build the student edition and commit it to a git repository that nbgitpuller pulls from.

    python -m scripts.publish_student_edition            # CLASSROOM_STATE/student-edition.git and its utils
    python -m scripts.publish_student_edition --repo DIR

``make classroom`` runs this before it starts the hub. The default repository lies in the hub's
state folder (scripts.classroom_host); there the ``utils`` of the edition is also installed for
students' kernels (``publish_utils``), so the teacher's unpublished edits never reach them. Run again after changing a notebook
during a term: a new commit appears only when the student edition changed, and each
student's copy takes it the next time they open the hub's link (nbgitpuller merges it with
``git merge -Xours``: a file they edited gets every change to lines they did not touch, and
loses, silently, a change next to their edits; scripts/update_report.py finds who lacks a
fix). The notebooks carry nbgrader's metadata (:func:`build_hub_edition`), and each commit's
message names the notebooks and cells that changed (:func:`publish_message`). ``make
publish`` runs it with the course's Python. To publish on GitHub instead, push this
repository's branch to your fork and point CLASSROOM_REPO and CLASSROOM_BRANCH at it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scripts.build_nbgrader import release_notebook
from scripts.build_student_edition import ROOT, build
from scripts.classroom_host import state_folder

DEFAULT_REPO = state_folder() / "student-edition.git"
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
        build_hub_edition(Path(folder) / "student")
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
        git(repo, "commit", "--quiet", "-m", publish_message(repo, teacher))
    return git(repo, "rev-parse", "HEAD")


def build_hub_edition(out: Path) -> list[Path]:
    """The student edition the hub hands out: every notebook with nbgrader's metadata
    (scripts.build_nbgrader.release_notebook), so each student's own copy is what
    ``make autograde`` grades."""
    return build(out, edition=release_notebook)


def _cells(text: str | None) -> dict[str, str]:
    """Cell id -> source of a notebook's JSON text ({} when there is none or it is not one)."""
    try:
        return {cell.get("id", str(i)): "".join(cell.get("source", ""))
                for i, cell in enumerate(json.loads(text).get("cells", []))} if text else {}
    except ValueError:
        return {}


def changed_cells(before: str | None, after: str | None) -> str:
    """What changed between two versions of a notebook, in words: "2 cells changed ("first
    words ..."), 1 added"."""
    old, new = _cells(before), _cells(after)
    changed = [cell for cell in new if cell in old and new[cell] != old[cell]]
    parts = []
    if changed:
        first = " ".join(new[changed[0]].split())[:60]
        parts.append(f"{len(changed)} cell{'s' * (len(changed) != 1)} changed (\"{first}...\")")
    if added := len(new.keys() - old.keys()):
        parts.append(f"{added} added")
    if removed := len(old.keys() - new.keys()):
        parts.append(f"{removed} removed")
    return ", ".join(parts) or "outputs or metadata only"


def publish_message(repo: Path, teacher: str) -> str:
    """A commit message that says what this publish changed (the staged changes of ``repo``):
    a summary line naming the files, then one line per changed notebook with its cells."""
    status = [line.split("\t") for line in git(repo, "diff", "--cached", "--name-status").splitlines()]
    if not _has_commits(repo):
        return f"Student edition from the course at {teacher}: first publish, {len(status)} files"
    notebooks, others = [], []
    for kind, path, *_ in status:
        if path.endswith(".ipynb"):
            before = None if kind == "A" else git(repo, "show", f"HEAD:{path}")
            after = None if kind == "D" else (repo / path).read_text(encoding="utf-8")
            what = {"A": "new", "D": "deleted"}.get(kind) or changed_cells(before, after)
            notebooks.append(f"- {path}: {what}")
        else:
            others.append(path)
    names = [Path(line[2:].split(":")[0]).name for line in notebooks] + others[:3]
    summary = f"Publish {', '.join(names)}" + (f" and {len(others) - 3} more files" if len(others) > 3 else "")
    body = notebooks + ([f"- other files: {', '.join(others)}"] if others else [])
    return f"{summary[:200]}\n\nStudent edition from the course at {teacher}.\n" + "\n".join(body)


def _has_commits(repo: Path) -> bool:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", "HEAD"],
                          capture_output=True, timeout=60).returncode == 0


def publish_utils(repo: Path, state: Path) -> Path:
    """Install the ``utils`` of the student edition in ``repo`` (not editable) into
    STATE/utils/COMMIT and point STATE/utils/current at it in one step: a kernel that starts
    afterwards imports it (the hub puts STATE/utils/current on students' PYTHONPATH), one that
    is running keeps what it imported. Returns the folder ``current`` now points at."""
    commit = git(repo, "rev-parse", "HEAD")[:12]
    folder = state / "utils" / commit
    if not (folder / "utils" / "__init__.py").is_file():
        with tempfile.TemporaryDirectory(prefix="student-utils-") as source:
            for name in ("utils", "pyproject.toml"):  # a copy: building in place would litter the repository
                copy = shutil.copytree if (repo / name).is_dir() else shutil.copy2
                copy(repo / name, Path(source) / name)
            staging = folder.with_name(f"{commit}.new")
            shutil.rmtree(staging, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                            "--no-deps", "--no-build-isolation", "--target", str(staging), source],
                           check=True, capture_output=True, timeout=600)
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
    link = state / "utils" / "current.new"
    link.unlink(missing_ok=True)
    link.symlink_to(commit)
    os.replace(link, state / "utils" / "current")
    return folder


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help=f"git repository (default {DEFAULT_REPO})")
    parser.add_argument("--branch", default="main", help="branch (default main)")
    args = parser.parse_args(argv)
    commit = publish(args.repo, args.branch)
    print(f"student edition at {commit[:12]} on {args.branch} of {args.repo.resolve()}")
    if args.repo.resolve() == DEFAULT_REPO and args.branch == "main":  # the hub's: its kernels' utils too
        print(f"students' utils: {publish_utils(DEFAULT_REPO, DEFAULT_REPO.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
