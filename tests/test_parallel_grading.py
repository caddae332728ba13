"""make autograde's jobs, several at once: notebook 01 of four students (right, a wrong answer,
right, a notebook that kills its kernel) graded by nbgrader alone, one notebook at a time, then
by make autograde with two workers; the scores must be the same, the failed notebook named, the
others graded. Also: one assignment chosen, and bad input said in words (no nbgrader needed)."""
from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import nbformat
import pytest

from scripts import autograde, feedback
from tests.test_grading import ASSIGNMENT, NOTEBOOK, answered, code_score, one_assignment_course, right_and_wrong_answers

KILLS_ITS_KERNEL = "import os\nos._exit(1)"  # nbgrader cannot grade this one: its kernel dies


def _submit(course: Path, student: str, answers: list[str]) -> None:
    """``student``'s notebook 01, the released one with ``answers`` in its solution cells."""
    target = course / "submitted" / student / ASSIGNMENT / NOTEBOOK
    target.parent.mkdir(parents=True)
    released = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    nbformat.write(answered(released, answers), target)


def _forget_the_grading(course: Path, students) -> None:
    """No autograded notebook and no score left: what the next run finds, it wrote."""
    from nbgrader.api import Gradebook

    shutil.rmtree(course / "autograded")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in students:
            gradebook.remove_submission(ASSIGNMENT, student)


@pytest.fixture(scope="module")
def graded_both_ways(tmp_path_factory):
    """Scores per student from nbgrader alone and from make autograde --workers 2 (after eve's
    notebook, which kills its kernel, joined), with what the command printed and returned."""
    course = one_assignment_course(tmp_path_factory.mktemp("parallel") / "course")
    right, wrong = right_and_wrong_answers()
    for student, answers in (("alice", right), ("bob", wrong), ("carol", right)):
        _submit(course, student, answers)
    autograde.run_nbgrader(course, "autograde", ASSIGNMENT, "--force")  # one process, one notebook at a time
    alone = {student: code_score(course, student) for student in ("alice", "bob", "carol")}
    _forget_the_grading(course, ("alice", "bob", "carol"))
    _submit(course, "eve", [KILLS_ITS_KERNEL])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = autograde.main(["--course", str(course), "--workers", "2"])
    together = {student: code_score(course, student) for student in ("alice", "bob", "carol")}
    return {"course": course, "alone": alone, "together": together, "status": status, "out": out.getvalue(),
            "err": err.getvalue()}


@pytest.mark.slow
def test_two_workers_give_the_scores_of_one_notebook_at_a_time(graded_both_ways):
    assert graded_both_ways["alone"] == {"alice": (2, 2), "bob": (1, 2), "carol": (2, 2)}  # bob: 01.1 without the ReLU
    assert graded_both_ways["together"] == graded_both_ways["alone"]
    for student in ("alice", "bob", "carol"):
        assert (graded_both_ways["course"] / "autograded" / student / ASSIGNMENT / NOTEBOOK).is_file()


@pytest.mark.slow
def test_each_notebook_says_when_it_starts(graded_both_ways):
    lines = graded_both_ways["out"].splitlines()
    assert [line.split(": ")[0] for line in lines] == [f"autograding {k}/4" for k in range(1, 5)]
    assert sorted(line.split(": ", 1)[1] for line in lines) == [f"{student}, {ASSIGNMENT}"
                                                                 for student in ("alice", "bob", "carol", "eve")]


@pytest.mark.slow
def test_a_failed_notebook_is_named_and_the_command_fails_after_the_others(graded_both_ways):
    assert graded_both_ways["status"] == 1
    first_line = graded_both_ways["err"].splitlines()[0]
    assert first_line == (f"make autograde: 1 of 4 notebooks were not graded (eve, {ASSIGNMENT}); the other 3 are. "
                          "nbgrader said:")
    assert "Kernel died" in graded_both_ways["err"]
    assert not (graded_both_ways["course"] / "autograded" / "eve" / ASSIGNMENT).exists()  # nbgrader removed it


def _fake_course(root: Path) -> Path:
    """Two assignments of two students, their notebooks unreadable (nothing here runs nbgrader)."""
    for assignment in ("01_first", "02_second"):
        (root / "source" / assignment).mkdir(parents=True)
        for student in ("alice", "bob"):
            path = root / "submitted" / student / assignment / f"{assignment}.ipynb"
            path.parent.mkdir(parents=True)
            path.write_text("not a notebook")
    return root


def test_one_assignment_is_every_students_notebook_of_it_only(tmp_path):
    course = _fake_course(tmp_path)
    chosen = autograde.submitted_notebooks(course, "02_second")
    assert [(path.parent.parent.name, path.parent.name) for path in chosen] == [("alice", "02_second"),
                                                                                 ("bob", "02_second")]
    assert len(autograde.submitted_notebooks(course)) == 4
    # a notebook nbgrader would grade wrongly is refused only when its assignment is graded
    assert len(autograde.refusals(chosen)) == 2 and all("/02_second/" in line for line in autograde.refusals(chosen))


@pytest.mark.parametrize("arguments, sentence", [
    (["--assignment", "05_nope"], "make autograde: there is no assignment '05_nope' in the course {course}; "
                                  "there are: 01_first, 02_second"),
    (["--workers", "0"], "make autograde: workers must be a whole number, at least 1 (how many notebooks run at once), "
                         "got 0"),
])
def test_bad_input_gets_a_sentence_and_nothing_runs(tmp_path, capsys, arguments, sentence):
    course = _fake_course(tmp_path)
    assert autograde.main(["--course", str(course), *arguments]) == 1
    assert capsys.readouterr().err.strip() == sentence.format(course=course.resolve())
    assert not (course / "autograded").exists()


def test_feedback_for_an_assignment_nobody_was_graded_on_says_which_there_are(tmp_path):
    graded = tmp_path / "autograded" / "alice" / "01_first" / "01_first.ipynb"
    graded.parent.mkdir(parents=True)
    graded.write_text("{}")
    with pytest.raises(ValueError, match=r"no assignment '02_second' in the autograded notebooks of .*; there are: 01_first"):
        feedback.generate(tmp_path, "02_second")


def test_the_grading_benchmark_reports_the_jobs_cost_and_gain():
    from benchmarks.grading import report

    rows = [{"notebook": "05_a.ipynb", "students": 6, "way": way, "wall": wall, "cpu": cpu, "load": 1.0}
            for way, wall, cpu in (("nbgrader alone (one process, one notebook at a time)", 60.0, 48.0),
                                   ("make autograde WORKERS=1", 72.0, 60.0), ("make autograde WORKERS=2", 36.0, 60.0))]
    section = report(rows, "2026-12-06 01:00 UTC", 2)
    assert "| 05_a.ipynb | make autograde WORKERS=2 | 6 | 36 | 60 | 10.0 | 3.0 | 1.0 |" in section
    assert "05_a.ipynb: one job per notebook cost 2.0 CPU-s more per student than nbgrader alone" in section
    assert "05_a.ipynb: WORKERS=2 took 0.50 times the wall time of WORKERS=1." in section
