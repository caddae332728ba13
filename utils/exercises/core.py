"""The machinery every exercise checker shares.

A checker is a plain function ``checks(answer) -> str`` that runs the learner's
``answer`` through :func:`call`, compares results with :func:`expect_close` (naming the
common mistakes it recognises) and raises :class:`Mistake` at the first problem; it
returns a one-line summary of what was right. :class:`Exercise` wraps it so that
nothing a learner hands in (``None``, a string, a function that raises, loops for ever,
prints a flood or edits its input or the global state, an unfinished stub) ever escapes as
a traceback or a frozen cell: every case becomes a :class:`Feedback` with a message in
plain words. Checkers compute the right answer themselves and never print it, nor any
reference code.

A new exercise module needs only :func:`require_function`, :func:`call` (every call of
the learner's code, so it is timed, guarded and checked for edits in place),
:func:`expect_close` (it names mistakes by their shape: sign, constant factor, transpose,
last entry only, rounding) and, for torch answers, :func:`expect_gradients`.
"""
from __future__ import annotations

import contextlib
import copy
import inspect
import io
import os
import random
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from utils.exercises import attempts
from utils.validation import check_int

NOT_DONE = "not done yet"


def _time_limit_setting(environ=os.environ) -> float:
    """Seconds one call of the learner's code may take: 20 (the course's answers need well under
    1 s), or COURSE_TIME_LIMIT where it is set. The tests set it far higher for themselves and
    their kernels (conftest.py), so a right answer slowed by a loaded machine is never a timeout."""
    text = environ.get("COURSE_TIME_LIMIT", "20")
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise ValueError(f"COURSE_TIME_LIMIT must be a number of seconds above 0, got {text!r}")
    return seconds


TIME_LIMIT = _time_limit_setting()
CHECK_TIME_LIMIT = 300.0  # a backstop for a whole check, for learner code a checker runs outside `call`
STUB_TEXT = "write your code here"  # the student edition's stub: raise NotImplementedError("Exercise NN.k: ...")
SHOWN_OUTPUT = 400  # characters of the learner's printing shown after the verdict
OTHER_EPS = (1e-8, 1e-7, 1e-6, 1e-4, 1e-3, 1e-2, 0.1, 1.0)  # what learners put for LayerNorm's eps instead of 1e-5
_NOTES: list[str] = []  # what a right answer should still know, said after the ✓ (see call)
_RETURNED_ARGUMENT: list[str] = []  # an answer that hands back its own input: said if nothing else was wrong
GRADIENTS_LEFT = ("One thing to know: your code left gradients in the `.grad` of the weights of the model it was "
                  "given (`loss.backward()` does that). Harmless here, but a training loop that does not zero them "
                  "would add them to its next step; `torch.autograd.grad(loss, inputs)` computes only what you ask "
                  "for and leaves `.grad` alone.")


_KEY = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class Mistake(Exception):
    """Raised by a checker at the first problem it finds. The message is for the learner; the
    key names the mistake for the teacher (lowercase words joined by hyphens, such as
    ``frozen-gate``): it stays the same when the message is reworded, so a class's mistakes
    can be counted across notebooks and terms (scripts/class_report.py)."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        if key is not None and not (isinstance(key, str) and _KEY.fullmatch(key)):
            raise ValueError(f"a mistake's key is lowercase words joined by hyphens, got {key!r}")
        self.key = key


@dataclass(frozen=True)
class Feedback:
    """What a checker says: whether the answer passed, and why in words."""
    exercise: str
    passed: bool
    message: str
    attempted: bool = True
    printed: str = ""  # what the learner's code printed during the check, shortened
    mistake: str = ""  # the key of the mistake found (Mistake.key), "" when it passed or has none

    @property
    def number(self) -> str:
        """The exercise's number, "05.2" for "Exercise 05.2: ..." (the whole title otherwise)."""
        match = re.match(r"Exercise\s+([\w.]+?)\s*:", self.exercise)
        return match.group(1) if match else self.exercise

    @property
    def key(self) -> str:
        """The mistake's key with its exercise, "05.2/frozen-gate" ("" without a mistake key)."""
        return f"{self.number}/{self.mistake}" if self.mistake else ""

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        if self.passed:
            text = f"✓ {self.exercise}: correct. {self.message}"
        elif not self.attempted:
            text = f"… {self.exercise}: {NOT_DONE}. {self.message}"
        else:
            text = f"✗ {self.exercise}: not yet. {self.message}"
        return text + (f"\n  Your code printed during the check: {self.printed}" if self.printed else "")

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
        """Run the checker on ``answer``; never raises, whatever ``answer`` is. What the
        learner's code prints is captured and shown shortened after the verdict; global
        state it changes (NumPy's error handling, torch's grad mode and default dtype, the
        random generators) is put back as it was. A learner who opted in to the log of
        checks (:mod:`utils.exercises.attempts`) gets a line added to it."""
        feedback = self._verdict(answer)
        attempts.note(feedback)
        return feedback

    def _verdict(self, answer) -> Feedback:
        printed = _Captured()
        try:
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed), \
                    _state_kept(), _time_limit(CHECK_TIME_LIMIT):
                _clean_start()
                _NOTES.clear()
                _RETURNED_ARGUMENT.clear()
                summary = self._checks(answer)
        except _TimeUp:
            return Feedback(self.title, False, f"the check was still running after {CHECK_TIME_LIMIT:g} s, so it "
                            "stopped. Look for a loop in your code that never ends.", printed=printed.shortened(),
                            mistake="too-slow")
        except NotImplementedError as error:
            if _is_stub(error):
                return Feedback(self.title, False, "Replace the `raise NotImplementedError` line with your code, "
                                "run that cell, then run this one again.", attempted=False,
                                printed=printed.shortened())
            return Feedback(self.title, False, _not_implemented(error, "your code", "the check's input"),
                            printed=printed.shortened(), mistake="not-implemented")
        except Mistake as mistake:
            message = str(mistake)
            if "still running after" in message and printed.total > 100 * SHOWN_OUTPUT:
                message += (f" Your code printed {printed.total:,} characters meanwhile, and printing that much "
                            "takes time itself: take the print out of the loop.")
            return Feedback(self.title, False, message, printed=printed.shortened(), mistake=mistake.key or "")
        except Exception as error:  # a checker bug must not look like the learner's fault
            return Feedback(self.title, False, f"the checker could not finish ({type(error).__name__}: {error}). "
                            "Check that your answer has the form the exercise asks for.",
                            printed=printed.shortened(), mistake="checker-error")
        if _RETURNED_ARGUMENT:
            return Feedback(self.title, False, _RETURNED_ARGUMENT[0], printed=printed.shortened(),
                            mistake="returned-input")
        return Feedback(self.title, True, " ".join([summary, *dict.fromkeys(_NOTES)]), printed=printed.shortened())

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
                      f"`.check({name})`, and check that its cell was run.", key="none-passed")
    # A torch model is callable too, but a checker that expects a function has been handed the
    # result of calling it (torch is imported already if the answer is a torch object).
    torch = sys.modules.get("torch")
    if not callable(answer) or (torch is not None and isinstance(answer, torch.nn.Module)):
        raise Mistake(f"got a {type(answer).__name__} instead of a function. Pass the function itself, "
                      f"`.check({name})`, not its result `{name}(...)`.", key="not-a-function")
    try:
        signature = inspect.signature(answer)
    except (TypeError, ValueError):
        return answer
    try:
        signature.bind(*range(parameters))
    except TypeError:
        raise Mistake(f"`{name}` should take {parameters} argument(s), but its signature is "
                      f"{name}{signature}.", key="signature") from None
    return answer


def call(answer: Callable, *args, name: str, shown: str, copies: bool = True, time_limit: float | None = None,
         handed: list | None = None):
    """Call the learner's function on copies of ``args``; turn any exception, an edit of
    an input in place, or a call that runs past ``time_limit`` seconds into a
    :class:`Mistake` that says on which input (``shown``). Global state the call changes
    is put back. ``copies=False`` passes ``args`` themselves (for a gradient check, whose
    leaves must be the ones the learner's result is built from; no in-place check then).
    ``handed``, a list, receives the arguments as passed (to see what a result shares with them)."""
    passed = copy.deepcopy(args) if copies else args
    arguments = passed
    if handed is not None:
        handed.extend(arguments)
    time_limit = TIME_LIMIT if time_limit is None else time_limit
    try:
        with _state_kept(), _time_limit(time_limit):
            before = _switches()
            result = answer(*arguments)
            _NOTES.extend(f"One thing to know: your function {change} and left it so. The check put it back, but "
                          "in your notebook every later cell would run that way: undo it before returning, or use "
                          "a `with` block (`torch.no_grad()`, `np.errstate(...)`)." for change in _changes(before))
    except _TimeUp:
        raise Mistake(f"`{name}` was still running after {time_limit:g} s when called with {shown}, so the check "
                      "stopped it. Look for a loop that never ends (a `while` whose condition stays true) or far "
                      "more work than the task needs.", key="too-slow") from None
    except NotImplementedError as error:
        if _is_stub(error):
            raise
        raise Mistake(_not_implemented(error, f"`{name}`", shown), key="not-implemented") from None
    except Mistake:
        raise
    except SystemExit:
        raise Mistake(f"`{name}` called exit() when called with {shown}; return a value instead.", key="exit") from None
    except Exception as error:
        if isinstance(error, FloatingPointError):
            raise Mistake(f"`{name}` raised FloatingPointError ({error}) when called with {shown}: NumPy was told "
                          "to stop at floating-point errors (`np.seterr(all=\"raise\")` or `np.errstate`), and "
                          "this input makes one on purpose (a product that underflows to 0 or overflows). Leave "
                          "NumPy's error handling at its default.", key="np-seterr") from None
        if "does not require grad and does not have a grad_fn" in str(error):
            raise Mistake(f"`{name}` asked autograd for a gradient of a result it never recorded, when called with "
                          f"{shown}: the computation ran under `torch.no_grad()` or `torch.set_grad_enabled(False)`, "
                          "or from tensors cut off with `.detach()`. Compute the loss with autograd recording.",
                          key="no-grad-recorded") from None
        if "numpy() on Tensor that requires grad" in str(error):
            raise Mistake(f"`{name}` turned a tensor that tracks gradients into NumPy (`.numpy()`) when called with "
                          f"{shown}. Autograd cannot follow a detour through NumPy, so no gradient would flow back: "
                          "stay with torch operations.", key="numpy-detour") from None
        raise Mistake(f"`{name}` raised {type(error).__name__} ({error}) when called with {shown}.",
        key="raised-error") from None
    for position, (original, passed) in enumerate(zip(args, passed) if copies else ()):
        given = _parameter_name(answer, position)
        argument = f"`{given}`" if given else f"number {position + 1}"
        if not _same(original, passed):  # values first: `x += f` also switches requires_grad on
            if hasattr(original, "state_dict") and hasattr(original, "modules"):  # a torch model
                raise Mistake(f"`{name}` changed the model you were given in place (its blocks, weights, their dtype, "
                              "its train/eval mode or BatchNorm "
                              f"statistics) when called with {shown}: work on `copy.deepcopy({given or 'model'})`.",
                              key="model-changed-in-place")
            raise Mistake(f"`{name}` changed its argument {argument} in place when called with "
                          f"{shown}. Compute a new value instead (for example `a + b` rather than `a += b`): "
                          "the caller still needs its input." + (" (Putting an entry back afterwards is not "
                          "enough: x + h - 2h + h is not exactly x once rounded.)" if _put_back(original, passed)
                          else ""), key="in-place")
        after = _named_parameters(passed)
        if any(p.grad is not None for p in after.values()) and \
                all(p.grad is None for p in _named_parameters(original).values()):
            _NOTES.append(GRADIENTS_LEFT)
        frozen = [n for n, p in _named_parameters(original).items()
                  if p.requires_grad and n in after and not after[n].requires_grad]
        if frozen:
            raise Mistake(f"`{name}` switched off requires_grad of `{frozen[0]}` of the model you were given when "
                          f"called with {shown}: the caller's model could no longer train. Leave requires_grad as it "
                          "was: gradients reach the input without freezing any weight.", key="froze-weights")
        flag = getattr(original, "requires_grad", None)
        if isinstance(flag, bool) and flag != getattr(passed, "requires_grad", flag):
            raise Mistake(f"`{name}` switched {'off' if flag else 'on'} requires_grad of its argument "
                          f"{argument} when called with {shown}. Work on a copy (for example "
                          "x.detach().clone().requires_grad_(True)): the caller's tensor must stay as it was.",
                          key="requires-grad-switched")
    if result is None:
        raise Mistake(f"`{name}` returned None when called with {shown}. Did you forget `return`?", key="returned-none")
    for position, argument in enumerate(arguments):  # wrong only once the values are right: see Exercise.check
        if (isinstance(argument, np.ndarray) or hasattr(argument, "data_ptr")) and result is argument:
            given = _parameter_name(answer, position)
            _RETURNED_ARGUMENT.append(
                f"the values are right, but `{name}` returned its argument "
                f"{f'`{given}`' if given else f'number {position + 1}'} itself when called with {shown}. Return a new "
                "array or tensor (for example `x.clone()` or `x.copy()`), so that changing the result later cannot "
                "change the caller's input.")
    return result


def _switches() -> dict:
    """The global switches an answer may flip: NumPy's error handling, torch's grad mode and
    default dtype."""
    torch = sys.modules.get("torch")
    state = {"NumPy's error handling (np.seterr)": np.geterr()}
    if torch is not None:
        state["autograd (torch.set_grad_enabled)"] = torch.is_grad_enabled()
        state["torch's default dtype (torch.set_default_dtype)"] = torch.get_default_dtype()
    return state


def _changes(before: dict) -> list[str]:
    return [f"changed {what}" for what, value in _switches().items() if before[what] != value]


def as_array(value, name: str, shown: str) -> np.ndarray:
    """The learner's result as a float64 NumPy array (a torch tensor is detached first). A
    dict, or numbers that are not numbers, get a message that names what was returned."""
    if isinstance(value, dict):
        raise Mistake(f"`{name}` returned a dict (keys {_keys(value)}) for {shown}; return the numbers themselves, "
                      "as an array, a tensor or a list, in the order the task gives.", key="returned-dict")
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    if _holds_text(value):
        raise Mistake(f"`{name}` returned text (a string) for {shown}, not numbers: return the numbers themselves; "
                      "round or format them only when you print them.", key="returned-text")
    try:
        array = np.asarray(value)
        if array.dtype.kind == "c":
            raise Mistake(f"`{name}` returned complex numbers for {shown}; the task asks for real ones.", key="complex")
        array = array.astype(np.float64)
    except (TypeError, ValueError, RuntimeError):
        raise Mistake(f"`{name}` returned {describe_container(value)} for {shown}, not the real numbers the task "
                      "asks for.", key="not-numbers") from None
    return array


def _keys(value: dict) -> str:
    return ", ".join(repr(k) for k in list(value)[:4]) + (", ..." if len(value) > 4 else "")


def expect_float_list(value, *, name: str, shown: str) -> list[float]:
    """A result the task asks for as a list of Python floats, returned as one; a generator, a
    dict, a tensor or a list holding tensors is named plainly rather than converted."""
    if isinstance(value, dict):
        raise Mistake(f"`{name}` returned a dict (keys {_keys(value)}) for {shown}; return a list of Python floats, "
                      "in the order the task gives.", key="returned-dict")
    if not isinstance(value, (list, tuple)):
        hint = (" (a generator expression makes one: put it in square brackets, or inside list(...))"
                if inspect.isgenerator(value) else "")
        raise Mistake(f"`{name}` returned {describe_container(value)}{hint} for {shown}; return a list of "
                      "Python floats.", key="not-a-list")
    for i, item in enumerate(value):
        if item is None:
            raise Mistake(f"item {i} of the list `{name}` returned for {shown} is None. A gradient is None when the "
                          "loss does not depend on that tensor (`allow_unused=True` hides the error that would say "
                          "so): compute the loss from the tensor itself.", key="none-gradient")
        if not isinstance(item, (int, float, np.floating, np.integer)) or isinstance(item, bool):
            raise Mistake(f"item {i} of the list `{name}` returned for {shown} is {describe_container(item)}, not a "
                          "number: convert each value with float(...) before you append it.", key="not-a-number")
    return [float(item) for item in value]


def expect_new_model(got, given, *, shown: str) -> None:
    """A model the task asks to return as a new one, made from ``given`` (the model as handed to
    the answer, see :func:`call`'s ``handed``): every weight of the type, trainability and
    mode ``given`` had, its own tensor, and none shared with ``given``, so that training or
    changing one never moves the other."""
    before = dict(given.named_parameters())
    returned = list(got.named_parameters(remove_duplicate=False))
    for name, parameter in returned:
        if name in before and parameter.dtype != before[name].dtype:
            raise Mistake(f"for {shown}, `{name}` of the model you returned is {parameter.dtype}; the model you were "
                          f"given has {before[name].dtype}. Change what the task asks, not the weights' type (no "
                          "`.float()` or `.double()`).", key="dtype-changed")
        if not parameter.requires_grad:
            raise Mistake(f"for {shown}, `{name}` of the model you returned does not require a gradient, so training "
                          "could never change it: every weight must stay a trainable parameter (change weights in "
                          "place under torch.no_grad(); do not freeze them).", key="froze-weights")
    if len({id(parameter) for _, parameter in returned}) < len(returned):
        raise Mistake(f"for {shown}, several layers of the model you returned share one weight tensor, so training "
                      "would move them together. Give each layer its own weights (change each one in place).",
                      key="shared-weights")
    storage = {tensor.data_ptr() for tensor in [*given.parameters(), *given.buffers()] if tensor.numel()}
    shared = [name for name, tensor in [*returned, *got.named_buffers()] if tensor.numel() and
              tensor.data_ptr() in storage]
    if shared:
        raise Mistake(f"for {shown}, `{shared[0]}` of the model you returned is the very tensor of the model you were "
                      "given, so training or changing one would change the other. Start from "
                      "`copy.deepcopy(model)` and keep every part of the copy.", key="shares-given-weights")
    if got.training != given.training:
        mode = "training" if got.training else "eval"
        raise Mistake(f"for {shown}, the model you returned is in {mode} mode, the one you were given was not. "
                      "Leave the mode as it was: the caller chooses it.", key="mode-changed")


def other_dtype(module, dtype):
    """The first dtype among ``module``'s parameters other than ``dtype`` (None if all are it):
    an answer that retyped a model gets its own message, not a crash deep inside torch."""
    return next((p.dtype for p in module.parameters() if p.dtype != dtype), None)


def _holds_text(value) -> bool:
    """Whether a result is, or contains, strings: NumPy would turn "0.5" into 0.5 silently."""
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SUO" and any(_holds_text(item) for item in value.reshape(-1))
    return isinstance(value, (list, tuple)) and any(_holds_text(item) for item in value)


def describe_container(value) -> str:
    """What the learner returned, in words ("a tuple of 3 items", "an array of shape (3,)"),
    so that a wrong container is named plainly rather than shown as numbers."""
    if isinstance(value, (list, tuple, dict)):
        return f"a {type(value).__name__} of {len(value)} item{'s' * (len(value) != 1)}"
    if isinstance(value, np.ndarray) or hasattr(value, "detach"):
        return f"{'a tensor' if hasattr(value, 'detach') else 'an array'} of shape {tuple(value.shape)}"
    return f"a {type(value).__name__}"


_LOW_PRECISION = ("float32", "float16", "bfloat16")


def _dtype_name(value) -> str:
    return str(getattr(value, "dtype", "")).removeprefix("torch.")


def _keep_precision(precision: str) -> str:
    """How to stay in the task's precision, in words."""
    if precision == "float64":
        return "float64 (no `.float()`, `np.float32` or torch.tensor without dtype)"
    return (f"the task's {precision}, as its tensors and model are (no detour through float64 or NumPy, and "
            "no `.double()`)")


def expect_float64(value, *, what: str, shown: str, why: str) -> None:
    """A float32 (or float16) array or tensor gets its own message: the formula may be right,
    and "wrong values, work through one entry by hand" would send the learner hunting."""
    kind = _dtype_name(value)
    if kind in _LOW_PRECISION:
        raise Mistake(f"{what} for {shown} is {kind}: keep it in float64. {why}", key="float32")


def expect_close(got, want, *, name: str, shown: str, mistakes=(), rtol: float = 1e-6, atol: float = 1e-9,
                 terms=()) -> None:
    """``got`` must equal ``want`` (shape, then values). Before saying "wrong values",
    compare ``got`` with each ``(wrong_value, explanation, key)`` in ``mistakes`` (the key as
    :class:`Mistake` has it): the first that matches names the learner's mistake; then, if
    ``want`` is a sum of named ``terms``
    (``(words, value)`` pairs such as ``("the skip path x", x)``), a term left out or
    subtracted; then :func:`name_by_shape` names mistakes any exercise can make."""
    mistakes = list(mistakes) + _term_mistakes(want, terms)
    precision = _dtype_name(want) if _dtype_name(want) in _LOW_PRECISION else "float64"
    returned = got
    got = as_array(got, name, shown)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        for wrong, explanation, key in map(_keyed, mistakes):
            wrong = np.asarray(wrong, dtype=np.float64)
            if wrong.shape == got.shape and np.allclose(got, wrong, rtol=rtol, atol=atol):
                raise Mistake(f"for {shown}: {explanation}", key=key)
        if want.ndim >= 2 and got.shape == want.swapaxes(-1, -2).shape and \
                np.allclose(got, want.swapaxes(-1, -2), rtol=rtol, atol=atol):
            raise Mistake(f"for {shown}: `{name}` returned the transpose of the right result (shape {got.shape} "
                          f"instead of {want.shape}): rows and columns are swapped. Check the order of a matrix "
                          "product, or which index counts the rows.", key="transpose")
        if isinstance(returned, (list, tuple)) and len(returned) > 1 and all(
                np.shape(as_array(item, name, shown)) == want.shape for item in returned):
            raise Mistake(f"`{name}` returned {describe_container(returned)} for {shown}, each of the right shape "
                          f"{want.shape}: return one result (if they are parts of it, add them).",
                          key="parts-not-added")
        raise Mistake(f"`{name}` returned {describe_container(returned)} for {shown}; expected shape {want.shape}"
                      + (f" ({want.size} number{'s' * (want.size != 1)})." if want.ndim == 1 else
                         ": one number." if want.ndim == 0 else "."), key="shape")
    if np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return
    for wrong, explanation, key in map(_keyed, mistakes):
        wrong = np.asarray(wrong, dtype=np.float64)
        if wrong.shape == got.shape and np.allclose(got, wrong, rtol=rtol, atol=atol, equal_nan=True):
            raise Mistake(f"for {shown}: {explanation}", key=key)
    if not np.all(np.isfinite(got)) and np.all(np.isfinite(want)):
        where = "NaN" if np.isnan(got).any() else "infinity" if (got == np.inf).any() else "minus infinity"
        raise Mistake(f"`{name}` returned {where} for {shown}; the right result is finite. " + {
            "NaN": "NaN comes from 0 / 0, inf - inf or the log or square root of a negative number.",
            "infinity": "A value grew past float64's range (about 1e308) on the way, or something was divided by 0.",
            "minus infinity": "-inf comes from the log of 0 (a factor or value that is exactly 0), or from a value "
                              "that fell below -1e308."}[where], key="not-finite")
    shape = _shape_mistake(got, want, rtol=rtol, atol=atol, precision=precision)
    if shape is not None:
        raise Mistake(f"for {shown}: {shape[0]}", key=shape[1])
    worst = float(np.max(np.abs(got - want)))
    if want.size == 1:
        raise Mistake(f"`{name}` gives {float(got.reshape(-1)[0]):.6g} for {shown}, which is not the right "
                      "value. Check the formula one step at a time.", key="wrong-value")
    raise Mistake(f"`{name}` gives wrong values for {shown}: it is off by up to {worst:.3g}. "
                  "Work through one entry by hand and compare.", key="wrong-values")


def _keyed(mistake: tuple) -> tuple:
    """A ``mistakes`` entry of :func:`expect_close` as (value, explanation, key); an entry
    without a key gets None, which tests/exercise_support.py reports for a recorded answer."""
    return tuple(mistake) if len(mistake) == 3 else (*mistake, None)


def _term_mistakes(want, terms) -> list[tuple]:
    """The wrong results of leaving out, or subtracting, each term of a sum."""
    want = np.asarray(as_array(want, "", ""), dtype=np.float64)
    found = []
    for words, value in terms:
        value = as_array(value, "", "")
        if not np.any(value):
            continue
        found.append((want - value, f"{words} is missing: the result is a sum, and this term is not in yours.",
                      "term-missing"))
        found.append((want - 2 * value, f"{words} is subtracted; it must be added.", "term-subtracted"))
    return found


def _ratio_name(ratio: float, want: np.ndarray) -> str:
    """A constant factor in words, when it is one the course's mistakes make: 2, a size, its
    square root, or their inverses."""
    sizes = {f"{n}, the size of an axis": float(n) for n in sorted(set(want.shape)) if n > 1}
    sizes.update({f"sqrt({n}), the square root of an axis's size": float(n) ** 0.5
                  for n in sorted(set(want.shape)) if n > 1})
    sizes[f"{want.size}, the number of entries"] = float(want.size)
    for words, factor in [("2", 2.0), *sizes.items()]:
        for candidate, text in ((factor, words), (1 / factor, f"1 / {words}")):
            if abs(abs(ratio) - candidate) <= 1e-6 * candidate:
                return f" ({'minus ' if ratio < 0 else ''}{text})"
    return ""


def name_by_shape(got: np.ndarray, want: np.ndarray, *, rtol: float = 1e-6, atol: float = 1e-9,
                  precision: str = "float64") -> str | None:
    """What a wrong result of the right shape is, by its shape alone, in a sentence (None if
    nothing fits): the exact negative, a constant factor, a constant offset, the transpose,
    the right numbers in reverse order, only the last entry right, or a difference at the
    level of rounding (for a task computed in ``precision``)."""
    found = _shape_mistake(got, want, rtol=rtol, atol=atol, precision=precision)
    return None if found is None else found[0]


def _shape_mistake(got, want, *, rtol: float, atol: float, precision: str) -> tuple[str, str] | None:
    """:func:`name_by_shape`'s sentence with its mistake's key: (sentence, key)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or not np.all(np.isfinite(got)) or not np.all(np.isfinite(want)):
        return None

    def close(a, b):
        return np.allclose(a, b, rtol=rtol, atol=atol)

    scale = float(np.max(np.abs(want))) if want.size else 0.0
    worst = float(np.max(np.abs(got - want))) if want.size else 0.0
    if scale > atol and close(got, -want):
        return ("your result is the exact negative of the right one: a sign is flipped (a minus where a plus "
                "belongs, or a difference taken the wrong way round)."), "sign"
    if want.ndim >= 2 and want.shape[-1] == want.shape[-2] and close(got, want.swapaxes(-1, -2)):
        return ("your result is the transpose of the right one: rows and columns are swapped. Check the order of a "
                "matrix product, or which index counts the rows."), "transpose"
    if want.ndim == 1 and want.size > 1 and not close(want, want[::-1]) and close(got, want[::-1]):
        return ("your numbers are the right ones in reverse order: the first entry must come first (check the "
                "order of your loop, or a list built from the end or reversed)."), "reversed"
    for decimals in range(8, -1 if scale >= 1 else 0, -1):  # the most decimals that fit; 0 only for whole-sized
        rounded = np.round(want, decimals)
        if worst > 0 and not np.allclose(rounded, want, rtol=0, atol=1e-9) and np.allclose(got, rounded, rtol=0,
                                                                                              atol=1e-9):
            return (f"your result is the right one rounded to {decimals} decimal{'s' * (decimals != 1)}: return it "
                    "unrounded, and round only when you print."), "rounded"
    if worst <= 1e-4 * max(scale, 1.0):
        return (f"your result differs from the right one only at the level of rounding (by up to {worst:.2g}): "
                "the formula looks right, but some step ran in lower precision, with a slightly different "
                "constant, or the result was rounded. Keep every step in " + _keep_precision(precision) + ", use the "
                "constants exactly as the task gives them, and round only when you print."), "precision"
    usable = np.abs(want) > 1e-12 * max(scale, 1e-300)
    if want.size > 1 and usable.any() and scale > atol:  # for one number, any wrong value is "a factor"
        ratios = got[usable] / want[usable]
        ratio = float(np.median(ratios))
        if ratio != 0 and close(got, ratio * want) and abs(ratio - 1) > 1e-4:
            return (f"your result is {ratio:.6g} times the right one everywhere{_ratio_name(ratio, want)}: the "
                    "formula is right up to a constant factor. Look for a wrong divisor or multiplier (a mean "
                    "instead of a sum, a missing or extra 2, n or square root)."), "factor"
    if scale > atol and float(np.max(np.abs(got))) > 1e3 * scale:
        return (f"your result is about {float(np.max(np.abs(got))) / scale:.0e} times larger than the right one: a "
                "difference of two nearly equal numbers that should cancel does not (a + where a - belongs, or one "
                "of its terms left out), or a small number divides where it should not."), "cancellation"
    if want.size > 1 and np.all(got == got.reshape(-1)[0]) and not np.all(want == want.reshape(-1)[0]):
        return (f"every entry of your result is the same number, {got.reshape(-1)[0]:.4g}, but the right entries "
                "differ: a loop that never updates its value, or one number spread over the whole result."), "constant"
    if want.size > 1:
        offset = float(np.median(got - want))
        if abs(offset) > atol and close(got - offset, want):
            return (f"every entry of your result is off by the same amount, {offset:.4g}: a constant term is "
                    "missing or extra (a bias, a + 1, or a mean not subtracted)."), "offset"
        flat_got, flat_want = got.reshape(-1), want.reshape(-1)
        if close(flat_got[-1:], flat_want[-1:]) and not np.isclose(flat_got[:-1], flat_want[:-1], rtol=rtol,
                                                                    atol=atol).any():
            return ("only the last entry of your result is right. Check that each step of a loop writes its own "
                    "entry (result[i] = ...) instead of overwriting one value, and that the return comes after "
                    "the loop."), "last-only"
    return None


GATE_WHY = ("A gate or scale that gets no gradient can never learn: training would leave it at its starting "
            "value for good.")
INPUT_WHY = ("The gradient at the input is what flows on to every earlier layer: without it nothing below this "
             "block learns.")
WEIGHT_WHY = "A weight that gets no gradient is never updated by training."


def expect_gradients(got, want, leaves: dict, *, name: str, shown: str, rtol: float = 1e-6,
                     atol: float = 1e-9) -> None:
    """The learner's torch output ``got`` and the reference ``want`` were computed, with grad
    mode on, from the same tensors ``leaves`` (``{what to call it: (tensor, why its gradient
    matters)}``). Backpropagate the same fixed random projection of each and compare the
    gradients that reach every leaf: a right value with a cut graph (``.item()``,
    ``.detach()``, ``.data``, ``torch.tensor(x)``) passes a value check but could not train."""
    torch = sys.modules["torch"]
    names = list(leaves)
    tensors = [leaves[n][0] for n in names]
    for what, tensor in zip(names, tensors):
        if not tensor.requires_grad:
            raise Mistake(f"for {shown}: {what} does not require a gradient (requires_grad is False), so no "
                          f"gradient can reach it and training could never change it. {leaves[what][1]}",
                          key="no-requires-grad")
    projection = torch.randn(tuple(want.shape), generator=torch.Generator().manual_seed(0), dtype=want.dtype)
    if not isinstance(got, torch.Tensor):
        raise Mistake(f"for {shown}: `{name}` returned {describe_container(got)}. Return a torch tensor: "
                      "gradients flow back only through tensors that autograd built.", key="not-a-tensor")
    with torch.enable_grad():
        wanted = torch.autograd.grad((want * projection).sum(), tensors, allow_unused=True, retain_graph=True)
        if not got.requires_grad:
            found = [None] * len(tensors)
        else:
            try:
                found = torch.autograd.grad((got.to(want.dtype) * projection).sum(), tensors, allow_unused=True,
                                            retain_graph=True)
            except RuntimeError as error:
                raise Mistake(f"for {shown}: your output has the right values, but backpropagating through it "
                              f"fails ({error}). Compute new tensors instead of changing one in place.",
                              key="backward-fails") from None
    cut = ("the part of your computation that uses it is cut from autograd's graph (by `.item()`, `float(...)`, "
           "`.detach()`, `.data`, `torch.tensor(...)` or `nn.Parameter(...)` of a tensor, `torch.no_grad()`, "
           "`torch.set_grad_enabled(False)`, or a detour through NumPy), or passes through `torch.round`, whose "
           "slope is 0 everywhere")
    wanted = [torch.zeros_like(t) if g is None else g for t, g in zip(tensors, wanted)]
    found = [torch.zeros_like(t) if g is None else g.to(t.dtype) for t, g in zip(tensors, found)]
    for what, right, mine in zip(names, wanted, found):  # a tensor cut off entirely says most
        if not bool(mine.abs().max() > 0) and bool(right.abs().max() > 0):
            if not got.requires_grad:  # the whole result left the graph: name the usual causes first, briefly
                raise Mistake(f"for {shown}: `{name}` gives the right values, but no gradient reaches {what} through "
                              "them: your result as a whole is cut from autograd's graph (its requires_grad is "
                              "False), as `.detach()`, `torch.no_grad()`, `.item()` or a detour through NumPy do. "
                              f"Return the tensor your torch operations computed. {leaves[what][1]}",
                              key="gradient-cut")
            raise Mistake(f"for {shown}: `{name}` gives the right values, but no gradient reaches {what} through "
                          f"them: {cut}; or, if nothing is cut, your formula's slope with respect to it is 0 here "
                          f"(abs() or ReLU of a gate at 0 has none): use it directly. {leaves[what][1]}",
                          key="gradient-cut")
    for what, right, mine in zip(names, wanted, found):
        why = leaves[what][1]
        if not torch.allclose(mine, right, rtol=rtol, atol=atol):
            worst = float((mine - right).abs().max())
            if worst <= 1e-4 * max(float(right.abs().max()), 1.0):
                precision = _dtype_name(want)
                raise Mistake(f"for {shown}: `{name}` gives the right values here, and the gradient with respect to "
                              f"{what} differs only at the level of rounding (by up to {worst:.2g}): some step ran in "
                              f"another precision than the task's {precision}. Keep every step in "
                              f"{_keep_precision(precision)}. {why}", key="gradient-precision")
            raise Mistake(f"for {shown}: `{name}` gives the right values here, but the gradient with respect to "
                          f"{what} is off by up to {worst:.3g}. Either part of the way from {what} to the output "
                          "is cut from autograd's graph (`.detach()`, `.data`, `.item()`, `torch.no_grad()`, a "
                          "copy made with torch.tensor), or your formula is another function that happens to agree "
                          f"with the task's on these inputs: compare it with the task's, term by term. {why}",
                          key="gradient-wrong")


def parameter_leaves(module, prefix: str = "") -> dict:
    """Every parameter of a torch module as a leaf for :func:`expect_gradients`: a
    one-number parameter (not a bias) is a gate, the others are weights."""
    def why(name, parameter):
        return GATE_WHY if parameter.numel() == 1 and not name.endswith("bias") else WEIGHT_WHY
    return {f"`{prefix}{name}`": (parameter, why(name, parameter))
            for name, parameter in module.named_parameters()}


def show_input(value) -> str:
    """An exercise input as the learner sees it in a message: small arrays in full, big ones by
    shape (unlike validation.describe_value, which names a bad argument in an error)."""
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


def _parameter_name(answer, position: int) -> str | None:
    """The name the learner gave to argument ``position`` (None if it cannot be read)."""
    try:  # a torch module is called through its forward
        names = [p.name for p in inspect.signature(getattr(answer, "forward", answer)).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return names[position] if position < len(names) else None


def _put_back(original, passed) -> bool:
    """Whether an edited argument is back within rounding of where it was: the trace of an
    entry moved and moved back, as a finite difference does."""
    try:
        before, after = (np.asarray(v.detach() if hasattr(v, "detach") else v, dtype=np.float64)
                         for v in (original, passed))
        return before.shape == after.shape and np.allclose(before, after, rtol=1e-9, atol=1e-12)
    except (TypeError, ValueError, RuntimeError):
        return False


def _named_parameters(value) -> dict:
    """A torch model's parameters by name ({} for anything else)."""
    return dict(value.named_parameters()) if hasattr(value, "named_parameters") else {}


def _same(a, b) -> bool:
    """Whether an argument still equals the copy taken before the learner's call."""
    if hasattr(a, "state_dict") and hasattr(b, "state_dict"):  # a torch module: its layers and weights
        first, second = a.state_dict(), b.state_dict()
        return ([(type(m), m.training) for m in a.modules()] == [(type(m), m.training) for m in b.modules()]
                and first.keys() == second.keys() and all(_same(first[k], second[k]) for k in first))
    if hasattr(a, "detach") and hasattr(b, "detach"):
        if a.dtype != b.dtype:
            return False
        a, b = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (int, float, complex, str, bytes, tuple, list, dict, type(None))):
        try:
            return bool(a == b)
        except Exception:
            return False
    return True  # other objects: nothing this checker can compare


# ----- the guard around the learner's code ------------------------------------------------

class _TimeUp(BaseException):
    """Raised inside the learner's code when it runs past its time limit. A BaseException,
    so that an answer's own `except Exception:` cannot swallow it."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Interrupt the block after ``seconds`` with :class:`_TimeUp`. It uses SIGALRM: a thread
    cannot be stopped from outside, and torch's grad mode is per thread, so the learner's code
    must run in the caller's thread; in ipykernel and under pytest (xdist too) that is the main
    thread, where signals are delivered. Elsewhere (a learner's own thread) there is no limit.
    The timer repeats every half second, so a bare `except:` cannot swallow it for good; an
    outer timer (a test's) is put back with the time it had left."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def interrupt(_signum, _frame):
        raise _TimeUp

    handler = signal.signal(signal.SIGALRM, interrupt)
    outer, outer_interval = signal.setitimer(signal.ITIMER_REAL, 0)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer else seconds, 0.5)
    start = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-3), outer_interval)


@contextlib.contextmanager
def _state_kept():
    """Put back, after the block, the global state an answer may change: NumPy's error
    handling, torch's grad mode, default dtype and thread count, the random states of
    Python, NumPy and torch, and any function of NumPy or torch the answer replaced. A
    changed state would break the next test case, the checker's own reference, and the
    learner's notebook after the check. Inference mode is off inside (a check cell run under
    `torch.inference_mode()` must still see gradients)."""
    torch = sys.modules.get("torch")
    errors, python_random, numpy_random = np.geterr(), random.getstate(), np.random.get_state()
    libraries = [module for module in (np, torch, getattr(torch, "nn", None)) if module is not None]
    functions = [dict(vars(module)) for module in libraries]
    if torch is not None:
        grad, dtype, threads = torch.is_grad_enabled(), torch.get_default_dtype(), torch.get_num_threads()
        torch_random = torch.random.get_rng_state()
    try:
        with torch.inference_mode(False) if torch is not None else contextlib.nullcontext():
            yield
    finally:
        for module, before in zip(libraries, functions):  # `np.allclose = ...` in an answer fools no check
            for key, value in before.items():
                if vars(module).get(key) is not value:
                    setattr(module, key, value)
        np.seterr(**errors)
        random.setstate(python_random)
        np.random.set_state(numpy_random)
        if torch is not None:
            torch.set_grad_enabled(grad)
            torch.set_default_dtype(dtype)
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
            torch.random.set_rng_state(torch_random)


def _clean_start() -> None:
    """A check starts from the defaults, whatever an earlier cell of the notebook switched
    (`torch.set_grad_enabled(False)`, `np.seterr(all="raise")`, a float64 default dtype):
    a right answer must pass in any kernel. :func:`_state_kept` puts the learner's back."""
    np.seterr(all="warn", under="ignore")
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_grad_enabled(True)
        torch.set_default_dtype(torch.float32)


class _Captured(io.TextIOBase):
    """Keeps the first characters the learner's code prints and counts the rest, so a
    print in a long loop cannot flood the notebook."""

    def __init__(self, keep: int = SHOWN_OUTPUT):
        super().__init__()
        self._keep, self._head, self._total = keep, [], 0

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        text = str(text)
        room = self._keep - sum(map(len, self._head))
        if room > 0:
            self._head.append(text[:room])
        self._total += len(text)
        return len(text)

    @property
    def total(self) -> int:
        """How many characters were printed in all."""
        return self._total

    def shortened(self) -> str:
        head = "".join(self._head).strip()
        if self._total > self._keep:
            head += f" ... ({self._total:,} characters in all)"
        return head


def _is_stub(error: NotImplementedError) -> bool:
    """Whether the NotImplementedError is the exercise's own stub (or a bare placeholder
    `raise NotImplementedError`), not one raised by torch or by a missing method."""
    text = str(error)
    return not text or text.rstrip(".").endswith(STUB_TEXT)


def _not_implemented(error: NotImplementedError, who: str, shown: str) -> str:
    """A NotImplementedError that is not the stub: most often an nn.Module without `forward`."""
    text = str(error)
    if 'missing the required "forward" function' in text:
        return (f"your block has no method called `forward` (PyTorch: {text}; the check called {who} with "
                f"{shown}). nn.Module runs `forward` when a block is called: check its spelling and that "
                "`def forward(self, x):` is indented inside the class.")
    return f"{who} raised NotImplementedError ({text}) when called with {shown}."
