"""Two-dimensional slices of a trained network's loss surface (Li et al. 2018): L(w + a d1 + b d2)
around trained weights w for random directions d1, d2. A layer followed by BatchNorm ignores its
weights' scale, so each row (a "filter") of a direction's matrix is rescaled to the norm of that
row of w (*filter normalisation*); biases and BatchNorm's parameters stay, as in the paper."""
from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn

from .validation import check_cost, check_float, check_int, check_module, check_tensor, invalid

__all__ = ["loss_surface"]


def _filter_normalised_direction(model, *, seed: int = 0) -> list[torch.Tensor]:
    """A random direction from ``seed``, a tensor per parameter: Gaussian for a matrix, each row
    rescaled to the norm of that row of the weights; zero for vectors (biases, BatchNorm's)."""
    generator = torch.Generator().manual_seed(seed)

    def direction(weights):
        if weights.ndim < 2:
            return torch.zeros_like(weights)
        rows = weights.reshape(len(weights), -1)
        d = torch.randn(rows.shape, generator=generator, dtype=weights.dtype)
        scale = rows.norm(dim=1) / d.norm(dim=1).clamp_min(torch.finfo(d.dtype).tiny)
        return (d * scale[:, None]).reshape(weights.shape)

    return [direction(p.detach()) for p in model.parameters()]


@torch.no_grad()
def loss_surface(model, x, y, *, span: float = 1.0, points: int = 17, seed: int = 0):
    """Mean cross-entropy of ``model`` on ``x, y`` at ``w + a d1 + b d2`` for ``points`` values
    each of ``a, b`` in [-span, span], directions from ``seed``, BatchNorm in training mode (eval
    mode would judge every point by the unmoved one's statistics). Returns ``(a, b, losses)``,
    losses[i, j] at a[j], b[i]; the model's weights, running statistics and mode are restored."""
    model = check_module("model", model)
    x = check_tensor("x", x, ndim=2, shape_text="(batch, features)")
    y = check_tensor("y", y, ndim=1, floating=False, shape_text="(batch,) of class indices")
    if y.is_floating_point() or len(y) != len(x):
        raise invalid("y", f"a tensor of {len(x)} class indices (one per row of x)", y)
    span = check_float("span", span, minimum=0.0)
    if span == 0.0:
        raise invalid("span", "above 0", span)
    points = check_int("points", points, minimum=3, maximum=101)
    seed = check_int("seed", seed, minimum=0)
    weights = sum(p.numel() for p in model.parameters())
    check_cost({"points": points}, lambda points: (0.0, 2.0 * points ** 2 * len(x) * weights),
               what=f"{points}x{points} forward passes of the batch x")
    first, second = (_filter_normalised_direction(model, seed=s) for s in (seed, seed + 1))
    saved = [p.detach().clone() for p in model.parameters()]
    state, was_training = copy.deepcopy(model.state_dict()), model.training
    values = np.linspace(-span, span, points)
    losses = np.empty((points, points))
    model.train()
    try:
        for i, b in enumerate(values):
            for j, a in enumerate(values):
                for p, w, d1, d2 in zip(model.parameters(), saved, first, second):
                    p.copy_(w + float(a) * d1 + float(b) * d2)
                losses[i, j] = float(nn.functional.cross_entropy(model(x), y))
    finally:
        model.load_state_dict(state)
        model.train(was_training)
    return values, values.copy(), losses
