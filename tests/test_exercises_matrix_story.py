"""Notebook 03's exercises: the reference passes, and each recorded wrong answer is caught
with its own message."""
import numpy as np

from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import matrix_story as ex

NOTEBOOK = "03_jacobians.ipynb"
_D = "def block_jacobian(x, W1, W2):\n    D = np.diag((W1 @ x > 0).astype(float))\n"
_FD = ("def finite_difference_jacobian(f, x, eps):\n    columns = []\n    for j in range(len(x)):\n"
       "        step = np.eye(len(x))[j] * eps\n")

CASES = [
    ExerciseCases(ex.block_jacobian, NOTEBOOK, "block_jacobian", wrong=[
        ("forgot the identity", _D + "    return W2 @ D @ W1\n", "add the identity"),
        ("transposed", _D + "    return np.eye(len(x)) + W1.T @ D @ W2.T\n", "the result is transposed"),
        ("no switch", "def block_jacobian(x, W1, W2):\n    return np.eye(len(x)) + W2 @ W1\n", "the ReLU's switch D is missing"),
        ("ReLU outputs in D", "def block_jacobian(x, W1, W2):\n"
         "    return np.eye(len(x)) + W2 @ np.diag(np.maximum(W1 @ x, 0)) @ W1\n", "must hold its slopes"),
        ("switch from x", "def block_jacobian(x, W1, W2):\n"
         "    return np.eye(len(x)) + W2 @ np.diag((x > 0).astype(float)) @ W1\n", "decided by x > 0"),
        ("wrong order", _D + "    return np.eye(len(x)) + W1 @ D @ W2\n", "wrong order, W1 D W2"),
        ("on at exactly 0", _D.replace("> 0", ">= 0") + "    return np.eye(len(x)) + W2 @ D @ W1\n",
         "counts as on in your D (>= 0)"),
        ("float32 result", _D + "    return (np.eye(len(x)) + W2 @ D @ W1).astype(np.float32)\n",
         "is float32: keep it in float64. Your formula may be right"),
    ]),
    ExerciseCases(ex.finite_difference_jacobian, NOTEBOOK, "finite_difference_jacobian", wrong=[
        ("a fixed step", "def finite_difference_jacobian(f, x, eps):\n    d = x.shape[0]\n"
         "    return np.stack([(f(x + np.eye(d)[j] * 1e-5) - f(x - np.eye(d)[j] * 1e-5)) / 2e-5 for j in range(d)], axis=1)\n",
         "does not use the step eps it was given"),
        ("one-sided", _FD + "        columns.append((f(x + step) - f(x)) / eps)\n    return np.stack(columns, axis=1)\n",
         "one-sided difference"),
        ("transposed", _FD + "        columns.append((f(x + step) - f(x - step)) / (2 * eps))\n    return np.stack(columns)\n",
         "the result is transposed"),
        ("divided by eps", _FD + "        columns.append((f(x + step) - f(x - step)) / eps)\n    return np.stack(columns, axis=1)\n",
         "divide by 2 eps"),
        ("all at once", _FD + "        columns.append((f(x + eps) - f(x - eps)) / (2 * eps))\n    return np.stack(columns, axis=1)\n",
         "you moved all inputs at once"),
        ("float32 result", _FD + "        columns.append((f(x + step) - f(x - step)) / (2 * eps))\n"
         "    return np.stack(columns, axis=1).astype(np.float32)\n", "is float32: keep it in float64. In float32 f's values"),
        ("float32 inside", _FD.replace("columns = []", "columns = []\n    x32 = x.astype(np.float32)")
         + "        s32 = step.astype(np.float32)\n"
         "        columns.append((f(x32 + s32).astype(np.float64) - f(x32 - s32).astype(np.float64)) / (2 * eps))\n"
         "    return np.stack(columns, axis=1)\n", "went through float32"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)


def test_the_exact_jacobians_match_central_differences():
    for f, exact, x, _eps, _shown in ex._difference_cases():
        steps = np.eye(x.shape[0]) * 1e-5
        numeric = np.stack([(f(x + s) - f(x - s)) / 2e-5 for s in steps], axis=1)
        assert np.allclose(numeric, exact(x), atol=1e-8)
