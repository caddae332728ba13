"""Checkers for notebook 12 (residual design now).

* Exercise 12.1: Sinkhorn's normalisation of a positive matrix into a doubly stochastic one,
  the constraint of manifold-constrained hyper-connections.
* Exercise 12.2: the looks-linear weight [U, -U] that makes a CReLU layer compute U x.
"""
from __future__ import annotations

import torch

from utils.exercises.core import (Exercise, Mistake, call, expect_close, expect_gradients, require_function,
                                  show_input)

MATRIX_WHY = ("In hyper-connections the mixing matrix is computed from learned numbers: Sinkhorn's "
              "normalisation must pass their gradient on, or the mixing could never learn.")
U_WHY = ("Built from U with tensor operations, the weight passes U's gradient on to both of its halves, so "
         "it can also be used where U itself is learned.")


_MOST_ITERATIONS_TRIED = 50  # a wrong fixed count up to this many is named


def _positive(rows: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.exp(torch.randn(rows, rows, generator=generator, dtype=torch.float64))


def _normalise(matrix: torch.Tensor, iterations: int, *, rows_first: bool = True, rows: bool = True,
               cols: bool = True) -> torch.Tensor:
    """Alternate normalisations, with switches that reproduce the usual mistakes."""
    out = matrix
    for _ in range(iterations):
        steps = [(1, rows), (0, cols)] if rows_first else [(0, cols), (1, rows)]
        for dim, on in steps:
            if on:
                out = out / out.sum(dim=dim, keepdim=True)
    return out


def _check_sinkhorn(answer) -> str:
    answer = require_function(answer, "sinkhorn", 2)
    cases = [(_positive(4, 2), 3), (_positive(3, 1), 1), (_positive(4, 3), 20), (_positive(2, 4), 5),
             (_positive(3, 5), 0)]
    for matrix, iterations in cases:
        shown = (f"a positive {matrix.shape[0]}x{matrix.shape[0]} matrix "
                 f"({show_input(matrix) if matrix.numel() <= 6 else 'random entries'}) and iterations={iterations}")
        got = call(answer, matrix, iterations, name="sinkhorn", shown=shown)
        want = _normalise(matrix, iterations)
        mistakes = [
            (_normalise(matrix, iterations, rows_first=False),
             "you normalised the columns first. Each iteration divides the rows by their sums first, then the "
             "columns; after finitely many iterations the order changes the result.", "columns-first"),
            (_normalise(matrix, iterations, cols=False),
             "only the rows sum to 1: each iteration must also divide every column by its sum.", "rows-only"),
            (_normalise(matrix, iterations, rows=False),
             "only the columns sum to 1: the rows are never divided by their own sums. Either the row step "
             "is missing, or its sums lost their axis: `out.sum(dim=1)` is a row of numbers, so dividing by it "
             "divides column j by row j's sum, which the column step then undoes. Keep the axis with "
             "`out.sum(dim=1, keepdim=True)`.", "columns-only"),
            (_normalise(matrix / matrix.max(), iterations, rows=False, cols=False),
             "you divided by the largest entry. Divide each row (then each column) by its own sum.", "divided-by-max"),
            (_normalise(torch.exp(matrix), iterations),
             "you applied exp to the matrix. Its entries are positive already: normalise it as it is.", "applied-exp"),
            *[(_normalise(matrix, ran), f"you ran {ran} iteration{'s' * (ran != 1)} where iterations={iterations}: "
               "loop exactly `iterations` times (with 0 the matrix comes back unchanged).", "wrong-iterations")
              for ran in range(_MOST_ITERATIONS_TRIED + 1) if ran != iterations],
        ]
        expect_close(got, want, name="sinkhorn", shown=shown, mistakes=mistakes, rtol=1e-9, atol=1e-12)
        leaf = matrix.clone().requires_grad_()
        with torch.enable_grad():
            got, want = call(answer, leaf, iterations, name="sinkhorn", shown=shown, copies=False), _normalise(leaf, iterations)
        expect_gradients(got, want, {"the matrix": (leaf, MATRIX_WHY)}, name="sinkhorn", shown=shown)
    return ("rows then columns divided by their sums, `iterations` times, on 2x2 to 4x4 matrices, from 0 "
            "iterations (the matrix unchanged) to 20, where every row and column sums to 1.")


sinkhorn = Exercise(
    "Exercise 12.1: Sinkhorn's doubly stochastic matrix",
    _check_sinkhorn,
    hints=[
        "`matrix.sum(dim=1, keepdim=True)` is the column of row sums; dividing by it makes every row sum to 1. "
        "`dim=0` gives the row of column sums.",
        "Start from a copy, `out = matrix.clone()`, so the caller's matrix stays untouched and you return a new "
        "tensor even when iterations is 0.",
        "Loop `iterations` times; in each pass divide by the row sums, then by the column sums.",
    ],
)


def _crelu(x: torch.Tensor) -> torch.Tensor:
    return torch.cat([torch.relu(x), torch.relu(-x)], dim=-1)


def _check_looks_linear(answer) -> str:
    answer = require_function(answer, "looks_linear", 1)
    generator = torch.Generator().manual_seed(12)
    for rows, cols in ((3, 3), (2, 5), (4, 2)):
        u = torch.randn(rows, cols, generator=generator, dtype=torch.float64)
        shown = f"a {rows}x{cols} matrix U"
        got = call(answer, u, name="looks_linear", shown=shown)
        want = torch.cat([u, -u], dim=1)
        mistakes = [
            (torch.cat([u, u], dim=1), "you repeated U as [U, U]: applied to [ReLU(x), ReLU(-x)] it computes "
                                       "U |x|, not U x. The second half must be -U.", "u-u"),
            (torch.cat([-u, u], dim=1), "you returned [-U, U], which computes -U x: the half that meets ReLU(x) "
                                        "is U, the half that meets ReLU(-x) is -U.", "minus-u-u"),
            (torch.cat([u, -u], dim=0), "you stacked U and -U on top of each other (shape (2 out, in)). Put them "
                                        "side by side, torch.cat([...], dim=1): the layer reads 2 in numbers.",
                                        "stacked-not-side-by-side"),
            (u, "you returned U itself; the layer after CReLU reads twice as many numbers, [U, -U].", "u-alone"),
            (torch.cat([u.T, -u.T], dim=1), "you used U's transpose: the weight is [U, -U] with U as given, of shape "
                                             "(out, in), so the result has shape (out, 2 in).", "u-transposed"),
            (torch.stack([u, -u], dim=2).reshape(rows, 2 * cols),
             "your columns interleave U and -U (u_1, -u_1, u_2, -u_2, ...). crelu(x) puts all of ReLU(x) first, "
             "then all of ReLU(-x): put U and -U side by side as two blocks, torch.cat([...], dim=1).", "interleaved"),
        ]
        expect_close(got, want, name="looks_linear", shown=shown, mistakes=mistakes, rtol=1e-12, atol=1e-12)
        leaf = u.clone().requires_grad_()
        with torch.enable_grad():
            got, want = call(answer, leaf, name="looks_linear", shown=shown, copies=False), torch.cat([leaf, -leaf], dim=1)
        expect_gradients(got, want, {"U": (leaf, U_WHY)}, name="looks_linear", shown=shown)
        x = torch.randn(6, cols, generator=generator, dtype=torch.float64)
        if not torch.allclose(_crelu(x) @ torch.as_tensor(got, dtype=torch.float64).T, x @ u.T):
            raise Mistake(f"for {shown}: your weight applied to crelu(x) does not give U x.", key="wrong-weight")
    return "W = [U, -U] side by side, so W crelu(x) = U ReLU(x) - U ReLU(-x) = U x, for square and non-square U."


looks_linear = Exercise(
    "Exercise 12.2: the looks-linear weight",
    _check_looks_linear,
    hints=[
        "crelu(x) is [ReLU(x), ReLU(-x)]: twice as many numbers as x. The weight after it has twice as many "
        "columns as U.",
        "ReLU(x) - ReLU(-x) = x for every number x. Which halves of W must multiply ReLU(x) and ReLU(-x)?",
        "`torch.cat([a, b], dim=1)` puts two matrices side by side.",
    ],
)
