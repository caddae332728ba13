"""One residual block in plain NumPy, small enough to check by hand: y = skip + F(x) with
the branch F(x) = W2 ReLU(W1 x) (no biases) and the skip path carrying x itself, or W_s x
when the branch changes the size (a projection shortcut)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .validation import check_array

__all__ = ["BlockSteps", "forward"]


class BlockSteps(NamedTuple):
    """Every intermediate value of one pass, so a notebook can print the worked example."""

    pre: np.ndarray  # W1 x
    hidden: np.ndarray  # ReLU(W1 x)
    branch: np.ndarray  # F(x) = W2 ReLU(W1 x), the residual
    skip: np.ndarray  # what the skip path carries: x, or W_s x
    y: np.ndarray  # skip + F(x)


def forward(x, w1, w2, w_s=None) -> BlockSteps:
    """Every step (``BlockSteps``) of the block on one vector ``x``; ``w1`` has shape
    (hidden, n), ``w2`` (m, hidden), and ``w_s`` (m, n) carries the skip path when m != n."""
    x = check_array("x", x, ndim=1)
    n = x.shape[0]
    w1 = check_array("w1", w1, ndim=2, shape=(None, n))
    w2 = check_array("w2", w2, ndim=2, shape=(None, w1.shape[0]))
    m = w2.shape[0]
    if w_s is None:
        if m != n:
            raise ValueError(
                f"size mismatch: w2 makes the branch F(x) {m} numbers long but x has {n}; "
                f"y = x + F(x) adds entry by entry, so the sizes must match. Pass w_s, a "
                f"projection of shape ({m}, {n}), so the skip path carries W_s x instead of x.")
        skip = x.copy()
    else:
        skip = check_array("w_s", w_s, ndim=2, shape=(m, n)) @ x
    pre = w1 @ x
    hidden = np.maximum(pre, 0.0)  # ReLU
    branch = w2 @ hidden
    return BlockSteps(pre=pre, hidden=hidden, branch=branch, skip=skip, y=skip + branch)
