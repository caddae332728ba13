"""Exercises of notebook 01 (one residual block by hand, in NumPy): the residual forward
y = x + W2 ReLU(W1 x), and the projection shortcut y = W_s x + F(x) when the branch
changes the size. Each checker runs the learner's function on several inputs and names
the common mistakes (the branch alone, no ReLU, a transposed weight, the wrong path
projected) by computing them."""
from __future__ import annotations

import itertools

import numpy as np

from utils.exercises import core
from utils.exercises.core import Exercise, Mistake


_FLOAT64_WHY = "The inputs are float64; float32 keeps only about 7 digits of each entry."


def _relu(z):
    return np.maximum(z, 0.0)


def _branch(x, w1, w2):
    return w2 @ _relu(w1 @ x)


def _shown(x, w1, w2, w_s=None) -> str:
    text = f"x = {core.show_input(x)}, W1 of shape {w1.shape}, W2 of shape {w2.shape}"
    return text if w_s is None else f"{text}, W_s of shape {w_s.shape}"


def _not_a_matrix(got, name: str, shown: str) -> None:
    """A 2-D result where a vector is due almost always comes from ``*`` used for ``@``."""
    if isinstance(got, (list, tuple)) and len(got) > 1 and all(np.ndim(core.as_array(g, name, shown)) == 1 for g in got):
        raise Mistake(f"`{name}` returned {core.describe_container(got)} for {shown}, each a vector: the block's "
                      "output is one vector, the sum of its paths. Add them.", key="paths-not-added")
    if np.ndim(core.as_array(got, name, shown)) == 2:
        raise Mistake(f"`{name}` returned a matrix of shape {np.shape(got)} for {shown}, not a vector. "
                      "Did you use * (entry by entry, with broadcasting) where @ (matrix times vector) is needed?",
                      key="star-for-matmul")


def _relu_error(mistake: Mistake, name: str, shown: str) -> None:
    """An error raised by a ReLU written with np.max or Python's max names that mistake."""
    text = str(mistake)
    if "does not have enough dimensions (has 0" in text:  # W2 @ (a single number)
        raise Mistake(f"`{name}` multiplied W2 by a single number when called with {shown}. Did you use np.max "
                      "(the largest entry) for the ReLU? The ReLU of every entry is np.maximum(z, 0.0).",
                      key="np-max-relu") from None
    if "cannot be interpreted as an integer" in text:  # np.max(z, 0.0): 0.0 taken as the axis
        raise Mistake(f"`{name}` raised a TypeError when called with {shown}: np.max(z, 0.0) reads 0.0 as an "
                      "axis, not as a value to compare with. The ReLU of every entry is np.maximum(z, 0.0).",
                      key="np-max-axis") from None
    if "truth value of an array" in text:  # max(0, z) compares a number with a whole array
        raise Mistake(f"`{name}` raised a ValueError when called with {shown}: Python's built-in max(0, z) "
                      "compares 0 with the whole array at once and cannot decide. Use np.maximum(z, 0.0), "
                      "which compares entry by entry.", key="builtin-max") from None


def _computable(candidates) -> list[tuple[np.ndarray, str, str]]:
    """(value, explanation, key) for each (function, explanation, key) whose wrong value can be
    computed for this input: a transposed weight, for instance, only fits a square one."""
    mistakes = []
    for wrong, explanation, key in candidates:
        try:
            mistakes.append((wrong(), explanation, key))
        except ValueError:
            continue
    return mistakes


# ------------------------------------------------------------------ 01.1 the residual forward

def _forward_cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(x, W1, W2): the worked example first, then inputs where the ReLU and the
    orientation of W1 matter, zero weights, and another size."""
    worked = (np.array([2.0, -1.0]), np.array([[0.5, 0.0], [0.0, -0.5]]), np.array([[0.1, 0.0], [0.2, 0.2]]))
    rng = np.random.default_rng(1)
    square = (rng.normal(size=3), rng.normal(size=(3, 3)), rng.normal(size=(3, 3)))
    negative = (np.array([-2.0, 1.0]), worked[1], worked[2])  # the ReLU zeroes all of W1 x
    zeros = (np.array([0.5, -3.0, 2.0]), np.zeros((4, 3)), np.zeros((3, 4)))
    other = (rng.normal(size=4), rng.normal(size=(6, 4)), rng.normal(size=(4, 6)))
    barely = (np.array([1e-3, 1.0]), np.array([[0.5, 0.0], [0.0, -1.0]]), np.array([[2.0, 1.0], [1.0, 3.0]]))
    return [worked, square, negative, zeros, other, barely]  # barely: a pre-activation of 5e-4 the ReLU keeps


def _forward_mistakes(x, w1, w2):
    f = _branch(x, w1, w2)
    return _computable([
        (lambda: f, "you returned F(x), the branch alone. A residual block adds the skip path: "
                    "return x + F(x).", "branch-only"),
        (lambda: x + w2 @ (w1 @ x), "the ReLU is missing: the branch is W2 ReLU(W1 x), with the ReLU between "
                                    "the two matrices (np.maximum(..., 0.0)).", "no-relu"),
        (lambda: _relu(x + f), "you applied a ReLU to the sum, ReLU(x + F(x)). That is the original ResNet's "
                               "block; this exercise asks for y = x + F(x), with the ReLU only inside the branch.",
                               "relu-of-sum"),
        (lambda: x + _relu(w2 @ w1 @ x), "the ReLU is in the wrong place: it goes between W1 and W2, not after W2.",
        "relu-after-w2"),
        (lambda: x + _relu(w1 @ x), "W2 is missing: the branch is W2 ReLU(W1 x).", "no-w2"),
        (lambda: x + w2 @ _relu(w1.T @ x), "W1 is transposed: compute W1 @ x (W1 has shape (hidden, n)), "
                                           "not x @ W1 or W1.T @ x.", "w1-transposed"),
        (lambda: x + w2.T @ _relu(w1 @ x), "W2 is transposed: compute W2 @ ReLU(W1 x) (W2 has shape "
                                           "(n, hidden)), not ReLU(W1 x) @ W2.", "w2-transposed"),
        (lambda: x + w2.T @ _relu(w1.T @ x), "both weights are transposed: W1 has shape (hidden, n) and W2 shape "
                                             "(n, hidden), so the branch is W2 @ ReLU(W1 @ x).", "both-transposed"),
    ])


def _check_forward(answer) -> str:
    answer = core.require_function(answer, "residual_forward", 3)
    for x, w1, w2 in _forward_cases():
        shown = _shown(x, w1, w2)
        try:
            got = core.call(answer, x, w1, w2, name="residual_forward", shown=shown)
        except Mistake as mistake:
            _relu_error(mistake, "residual_forward", shown)
            raise
        _not_a_matrix(got, "residual_forward", shown)
        core.expect_float64(got, what="your result", shown=shown, why=_FLOAT64_WHY)
        core.expect_close(got, x + _branch(x, w1, w2), name="residual_forward", shown=shown,
                          mistakes=_forward_mistakes(x, w1, w2),
                          terms=[("the skip path x", x), ("the branch W2 ReLU(W1 x)", _branch(x, w1, w2))])
    return ("y = x + W2 ReLU(W1 x) on the worked example, on inputs where the ReLU cuts, with zero weights "
            "(y = x exactly) and with a wider hidden layer; x was left as it was.")


residual_forward = Exercise(
    "Exercise 01.1: the residual forward",
    _check_forward,
    ["Write the worked example's four steps as code: W1 x, then the ReLU, then W2, then add the skip path.",
     "`@` multiplies a matrix by a vector, and np.maximum(z, 0.0) is the ReLU of every entry of z.",
     "The branch alone is F(x) = W2 ReLU(W1 x). The block returns the input plus that branch: build a new "
     "array rather than changing x with +=."],
)


# ------------------------------------------------------------------ 01.2 the projection shortcut

def _projection_cases():
    """(x, W1, W2, W_s): sizes 3 -> 5, then 4 -> 7 with a negative input, then 2 -> 2."""
    rng = np.random.default_rng(2)
    cases = []
    for n, hidden, m in ((3, 4, 5), (4, 3, 7), (2, 3, 2)):
        cases.append((rng.normal(size=n), rng.normal(size=(hidden, n)), rng.normal(size=(m, hidden)),
                      rng.normal(size=(m, n))))
    cases[1] = (-np.abs(cases[1][0]),) + cases[1][1:]
    return cases


def _projection_mistakes(x, w1, w2, w_s):
    """The recognised wrong answers that can be computed for this input. With a size
    change most of them raise instead, and the checker then tries the learner's function
    on a same-size input to say which mistake it makes."""
    f = _branch(x, w1, w2)
    candidates = [
        (lambda: x + f, "you added x itself where the skip path must carry W_s x. This exercise is the "
                        "projection shortcut, so it uses W_s at every size, even where the sizes match (the check "
                        "also passes a W_s of shape (2, 2)); where the branch changes the size, x and F(x) cannot "
                        "be added at all.", "identity-skip"),
        (lambda: x + w_s @ f, "you projected the branch. W_s belongs on the skip path: y = W_s x + F(x); "
                              "the branch already has the output's size.", "projected-branch"),
        (lambda: w_s.T @ x + f, "W_s is used with the wrong shape (as x @ W_s or W_s.T @ x). W_s has shape "
                                "(m, n), outputs by inputs, so W_s @ x turns the n numbers of x into m.",
                                "ws-transposed"),
        (lambda: w_s @ (x + f), "you projected the sum, W_s (x + F(x)). Only the skip path is projected: "
                                "y = W_s x + F(x).", "projected-sum"),
        (lambda: w_s @ x, "you returned W_s x, the skip path alone: add the branch F(x) = W2 ReLU(W1 x).", "skip-only"),
        (lambda: f, "you returned F(x), the branch alone: add the projected skip path W_s x.", "branch-only"),
        (lambda: w_s @ x + w2 @ (w1 @ x), "the ReLU is missing: the branch is W2 ReLU(W1 x).", "no-relu"),
    ]
    return _computable(candidates)


def _diagnose_on_same_size(answer) -> tuple[str, str] | None:
    """Which recognised mistake a function makes on a same-size input, (explanation, key)
    (None if none)."""
    x, w1, w2, w_s = _projection_cases()[2]
    try:
        got = core.as_array(answer(x.copy(), w1.copy(), w2.copy(), w_s.copy()), "projection_block", "")
    except Exception:
        return None
    if got.ndim == 2:
        return ("you used * where @ is needed: W_s * x multiplies entry by entry (with broadcasting) and gives a "
                "matrix; the projection is the matrix product W_s @ x.", "star-for-matmul")
    for wrong, explanation, key in _projection_mistakes(x, w1, w2, w_s):
        if got.shape == wrong.shape and np.allclose(got, wrong, rtol=1e-6, atol=1e-9):
            return explanation, key
    return None


def _misordered(answer, args, want) -> bool:
    """True if the function gives the right answer when its arguments come in another order."""
    for order in itertools.permutations(range(len(args))):
        if order == tuple(range(len(args))):
            continue
        try:
            got = core.as_array(answer(*(args[i].copy() for i in order)), "projection_block", "")
        except Exception:
            continue
        if got.shape == want.shape and np.allclose(got, want):
            return True
    return False


def _check_projection(answer) -> str:
    answer = core.require_function(answer, "projection_block", 4)
    for x, w1, w2, w_s in _projection_cases():
        shown = _shown(x, w1, w2, w_s)
        try:
            got = core.call(answer, x, w1, w2, w_s, name="projection_block", shown=shown)
        except Mistake as mistake:
            if "raised" not in str(mistake):
                raise
            _relu_error(mistake, "projection_block", shown)
            if _misordered(answer, (x, w1, w2, w_s), w_s @ x + _branch(x, w1, w2)):
                raise Mistake(f"`projection_block` raised an error when called with {shown}, but with its arguments "
                              "in another order it gives the right answer: check the parameter order. The check "
                              "calls projection_block(x, W1, W2, W_s), in the order the task lists them.",
                              key="argument-order") from None
            diagnosis = _diagnose_on_same_size(answer)
            if diagnosis is None:
                raise
            raise Mistake(f"`projection_block` raised an error with a size change ({shown}). Where the sizes "
                          f"match it runs, and there it shows why: {diagnosis[0]}", key=diagnosis[1]) from None
        _not_a_matrix(got, "projection_block", shown)
        padded = np.concatenate([x, np.zeros(max(0, w_s.shape[0] - x.shape[0]))])
        mistakes = _projection_mistakes(x, w1, w2, w_s)
        if padded.shape[0] != x.shape[0]:
            mistakes.append((padded + _branch(x, w1, w2),
                             "you padded x with zeros. That is a shortcut too (He et al.'s option A, no "
                             "parameters), but this exercise asks for the projection W_s x.", "zero-padding"))
        core.expect_float64(got, what="your result", shown=shown, why=_FLOAT64_WHY)
        core.expect_close(got, w_s @ x + _branch(x, w1, w2), name="projection_block", shown=shown,
                          mistakes=mistakes, terms=[("the skip path W_s x", w_s @ x),
                                                    ("the branch W2 ReLU(W1 x)", _branch(x, w1, w2))])
    return ("y = W_s x + W2 ReLU(W1 x) for sizes 3 -> 5, 4 -> 7 and 2 -> 2, with W_s on the skip path only; "
            "the inputs were left as they were.")


projection_block = Exercise(
    "Exercise 01.2: the projection shortcut",
    _check_projection,
    ["The branch is the same as in Exercise 01.1; only the skip path changes.",
     "Write down the shapes: x has n numbers, F(x) has m. Which matrix turns n numbers into m?",
     "W_s has shape (m, n). Multiply it with x (W_s @ x), not with the branch, and add the two paths."],
)
