"""The machinery every exercise checker shares.

A checker is a plain function ``checks(answer) -> str`` that runs the learner's
``answer`` through :func:`call`, compares results with :func:`expect_close` (naming the
common mistakes it recognises) and raises :class:`Mistake` at the first problem; it
returns a one-line summary of what was right. :class:`Exercise` wraps it so that
nothing a learner hands in (``None``, a string, a function that raises or edits its
input in place, an unfinished stub) ever escapes as a traceback: every case becomes a
:class:`Feedback` with a message in plain words. Checkers compute the right answer
themselves and never print it, nor any reference code.
"""
from __future__ import annotations

import copy
import inspect
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from utils.validation import check_int

NOT_DONE = "not done yet"


class Mistake(Exception):
    """Raised by a checker at the first problem it finds; the message is for the learner."""


@dataclass(frozen=True)
class Feedback:
    """What a checker says: whether the answer passed, and why in words."""
    exercise: str
    passed: bool
    message: str
    attempted: bool = True

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        if self.passed:
            return f"✓ {self.exercise}: correct. {self.message}"
        if not self.attempted:
            return f"… {self.exercise}: {NOT_DONE}. {self.message}"
        return f"✗ {self.exercise}: not yet. {self.message}"

    __repr__ = __str__


class Exercise:
    """One exercise: a title, a checker, and hints revealed one level at a time."""

    def __init__(self, title: str, checks: Callable[[object], str], hints: Sequence[str]):
        if not isinstance(title, str) or not title.strip():
            raise TypeError(f"title must be a non-empty string, got {title!r}")
        if not callable(checks):
            raise TypeError(f"checks must be a function, got {type(checks).__name__}")
        if isinstance(hints, str) or not all(isinstance(h, str) and h.strip() for h in hints) or not hints:
            raise TypeError("hints must be a non-empty list of non-empty strings")
        self.title = title
        self._checks = checks
        self._hints = tuple(hints)
        self._hints_shown = 0

    def check(self, answer) -> Feedback:
        """Run the checker on ``answer``; never raises, whatever ``answer`` is."""
        try:
            summary = self._checks(answer)
        except NotImplementedError:
            return Feedback(self.title, False, "Replace the `raise NotImplementedError` line with your code, "
                            "run that cell, then run this one again.", attempted=False)
        except Mistake as mistake:
            return Feedback(self.title, False, str(mistake))
        except Exception as error:  # a checker bug must not look like the learner's fault
            return Feedback(self.title, False, f"the checker could not finish ({type(error).__name__}: {error}). "
                            "Check that your answer has the form the exercise asks for.")
        return Feedback(self.title, True, summary)

    def hint(self) -> None:
        """Print the next hint (the last one again once all have been shown). It prints
        rather than returns, so a notebook shows it once, not also as a quoted string."""
        level = min(self._hints_shown, len(self._hints) - 1)
        self._hints_shown = level + 1
        print(f"Hint {level + 1} of {len(self._hints)} for {self.title}: {self._hints[level]}")

    def __repr__(self) -> str:
        return f"Exercise({self.title!r}: .check(your_answer), .hint())"


def require_function(answer, name: str, parameters: int) -> Callable:
    """``answer`` must be a function taking ``parameters`` positional arguments."""
    if answer is None:
        raise Mistake(f"got None instead of your function `{name}`. Pass the function itself: "
                      f"`.check({name})`, and check that its cell was run.")
    # A torch model is callable too, but a checker that expects a function has been handed the
    # result of calling it (torch is imported already if the answer is a torch object).
    torch = sys.modules.get("torch")
    if not callable(answer) or (torch is not None and isinstance(answer, torch.nn.Module)):
        raise Mistake(f"got a {type(answer).__name__} instead of a function. Pass the function itself, "
                      f"`.check({name})`, not its result `{name}(...)`.")
    try:
        signature = inspect.signature(answer)
    except (TypeError, ValueError):
        return answer
    try:
        signature.bind(*range(parameters))
    except TypeError:
        raise Mistake(f"`{name}` should take {parameters} argument(s), but its signature is "
                      f"{name}{signature}.") from None
    return answer


def call(answer: Callable, *args, name: str, shown: str):
    """Call the learner's function on copies of ``args``; turn any exception, or an edit
    of an input in place, into a :class:`Mistake` that says on which input (``shown``)."""
    copies = copy.deepcopy(args)
    try:
        result = answer(*copies)
    except NotImplementedError:
        raise
    except Mistake:
        raise
    except Exception as error:
        raise Mistake(f"`{name}` raised {type(error).__name__} ({error}) when called with {shown}.") from None
    for position, (original, passed) in enumerate(zip(args, copies)):
        if not _same(original, passed):  # values first: `x += f` also switches requires_grad on
            if hasattr(original, "state_dict") and hasattr(original, "modules"):  # a torch model
                raise Mistake(f"`{name}` changed the model you were given in place (its blocks, weights or BatchNorm "
                              f"statistics) when called with {shown}: work on `copy.deepcopy(model)`.")
            raise Mistake(f"`{name}` changed its argument number {position + 1} in place when called with "
                          f"{shown}. Compute a new value instead (for example `x + f` rather than `x += f`): "
                          "the caller still needs its input.")
        flag = getattr(original, "requires_grad", None)
        if isinstance(flag, bool) and flag != getattr(passed, "requires_grad", flag):
            raise Mistake(f"`{name}` switched {'off' if flag else 'on'} requires_grad of its argument number "
                          f"{position + 1} when called with {shown}. Work on a copy (for example "
                          "x.detach().clone().requires_grad_(True)): the caller's tensor must stay as it was.")
    if result is None:
        raise Mistake(f"`{name}` returned None when called with {shown}. Did you forget `return`?")
    return result


def as_array(value, name: str, shown: str) -> np.ndarray:
    """The learner's result as a float64 NumPy array (a torch tensor is detached first)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise Mistake(f"`{name}` returned a {type(value).__name__} for {shown}; it should return numbers "
                      "(an array).") from None
    return array


_LOW_PRECISION = ("float32", "float16", "bfloat16")


def expect_float64(value, *, what: str, shown: str, why: str) -> None:
    """A float32 (or float16) array or tensor gets its own message: the formula may be right,
    and "wrong values, work through one entry by hand" would send the learner hunting."""
    kind = str(getattr(value, "dtype", "")).removeprefix("torch.")
    if kind in _LOW_PRECISION:
        raise Mistake(f"{what} for {shown} is {kind}: keep it in float64. {why}")


def expect_close(got, want, *, name: str, shown: str, mistakes=(), rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """``got`` must equal ``want`` (shape, then values). Before saying "wrong values",
    compare ``got`` with each ``(wrong_value, explanation)`` in ``mistakes``: the first that
    matches names the learner's mistake."""
    got = as_array(got, name, shown)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        for wrong, explanation in mistakes:
            wrong = np.asarray(wrong, dtype=np.float64)
            if wrong.shape == got.shape and np.allclose(got, wrong, rtol=rtol, atol=atol):
                raise Mistake(f"for {shown}: {explanation}")
        raise Mistake(f"`{name}` returned shape {got.shape} for {shown}; expected shape {want.shape}.")
    if np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return
    for wrong, explanation in mistakes:
        wrong = np.asarray(wrong, dtype=np.float64)
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=rtol, atol=atol, equal_nan=True):
            raise Mistake(f"for {shown}: {explanation}")
    if not np.all(np.isfinite(got)):
        raise Mistake(f"`{name}` returned NaN or infinity for {shown}; the right result is finite.")
    worst = float(np.max(np.abs(got - want)))
    raise Mistake(f"`{name}` gives wrong values for {shown}: it is off by up to {worst:.3g}. "
                  "Work through one entry by hand and compare.")


def show_input(value) -> str:
    """An exercise input as the learner sees it in a message: small arrays in full, big ones by
    shape (unlike validation.describe, which names a bad argument in an error)."""
    array = np.asarray(value.detach() if hasattr(value, "detach") else value, dtype=np.float64)
    if array.size > 6:
        return f"an array of shape {tuple(array.shape)}"

    def text(item):
        return "[" + ", ".join(text(i) for i in item) + "]" if isinstance(item, list) else f"{item:.4g}"
    return text(array.tolist())


def cases_from_seed(seed: int, count: int, make: Callable[[np.random.Generator], tuple]) -> list[tuple]:
    """``count`` reproducible random test inputs, each built by ``make(rng)``."""
    seed = check_int("seed", seed, minimum=0)
    count = check_int("count", count, minimum=1, maximum=100)
    rng = np.random.default_rng(seed)
    return [make(rng) for _ in range(count)]


def _same(a, b) -> bool:
    """Whether an argument still equals the copy taken before the learner's call."""
    if hasattr(a, "state_dict") and hasattr(b, "state_dict"):  # a torch module: compare its weights
        first, second = a.state_dict(), b.state_dict()
        return first.keys() == second.keys() and all(_same(first[k], second[k]) for k in first)
    if hasattr(a, "detach") and hasattr(b, "detach"):
        a, b = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (int, float, complex, str, bytes, tuple, list, dict, type(None))):
        try:
            return bool(a == b)
        except Exception:
            return False
    return True  # other objects: nothing this checker can compare
