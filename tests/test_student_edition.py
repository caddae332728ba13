"""The student edition (scripts/build_student_edition.py) runs top to bottom from a fresh
kernel, with every exercise left as its stub: no error anywhere, and every check cell
says "not done yet" for the exercise its stub names.

A notebook with exercises is not executed here again: nbgrader's autograde of its released
version (tests/autograded_once.py, for tests/test_nbgrader.py) has run it, and that release is
checked to be this edition's code cell for cell, but for two things that change no result:
nbgrader's stubs raise with its own message, and a check cell hands its verdict to
``graded``, which shows it wrapped and, only under the autograder, raises NotPassed when it
did not pass. So its run must show no error but NotPassed in a check cell. Notebook 00 (no
exercises, no assignment) runs here. conftest.work_unit puts a notebook's test here and its
nbgrader test on one worker, and spreads the notebooks over both."""
import re
from pathlib import Path

import nbformat
import pytest

from scripts import build_nbgrader, build_student_edition as builder
from scripts.execute_notebooks import notebook_client  # the course's executor
from tests import autograded_once, built_once

ROOT = Path(__file__).resolve().parent.parent

NOTEBOOKS = sorted((ROOT / "notebooks").glob(builder.NOTEBOOK_GLOB), reverse=True)  # longest (latest) first
CELL_TIMEOUT = 900  # seconds, for a hang only: the longest cell takes about 30 s alone, a few minutes on a loaded machine
STUB = re.compile(r'raise NotImplementedError\("(Exercise [^:"]+): write your code here"\)')
ANY_STUB = re.compile(r'raise NotImplementedError\("[^"]*"\)')


@pytest.fixture(scope="module")
def student_folder(tmp_path_factory):
    """One student edition for the whole run, both workers (the notebooks write no files)."""
    return built_once.folder(tmp_path_factory, "student-edition", builder.build) / "notebooks"


def _text(cell) -> str:
    parts = []
    for output in cell.outputs:
        parts.append(output.get("text", "") or output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def _executed(student_folder, name, tmp_path_factory):
    """``name``'s student edition as it ran from a fresh kernel, and whether that run was
    nbgrader's (so its check cells may raise NotPassed)."""
    path = student_folder / name
    notebook = nbformat.read(path, as_version=4)
    teacher = ROOT / "notebooks" / name
    if not build_nbgrader.grade_ids(build_nbgrader.nbgrader_notebook(nbformat.read(teacher, as_version=4), name[:2])):
        try:
            notebook_client(notebook, student_folder, timeout=CELL_TIMEOUT).execute()  # raises on any error
        except RuntimeError as error:  # a kernel that died while starting (seen once under load), not the notebook
            if "Kernel died before replying to kernel_info" not in str(error):
                raise
            notebook = nbformat.read(path, as_version=4)
            notebook_client(notebook, student_folder, timeout=CELL_TIMEOUT).execute()
        return notebook, False
    course = autograded_once.course(tmp_path_factory, teacher)
    ran = nbformat.read(autograded_once.autograded(course, teacher, "student"), as_version=4)
    ours = [cell for cell in notebook.cells if cell.cell_type == "code"]
    theirs = [cell for cell in ran.cells if cell.cell_type == "code"]
    assert len(ours) == len(theirs), f"{name}: {len(theirs)} code cells in nbgrader's release, {len(ours)} here"
    for index, (mine, run) in enumerate(zip(ours, theirs)):
        expected = build_nbgrader.graded_check(mine.source) if "check" in builder.tags(mine) else mine.source
        assert ANY_STUB.sub("STUB", run.source).rstrip() == ANY_STUB.sub("STUB", expected).rstrip(), (
            f"{name}: code cell {index} of nbgrader's release is not this edition's")
        run.source = mine.source  # the labelled stub, for the checks below
    return ran, True


@pytest.mark.slow
@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_the_student_notebook_runs_and_every_check_says_not_done_yet(student_folder, name, tmp_path_factory):
    notebook = nbformat.read(student_folder / name, as_version=4)
    assert not any("answer" in builder.tags(cell) for cell in notebook.cells)
    notebook, by_nbgrader = _executed(student_folder, name, tmp_path_factory)
    label = None
    for cell in (cell for cell in notebook.cells if cell.cell_type == "code"):
        errors = [output for output in cell.outputs if output.get("output_type") == "error"]
        allowed = by_nbgrader and "check" in builder.tags(cell)
        assert all(allowed and error.get("ename") == "NotPassed" for error in errors), (
            f"{name}: a cell raised {[error.get('ename') for error in errors]}:\n{cell.source}")
        if "solution" in builder.tags(cell):
            labels = STUB.findall(cell.source)
            assert labels, f"{name}: a solution cell without a stub:\n{cell.source}"
            label = labels[0]
        if "check" in builder.tags(cell):
            text = " ".join(_text(cell).split())  # graded() wraps long verdicts
            assert "not done yet" in text, f"{name}: a check cell says {text!r}"
            assert label is None or label in text, f"{name}: the stub says {label}, its check says {text!r}"
