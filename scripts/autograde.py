#!/usr/bin/env python
"""nbgrader's autograde for every collected assignment, after refusing what it would grade wrongly.

    python -m scripts.autograde                  # the hub's course, or STATE/nbgrader (scripts.collect_submissions)
    python -m scripts.autograde --course DIR

nbgrader scores a notebook without its grade cells 0, with exit status 0 and no warning.
So every notebook in ``submitted/`` is read first; if one has no grade cells (the plain
student edition) nothing is graded and the command exits non-zero with a sentence per
notebook. Otherwise ``nbgrader autograde ASSIGNMENT --force`` runs for every assignment
that has submissions (nbgrader needs the course's ``make nbgrader`` done first: it restores
the locked cells from its gradebook). A line per notebook says how far it is ("autograding
17/390: alice, 05_slopes_multiply"): a class of thirty takes minutes.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
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


# nbgrader's log line as it starts on a submitted notebook (nbgrader.converters.autograde)
STARTING = re.compile(r"Sanitizing .*/submitted/(?P<student>[^/]+)/(?P<assignment>[^/]+)/[^/]+\.ipynb")


def _print_now(line: str) -> None:
    print(line, flush=True)


def autograde(course: Path = DEFAULT_COURSE, progress=_print_now) -> list[str]:
    """Autograde every assignment with submissions, calling ``progress`` with a line as each
    notebook starts; return the assignments graded. Raises Refused (nothing graded) for a
    notebook without grade cells, FileNotFoundError when there is nothing to grade,
    RuntimeError with nbgrader's words when nbgrader fails."""
    course = Path(course).resolve()
    problems = refusals(course)
    if problems:
        raise Refused("nothing was graded, because " + " ".join(problems))
    assignments = submitted_assignments(course)
    if not assignments:
        raise FileNotFoundError(f"no notebooks in {course / 'submitted'}: run make collect first")
    total, started = len(list((course / "submitted").glob("*/*/*.ipynb"))), 0

    def count(line: str) -> None:
        nonlocal started
        if match := STARTING.search(line):
            started += 1
            progress(f"autograding {started}/{total}: {match['student']}, {match['assignment']}")

    for assignment in assignments:
        run_nbgrader(course, "autograde", assignment, "--force", on_line=count)
    return assignments


def run_nbgrader(course: Path, *args: str, on_line=None) -> None:
    """``nbgrader ARGS`` in ``course`` with this Python's environment (its bin first on PATH,
    the course's root on PYTHONPATH for scripts.feedback), calling ``on_line`` with each line
    of its output as it comes; RuntimeError with nbgrader's words when it fails."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    tail = collections.deque(maxlen=200)
    with subprocess.Popen([str(bin_dir / "nbgrader"), *args], cwd=course, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as process:
        for line in process.stdout:
            tail.append(line)
            if on_line:
                on_line(line)
    if process.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{''.join(tail)[-4000:]}")


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

