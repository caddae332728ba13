"""Each notebook's nbgrader assignment, generated and autograded once per test run, for the two
test files that read it: nbgrader's scores (tests/test_nbgrader.py) and the student edition's
run (tests/test_student_edition.py). nbgrader's autograde executes the teacher edition and the
released student version, so each edition of a notebook executes here once, not once per file:
the teacher edition on the backend matrix's stand-in (its outputs are compared with the stored
ones), the release on one thread of this CPU (its exercises are stubs; nothing is compared).

    course = autograded_once.course(tmp_path_factory, Path("notebooks/08_degradation.ipynb"))
    course / "autograded" / "student" / "08_degradation" / "08_degradation.ipynb"  # executed

conftest.work_unit sends both files' tests of one notebook to one worker, so the second finds
the course built (tests/built_once.py keeps it, under a lock, for the whole run).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from scripts import backend_matrix, build_nbgrader
from tests import built_once

NBGRADER = Path(sys.executable).parent / "nbgrader"
STUDENTS = ("teacher", "student")  # the teacher edition, and the released version left unedited


def nbgrader(course: Path, *args: str, stand_in: bool = True) -> str:
    """Run nbgrader in ``course``, its kernels on the backend matrix's stand-in for this file
    (the teacher edition's outputs are compared with the stored ones: tests/test_nbgrader.py),
    or with ``stand_in=False`` as the tests themselves run (this CPU, one thread); its output.
    Fails (AssertionError) with its last words."""
    backend = backend_matrix.NOTEBOOKS_IN_MAKE_TEST["tests/autograded_once.py"] if stand_in else None
    env = {**(backend_matrix.environment(backend) if backend else os.environ),
           "PATH": f"{NBGRADER.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([str(NBGRADER), *args], cwd=course, env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout + result.stderr


def _grade(course: Path, path: Path) -> None:
    """Write the nbgrader course with ``path``'s assignment only, release it, submit the teacher
    edition (as ``teacher``) and the release (as ``student``) and autograde both."""
    if not NBGRADER.is_file():
        raise AssertionError(f"nbgrader is not installed in {NBGRADER.parent}: pip install -r requirements.txt")
    build_nbgrader.build(course)
    assignment = path.stem
    for other in (course / "source").iterdir():  # this notebook's assignment only
        if other.name != assignment:
            shutil.rmtree(other)
    nbgrader(course, "generate_assignment", assignment, "--force")
    for student, source in zip(STUDENTS, (course / "source", course / "release")):
        target = course / "submitted" / student / assignment / path.name
        target.parent.mkdir(parents=True)
        shutil.copy(source / assignment / path.name, target)
    # The teacher edition on the stand-in, whose outputs are compared; the release, whose outputs
    # are not (its exercises are stubs), on one thread of this CPU: on this 2-core machine two threads
    # took notebook 08 about 1.5 times as long as one with the other core busy, 4 times with it idle.
    nbgrader(course, "autograde", assignment, "--student", "teacher", "--force")
    nbgrader(course, "autograde", assignment, "--student", "student", "--force", stand_in=False)


def course(tmp_path_factory, path: Path) -> Path:
    """The autograded nbgrader course of notebook ``path`` (one with exercises), built once per run."""
    return built_once.folder(tmp_path_factory, f"nbgrader-{path.stem}", lambda folder: _grade(folder, path))


def autograded(course_folder: Path, path: Path, student: str) -> Path:
    """The notebook nbgrader executed for ``student`` (one of STUDENTS), with its outputs."""
    return course_folder / "autograded" / student / path.stem / path.name
