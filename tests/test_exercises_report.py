"""scripts/exercises_report.py: one block per exercise, a ✗ and a non-zero count for any
check that fails (a reference that fails, a wrong answer that passes or gets another
message, too few wrong answers)."""
from scripts import exercises_report
from tests import exercise_support
from tests.exercise_support import ExerciseCases
from utils.exercises import Exercise, Mistake


def _checks(answer):
    if answer(2) != 4:
        raise Mistake("you did not double 2: the answer is twice the input")
    return "doubles."


DOUBLE = Exercise("Exercise 00.1: double", _checks, ["Multiply by two."])
WRONG = [("identity", "def double(x):\n    return x\n", "you did not double"),
         ("square", "def double(x):\n    return x * x + 1\n", "twice the input"),
         ("triple", "def double(x):\n    return 3 * x\n", "did not double 2")]


def test_a_sound_exercise_gets_only_ticks(monkeypatch):
    monkeypatch.setattr(exercise_support, "reference_answer", lambda notebook, name: lambda x: 2 * x)
    lines, failures = exercises_report.report([ExerciseCases(DOUBLE, "00_x.ipynb", "double", wrong=WRONG)])
    assert failures == 0
    assert lines[0] == "Exercise 00.1: double  [00-double]" and lines[1] == "  ✓ reference passes"
    assert lines[2] == '  ✓ identity: "you did not double 2: the answer is twice the input"'
    assert lines[3].startswith('  ✓ square: "... the answer is twice the input')
    assert len(lines) == 5


def test_every_kind_of_failure_is_counted_and_marked(monkeypatch):
    monkeypatch.setattr(exercise_support, "reference_answer", lambda notebook, name: lambda x: x)
    wrong = [("passes", "def double(x):\n    return x + x\n", "anything"),
             ("other message", "def double(x):\n    return x\n", "a fragment it does not say")]
    lines, failures = exercises_report.report([ExerciseCases(DOUBLE, "00_x.ipynb", "double", wrong=wrong)])
    assert failures == 4  # the reference, two wrong answers, too few of them
    assert lines[1].startswith("  ✗ reference fails: you did not double 2")
    assert lines[2] == '  ✗ passes: "PASSED although it is wrong"'
    assert 'expected a message with "a fragment it does not say"' in lines[3]
    assert lines[4].startswith("  ✗ needs at least 3 wrong answers")


def test_the_course_cases_are_found_in_the_test_files():
    cases = exercises_report.load_cases()
    titles = [case.exercise.title for case in cases]
    assert "Exercise 01.1: the residual forward" in titles and "Exercise 02.2: the logarithm of a deep stack's slope" in titles
