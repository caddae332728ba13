#!/usr/bin/env python
"""Copy every student's notebooks from their home folder into the nbgrader course.

    python -m scripts.collect_submissions                      # homes in CLASSROOM_STATE/homes
    python -m scripts.collect_submissions --homes /home --course /srv/grading/nbgrader

The course is the hub's (STATE/homes/TEACHER/nbgrader) on a machine where ``make classroom``
prepared the hub, STATE/nbgrader otherwise (scripts.classroom_host.grading_course).

A student is a folder ``HOMES/NAME`` holding the course's folder (``residual-course``,
CLASSROOM_FOLDER) that nbgitpuller made. For every assignment of the course (its
``source/``), the student's notebook of that name is copied to
``submitted/NAME/ASSIGNMENT/``, where ``nbgrader autograde`` looks; an existing copy is
replaced. Run it as root when each student is a Unix user whose home only they can read.
A notebook without nbgrader's grade cells (the plain student edition, say from a zip) is
refused with a sentence, since nbgrader would score it 0 without a word; the command then
exits non-zero after copying the others. A student's opt-in log of checks
(:mod:`utils.exercises.attempts`) is copied to ``attempts/NAME.jsonl``. The students of the
class (scripts.classroom_accounts.class_names) of whom nothing was collected are named, with
the reason: never logged in (no home), or no notebooks yet.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from scripts.build_nbgrader import grade_ids
from scripts.build_student_edition import ROOT
from scripts.classroom_accounts import class_names
from scripts.classroom_host import grading_course, hand_to_teacher, state_folder, teacher_name
from utils.exercises.attempts import LOG_NAME

DEFAULT_COURSE = grading_course()
DEFAULT_HOMES = state_folder() / "homes"  # the hub's (scripts.classroom_host)
DEFAULT_FOLDER = os.environ.get("CLASSROOM_FOLDER", "residual-course")


@dataclass
class Collected:
    """What one collection did: the notebooks copied, and a sentence per notebook refused."""
    copied: list[Path] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # a student of the class -> why nothing was collected


def ungradable(path: Path) -> str | None:
    """Why nbgrader cannot grade the notebook at ``path`` (None when it can): it must carry the
    grade cells the hub's edition has."""
    try:
        notebook = nbformat.read(path, as_version=4)
    except Exception as error:  # a file a student broke: say so, do not stop the collection
        return f"{path} is not a notebook nbformat can read ({type(error).__name__}: {error})"
    if not grade_ids(notebook):
        return (f"{path} has no nbgrader grade cells, so nbgrader would score it 0 without a word: it is the plain "
                "student edition (make student, or a copy from before the hub handed out the graded one), not the "
                "hub's. Ask the student to copy their answers into the hub's notebook, or grade it by hand.")
    return None


def student_folders(homes: Path, folder: str = DEFAULT_FOLDER) -> dict[str, Path]:
    """Student name -> their copy of the course (``homes/NAME/folder``), for every home that has
    one; the teacher's (CLASSROOM_TEACHER) is not a student's."""
    homes = Path(homes)
    if not homes.is_dir():
        raise FileNotFoundError(f"no folder {homes}: pass the students' homes with --homes (HOMES= for make)")
    return {home.name: home / folder for home in sorted(homes.iterdir())
            if (home / folder / "notebooks").is_dir() and home.name != teacher_name()}


def collect(homes: Path = DEFAULT_HOMES, course: Path = DEFAULT_COURSE, folder: str = DEFAULT_FOLDER,
            students: list[str] = ()) -> Collected:
    """Copy every student's notebooks of the course's assignments into ``course/submitted``;
    name each of ``students`` (the class) of whom nothing was copied or refused."""
    course = Path(course)
    assignments = sorted(path.name for path in (course / "source").iterdir() if path.is_dir()) \
        if (course / "source").is_dir() else []
    if not assignments:
        raise FileNotFoundError(f"no assignments in {course / 'source'}: run make nbgrader first")
    done, found = Collected(), set()
    for name, copy in student_folders(homes, folder).items():
        for assignment in assignments:
            notebook = copy / "notebooks" / f"{assignment}.ipynb"
            if not notebook.is_file():
                continue
            found.add(name)
            problem = ungradable(notebook)
            if problem:
                done.refused.append(f"{name}: {problem}")
                continue
            target = course / "submitted" / name / assignment / notebook.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notebook, target)
            done.copied.append(target)
        log = copy / LOG_NAME
        if log.is_file():
            target = course / "attempts" / f"{name}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, target)
            done.logs.append(target)
    done.missing = {name: "no notebooks yet" if (Path(homes) / name).is_dir() else "never logged in"
                    for name in students if name not in found}
    return done


def not_collected(missing: dict[str, str]) -> list[str]:
    """One line per reason: "not collected (never logged in): carol, dave"."""
    reasons = {}
    for name, reason in sorted(missing.items()):
        reasons.setdefault(reason, []).append(name)
    return [f"not collected ({reason}): {', '.join(names)}" for reason, names in sorted(reasons.items())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--homes", type=Path, default=DEFAULT_HOMES, help=f"students' homes (default {DEFAULT_HOMES})")
    parser.add_argument("--course", type=Path, default=DEFAULT_COURSE, help=f"nbgrader course (default {DEFAULT_COURSE})")
    parser.add_argument("--folder", default=DEFAULT_FOLDER, help=f"the course's folder in a home (default {DEFAULT_FOLDER})")
    args = parser.parse_args(argv)
    try:
        done = collect(args.homes, args.course, args.folder, class_names(state_folder()))
    except (FileNotFoundError, PermissionError, ValueError) as error:
        print(f"make collect: {error}", file=sys.stderr)
        return 1
    finally:
        hand_to_teacher(args.course)
    students = len({path.parent.parent.name for path in done.copied})
    print(f"collected {len(done.copied)} notebooks of {students} student{'s' * (students != 1)} into "
          f"{args.course.resolve() / 'submitted'}" + (f", and {len(done.logs)} logs of checks" if done.logs else ""))
    for line in not_collected(done.missing):
        print(line)
    for sentence in done.refused:
        print(f"refused: {sentence}", file=sys.stderr)
    return 1 if done.refused else 0


if __name__ == "__main__":
    sys.exit(main())
