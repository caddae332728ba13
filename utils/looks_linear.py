"""A deep plain network without skips or normalisation that still trains: the looks-linear
initialisation (Balduzzi et al. 2017). CReLU, x -> [ReLU(x), ReLU(-x)], doubles the width and the
next weight is [U, -U], U orthogonal: as ReLU(x) - ReLU(-x) = x, the network starts as a product
of orthogonal matrices that keeps every signal's length (dynamical isometry, notebook 03) until
training moves the two halves apart. Depth counts weight layers, as in notebook 08."""
from __future__ import annotations

import torch
from torch import nn

from .validation import check_cost, check_int, check_tensor, invalid

__all__ = ["crelu", "looks_linear", "make_looks_linear_mlp"]


def crelu(x: torch.Tensor) -> torch.Tensor:
    """Concatenated ReLU along the last dimension: [ReLU(x), ReLU(-x)], twice as wide."""
    check_tensor("x", x)
    return torch.cat([torch.relu(x), torch.relu(-x)], dim=-1)


def looks_linear(weight: torch.Tensor) -> torch.Tensor:
    """The weight [U, -U] (shape (out, 2 in)) that, applied to crelu(x), computes U x."""
    check_tensor("weight", weight, ndim=2, shape_text="(out, in)")
    return torch.cat([weight, -weight], dim=1)


def _orthogonal(rows: int, cols: int, generator: torch.Generator) -> torch.Tensor:
    """A random matrix with orthonormal rows or columns (whichever are fewer), from QR."""
    q, r = torch.linalg.qr(torch.randn(max(rows, cols), min(rows, cols), generator=generator))
    q = q * torch.sign(torch.diagonal(r))  # makes the draw uniform over orthogonal matrices
    return q if rows >= cols else q.T


class _LooksLinearMLP(nn.Module):
    """stem Linear -> (CReLU, Linear) x (depth - 2) -> CReLU -> head Linear, no skip, no norm."""

    def __init__(self, depth: int, width: int, in_features: int, classes: int):
        super().__init__()
        self.stem = nn.Linear(in_features, width)
        self.hidden = nn.ModuleList(nn.Linear(2 * width, width) for _ in range(depth - 2))
        self.head = nn.Linear(2 * width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.stem(x)
        for layer in self.hidden:
            h = layer(crelu(h))
        return self.head(crelu(h))


def make_looks_linear_mlp(depth: int, *, width: int = 64, in_features: int = 64, classes: int = 10,
                          seed: int = 0) -> nn.Module:
    """A plain MLP of ``depth`` weight layers, biases 0: an orthogonal stem, CReLU, then weights
    [U, -U] with U orthogonal, drawn from ``seed`` (the global torch seed untouched)."""
    depth = check_int("depth", depth, minimum=2)
    width = check_int("width", width, minimum=1)
    in_features = check_int("in_features", in_features, minimum=1)
    classes = check_int("classes", classes, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    check_cost({"depth": depth, "width": width, "in_features": in_features, "classes": classes},
               lambda depth, width, in_features, classes: (
                   8.0 * (n := 2 * width * (depth * width + in_features + classes)), 4.0 * n),
               what="the weights of every layer")
    if in_features > width:
        raise invalid("in_features", f"at most width={width} for an orthogonal stem that keeps lengths",
                      in_features)
    with torch.random.fork_rng(devices=[]):  # torch's default draws are overwritten below
        model = _LooksLinearMLP(depth, width, in_features, classes)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        model.stem.weight.copy_(_orthogonal(width, in_features, generator))
        for layer in [*model.hidden, model.head]:
            layer.weight.copy_(looks_linear(_orthogonal(layer.out_features, width, generator)))
        for layer in [model.stem, *model.hidden, model.head]:
            layer.bias.zero_()
    return model
