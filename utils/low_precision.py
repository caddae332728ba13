"""The stream in low precision. bfloat16 keeps 8 significant bits and float16 11 (float32: 24),
so near a value v their numbers are spaced 2^-7 v, 2^-10 v and 2^-23 v apart (within a factor
of 2: the spacing doubles at every power of 2). A write smaller than half that spacing, half a
unit in the last place (ulp), rounds away when it is added to v: it is swamped. A deep stack
whose many small writes are swamped drifts from its float64 result; training code therefore
keeps the residual sum in float32 (Megatron-LM's ``--fp32-residual-connection``) while the
branches compute in 16 bits. Everything here rounds entry by entry, the same on every CPU."""
from __future__ import annotations

import math

import numpy as np
import torch

from .depth_as_time import _REFERENCE_BAND, _check_flow, _finish_depth_axes, _flow
from .plotting import PALETTE
from .validation import check_choice, check_cost, check_figure, check_float, check_int, check_sequence, invalid

__all__ = ["DTYPES", "half_ulp", "repeated_sum", "rounded_flow", "draw_drift"]

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32, "float64": torch.float64}


def _dtype(name: str, value) -> torch.dtype:
    """A dtype of ``DTYPES`` given by its name or as the torch.dtype itself."""
    if isinstance(value, torch.dtype) and value in DTYPES.values():
        return value
    return DTYPES[check_choice(name, value, DTYPES)]


def half_ulp(value: float, dtype) -> float:
    """Half the gap between ``dtype``'s numbers next to |``value``| (a normal number of that
    type): a write below this, added to ``value``, rounds away."""
    dtype = _dtype("dtype", dtype)
    value = abs(check_float("value", value))
    info = torch.finfo(dtype)
    if not info.tiny <= value <= info.max:
        raise invalid("value", f"a normal {dtype} number in absolute value ({info.tiny:g} to {info.max:g})", value)
    return info.eps * 2.0 ** math.floor(math.log2(value)) / 2


def repeated_sum(start: float, write: float, count: int, dtype) -> float:
    """``start`` plus ``write``, ``count`` times, each sum rounded to ``dtype`` (round to
    nearest even, as every CPU does): what a stream entry holds after ``count`` equal writes."""
    dtype = _dtype("dtype", dtype)
    start, write = check_float("start", start), check_float("write", write)
    count = check_int("count", count, minimum=0)
    check_cost({"count": count}, lambda count: (0.0, 1e3 * count), what="one rounded addition per write")
    stream, step = torch.tensor(start, dtype=dtype), torch.tensor(write, dtype=dtype)
    for _ in range(count):
        stream = stream + step
    return float(stream)


def rounded_flow(x: torch.Tensor, weights: torch.Tensor, scale: float, *, stream="float64",
                 write="float64") -> torch.Tensor:
    """``depth_as_time.residual_flow`` with the stream held in ``stream`` and every branch's write
    rounded to ``write`` before it is added (e.g. stream="float32", write="bfloat16": 16-bit
    branches, the sum in float32); the branch itself is computed in float64. Returns float64."""
    _check_flow(x, weights)
    scale = check_float("scale", scale, minimum=0.0, maximum=100.0)
    return _flow(x, weights, scale, _dtype("stream", stream), _dtype("write", write))


def draw_drift(fig, errors: dict, depths) -> str:
    """Log-log plot of each entry of ``errors`` (label -> distance to the exact solution at each
    of ``depths``); the first entry is the float64 stack, drawn as a wide grey band under the others. Returns, per
    entry, the depth at which it is furthest below or above the float64 error."""
    check_figure("fig", fig)
    depths = np.asarray([check_int("depths", d, minimum=1) for d in check_sequence("depths", depths, what="depths")],
                        dtype=np.float64)
    if not isinstance(errors, dict) or len(errors) < 2:
        raise invalid("errors", "a dict label -> one error per depth, float64 first, then at least one more",
                      errors, error=TypeError)
    curves = {label: np.asarray(values, dtype=np.float64) for label, values in errors.items()}
    for values in curves.values():
        if values.shape != depths.shape or not np.all(values > 0) or not np.all(np.isfinite(values)):
            raise invalid("errors", f"{depths.size} positive finite errors per label", values)
    fig.clear()
    ax = fig.add_subplot(1, 1, 1)
    reference_label, reference = next(iter(curves.items()))
    notes = []
    for index, (label, values) in enumerate(curves.items()):
        if index == 0:  # the float64 line as a band under the others
            ax.plot(depths, values, **_REFERENCE_BAND, label=str(label))
        else:
            ax.plot(depths, values, marker="o", color=PALETTE[(index - 1) % len(PALETTE)], zorder=3, label=str(label))
        if index:
            worse = values / reference
            notes.append(f"{label}: {worse.max():.3g} times the float64 error at depth {depths[worse.argmax()]:g}")
    _finish_depth_axes(ax, depths, "In 16 bits, deeper (smaller steps) stops helping: the writes are swamped")
    return "; ".join(notes)
