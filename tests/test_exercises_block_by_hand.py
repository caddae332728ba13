"""Notebook 01's exercises: the notebook's own solutions pass, and each recorded wrong
answer is caught with its own message."""
from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import block_by_hand as ex

NOTEBOOK = "01_residual_block_by_hand.ipynb"

CASES = [
    ExerciseCases(ex.residual_forward, NOTEBOOK, "residual_forward", wrong=[
        ("branch only", "def residual_forward(x, W1, W2):\n    return W2 @ np.maximum(W1 @ x, 0.0)\n",
         "you returned F(x), the branch alone"),
        ("no ReLU", "def residual_forward(x, W1, W2):\n    return x + W2 @ (W1 @ x)\n", "the ReLU is missing"),
        ("float32", "def residual_forward(x, W1, W2):\n    return (x + W2 @ np.maximum(W1 @ x, 0.0)).astype(np.float32)\n",
         "is float32: keep it in float64"),
        ("W1 transposed", "def residual_forward(x, W1, W2):\n    return x + W2 @ np.maximum(x @ W1, 0.0)\n",
         "W1 is transposed"),
        ("W2 transposed", "def residual_forward(x, W1, W2):\n    return x + np.maximum(W1 @ x, 0.0) @ W2\n",
         "W2 is transposed"),
        ("in place", "def residual_forward(x, W1, W2):\n    x += W2 @ np.maximum(W1 @ x, 0.0)\n    return x\n",
         "changed its argument `x` in place"),
        ("ReLU of the sum", "def residual_forward(x, W1, W2):\n    return np.maximum(x + W2 @ np.maximum(W1 @ x, 0.0), 0.0)\n",
         "you applied a ReLU to the sum"),
        ("* for @", "def residual_forward(x, W1, W2):\n    return x + W2 * np.maximum(W1 * x, 0.0)\n",
         "Did you use * (entry by entry"),
        ("np.max", "def residual_forward(x, W1, W2):\n    return x + W2 @ np.max(W1 @ x, 0)\n",
         "Did you use np.max"),
        ("np.max as np.maximum", "def residual_forward(x, W1, W2):\n    return x + W2 @ np.max(W1 @ x, 0.0)\n",
         "reads 0.0 as an axis"),
        ("builtin max", "def residual_forward(x, W1, W2):\n    return x + W2 @ max(0, W1 @ x)\n",
         "Python's built-in max(0, z)"),
    ]),
    ExerciseCases(ex.projection_block, NOTEBOOK, "projection_block", wrong=[
        ("the two paths as a tuple", "def projection_block(x, W1, W2, W_s):\n"
         "    return W_s @ x, W2 @ np.maximum(W1 @ x, 0.0)\n", "the sum of its paths. Add them"),
        ("x without projection", "def projection_block(x, W1, W2, W_s):\n    return x + W2 @ np.maximum(W1 @ x, 0.0)\n",
         "you added x itself"),
        ("branch projected", "def projection_block(x, W1, W2, W_s):\n    return x + W_s @ (W2 @ np.maximum(W1 @ x, 0.0))\n",
         "you projected the branch"),
        ("W_s transposed", "def projection_block(x, W1, W2, W_s):\n    return x @ W_s + W2 @ np.maximum(W1 @ x, 0.0)\n",
         "W_s is used with the wrong shape"),
        ("zero padding", "def projection_block(x, W1, W2, W_s):\n    f = W2 @ np.maximum(W1 @ x, 0.0)\n"
                         "    return np.concatenate([x, np.zeros(f.size - x.size)]) + f\n",
         "you padded x with zeros"),
        ("no ReLU", "def projection_block(x, W1, W2, W_s):\n    return W_s @ x + W2 @ (W1 @ x)\n",
         "the ReLU is missing"),
        ("identity where the sizes match", "def projection_block(x, W1, W2, W_s):\n"
         "    f = W2 @ np.maximum(W1 @ x, 0.0)\n    return x + f if f.size == x.size else W_s @ x + f\n",
         "even where the sizes match"),
        ("W_s * x", "def projection_block(x, W1, W2, W_s):\n    return W_s * x + W2 @ np.maximum(W1 @ x, 0.0)\n",
         "W_s * x multiplies entry by entry"),
        ("parameters swapped", "def projection_block(x, W_s, W1, W2):\n    return W_s @ x + W2 @ np.maximum(W1 @ x, 0.0)\n",
         "check the parameter order"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)
