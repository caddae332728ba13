"""Checkers for notebook 10 (the residual stream in a transformer block).

* Exercise 10.1: one sublayer step with its residual connection, pre-LN
  x + Sublayer(LN(x)) or post-LN LN(x + Sublayer(x)), LN without learned scale or shift
  (``F.layer_norm`` or written by hand, as in notebook 04).
* Exercise 10.2: the size of the residual stream (its mean square, the mean of its squared entries)
  before the first block and after every block.
"""
from __future__ import annotations

import numpy as np
import torch

from utils.exercises.core import (INPUT_WHY, OTHER_EPS, WEIGHT_WHY, Exercise, Mistake, as_array, call,
                                  expect_close, expect_float_list, expect_gradients, require_function)

EPS = 1e-5  # nn.LayerNorm's default


def _norm(x: torch.Tensor, dims=(-1,), *, unbiased: bool = False, eps: float = EPS,
          eps_inside: bool = True) -> torch.Tensor:
    """LayerNorm without learned scale or shift over ``dims`` (the exercise's LN is dims=(-1,));
    ``eps_inside=False`` is the common slip sqrt(var) + eps."""
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True, unbiased=unbiased)
    return (x - mean) / (torch.sqrt(var + eps) if eps_inside else torch.sqrt(var) + eps)


# Errors torch raises for two common slips, and what to tell the learner about each.
_RAISED = [
    ("must match the size", "the sizes do not match, because the mean or the variance lost its last axis. Keep "
                            "it, `h.mean(dim=-1, keepdim=True)` (and the same for the variance), so that it "
                            "broadcasts against the stream.", "lost-axis"),
    ("dtype", "the checker's streams are float64, and a torch layer such as nn.LayerNorm is built in float32. "
              "Use `F.layer_norm(h, h.shape[-1:])`, which has no weights and works in any dtype.", "float64-vs-layer"),
]


def _step(answer, x, sub, norm: str, shown: str, copies: bool = True):
    """Call the learner's ``sublayer_step``, naming the errors of :data:`_RAISED`."""
    try:
        return call(answer, x, sub, norm, name="sublayer_step", shown=shown, copies=copies)
    except Mistake as mistake:
        for fragment, explanation, key in _RAISED:
            if "raised RuntimeError" in str(mistake) and fragment in str(mistake):
                raise Mistake(f"for {shown}: {explanation}", key=key) from None
        raise


def _sublayers():
    """Two fixed sublayers the checker plugs in: a linear map with bias, and tanh of one."""
    generator = torch.Generator().manual_seed(10)
    weights = [torch.randn(d, d, generator=generator, dtype=torch.float64) / d ** 0.5 for d in (4, 8)]
    bias = {d: torch.linspace(-0.5, 0.5, d, dtype=torch.float64) for d in (4, 8)}
    linear = lambda h: h @ weights[0 if h.shape[-1] == 4 else 1] + bias[h.shape[-1]]
    bent = lambda h: torch.tanh(2.0 * linear(h))
    return (("a linear sublayer", linear), ("a tanh sublayer", bent))


def _stream_inputs():
    generator = torch.Generator().manual_seed(11)
    shifted = 1.5 + 2.0 * torch.randn(2, 3, 4, generator=generator, dtype=torch.float64)
    wide = torch.randn(3, 5, 8, generator=generator, dtype=torch.float64) - 0.3
    flat = shifted.clone()
    flat[0, 1] = 0.7  # one token whose features are all equal: only eps keeps LN finite
    return [("a batch of 2 sequences of 3 tokens, width 4", shifted),
            ("3 sequences of 5 tokens, width 8", wide),
            ("a batch with one token whose 4 features are all equal", flat),
            ("a batch of one sequence of one token, width 4", torch.tensor([[[0.5, -1.5, 2.0, 0.25]]], dtype=torch.float64))]


def _check_sublayer(answer) -> str:
    answer = require_function(answer, "sublayer_step", 3)
    for shown_x, x in _stream_inputs():
        for shown_f, sub in _sublayers():
            for norm in ("pre", "post"):
                shown = f"{shown_x}, {shown_f}, norm={norm!r}"
                got = _step(answer, x, sub, norm, shown)
                pre, post = x + sub(_norm(x)), _norm(x + sub(x))
                wanted, other = (pre, post) if norm == "pre" else (post, pre)
                placed = "at the input of the sublayer" if norm == "pre" else "after the sum"
                mistakes = [
                    (other, f"you placed LayerNorm as the {'post' if norm == 'pre' else 'pre'}-LN sublayer does. "
                            f"For norm={norm!r} it goes {placed}.", "wrong-norm-place"),
                    (sub(_norm(x)) if norm == "pre" else _norm(sub(x)),
                     "you returned the sublayer's write without the residual connection: add the stream x "
                     "back (the skip path)" + (" before normalising." if norm == "post" else "."), "no-residual"),
                    (_norm(x) + sub(_norm(x)) if norm == "pre" else _norm(x) + sub(x),
                     "the skip path must carry x itself, not its normalised copy: LN(x) feeds the sublayer "
                     "only." if norm == "pre" else "you normalised x before the sum; post-LN normalises the sum.",
                     "normalised-skip"),
                    (x + _norm(sub(x)) if norm == "post" else x + _norm(sub(_norm(x))),
                     "you normalised the sublayer's write, x + LN(F(x)). Post-LN normalises the sum: "
                     "LN(x + F(x))." if norm == "post" else "you normalised the sublayer's write as well. Pre-LN "
                     "normalises only what the sublayer reads: x + F(LN(x)).", "normalised-write"),
                    (x + sub(_norm(x, (0,))) if norm == "pre" else _norm(x + sub(x), (0,)),
                     "you normalised over the batch axis (dim 0). LayerNorm normalises each token over its "
                     "d features: the last axis, dim=-1, with keepdim=True.", "batch-axis"),
                    (x + sub(_norm(x, (1,))) if norm == "pre" else _norm(x + sub(x), (1,)),
                     "you normalised over the tokens axis (dim 1). LayerNorm normalises each token over its "
                     "d features: the last axis, dim=-1.", "token-axis"),
                    (x + sub(_norm(x, (-2, -1))) if norm == "pre" else _norm(x + sub(x), (-2, -1)),
                     "you normalised over all the numbers of a sequence at once. LayerNorm normalises each "
                     "token separately, over its d features (dim=-1).", "all-axes"),
                    (x + sub(_norm(x, unbiased=True)) if norm == "pre" else _norm(x + sub(x), unbiased=True),
                     "your variance divides by d - 1 (torch's default for .var() and .std()). LayerNorm uses "
                     "the mean of squared deviations: .var(dim=-1, unbiased=False, keepdim=True).",
                     "unbiased-variance"),
                    (x + sub(_norm(x, eps=0.0)) if norm == "pre" else _norm(x + sub(x), eps=0.0),
                     "your eps is not 1e-5 (left out, or far smaller): put eps = 1e-5 inside the square root, "
                     "sqrt(var + eps), as nn.LayerNorm does, so that a token whose features are all equal does not "
                     "divide by 0.", "eps-missing"),
                    *[(x + sub(_norm(x, eps=eps)) if norm == "pre" else _norm(x + sub(x), eps=eps),
                       f"your eps is {eps:g}, not 1e-5: use eps = 1e-5 (nn.LayerNorm's default, as the task "
                       "says) inside the square root, sqrt(var + eps).", "wrong-eps") for eps in OTHER_EPS],
                    (x + sub(_norm(x, eps_inside=False)) if norm == "pre" else _norm(x + sub(x), eps_inside=False),
                     "you added eps to the standard deviation, sqrt(var) + eps. LayerNorm adds it to the variance, "
                     "inside the square root: divide by sqrt(var + eps).", "eps-on-std"),
                ]
                if shown_x.startswith("a batch with one token") and not np.isfinite(as_array(got, "sublayer_step", shown)).all():
                    raise Mistake(f"for {shown}: you got NaN where a token's features are all equal (variance 0). "
                                  "Put eps = 1e-5 inside the square root: sqrt(var + eps).", key="nan-no-eps")
                terms = [("the stream x (the skip path)", x), ("the sublayer's write", sub(_norm(x)))] \
                    if norm == "pre" else ()
                expect_close(got, wanted, name="sublayer_step", shown=shown, mistakes=mistakes, rtol=1e-5, atol=1e-7,
                             terms=terms)
                if hasattr(got, "shape") and tuple(got.shape) != tuple(x.shape):
                    raise Mistake(f"`sublayer_step` returned shape {tuple(got.shape)} for {shown}; it must keep "
                                  f"the stream's shape {tuple(x.shape)}.", key="shape-changed")
    generator = torch.Generator().manual_seed(14)
    for norm in ("pre", "post"):
        x = (1.0 + torch.randn(2, 3, 4, generator=generator, dtype=torch.float64)).requires_grad_()
        weight = (torch.randn(4, 4, generator=generator, dtype=torch.float64) / 2).requires_grad_()
        sub = lambda h: torch.tanh(h @ weight)  # noqa: E731
        shown = f"a batch of shape (2, 3, 4), a tanh sublayer with a weight, norm={norm!r}, backward pass"
        with torch.enable_grad():
            got = _step(answer, x, sub, norm, shown, copies=False)
            want = x + sub(_norm(x)) if norm == "pre" else _norm(x + sub(x))
        expect_gradients(got, want, {"x": (x, INPUT_WHY), "the sublayer's weight": (weight, WEIGHT_WHY)},
                         name="sublayer_step", shown=shown, rtol=1e-5, atol=1e-7)
    return ("pre-LN adds Sublayer(LN(x)) to the untouched stream; post-LN normalises x + Sublayer(x); "
            "LayerNorm works per token over its features, on every input tried (a constant token included).")


sublayer_step = Exercise(
    "Exercise 10.1: a pre-LN and a post-LN sublayer",
    _check_sublayer,
    hints=[
        "Write LN first, as a small function inside yours: `F.layer_norm(h, h.shape[-1:])` normalises each "
        "token over its d features (the last axis), with eps = 1e-5 and no learned scale or shift.",
        "If you write LN by hand instead: the mean and the variance over dim=-1 with keepdim=True, so they "
        "broadcast back against x; the plain variance (unbiased=False); eps = 1e-5 inside the square root.",
        "Pre-LN: the sublayer reads the normalised stream and its write is added to x itself. Post-LN: "
        "the sublayer reads x itself, and the sum x + write is what gets normalised.",
    ],
)


def _blocks():
    """Three fixed residual blocks the checker streams through (pre-LN-like edits of the stream)."""
    generator = torch.Generator().manual_seed(12)
    weights = [torch.randn(6, 6, generator=generator, dtype=torch.float64) / 6 ** 0.5 for _ in range(4)]
    return [lambda h, w=w: h + 0.8 * torch.tanh(_norm(h) @ w) for w in weights]


def _mean_square(t: torch.Tensor) -> float:
    return float(t.pow(2).mean())


def _check_variances(answer) -> str:
    answer = require_function(answer, "stream_variances", 2)
    generator = torch.Generator().manual_seed(13)
    blocks = _blocks()
    inputs = [("x of shape (2, 3, 6) with 4 blocks", 0.5 + torch.randn(2, 3, 6, generator=generator, dtype=torch.float64),
               blocks),
              ("x of shape (1, 4, 6) with 1 block", torch.randn(1, 4, 6, generator=generator, dtype=torch.float64),
               blocks[:1]),
              ("x of zeros, shape (2, 2, 6), with 2 blocks", torch.zeros(2, 2, 6, dtype=torch.float64), blocks[:2]),
              ("x of shape (3, 2, 6) with no blocks", torch.randn(3, 2, 6, generator=generator, dtype=torch.float64),
               [])]
    for shown, x, chosen in inputs:
        got = call(answer, x, tuple(chosen), name="stream_variances", shown=shown)
        states = [x]
        for block in chosen:
            states.append(block(states[-1]))
        want = [_mean_square(s) for s in states]
        writes = [_mean_square(after - before) for before, after in zip(states, states[1:])]
        twice = [x]
        for block in chosen:
            twice.append(twice[-1] + block(twice[-1]))
        added_twice = [_mean_square(s) for s in twice]
        mistakes = [
            (np.sqrt(want), "you returned the root mean square (RMS). The mean square is its square: the mean "
                            "of the squared entries, without the square root.", "rms-not-ms"),
            (want[1:], f"you left out the stream before the first block: return {len(chosen) + 1} numbers for "
                       f"{len(chosen)} block(s), starting with the input's.", "stream-left-out"),
            (writes, "you measured each block's write (block(x) - x), not the stream the next block reads.",
            "measured-writes"),
            ([float(s.var()) for s in states],
             "you used .var(), which subtracts the mean and divides by n - 1. The stream's mean square is "
             "the mean of its squared entries: (x ** 2).mean().", "var-not-ms"),
            ([float(s.var(unbiased=False)) for s in states],
             "you used .var(unbiased=False), the variance about the stream's mean. The mean square subtracts "
             "no mean: (x ** 2).mean().", "biased-var-not-ms"),
            ([float(s.var(dim=-1, unbiased=False).mean()) for s in states],
             "you took each token's variance about its own mean; the stream's mean square is the mean of "
             "its squared entries, (x ** 2).mean(), without subtracting any mean.", "per-token-variance"),
            (added_twice, "you added h again, h = h + block(h). Each block already contains its residual "
                          "connection: the new stream is block(h).", "skip-added-twice"),
            ([want[0]] + [_mean_square(block(x)) for block in chosen],
             "you passed x to every block. Feed each block the stream the previous one returned.", "x-to-every-block"),
        ]
        got_list = expect_float_list(got, name="stream_variances", shown=shown)
        expect_close(got_list, want, name="stream_variances", shown=shown, mistakes=mistakes, rtol=1e-9, atol=1e-12)
    return ("one mean square for the input and one after every block, each the mean of the stream's squared "
            "entries, on every input tried (zeros and an empty stack included).")


stream_variances = Exercise(
    "Exercise 10.2: the stream's mean square after each block",
    _check_variances,
    hints=[
        "Keep a running stream h, starting at x. Record its size, pass it through the next block, record "
        "again: L blocks give L + 1 numbers.",
        "Each block already contains its residual connection: the block's output is the new stream. Do not "
        "add h again.",
        "The size to record is the mean of the squared entries of h over every number at once, as a Python "
        "float (float(...)). No square root, and no mean subtracted.",
    ],
)
