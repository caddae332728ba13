#!/usr/bin/env python
"""nbgrader's autograde for every collected assignment, after refusing what it would grade wrongly.

    python -m scripts.autograde                  # the hub's course, or build/nbgrader (scripts.collect_submissions)
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

from scripts.build_student_edition import ROOT
from scripts.classroom_host import hand_to_teacher
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
    for assignment in assignments:
        run_nbgrader(course, "autograde", assignment, "--force")
    return assignments


def run_nbgrader(course: Path, *args: str) -> None:
    """``nbgrader ARGS`` in ``course`` with this Python's environment (its bin first on PATH,
    the course's root on PYTHONPATH for scripts.feedback); RuntimeError with nbgrader's words
    when it fails."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([str(bin_dir / "nbgrader"), *args], cwd=course, env=env, capture_output=True, text=True,
                            timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")


def course_command(argv, *, doc: str, name: str, action, summary: str) -> int:
    """The command line of a grading step on an nbgrader course (``--course DIR``): its
    errors (Refused, FileNotFoundError, RuntimeError) as one line and exit status 1, else
    ``summary`` filled with the step's result (``count``) and the course (``course``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course", type=Path, default=DEFAULT_COURSE, help=f"nbgrader course (default {DEFAULT_COURSE})")
    args = parser.parse_args(argv)
    try:
        done = action(args.course)
    except (Refused, FileNotFoundError, RuntimeError) as error:
        print(f"make {name}: {error}", file=sys.stderr)
        return 1
    finally:
        hand_to_teacher(args.course)  # the hub's course: its gradebook is the formgrader's too
    print(summary.format(count=len(done), course=args.course.resolve()))
    return 0


def main(argv=None) -> int:
    return course_command(argv, doc=__doc__, name="autograde", action=autograde,
                          summary="autograded {count} assignments in {course}/autograded")


if __name__ == "__main__":
    sys.exit(main())

