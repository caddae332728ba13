#!/usr/bin/env python
"""Which students' copies lack a fix published to the student edition.

    python -m scripts.update_report FIX                     # a commit of the student edition's repository
    python -m scripts.update_report FIX --homes /home --repo DIR

nbgitpuller merges the teacher's updates with ``git merge -Xours``: where a student edited
lines next to a fix, the fix is dropped without a word, and a student who has not opened the
link since has not merged it at all. So this looks at the files themselves: for every file
the commit FIX changed, each line it added (or, for a fix that only deletes, each line it
removed) is looked for in the student's copy. It prints one line per student who lacks the
change, saying which file and how many of its lines, and exits 1 if anyone does.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.collect_submissions import DEFAULT_FOLDER, DEFAULT_HOMES, student_folders
from scripts.publish_student_edition import DEFAULT_REPO, git


def _line(text: str) -> str:
    """A line as compared: no surrounding blanks, no trailing comma (the last line of a
    notebook cell's source has none)."""
    return text.strip().rstrip(",").strip()


def fix_lines(repo: Path, fix: str) -> dict[str, tuple[str, set[str]]]:
    """File -> ("added" or "removed", the lines that show the fix): the lines FIX added, or
    for a file where it only removed lines, those. Lines of one or two characters (brackets)
    say nothing and are left out."""
    changes: dict[str, tuple[list[str], list[str]]] = {}
    current = None
    for line in git(repo, "show", "--format=", "--unified=0", fix).splitlines():
        if line.startswith("+++ "):
            current = None if line == "+++ /dev/null" else line[6:]
            if current:
                changes.setdefault(current, ([], []))
        elif current and line.startswith("+") and not line.startswith("+++"):
            changes[current][0].append(_line(line[1:]))
        elif current and line.startswith("-") and not line.startswith("---"):
            changes[current][1].append(_line(line[1:]))
    found = {}
    for path, (added, removed) in changes.items():
        added, removed = {a for a in added if len(a) > 2}, {r for r in removed if len(r) > 2}
        if added:
            found[path] = ("added", added)
        elif removed:
            found[path] = ("removed", removed)
    return found


def lacking(copy: Path, fix: dict[str, tuple[str, set[str]]]) -> list[str]:
    """What the student's copy (their course folder) lacks of the fix, one phrase per file."""
    missing = []
    for path, (kind, lines) in fix.items():
        target = copy / path
        if not target.is_file():
            missing.append(f"{path} is missing")
            continue
        present = {_line(line) for line in target.read_text(encoding="utf-8", errors="replace").splitlines()}
        wrong = len(lines - present) if kind == "added" else len(lines & present)
        if wrong:
            missing.append(f"{path}: {wrong} of the {len(lines)} lines the fix {kind} "
                           + ("are not there" if kind == "added" else "are still there"))
    return missing


def update_report(fix: str, homes: Path = DEFAULT_HOMES, repo: Path = DEFAULT_REPO,
                  folder: str = DEFAULT_FOLDER) -> dict[str, list[str]]:
    """Student -> what their copy lacks of ``fix`` (students who have it are left out).
    Raises RuntimeError (git's words) for a commit the repository does not know."""
    changes = fix_lines(Path(repo), fix)
    report = {}
    for name, copy in student_folders(homes, folder).items():
        missing = lacking(copy, changes)
        if missing:
            report[name] = missing
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fix", help="a commit of the student edition's repository (make publish prints it)")
    parser.add_argument("--homes", type=Path, default=DEFAULT_HOMES, help=f"students' homes (default {DEFAULT_HOMES})")
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help=f"student edition (default {DEFAULT_REPO})")
    parser.add_argument("--folder", default=DEFAULT_FOLDER, help=f"the course's folder in a home (default {DEFAULT_FOLDER})")
    args = parser.parse_args(argv)
    try:
        report = update_report(args.fix, args.homes, args.repo, args.folder)
    except (RuntimeError, FileNotFoundError) as error:
        print(f"make update-report: {error}", file=sys.stderr)
        return 2
    for name, missing in report.items():
        print(f"{name}: " + "; ".join(missing))
    print(f"{len(report)} student{'s' * (len(report) != 1)} lack {args.fix[:12]}" if report
          else f"every student's copy has {args.fix[:12]}")
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main())
