"""Hyper-connections: n copies of the residual stream, X of shape (..., n, d), mixed on the skip
path by an n x n matrix H (X <- H X + F(LN(the streams' average)); n = 1, H = 1 is the pre-LN
block), and the doubly stochastic constraint (Sinkhorn) of manifold-constrained ones. Over L
layers the skip path multiplies by H_L ... H_1, which compounds like any product (notebook 07)
unless H is doubly stochastic (entries >= 0, rows and columns summing to 1): then no stream is
amplified and the streams' average is an exact residual stream."""
from __future__ import annotations

from itertools import accumulate

import numpy as np
import torch
from torch import nn

from .blocks import LayerNormResidualBlock
from .plotting import PALETTE, _plot_log_safe, _log_ticks
from .validation import (check_bool, check_choice, check_cost, check_figure, check_float, check_int, check_tensor,
                         invalid)

__all__ = ["sinkhorn", "mixing_matrices", "composite_gain", "hyper_stack", "draw_composite_gain"]


def sinkhorn(matrix: torch.Tensor, iterations: int = 20) -> torch.Tensor:
    """A square positive matrix made doubly stochastic (Sinkhorn-Knopp): rows, then columns divided
    by their sums ``iterations`` times; columns then sum to 1 exactly, rows ever more nearly."""
    check_tensor("matrix", matrix, ndim=2, shape_text="(n, n)")
    if matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise invalid("matrix", "a square (n, n) tensor with n >= 1", matrix)
    if not bool(torch.isfinite(matrix).all()) or not bool((matrix > 0).all()):
        raise invalid("matrix", "a tensor of finite positive entries (for example torch.exp(logits))", matrix)
    iterations = check_int("iterations", iterations, minimum=1, maximum=10_000)
    for _ in range(iterations):
        matrix = matrix / matrix.sum(dim=1, keepdim=True)
        matrix = matrix / matrix.sum(dim=0, keepdim=True)
    return matrix


def mixing_matrices(depth: int, streams: int = 4, *, spread: float = 0.2, constrained: bool = False,
                    seed: int = 0) -> list[torch.Tensor]:
    """``depth`` float64 mixing matrices near the identity, as learning might leave them: from
    G_l ~ N(0, 1) drawn from ``seed``, H_l = I + ``spread`` G_l, or constrained
    sinkhorn(exp(4 I + ``spread`` G_l)) (about 0.95 on the diagonal), the same G_l in both."""
    depth = check_int("depth", depth, minimum=1)
    streams = check_int("streams", streams, minimum=1)
    spread = check_float("spread", spread, minimum=0.0, maximum=10.0)
    constrained = check_bool("constrained", constrained)
    seed = check_int("seed", seed, minimum=0)
    check_cost({"depth": depth, "streams": streams},
               lambda depth, streams: (8.0 * depth * streams ** 2, 100.0 * depth * streams ** 2),
               what="the mixing matrices")
    generator = torch.Generator().manual_seed(seed)
    eye = torch.eye(streams, dtype=torch.float64)
    noises = (torch.randn(streams, streams, generator=generator, dtype=torch.float64) for _ in range(depth))
    return [sinkhorn(torch.exp(4 * eye + spread * g), 50) if constrained else eye + spread * g for g in noises]


def composite_gain(matrices, *, direction: str = "forward") -> np.ndarray:
    """The most the skip path can amplify a signal after l = 1, 2, ..., L layers, exactly 1 for
    doubly stochastic matrices. ``"forward"``: a stream, the largest absolute row sum of
    H_l ... H_1; ``"backward"``: a gradient coming back through it (X <- H X sends H^T times the
    gradient back), the largest absolute column sum, the measure mHC uses for the backward pass."""
    direction = check_choice("direction", direction, ("forward", "backward"))
    if not isinstance(matrices, (list, tuple)) or not matrices:
        raise invalid("matrices", "a non-empty list of square tensors (from mixing_matrices)", matrices,
                      error=TypeError)
    for matrix in matrices:  # the first is checked before the others are compared with it
        check_tensor("matrices", matrix, ndim=2, shape_text="(n, n)")
        if matrix.shape[0] != matrix.shape[1] or matrix.shape != matrices[0].shape:
            raise invalid("matrices", "square tensors all of the same size", matrix)
    products = accumulate((matrix.double() for matrix in matrices), lambda product, matrix: matrix @ product)
    summed = 1 if direction == "forward" else 0  # row sums, or column sums
    return np.array([float(product.abs().sum(dim=summed).max()) for product in products])


class _HyperConnectionLayer(nn.Module):
    """One layer X <- H X + F(LN(mean of the streams)) on X of shape (..., n, d), F the branch of
    ``blocks.LayerNormResidualBlock`` (Linear(d, 4d), GELU, Linear(4d, d))."""

    def __init__(self, mixing: torch.Tensor, d: int):
        super().__init__()
        self.register_buffer("mixing", mixing.detach().clone())
        self.block = LayerNormResidualBlock(d, norm="pre")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        write = self.block.branch(self.block.norm(x.mean(dim=-2)))
        return self.mixing.to(x.dtype) @ x + write.unsqueeze(-2)


def hyper_stack(depth: int, *, streams: int = 4, d: int = 32, spread: float = 0.2, constrained: bool = False,
                seed: int = 0) -> nn.Sequential:
    """``depth`` float64 hyper-connection layers mixed by ``mixing_matrices``, branches drawn by
    torch's default initialisation from ``seed`` (the same for both mixings; global seed kept)."""
    matrices = mixing_matrices(depth, streams, spread=spread, constrained=constrained, seed=seed)
    d = check_int("d", d, minimum=1)
    check_cost({"depth": depth, "d": d}, lambda depth, d: (8.0 * depth * 9 * d * d, 2.0 * depth * 9 * d * d),
               what="the branch weights of every layer")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(*(_HyperConnectionLayer(m, d) for m in matrices)).double()


def draw_composite_gain(fig, gains: dict) -> str:
    """A line per entry of ``gains`` (label -> ``composite_gain``) on a log axis against layers,
    a dashed one at 1 (the identity's gain); returns each line's last value."""
    check_figure("fig", fig)
    if not isinstance(gains, dict) or not gains:
        raise invalid("gains", "a non-empty dict label -> composite_gain(...) array", gains, error=TypeError)
    fig.clear()
    ax = fig.add_subplot(1, 1, 1)
    notes = []
    for index, (label, values) in enumerate(gains.items()):
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 1 or values.size == 0:
            raise invalid("gains", "arrays of one gain per layer", values)
        # Unconstrained, then doubly stochastic (Sinkhorn) hyper-connections, then the rest.
        color = PALETTE[1 + index] if index < 2 else PALETTE[3 + index % 4]
        _plot_log_safe(ax, np.arange(1, values.size + 1), values, color=color, label=str(label))
        notes.append(f"{label}: {values[-1]:.3g} after {values.size} layers")
    ax.axhline(1.0, color="0.4", ls="--", lw=1, label="identity (gain 1)")
    ax.set(xlabel="layers L", ylabel="largest row sum of |H_L ... H_1|",
           title="The skip path's gain: unconstrained mixing compounds, doubly stochastic stays at 1")
    _log_ticks(ax)
    ax.legend(loc="upper left", fontsize=9)
    return "; ".join(notes)
