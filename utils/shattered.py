"""Shattered gradients (Balduzzi et al. 2017): how a deep network's input gradient changes from one
input to the next. In a smooth function neighbouring inputs have similar gradients (autocorrelation
near 1); in a deep plain network the gradient looks like white noise (autocorrelation near 0)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch
from torch import nn

from .mlp import make_mlp
from .validation import check_array, check_cost, check_figure, check_int, check_sequence, invalid

__all__ = ["lag1_autocorrelation", "input_gradient_curve", "gradient_autocorrelation", "draw_gradient_curves",
           "gradient_curves_plot"]


def lag1_autocorrelation(values) -> float:
    """Correlation between neighbouring entries of a 1-D sequence (after removing its
    mean): about 1 for a smooth curve, about 0 for white noise, -1 for alternating signs."""
    values = check_array("values", values, ndim=1)
    if len(values) < 3:
        raise invalid("values", "at least 3 numbers", values)
    centred = values - values.mean()
    energy = float(centred @ centred)
    if energy == 0.0:
        raise invalid("values", "not constant (a constant sequence has no autocorrelation)", values)
    return float(centred[1:] @ centred[:-1] / energy)


def _freeze_batch_statistics(model: nn.Module, x: torch.Tensor) -> nn.Module:
    """Fix every BatchNorm layer's running statistics at the batch ``x``'s, then eval mode: a fixed
    function of each input, whose gradient is a well-defined curve (``model``: a throwaway)."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # cumulative average: after one batch, exactly that batch's statistics
    model.train()
    with torch.no_grad():
        model(x)
    return model.eval()


def input_gradient_curve(architecture: str, depth: int, *, width: int = 200, n_inputs: int = 256,
                         block_layers: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(x, dy/dx)`` in float64 at ``n_inputs`` evenly spaced x in [-2, 2] for a fresh network
    1 -> width -> ... -> 1 (``make_mlp``), BatchNorm statistics frozen at the batch of inputs."""
    n_inputs = check_int("n_inputs", n_inputs, minimum=3)
    depth = check_int("depth", depth, minimum=2)
    width = check_int("width", width, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    check_cost({"n_inputs": n_inputs, "depth": depth, "width": width},
               lambda n_inputs, depth, width: (8.0 * depth * width * (width + 4 * min(n_inputs, 4096)),
                                               4.0 * n_inputs * depth * width * width),
               what="the weights, the activations and the input gradient")
    # float64: float32 rounding, which differs between CPUs, would reach the printed digits.
    model = make_mlp(architecture, depth, width=width, in_features=1, out_features=1,
                     block_layers=block_layers, seed=seed, dtype=torch.float64)
    model.requires_grad_(False)  # only dy/dx is wanted: backward then skips every weight gradient
    x = torch.linspace(-2.0, 2.0, n_inputs, dtype=torch.float64).unsqueeze(1)
    _freeze_batch_statistics(model, x)
    # In eval mode each output depends on its own input only: chunks keep a deep net's graph small.
    rows = max(16, min(n_inputs, 4096 // depth))
    gradients = [torch.autograd.grad(model(chunk).sum(), chunk)[0][:, 0]
                 for chunk in (part.clone().requires_grad_(True) for part in x.split(rows))]
    return x[:, 0].numpy(), torch.cat(gradients).numpy()


def gradient_autocorrelation(architecture: str, depth: int, *, seeds=(0, 1, 2, 3, 4), **curve_options) -> float:
    """Mean over ``seeds`` of the lag-1 autocorrelation of ``input_gradient_curve``: one
    number per architecture and depth, averaged because a single network is noisy."""
    seeds = check_sequence("seeds", seeds, what="seeds")
    return float(np.mean([lag1_autocorrelation(input_gradient_curve(architecture, depth, seed=s, **curve_options)[1])
                          for s in seeds]))


@lru_cache(maxsize=256)
def _cached_curve(architecture: str, depth: int, block_layers: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``input_gradient_curve`` cached for the widget, read-only: no caller changes the next's."""
    x, grad = input_gradient_curve(architecture, depth, block_layers=block_layers, seed=seed)
    x.flags.writeable = grad.flags.writeable = False
    return x, grad


def draw_gradient_curves(fig, *, depth: int = 18, block_layers: int = 2, seed: int = 0) -> str:
    """dy/dx against x for a plain (top) and a residual (bottom) net of ``depth`` weight layers,
    each over its largest |dy/dx| (only shape matters); returns their lag-1 autocorrelations."""
    from .plotting import PLAIN_COLOR, RESIDUAL_COLOR, _use_fixed_margins  # plotting sets the house style

    check_figure("fig", fig)
    depth = check_int("depth", depth, minimum=2, maximum=200)  # 200 layers take about a second
    block_layers = check_int("block_layers", block_layers, minimum=1, maximum=2)
    seed = check_int("seed", seed, minimum=0)
    ax = fig.subplots()
    _use_fixed_margins(fig, left=0.07, right=0.98, bottom=0.14, top=0.9)
    lines = []
    for offset, architecture, color in ((1.3, "plain", PLAIN_COLOR), (-1.3, "residual", RESIDUAL_COLOR)):
        x, grad = _cached_curve(architecture, depth, block_layers, seed)
        finite = np.isfinite(grad)
        largest = float(np.abs(grad[finite]).max()) if finite.any() else 0.0
        ax.plot(x[finite], offset + grad[finite] / (largest or 1.0), color=color, lw=1.2)
        correlation = lag1_autocorrelation(grad) if finite.all() and np.ptp(grad) > 0 else float("nan")
        ax.text(x[0], offset + 1.08, f"{architecture}: lag-1 autocorrelation {correlation:.2f}"
                f"   (largest |dy/dx| = {largest:.2g})", color=color, fontsize=10)
        lines.append(f"{architecture:>8} depth {depth}: lag-1 autocorrelation of the gradient {correlation:.3f}"
                     + ("" if finite.all() else f" ({int((~finite).sum())} non-finite gradients not drawn)"))
    ax.set_ylim(-2.45, 2.8)
    ax.set_yticks([])  # each curve has its own scale, so a shared y axis would mislead
    ax.set_xticks(np.linspace(x[0], x[-1], 5))
    ax.set(xlabel="input x", ylabel="dy/dx, scaled per curve")
    # A fixed title height skips matplotlib's search for a free spot above the axes.
    ax.set_title(f"Input gradient at depth {depth} ({'one' if block_layers == 1 else 'two'}-layer blocks)", y=1.0)
    return "\n".join(lines)


def gradient_curves_plot(depth: int = 18, block_layers: int = 2):
    """Notebook 09's live plot of ``draw_gradient_curves``: depth (2 to 200 weight layers, redrawn
    on release; the static widget has 2 to 200 log-spaced, with 18 and 52) and the block size."""
    import ipywidgets as widgets

    from .widgets import LivePlot, slider

    depth = check_int("depth", depth, minimum=2, maximum=200)
    block_layers = check_int("block_layers", block_layers, minimum=1, maximum=2)
    controls = {"depth": slider("depth", depth, 2, 200, step=2),
                "block_layers": widgets.ToggleButtons(options=[("two-layer blocks", 2), ("one-layer blocks", 1)],
                                                      value=block_layers, description="blocks")}
    return LivePlot(draw_gradient_curves, controls, width=7, height=4,
                    grid={"depth": [2, 4, 8, 18, 32, 52, 100, 200]})
