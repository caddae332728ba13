"""Checkers for notebook 09 (why residual networks work): a lesion that deletes block k
of a trained MLP, and the lag-1 autocorrelation of a sequence (how shattered gradients
are measured)."""
from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from utils.exercises.core import (Exercise, Mistake, call, describe_container, expect_close, expect_float64,
                                  expect_new_model, require_function)
from utils.lesion import _delete_blocks
from utils.mlp import MLP, make_mlp

# ----- Exercise 09.1: delete block k ----------------------------------------------------------


def _outputs(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    model = copy.deepcopy(model).eval()
    with torch.no_grad():
        return model(x)


def _skip_deleted(model: MLP, k: int) -> MLP:
    """Block k keeps its branch but loses its skip: ReLU(F(h)) instead of ReLU(h + F(h))."""
    lesioned = copy.deepcopy(model)
    branch = lesioned.blocks[k].branch
    lesioned.blocks[k] = nn.Sequential(branch, nn.ReLU()) if model.architecture == "residual" else branch
    return lesioned


def _lesion_mistakes(model: MLP, k: int, x: torch.Tensor) -> list[tuple]:
    count = len(model.blocks)
    mistakes = []
    if k + 1 < count:
        mistakes.append((_outputs(_delete_blocks(model, [k + 1]), x), "you deleted block k + 1. Blocks are counted "
                         "from 0, as in model.blocks[k]: delete model.blocks[k] itself.", "deleted-next"))
    if k >= 1:
        mistakes.append((_outputs(_delete_blocks(model, [k - 1]), x), "you deleted block k - 1. Blocks are counted "
                         "from 0, as in model.blocks[k]: delete model.blocks[k] itself.", "deleted-previous"))
    if model.architecture == "residual":
        mistakes.append((_outputs(_skip_deleted(model, k), x), "you kept the branch and dropped the skip: the "
                         "block became ReLU(F(h)). Deleting a block keeps the skip: the block becomes the "
                         "identity, h passes on unchanged.", "kept-branch-dropped-skip"))
    mistakes.append((_outputs(_delete_blocks(model, list(range(k, count))), x), "you deleted block k and every "
                     "block after it. Delete block k only.", "deleted-rest"))
    mistakes.append((_outputs(model, x), "the result computes the same as the intact network: block k is "
                     "still there. Replace it by nn.Identity() in the copy you return.", "not-deleted"))
    return mistakes


def _check_lesion(answer) -> str:
    delete_block = require_function(answer, "delete_block", 2)
    generator = torch.Generator().manual_seed(91)
    cases = [("residual", 10, 2, "a residual MLP with 4 blocks, k = 2"),
             ("residual", 10, 0, "a residual MLP with 4 blocks, k = 0 (the first block)"),
             ("residual", 8, 2, "a residual MLP with 3 blocks, k = 2 (the last block)"),
             ("plain", 10, 1, "a plain MLP with 4 blocks, k = 1")]
    for seed, (architecture, depth, k, shown) in enumerate(cases):
        model = make_mlp(architecture, depth, width=8, in_features=5, out_features=3, seed=seed, dtype=torch.float64)
        with torch.no_grad():  # running statistics as after training, so that eval mode is not the identity
            for module in model.modules():
                if isinstance(module, nn.BatchNorm1d):
                    module.running_mean.copy_(0.2 * torch.randn(8, generator=generator, dtype=torch.float64))
                    module.running_var.copy_(0.5 + torch.rand(8, generator=generator, dtype=torch.float64))
        model.eval()
        x = torch.randn(6, 5, generator=generator, dtype=torch.float64)
        handed = []
        lesioned = call(delete_block, model, k, name="delete_block", shown=shown, handed=handed)
        if not isinstance(lesioned, nn.Module):
            raise Mistake(f"`delete_block` returned a {type(lesioned).__name__} for {shown}; return the lesioned "
                          "network (an nn.Module).", key="not-a-module")
        expect_new_model(lesioned, handed[0], shown=shown)
        try:
            got = _outputs(lesioned, x)
        except Exception as error:
            raise Mistake(f"the network `delete_block` returned for {shown} cannot run ({type(error).__name__}: "
                          f"{error}). Replace block k by nn.Identity(), which passes its input on.",
                          key="cannot-run") from None
        want = _outputs(_delete_blocks(model, [k]), x)
        expect_close(got, want, name="delete_block", shown=shown, mistakes=_lesion_mistakes(model, k, x),
                     rtol=1e-9, atol=1e-12)
        if len(lesioned.blocks) != len(model.blocks):
            raise Mistake(f"for {shown}: the outputs are right, but the network you returned has "
                          f"{len(lesioned.blocks)} blocks where the one you were given has {len(model.blocks)}. "
                          "Replace block k by nn.Identity() rather than removing it, so the other blocks keep their "
                          "numbers and the lesion is the same in any network.", key="blocks-removed")
        if not isinstance(lesioned.blocks[k], nn.Identity):
            raise Mistake(f"for {shown}: the outputs are right, but block k of the network you returned is "
                          f"`{type(lesioned.blocks[k]).__name__}`, not nn.Identity(). Use nn.Identity() itself: "
                          "it says what the lesion is to anyone who reads the network.", key="not-identity")
    return ("block k (counted from 0) becomes the identity, in residual and plain nets, first and last blocks "
            "included, and the trained network you were given stays intact.")


delete_block = Exercise(
    "Exercise 09.1: delete block k",
    _check_lesion,
    [
        "The blocks of a network from make_mlp are in model.blocks, a list you can index: model.blocks[k].",
        "A deleted residual block passes its input on unchanged: what module does nothing to its input?",
        "Do not change the model you were given (the lesion study needs the intact network again for every k): "
        "make a copy first, `copy.deepcopy(model)`, and change the copy.",
        "In the copy, replace blocks[k] by nn.Identity() and return the copy.",
    ],
)


# ----- Exercise 09.2: lag-1 autocorrelation ---------------------------------------------------


def _reference_lag1(v: np.ndarray) -> float:
    c = v - v.mean()
    return float(c[1:] @ c[:-1] / (c @ c))


def _lag1_mistakes(v: np.ndarray) -> list[tuple]:
    c = v - v.mean()
    n = len(v)
    return [
        (abs(_reference_lag1(v)), "you returned the absolute value: r_1 is negative when neighbours tend to have "
         "opposite signs (as in white noise, or an alternating sequence). Keep its sign.", "absolute-value"),
        (float(v[1:] @ v[:-1] / (v @ v)), "the mean is not subtracted. Centre the sequence first, c = v - mean(v), "
         "then correlate c with itself shifted by one.", "mean-not-subtracted"),
        (1.0, "that is the lag-0 autocorrelation (every sequence is perfectly correlated with itself). Multiply "
         "each entry by its NEXT neighbour: c[1:] times c[:-1].", "lag-0"),
        (float(np.corrcoef(v[1:], v[:-1])[0, 1]), "you correlated v[1:] with v[:-1] as two separate series "
         "(np.corrcoef), each with its own mean and variance. The exercise's formula uses one mean and one "
         "variance, of the whole sequence: divide by the sum of all c_i squared.", "corrcoef"),
        (float((c[1:] @ c[:-1] / (n - 1)) / (c @ c / n)), "the normalisation is off: you averaged the n - 1 "
         "products but divided by the variance averaged over n. Divide the sum of products by the sum of squares.",
         "n-minus-1"),
        (float(c[1:] @ c[:-1] / np.sqrt((c[1:] @ c[1:]) * (c[:-1] @ c[:-1]))), "you normalised by the variances "
         "of the two shifted pieces. Divide by the sum of all c_i squared, the whole sequence's.", "piece-variances"),
        (float(c[1:] @ c[:-1] / n), "the result is not normalised: divide the sum of products by the sum of "
         "squares of c, so a smooth curve gives about 1 whatever its size.", "not-normalised"),
    ]


def _check_lag1(answer) -> str:
    lag1 = require_function(answer, "lag1_autocorrelation", 1)
    grid = np.linspace(-2.0, 2.0, 64)
    cases = [(np.array([1.0, 3.0, 2.0, 5.0, 4.0]), "v = [1, 3, 2, 5, 4]"),
             (10.0 + np.sin(3 * grid), "a smooth curve 10 + sin(3x) at 64 points"),
             (np.random.default_rng(9).standard_normal(50), "50 numbers of white noise"),
             (np.resize([2.0, -1.0], 9), "the alternating sequence 2, -1, 2, -1, ... (9 entries)"),
             (np.array([1.0, 2.0, 4.0]), "v = [1, 2, 4], the shortest sequence the task allows")]
    for v, shown in cases:
        got = call(lag1, v, name="lag1_autocorrelation", shown=shown)
        if isinstance(got, (list, tuple, dict, str)) or getattr(got, "ndim", 0) > 0:
            raise Mistake(f"`lag1_autocorrelation` returned {describe_container(got)} for {shown}; return one "
                          "number, a float.", key="not-one-number")
        expect_float64(got, what="your result", shown=shown, why="float32 keeps about 7 digits, and the "
                       "sums of products lose some of them; the checker compares to about 9 digits.")
        try:
            got = float(np.asarray(got, dtype=np.float64).reshape(()))
        except (TypeError, ValueError):
            raise Mistake(f"`lag1_autocorrelation` returned {type(got).__name__} for {shown}; return one number.",
            key="not-one-number") \
                from None
        expect_close(got, _reference_lag1(v), name="lag1_autocorrelation", shown=shown, mistakes=_lag1_mistakes(v),
                     rtol=1e-9, atol=1e-12)
    return ("centred, neighbour times neighbour, divided by the sum of squares: right on short sequences (3 "
            "numbers included), a smooth curve with an offset, white noise and an alternating sequence.")


lag1_autocorrelation = Exercise(
    "Exercise 09.2: lag-1 autocorrelation",
    _check_lag1,
    [
        "Subtract the sequence's mean first: c = v - v.mean().",
        "Pair each entry with its next neighbour: c[:-1] and c[1:] line up the pairs (c_0, c_1), (c_1, c_2), ...",
        "Sum the products of the pairs, then divide by the sum of all squares c_i ** 2, so the answer is 1 for "
        "a sequence that is its own neighbour.",
    ],
)
