"""Code exercises with checkers that explain the first thing that is wrong.

Each notebook's exercises live in a module of this package named after the notebook's
topic. An exercise is an :class:`~utils.exercises.core.Exercise`: ``check(answer)``
runs the learner's code on several inputs and returns :class:`~utils.exercises.core.Feedback`,
``hint()`` shows the next hint. See ``core`` for how to write one.
"""
from utils.exercises.core import Exercise, Feedback, Mistake

__all__ = ["Exercise", "Feedback", "Mistake"]
