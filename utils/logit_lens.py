"""The stream as a running guess: decode what a network carries after its stem and after every
block through the network's own output head (the logit lens, nostalgebraist 2020; a learned
translator per layer is the tuned lens of Belrose et al. 2023). In a residual network every
block adds to one stream, so a head trained on the last block's stream can read the earlier
ones too: the guess sharpens block by block (iterative refinement: Greff et al. 2017,
Jastrzebski et al. 2018). A plain network rewrites its representation at every layer, and the
head reads only the last one.

Trained networks read a few per cent differently on another CPU or thread count (training is
chaotic), so what the course prints is where a reading first reaches a share (``first_reaching``),
which moves only if a reading sits next to that share."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .mlp import MLP
from .plotting import PLAIN_COLOR, RESIDUAL_COLOR
from .training import _as_data
from .validation import check_figure, check_float, check_module, check_tensor, invalid

__all__ = ["lens_logits", "lens_scores", "first_reaching", "draw_lens"]

_AN_MLP = "a utils.mlp.MLP (from make_mlp)"


def _lens_logits(model: MLP, x: torch.Tensor) -> torch.Tensor:
    """The head applied to the stem's output and to every block's, stacked: (blocks + 1, n, classes)."""
    h = model.stem(x)
    logits = [model.head(h)]
    for block in model.blocks:
        h = block(h)
        logits.append(model.head(h))
    return torch.stack(logits)


def lens_logits(model, x) -> torch.Tensor:
    """``model.head`` applied to the stream after the stem and after each block of ``model``
    (a ``make_mlp`` network) for inputs ``x`` (n, features), in eval mode (BatchNorm's running
    statistics; the model's own mode is restored): a tensor (blocks + 1, n, classes) whose last
    entry is the model's output."""
    check_module("model", model, MLP, what=_AN_MLP)
    first = model.stem[0]
    check_tensor("x", x, ndim=2, last_dim=first.in_features, shape_text=f"(n, {first.in_features})")
    if x.dtype != first.weight.dtype or len(x) == 0:
        raise invalid("x", f"a non-empty {first.weight.dtype} tensor, as model's first layer takes", x)
    was_training = model.training
    model.eval()
    try:
        return _lens_logits(model, x)
    finally:
        model.train(was_training)


@torch.no_grad()
def lens_scores(model, x, y) -> dict:
    """What the logit lens reads after the stem (position 0) and after each block: per
    position the ``"accuracy"`` on ``x, y``, the cross-entropy ``"loss"`` and the ``"agreement"``,
    the share of inputs whose decoded class is the model's final answer; lists of floats."""
    check_module("model", model, MLP, what=_AN_MLP)
    x, y = _as_data(model, x, y)
    logits = lens_logits(model, x)
    final = logits[-1].argmax(dim=1)
    return {"accuracy": [float((step.argmax(dim=1) == y).double().mean()) for step in logits],
            "loss": [float(nn.functional.cross_entropy(step.double(), y)) for step in logits],
            "agreement": [float((step.argmax(dim=1) == final).double().mean()) for step in logits]}


def _readings(name: str, values) -> np.ndarray:
    """Shares per position as a float64 array: ``values`` itself, or the median of a list of such
    lists (one per seed)."""
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise invalid(name, "shares between 0 and 1, one per position, or a list of such lists (one per seed)",
                      values, error=TypeError) from None
    if values.ndim == 2 and len(values) > 0:
        values = np.median(values, axis=0)
    if values.ndim != 1 or values.size < 2 or not np.all((values >= 0) & (values <= 1)):
        raise invalid(name, "shares between 0 and 1, one per position (at least 2), or a list of such lists "
                      "(one per seed)", values)
    return values


def first_reaching(readings, share: float) -> int | None:
    """The first position (0: after the stem) at which ``readings`` (shares per position, such as
    ``lens_scores(...)["accuracy"]``, or a list of such lists, one per seed: then their median)
    reach ``share`` (in (0, 1]); None if none does."""
    values = _readings("readings", readings)
    share = check_float("share", share, minimum=0.0, maximum=1.0)
    if share == 0:
        raise invalid("share", "above 0 (every reading reaches 0)", share)
    reached = np.flatnonzero(values >= share)
    return int(reached[0]) if reached.size else None


def draw_lens(fig, scores: dict, *, chance: float = 0.1) -> str:
    """Test accuracy read by the logit lens against the block it reads after, one line per
    network of ``scores`` (label -> ``lens_scores(...)["accuracy"]``, or a list of such lists,
    one per seed: then their median); plain networks (label starting "plain") in the course's
    plain colour; a dashed line at ``chance``. Returns where each line first reaches 50%."""
    check_figure("fig", fig)
    chance = check_float("chance", chance, minimum=0.0, maximum=1.0)
    if not isinstance(scores, dict) or not scores:
        raise invalid("scores", "a non-empty dict label -> accuracies per position", scores, error=TypeError)
    fig.clear()
    ax = fig.add_subplot(1, 1, 1)
    notes = []
    for label, values in scores.items():
        values = _readings("scores", values)
        plain = str(label).startswith("plain")
        ax.plot(np.arange(values.size), values, marker="o", ms=4, label=str(label),
                color=PLAIN_COLOR if plain else RESIDUAL_COLOR, ls="--" if plain else "-")
        half = first_reaching(values, 0.5)
        notes.append(f"{label}: never 50%" if half is None else f"{label}: 50% or more from position {half}")
    ax.axhline(chance, color="0.4", ls=":", lw=1, label=f"chance ({chance:.0%})")
    ax.axhline(0.5, color="0.6", ls="-", lw=0.8, label="half right (50%)")
    ax.set(xlabel="blocks passed (0: after the stem)", ylabel="test accuracy read through the head",
           ylim=(0, 1.02), title="The logit lens: a residual stream is a running guess; a plain one is not")
    ax.legend(fontsize=9, loc="center", bbox_to_anchor=(0.55, 0.3), ncol=2)  # the empty band between the lines
    return "; ".join(notes)
