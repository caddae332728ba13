"""Exercises of notebook 02 (slopes multiply): the slope of a stack of layers, plain and
residual, at every depth; and the logarithm of a deep stack's slope, computed as a sum of
logarithms so that it stays finite where the product itself under- or overflows. Each
checker names the common mistakes (the skip path's 1 forgotten, slopes added, one layer
off, the log of an underflowed product, the natural log, the sign) by computing them."""
from __future__ import annotations

import numpy as np

from utils.exercises import core
from utils.exercises.core import Exercise, Mistake


def _factors(slopes, residual):
    return 1.0 + slopes if residual else slopes


def _shown(slopes, residual) -> str:
    if slopes.size > 6 and np.all(slopes == slopes[0]):
        text = f"{slopes.size} layers of slope {slopes[0]:g}"
    else:
        text = f"layer_slopes = {core.show_input(slopes)}"
    return f"{text}, residual={residual}"


def _quiet(function):
    """Compute a (wrong) variant without NumPy's overflow, underflow or log(0) warnings."""
    with np.errstate(all="ignore"):
        return function()


# ------------------------------------------------------------------ 02.1 the slope of a stack

def _stack_cases() -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.uniform(-1.5, 1.5, size=6), np.full(20, 0.5), np.array([0.3]), np.zeros(5),
            np.full(1000, 0.05)]  # mixed slopes first: at 0.5, 1 - f' and f' would look alike


def _stack_mistakes(slopes, residual):
    factors = _factors(slopes, residual)
    products = _quiet(lambda: np.cumprod(factors))
    mistakes = []
    if residual:
        mistakes += [(_quiet(lambda: np.cumprod(slopes)),
                      "you forgot the skip path's 1: a residual block's slope is 1 + f', not f'.", "no-skip-one"),
                     (_quiet(lambda: np.cumprod(1.0 - slopes)),
                      "you subtracted the slope: a residual block's slope is 1 + f', the skip path's 1 plus the "
                      "branch's slope.", "slope-subtracted"),
                     (_quiet(lambda: 1.0 + np.cumprod(slopes)),
                      "you added the 1 once, to the whole product. The 1 belongs in every factor: "
                      "multiply the (1 + f') of each block.", "one-added-once")]
    else:
        mistakes.append((_quiet(lambda: np.cumprod(1.0 + slopes)),
                         "with residual=False the stack is plain: each layer's slope is f' itself, without the 1.",
                         "plain-with-one"))
    mistakes += [
        (np.cumsum(factors), "you added the slopes. The chain rule multiplies them: the slope of k layers "
                             "is the product of their k slopes.", "slopes-added"),
        (np.concatenate([[1.0], products[:-1]]),
         "your depths are off by one: entry k-1 must be the slope of the first k layers, and yours is one "
         "layer behind (it starts with the empty stack, whose slope is 1).", "off-by-one-behind"),
        (np.concatenate([[1.0], products]), "you returned one entry too many: start with the stack of one layer "
                                            "(its slope is that layer's slope), not with the empty stack.",
                                            "one-too-many"),
        (products[:-1], "you returned one entry too few: the last entry is the slope of all the layers.",
        "one-too-few"),
        (_quiet(lambda: np.cumprod(factors[::-1])),
         "you multiplied the layers from the last one back: entry k-1 is the slope of the FIRST k layers, so "
         "start the running product at the first layer.", "from-last-layer"),
        (_quiet(lambda: factors[0] ** np.arange(1, slopes.size + 1)),
         "you used the first layer's slope for every layer: multiply each layer's own slope.", "first-slope-only"),
        (products[-1], "you returned only the slope of the whole stack; return one number for every depth "
                       "1, 2, ..., L.", "whole-stack-only"),
    ]
    return mistakes


def _not_float32(got, slopes, residual, shown: str) -> None:
    """A float32 result that is off only by float32's precision or range gets its own message."""
    if str(getattr(got, "dtype", "")).split(".")[-1] not in ("float32", "float16"):
        return
    got = core.as_array(got, "stack_slopes", shown)
    want = _quiet(lambda: np.cumprod(_factors(slopes, residual)))
    in_float32 = _quiet(lambda: np.cumprod(_factors(slopes, residual).astype(np.float32)))
    if got.shape == want.shape and not np.allclose(got, want, rtol=1e-6, atol=1e-300) and np.allclose(
            got, in_float32, rtol=1e-4, atol=1e-44):
        smallest = float(np.min(np.abs(want[want != 0]))) if np.any(want != 0) else 0.0
        raise Mistake(f"`stack_slopes` returned float32 numbers for {shown}, and there they are off. Compute in "
                      "float64, NumPy's default: float32 keeps only about 7 digits and stores anything below about "
                      f"1e-45 as 0 (float64 goes down to about 1e-308), and this stack's slopes reach {smallest:.0e}.",
                      key="float32")


def _check_stack(answer) -> str:
    answer = core.require_function(answer, "stack_slopes", 2)
    for slopes in _stack_cases():
        for residual in (False, True):
            shown = _shown(slopes, residual)
            got = core.call(answer, slopes, residual, name="stack_slopes", shown=shown)
            want = _quiet(lambda: np.cumprod(_factors(slopes, residual)))
            _not_float32(got, slopes, residual, shown)
            core.expect_close(got, want, name="stack_slopes", shown=shown, rtol=1e-6, atol=1e-300,
                              mistakes=_stack_mistakes(slopes, residual))
    return ("the slope at every depth, plain and residual, for equal and mixed slopes (negative ones too), "
            "one layer, zero slopes and 1000 layers.")


stack_slopes = Exercise(
    "Exercise 02.1: the slope of a stack",
    _check_stack,
    ["Each layer has one slope: f' for a plain layer, 1 + f' for a residual block. Which one depends on "
     "`residual`.",
     "The slope of the first k layers is the product of their k slopes, so each depth's value is the "
     "previous depth's value times one more slope.",
     "A loop that keeps a running product and appends it after every layer works; so does NumPy's "
     "cumulative product. Check the first entry: it is the slope of one layer."],
)


# ------------------------------------------------------------------ 02.2 its logarithm, computed stably

def _log_cases() -> list[tuple[np.ndarray, tuple[bool, ...]]]:
    rng = np.random.default_rng(4)
    return [(np.full(1100, 0.5), (False,)),  # the product underflows to 0
            (np.full(1100, 1.0), (True,)),  # 2**1100 overflows to inf
            (rng.uniform(-1.8, 1.8, size=6), (False, True)),  # negative slopes (and factors) too
            (np.array([-0.5, -0.5, -0.5]), (False,)),
            (np.array([0.3]), (True, False))]


def _log_mistakes(slopes, residual):
    factors = _factors(slopes, residual)
    logs = _quiet(lambda: np.log10(np.abs(factors)))
    product = _quiet(lambda: np.prod(factors))
    mistakes = [
        (_quiet(lambda: np.log10(np.abs(product))),
         "you took the log of the product. At this depth the product itself underflows to 0 or overflows "
         "to inf before the log is taken (log of 0 is -inf). Add the logs of the factors instead: "
         "log(a b) = log a + log b.", "log-of-product"),
        (_quiet(lambda: np.sum(np.log(np.abs(factors)))),
         "that is the natural logarithm; this exercise asks for base 10 (np.log10).", "natural-log"),
        (_quiet(lambda: np.sum(np.log10(factors))),
         "a slope is negative here, and the log of a negative number is NaN. Take the log of each factor's "
         "size, |factor|: the sign only flips the direction, the size is what vanishes or explodes.",
         "log-of-negative"),
        (np.cumsum(logs), "you returned one number per depth; return one number, the log of the whole stack's "
                          "slope.", "one-per-depth"),
        (np.mean(logs), "you averaged the logs; the log of a product is their sum.", "averaged-logs"),
        (product, "you returned the slope itself, not its logarithm.", "no-log"),
        (-np.sum(logs), "your answer has the right size but the wrong sign: the log of a slope below 1 is "
                        "negative (0.5 gives -0.301 per layer). Add the logs as they are, without a minus sign.",
                        "sign-flipped"),
        (np.sum(logs) / np.log10(2.0), "that is the base-2 logarithm (np.log2); this exercise asks for base 10 "
                                       "(np.log10).", "log2"),
    ]
    if residual:
        mistakes.insert(0, (_quiet(lambda: np.sum(np.log10(np.abs(slopes)))),
                            "you forgot the skip path's 1: a residual block's slope is 1 + f'.", "no-skip-one"))
    return mistakes


def _check_log(answer) -> str:
    answer = core.require_function(answer, "log10_stack_slope", 2)
    for slopes, flags in _log_cases():
        for residual in flags:
            shown = _shown(slopes, residual)
            try:
                got = core.call(answer, slopes, residual, name="log10_stack_slope", shown=shown)
            except Mistake as mistake:
                if "math domain error" in str(mistake):  # math.log of 0 (an underflowed product) or of a negative
                    raise Mistake(f"{mistake} math.log10 only takes positive numbers: an underflowed product is "
                                  "0 and a slope may be negative. Add np.log10 of each factor's size instead.",
                                  key="math-log10-domain") from None
                raise
            want = np.sum(np.log10(np.abs(_factors(slopes, residual))))
            core.expect_close(got, want, name="log10_stack_slope", shown=shown, rtol=1e-6, atol=1e-9,
                              mistakes=_log_mistakes(slopes, residual))
    return ("log10 of the slope's size, finite at 1100 layers where the product itself underflows to 0 (plain, "
            "slope 0.5) or overflows to inf (residual, slope 1 + 1), and right for negative slopes.")


log10_stack_slope = Exercise(
    "Exercise 02.2: the logarithm of a deep stack's slope",
    _check_log,
    ["Computing the product first and then its log fails at depth 1100: try np.prod(np.full(1100, 0.5)).",
     "The log of a product is the sum of the logs: log10(a b) = log10(a) + log10(b). Each factor's log is "
     "an ordinary number, even when the product is not.",
     "Take np.log10 of the size (absolute value) of each layer's factor, f' or 1 + f', and add them up."],
)
