"""A check cell as nbgrader grades it: the verdict shown in whole, wrapped lines, with a
machine-readable record of it, and, only while nbgrader runs the notebook, an exception when
the check did not pass.

The notebooks the hub hands out (scripts/build_nbgrader.py, ``release_notebook``) end each
check cell with ``graded(ex.<name>.check(<answer>))``. For the learner it shows the verdict
like a plain check and never stops *Run All*. nbgrader's autograder sets NBGRADER_EXECUTION;
then a verdict that did not pass raises :class:`NotPassed`, since nbgrader scores a test
cell 0 only when it raises. Its traceback is one line, so the feedback page shows the
checker's words rather than a stack of frames. The record (:data:`RECORD_TYPE`, an output
type no front end draws) is what scripts/class_report.py counts.
"""
from __future__ import annotations

import os
import textwrap

from utils.exercises.core import Feedback

RECORD_TYPE = "application/vnd.residual-course.check+json"
WIDTH = 88  # characters a line: the feedback page and a narrow notebook show every word


class NotPassed(Exception):
    """The check did not pass (raised only under nbgrader): the cell scores 0."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback: this one sentence."""
        return [str(self)]


def wrapped(feedback: Feedback, width: int = WIDTH) -> str:
    """The verdict's text in lines of at most ``width`` characters (continuation lines
    indented), every word kept."""
    return wrap(str(feedback), width)


def wrap(text: str, width: int = WIDTH) -> str:
    """``text`` as :func:`wrapped` shows a verdict's."""
    return "\n".join(textwrap.fill(line, width, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False) for line in text.splitlines())


def record(feedback: Feedback) -> dict:
    """What the class report reads: the exercise's number and title, whether it passed, whether
    it was attempted, and the mistake's key ("" when there is none). Never the learner's code."""
    return {"exercise": feedback.number, "title": feedback.exercise, "passed": feedback.passed,
            "attempted": feedback.attempted, "mistake": feedback.mistake}


def graded(feedback: Feedback) -> None:
    """Show ``feedback`` (wrapped) with its record; under nbgrader raise :class:`NotPassed`
    when it did not pass."""
    if not isinstance(feedback, Feedback):
        raise TypeError(f"graded() takes the result of a check, ex.<name>.check(answer), got {type(feedback).__name__}")
    from IPython import get_ipython
    from IPython.display import display

    text = wrapped(feedback)
    if get_ipython() is None:
        print(text)
    else:
        display({"text/plain": text, RECORD_TYPE: record(feedback)}, raw=True)
    if os.environ.get("NBGRADER_EXECUTION") and not feedback.passed:
        raise NotPassed("0 points for this check: " + ("it was not done." if not feedback.attempted
                                                       else "the verdict above says what to change."))
