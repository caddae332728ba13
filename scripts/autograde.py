#!/usr/bin/env python
"""nbgrader's autograde for every collected assignment, after refusing what it would grade wrongly.

    python -m scripts.autograde                  # build/nbgrader
    python -m scripts.autograde --course DIR

nbgrader scores a notebook without its grade cells 0, with exit status 0 and no warning.
So every notebook in ``submitted/`` is read first; if one has no grade cells (the plain
student edition) nothing is graded and the command exits non-zero with a sentence per
notebook. Otherwise ``nbgrader autograde ASSIGNMENT --force`` runs for every assignment
that has submissions (nbgrader needs the course's ``make nbgrader`` done first: it restores
the locked cells from its gradebook).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from scripts.collect_submissions import DEFAULT_COURSE, ungradable


class Refused(Exception):
    """Submitted notebooks that nbgrader would grade wrongly; the message says which and why."""


def submitted_assignments(course: Path) -> list[str]:
    """The assignments with at least one submitted notebook."""
    return sorted({path.parent.name for path in (Path(course) / "submitted").glob("*/*/*.ipynb")})


def refusals(course: Path) -> list[str]:
    """A sentence for every submitted notebook nbgrader cannot grade (see collect_submissions.ungradable)."""
    return [problem for path in sorted((Path(course) / "submitted").glob("*/*/*.ipynb"))
            if (problem := ungradable(path))]


def autograde(course: Path = DEFAULT_COURSE) -> list[str]:
    """Autograde every assignment with submissions; return the assignments graded. Raises
    Refused (nothing graded) for a notebook without grade cells, FileNotFoundError when there
    is nothing to grade, RuntimeError with nbgrader's words when nbgrader fails."""
    course = Path(course).resolve()
    problems = refusals(course)
    if problems:
        raise Refused("nothing was graded, because " + " ".join(problems))
    assignments = submitted_assignments(course)
    if not assignments:
        raise FileNotFoundError(f"no notebooks in {course / 'submitted'}: run make collect first")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    for assignment in assignments:
        result = subprocess.run([str(bin_dir / "nbgrader"), "autograde", assignment, "--force"], cwd=course, env=env,
                                capture_output=True, text=True, timeout=3600)
        if result.returncode != 0:
            raise RuntimeError(f"nbgrader autograde {assignment} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return assignments


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course", type=Path, default=DEFAULT_COURSE, help=f"nbgrader course (default {DEFAULT_COURSE})")
    args = parser.parse_args(argv)
    try:
        graded = autograde(args.course)
    except (Refused, FileNotFoundError, RuntimeError) as error:
        print(f"make autograde: {error}", file=sys.stderr)
        return 1
    print(f"autograded {len(graded)} assignments in {args.course.resolve() / 'autograded'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

