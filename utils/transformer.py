"""A small transformer block built from the course's own pieces, its residual stream made
visible, and the pre-LN against post-LN gradient measurement of notebook 10.

A block has two residual connections, around self-attention and around the feed-forward
network (FFN, the course's ``blocks.LayerNormResidualBlock``), both placed the same way:

* pre-LN:  x <- x + Attn(LN(x)),       x <- x + FFN(LN(x))
* post-LN: x <- LN(x + Attn(x)),       x <- LN(x + FFN(x))
* peri-LN: x <- x + LN(Attn(LN(x))),   x <- x + LN(FFN(LN(x)))   (Kim et al. 2025)

The running x is the *residual stream*: every sublayer reads it and adds a *write*. Options
of current models: RMSNorm (only rescales) for LayerNorm, QK-norm (queries and keys normalised).
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .blocks import NORM_POSITIONS, LayerNormResidualBlock, _seeded_linears
from .diagrams import BRANCH_COLOR
from .plotting import PALETTE, RESIDUAL_COLOR, _log_ticks
from .training import _adam_run
from .validation import (check_array, check_bool, check_choice, check_cost, check_figure, check_float, check_int,
                         check_module, check_tensor, check_text, invalid)

_PLACEMENTS = NORM_POSITIONS + ("peri",)  # where a transformer block's normalisations sit

__all__ = ["TransformerBlock", "TinyTransformer", "residual_stream", "attention_logits",
           "adam_steps", "last_block_gradient", "stream_growth", "draw_stream",
           "draw_gradient_vs_depth", "draw_variance"]


def _block_numbers(d: int) -> int:
    """Weights of one transformer block: attention 4d^2 + 4d, FFN 8d^2 + 5d, two LayerNorms."""
    return 12 * d * d + 13 * d


def _check_block(d, heads, norm, rms_norm=False, qk_norm=False) -> tuple[int, int]:
    """The checks of a transformer block's options; returns ``(d, heads)``."""
    d = check_int("d", d, minimum=1)
    heads = check_int("heads", heads, minimum=1, maximum=d)
    if d % heads:
        raise invalid("heads", f"a divisor of the width d={d} (each head gets d/heads numbers)", heads,
                      fix=f"try one of {[h for h in range(1, min(d, 64) + 1) if d % h == 0][:8]}")
    check_choice("norm", norm, _PLACEMENTS)
    check_bool("rms_norm", rms_norm)
    check_bool("qk_norm", qk_norm)
    check_cost({"d": d}, lambda d: (4.0 * _block_numbers(d), float(_block_numbers(d))),
               what="the weights of one transformer block")
    return d, heads


def _check_stream(x, d: int) -> torch.Tensor:
    return check_tensor("x", x, ndim=3, last_dim=d, shape_text=f"(batch, tokens, {d})")


def _check_model_input(model, x) -> torch.Tensor:
    model = check_module("model", model, TinyTransformer, what="a TinyTransformer")
    return _check_stream(x, model.d)


def _normalisation(d: int, rms_norm: bool) -> nn.Module:
    """RMSNorm divides by the root mean square only; LayerNorm also subtracts the mean."""
    return nn.RMSNorm(d) if rms_norm else nn.LayerNorm(d)


class _SelfAttention(nn.Module):
    """Multi-head self-attention, the values weighted by softmax(q.k / sqrt(d_head)); ``qk_norm``
    normalises each head's q and k first: no logit exceeds sqrt(d_head) times the norms' gains."""

    def __init__(self, d: int, heads: int, *, qk_norm: bool, rms_norm: bool):
        super().__init__()
        self.d, self.heads = d, heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        norms = [_normalisation(d // heads, rms_norm) if qk_norm else nn.Identity() for _ in "qk"]
        self.q_norm, self.k_norm = norms

    def logits_and_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The logits q.k / sqrt(d_head), shape (batch, heads, tokens, tokens), and the values."""
        batch, tokens, d = x.shape
        q, k, v = self.qkv(x).view(batch, tokens, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        return self.q_norm(q) @ self.k_norm(k).transpose(-2, -1) / math.sqrt(d // self.heads), v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits, v = self.logits_and_values(x)
        return self.proj((torch.softmax(logits, dim=-1) @ v).transpose(1, 2).reshape(x.shape))


class _Sublayer:
    """The residual connection of both sublayers: x + write(x), normalised after for post-LN."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x + self.write(x)
        return self.norm(out) if self.norm_position == "post" else out


class _AttentionSublayer(_Sublayer, nn.Module):
    """Self-attention placed as the module docstring says."""

    def __init__(self, d: int, heads: int, norm: str, *, rms_norm: bool, qk_norm: bool):
        super().__init__()
        self.norm_position = norm
        self.norm = _normalisation(d, rms_norm)
        self.attention = _SelfAttention(d, heads, qk_norm=qk_norm, rms_norm=rms_norm)
        self.out_norm = _normalisation(d, rms_norm) if norm == "peri" else nn.Identity()

    def write(self, x: torch.Tensor) -> torch.Tensor:
        """What this sublayer adds to the stream (before post-LN's normalisation)."""
        return self.out_norm(self.attention(x if self.norm_position == "post" else self.norm(x)))


class _FeedForwardSublayer(_Sublayer, LayerNormResidualBlock):
    """The course's ``LayerNormResidualBlock`` (4d hidden, GELU) as FFN sublayer, placed alike."""

    def __init__(self, d: int, norm: str, *, rms_norm: bool):
        super().__init__(d, norm="post" if norm == "post" else "pre")
        self.norm_position = norm
        if rms_norm:
            self.norm = nn.RMSNorm(self.d)
        self.out_norm = _normalisation(self.d, rms_norm) if norm == "peri" else nn.Identity()

    def write(self, x: torch.Tensor) -> torch.Tensor:
        """What this sublayer adds to the stream: s F(LN(x)), s F(x) (post) or LN(s F(LN(x))) (peri)."""
        return self.out_norm(self.scale * self.branch(x if self.norm_position == "post" else self.norm(x)))


class TransformerBlock(nn.Module):
    """One transformer block on (batch, tokens, ``d``): ``heads``-head attention, then the
    course's ``LayerNormResidualBlock`` as FFN, placed ``norm`` (pre, post, peri)."""

    def __init__(self, d: int, heads: int, norm: str = "pre", *, rms_norm: bool = False, qk_norm: bool = False):
        super().__init__()
        self.d, heads = _check_block(d, heads, norm, rms_norm, qk_norm)
        self.attention = _AttentionSublayer(self.d, heads, norm, rms_norm=rms_norm, qk_norm=qk_norm)
        self.ffn = _FeedForwardSublayer(self.d, norm, rms_norm=rms_norm)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_stream(x, self.d)
        return self.ffn(self.attention(x))


class TinyTransformer(nn.Module):
    """``depth`` ``TransformerBlock``s, a final norm (not after post-LN) and a fixed random readout
    to ``classes`` logits per token, so a loss means the same for every placement. Xavier-normal
    weights, zero biases (Xiong et al. 2020), drawn from ``seed``, not the global seed."""

    def __init__(self, depth: int, d: int = 64, heads: int = 4, norm: str = "pre", classes: int = 16,
                 seed: int = 0, *, rms_norm: bool = False, qk_norm: bool = False):
        super().__init__()
        depth = check_int("depth", depth, minimum=1)
        d, heads = _check_block(d, heads, norm, rms_norm, qk_norm)
        classes = check_int("classes", classes, minimum=2)
        seed = check_int("seed", seed, minimum=0)
        check_cost({"depth": depth, "d": d, "classes": classes},
                   lambda depth, d, classes: (4.0 * (depth * _block_numbers(d) + d * classes),
                                              2.0 * (depth * _block_numbers(d) + d * classes)),
                   what="the weights of every block")
        self.d, self.norm_position = d, norm
        generator = torch.Generator().manual_seed(seed)
        self.blocks = _seeded_linears(
            lambda: nn.ModuleList(TransformerBlock(d, heads, norm, rms_norm=rms_norm,
                                                   qk_norm=qk_norm) for _ in range(depth)),
            generator, lambda _, layer: math.sqrt(2.0 / (layer.in_features + layer.out_features)))
        self.final_norm = nn.Identity() if norm == "post" else _normalisation(d, rms_norm)
        self.register_buffer("readout", torch.randn(d, classes, generator=generator) / math.sqrt(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:  # the first block checks x
            x = block(x)
        return self.final_norm(x) @ self.readout


@torch.no_grad()
def residual_stream(model: TinyTransformer, x: torch.Tensor) -> dict:
    """The residual stream through ``model`` on ``x``: per sublayer (attention 1, FFN 1, ...) its
    ``"sublayer"`` name, the RMS of the ``"stream"`` it reads and the ``"write"`` it adds, their
    ``"ratio"``, the stream's ``"peak"`` (largest over median |entry|: massive activations; about
    5.6 for 4096 Gaussian numbers); ``"final"`` and ``"final_peak"`` for the stream leaving it."""
    x = _check_model_input(model, x)
    rms = lambda t: float(t.pow(2).mean().sqrt())
    peak = lambda t: float(t.abs().max() / t.abs().median())
    out = {"sublayer": [], "stream": [], "write": [], "ratio": [], "peak": []}
    for index, block in enumerate(model.blocks, start=1):
        for name, sublayer in (("attention", block.attention), ("FFN", block.ffn)):
            w = sublayer.write(x)
            for key, value in zip(out, (f"{name} {index}", rms(x), rms(w), rms(w) / rms(x), peak(x))):
                out[key].append(value)
            x = sublayer(x)
    out["final"], out["final_peak"] = rms(x), peak(x)
    return out


@torch.no_grad()
def attention_logits(model: TinyTransformer, x: torch.Tensor) -> list[float]:
    """The largest |q.k / sqrt(d_head)| of each block's attention on input ``x``: how
    peaked its softmax can get. QK-norm bounds it by sqrt(d_head) times the norms' gains."""
    x = _check_model_input(model, x)
    largest = []
    for block in model.blocks:
        sublayer = block.attention
        read = x if sublayer.norm_position == "post" else sublayer.norm(x)
        largest.append(float(sublayer.attention.logits_and_values(read)[0].abs().max()))
        x = block(x)
    return largest


def adam_steps(model: TinyTransformer, x: torch.Tensor, labels: torch.Tensor, *, steps: int = 30,
               lr: float = 1e-3) -> list[float]:
    """Train ``model`` in place for ``steps`` full-batch Adam steps on notebook 10's task (the
    cross-entropy at each sequence's last token); every step's loss, up to a non-finite one."""
    x = _check_model_input(model, x)
    if x.dtype != model.readout.dtype:
        raise invalid("x", f"a {model.readout.dtype} tensor, as the model's weights are", x, error=TypeError)
    labels = check_tensor("labels", labels, ndim=1, floating=False, shape_text="(batch,) of int64 class labels")
    classes = model.readout.shape[1]
    if labels.dtype != torch.int64 or len(labels) != len(x) or len(labels) and not (
            0 <= int(labels.min()) and int(labels.max()) < classes):
        raise invalid("labels", f"{len(x)} int64 class labels from 0 to {classes - 1}, one per sequence", labels)
    steps = check_int("steps", steps, minimum=1)
    lr = check_float("lr", lr, minimum=0.0, maximum=10.0)
    weights = sum(p.numel() for p in model.parameters())
    check_cost({"steps": steps}, lambda steps: (0.0, 6.0 * steps * x.shape[0] * x.shape[1] * weights),
               what=f"a forward and backward pass per step ({weights} weights, {x.shape[0]} sequences)")
    return _adam_run(model, lambda step: nn.functional.cross_entropy(model(x)[:, -1], labels), steps, lr)


def last_block_gradient(depth: int, norm: str, *, d: int = 64, heads: int = 4, tokens: int = 8,
                        samples: int = 8, seed: int = 0) -> float:
    """How hard the loss pulls on the last block at initialisation (Xiong et al. 2020 bound it
    by a constant in depth for post-LN, by 1/sqrt(L) for pre-LN): the Frobenius norm of the
    last FFN output weight's gradient for one sequence's loss (cross-entropy at the last of
    ``tokens`` N(0, 1) tokens, random label), averaged over ``samples`` sequences. float64, so
    its digits do not depend on the CPU's kernels."""
    depth = check_int("depth", depth, minimum=1)
    d, heads = _check_block(d, heads, norm)
    tokens = check_int("tokens", tokens, minimum=1)
    samples = check_int("samples", samples, minimum=1)
    seed = check_int("seed", seed, minimum=0)

    def cost(depth, d, tokens, samples):  # weights; per block about 20 activations and the attention weights
        weights = depth * _block_numbers(d)
        activations = depth * samples * tokens * (20.0 * d + 2.0 * heads * tokens)
        operations = 3.0 * samples * tokens * (weights + 2.0 * depth * tokens * d) + 2.0 * weights
        return 8.0 * (2.0 * weights + activations), operations  # float64

    check_cost({"depth": depth, "d": d, "tokens": tokens, "samples": samples}, cost,
               what="the weights, the activations and the backward pass")
    model = TinyTransformer(depth, d, heads, norm, seed=seed).double()
    generator = torch.Generator().manual_seed(seed + 1_000)
    x = torch.randn(samples, tokens, model.d, generator=generator).double()
    labels = torch.randint(model.readout.shape[1], (samples,), generator=generator)
    saved = {}

    def keep(module, inputs, output):
        saved["input"] = inputs[0].detach()
        output.register_hook(lambda grad: saved.__setitem__("grad", grad.detach()))

    model.blocks[-1].ffn.fc2.register_forward_hook(keep)  # the model is this call's own: no removal needed
    # Summed over sequences, each sequence's loss reaches only its own last token, so
    # its gradient for W2 is the outer product grad_i input_i^T, of norm |grad_i| |input_i|.
    nn.functional.cross_entropy(model(x)[:, -1], labels, reduction="sum").backward()
    per_sequence = saved["grad"][:, -1].norm(dim=-1) * saved["input"][:, -1].norm(dim=-1)
    return float(per_sequence.mean())


def _check_residual_stream(name: str, stream, keys=("stream", "write", "ratio", "final")) -> None:
    """``stream`` must be what residual_stream returns (at least the entries ``keys``)."""
    if not isinstance(stream, dict) or any(key not in stream for key in keys) or not isinstance(
            stream["stream"], list):
        raise invalid(name, "the dict returned by residual_stream(model, x)", stream, error=TypeError)


def _variance(stream: dict) -> np.ndarray:
    """The stream's variance (RMS squared) before every sublayer and after the last."""
    return np.square(np.array(stream["stream"] + [stream["final"]]))


def stream_growth(stream: dict) -> tuple[float, float]:
    """``(slope, r_squared)`` of a straight line fitted to the stream's variance per sublayer:
    pre-LN's writes are of about one size, independent of the stream, so it grows linearly."""
    _check_residual_stream("stream", stream, keys=("stream", "final"))
    variance = _variance(stream)
    index = np.arange(len(variance))
    slope, intercept = np.polyfit(index, variance, 1)
    residual = variance - (slope * index + intercept)
    r_squared = 1 - residual.var() / variance.var() if variance.var() > 0 else 1.0
    return float(slope), float(r_squared)


def draw_stream(fig, streams: dict, *, title: str | None = None) -> str:
    """One panel per ``streams`` entry (label -> ``residual_stream`` dict): the RMS of the stream
    each sublayer reads and of its write, log axis; ``title`` (by default each stream's growth)."""
    check_figure("fig", fig)
    if not isinstance(streams, dict) or not streams:
        raise invalid("streams", "a non-empty dict mapping a label to residual_stream(...) output", streams,
                      error=TypeError)
    for label, stream in streams.items():
        _check_residual_stream(f"streams[{label!r}]", stream)
    check_text("title", title, allow_none=True)
    axes = np.atleast_1d(fig.subplots(1, len(streams), sharey=True))
    lines = []
    for ax, (label, stream) in zip(axes, streams.items()):
        index = np.arange(1, len(stream["stream"]) + 1)
        ax.plot(index, stream["stream"], color=RESIDUAL_COLOR, marker="o", ms=3, label="stream read (RMS)")
        ax.plot(index, stream["write"], color=BRANCH_COLOR, marker="s", ms=3, label="sublayer write (RMS)")
        ax.set(yscale="log", xlabel="sublayer (attention, FFN, attention, ...)", title=label)
        lines.append(f"{label}: stream RMS {stream['stream'][0]:.2f} -> {stream['final']:.2f}, "
                     f"last write/stream {stream['ratio'][-1]:.3f}")
    values = np.concatenate([[*s["stream"], *s["write"]] for s in streams.values()])
    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size:  # plain-number ticks around the data's range
        _log_ticks(axes[0], positive.min(), positive.max())
    axes[0].set_ylabel("root mean square (log scale)")
    axes[0].legend(loc="best")
    fig.suptitle(title if title is not None else "; ".join(
        f"{label}: stream RMS {stream['stream'][0]:.1f} -> {stream['final']:.1f}" for label, stream in streams.items()))
    return "\n".join(lines)


def draw_gradient_vs_depth(fig, depths, post, pre) -> str:
    """Log-log: the last block's gradient against depth, post-LN and pre-LN, and 1/sqrt(L) through
    pre-LN's first point; the title says how far pre-LN strays from it, claiming no closer fit."""
    check_figure("fig", fig)
    depths = check_array("depths", depths, ndim=1)
    if len(depths) == 0 or depths.min() < 1:
        raise invalid("depths", "a non-empty list of depths of at least 1", depths)
    post, pre = (check_array(name, values, shape=depths.shape) for name, values in (("post", post), ("pre", pre)))
    for name, values in (("post", post), ("pre", pre)):
        if values.min() <= 0:
            raise invalid(name, "positive gradient norms (the axes are logarithmic)", values)
    ax = fig.subplots()
    ax.plot(depths, post, color=PALETTE[3], marker="o", label="post-LN")
    ax.plot(depths, pre, color=PALETTE[0], marker="o", label="pre-LN")
    reference = pre[0] * np.sqrt(depths[0] / depths)
    ax.plot(depths, reference, color="grey", ls="--", label="1/sqrt(L) through pre-LN's first point")
    ax.set(xscale="log", yscale="log", xlabel="depth L (transformer blocks)",
           ylabel="|gradient of last block's W2| (Frobenius)")
    ax.set_xticks(depths, [f"{int(d)}" for d in depths])
    values = np.concatenate([post, pre, reference])
    _log_ticks(ax, values.min(), values.max())  # plain numbers, including those below 1
    stray = float(np.max(np.abs(pre / reference - 1)))
    ax.set_title(f"Post-LN: flat in depth; pre-LN: falls, within {stray:.0%} of 1/sqrt(L)")
    ax.legend(loc="lower left")
    return (f"post-LN {post[0]:.2f} -> {post[-1]:.2f} (x{post[-1] / post[0]:.2f}); "
            f"pre-LN {pre[0]:.2f} -> {pre[-1]:.2f} (x{pre[-1] / pre[0]:.2f}); "
            f"1/sqrt(L) predicts x{np.sqrt(depths[0] / depths[-1]):.2f}; pre-LN is at most {stray:.0%} off that line")


def draw_variance(fig, stream: dict, slope: float) -> str:
    """The stream's variance after every sublayer of ``stream`` (a ``residual_stream`` dict) and
    the least-squares line of slope ``slope`` (the one ``stream_growth`` fits): the picture of
    "variances add"."""
    check_figure("fig", fig)
    _check_residual_stream("stream", stream, keys=("stream", "final"))
    if not isinstance(slope, (int, float)) or not math.isfinite(slope):
        raise TypeError(f"slope must be a finite number, got {slope!r}")
    variance = _variance(stream)
    index = np.arange(variance.size)
    ax = fig.subplots()
    ax.plot(index, variance, color=RESIDUAL_COLOR, label="pre-LN stream variance")
    intercept = variance.mean() - slope * index.mean()  # the best line of this slope
    ax.plot(index, intercept + slope * index, color="grey", ls="--", label=f"fitted line, slope {slope:.3f}")
    ax.set(xlabel="sublayers passed", ylabel="variance of the stream",
           title="The pre-LN stream's variance grows about linearly with depth")
    ax.legend()
    return f"variance {variance[0]:.2f} -> {variance[-1]:.2f} over {variance.size - 1} sublayers"
