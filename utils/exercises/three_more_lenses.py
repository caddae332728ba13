"""Checkers for notebook 13 (three more lenses on the skip).

* Exercise 13.1: a residual stack as Euler's method, x <- x + h tanh(x W_l^T) for every layer.
* Exercise 13.2: the logit lens, the output head applied to the stream after the stem and after
  every block of a make_mlp network.
"""
from __future__ import annotations

import copy

import torch
from torch import nn

from utils.exercises.core import Exercise, call, expect_close, expect_gradients, parameter_leaves, require_function
from utils.logit_lens import _lens_logits
from utils.mlp import make_mlp

# ----- Exercise 13.1: Euler's method as a residual stack ---------------------------------------

X_WHY = "The stack is trained through its output: the gradient must reach the input (and every earlier layer)."
WEIGHTS_WHY = "Every layer's weight is learned: a weight that gets no gradient is never updated by training."


def _euler(x, weights, h, *, skip=1.0, branch_scale=None, transpose=True, activation=torch.tanh,
           frozen_input=False):
    """x <- skip x + branch_scale activation(x W_l^T) (default branch_scale h), with switches
    that reproduce the usual mistakes."""
    branch_scale = h if branch_scale is None else branch_scale
    out = x
    for weight in weights:
        read = x if frozen_input else out
        out = skip * out + branch_scale * activation(read @ (weight.T if transpose else weight))
    return out


def _euler_cases():
    generator = torch.Generator().manual_seed(13)
    cases = []
    for batch, d, depth, h in ((3, 4, 5, 0.2), (2, 3, 1, 0.5), (4, 2, 8, 0.125), (1, 5, 3, 1.0 / 3)):
        x = torch.randn(batch, d, generator=generator, dtype=torch.float64)
        weights = torch.randn(depth, d, d, generator=generator, dtype=torch.float64)
        cases.append((x, weights, h, f"x of shape ({batch}, {d}), {depth} weight(s) of shape ({d}, {d}), h = {h:.4g}"))
    return cases


def _check_euler_stack(answer) -> str:
    answer = require_function(answer, "euler_stack", 3)
    for x, weights, h, shown in _euler_cases():
        got = call(answer, x, weights, h, name="euler_stack", shown=shown)
        want = _euler(x, weights, h)
        depth = len(weights)
        mistakes = [
            (_euler(x, weights, h, skip=0.0),
             "your layers have no skip path: each one returns h tanh(x W^T) alone. A residual block adds its "
             "write to the stream: x = x + h * torch.tanh(x @ W.T).", "no-skip"),
            (_euler(x, weights, h, skip=h, branch_scale=1.0),
             "you scaled the skip path by h and left the branch at full size: x = h x + tanh(x W^T). The step "
             "size h multiplies the branch (the write); the stream itself passes unchanged.", "h-on-skip"),
            (_euler(x, weights, h, branch_scale=1.0),
             "you left out the step size: x = x + tanh(x W^T). Multiply each write by h.", "no-step-size"),
            (_euler(x, weights, h, transpose=False),
             "you multiplied by W instead of its transpose. x holds one input per row, so the layer is "
             "x @ W.T (W x for a single column vector x).", "not-transposed"),
            (_euler(x, weights.flip(0), h),
             "you went through the weights from the last to the first. Layer l uses weights[l]: start with "
             "weights[0].", "layers-reversed"),
            (_euler(x, weights, h, branch_scale=h / depth),
             "your writes are h / L times the branch, not h: h is given already as the step size (1/L in the "
             "notebook); do not divide it by the depth again.", "divided-by-depth"),
            (_euler(x, weights, h, frozen_input=True),
             "every layer read the original input x instead of the stream so far: each branch must read what "
             "the layers before it have left, x after the previous update.", "frozen-input"),
            (_euler(x, weights, h, activation=torch.relu),
             "you used ReLU; the branch of this task is tanh(x W^T).", "relu"),
        ]
        if depth > 1:
            mistakes.append((h * torch.tanh(_euler(x, weights[:-1], h) @ weights[-1].T),
                             "you returned the last layer's write alone, h tanh(x W^T). Return the stream: "
                             "the input plus every layer's write.", "last-write-only"))
        expect_close(got, want, name="euler_stack", shown=shown, mistakes=mistakes, rtol=1e-9, atol=1e-12)
        leaf_x, leaf_w = x.clone().requires_grad_(), weights.clone().requires_grad_()
        with torch.enable_grad():
            got = call(answer, leaf_x, leaf_w, h, name="euler_stack", shown=shown, copies=False)
            want = _euler(leaf_x, leaf_w, h)
        expect_gradients(got, want, {"x": (leaf_x, X_WHY), "the weights": (leaf_w, WEIGHTS_WHY)},
                         name="euler_stack", shown=shown)
    return ("x <- x + h tanh(x W_l^T) through every layer in order, for 1 to 8 layers and several step sizes; "
            "the gradient reaches the input and every weight.")


euler_stack = Exercise(
    "Exercise 13.1: a residual stack as Euler's method",
    _check_euler_stack,
    hints=[
        "One step of Euler's method is x_new = x + h * F(x), with F(x) = tanh(x W^T) here.",
        "Loop over the layers: `for weight in weights:` gives weights[0], then weights[1], ...",
        "Inside the loop: `x = x + h * torch.tanh(x @ weight.T)`; return x after the loop. Reassigning x "
        "(not `x +=`) leaves the caller's tensor as it was.",
    ],
)


# ----- Exercise 13.2: the logit lens -------------------------------------------------------------

LENS_WHY = ("A lens is a function of the network: the tuned lens trains on it and attribution methods send "
            "gradients back through it, so it must be built from the model with torch operations.")
INPUT_WHY = "Asking which inputs a block's guess depends on means sending a gradient back to x through the lens."


def _lens_model(architecture: str, depth: int, seed: int) -> nn.Module:
    """A small make_mlp network with non-trivial BatchNorm statistics, in eval mode."""
    model = make_mlp(architecture, depth, width=16, seed=seed, dtype=torch.float64)
    generator = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        model.train()
        model(torch.randn(32, 64, generator=generator, dtype=torch.float64) * 2 + 0.5)  # moves the running statistics
    return model.eval()


def _streams(model, x) -> torch.Tensor:
    """The stream itself after the stem and after each block, undecoded: (blocks + 1, batch, width)."""
    h = model.stem(x)
    streams = [h]
    for block in model.blocks:
        h = block(h)
        streams.append(h)
    return torch.stack(streams)


def _check_decode_stream(answer) -> str:
    answer = require_function(answer, "decode_stream", 2)
    generator = torch.Generator().manual_seed(132)
    for architecture, depth, seed in (("residual", 8, 0), ("plain", 6, 1), ("residual", 4, 2)):
        model = _lens_model(architecture, depth, seed)
        x = torch.randn(5, 64, generator=generator, dtype=torch.float64)
        blocks = len(model.blocks)
        shown = f"a {architecture} MLP of depth {depth} ({blocks} blocks, width 16) in eval mode and 5 digits x"
        got = call(answer, model, x, name="decode_stream", shown=shown)
        with torch.no_grad():
            want = _lens_logits(model, x)
            trained_mode = _lens_logits(copy.deepcopy(model).train(), x)
            streams = _streams(model, x)
        mistakes = [
            (want[1:], "your readings start after the first block: read the stream right after the stem too "
                       "(position 0), so there are len(model.blocks) + 1 readings.", "no-stem-reading"),
            (want[:-1], "you read the stream before each block rather than after it: the last reading must be "
                        "the model's own output, the head applied after the last block.", "before-each-block"),
            (torch.softmax(want, dim=-1), "you returned probabilities (softmax). Return the head's logits: the "
                                          "numbers model.head gives, before any softmax.", "softmax"),
            (torch.log_softmax(want, dim=-1), "you returned log-probabilities (log_softmax). Return the head's "
                                              "logits as they are.", "log-softmax"),
            (streams,
             "you returned the stream itself; decode it: apply model.head to the stream at every position.", "stream-not-decoded"),
            (want[-1:].expand_as(want), "every reading is the model's final output: apply the head to the stream "
                                        "after each block, not to model(x).", "only-final-output"),
            (trained_mode, "your readings use BatchNorm's batch statistics: the model was switched to training mode. "
                           "Leave it in the eval mode it was given.", "training-mode"),
            (want[-1], "you returned only the last reading (the model's output). Stack the head's reading after "
                           "the stem and after every block: torch.stack(readings).", "last-reading-only"),
        ]
        expect_close(got, want, name="decode_stream", shown=shown, mistakes=mistakes, rtol=1e-9, atol=1e-12)
        leaf = x.clone().requires_grad_()
        with torch.enable_grad():
            got = call(answer, model, leaf, name="decode_stream", shown=shown, copies=False)
            want = _lens_logits(model, leaf)
        expect_gradients(got, want, {"the input x": (leaf, INPUT_WHY), **{
            what: (parameter, LENS_WHY) for what, (parameter, _) in parameter_leaves(model.head, "head.").items()}},
                         name="decode_stream", shown=shown)
    return ("the head's logits after the stem and after every block, stacked into (blocks + 1, batch, classes), "
            "the last one the model's output, for residual and plain networks; gradients reach x and the head.")


decode_stream = Exercise(
    "Exercise 13.2: the logit lens",
    _check_decode_stream,
    hints=[
        "Follow the model's own forward pass: `h = model.stem(x)`, then `for block in model.blocks: h = block(h)`.",
        "Read the stream at every stop: `model.head(h)` once after the stem and once after every block, collected "
        "in a list.",
        "`torch.stack(readings)` turns the list of (batch, classes) tensors into one of shape "
        "(blocks + 1, batch, classes).",
    ],
)
