"""Exercises of notebook 06 (thirty layers deep): measure the gradient at every layer of a
stack with a loss that is not constant, and see LayerNorm divide the gradient by its
input's size."""
from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as functional

from utils.blocks import make_stack
from utils.exercises.core import (OTHER_EPS, Exercise, Mistake, call, expect_close, expect_float_list,
                                  require_function, show_input)
from utils.gradient_flow import profile_stack


def _as_floats(result, name: str, shown: str) -> list[float]:
    """The list of Python floats the task asks for, as a float64 array; a list of whole
    gradients gets its own message."""
    if isinstance(result, (list, tuple)) and any(isinstance(v, torch.Tensor) and v.numel() > 1 for v in result):
        raise Mistake(f"`{name}` returned a list of tensors for {shown} (the gradients themselves?): take "
                      "`.norm().item()` of each, one number per layer.", key="tensors-not-numbers")
    return expect_float_list(result, name=name, shown=shown)


def _stack(depth: int, d: int, seed: int, **config):
    torch.manual_seed(seed)
    return make_stack(depth, d, **config).double()


# ----- Exercise 06.2: the per-layer gradient-norm probe ----------------------------------

def _norm_cases():
    generator = torch.Generator().manual_seed(61)
    cases = []
    for depth, d, shape, config, label in (
            (4, 16, (5, 16), {"norm": "pre"}, "a 4-block pre-norm residual stack"),
            (3, 16, (6, 16), {"norm": "post"}, "a 3-block post-norm residual stack"),
            (1, 8, (2, 3, 8), {"residual": False}, "a 1-block plain stack and a (2, 3, 8) input"),
            (5, 8, (4, 8), {"residual": False}, "a 5-block plain stack")):
        x = torch.randn(shape, generator=generator, dtype=torch.float64)
        g = torch.randn(shape, generator=generator, dtype=torch.float64)
        cases.append((_stack(depth, d, depth, **config), x, g, label))
    return cases


class _Recorder(torch.nn.Module):
    """Wraps a block and keeps the tensors it was given, to see which activation lost its .grad."""

    def __init__(self, block, seen: list):
        super().__init__()
        self.block, self.seen = block, seen

    def forward(self, x):
        self.seen.append(x)
        return self.block(x)


def _explain_none(mistake: Mistake, answer, stack, x, g) -> Mistake:
    """A `.grad` that was None: rerun the answer on a recording stack and say which activation
    autograd kept no gradient for (the input copy or the intermediates)."""
    text = str(mistake)
    if "NoneType" not in text:
        return mistake
    seen: list = []
    recording = torch.nn.Sequential(*[_Recorder(block, seen) for block in copy.deepcopy(stack)])
    try:
        answer(recording, copy.deepcopy(x), g)
    except Exception:  # the same error again: we only want what the blocks saw
        pass
    cut = [i for i, t in enumerate(seen[1:], start=1) if not t.requires_grad]
    if cut:  # a block's output requires grad (its weights do), so its next block's input was cut off
        return Mistake(text + f" The input of block {cut[0]} does not require grad: the graph is cut between blocks "
                       "(a `.detach()`, `.data`, a NumPy round trip or `torch.no_grad()`), so the backward pass "
                       "stops there. Feed each block the previous block's output itself.", key="graph-cut")
    if seen and not seen[0].requires_grad:
        return Mistake(text + " Your x_0 does not require grad, so autograd computes no gradient for it: make "
                       "x_0 a copy that requires grad, `x.detach().clone().requires_grad_(True)`.", key="x0-no-grad")
    if seen and not seen[0].is_leaf and not seen[0].retains_grad:
        return Mistake(text + " Your x_0 is not a leaf: x already required grad, so x.clone() is part of its "
                       "graph and keeps no .grad. Cut it off first: `x.detach().clone().requires_grad_(True)`.",
                       key="x0-not-leaf")
    return Mistake(text + " A `.grad` was None: autograd keeps `.grad` only for leaf tensors. Call "
                   "`x_l.retain_grad()` on every intermediate activation before `backward()`, or ask "
                   "for the gradients directly with `torch.autograd.grad(loss, activations)`.", key="grad-none")


def _check_activation_gradient_norms(answer) -> str:
    name = "activation_gradient_norms"
    answer = require_function(answer, name, 3)
    for stack, x, g, label in _norm_cases():
        shown = f"{label} (input {show_input(x)})"
        try:
            result = call(answer, stack, x, g, name=name, shown=shown)
        except Mistake as mistake:
            raise _explain_none(mistake, answer, stack, x, g) from None
        got = _as_floats(result, name, shown)
        want = profile_stack(stack, x, g).grad_norm
        ones = profile_stack(stack, x).grad_norm
        activations = [x]
        with torch.no_grad():
            for block in stack:
                activations.append(block(activations[-1]))
        depth = len(stack)
        expect_close(got, want, name=name, shown=shown, rtol=1e-9, atol=1e-12, mistakes=[
            (ones, "these are the gradients of output.sum(), not of the loss (output * g).sum(). Use the "
                   "upstream gradient g: `(output * g).sum().backward()`. (For a post-norm stack output.sum() "
                   "is constant, so its gradient is zero: a useless loss.)", "output-sum-loss"),
            ([float(a.norm()) for a in activations],
             "these are the norms of the activations x_l themselves, not of the gradients dL/dx_l. "
             "Take `.grad.norm()` of each x_l after the backward pass.", "activation-norms"),
            ([0.0] * depth + [want[-1]], "only the output's gradient is there, every earlier one is 0: the backward "
             "pass stops between blocks. A `.detach()`, `.data`, a NumPy round trip or `torch.no_grad()` between "
             "them cuts the graph; feed each block the previous block's output itself.", "backward-stops"),
            (want[::-1], "the numbers are right but in reverse order: entry 0 must be the input x_0, "
                         "the last entry the output.", "reversed"),
            (want[1:], f"you returned {depth} numbers; return {depth + 1}: include the input x_0 (layer 0).",
            "input-left-out"),
            (want[:-1], f"you returned {depth} numbers; return {depth + 1}: include the output x_{depth}, "
                        "whose gradient is g itself.", "output-left-out"),
        ])
    # Two calls on the same objects must give the same numbers.
    stack, x, g, label = _norm_cases()[0]
    stack, x, g = copy.deepcopy((stack, x, g))
    x.requires_grad_(True)
    shown = f"{label}, twice on the same input (one that already requires grad)"
    try:
        first, second = (call(answer, stack, x, g, name=name, shown=shown, copies=False) for _ in range(2))
    except Mistake as mistake:
        raise _explain_none(mistake, answer, stack, x, g) from None
    first, second = _as_floats(first, name, label), _as_floats(second, name, label)
    if np.allclose(second[0], 2 * first[0], rtol=1e-6) and not np.allclose(second[0], first[0], rtol=1e-6):
        raise Mistake("called twice on the same input, the gradient at the input doubled: `.grad` accumulates "
                      "across backward passes. Work on a fresh copy, `x.detach().clone().requires_grad_(True)`, "
                      "or zero the gradient first.", key="grad-accumulated")
    expect_close(second, first, name=name, shown=f"{label}, called a second time", rtol=1e-6, atol=1e-9)
    return ("the gradient norm at every layer, input to output, for loss (output * g).sum(): right for pre-norm, "
            "post-norm and plain stacks, for a 3-D input, and the same on a second call.")


activation_gradient_norms = Exercise(
    "Exercise 06.2: the gradient norm at every layer",
    _check_activation_gradient_norms,
    [
        "Keep every activation in a list: start with a copy of x that requires grad, then append block(x_l) "
        "for every block of the stack.",
        "The loss is (output * g).sum(): its gradient at the output is g itself, so every configuration, "
        "post-norm too, feels it.",
        "Autograd keeps .grad only for leaf tensors. Call .retain_grad() on every activation before "
        "loss.backward(), or use torch.autograd.grad(loss, activations), which returns all of them.",
        "Return [a.grad.norm().item() for a in activations]: depth + 1 numbers, the input first.",
    ])


# ----- Exercise 06.1: LayerNorm divides the gradient by its input's size ------------------

def _layernorm_gain(u: torch.Tensor, g: torch.Tensor, loss: str = "projection", eps: float = 1e-5) -> float:
    u = u.detach().clone().requires_grad_(True)
    out = functional.layer_norm(u, (u.shape[-1],), eps=eps)
    (grad,) = torch.autograd.grad((out * g).sum() if loss == "projection" else out.sum(), u)
    return float(grad.norm()) / float(g.norm())


def _check_layernorm_gains(answer) -> str:
    name = "layernorm_gains"
    answer = require_function(answer, name, 3)
    generator = torch.Generator().manual_seed(62)
    cases = []
    for shape, scales in (((8, 16), [0.2, 1.0, 5.0]), ((3, 32), [2.0]), ((2, 4, 8), [0.5, 0.1, 10.0, 1.0])):
        x = torch.randn(shape, generator=generator, dtype=torch.float64)
        g = torch.randn(shape, generator=generator, dtype=torch.float64)
        cases.append((x, g, scales))
    for x, g, scales in cases:
        shown = f"x of shape {tuple(x.shape)} and scales {scales}"
        got = _as_floats(call(answer, x, g, scales, name=name, shown=shown), name, shown)
        want = np.array([_layernorm_gain(c * x, g) for c in scales])
        expect_close(got, want, name=name, shown=shown, rtol=1e-9, atol=1e-12, mistakes=[
            (np.zeros(len(scales)), "every gain is 0: no gradient reached u. The graph is cut between u and the "
             "loss (a `.detach()`, `.data`, `torch.no_grad()` or NumPy on the way), or the loss is constant "
             "(output.sum(), which LayerNorm makes 0 for every input). Use (F.layer_norm(u, ...) * g).sum() on "
             "u itself.", "no-gradient"),
            ([_layernorm_gain(c * x, g, eps=0.0) for c in scales],
             "your LayerNorm has no eps (or another one than F.layer_norm's default, 1e-5), which matters most for "
             "the small inputs: call F.layer_norm(u, (u.shape[-1],)) without changing eps.", "no-eps"),
            *[([_layernorm_gain(c * x, g, eps=eps) for c in scales],
               f"your LayerNorm's eps is {eps:g}, not F.layer_norm's default 1e-5, which matters most for the small "
               "inputs: call F.layer_norm(u, (u.shape[-1],)) without changing eps.", "wrong-eps") for eps in OTHER_EPS],
            (want * np.array(scales), "every scale gives the same gain: you differentiated with respect to x, "
                                      "not with respect to the LayerNorm's input u = c * x. The factor c "
                                      "then cancels LayerNorm's 1/c. Make u a leaf that requires grad.",
                                      "gradient-wrt-x"),
            ([_layernorm_gain(c * x, g, loss="sum") for c in scales],
             "the gains are (almost) zero: you used output.sum(). LayerNorm's output sums to 0 over each "
             "row whatever its input, so that loss is constant. Use (LN(u) * g).sum().", "output-sum-loss"),
            (want * float(g.norm()), "these are gradient norms, not gains: divide by the norm of g, the "
                                     "gradient that arrived at the output.", "norms-not-gains"),
        ])
    return ("the gain of a LayerNorm falls like 1/c as its input grows c times: LayerNorm divides the gradient "
            "by the size of its input.")


layernorm_gains = Exercise(
    "Exercise 06.1: LayerNorm's gradient gain against the size of its input",
    _check_layernorm_gains,
    [
        "For each c, the LayerNorm's input is u = c * x. You want the gradient with respect to u, so u must be "
        "the tensor that requires grad.",
        "LayerNorm without learned scale and shift over the last dimension is "
        "F.layer_norm(u, (u.shape[-1],)).",
        "The loss is (F.layer_norm(u, ...) * g).sum(); the gain is the norm of du divided by the norm of g.",
        "Make u with (c * x).detach().requires_grad_(True), then torch.autograd.grad(loss, u) gives du.",
    ])
