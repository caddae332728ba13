"""Plain and residual MLPs with depth counted in weight layers as He et al. (2015) count it:
a stem, blocks of ``block_layers`` layers (Linear without bias, BatchNorm, ReLU), a head.
Both have the same layers and parameters; the residual one only adds the skip path, as the
original post-activation ResNet block ReLU(x + F(x)), F the layers without the last ReLU.
He-normal weights keep the forward signal's second moment constant in a plain ReLU stack.
"""
from __future__ import annotations

import copy

import torch
from torch import nn

from .blocks import _seeded_linears
from .validation import check_choice, check_cost, check_int, check_module, check_tensor, invalid

__all__ = ["BatchNormResidualBlock", "MLP", "make_mlp", "weight_layers", "branch_to_skip_ratios"]

_ARCHITECTURES = ("plain", "residual")


def _check_size(architecture, depth, width, in_features, out_features, block_layers, *, minimum_depth=2) -> None:
    """The checks of every constructor here: names, ranges, and memory and time for the weights."""
    check_choice("architecture", architecture, _ARCHITECTURES)
    block_layers = check_int("block_layers", block_layers, minimum=1, maximum=8)
    depth = check_int("depth", depth, minimum=minimum_depth)
    if (depth - 2) % block_layers and minimum_depth == 2:
        raise invalid("depth", f"2 (stem and head) plus a multiple of block_layers={block_layers}", depth,
                      fix=f"try {depth - (depth - 2) % block_layers} or "
                          f"{depth - (depth - 2) % block_layers + block_layers}")
    sizes = {"depth": depth, "width": check_int("width", width, minimum=1),
             "in_features": check_int("in_features", in_features, minimum=1),
             "out_features": check_int("out_features", out_features, minimum=1)}

    def cost(depth, width, in_features, out_features):
        numbers = depth * width * (width + 4) + (in_features + out_features) * width
        return 4.0 * numbers, 2.0 * numbers

    check_cost(sizes, cost, what="the weights of every layer")


def _layer(width: int) -> list[nn.Module]:
    return [nn.Linear(width, width, bias=False), nn.BatchNorm1d(width), nn.ReLU()]


class _BatchNormPlainBlock(nn.Module):
    """``block_layers`` layers (Linear, BatchNorm, ReLU) in sequence, no skip path."""

    def __init__(self, width: int, block_layers: int = 2):
        super().__init__()
        self.layers = nn.ModuleList(nn.Sequential(*_layer(width)) for _ in range(block_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class BatchNormResidualBlock(nn.Module):
    """ReLU(x + F(x)) with F = the plain block's layers minus the last ReLU."""

    def __init__(self, width: int, block_layers: int = 2):
        super().__init__()
        _check_size("residual", block_layers, width, 1, 1, block_layers, minimum_depth=1)
        modules = [m for _ in range(block_layers) for m in _layer(width)]
        self.branch = nn.Sequential(*modules[:-1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.branch(x))


class MLP(nn.Module):
    """stem (in -> width layer) -> blocks -> head (Linear width -> out). See ``make_mlp``."""

    def __init__(self, architecture: str, depth: int, width: int, in_features: int, out_features: int,
                 block_layers: int):
        super().__init__()
        _check_size(architecture, depth, width, in_features, out_features, block_layers)
        self.architecture, self.depth = architecture, depth
        block = BatchNormResidualBlock if architecture == "residual" else _BatchNormPlainBlock
        self.stem = nn.Sequential(nn.Linear(in_features, width, bias=False), nn.BatchNorm1d(width), nn.ReLU())
        self.blocks = nn.ModuleList(block(width, block_layers) for _ in range((depth - 2) // block_layers))
        self.head = nn.Linear(width, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def make_mlp(architecture: str, depth: int, *, width: int = 64, in_features: int = 64,
             out_features: int = 10, block_layers: int = 2, seed: int | None = None,
             dtype: torch.dtype | None = None) -> MLP:
    """A ``"plain"`` or ``"residual"`` MLP of ``depth`` weight layers, He-normal weights and
    zero biases, drawn from a private generator with ``seed`` (plain and residual nets of one
    seed get identical weights) in ``dtype``: float64 draws are the same on every CPU, float32
    ones differ in their last bits, enough to move a deep plain net's gradient by per cents."""
    if seed is not None:
        seed = check_int("seed", seed, minimum=0)
    if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype in (torch.float32, torch.float64)):
        raise invalid("dtype", "torch.float32, torch.float64 or None", dtype, error=TypeError)
    return _seeded_linears(
        lambda: MLP(architecture, depth, width, in_features, out_features, block_layers).to(dtype),
        None if seed is None else torch.Generator().manual_seed(seed),
        lambda _, layer: (2.0 / layer.in_features) ** 0.5)  # He-normal, fan-in mode, ReLU gain


def weight_layers(model: MLP) -> int:
    """Count the weight (Linear) layers of ``model``: equals its ``depth``."""
    check_module("model", model)
    return sum(isinstance(m, nn.Linear) for m in model.modules())


@torch.no_grad()
def branch_to_skip_ratios(model: MLP, x: torch.Tensor) -> list[float]:
    """For each residual block of ``model``, Var(F(h)) / Var(h): what the branch adds over
    what the skip carries, over the batch ``x`` in training mode. BatchNorm keeps every
    branch's variance about 1 while the skip accumulates, so the ratio falls with depth (De
    and Smith 2020). A copy runs the batch: the model's running statistics are untouched."""
    wanted = "a residual utils.mlp.MLP (from make_mlp)"
    check_module("model", model, MLP, what=wanted)
    if model.architecture != "residual":
        raise invalid("model", f"{wanted}, not a {model.architecture} one", error=TypeError)
    features = model.stem[0].in_features
    check_tensor("x", x, ndim=2, last_dim=features, shape_text=f"(batch, {features})")
    if len(x) < 2:
        raise invalid("x", f"a tensor of shape (batch of at least 2, {features})", x)
    probe = copy.deepcopy(model).train()
    h = probe.stem(x.to(next(probe.parameters()).dtype))
    ratios = []
    for block in probe.blocks:
        ratios.append(float(block.branch(h).var() / h.var()))
        h = block(h)
    return ratios
