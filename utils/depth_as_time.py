"""Depth as time: a residual stack x <- x + h tanh(W_l x) is Euler's method, step h, for
dx/dt = tanh(W(t) x) when its weights W_l = W(l h) come from a smooth W(t) (E 2017; Haber and
Ruthotto 2017; Lu et al. 2018; Chen et al. 2018). Whether the stack has a limit as L grows
depends on how the weights vary across layers and on the branch scale (Marion et al. 2025):
smooth weights with h = 1/L converge to the ODE's solution; independent weights with 1/L leave
the input nearly unchanged, and with 1/sqrt(L) the stream takes a random walk."""
from __future__ import annotations

import math

import numpy as np
import torch

from .plotting import PALETTE, _log_ticks
from .validation import check_cost, check_figure, check_float, check_int, check_sequence, check_tensor, invalid

__all__ = ["smooth_weights", "independent_weights", "residual_flow", "relative_distance", "draw_convergence"]

_FLOAT_TYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
# A reference line as a wide grey band under the data, so a curve lying on it stays visible inside it.
_REFERENCE_BAND = {"color": "0.8", "lw": 8, "solid_capstyle": "round", "zorder": 1}
_SLICE = 1024  # layers of smooth weights computed at once (notebook 13's 16384 layers: 33 MB, not 67)


def _check_sizes(depth, d) -> tuple[int, int]:
    depth, d = check_int("depth", depth, minimum=1), check_int("d", d, minimum=1)
    check_cost({"depth": depth, "d": d}, lambda depth, d: (8.0 * depth * d * d, 20.0 * depth * d * d),
               what="a float64 weight matrix per layer")
    return depth, d


def smooth_weights(depth: int, d: int = 16, *, seed: int = 0) -> torch.Tensor:
    """``depth`` float64 (d, d) weights sampled from one smooth curve, W_l = W(l / depth) with
    W(t) = A cos(pi t) + B sin(pi t), A and B N(0, 1/d) from ``seed``: neighbouring layers have
    nearly equal weights, so a deeper stack samples the same W(t) more finely."""
    depth, d = _check_sizes(depth, d)
    generator = torch.Generator().manual_seed(check_int("seed", seed, minimum=0))
    a, b = (torch.randn(d, d, generator=generator, dtype=torch.float64) / math.sqrt(d) for _ in range(2))
    t = torch.arange(depth, dtype=torch.float64) / depth
    cos, sin = torch.cos(math.pi * t)[:, None, None], torch.sin(math.pi * t)[:, None, None]
    weights = torch.empty(depth, d, d, dtype=torch.float64)
    for start in range(0, depth, _SLICE):  # slice by slice: no second depth x d x d tensor beside the result
        part = slice(start, start + _SLICE)
        torch.add(a * cos[part], b * sin[part], out=weights[part])
    return weights


def independent_weights(depth: int, d: int = 16, *, seed: int = 0) -> torch.Tensor:
    """``depth`` float64 (d, d) weights, every entry N(0, 1/d) independently (a standard
    initialisation): no two layers alike, however deep the stack."""
    depth, d = _check_sizes(depth, d)
    generator = torch.Generator().manual_seed(check_int("seed", seed, minimum=0))
    return torch.randn(depth, d, d, generator=generator, dtype=torch.float64) / math.sqrt(d)


def _flow(x: torch.Tensor, weights: torch.Tensor, scale: float, stream: torch.dtype = torch.float64,
          write: torch.dtype = torch.float64) -> torch.Tensor:
    """x <- x + scale tanh(x W_l^T) for every layer: each write computed in float64 from the
    stream, rounded to ``write``, added to the stream in ``stream`` (both rounded per entry, so
    the result is the same on every CPU); returned in float64."""
    x = x.to(stream)
    for weight in weights:
        branch = (scale * torch.tanh(x.double() @ weight.T)).to(write)
        x = x + branch.to(stream)
    return x.double()


def _check_flow(x, weights) -> None:
    check_tensor("weights", weights, ndim=3, shape_text="(depth, d, d)")
    if weights.shape[1] != weights.shape[2] or weights.dtype != torch.float64:
        raise invalid("weights", "a float64 tensor of shape (depth, d, d), e.g. from smooth_weights", weights)
    check_tensor("x", x, ndim=2, last_dim=weights.shape[-1], shape_text=f"(batch, {weights.shape[-1]})")
    if not torch.isfinite(x).all():
        raise invalid("x", "finite (it contains NaN or infinity)")


def residual_flow(x: torch.Tensor, weights: torch.Tensor, scale: float) -> torch.Tensor:
    """The stack's output for inputs ``x`` (batch, d): x <- x + ``scale`` tanh(x W_l^T) for each
    W_l of ``weights`` (depth, d, d) in turn, in float64. With smooth weights and scale 1/depth,
    Euler's method for dx/dt = tanh(W(t) x) from t = 0 to 1."""
    _check_flow(x, weights)
    scale = check_float("scale", scale, minimum=0.0, maximum=100.0)
    return _flow(x, weights, scale)


def relative_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    """||a - b|| / ||b||, over all entries: how far ``a`` is from ``b`` as a share of ``b``."""
    check_tensor("b", b)
    check_tensor("a", a)
    if a.shape != b.shape:
        raise invalid("a", f"a tensor of b's shape {tuple(b.shape)}", a)
    if not float(b.norm()) > 0:
        raise invalid("b", "a tensor with a non-zero entry", b)
    return float((a.double() - b.double()).norm() / b.double().norm())


def draw_convergence(fig, errors: dict, depths) -> str:
    """Log-log plot of each entry of ``errors`` (label -> one error per depth of ``depths``)
    against depth, with a wide grey band falling like 1/L through the first curve's first point;
    returns each curve's slope between its first and last depth."""
    check_figure("fig", fig)
    depths = np.asarray([check_int("depths", d, minimum=1) for d in check_sequence("depths", depths, what="depths")],
                        dtype=np.float64)
    if depths.size < 2:
        raise invalid("depths", "at least two depths", depths)
    if not isinstance(errors, dict) or not errors:
        raise invalid("errors", "a non-empty dict label -> one error per depth", errors, error=TypeError)
    fig.clear()
    ax = fig.add_subplot(1, 1, 1)
    notes = []
    for index, (label, values) in enumerate(errors.items()):
        values = np.asarray(values, dtype=np.float64)
        if values.shape != depths.shape or not np.all(values > 0) or not np.all(np.isfinite(values)):
            raise invalid("errors", f"{depths.size} positive finite errors per label", values)
        ax.plot(depths, values, "o-", color=PALETTE[index % len(PALETTE)], label=str(label))
        slope = math.log(values[-1] / values[0]) / math.log(depths[-1] / depths[0])
        notes.append(f"{label}: slope {slope:.2f}")
    first = np.asarray(next(iter(errors.values())), dtype=np.float64)
    ax.plot(depths, first[0] * depths[0] / depths, **_REFERENCE_BAND, label="falls like 1/L")
    _finish_depth_axes(ax, depths, "Depth as time: the stack's output converges as L grows")
    return "; ".join(notes)


def _finish_depth_axes(ax, depths, title: str) -> None:
    """Log-log axes of error against depth, one tick per depth measured (shared with low_precision)."""
    ax.set(xscale="log", yscale="log", xlabel="depth L (layers, step h = 1/L)",
           ylabel="distance to the ODE's solution (relative)", title=title)
    _log_ticks(ax)
    ax.set_xticks(depths, [f"{d:g}" for d in depths])
    ax.legend(fontsize=9)
