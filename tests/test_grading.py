"""The hub joined to grading, without a hub: two students' homes hold notebook 01 as the hub
publishes it, one with the reference solutions, one with recorded wrong answers; make
collect, autograde, feedback and class-report run on them (nbgrader for real, on notebook 01
only). Also: a student-edition notebook without nbgrader's metadata is refused, the check
cell's record and NotPassed, the opt-in log, publish's commit message and update-report."""
from __future__ import annotations

import copy
import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from scripts import autograde, build_nbgrader, class_report, collect_submissions, feedback, update_report
from scripts import publish_student_edition as publish
from scripts.build_student_edition import student_notebook
from tests.exercise_support import solution_sources
from tests.test_exercises_block_by_hand import CASES
from utils.exercises import attempts
from utils.exercises.grading import RECORD_TYPE, NotPassed, graded, record

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "01_residual_block_by_hand.ipynb"
ASSIGNMENT = NOTEBOOK.removesuffix(".ipynb")
NBGRADER = Path(sys.executable).parent / "nbgrader"


def _wrong(name: str, label: str) -> str:
    """The source of a recorded wrong answer of notebook 01 (tests/test_exercises_block_by_hand.py)."""
    case = next(c for c in CASES if c.name == name)
    return next(source for recorded, source, _ in case.wrong if recorded == label)


def answered(notebook, answers: list[str] | None):
    """``notebook`` with its solution cells replaced by ``answers`` (a new object)."""
    notebook = copy.deepcopy(notebook)
    cells = [cell for cell in notebook.cells if "solution" in cell.metadata.get("tags", [])]
    for cell, answer in zip(cells, answers or []):
        cell.source = answer
    return notebook


def right_and_wrong_answers() -> tuple[list[str], list[str]]:
    """Notebook 01's answers for alice (the reference solutions) and for bob (01.1 without the
    ReLU, 01.2 right): 2 / 2 and 1 / 2, one mistake ``no-relu``."""
    right = solution_sources(NOTEBOOK)
    return right, [_wrong("residual_forward", "no ReLU"), right[1]]


def _home(homes: Path, student: str, notebook, answers: list[str] | None) -> Path:
    """A student's home with ``notebook`` (its solution cells replaced by ``answers``)."""
    folder = homes / student / "residual-course" / "notebooks"
    folder.mkdir(parents=True)
    nbformat.write(answered(notebook, answers), folder / NOTEBOOK)
    return folder.parent


def one_assignment_course(course: Path) -> Path:
    """The nbgrader course of notebook 01 alone, released, as make nbgrader writes it."""
    if not NBGRADER.is_file():
        pytest.fail(f"nbgrader is not installed in {NBGRADER.parent}: pip install -r requirements.txt")
    build_nbgrader.build(course)
    for other in (course / "source").iterdir():
        if other.name != ASSIGNMENT:
            shutil.rmtree(other)
    autograde.run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    return course


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The course of notebook 01 with alice (right) and bob (01.1 without the ReLU, 01.2 right,
    an opt-in log) collected, autograded, with feedback and a class report."""
    root = tmp_path_factory.mktemp("grading")
    course = one_assignment_course(root / "course")
    publish.build_hub_edition(root / "published")  # what `make publish` commits for nbgitpuller
    hub = nbformat.read(root / "published" / "notebooks" / NOTEBOOK, as_version=4)
    homes = root / "homes"
    right, wrong = right_and_wrong_answers()
    _home(homes, "alice", hub, right)
    bob = _home(homes, "bob", hub, wrong)
    log = [{"exercise": "01.1", "passed": False, "attempted": True, "mistake": "branch-only"},
           {"exercise": "01.1", "passed": False, "attempted": True, "mistake": "no-relu"},
           {"exercise": "01.2", "passed": True, "attempted": True, "mistake": ""}]
    (bob / attempts.LOG_NAME).write_text("".join(json.dumps(line) + "\n" for line in log))
    (homes / "dave").mkdir()  # logged in, but has no copy of the course yet; carol never logged in
    collected = collect_submissions.collect(homes, course, students=["alice", "bob", "carol", "dave"])
    progress = []
    graded_assignments = autograde.autograde(course, progress=progress.append)
    pages = feedback.generate(course)
    counted = class_report.report(course, root / "report")
    return {"root": root, "course": course, "collected": collected, "graded": graded_assignments, "pages": pages,
            "counted": counted, "progress": progress}


def code_score(course: Path, student: str) -> tuple[float, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        submitted = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        checks = [grade for grade in submitted.grades if grade.cell.cell_type == "code"]
        return sum(grade.score for grade in checks), sum(grade.max_score for grade in checks)


@pytest.mark.slow
def test_collect_brings_every_students_notebook_and_log(graded_class):
    collected = graded_class["collected"]
    assert sorted(path.parent.parent.name for path in collected.copied) == ["alice", "bob"]
    assert not collected.refused
    assert [path.name for path in collected.logs] == ["bob.jsonl"]
    assert graded_class["graded"] == [ASSIGNMENT]


@pytest.mark.slow
def test_collect_names_the_students_it_found_nothing_of(graded_class):
    missing = graded_class["collected"].missing
    assert missing == {"carol": "never logged in", "dave": "no notebooks yet"}
    assert collect_submissions.not_collected(missing) == ["not collected (never logged in): carol",
                                                          "not collected (no notebooks yet): dave"]


@pytest.mark.slow
def test_autograde_says_which_notebook_it_is_at(graded_class):
    lines = graded_class["progress"]  # a line as each of the two submitted notebooks starts
    assert [line.split(": ")[0] for line in lines] == ["autograding 1/2", "autograding 2/2"]
    assert sorted(line.split(": ", 1)[1] for line in lines) == [f"alice, {ASSIGNMENT}", f"bob, {ASSIGNMENT}"]


@pytest.mark.slow
def test_the_class_report_goes_into_the_course_unless_told(graded_class, capsys):
    course = graded_class["course"]
    assert class_report.main(["--course", str(course)]) == 0
    assert capsys.readouterr().out.strip() == f"class report of 2 exercises: {course / 'class-report' / 'index.html'}"
    assert (course / "class-report" / "class-report.csv").is_file()
    assert course.stat().st_mode & 0o777 == 0o700, "a course outside the hub is closed to other users"


@pytest.mark.slow
def test_autograde_gives_full_marks_and_the_right_partial_score(graded_class):
    assert code_score(graded_class["course"], "alice") == (2, 2)
    assert code_score(graded_class["course"], "bob") == (1, 2)


@pytest.mark.slow
def test_the_class_report_counts_exactly_the_mistakes_put_in(graded_class):
    counted = graded_class["counted"]
    assert {number: dict(entry.outcomes) for number, entry in counted.items()} == {
        "01.1": {"passed": ["alice"], "no-relu": ["bob"]}, "01.2": {"passed": ["alice", "bob"]}}
    assert counted["01.2"].checks_before_passing == [0]
    with (graded_class["root"] / "report" / "class-report.csv").open() as handle:
        rows = [(row["exercise"], row["outcome"], row["students"]) for row in csv.DictReader(handle)]
    assert ("01.1", "no-relu", "1") in rows and ("01.1", "passed", "1") in rows and ("01.2", "passed", "2") in rows
    page = (graded_class["root"] / "report" / "index.html").read_text()
    assert "01.1/no-relu" in page and "data:image/png;base64," in page
    assert "alice" not in page and "bob" not in page  # anonymous unless asked


@pytest.mark.slow
def test_feedback_shows_the_message_whole_with_scores_apart_and_local_mathjax(graded_class):
    page = next(p for p in graded_class["pages"] if p.parts[-3] == "bob").read_text()
    assert "Code exercises: 1 / 2" in page and "Written answers: not answered" in page
    assert "the ReLU is missing" in page and "0 points for this check" in page
    assert "Traceback (most recent call last)" not in page and "AssertionError" not in page
    assert "cdnjs" not in page and '<script src="../mathjax/tex-svg-full.js">' in page
    assert (graded_class["course"] / "feedback" / "bob" / "mathjax" / "tex-svg-full.js").is_file()
    alice = next(p for p in graded_class["pages"] if p.parts[-3] == "alice").read_text()
    assert "Code exercises: 2 / 2 (every check ✓)" in re.sub(r"<[^>]+>", "", alice)


def test_a_student_edition_notebook_without_metadata_is_refused(tmp_path):
    teacher = nbformat.read(ROOT / "notebooks" / NOTEBOOK, as_version=4)
    course = tmp_path / "course"
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    _home(tmp_path / "homes", "carol", student_notebook(teacher, "01"), None)
    collected = collect_submissions.collect(tmp_path / "homes", course)
    assert not collected.copied and len(collected.refused) == 1
    assert collected.refused[0].startswith("carol: ") and "no nbgrader grade cells" in collected.refused[0]
    target = course / "submitted" / "carol" / ASSIGNMENT / NOTEBOOK  # copied by hand: autograde refuses it
    target.parent.mkdir(parents=True)
    shutil.copy(tmp_path / "homes" / "carol" / "residual-course" / "notebooks" / NOTEBOOK, target)
    with pytest.raises(autograde.Refused, match="nothing was graded.*no nbgrader grade cells"):
        autograde.autograde(course)
    assert not (course / "autograded").exists()


def test_make_nbgrader_says_in_words_when_it_may_not_write_the_course(monkeypatch, capsys):
    def refused(out):
        raise PermissionError(13, "Permission denied", "/var/lib/residual-course-classroom")

    monkeypatch.setattr(build_nbgrader, "build_and_release", refused)
    assert build_nbgrader.main([]) == 1
    said = capsys.readouterr().err
    assert said.startswith("make nbgrader: cannot write /var/lib/residual-course-classroom: ") and "CLASSROOM_STATE" in said


def test_the_hub_edition_carries_the_grade_cells_and_no_solution(tmp_path):
    publish.build_hub_edition(tmp_path / "hub")
    first = nbformat.read(tmp_path / "hub" / "notebooks" / NOTEBOOK, as_version=4)
    assert build_nbgrader.grade_ids(first) == ["nb01_check_1", "nb01_check_2", "nb01_answer_1"]
    assert "# BEGIN SOLUTION" not in nbformat.writes(first) and "Exercise 01.1: write your code here" in \
        nbformat.writes(first)
    assert not build_nbgrader.grade_ids(nbformat.read(tmp_path / "hub" / "notebooks" / "00_start_here.ipynb",
                                                       as_version=4))


def test_graded_shows_a_record_and_raises_only_under_nbgrader(monkeypatch, capsys):
    from utils.exercises import block_by_hand as ex

    verdict = ex.residual_forward.check(lambda x, w1, w2: x + w2 @ (w1 @ x))
    assert record(verdict) == {"exercise": "01.1", "title": "Exercise 01.1: the residual forward", "passed": False,
                               "attempted": True, "mistake": "no-relu"}
    assert verdict.key == "01.1/no-relu" and RECORD_TYPE.startswith("application/")
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    graded(verdict)
    printed = capsys.readouterr().out
    assert "the ReLU is missing" in printed and max(map(len, printed.splitlines())) <= 88
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(NotPassed) as raised:
        graded(verdict)
    assert raised.value._render_traceback_() == ["0 points for this check: the verdict above says what to change."]
    with pytest.raises(TypeError, match="result of a check"):
        graded("✓")


def test_the_log_of_checks_is_written_only_after_opting_in(tmp_path, capsys):
    from utils.exercises import block_by_hand as ex

    (tmp_path / "notebooks").mkdir()
    here = tmp_path / "notebooks"
    verdict = ex.residual_forward.check(lambda x, w1, w2: x)
    attempts.note(verdict, here)
    assert not (tmp_path / attempts.LOG_NAME).exists()
    assert attempts.opt_in(here) == tmp_path / attempts.LOG_NAME
    attempts.note(verdict, here)
    line = json.loads((tmp_path / attempts.LOG_NAME).read_text())
    assert set(line) == {"exercise", "passed", "attempted", "mistake", "time"} and line["mistake"] == "term-missing"
    attempts.opt_out(here)
    attempts.note(verdict, here)
    assert not (tmp_path / attempts.LOG_NAME).exists()
    capsys.readouterr()


def _git(repo: Path, *args: str) -> str:
    return publish.git(repo, *args)


def test_publish_says_what_changed_and_update_report_finds_who_lacks_it(tmp_path):
    repo = tmp_path / "edition.git"
    publish.publish(repo)
    assert "first publish" in _git(repo, "log", "-1", "--format=%s")
    homes = tmp_path / "homes"
    for student in ("alice", "bob"):
        subprocess.run(["git", "clone", "--quiet", str(repo), str(homes / student / "residual-course")], check=True)
    path = repo / "notebooks" / NOTEBOOK
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "markdown" and "Exercise 01.1" in c.source)
    cell.source += "\n\nA sentence the teacher added during the term."
    nbformat.write(notebook, path)
    _git(repo, "add", "--all")
    message = publish.publish_message(repo, "abc1234")
    assert message.splitlines()[0] == f"Publish {NOTEBOOK}"
    assert f"- notebooks/{NOTEBOOK}: 1 cell changed" in message
    _git(repo, "commit", "--quiet", "-m", message)
    fix = _git(repo, "rev-parse", "HEAD")
    subprocess.run(["git", "-C", str(homes / "alice" / "residual-course"), "pull", "--quiet"], check=True)
    lacking = update_report.update_report(fix, homes, repo)
    assert list(lacking) == ["bob"] and lacking["bob"][0].startswith(f"notebooks/{NOTEBOOK}: ")
    assert "lines the fix added are not there" in lacking["bob"][0]
