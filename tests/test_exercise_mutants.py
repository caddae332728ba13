"""scripts/exercise_mutants.py: it makes the mutants it promises, flags a checker that
accepts a mutant changing the result, and the course's fast checkers reject all of theirs."""
import itertools

import numpy as np
import pytest

from scripts import exercise_mutants, exercises_report
from tests.exercise_support import ExerciseCases
from utils.exercises import Exercise, Mistake

SOLUTION = """def spread(x, w):
    # BEGIN SOLUTION
    centred = x - x.mean(axis=-1)
    return w @ centred.T + (x > 0).sum() * -1.5
    # END SOLUTION
"""


def test_every_operator_makes_its_mutant():
    labels = [mutant.label for mutant in exercise_mutants.mutants(SOLUTION, torch=True)]
    text = "\n".join(labels)
    for fragment in ("flip the operator in `x - x.mean(axis=-1)`", "drop `x.mean(axis=-1)` from",
                     "swap the operands of `w @ centred.T`", "transpose the left operand of `w @ centred.T`",
                     "change the constant 0 to 1", "change the comparison in `x > 0`", "drop the minus",
                     "reduce over another axis in `x.mean(axis=-1)`", "sum instead of mean", "detach `x.mean(axis=-1)`"):
        assert fragment in text, fragment
    assert all(label.startswith(("line 3:", "line 4:")) for label in labels)  # only the learner's lines


def test_a_checker_that_accepts_a_mutant_fails_the_report(monkeypatch):
    def weak_checks(answer):  # only looks at the sign: `x`, the mutant without the 2, passes
        if not np.all(answer(np.array([1.0, 3.0])) > 0):
            raise Mistake("the sign is wrong")
        return "positive."

    source = "def double(x):\n    # BEGIN SOLUTION\n    return 2 * x\n    # END SOLUTION\n"
    monkeypatch.setattr(exercise_mutants, "_solution_cell", lambda notebook, name: ([source], 0))
    case = ExerciseCases(Exercise("Exercise 00.1: double", weak_checks, ["Multiply by two."]), "00_x.ipynb", "double")
    lines, failures = exercise_mutants.report([case])
    assert failures >= 1
    assert any("ACCEPTED although it changes the result: line 3: drop `2` from `2 * x`" in line for line in lines)
    assert lines[1].startswith("✗ Exercise 00.1: double")


FAST = [case for case in exercises_report.load_cases() if case.notebook[:2] in ("01", "02", "03", "09")
        and case.name != "delete_block"]


@pytest.mark.parametrize("case", FAST, ids=[case.id for case in FAST])
def test_the_course_checkers_reject_every_mutant_that_changes_the_result(case):
    row = exercise_mutants.run_case(case)
    assert row["made"] > 0 and row["accepted"] == []


def test_how_many_mutants_a_budget_allows_is_decided_on_the_clock_given():
    case = next(case for case in FAST if case.id == "03-finite_difference_jacobian")  # 21 mutants, quick
    every = exercise_mutants.run_case(case)["made"]
    readings = itertools.count(0.0, 100.0)  # one check seems to take 100 s, however fast it is
    assert exercise_mutants.run_case(case, budget=3.0, clock=lambda: next(readings))["made"] == 6 < every
    instant = itertools.repeat(0.0)  # or no time at all: every mutant fits
    assert exercise_mutants.run_case(case, budget=3.0, clock=lambda: next(instant))["made"] == every
