"""Checkers for notebook 11 (recipes that make very deep residual stacks train).

* Exercise 11.1: Fixup's initialisation of a He-initialised norm-free residual MLP,
  returned as a new model.
* Exercise 11.2: the residual stream of a stack whose branches are scaled by the fixed
  constant 1/sqrt(L).
"""
from __future__ import annotations

import copy
import math

import numpy as np
import torch

from utils import recipes
from utils.exercises.core import (INPUT_WHY, WEIGHT_WHY, Exercise, Mistake, as_array, call, expect_close,
                                  expect_gradients, expect_new_model, require_function)


def _weights(model, keys) -> np.ndarray:
    """The tensors ``keys`` of ``model``'s state, flattened into one float64 vector."""
    state = model.state_dict()
    return np.concatenate([state[k].detach().double().flatten().numpy() for k in keys])


def _variant(model, *, fc1=None, fc2=None, head=None, stem=None):
    """A copy of ``model`` with each block's fc1/fc2 weight, the head and the stem changed by
    the given function (``None`` leaves it alone); biases of a zeroed layer are zeroed too."""
    new = copy.deepcopy(model)
    with torch.no_grad():
        layers = [(b.fc1, fc1) for b in new.blocks] + [(b.fc2, fc2) for b in new.blocks]
        layers += [(new.head, head), (new.stem, stem)]
        for layer, change in layers:
            if change is not None:
                layer.weight.copy_(change(layer.weight))
                if change(torch.ones(())) == 0:
                    layer.bias.zero_()
    return new


def _fc1_factor(model, got) -> float | None:
    """The one factor by which ``got`` scaled every fc1 weight of ``model``, or None if there is none."""
    before = _weights(model, [k for k in model.state_dict() if k.endswith("fc1.weight")])
    after = _weights(got, [k for k in model.state_dict() if k.endswith("fc1.weight")])
    factor = float(np.dot(after, before) / np.dot(before, before))
    return factor if np.allclose(after, factor * before, rtol=1e-6, atol=1e-9) else None


def _why_factor(factor: float, L: int) -> str:
    """What a wrong fc1 factor most likely came from, in words."""
    if math.isclose(factor, 1 / (2 * L), rel_tol=1e-6):
        return "Mind the brackets: L ** -1/2 means (L ** -1) / 2."
    if math.isclose(factor, (L + 1) ** -0.5, rel_tol=1e-6):
        return "L is the number of branches, len(model.blocks), not one more."
    return "Check the exponent and what L counts (the number of branches, len(model.blocks))."


def _first_wrong_part(model, got, inner: float, L: int) -> Mistake:
    """Which of Fixup's changes a wrong copy misses, looked at part by part (the mistakes
    list knows only whole wrong recipes), as a Mistake whose message follows "for <case>: "."""
    state, given = got.state_dict(), model.state_dict()
    for i in range(L):
        if state[f"blocks.{i}.fc2.weight"].abs().max() > 0:
            return Mistake(f"the last layer of `blocks[{i}]` (its fc2, of {L} blocks) is not zero. Fixup "
                           "zero-initialises the last layer of every branch, so every block starts as the identity.",
                           key="fc2-not-zero")
    if state["head.weight"].abs().max() > 0:
        return Mistake("the classifier (model.head) is not zero. Fixup zero-initialises its weight too.",
                       key="head-not-zero")
    for name in given:
        if (name.endswith("bias") or name.startswith("stem")) and not torch.equal(state[name], given[name]):
            return Mistake(f"`{name}` changed. Fixup changes only the weights of fc1, fc2 and the head; leave the "
                           "stem and every bias as they are.", key="stem-or-bias-changed")
    factor = _fc1_factor(model, got)
    if factor is None:
        return Mistake("the inner layers (fc1) are not all scaled by one factor. Multiply the weight of fc1 in every "
                       f"block by the same L ** -0.5 = {inner:.3g}.", key="fc1-factors-differ")
    return Mistake(f"your inner layers (fc1) are scaled by {factor:.4g}; Fixup's factor is L^(-1/(2m-2)) with m = 2, "
                   f"that is L ** -0.5 = {inner:.4g}. " + _why_factor(factor, L), key="wrong-fc1-factor")


def _check_fixup(answer) -> str:
    answer = require_function(answer, "fixup", 1)
    for depth, seed in ((20, 1), (56, 0), (6, 2)):
        model = recipes.build_deep_mlp(depth, "default", seed=seed)
        L = len(model.blocks)
        shown = f"a He-initialised {depth}-layer model (L = {L} branches)"
        try:
            handed = []
            got = call(answer, model, name="fixup", shown=shown, handed=handed)
        except Mistake as mistake:
            if "in place" in str(mistake):
                raise Mistake(f"`fixup` changed the model it was given ({shown}). Make a new one first, "
                              "`new = copy.deepcopy(model)`, and change only `new`.",
                              key="changed-given-model") from None
            if "leaf Variable" in str(mistake):
                raise Mistake("torch refused to change a weight in place because it tracks gradients. Put the "
                              "changes inside `with torch.no_grad():`.", key="no-torch-no-grad") from None
            raise
        if got is model or not isinstance(got, torch.nn.Module) or not hasattr(got, "blocks"):
            raise Mistake(f"`fixup` should return a new model of the same kind as its input; for {shown} it "
                          f"returned a {type(got).__name__}.", key="not-a-model")
        keys = list(model.state_dict())
        missing = [k for k in keys if k not in got.state_dict()]
        if missing:
            raise Mistake(f"the model `fixup` returned has no {missing[0]}: change the weights of a copy, "
                          "do not rebuild the layers.", key="layers-rebuilt")
        expect_new_model(got, handed[0], shown=shown)
        zero = lambda w: torch.zeros_like(w)
        inner = L ** -0.5
        want = _weights(_variant(model, fc1=lambda w: w * inner, fc2=zero, head=zero), keys)
        mistakes = [
            (_weights(model, keys), "the model you returned still has its He-normal weights: apply Fixup's "
                                    "changes to the copy before returning it.", "weights-unchanged"),
            (_weights(_variant(model, fc1=lambda w: w / L, fc2=zero, head=zero), keys),
             "you scaled the inner layer by 1/L. Fixup's factor is L^(-1/(2m-2)); with m = 2 layers per "
             "branch that is L^(-1/2) = 1/sqrt(L).", "inner-scale-1-over-l"),
            (_weights(_variant(model, fc1=lambda w: w * inner, head=zero), keys),
             "the last layer of each branch (fc2) is not zero. Fixup zero-initialises its weight (its bias is "
             "already 0), so every block starts as the identity.", "fc2-not-zero"),
            (_weights(_variant(model, fc1=lambda w: w * inner, fc2=zero), keys),
             "the classifier (model.head) is not zero. Fixup zero-initialises its weight too.", "head-not-zero"),
            (_weights(_variant(model, fc2=zero, head=zero), keys),
             "the inner layer of each branch (fc1) is not rescaled. Multiply its weight by L^(-1/2), L the "
             "number of branches.", "fc1-not-rescaled"),
            (_weights(_variant(model, fc1=zero, fc2=lambda w: w * inner, head=zero), keys),
             "you zeroed the first layer of each branch (fc1) and rescaled the last. It is the other way "
             "round: the last layer (fc2) starts at 0, the inner one (fc1) is rescaled.", "fc1-fc2-swapped"),
            (_weights(_variant(model, fc1=lambda w: w * depth ** -0.5, fc2=zero, head=zero), keys),
             "you counted L as the number of weight layers. L is the number of residual branches, "
             "len(model.blocks).", "l-counts-layers"),
            (_weights(_variant(model, fc1=lambda w: w * inner, fc2=zero, head=zero, stem=lambda w: w * inner), keys),
             "you rescaled the stem as well. The stem is not inside a residual branch: leave it as it is.",
             "stem-rescaled"),
        ]
        try:
            expect_close(_weights(got, keys), want, name="fixup", shown=shown, mistakes=mistakes, rtol=1e-6, atol=1e-9)
        except Mistake as mistake:
            if "gives wrong values" not in str(mistake):
                raise
            part = _first_wrong_part(model, got, inner, L)
            raise Mistake(f"for {shown}: {part}", key=part.key) from None
        for name, value in got.state_dict().items():
            if name.endswith("alpha") and float(value) != 1.0:
                raise Mistake(f"{name} is {float(value):g}: Fixup's scalar multiplier starts at 1.",
                key="multiplier-not-1")
    return ("the last layer of every branch and the classifier start at 0, the inner layer is scaled by "
            "L^(-1/2), and the model you were given is untouched, at depths 6, 20 and 56.")


fixup = Exercise(
    "Exercise 11.1: Fixup's initialisation",
    _check_fixup,
    hints=[
        "Start with `new = copy.deepcopy(model)` and change only `new`; the caller keeps the original. "
        "Change weights inside `with torch.no_grad():`.",
        "L is the number of residual branches: len(new.blocks). Each block has an inner layer fc1 and a last "
        "layer fc2; the classifier is new.head.",
        "Three changes: zero fc2's weight in every block; zero new.head's weight; multiply "
        "fc1's weight by L ** (-1 / (2 * m - 2)) with m = 2. In-place tensor methods such as .zero_() and "
        ".mul_() do it.",
    ],
)


def _branches(count: int, width: int, seed: int):
    """``count`` fixed branch functions of width ``width`` (Linear with a bias, ReLU, Linear,
    He-normal). The bias matters: without it F(h / c) = F(h) / c, and scaling what a branch
    reads could not be told from scaling what it writes."""
    generator = torch.Generator().manual_seed(seed)
    layers = [(torch.randn(width, width, generator=generator, dtype=torch.float64) * math.sqrt(2 / width),
               torch.randn(width, generator=generator, dtype=torch.float64),
               torch.randn(width, width, generator=generator, dtype=torch.float64) * math.sqrt(2 / width))
              for _ in range(count)]
    return tuple(lambda h, a=a, c=c, b=b: torch.relu(h @ a + c) @ b for a, c, b in layers)


def _run(x, branches, step) -> np.ndarray:
    states = [x]
    for branch in branches:
        states.append(step(states[-1], branch))
    return np.stack([s.detach().numpy() for s in states])


def _as_states(got, shown: str) -> np.ndarray:
    if isinstance(got, (list, tuple)):
        return np.stack([as_array(s, "scaled_stream", shown) for s in got]) if got else np.zeros((0,))
    return as_array(got, "scaled_stream", shown)


def _scale_used(got: np.ndarray, x, branches) -> float | None:
    """The constant c of a stream h + c F(h), read off the learner's first step (None if unclear)."""
    if got.ndim < 1 or got.shape[0] < 2 or got.shape[1:] != tuple(x.shape):
        return None
    write = branches[0](x).detach().numpy()
    if not np.any(write):
        return None
    return float(np.sum((got[1] - got[0]) * write) / np.sum(write * write))


def _expect_stream_gradients(answer) -> None:
    """Gradients of every state reach x and every branch's weights as in the recipe."""
    generator = torch.Generator().manual_seed(15)
    x = torch.randn(3, 4, generator=generator, dtype=torch.float64).requires_grad_()
    weights = [(torch.randn(4, 4, generator=generator, dtype=torch.float64) / 2).requires_grad_() for _ in range(3)]
    branches = tuple(lambda h, w=w: torch.tanh(h @ w) for w in weights)
    shown = "x of shape (3, 4) and 3 tanh branches with weights, backward pass"
    with torch.enable_grad():
        got = call(answer, x, branches, name="scaled_stream", shown=shown, copies=False)
        states = [x]
        for branch in branches:
            states.append(states[-1] + branch(states[-1]) / math.sqrt(3))
    if not isinstance(got, (list, tuple)) or not all(isinstance(s, torch.Tensor) for s in got) or len(got) != 4:
        raise Mistake(f"for {shown}: return the list of the 4 states as torch tensors.", key="states-not-tensors")
    leaves = {"x": (x, INPUT_WHY), **{f"branch {i + 1}'s weight": (w, WEIGHT_WHY) for i, w in enumerate(weights)}}
    expect_gradients(torch.stack(list(got)), torch.stack(states), leaves, name="scaled_stream", shown=shown)


def _check_scaled(answer) -> str:
    answer = require_function(answer, "scaled_stream", 2)
    generator = torch.Generator().manual_seed(14)
    inputs = [("x of shape (5, 8) and 9 branches", torch.randn(5, 8, generator=generator, dtype=torch.float64),
               _branches(9, 8, 1)),
              ("x of shape (3, 4) and 4 branches", 2.0 - torch.randn(3, 4, generator=generator, dtype=torch.float64),
               _branches(4, 4, 2)),
              ("x of zeros, shape (2, 8), and 9 branches", torch.zeros(2, 8, dtype=torch.float64), _branches(9, 8, 3)),
              ("x of shape (2, 4) and 1 branch", torch.randn(2, 4, generator=generator, dtype=torch.float64),
               _branches(1, 4, 4))]
    for shown, x, branches in inputs:
        got = _as_states(call(answer, x, branches, name="scaled_stream", shown=shown), shown)
        s = 1 / math.sqrt(len(branches))
        want = _run(x, branches, lambda h, f: h + s * f(h))
        mistakes = [
            (_run(x, branches, lambda h, f: h + f(h) / len(branches)),
             "you scaled each branch by 1/L. The recipe's constant is 1/sqrt(L): math.sqrt(L).", "scale-1-over-l"),
            (_run(x, branches, lambda h, f: h + f(s * h)),
             "you scaled what each branch reads, F(h / sqrt(L)). The recipe scales what it writes: "
             "h + F(h) / sqrt(L), the branch applied to h itself.", "scaled-input"),
            (_run(x, branches, lambda h, f: s * h + f(h)),
             "you scaled the skip path instead of the branch. The skip path must carry h unchanged (a clean "
             "identity); only the branch's write F(h) is multiplied by 1/sqrt(L).", "scaled-skip"),
            (_run(x, branches, lambda h, f: s * (h + f(h))),
             "you scaled the whole sum h + F(h). Only the branch's write F(h) is multiplied by 1/sqrt(L).",
             "scaled-sum"),
            (_run(x, branches, lambda h, f: h + f(h)),
             "you forgot the scale: each write F(h) must be multiplied by 1/sqrt(L).", "no-scale"),
            (_run(x, branches, lambda h, f: h + f(h) / math.sqrt(len(branches) + 1)),
             "L is the number of branches, len(branches), not one more.", "l-plus-one"),
            (_run(x, branches, lambda h, f: h + s * f(h))[1:],
             "you left out the input: return L + 1 states, starting with x itself.", "input-left-out"),
            (np.stack([want[0]] + [want[-1]] * len(branches)),
             "every state after x in your list is the same tensor, the last one: `h += ...` changes h in place, "
             "so each entry you appended changed with it. Write `h = h + ...`, which makes a new tensor.",
             "states-aliased"),
            (np.stack([want[-1]] * (len(branches) + 1)),
             "every state in your list is the same tensor, the last one: `h += ...` changes h in place, so each "
             "entry you appended changed with it. Write `h = h + ...`, which makes a new tensor.",
             "states-aliased-all"),
            (_run(x, branches, lambda h, f: s * f(h)),
             "you dropped the skip path: the new stream is h + F(h) / sqrt(L), not F(h) / sqrt(L) alone.", "no-skip"),
            (_run(x, branches, lambda h, f, x=x: h + s * f(x)),
             "every branch read x. Each branch reads the current stream h, the output of the previous step.",
             "branches-read-x"),
            (_run(x, branches, lambda h, f: h - s * f(h)),
             "the branch's write is subtracted: the stream grows by adding it, h + F(h) / sqrt(L).",
             "write-subtracted"),
            (_run(x, branches, lambda h, f: h),
             "every state equals x: the branches' writes are never added to the stream.", "no-writes"),
        ]
        scale = _scale_used(got, x, branches)
        if scale is not None and abs(scale - s) > 1e-6 * s:
            mistakes.append((_run(x, branches, lambda h, f: h + scale * f(h)),
                             f"you scaled each branch's write by {scale:.4g}; the recipe's scale is 1/sqrt(L) = "
                             f"{s:.4g} for these {len(branches)} branches.", "wrong-scale"))
        elif scale is not None and scale != s:
            mistakes.append((_run(x, branches, lambda h, f: h + scale * f(h)),
                             f"your scale, {scale:.10g}, is 1/sqrt(L) = {s:.10g} rounded to lower precision "
                             "(float32, or a rounded constant). Compute it in float64: 1 / math.sqrt(L).",
                             "scale-low-precision"))
        expect_close(got, want, name="scaled_stream", shown=shown, mistakes=mistakes, rtol=1e-6, atol=1e-9)
    _expect_stream_gradients(answer)
    return ("h <- h + F(h) / sqrt(L) at every branch, the skip path untouched, L + 1 states from x on, for 1 to "
            "9 branches and a zero input.")


scaled_stream = Exercise(
    "Exercise 11.2: the stream of a 1/sqrt(L)-scaled stack",
    _check_scaled,
    hints=[
        "Keep a running stream h, starting at x, and a list of states that starts with x. Append h after "
        "every branch.",
        "L is the number of branches, len(branches), and the constant s = 1 / math.sqrt(L) is the same for "
        "every branch.",
        "Each step keeps h on the skip path and adds the branch's write times s: the new h is h plus s times "
        "the branch applied to h. Only the write is scaled.",
    ],
)
