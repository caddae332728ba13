"""Exercises of notebook 12: the reference passes, recorded wrong answers get their own message."""
from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import residual_design_now as ex

NOTEBOOK = "12_residual_design_now.ipynb"


def _sinkhorn(body: str) -> str:
    return "def sinkhorn(matrix, iterations):\n    out = matrix\n" + body + "    return out\n"


_ROWS = "        out = out / out.sum(dim=1, keepdim=True)\n"
_COLS = "        out = out / out.sum(dim=0, keepdim=True)\n"
_LOOP = "    for _ in range(iterations):\n"

CASES = [
    ExerciseCases(ex.sinkhorn, NOTEBOOK, "sinkhorn", wrong=[
        ("columns-first", _sinkhorn(_LOOP + _COLS + _ROWS), "columns first"),
        ("the matrix itself at 0 iterations", _sinkhorn(_LOOP + _ROWS + _COLS), "returned its argument `matrix` itself"),
        ("rows-only", _sinkhorn(_LOOP + _ROWS), "only the rows sum to 1"),
        ("columns-only", _sinkhorn(_LOOP + _COLS), "only the columns sum to 1"),
        ("no-keepdim", _sinkhorn(_LOOP + _ROWS.replace(", keepdim=True", "") + _COLS), "lost their axis"),
        ("at-least-one-pass", _sinkhorn(_LOOP.replace("iterations", "max(iterations, 1)") + _ROWS + _COLS),
         "with 0 the matrix comes back unchanged"),
        ("one-pass", _sinkhorn(_ROWS.replace("        ", "    ") + _COLS.replace("        ", "    ")),
         "you ran 1 iteration where iterations=3"),
        ("one-too-few", _sinkhorn("    for _ in range(iterations - 1):\n" + _ROWS + _COLS),
         "you ran 2 iterations where iterations=3"),
        ("fixed-count", _sinkhorn(_LOOP.replace("iterations", "10") + _ROWS + _COLS), "you ran 10 iterations where"),
        ("exp", _sinkhorn("    out = torch.exp(matrix)\n" + _LOOP + _ROWS + _COLS), "applied exp"),
        ("in-place", "def sinkhorn(matrix, iterations):\n    for _ in range(iterations):\n"
         "        matrix /= matrix.sum(dim=1, keepdim=True)\n        matrix /= matrix.sum(dim=0, keepdim=True)\n"
         "    return matrix\n", "in place"),
        ("returns-None", "def sinkhorn(matrix, iterations):\n    out = matrix / matrix.sum()\n", "forget `return`"),
        ("detached-sums", _sinkhorn(_LOOP + _ROWS.replace("keepdim=True)", "keepdim=True).detach()") + _COLS),
         "cut from autograd's graph"),
        ("numpy-detour", "def sinkhorn(matrix, iterations):\n    out = matrix.detach().numpy()\n" + _LOOP
         + "        out = out / out.sum(axis=1, keepdims=True)\n        out = out / out.sum(axis=0, keepdims=True)\n"
         + "    return torch.from_numpy(out)\n", "no gradient reaches the matrix"),
    ]),
    ExerciseCases(ex.looks_linear, NOTEBOOK, "looks_linear", wrong=[
        ("repeated", "def looks_linear(u):\n    return torch.cat([u, u], dim=1)\n", "[U, U]"),
        ("signs-swapped", "def looks_linear(u):\n    return torch.cat([-u, u], dim=1)\n", "[-U, U]"),
        ("stacked", "def looks_linear(u):\n    return torch.cat([u, -u], dim=0)\n", "on top of each other"),
        ("unchanged", "def looks_linear(u):\n    return u\n", "returned U itself"),
        ("transposed", "def looks_linear(u):\n    return torch.cat([u.T, -u.T], dim=1)\n", "U's transpose"),
        ("interleaved", "def looks_linear(u):\n    return torch.stack([u, -u], dim=2).reshape(u.shape[0], -1)\n",
         "your columns interleave U and -U"),
        ("a list, not a tensor", "def looks_linear(u):\n    return torch.cat([u, -u], dim=1).tolist()\n",
         "Return a torch tensor"),
        ("result-passed", "import torch\nlooks_linear = torch.ones(2, 4)\n", "instead of a function"),
        ("detached", "def looks_linear(u):\n    return torch.cat([u, -u], dim=1).detach()\n", "no gradient reaches U"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)
