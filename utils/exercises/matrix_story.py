"""Checkers for notebook 03 (the matrix story): the Jacobian of a residual block with a
ReLU branch, and a central finite-difference Jacobian to check it with."""
from __future__ import annotations

import numpy as np

from utils.exercises.core import (Exercise, Mistake, as_array, call, expect_close, expect_float64,
                                  require_function)

# ----- Exercise 03.1: the Jacobian of y = x + W2 ReLU(W1 x) ---------------------------------

_W1 = np.array([[0.5, 0.0], [0.0, -0.5]])
_W2 = np.array([[0.1, 0.0], [0.2, 0.2]])


def _block_cases() -> list[tuple]:
    """(x, W1, W2, what the case is) for the block-Jacobian checker."""
    rng = np.random.default_rng(31)
    square_w1, square_w2 = rng.normal(size=(4, 4)), rng.normal(size=(4, 4)) * 0.3
    wide_w1, wide_w2 = rng.normal(size=(5, 3)), rng.normal(size=(3, 5)) * 0.3
    return [
        (np.array([2.0, -1.0]), _W1, _W2, "the worked example x = [2, -1]"),
        (np.array([-2.0, 1.0]), _W1, _W2, "x = [-2, 1], where both ReLUs are off"),
        (np.array([0.3, -1.2, 0.8, 0.5]), square_w1, square_w2, "4 inputs and 4 hidden units, some ReLUs off"),
        (np.array([1.0, -0.5, 2.0]), wide_w1, wide_w2, "3 inputs and 5 hidden units"),
        (np.zeros(3), wide_w1, wide_w2, "x = 0, where every ReLU's input is exactly 0"),
    ]


def _block_mistakes(x, w1, w2) -> list[tuple]:
    on = (w1 @ x > 0).astype(np.float64)
    jf = w2 @ (on[:, None] * w1)
    eye = np.eye(x.shape[0])
    mistakes = []
    if np.any(w1 @ x == 0):
        at_zero = (w1 @ x >= 0).astype(np.float64)
        mistakes.append((eye + w2 @ (at_zero[:, None] * w1), "a ReLU whose input is exactly 0 counts as on in your D "
                         "(>= 0). D is 1 only where W1 x > 0, strictly: at 0 the ReLU's slope is taken as 0, as "
                         "PyTorch's autograd does.", "relu-at-zero-on"))
    mistakes += [
        (jf, "this is J_F, the branch's Jacobian alone. The block is x + F(x): add the identity, the skip path's "
             "contribution (np.eye(d) + J_F).", "branch-jacobian-only"),
        (eye + jf.T, "the result is transposed: entry (i, j) must be d y_i / d x_j. Multiply in the order "
                     "W2 D W1 (the layer applied last comes first), not W1^T D W2^T.", "result-transposed"),
        (eye + w2 @ w1, "the ReLU's switch D is missing: J_F = W2 D W1, where D is diagonal with 1 where W1 x > 0 "
                        "and 0 elsewhere (a switched-off unit passes no slope).", "no-relu-switch"),
        (eye + w2 @ (np.maximum(w1 @ x, 0.0)[:, None] * w1), "D holds the ReLU's outputs; it must hold its slopes: "
                                                          "1 where W1 x > 0, 0 elsewhere.", "d-holds-outputs"),
    ]
    if w1.shape[0] == x.shape[0]:
        wrong_switch = (x > 0).astype(np.float64)
        mistakes.append((eye + w2 @ (wrong_switch[:, None] * w1), "D is decided by x > 0; it must be decided by the "
                         "ReLU's input, W1 x > 0.", "d-from-x"))
    if w1.shape == w2.shape == (x.shape[0], x.shape[0]):
        mistakes.append((eye + w1 @ (on[:, None] * w2), "the product is in the wrong order, W1 D W2. The chain rule "
                         "puts the layer applied last first: J_F = W2 D W1.", "wrong-order"))
    return mistakes


def _check_block(answer) -> str:
    block_jacobian = require_function(answer, "block_jacobian", 3)
    for x, w1, w2, shown in _block_cases():
        got = call(block_jacobian, x, w1, w2, name="block_jacobian", shown=shown)
        expect_float64(got, what="your result", shown=shown, why="Your formula may be right, but float32 keeps "
                       "only about 7 digits of each entry: build D and the product from the float64 inputs.")
        on = (w1 @ x > 0).astype(np.float64)
        want = np.eye(x.shape[0]) + w2 @ (on[:, None] * w1)
        expect_close(got, want, name="block_jacobian", shown=shown, mistakes=_block_mistakes(x, w1, w2),
                     rtol=1e-10, atol=1e-12, terms=[("the identity I (the skip path's Jacobian)", np.eye(x.shape[0])),
                                                    ("the branch's Jacobian W2 D W1", want - np.eye(x.shape[0]))])
    return ("I + W2 D W1 on the worked example, with every ReLU off, and for 3 or 4 inputs with 4 or 5 hidden "
            "units: the identity, the switch D and the order of the product are all right.")


block_jacobian = Exercise(
    "Exercise 03.1: the Jacobian of a residual block",
    _check_block,
    [
        "Start from the linear case: the Jacobian of x + W x is I + W. The ReLU branch only adds a switch in the middle.",
        "The switch D is diagonal: 1 where the ReLU's input W1 x is positive, 0 elsewhere. Build it from a "
        "boolean array with .astype(float) and np.diag.",
        "J_F = W2 D W1 (the last layer first, as in the chain rule); the block's Jacobian adds np.eye(d), with d "
        "the length of x.",
    ],
)


# ----- Exercise 03.2: a central finite-difference Jacobian ---------------------------------

_A = np.array([[0.8, -0.4, 0.3], [0.2, 0.5, -0.9]])


def _wave(v):
    """A smooth map from 3 numbers to 2: tanh(A v) + v_1 v_3 (its Jacobian is known exactly)."""
    return np.tanh(_A @ v) + v[0] * v[2]


def _wave_jacobian(v):
    slope = 1 - np.tanh(_A @ v) ** 2
    return slope[:, None] * _A + np.array([[v[2], 0.0, v[0]]] * 2)


_RNG = np.random.default_rng(32)
_BW1, _BW2 = _RNG.normal(size=(6, 4)), _RNG.normal(size=(4, 6)) * 0.3


def _block(v):
    """The residual block x + W2 ReLU(W1 x) with 4 inputs and 6 hidden units."""
    return v + _BW2 @ np.maximum(_BW1 @ v, 0.0)


def _block_exact(v):
    on = (_BW1 @ v > 0).astype(np.float64)
    return np.eye(4) + _BW2 @ (on[:, None] * _BW1)


def _difference_cases() -> list[tuple]:
    """(f, its exact Jacobian, x, eps, what the case is); the block's x is far from every kink."""
    return [
        (_wave, _wave_jacobian, np.array([0.5, -1.0, 1.5]), 1e-3, "f(x) = tanh(A x) + x_1 x_3 (3 inputs, 2 outputs), eps = 1e-3"),
        (_block, _block_exact, np.array([1.0, -0.5, 0.8, 2.0]), 1e-3, "a residual block with 4 inputs, eps = 1e-3"),
        (_wave, _wave_jacobian, np.array([-0.3, 0.7, 0.2]), 1e-6, "f(x) = tanh(A x) + x_1 x_3, eps = 1e-6"),
        (_wave, _wave_jacobian, np.array([0.4, -0.2, 0.9]), 0.2,
         "f(x) = tanh(A x) + x_1 x_3 with a large step, eps = 0.2"),
    ]


def _columns(f, x, eps, difference) -> np.ndarray:
    """Column j from ``difference(f, x, step_j)``."""
    return np.stack([difference(f, x, np.eye(x.shape[0])[j] * eps) for j in range(x.shape[0])], axis=1)


def _difference_mistakes(f, x, eps) -> list[tuple]:
    central = _columns(f, x, eps, lambda f, x, step: (f(x + step) - f(x - step)) / (2 * eps))
    return [
        (_columns(f, x, eps, lambda f, x, step: (f(x + step) - f(x)) / eps),
         "this is a one-sided difference, (f(x + eps e_j) - f(x)) / eps, whose error shrinks only like eps (here "
         "about 1e-3). Use the central difference (f(x + eps e_j) - f(x - eps e_j)) / (2 eps): error like eps^2.",
         "one-sided"),
        (central.T, "the result is transposed: the difference for input j belongs in column j "
                    "(entry (i, j) = d f_i / d x_j), so stack the differences as columns (np.stack(..., axis=1)).",
                    "result-transposed"),
        (2 * central, "the result is twice too large: x + eps e_j and x - eps e_j are 2 eps apart, so divide by 2 eps.",
        "twice-too-large"),
        (_columns(f, x, eps, lambda f, x, step: (f(x + step) - f(x)) / (2 * eps)),
         "one of your two points is x itself: the central difference evaluates f at x + eps e_j and at x - eps e_j.",
         "point-at-x"),
        (_columns(f, x, eps, lambda f, x, step: (f(x) - f(x - step)) / (2 * eps)),
         "one of your two points is x itself: the central difference evaluates f at x + eps e_j and at x - eps e_j.",
         "point-at-x-2"),
        (np.repeat(((f(x + eps) - f(x - eps)) / (2 * eps))[:, None], x.shape[0], axis=1),
         "every column is the same: you moved all inputs at once. Move one input at a time, x + eps e_j with "
         "e_j zero except a 1 at entry j.", "all-inputs-moved"),
    ]


def _check_difference(answer) -> str:
    finite_difference_jacobian = require_function(answer, "finite_difference_jacobian", 3)
    for f, exact, x, eps, shown in _difference_cases():
        got = call(finite_difference_jacobian, f, x, eps, name="finite_difference_jacobian", shown=shown)
        expect_float64(got, what="your result", shown=shown, why="In float32 f's values keep only about 7 "
                       "digits, and dividing their difference by a small eps blows the rounding up.")
        want = _columns(f, x, eps, lambda f, x, step: (f(x + step) - f(x - step)) / (2 * eps))
        exact_jacobian = exact(x)
        array = as_array(got, "finite_difference_jacobian", shown)
        if array.shape == want.shape and not np.allclose(want, exact_jacobian, rtol=1e-5, atol=1e-6) and np.allclose(
                array, exact_jacobian, rtol=1e-5, atol=1e-6):
            raise Mistake(f"for {shown}: your result is the exact Jacobian, although with this large eps the central "
                          f"difference differs from it by up to {float(np.max(np.abs(want - exact_jacobian))):.2g}. "
                          "It does not use the step eps it was given: step by exactly eps.", key="exact-jacobian")
        try:
            expect_close(got, want, name="finite_difference_jacobian", shown=shown, rtol=1e-5, atol=1e-6,
                         mistakes=_difference_mistakes(f, x, eps))
        except Mistake as mistake:
            array = np.asarray(got, dtype=np.float64)
            if ("gives wrong values" in str(mistake) or "level of rounding" in str(mistake)) and array.shape == want.shape:
                error = float(np.max(np.abs(array - want)))
                if error <= 20 * np.finfo(np.float32).eps * max(1.0, float(np.max(np.abs(f(x))))) / eps:
                    raise Mistake(f"for {shown}: off by {error:.2g}, about what rounding to float32 and dividing "
                                  "by eps costs. Somewhere the values went through float32, or were rounded: keep "
                                  "x, the steps and f's values in float64, and do not round.",
                                  key="float32-rounding") from None
            raise
    return ("central differences, one input at a time, as columns, in float64: they match the exact Jacobians "
            "of a smooth map with 3 inputs and 2 outputs and of a residual block at eps = 1e-3 and 1e-6, and "
            "keep the central difference's own error at eps = 0.2.")


finite_difference_jacobian = Exercise(
    "Exercise 03.2: a central finite-difference Jacobian",
    _check_difference,
    [
        "Column j of the Jacobian says how every output moves when only input j moves. The loop over j and "
        "the stacking are written for you: compute column for one j.",
        "For input j build the step eps * e_j (np.eye(d)[j] * eps, zero except at entry j), and evaluate f at "
        "x + step and at x - step.",
        "Column j is f at x + step minus f at x - step, divided by the distance between the two points, 2 eps "
        "(not eps). Keep it in float64.",
    ],
)
