"""Recipes that let very deep residual stacks train without normalisation, tried on a
residual MLP of blocks x + s * F(x), F = Linear -> ReLU -> Linear, no normalisation
anywhere; and DeepNorm's constants. Depth counts weight layers (a stem, (depth - 2) / 2
two-layer blocks, a head), so ``depth=56`` has L = 27 residual branches. The recipes:

* ``"default"``: He-normal weights everywhere (the ResNet initialisation), s = 1.
* ``"scaled"``: every branch multiplied by the fixed constant s = 1/sqrt(L).
* ``"init-only"``: the last layer of every branch initialised 1/sqrt(L) smaller, s = 1:
  GPT-2's initialisation-only scaling (Radford et al. 2019), here without LayerNorm and
  under SGD, not the setting GPT-2 uses it in.
* ``"rezero"``: s is a learnable scalar per branch starting at 0 (ReZero, Bachlechner et
  al. 2020; SkipInit, De and Smith 2020: without normalisation the two coincide).
* ``"fixup"``: the last layer of every branch and the classifier start at 0, the other
  branch layer is rescaled by L^(-1/2) (= L^(-1/(2m-2)) for m = 2 layers per branch), and
  each branch gets a learnable multiplier starting at 1 (Zhang, Dauphin and Ma 2019).
"""
from __future__ import annotations

import math
import numbers
from functools import lru_cache

import numpy as np
import torch
from torch import nn

from .blocks import ReZeroBlock, _seeded_linears
from .plotting import PALETTE, _log_safe, _plot_log_safe, _log_ticks, _use_fixed_margins
from .validation import (check_choice, check_cost, check_figure, check_int, check_module,
                         check_sequence, check_tensor, check_text, invalid)

__all__ = ["RECIPES", "deepnorm_constants", "branches", "build_deep_mlp", "signal_at_init", "draw_losses",
           "draw_signal", "signal_plot"]

RECIPES = ("default", "scaled", "init-only", "rezero", "fixup")


def deepnorm_constants(layers: int) -> tuple[float, float]:
    """DeepNorm's ``(alpha, beta)`` for an encoder- or decoder-only model of N = ``layers`` layers
    (Wang et al. 2022): x_{l+1} = LN(alpha * x_l + G(x_l)), alpha = (2N)^(1/4), the FFN and the
    attention's value and output weights initialised beta = (8N)^(-1/4) times smaller."""
    layers = check_int("layers", layers, minimum=1)
    return (2 * layers) ** 0.25, (8 * layers) ** -0.25


def branches(depth: int) -> int:
    """The number L of residual branches in a ``depth``-layer MLP: (depth - 2) / 2."""
    depth = check_int("depth", depth, minimum=2)
    if depth % 2:
        raise invalid("depth", "even (a stem, two-layer blocks, a head)", depth, fix=f"try {depth - 1} or {depth + 1}")
    return (depth - 2) // 2


class _DeepResidualMLP(nn.Module):
    """stem (Linear, ReLU) -> ``ReZeroBlock(relu=True)`` x L -> head (Linear); see ``build_deep_mlp``."""

    def __init__(self, stem: nn.Linear, blocks: list[ReZeroBlock], head: nn.Linear, recipe: str):
        super().__init__()
        self.stem, self.blocks, self.head, self.recipe = stem, nn.ModuleList(blocks), head, recipe

    def stream(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The residual stream after the stem and after every block (L + 1 tensors)."""
        states = [torch.relu(self.stem(x))]
        for block in self.blocks:  # block(h) = h + branch(h), without re-checking h a thousand times deep
            states.append(states[-1] + block.branch(states[-1]))
        return states

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stream(x)[-1])


def build_deep_mlp(depth: int, recipe: str = "default", *, width: int = 64, in_features: int = 64,
                   classes: int = 10, seed: int = 0) -> _DeepResidualMLP:
    """A residual MLP of ``depth`` weight layers without normalisation, initialised with
    ``recipe`` (see the module docstring) from a private generator seeded with ``seed``: every
    recipe starts from the same He-normal draw, and the global seed is untouched."""
    count = branches(depth)
    recipe = check_choice("recipe", recipe, RECIPES)
    width = check_int("width", width, minimum=1)
    in_features = check_int("in_features", in_features, minimum=1)
    classes = check_int("classes", classes, minimum=2)
    seed = check_int("seed", seed, minimum=0)

    def cost(depth, width, in_features, classes):
        numbers = (depth - 2) * width * (width + 1) + (in_features + classes + 1) * width + classes
        return 4.0 * numbers, 2.0 * numbers

    check_cost({"depth": depth, "width": width, "in_features": in_features, "classes": classes}, cost,
               what="the weights of every layer")
    multiplier = 1 / math.sqrt(count) if recipe == "scaled" and count else 1.0
    alpha = {"rezero": 0.0, "fixup": 1.0}.get(recipe)
    model = _seeded_linears(
        lambda: _DeepResidualMLP(nn.Linear(in_features, width), [ReZeroBlock(
            width, relu=True, multiplier=multiplier, alpha=alpha) for _ in range(count)],
            nn.Linear(width, classes), recipe),
        torch.Generator().manual_seed(seed),  # He-normal, the head without ReLU's gain
        lambda name, layer: math.sqrt((1.0 if name == "head" else 2.0) / layer.in_features))
    with torch.no_grad():
        for block in model.blocks:
            if recipe == "init-only":
                block.fc2.weight.mul_(1 / math.sqrt(count))
            elif recipe == "fixup":
                block.fc1.weight.mul_(count ** -0.5)
                block.fc2.weight.zero_()
        if recipe == "fixup":
            model.head.weight.zero_()
    return model


def signal_at_init(model: _DeepResidualMLP, x: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """``(forward, backward)``, L + 1 values each: the RMS of the stream after the stem and every
    block for input ``x``, and of the gradient of a seeded random probe (sum of last stream * r,
    r ~ N(0, 1)) for each: the probe bypasses the head, so Fixup's zeroed classifier still shows
    how the blocks pass gradients back. Overflow comes back as inf (never NaN)."""
    check_module("model", model, _DeepResidualMLP, what="a model from build_deep_mlp")
    check_tensor("x", x, ndim=2, last_dim=model.stem.in_features, shape_text=f"(n, {model.stem.in_features})")
    states = model.stream(x)
    for state in states:
        state.retain_grad()
    probe = torch.randn(states[-1].shape, generator=torch.Generator().manual_seed(0))
    (states[-1] * probe).sum().backward()
    model.zero_grad(set_to_none=True)
    rms = lambda t: float(t.detach().double().pow(2).mean().sqrt()) if t is not None else float("nan")
    forward, backward = (np.array([rms(t) for t in ts]) for ts in (states, [s.grad for s in states]))
    return tuple(np.where(np.isfinite(a), a, np.inf) for a in (forward, backward))


# Not the plain colour, and not green: the course's diagrams draw the residual branch F in green.
_RECIPE_COLORS = {"default": PALETTE[6], "scaled": PALETTE[5], "init-only": PALETTE[3], "rezero": PALETTE[0],
                 "fixup": PALETTE[4]}


def _plot_losses(ax, losses, *, color: str, label: str) -> str:
    """A training-loss curve on a log axis; a run that ended in NaN or inf keeps its finite part
    and an annotated triangle at the top edge, not an invented value. Returns how it ended."""
    values = np.asarray(losses, dtype=np.float64)
    steps = np.arange(1, values.size + 1)
    finite = np.isfinite(values)
    ax.plot(steps[finite], values[finite], color=color, label=label, marker="." if values.size < 20 else None)
    ax.set_yscale("log")
    if finite[-1]:
        return f"{label}: final training loss {values[-1]:.1e}"
    what = "NaN" if np.isnan(values[-1]) else "inf"
    top = ax.get_xaxis_transform()  # x in data units, y in axes units (1 = the top edge)
    ax.plot([steps[-1]], [1.0], "^", color=color, mfc="none", ms=9, mew=2, transform=top, clip_on=False,
            label="_annotated")  # the note next to it says what it is
    below = 15 * len(ax.texts)  # one note under the other when several runs blew up
    ax.annotate(f"{label}: {what} at step {values.size}", (steps[-1], 1.0), xycoords=top,
                xytext=(12, -4 - below), textcoords="offset points", ha="left", va="top", color=color,
                fontsize=11)
    return f"{label}: loss became {what} at step {values.size}"


def draw_losses(fig, histories: dict) -> str:
    """Training-loss curves (recipe -> losses of one run) on log axes: every run on the left, a
    close-up of the finite ones on the right. Returns which runs stayed finite: the coarse outcome
    every CPU reproduces (a trained run's last loss and the step a run overflows are chaotic)."""
    check_figure("fig", fig)
    if not isinstance(histories, dict) or not histories:
        raise invalid("histories", "a non-empty dict mapping a recipe name to its losses", histories,
                      error=TypeError)
    for name, losses in histories.items():
        check_text("histories' keys", name)
        key = f"histories[{name!r}]"
        if not all(isinstance(v, numbers.Real) for v in check_sequence(key, losses, what="losses")):
            raise invalid(key, "a list of numbers (the last may be NaN)", losses, error=TypeError)
    everything, finite = fig.subplots(1, 2)
    trained = {name: losses for name, losses in histories.items() if np.isfinite(losses).all()}
    for ax, runs in ((everything, histories), (finite, trained)):
        for name, losses in runs.items():
            _plot_losses(ax, losses, color=_RECIPE_COLORS.get(name, PALETTE[5]), label=name)
    if not trained:
        finite.text(0.5, 0.5, "no run stayed finite", ha="center", va="center", transform=finite.transAxes)
    values = np.concatenate([np.asarray(v, dtype=np.float64) for v in histories.values()])
    shown = values[np.isfinite(values) & (values > 0)]
    if shown.size:
        everything.set_ylim(shown.min() / 3, shown.max() * 30)  # headroom for the NaN notes
    ends = sorted({"NaN" if np.isnan(losses[-1]) else "inf" for name, losses in histories.items() if name not in trained})
    blown = len(histories) - len(trained)
    everything.set_title(f"One run per recipe: {blown} of {len(histories)} ended in {' or '.join(ends) or 'NaN'}")
    finite.set_title("Close-up: the runs that stayed finite")
    for ax in (everything, finite):
        ax.set(xlabel="training step", ylabel="training loss (cross-entropy)")
        if ax.get_yscale() == "log":
            _log_ticks(ax, max_ticks=8, exponent_labels=True)
    everything.legend(loc="upper right", fontsize=11)
    if trained:
        finite.legend(loc="upper right", fontsize=11)
    return (f"stayed finite: {', '.join(trained) or 'none'}; "
            f"ended in NaN or inf: {', '.join(n for n in histories if n not in trained) or 'none'}")


@lru_cache(maxsize=256)  # a widget's settings, a few kB each
def _signal(recipe: str, depth: int, batch: bytes, shape: tuple, dtype: str) -> tuple:
    """``signal_at_init`` of a fresh ``build_deep_mlp(depth, recipe)`` on the batch given as
    bytes, remembered, so a slider moved back redraws without rebuilding the model."""
    x = torch.from_numpy(np.frombuffer(batch, dtype=dtype).reshape(shape).copy())
    forward, backward = signal_at_init(build_deep_mlp(depth, recipe), x)
    forward.flags.writeable = backward.flags.writeable = False
    return forward, backward


def draw_signal(fig, *, recipe: str = "default", depth: int = 56, x=None) -> str:
    """The widget picture: ``signal_at_init`` of a fresh ``build_deep_mlp(depth, recipe)`` on log
    axes, overflow marked, for inputs ``x`` (None: notebook 11's batch, the first 64 digits)."""
    check_figure("fig", fig)
    check_choice("recipe", recipe, RECIPES)
    branches(depth)
    if x is None:
        x = _first_digits()
    check_tensor("x", x, ndim=2, last_dim=64, shape_text="(n, 64), the input batch")
    batch = x.detach().cpu().numpy()
    forward, backward = _signal(recipe, depth, batch.tobytes(), batch.shape, batch.dtype.str)
    color = _RECIPE_COLORS[recipe]
    index = np.arange(forward.size)
    ax = fig.subplots()
    _use_fixed_margins(fig, left=0.11, right=0.985, bottom=0.115, top=0.93)  # constrained: a third slower
    _, over_f = _plot_log_safe(ax, index, forward, color=color, label="forward: RMS of the stream")
    _, over_b = _plot_log_safe(ax, index, backward, color=color, ls="--",
                              label="backward: RMS of the gradient")
    shown = np.concatenate([_log_safe(forward)[0], _log_safe(backward)[0]])
    ax.set_ylim(np.nanmin(shown) / 10, np.nanmax(shown) * 10)  # at least two labelled decades
    _log_ticks(ax, max_ticks=8, exponent_labels=True)  # plain-text labels render faster
    ax.set(xlabel="after block (0 = stem)", ylabel="root mean square")
    ax.legend(loc="lower center", fontsize=10)  # a fixed place: "best" is slow to compute
    finding = ("the signal overflows" if over_f or over_b
               else f"stream x{forward[-1] / forward[0]:.2g}, gradient x{backward[0] / backward[-1]:.2g}")
    ax.set_title(f"{recipe}, {depth} layers at initialisation: {finding}", fontsize=11, y=1.0)  # no placement search
    overflow_text = lambda a, over: (f"overflowed (inf or NaN) at {over} of {a.size} points" if over
                                else f"{a[0]:.3g} -> {a[-1]:.3g} (x{a[-1] / a[0]:.3g})")
    return (f"forward, stem to last block: {overflow_text(forward, over_f)}\n"
            f"backward, last block to stem: {overflow_text(backward[::-1], over_b)}")


@lru_cache(maxsize=1)
def _first_digits() -> torch.Tensor:
    from .data import load_digits_split

    return load_digits_split().x_train[:64]


def signal_plot(recipe: str = "default", depth: int = 56):
    """Notebook 11's live plot of ``draw_signal``: the recipe and the depth (2 to 1000 weight
    layers; the static widget offers them log-spaced)."""
    import ipywidgets as widgets

    from .widgets import LivePlot, slider

    recipe = check_choice("recipe", recipe, RECIPES)
    branches(check_int("depth", depth, minimum=2, maximum=1000))
    controls = {"recipe": widgets.Dropdown(options=RECIPES, value=recipe, description="recipe"),
                "depth": slider("depth", depth, 2, 1000, step=2)}
    return LivePlot(draw_signal, controls, width=8, height=4, grid={"depth": [2, 6, 16, 56, 100, 200, 400, 1000]})
