"""Aggregating over depth instead of adding. A pre-LN transformer's residual stream is the input
plus every earlier write, each with weight 1, so it grows with depth and each new write is a
smaller part of it ("dilution"). Depth-wise aggregation (DenseFormer 2024, LAuReL 2025,
MUDDFormer 2025, Attention Residuals 2026) lets each layer read a weighted combination of the
input and the earlier writes instead; Attention Residuals takes the weights from a softmax over
depth, learned and input-dependent. This module measures the simplest softmax, equal scores:
each layer reads the plain average. The average is the sum divided by a count, and LayerNorm
undoes any such scale, so the growth leaves the numbers while the network computes (nearly) the
same function and dilutes each write exactly as much: what aggregation changes must come from
unequal, learned weights, which the course does not train."""
from __future__ import annotations

import torch

from .transformer import TinyTransformer, _check_model_input
from .validation import invalid

__all__ = ["depth_average_stream"]


@torch.no_grad()
def depth_average_stream(model: TinyTransformer, x: torch.Tensor) -> dict:
    """The stream probe of ``transformer.residual_stream`` for ``model`` (pre-LN) with every
    sum replaced by an equal-weight average over depth: sublayer n reads the mean of the input
    and the writes of sublayers 1 to n - 1, the final norm the mean of the input and every
    write. The same keys as ``residual_stream`` (``"stream"``: the RMS of what each sublayer
    reads), ``"last_share"``: the RMS of the last write's part of what the final norm reads
    over the RMS of all of it (for the plain sum: last write / final stream), and ``"output"``:
    the logits the model computes this way."""
    x = _check_model_input(model, x)
    if model.norm_position != "pre":
        raise invalid("model", "a pre-LN TinyTransformer (norm='pre'): the average replaces pre-LN's sum",
                      model.norm_position)
    rms = lambda t: float(t.pow(2).mean().sqrt())
    peak = lambda t: float(t.abs().max() / t.abs().median())
    count, total, write = 1, x.clone(), None  # how many outputs (the input, the writes) are summed
    out = {"sublayer": [], "stream": [], "write": [], "ratio": [], "peak": []}
    for index, block in enumerate(model.blocks, start=1):
        for name, sublayer in (("attention", block.attention), ("FFN", block.ffn)):
            read = total / count  # a softmax over depth with equal scores: the mean
            write = sublayer.write(read)
            values = (f"{name} {index}", rms(read), rms(write), rms(write) / rms(read), peak(read))
            for key, value in zip(out, values):
                out[key].append(value)
            count, total = count + 1, total + write
    final = total / count
    out["final"], out["final_peak"] = rms(final), peak(final)
    out["last_share"] = rms(write / count) / rms(final)
    out["output"] = model.final_norm(final) @ model.readout
    return out
