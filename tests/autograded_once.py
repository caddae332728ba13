"""Each notebook's nbgrader assignment, generated and autograded once per test run, for the two
test files that read it: nbgrader's scores (tests/test_nbgrader.py) and the student edition's
run (tests/test_student_edition.py). nbgrader's autograde executes the teacher edition and the
released student version, so each edition of a notebook executes here once, not once per file:
each on a stand-in of the backend matrix, and both compared with the stored outputs: the
teacher edition whole, the release (whose exercises are stubs) outside its exercises.

    course = autograded_once.course(tmp_path_factory, Path("notebooks/08_degradation.ipynb"))
    course / "autograded" / "student" / "08_degradation" / "08_degradation.ipynb"  # executed

conftest.work_unit sends both files' tests of one notebook to one worker, so the second finds
the course built (tests/built_once.py keeps it, under a lock, for the whole run).
"""
from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

from scripts import backend_matrix, build_nbgrader
from tests import built_once

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # nbgrader, and alembic, which nbgrader runs to create its gradebook
STUDENTS = ("teacher", "student")  # the teacher edition, and the released version left unedited
# Each edition's kernel on its stand-in (scripts/backend_matrix.py), as both runs are compared with
# the stored outputs (tests/test_nbgrader.py): the teacher edition on two threads, the release
# (every cell but its exercises) on one thread of this CPU.
STAND_INS = {"teacher": backend_matrix.NOTEBOOKS_IN_MAKE_TEST["tests/autograded_once.py"],
             "student": backend_matrix.RELEASE_IN_MAKE_TEST}


def _grade(course: Path, path: Path) -> None:
    """Grade ``path``'s assignment in ``course`` in one process of its own (this module's
    main): nbgrader's converters change the working folder, and one process instead of a
    command per step saves two imports of nbgrader (7-9 s a notebook here)."""
    if not (BIN / "nbgrader").is_file():
        raise AssertionError(f"nbgrader is not installed in {BIN}: pip install -r requirements.txt")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "tests.autograded_once", str(course), str(path)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, f"nbgrader on {path.name} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def grade_here(course: Path, path: Path) -> None:
    """Write the nbgrader course with ``path``'s assignment only, release it, submit the teacher
    edition (as ``teacher``) and the release (as ``student``) and autograde both, with the
    course's nbgrader_config.py, as ``nbgrader generate_assignment`` and ``nbgrader autograde``
    would (the teacher's commands, scripts/autograde.py, run those)."""
    from nbgrader.converters import Autograde, GenerateAssignment
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    build_nbgrader.build(course)
    assignment = path.stem
    for other in (course / "source").iterdir():  # this notebook's assignment only
        if other.name != assignment:
            shutil.rmtree(other)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()

    def run(converter, student: str = "", **settings) -> None:
        folder = CourseDirectory(config=config, root=str(course), assignment_id=assignment,
                                 **({"student_id": student} if student else {}))
        app = converter(coursedir=folder, config=config, log=logging.getLogger("nbgrader"), force=True, **settings)
        app.start()

    run(GenerateAssignment, create_assignment=True)
    for student, source in zip(STUDENTS, (course / "source", course / "release")):
        target = course / "submitted" / student / assignment / path.name
        target.parent.mkdir(parents=True)
        shutil.copy(source / assignment / path.name, target)
    for student in STUDENTS:
        on_stand_in(functools.partial(run, Autograde, student, create_student=True), STAND_INS[student])


def on_stand_in(call, backend) -> None:
    """``call()`` with this process's environment set to ``backend``'s (a kernel it starts
    inherits it, with no stray variables), then restored."""
    as_run = dict(os.environ)
    os.environ.clear()
    os.environ.update(backend_matrix.environment(backend))
    try:
        call()
    finally:
        os.environ.clear()
        os.environ.update(as_run)


def course(tmp_path_factory, path: Path) -> Path:
    """The autograded nbgrader course of notebook ``path`` (one with exercises), built once per run."""
    return built_once.folder(tmp_path_factory, f"nbgrader-{path.stem}", lambda folder: _grade(folder, path))


def autograded(course_folder: Path, path: Path, student: str) -> Path:
    """The notebook nbgrader executed for ``student`` (one of STUDENTS), with its outputs."""
    return course_folder / "autograded" / student / path.stem / path.name


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="[%(levelname)s] %(message)s")
    grade_here(Path(sys.argv[1]), Path(sys.argv[2]))
