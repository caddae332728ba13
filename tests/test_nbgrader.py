"""make nbgrader: the nbgrader course written from the teacher edition. Fast: its cells carry
the right nbgrader metadata and a check becomes an assertion on the verdict. Slow, for every
notebook: nbgrader's generate_assignment accepts it, and autograde gives the teacher edition
full marks on the code exercises and the released (unedited student) version zero; its run of
the teacher edition prints every stored output again, and its run of the release every one
outside the exercises (each notebook autograded once per run by tests/autograded_once.py,
whose student run tests/test_student_edition.py reads too). Notebook 00, no assignment, runs
on the same two stand-ins here, so every notebook runs on each."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from scripts import backend_matrix, build_nbgrader, build_student_edition
from scripts.execute_notebooks import notebook_client  # the course's executor
from utils.exercises import grading
from tests import autograded_once, output_tolerance

ROOT = Path(__file__).resolve().parent.parent

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_a_check_hands_its_verdict_to_graded():
    source = build_nbgrader.graded_check("x = 1\nex.thing.check(\n    thing)")
    assert source.splitlines() == ["from utils.exercises.grading import graded", "x = 1", "graded(ex.thing.check(",
                                   "    thing))"]


def test_a_check_cell_must_end_with_the_call():
    with pytest.raises(ValueError, match="must end with the check"):
        build_nbgrader.graded_check("verdict = ex.thing.check(thing)")


def test_the_test_cell_fails_under_nbgrader_only_when_the_checker_does(monkeypatch):
    """A passed verdict never raises; a failed one raises NotPassed under nbgrader's autograder
    (NBGRADER_EXECUTION set) and nowhere else, so a learner's Run All goes on."""
    from utils.exercises.core import Exercise
    from utils.exercises.grading import NotPassed

    exercise = Exercise("Exercise 0.1: double", lambda f: "ok" if f(2) == 4 else (_ for _ in ()).throw(ValueError()),
                        ["hint"])
    code = build_nbgrader.graded_check("ex.check(answer)")
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    exec(code, {"ex": exercise, "answer": lambda x: x})
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    exec(code, {"ex": exercise, "answer": lambda x: 2 * x})
    with pytest.raises(NotPassed, match="0 points"):
        exec(code, {"ex": exercise, "answer": lambda x: x})


def test_cells_get_nbgrader_metadata():
    notebook = nbformat.read(NOTEBOOKS[1], as_version=4)
    graded = build_nbgrader.nbgrader_notebook(notebook, "01")
    kinds = {}
    for cell in graded.cells:
        meta = cell.metadata.get("nbgrader")
        if meta:
            kinds.setdefault(meta["grade_id"].split("_")[1], []).append((meta, cell))
    assert len(kinds["solution"]) == len(kinds["check"]) >= 1 and kinds["answer"]
    for meta, cell in kinds["solution"]:
        assert meta["solution"] and not meta["grade"] and cell.outputs == []
    for meta, cell in kinds["check"]:
        assert meta["grade"] and meta["locked"] and meta["points"] == 1 and "graded(" in cell.source
    for meta, cell in kinds["answer"]:
        assert cell.cell_type == "markdown" and meta["solution"] and meta["grade"] and meta["points"] >= 1
    ids = [cell.metadata["nbgrader"]["grade_id"] for cell in graded.cells if "nbgrader" in cell.metadata]
    assert len(ids) == len(set(ids))
    assert "nbgrader" not in notebook.cells[0].metadata  # the original is left alone


def _code_scores(course: Path, assignment: str, notebook: str, student: str) -> tuple[float, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submitted = gradebook.find_submission_notebook(notebook, assignment, student)
        checks = [grade for grade in submitted.grades if "_check_" in grade.name]
        return sum(grade.auto_score or 0 for grade in checks), sum(grade.max_score for grade in checks)


def test_notebook_00_is_no_assignment(tmp_path):
    written = build_nbgrader.build(tmp_path / "course")
    assert [path.parent.name for path in written] == [path.stem for path in NOTEBOOKS[1:]]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=[p.name[:2] for p in NOTEBOOKS[1:]])
def test_nbgrader_grades_the_teacher_edition_full_and_the_student_edition_zero(tmp_path_factory, path):
    course = autograded_once.course(tmp_path_factory, path)
    assignment = path.stem
    released = course / "release" / assignment / path.name
    assert released.is_file()
    release = nbformat.read(released, as_version=4)
    assert "# BEGIN SOLUTION" not in nbformat.writes(release), "the released notebook still holds a solution"
    figures = sum("image/png" in output.get("data", {}) for cell in release.cells if cell.cell_type == "code"
                  for output in cell.outputs)
    stored = sum("image/png" in output.get("data", {}) for cell in nbformat.read(path, as_version=4).cells
                 if cell.cell_type == "code" and "solution" not in cell.metadata.get("tags", [])
                 and "check" not in cell.metadata.get("tags", []) for output in cell.outputs)
    assert figures == stored, f"{figures} of the {stored} stored figures kept in the released notebook"
    score, maximum = _code_scores(course, assignment, path.stem, "teacher")
    assert maximum >= 1 and score == maximum, f"teacher edition: {score} of {maximum} on the code exercises"
    score, maximum = _code_scores(course, assignment, path.stem, "student")
    assert score == 0, f"unedited student edition: {score} of {maximum}, should be 0"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=[p.name[:2] for p in NOTEBOOKS[1:]])
def test_the_teacher_edition_under_autograde_prints_the_stored_outputs(tmp_path_factory, path):
    """nbgrader's run of the teacher edition, on the backend matrix's stand-in for it
    (tests/autograded_once.py), compared as nbval compares (tests/output_tolerance.py)."""
    course = autograded_once.course(tmp_path_factory, path)
    graded = nbformat.read(autograded_once.autograded(course, path, "teacher"), as_version=4)
    stored = [_as_graded(cell) for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    differences = output_tolerance.run_differences(stored, [cell.outputs for cell in graded.cells if cell.cell_type == "code"])
    assert not differences, f"{path.name} under nbgrader's autograde: outputs differ from the stored ones:\n" + "\n".join(differences)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS[1:], ids=[p.name[:2] for p in NOTEBOOKS[1:]])
def test_the_release_under_autograde_prints_the_stored_outputs_outside_the_exercises(tmp_path_factory, path):
    """nbgrader's run of the released notebook, whose exercises are stubs, on its stand-in
    (backend_matrix.RELEASE_IN_MAKE_TEST): every other code cell prints what the stored one does."""
    course = autograded_once.course(tmp_path_factory, path)
    ran = nbformat.read(autograded_once.autograded(course, path, "student"), as_version=4)
    stored = [_outside_the_exercises(cell) for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    differences = output_tolerance.run_differences(stored, [cell.outputs for cell in ran.cells if cell.cell_type == "code"])
    assert not differences, (f"{path.name}'s release under nbgrader's autograde, on {backend_matrix.RELEASE_IN_MAKE_TEST.name}: "
                             "outputs differ from the stored ones:\n" + "\n".join(differences))


@pytest.mark.slow
@pytest.mark.parametrize("backend", list(autograded_once.STAND_INS.values()),
                         ids=[f"{NOTEBOOKS[0].name[:2]}-{b.name}" for b in autograded_once.STAND_INS.values()])
def test_notebook_00_prints_the_stored_outputs_on_the_stand_ins_of_nbgraders_runs(tmp_path, backend):
    """Notebook 00 has no exercises, so nbgrader leaves it out (test_notebook_00_is_no_assignment):
    without this run no CI run would check its stored outputs on these two stand-ins."""
    notebook = nbformat.read(NOTEBOOKS[0], as_version=4)
    autograded_once.on_stand_in(notebook_client(notebook, tmp_path, timeout=600).execute, backend)
    stored = [cell for cell in nbformat.read(NOTEBOOKS[0], as_version=4).cells if cell.cell_type == "code"]
    differences = output_tolerance.run_differences(stored, [cell.outputs for cell in notebook.cells if cell.cell_type == "code"])
    assert not differences, (f"{NOTEBOOKS[0].name} on {backend.name}: outputs differ from the stored ones:\n"
                             + "\n".join(differences))


def test_a_release_is_compared_outside_the_exercises_only():
    cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": [tag]}) for tag in ("solution", "check", "setup")]
    assert [output_tolerance.compared(_outside_the_exercises(cell)) for cell in cells] == [False, False, True]


def _outside_the_exercises(cell):
    """A stored code cell, left out of the comparison if it is an exercise's (its solution or check)."""
    if {build_student_edition.SOLUTION, build_student_edition.CHECK} & set(cell.metadata.get("tags", [])):
        cell.metadata["tags"] = [*cell.metadata["tags"], "nbval-ignore-output"]
    return cell


def _as_graded(cell):
    """A stored cell as the nbgrader edition shows it: a check's verdict wrapped (graded())."""
    if "check" in cell.metadata.get("tags", []):
        for output in cell.outputs:
            if "text/plain" in output.get("data", {}):
                output.data["text/plain"] = grading.wrap(output_tolerance.joined_text(output.data["text/plain"]))
    return cell
