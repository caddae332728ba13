#!/usr/bin/env python
"""Print, for every exercise of the course, what its checker does with the reference
solution and with each recorded wrong answer, and exit non-zero if any check fails.

    python -m scripts.exercises_report      # or: make exercises-report

The exercises are those listed in ``CASES`` in tests/test_exercises_*.py (see
tests/exercise_support.py). One block per exercise:

    Exercise 01.1: the residual forward  [01-residual_forward]
      ✓ reference passes
      ✓ branch only: "... you returned F(x), the branch alone. A residual block adds ..."

A line starts with ✗ when the reference fails, when a wrong answer passes or gets a
message without its recorded fragment, or when an exercise has fewer than three wrong
answers with distinct messages.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

from tests import exercise_support

TESTS = Path(__file__).resolve().parent.parent / "tests"
WORDS = 12  # how much of each message to show


def _first_words(text: str, count: int = WORDS) -> str:
    words = text.split()
    return " ".join(words[:count]) + (" ..." if len(words) > count else "")


def _naming_words(message: str, fragment: str) -> str:
    """The first words of the sentence of ``message`` that holds ``fragment`` (where the
    message names the mistake, after the input it was found on); the message's own first
    words when the fragment is not in it."""
    at = message.find(fragment)
    if at < 0:
        return _first_words(message)
    start = max(message.rfind(": ", 0, at), message.rfind(". ", 0, at))
    return ("... " if start > 0 else "") + _first_words(message[start + 2 if start > 0 else 0:])


def load_cases() -> list:
    """Every ``ExerciseCases`` in the ``CASES`` of tests/test_exercises_*.py, in file order."""
    cases = []
    for path in sorted(TESTS.glob("test_exercises_*.py")):
        cases.extend(getattr(importlib.import_module(f"tests.{path.stem}"), "CASES", []))
    return cases


def report(cases) -> tuple[list[str], int]:
    """The report's lines and the number of failed checks."""
    lines, failures = [], 0
    for case in cases:
        lines.append(f"{case.exercise.title}  [{case.id}]")
        try:
            feedback = case.exercise.check(exercise_support.reference_answer(case.notebook, case.name))
            ok, text = feedback.passed, "" if feedback.passed else f": {_first_words(feedback.message)}"
        except Exception as error:  # a missing notebook or solution cell
            ok, text = False, f": {type(error).__name__}: {error}"
        failures += not ok
        lines.append(f"  {'✓' if ok else '✗'} reference {'passes' if ok else 'fails'}{text}")
        for label, source, fragment in case.wrong:
            try:
                feedback = case.exercise.check(exercise_support.recorded_answer(source, case.name))
                ok = not feedback.passed and fragment in feedback.message
                text = _naming_words(feedback.message, fragment)
                if feedback.passed:
                    text = "PASSED although it is wrong"
                elif not ok:
                    text += f'  (expected a message with "{fragment}")'
            except Exception as error:
                ok, text = False, f"{type(error).__name__}: {error}"
            failures += not ok
            lines.append(f"  {'✓' if ok else '✗'} {label}: \"{text}\"")
        fragments = {fragment for _, _, fragment in case.wrong}
        minimum = exercise_support.MINIMUM_WRONG_ANSWERS
        if len(case.wrong) < minimum or len(fragments) < len(case.wrong):
            failures += 1
            lines.append(f"  ✗ needs at least {minimum} wrong answers with distinct messages "
                         f"(has {len(case.wrong)}, {len(fragments)} distinct)")
    return lines, failures


def main() -> int:
    cases = load_cases()
    lines, failures = report(cases)
    print("\n".join(lines))
    wrong = sum(len(case.wrong) for case in cases)
    print(f"\n{len(cases)} exercises, {wrong} recorded wrong answers: "
          + ("every check passes." if not failures else f"{failures} check(s) FAILED."))
    return 1 if failures or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
