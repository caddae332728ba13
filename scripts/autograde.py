#!/usr/bin/env python
"""nbgrader's autograde for every collected notebook, several at once, after refusing what it
would grade wrongly.

    python -m scripts.autograde                                # the hub's course, or STATE/nbgrader (scripts.collect_submissions)
    python -m scripts.autograde --assignment 05_flexible_block # one assignment, every student's notebook
    python -m scripts.autograde --workers 1 --course DIR       # one notebook at a time

nbgrader scores a notebook without its grade cells 0, with exit status 0 and no warning.
So every notebook to grade is read first; if one has no grade cells (the plain student
edition) nothing is graded and the command exits non-zero with a sentence per notebook.
Otherwise each submitted notebook is one job, ``nbgrader autograde ASSIGNMENT --student NAME
--force`` (nbgrader needs the course's ``make nbgrader`` done first: it restores the locked
cells from its gradebook), and ``--workers`` jobs run at once (default: the CPUs this machine
gives, ``utils.threads.cpu_share``; each kernel uses one thread). A line says which notebook
starts ("autograding 17/390: alice, 05_flexible_block"). A job that fails is named with
nbgrader's last words once the others are done, and the command exits non-zero; the other
notebooks' grades stay in the gradebook. A job per notebook starts nbgrader each time (about
2 CPU-seconds, benchmarks/grading.py): the price of keeping both cores busy to the end and of
naming exactly which notebook failed.

Jobs share the gradebook, one SQLite file. nbgrader opens a short session for each step (the
student, the submission, each cell's score) and none while the notebook runs, and Python's
sqlite3 starts a transaction only at its first write, so a second writer waits for SQLite's
lock rather than failing; but only for sqlite3's default 5 s, after which nbgrader stops with
"database is locked" (and advice to upgrade its database). A busy machine can hold a job up
that long, so each job is given the gradebook's address with a longer wait (GRADEBOOK_WAIT).
Tried without it: four processes each writing 40 sessions into one gradebook at once, and
eight autogrades at once, never met "database is locked"; a lock held for 20 s did.
"""
from __future__ import annotations

import argparse
import itertools
import math
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from scripts.build_student_edition import ROOT
from scripts.classroom_host import hand_to_teacher
from scripts.collect_submissions import DEFAULT_COURSE, ungradable
from utils.threads import cpu_share

DEFAULT_WORKERS = max(1, math.floor(cpu_share()))
GRADEBOOK_WAIT = 300  # seconds a job waits for another's write to the gradebook before nbgrader gives up


class Refused(Exception):
    """Submitted notebooks that nbgrader would grade wrongly; the message says which and why."""


def chosen(assignment: str | None, assignments: list[str], where: str) -> list[str]:
    """``assignments``, or only ``assignment`` when one is given; ValueError naming the ones
    there are (``where``: what holds them) when it is not one of them."""
    if assignment is None:
        return assignments
    if assignment not in assignments:
        raise ValueError(f"there is no assignment {assignment!r} in {where}; there are: "
                         f"{', '.join(assignments) or 'none'}")
    return [assignment]


def submitted_notebooks(course: Path, assignment: str | None = None) -> list[Path]:
    """``submitted/STUDENT/ASSIGNMENT/*.ipynb``, assignment by assignment, of every assignment
    or of ``assignment`` only (ValueError when the course has no such assignment)."""
    course = Path(course)
    notebooks = sorted((course / "submitted").glob("*/*/*.ipynb"), key=lambda p: (p.parent.name, p.parent.parent.name))
    known = sorted({path.name for path in (course / "source").glob("*") if path.is_dir()}
                   | {path.parent.name for path in notebooks})
    keep = chosen(assignment, known, f"the course {course}")
    return [path for path in notebooks if path.parent.name in keep]


def refusals(notebooks: list[Path]) -> list[str]:
    """A sentence for every notebook nbgrader cannot grade (see collect_submissions.ungradable)."""
    return [problem for path in notebooks if (problem := ungradable(path))]


def _print_now(line: str) -> None:
    print(line, flush=True)


def autograde(course: Path = DEFAULT_COURSE, progress=_print_now, assignment: str | None = None,
              workers: int = DEFAULT_WORKERS) -> list[str]:
    """Autograde every submitted notebook (of ``assignment`` only, when given), ``workers`` at a
    time, calling ``progress`` with a line as each starts; return the assignments graded.
    Raises ValueError for an unknown assignment or fewer than one worker, Refused (nothing
    graded) for a notebook without grade cells, FileNotFoundError when there is nothing to
    grade, RuntimeError naming each student and notebook nbgrader failed on, with its words,
    once every other job is done."""
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number, at least 1 (how many notebooks run at once), got {workers!r}")
    course = Path(course).resolve()
    notebooks = submitted_notebooks(course, assignment)
    problems = refusals(notebooks)
    if problems:
        raise Refused("nothing was graded, because " + " ".join(problems))
    if not notebooks:
        raise FileNotFoundError(f"no notebooks{f' of {assignment}' if assignment else ''} in {course / 'submitted'}: "
                                "run make collect first")
    jobs = [(path.parent.name, path.parent.parent.name) for path in notebooks]  # (assignment, student)
    gradebook = f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}?timeout={GRADEBOOK_WAIT}"
    started, lock = itertools.count(1), threading.Lock()

    def grade(job: tuple[str, str]) -> tuple[str, str] | None:
        """Run one job; on failure, who it was ("alice, 05_flexible_block") and nbgrader's last words."""
        name, student = job
        with lock:
            progress(f"autograding {next(started)}/{len(jobs)}: {student}, {name}")
        try:
            run_nbgrader(course, "autograde", name, "--student", student, "--force", gradebook)
        except RuntimeError as error:
            return f"{student}, {name}", str(error)[-1500:]  # the end only: many may fail alike
        return None

    pool = ThreadPoolExecutor(max_workers=min(workers, len(jobs)))
    try:
        failures = [failure for failure in pool.map(grade, jobs) if failure]
    finally:  # on Ctrl-C (which the running nbgrader processes get too), start no more jobs
        pool.shutdown(cancel_futures=True)
    if failures:
        raise RuntimeError(f"{len(failures)} of {len(jobs)} notebooks were not graded "
                           f"({'; '.join(who for who, _ in failures)}); the other {len(jobs) - len(failures)} are. "
                           "nbgrader said:\n" + "\n".join(f"{who}: ...{words}" for who, words in failures))
    return sorted({name for name, _ in jobs})


def run_nbgrader(course: Path, *args: str) -> None:
    """``nbgrader ARGS`` in ``course`` with this Python's environment (its bin first on PATH,
    the course's root on PYTHONPATH for scripts.feedback); RuntimeError with nbgrader's last
    words when it fails."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([str(bin_dir / "nbgrader"), *args], cwd=course, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{result.stdout[-4000:]}")


def course_command(argv, *, doc: str, name: str, action, summary: str, options=()) -> int:
    """The command line of a grading step on an nbgrader course (``--course DIR``, and each of
    ``options``, (flags, argparse keywords), handed to ``action`` by name): its errors (Refused,
    FileNotFoundError, RuntimeError, ValueError) as one line and exit status 1, else ``summary``
    filled with the step's result (``count``) and the course (``course``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course", type=Path, default=DEFAULT_COURSE, help=f"nbgrader course (default {DEFAULT_COURSE})")
    for flags, keywords in options:
        parser.add_argument(*flags, **keywords)
    args = vars(parser.parse_args(argv))
    course = args.pop("course")
    try:
        done = action(course, **args)
    except (Refused, FileNotFoundError, RuntimeError, ValueError) as error:
        print(f"make {name}: {error}", file=sys.stderr)
        return 1
    finally:
        hand_to_teacher(course)  # the hub's course: its gradebook is the formgrader's too
    print(summary.format(count=len(done), course=course.resolve()))
    return 0


# Each grading step that can take one assignment (make autograde ASSIGNMENT=..., make feedback ASSIGNMENT=...)
ONE_ASSIGNMENT = (("--assignment",), {"help": "only this assignment (a notebook's name without .ipynb), every student's"})


def main(argv=None) -> int:
    workers = (("--workers",), {"type": int, "default": DEFAULT_WORKERS,
                                "help": f"notebooks graded at once (default {DEFAULT_WORKERS}, this machine's CPUs)"})
    return course_command(argv, doc=__doc__, name="autograde", action=autograde, options=(ONE_ASSIGNMENT, workers),
                          summary="autograded {count} assignments in {course}/autograded")


if __name__ == "__main__":
    sys.exit(main())

