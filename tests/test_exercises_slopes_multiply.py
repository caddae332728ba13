"""Notebook 02's exercises: the notebook's own solutions pass, and each recorded wrong
answer is caught with its own message."""
from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught

import numpy as np

from utils.exercises import slopes_multiply as ex

NOTEBOOK = "02_slopes_multiply.ipynb"
FACTORS = "    factors = 1 + layer_slopes if residual else layer_slopes\n"

CASES = [
    ExerciseCases(ex.stack_slopes, NOTEBOOK, "stack_slopes", wrong=[
        ("forgot the 1", "def stack_slopes(layer_slopes, residual):\n    return np.cumprod(layer_slopes)\n",
         "you forgot the skip path's 1"),
        ("summed", "def stack_slopes(layer_slopes, residual):\n" + FACTORS + "    return np.cumsum(factors)\n",
         "you added the slopes"),
        ("one layer behind", "def stack_slopes(layer_slopes, residual):\n" + FACTORS
         + "    out, p = [], 1.0\n    for f in factors:\n        out.append(p)\n        p = p * f\n    return np.array(out)\n",
         "your depths are off by one"),
        ("empty stack included", "def stack_slopes(layer_slopes, residual):\n" + FACTORS
         + "    return np.concatenate([[1.0], np.cumprod(factors)])\n", "one entry too many"),
        ("whole stack only", "def stack_slopes(layer_slopes, residual):\n" + FACTORS + "    return np.prod(factors)\n",
         "only the slope of the whole stack"),
        ("from the last layer back", "def stack_slopes(layer_slopes, residual):\n" + FACTORS
         + "    return np.cumprod(factors[::-1])\n", "from the last one back"),
        ("slope subtracted", "def stack_slopes(layer_slopes, residual):\n"
         "    return np.cumprod(1 - layer_slopes if residual else layer_slopes)\n", "you subtracted the slope"),
        ("edited in place", "def stack_slopes(layer_slopes, residual):\n    if residual:\n        layer_slopes += 1\n"
                            "    return np.cumprod(layer_slopes)\n", "changed its argument `layer_slopes` in place"),
        ("1 added once", "def stack_slopes(layer_slopes, residual):\n    p = np.cumprod(layer_slopes)\n"
                         "    return 1 + p if residual else p\n", "you added the 1 once"),
        ("float32", "def stack_slopes(layer_slopes, residual):\n" + FACTORS
         + "    return np.cumprod(factors.astype(np.float32))\n", "returned float32 numbers"),
    ]),
    ExerciseCases(ex.log10_stack_slope, NOTEBOOK, "log10_stack_slope", wrong=[
        ("log of the product", "def log10_stack_slope(layer_slopes, residual):\n" + FACTORS
         + "    with np.errstate(all='ignore'):\n        return np.log10(np.abs(np.prod(factors)))\n", "you took the log of the product"),
        ("math.log10 of the product", "def log10_stack_slope(layer_slopes, residual):\n" + FACTORS
         + "    return math.log10(abs(np.prod(factors)))\n", "math.log10 only takes positive numbers"),
        ("natural log", "def log10_stack_slope(layer_slopes, residual):\n" + FACTORS
         + "    return np.sum(np.log(np.abs(factors)))\n", "natural logarithm"),
        ("sign", "def log10_stack_slope(layer_slopes, residual):\n" + FACTORS
         + "    with np.errstate(all='ignore'):\n        return np.sum(np.log10(factors))\n",
         "the log of a negative number is NaN"),
        ("forgot the 1", "def log10_stack_slope(layer_slopes, residual):\n"
                         "    return np.sum(np.log10(np.abs(layer_slopes)))\n", "you forgot the skip path's 1"),
        ("per depth", "def log10_stack_slope(layer_slopes, residual):\n" + FACTORS
         + "    return np.cumsum(np.log10(np.abs(factors)))\n", "one number per depth"),
        ("sign flipped", "def log10_stack_slope(layer_slopes, residual):\n" + FACTORS
         + "    return -np.sum(np.log10(np.abs(factors)))\n", "the wrong sign"),
        ("log2", "def log10_stack_slope(layer_slopes, residual):\n" + FACTORS
         + "    return np.sum(np.log2(np.abs(factors)))\n", "base-2 logarithm"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)


def test_log10_stack_slope_accepts_float32():
    """02.2 asks for the logarithm to the precision the lesson needs (about 1e-6 relative),
    which float32 logs reach: a float32 answer is right, not a mistake."""
    def in_float32(layer_slopes, residual):
        factors = (1 + layer_slopes if residual else layer_slopes).astype(np.float32)
        return np.sum(np.log10(np.abs(factors)))

    assert ex.log10_stack_slope.check(in_float32)
