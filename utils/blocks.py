"""The PyTorch blocks of notebooks 05 to 07, with the branch F(x) = Linear(4d, d)(GELU(
Linear(d, 4d)(x))) and one LayerNorm: pre-norm y = x + s * F(LN(x)), post-norm
y = LN(x + s * F(x)) (s fixed or ReZero's learnable gate), plain y = F(LN(x)), and stacks.
Every block creates its first Linear before its second, so a seeded build draws the
weights in a fixed order (notebook 06's reference 30-block computation depends on it).
"""
from __future__ import annotations

import numbers
from functools import lru_cache

import numpy as np
import torch
from matplotlib.ticker import MaxNLocator
from torch import nn

from . import plotting
from .validation import (check_array, check_bool, check_choice, check_cost, check_figure, check_float, check_int,
                         check_module, check_sequence, check_tensor, check_text, invalid)

__all__ = ["NORM_POSITIONS", "REZERO", "block_numbers", "check_scale", "LayerNormResidualBlock",
           "LayerNormPlainBlock", "ReZeroBlock", "make_block", "make_stack", "draw_std_through_stack", "output_stats",
           "DEMO_SEED", "demo_input", "demo_block", "draw_block", "block_plot"]

NORM_POSITIONS = ("pre", "post")
REZERO = "rezero"


def block_numbers(d: int) -> int:
    """How many numbers (weights and biases) one block of width ``d`` holds: a LayerNorm
    (2d) and Linear(d, 4d) and Linear(4d, d) (8d^2 + 5d). Sizes the memory checks."""
    d = check_int("d", d, minimum=1)
    return 8 * d * d + 7 * d


def _stack_cost(depth: int, d: int) -> tuple[float, float]:
    """Bytes (float32 weights) and operations (one draw per weight) of a stack's build."""
    numbers = depth * block_numbers(d)
    return 4.0 * numbers, float(numbers)


def _check_d(d) -> int:
    d = check_int("d", d, minimum=1)
    check_cost({"d": d}, lambda d: _stack_cost(1, d), what="the weights of one block")
    return d


def _seeded_linears(build, generator: torch.Generator | None, std) -> nn.Module:
    """``build()``, then every Linear's weight redrawn N(0, ``std(name, layer)``) from
    ``generator``, its bias zeroed; torch's default draws use a fork, sparing the global seed."""
    with torch.random.fork_rng(devices=[]):
        model = build()
    with torch.no_grad():
        for name, layer in model.named_modules():
            if isinstance(layer, nn.Linear):
                layer.weight.normal_(0.0, std(name, layer), generator=generator)
                if layer.bias is not None:
                    layer.bias.zero_()
    return model


def _check_input(x, d: int) -> None:
    """Fail with a clear message before torch fails with a shape error deep inside."""
    check_tensor("x", x, last_dim=d, shape_text=f"(..., {d}), whose last dimension d={d} is the block's width")


def check_scale(scale):
    """Return ``scale`` as a float, or the string ``"rezero"``; raise otherwise."""
    if isinstance(scale, str):
        if scale.lower() != REZERO:
            raise invalid("scale", "a number or 'rezero'", scale)
        return REZERO
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise invalid("scale", "a number or 'rezero'", scale, error=TypeError)
    return check_float("scale", scale)


class _LayerNormLayers(nn.Module):
    """A LayerNorm and the branch F, fc1 created first: seeded builds depend on this order."""

    def __init__(self, d: int):
        super().__init__()
        self.d = _check_d(d)
        self.norm = nn.LayerNorm(self.d)
        self.fc1 = nn.Linear(self.d, 4 * self.d)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * self.d, self.d)

    def branch(self, x: torch.Tensor) -> torch.Tensor:
        """F(x) = Linear(4d, d)(GELU(Linear(d, 4d)(x))), before scaling."""
        return self.fc2(self.act(self.fc1(x)))


class LayerNormResidualBlock(_LayerNormLayers):
    """y = x + s * F(LN(x)) (``norm="pre"``) or y = LN(x + s * F(x)) (``norm="post"``), with
    ``scale`` s a fixed number or ``"rezero"``: ReZero's learnable ``alpha`` from 0, so a
    pre-norm gated block starts as the identity (ReZero as published: ``ReZeroBlock``)."""

    def __init__(self, d: int, norm: str = "pre", scale=1.0):
        norm, scale = check_choice("norm", norm, NORM_POSITIONS), check_scale(scale)
        super().__init__(d)
        self.norm_position = norm
        self.alpha = nn.Parameter(torch.zeros(())) if scale == REZERO else None
        self.fixed_scale = None if scale == REZERO else scale

    @property
    def scale(self) -> float:
        """The branch scale s now (for ReZero, the current value of alpha)."""
        return float(self.alpha.detach()) if self.alpha is not None else self.fixed_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input(x, self.d)
        s = self.alpha if self.alpha is not None else self.fixed_scale
        if self.norm_position == "pre":
            return x + s * self.branch(self.norm(x))
        return self.norm(x + s * self.branch(x))

    def extra_repr(self) -> str:
        scale = REZERO if self.alpha is not None else self.fixed_scale
        return f"d={self.d}, norm={self.norm_position!r}, scale={scale!r}"


class LayerNormPlainBlock(_LayerNormLayers):
    """The same layers as ``LayerNormResidualBlock`` in sequence, with no skip path:
    y = Linear(4d, d)(GELU(Linear(d, 4d)(LN(x))))."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input(x, self.d)
        return self.branch(self.norm(x))

    def extra_repr(self) -> str:
        return f"d={self.d}"


class ReZeroBlock(nn.Module):
    """ReZero as Bachlechner et al. (2021) publish it: y = x + alpha * F(x), the course's branch
    F, alpha learnable from 0, **no LayerNorm**. Notebook 11's recipes set ``relu=True`` (ReLU,
    d hidden), a fixed ``multiplier`` s in y = x + alpha * s * F(x), alpha's start or ``None``."""

    def __init__(self, d: int, *, relu: bool = False, multiplier: float = 1.0,
                 alpha: float | None = 0.0):
        super().__init__()
        self.d = _check_d(d)
        hidden = self.d if check_bool("relu", relu) else 4 * self.d
        self.multiplier = check_float("multiplier", multiplier)
        self.fc1 = nn.Linear(self.d, hidden)  # created first, as in _LayerNormLayers
        self.act = nn.ReLU() if relu else nn.GELU()
        self.fc2 = nn.Linear(hidden, self.d)
        alpha = None if alpha is None else check_float("alpha", alpha)
        self.alpha = None if alpha is None else nn.Parameter(torch.tensor(alpha))

    def branch(self, x: torch.Tensor) -> torch.Tensor:
        """What the block adds to its input: alpha * s * F(x)."""
        out = self.multiplier * self.fc2(self.act(self.fc1(x)))
        return out if self.alpha is None else self.alpha * out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input(x, self.d)
        return x + self.branch(x)

    def extra_repr(self) -> str:
        alpha = None if self.alpha is None else float(self.alpha.detach())
        return f"d={self.d}, multiplier={self.multiplier:g}, alpha={alpha}"


def make_block(d: int, *, residual: bool = True, norm: str = "pre", scale=1.0) -> nn.Module:
    """One block: ``LayerNormResidualBlock(d, norm, scale)`` or, with ``residual=False``,
    ``LayerNormPlainBlock(d)`` (no skip path: ``norm`` and ``scale`` are checked, not used)."""
    if check_bool("residual", residual):
        return LayerNormResidualBlock(d, norm=norm, scale=scale)
    check_choice("norm", norm, NORM_POSITIONS)
    check_scale(scale)
    return LayerNormPlainBlock(d)


def make_stack(depth: int, d: int, *, residual: bool = True, norm: str = "pre", scale=1.0) -> nn.Sequential:
    """``depth`` blocks of width ``d`` in sequence, built in order (seed torch first for
    a reproducible stack). The stack every depth experiment in the course uses."""
    depth = check_int("depth", depth, minimum=1)
    check_cost({"depth": depth, "d": _check_d(d)}, _stack_cost, what="the weights of every block")
    return nn.Sequential(*(make_block(d, residual=residual, norm=norm, scale=scale) for _ in range(depth)))


# ----- notebook 05: one block on one input, and its widget --------------------------------

def draw_std_through_stack(fig, stds: dict) -> None:
    """Notebook 05's std of the activations after each block (0 = the input), one curve
    per configuration in ``stds`` (name -> list of stds), "plain" in the plain colour."""
    check_figure("fig", fig)
    if not isinstance(stds, dict) or not stds:
        raise invalid("stds", "a non-empty dict mapping a configuration's name to its list of stds", stds,
                      error=TypeError)
    others = (plotting.RESIDUAL_COLOR, plotting.PALETTE[2], plotting.PALETTE[3], plotting.PALETTE[4])
    if sum(name != "plain" for name in stds) > len(others):
        raise invalid("stds", f"at most {len(others)} configurations besides 'plain' (one colour each)", stds)
    traces = {}
    for name, trace in stds.items():  # every trace is checked before anything is drawn
        check_text("stds' names", name)
        key = f"stds[{name!r}]"
        traces[name] = check_array(key, check_sequence(key, trace, what="numbers"), ndim=1)
        if traces[name].size < 2:
            raise invalid(key, "a list of at least two numbers", traces[name])
    others = iter(others)
    ax = fig.subplots()
    for name, values in traces.items():
        color = plotting.PLAIN_COLOR if name == "plain" else next(others)
        dashed = "rezero" in name.lower()  # dashed, so a curve underneath it still shows
        ax.plot(range(values.size), values, color=color, label=name, linestyle=(0, (4, 3)) if dashed else "-")
    ax.set(xlabel="block (0 = the input)", ylabel="std of the activation",
           title="Pre-norm activations grow; post-norm and the gate stay put")
    ax.legend(fontsize=11, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)  # below: no curve hidden


def output_stats(block: nn.Module, x: torch.Tensor) -> dict:
    """What one block does to ``x``: mean and (unbiased) std of input and output over all
    entries, the relative change ||y - x|| / ||x||, and the largest deviation of any
    token's feature mean from 0 and of its (biased, as LayerNorm uses) std from 1."""
    check_module("block", block)
    check_tensor("x", x, last_dim=getattr(block, "d", None))
    with torch.no_grad():
        y = block(x)
        return {
            "input_mean": float(x.mean()), "input_std": float(x.std()),
            "output_mean": float(y.mean()), "output_std": float(y.std()),
            "relative_change": float((y - x).norm() / x.norm()),
            "token_mean_off": float(y.mean(dim=-1).abs().max()),
            "token_std_off": float((y.std(dim=-1, unbiased=False) - 1).abs().max()),
        }


_DEMO_D = 128
DEMO_SEED = 0


def demo_input() -> torch.Tensor:
    """Notebook 05's random input: 64 token vectors of width 128, standard normal (seed 1)."""
    return torch.randn(64, _DEMO_D, generator=torch.Generator().manual_seed(DEMO_SEED + 1))


def demo_block(norm: str = "pre", scale=1.0) -> LayerNormResidualBlock:
    """Notebook 05's block for one configuration, always with the same weights (built
    after seed 0 without touching the global random state)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(DEMO_SEED)
        return LayerNormResidualBlock(_DEMO_D, norm=norm, scale=scale)


@lru_cache(maxsize=32)
def _demo_result(norm: str, scale) -> tuple[np.ndarray, np.ndarray, dict]:
    block = demo_block(norm, scale)
    x = demo_input()
    with torch.no_grad():
        y = block(x)
    # The first 16 tokens (2048 points) are plenty for the picture and keep redraws fast.
    return x[:16].flatten().numpy(), y[:16].flatten().numpy(), output_stats(block, x)


def draw_block(fig, norm: str = "pre", scale: float = 1.0, rezero: bool = False) -> str:
    """Notebook 05's widget picture: output against input entries (the diagonal is the
    identity) of one block on ``demo_input()``; returns the statistics as text."""
    check_figure("fig", fig)
    check_bool("rezero", rezero)
    norm = check_choice("norm", norm, NORM_POSITIONS)
    scale = REZERO if rezero else check_scale(scale)
    xs, ys, stats = _demo_result(norm, scale)
    ax = fig.subplots()
    plotting._use_fixed_margins(fig, left=0.12, right=0.97, bottom=0.14, top=0.9)  # faster than constrained
    # Rasterised: as vectors the 2,048 points made a 320 KiB SVG, slow to send and decode.
    ax.plot(xs, ys, ".", ms=2, alpha=0.5, color=plotting.RESIDUAL_COLOR, label="one entry", rasterized=True)
    lim = float(max(abs(xs).max(), abs(ys).max())) * 1.05
    ax.plot([-lim, lim], [-lim, lim], "--", color="grey", lw=1, label="y = x (identity)")
    ax.set(xlim=(-lim, lim), ylim=(-lim, lim), xlabel="input entry x", ylabel="output entry y")
    for axis in (ax.xaxis, ax.yaxis):  # five ticks: enough, and faster than the default nine
        axis.set_major_locator(MaxNLocator(nbins=5))
    ax.legend(loc="upper left", fontsize=11)
    # An explicit y skips matplotlib's automatic title placement, a costly extra layout pass.
    ax.set_title(f"The output moved {stats['relative_change']:.3f} of the input's size", y=1.0)
    formula = {"pre": "y = x + s * F(LN(x))", "post": "y = LN(x + s * F(x))"}[norm]
    scale_text = "ReZero-style gate: s = alpha, learnable, 0 at init" if rezero else f"s = {scale:g} (fixed)"
    stats = {key: round(value, 4) + 0.0 for key, value in stats.items()}  # a printed -0.0000 becomes 0.0000
    lines = [f"{formula}   with {scale_text}",
             f"input : mean {stats['input_mean']:+.4f}  std {stats['input_std']:.4f}",
             f"output: mean {stats['output_mean']:+.4f}  std {stats['output_std']:.4f}",
             f"||y - x|| / ||x|| = {stats['relative_change']:.4f}"]
    if rezero and norm == "pre":
        lines.append("alpha = 0: the branch is switched off and y equals x exactly (identity).")
    elif rezero:
        lines.append("alpha = 0 but post-norm still normalises: y = LN(x), not x itself.")
    return "\n".join(lines)


def block_plot(norm: str = "pre", scale: float = 1.0, rezero: bool = False):
    """Notebook 05's live plot: norm position, fixed scale 0 to 3 (checked first: a slider
    would silently clip it) and a ReZero-style gate, which greys out the scale."""
    import ipywidgets as widgets

    from .widgets import LivePlot

    check_choice("norm", norm, NORM_POSITIONS)
    check_float("scale", scale, minimum=0.0, maximum=3.0)
    check_bool("rezero", rezero)

    controls = {
        "norm": widgets.ToggleButtons(options=[("pre-norm", "pre"), ("post-norm", "post")], value=norm,
                                      description="norm"),
        "scale": widgets.FloatSlider(value=scale, min=0.0, max=3.0, step=0.1, description="scale s"),
        "rezero": widgets.Checkbox(value=rezero, description="ReZero-style gate (s = alpha, 0 at init)"),
    }
    return LivePlot(draw_block, controls, width=6, height=4.5, greyed={"scale": lambda values: values["rezero"]},
                    grid={"scale": [0.0, 0.1, 0.3, 0.5, 1.0, 2.0, 3.0]})
