"""Shared test machinery for the exercise checkers.

Each ``tests/test_exercises_<topic>.py`` lists its exercises as :class:`ExerciseCases`:
the exercise, the notebook and name of the reference solution (the code between
``# BEGIN SOLUTION`` and ``# END SOLUTION`` in the notebook's cells tagged ``solution``),
and at least three recorded wrong answers, each with a fragment of the message the
checker must give for it. ``reference_passes`` and ``wrong_answers_are_caught`` turn that
list into parametrized tests, so every exercise is checked the same way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as functional
from torch import nn

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
MINIMUM_WRONG_ANSWERS = 3


@dataclass(frozen=True)
class ExerciseCases:
    """An exercise with its reference (read from the notebook) and recorded wrong answers:
    ``wrong`` holds ``(label, source, message_fragment)`` triples."""
    exercise: object
    notebook: str
    name: str
    wrong: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.notebook[:2]}-{self.name}"


def _namespace() -> dict:
    """What a solution cell may use without importing it."""
    return {"np": np, "torch": torch, "nn": nn, "F": functional, "math": math}


def solution_sources(notebook: str) -> list[str]:
    """The sources of the notebook's cells tagged ``solution``, in order."""
    cells = nbformat.read(NOTEBOOKS / notebook, as_version=4).cells
    return ["".join(c.source) for c in cells if "solution" in c.get("metadata", {}).get("tags", [])]


def reference_answer(notebook: str, name: str):
    """The object called ``name`` that the notebook's solution cells define."""
    namespace = _namespace()
    for source in solution_sources(notebook):
        exec(compile(source, f"{notebook}:solution", "exec"), namespace)
    if name not in namespace:
        raise LookupError(f"no solution cell of {notebook} defines {name!r}")
    return namespace[name]


def recorded_answer(source: str, name: str):
    """The object called ``name`` that a recorded (wrong) answer's source defines."""
    namespace = _namespace()
    exec(compile(source, "<recorded answer>", "exec"), namespace)
    return namespace[name]


def reference_passes(cases: list[ExerciseCases]):
    """A test: the notebook's own solution passes its checker."""
    @pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])
    def test_reference_solution_passes(case):
        feedback = case.exercise.check(reference_answer(case.notebook, case.name))
        assert feedback.passed, str(feedback)
    return test_reference_solution_passes


def wrong_answers_are_caught(cases: list[ExerciseCases]):
    """A test per recorded wrong answer: the checker fails it with that answer's own message,
    and names the mistake by a key (Feedback.mistake) the class report counts."""
    triples = [(c, label, source, fragment) for c in cases for label, source, fragment in c.wrong]
    ids = [f"{c.id}-{label}" for c, label, _, _ in triples]

    @pytest.mark.parametrize("case, label, source, fragment", triples, ids=ids)
    def test_wrong_answer_is_caught_with_its_own_message(case, label, source, fragment):
        feedback = case.exercise.check(recorded_answer(source, case.name))
        assert not feedback.passed, f"{label}: passed, but it is wrong"
        assert fragment in feedback.message, f"{label}: {feedback.message}"
        assert feedback.mistake or not feedback.attempted, (f"{label}: this mistake has no key, so the class report cannot count it. Give "
                                  "the Mistake that says it a key (Mistake(message, key=\"...\")), or its entry "
                                  "in expect_close's mistakes a third item, the key.")
    return test_wrong_answer_is_caught_with_its_own_message


def enough_wrong_answers(cases: list[ExerciseCases]):
    """A test: every exercise has at least three recorded wrong answers, each with a different message."""
    @pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])
    def test_exercise_has_three_distinct_wrong_answers(case):
        fragments = {fragment for _, _, fragment in case.wrong}
        assert len(case.wrong) >= MINIMUM_WRONG_ANSWERS and len(fragments) == len(case.wrong)
    return test_exercise_has_three_distinct_wrong_answers
