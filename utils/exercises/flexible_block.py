"""Checkers for notebook 05 (a flexible residual block): the pre-norm and post-norm
forwards with a scale or a ReZero-style gate, and ReZero's block as published (no LayerNorm)."""
from __future__ import annotations

import torch
import torch.nn.functional as functional
from torch import nn

from utils.exercises.core import (GATE_WHY, INPUT_WHY, Exercise, Mistake, call, expect_close, expect_float64, other_dtype,
                                  expect_gradients, parameter_leaves, require_function)

_D = 6


def _parts():
    """A LayerNorm with a non-trivial scale and shift, and a branch F, both float64."""
    generator = torch.Generator().manual_seed(5)
    norm = nn.LayerNorm(_D).double()
    fc1, fc2 = nn.Linear(_D, 4 * _D).double(), nn.Linear(4 * _D, _D).double()
    with torch.no_grad():
        for parameter in (norm.weight, norm.bias, fc1.weight, fc1.bias, fc2.weight, fc2.bias):
            parameter.copy_(torch.randn(parameter.shape, generator=generator, dtype=torch.float64) * 0.7)
        norm.weight.add_(1.0)

    def branch(v):
        return fc2(functional.gelu(fc1(v)))
    branch.layers = nn.ModuleDict({"fc1": fc1, "fc2": fc2})  # its weights, for the gradient check
    return norm, branch


def _forward_cases() -> list[tuple]:
    """(x, s, position, what the case is) for the forward checker."""
    generator = torch.Generator().manual_seed(6)

    def randn(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64) * 2 + 0.5

    zero_gate = torch.zeros((), dtype=torch.float64, requires_grad=True)
    return [
        (randn(3, _D), 0.5, "pre", "pre-norm, s = 0.5, x of shape (3, 6)"),
        (randn(2, 4, _D), 2.0, "post", "post-norm, s = 2, x of shape (2, 4, 6)"),
        (randn(3, _D), zero_gate, "pre", "pre-norm with a gate alpha = 0 (a tensor with requires_grad)"),
        (randn(3, _D), zero_gate, "post", "post-norm with a gate alpha = 0"),
        (randn(_D), 1.0, "pre", "pre-norm, s = 1, one token"),
        (randn(_D), 0.5, "post", "post-norm, s = 0.5, one token"),
    ]


def _forward_mistakes(x, s, position, norm, branch) -> list[tuple]:
    """The wrong results of the common mistakes for one case, each with what to say."""
    ln, f = norm(x), branch
    own = ("you normalised with a LayerNorm of your own (gamma = 1, beta = 0). Use the `norm` you were given: "
           "it has its own gamma and beta.")
    if position == "pre":
        return [
            (x + s * f(functional.layer_norm(x, x.shape[-1:])), own, "own-layernorm"),
            (s * (x + f(ln)), "the scale multiplies the whole sum, s * (x + F(LN(x))). It belongs on the branch "
             "only: x + s * F(LN(x)), so that the skip path carries x untouched.", "scaled-sum"),
            (norm(x + s * f(x)), "for position 'pre' you normalised the sum x + s F(x): that is post-norm. "
             "Pre-norm normalises only what enters the branch: x + s * F(LN(x)).", "pre-is-post"),
            (norm(x + s * f(ln)), "you normalised the sum as well. In pre-norm the LayerNorm sits only on the "
             "branch's input; the sum x + s * F(LN(x)) is returned as it is.", "normalised-sum-too"),
            (ln + s * f(ln), "the skip path carries LN(x). It must carry x itself, untouched: x + s * F(LN(x)) "
             "(that untouched path is what keeps the identity in the Jacobian clean).", "normalised-skip"),
            (x + s * f(x), "the LayerNorm is missing: in pre-norm the branch sees LN(x), so x + s * F(LN(x)).",
            "no-layernorm"),
            (ln + s * f(x), "the LayerNorm is on the skip path instead of the branch's input. Pre-norm keeps x "
             "untouched and normalises what the branch sees: x + s * F(LN(x)).", "layernorm-on-skip"),
            (x + f(ln), "the scale is missing: multiply the branch's output by s before adding it to x.", "no-scale"),
            (s * f(ln), "you returned only the branch, s * F(LN(x)). Add the skip path: x + s * F(LN(x)).",
            "branch-only"),
            (f(ln), "you returned F(LN(x)) only: scale it by s and add x.", "unscaled-branch-only"),
        ]
    return [
        (functional.layer_norm(x + s * f(x), x.shape[-1:]), own, "own-layernorm"),
        (s * norm(x + f(x)), "the scale multiplies the whole output, s * LN(x + F(x)). It belongs on the branch "
         "only: LN(x + s * F(x)).", "scaled-output"),
        (x + s * f(ln), "for position 'post' you returned the pre-norm output. Post-norm adds first and "
         "normalises the sum: LN(x + s * F(x)).", "post-is-pre"),
        (ln + s * f(x), "you normalised x before adding. Post-norm normalises the sum: LN(x + s * F(x)).",
        "normalised-x-before-sum"),
        (ln + s * f(ln), "you normalised x first and fed LN(x) to the branch. Post-norm adds first, on x itself, "
         "and normalises last: LN(x + s * F(x)).", "normalised-x-first"),
        (norm(x + s * f(ln)), "the branch received LN(x). In post-norm the branch sees x itself and the "
         "LayerNorm comes after the sum: LN(x + s * F(x)).", "branch-sees-ln"),
        (x + s * f(x), "the LayerNorm is missing: post-norm returns LN(x + s * F(x)).", "no-layernorm-post"),
        (norm(x + f(x)), "the scale is missing: LN(x + s * F(x)), with the branch multiplied by s.", "no-scale-post"),
        (x + norm(s * f(x)), "you normalised the branch's output, x + LN(s * F(x)). Post-norm normalises the "
         "whole sum, after the skip path is added: LN(x + s * F(x)).", "normalised-branch"),
        (norm(s * f(x)), "the skip path is missing: normalise x + s * F(x), not s * F(x) alone.", "no-skip"),
        (s * f(x), "you returned only the branch, s * F(x). Post-norm returns LN(x + s * F(x)).", "branch-only-post"),
        (norm(x - s * f(x)), "the branch's write is subtracted: post-norm adds it, LN(x + s * F(x)).",
        "write-subtracted"),
        (norm(x), "the branch is missing: you returned LN(x). Post-norm returns LN(x + s * F(x)).", "no-branch"),
    ]


def _check_forward(answer) -> str:
    flexible_forward = require_function(answer, "flexible_forward", 5)
    norm, branch = _parts()
    with torch.no_grad():
        for x, s, position, shown in _forward_cases():
            got = call(flexible_forward, x, norm, branch, s, position, name="flexible_forward", shown=shown)
            if not isinstance(got, torch.Tensor):
                raise Mistake(f"`flexible_forward` returned a {type(got).__name__} for {shown}; return a torch "
                              "tensor shaped like x.", key="not-a-tensor-result")
            expect_float64(got, what="your output", shown=shown, why="Your formula may be right, but float32 "
                           "keeps only about 7 digits: compute with x, norm and branch as they are, without .float().")
            want = x + s * branch(norm(x)) if position == "pre" else norm(x + s * branch(x))
            terms = [("the skip path x", x), ("the scaled branch s * F(LN(x))", s * branch(norm(x)))] \
                if position == "pre" else ()
            expect_close(got, want, name="flexible_forward", shown=shown, rtol=1e-9, atol=1e-9,
                         mistakes=_forward_mistakes(x, s, position, norm, branch), terms=terms)
    for s, position, shown in ((0.0, "pre", "pre-norm with a gate alpha = 0"), (0.7, "pre", "pre-norm with a gate "
                               "alpha = 0.7"), (0.0, "post", "post-norm with a gate alpha = 0"),
                               (-0.4, "post", "post-norm with a gate alpha = -0.4")):
        _expect_forward_gradients(flexible_forward, s, position, f"{shown}, backward pass")
    return ("pre-norm x + s F(LN(x)) and post-norm LN(x + s F(x)), with fixed scales, a gate at 0, a batch "
            "and a single token: the gate at 0 makes pre-norm the exact identity and post-norm LN(x).")


def _expect_forward_gradients(flexible_forward, s: float, position: str, shown: str) -> None:
    """Gradients reach x, the gate, the LayerNorm's and the branch's weights as in the formula."""
    norm, branch = _parts()
    x = (torch.randn(3, _D, generator=torch.Generator().manual_seed(7), dtype=torch.float64) + 0.5).requires_grad_()
    gate = torch.tensor(s, dtype=torch.float64, requires_grad=True)
    with torch.enable_grad():
        got = call(flexible_forward, x, norm, branch, gate, position, name="flexible_forward", shown=shown,
                   copies=False)
        want = x + gate * branch(norm(x)) if position == "pre" else norm(x + gate * branch(x))
    expect_close(got, want.detach(), name="flexible_forward", shown=shown, rtol=1e-9, atol=1e-9)
    expect_gradients(got, want, {"x": (x, INPUT_WHY), "the gate s": (gate, GATE_WHY),
                                 **parameter_leaves(norm, "norm."), **parameter_leaves(branch.layers, "branch's ")},
                     name="flexible_forward", shown=shown, rtol=1e-8, atol=1e-10)


flexible_forward = Exercise(
    "Exercise 05.1: the pre-norm and post-norm forwards",
    _check_forward,
    [
        "Two cases, one per position. Write down the formula of each before any code: where does the LayerNorm "
        "act, on what does the branch act, and what is added to what?",
        "Pre-norm: the skip path carries x untouched; only the branch's input is normalised. Post-norm: add first, "
        "normalise last.",
        "Pre-norm: call norm on x, feed the result to branch, multiply by s, add x. Post-norm: call branch on x "
        "itself, multiply by s, add x, and call norm on that sum last. s multiplies the branch's output only, "
        "whether it is a number or a gate tensor.",
    ],
)


# ----- Exercise 05.2: ReZero as published ----------------------------------------------------

def _instance(answer, d: int) -> nn.Module:
    block = call(answer, d, name="ReZeroBlock", shown=f"ReZeroBlock({d})")
    if not isinstance(block, nn.Module):
        raise Mistake(f"ReZeroBlock({d}) made a {type(block).__name__}; the class must subclass nn.Module "
                      "(class ReZeroBlock(nn.Module): ...) and call super().__init__() first.", key="not-a-module")
    for name, shape in (("fc1", (4 * d, d)), ("fc2", (d, 4 * d))):
        layer = getattr(block, name, None)
        if not isinstance(layer, nn.Linear):
            raise Mistake(f"ReZeroBlock({d}) has no nn.Linear called `{name}`. Name the branch's layers "
                          "self.fc1 = nn.Linear(d, 4 * d) and self.fc2 = nn.Linear(4 * d, d).", key="missing-linear")
        if tuple(layer.weight.shape) != shape:
            raise Mistake(f"`{name}` of ReZeroBlock({d}) has weight shape {tuple(layer.weight.shape)}; "
                          f"expected {shape}: fc1 widens d to 4d, fc2 narrows 4d back to d.", key="linear-shape")
        if not layer.weight.detach().any():
            raise Mistake(f"`{name}` of ReZeroBlock({d}) starts with an all-zero weight. ReZero starts only the gate "
                          "at 0; the branch keeps nn.Linear's own random start, or alpha would get no signal to grow.",
                          key="zero-weight-init")
        if layer.bias is None:
            raise Mistake(f"`{name}` of ReZeroBlock({d}) has no bias (bias=False): keep the branch's layers as "
                          "the task gives them, nn.Linear with its bias. ReZero adds only the gate.",
                          key="linear-no-bias")
    if any(isinstance(m, nn.LayerNorm) for m in block.modules()):
        raise Mistake("your block contains a LayerNorm. ReZero as published removes LayerNorm: "
                      "y = x + alpha * F(x), nothing else.", key="layernorm-in-rezero")
    alpha = getattr(block, "alpha", None)
    if alpha is None:
        own = [name for name, _ in block.named_parameters(recurse=False)]
        raise Mistake(f"ReZeroBlock({d}) has no `self.alpha`" + (f" (its own parameters: {', '.join(own)})" if own
                      else "") + ". Name the gate self.alpha: the checker, like the notebook's training code, looks "
                      "for it by that name.", key="no-alpha")
    retyped = other_dtype(block, torch.float32)
    if retyped is not None:
        raise Mistake(f"the weights of ReZeroBlock({d}) are {retyped}, not torch's default float32 (was "
                      "torch.set_default_dtype or .double() called in __init__?). Leave the dtype alone: the "
                      "caller converts the whole model when it needs to.", key="weights-retyped")
    if not isinstance(alpha, nn.Parameter):
        raise Mistake(f"`alpha` is a {type(alpha).__name__}, so the module does not register it as a weight: "
                      "it is not among block.parameters(), and no optimiser would update it. Wrap the zero "
                      "tensor in `nn.Parameter(...)`, PyTorch's wrapper that makes a tensor a learnable weight "
                      "of its module.", key="alpha-not-parameter")
    if isinstance(vars(type(block)).get("alpha"), torch.Tensor):
        raise Mistake("`alpha` is defined in the class body, not in __init__, so every ReZeroBlock shares that "
                      "one gate and the module does not register it as its own weight. Write "
                      "`self.alpha = nn.Parameter(...)` inside __init__.", key="alpha-class-attribute")
    if not any(alpha is parameter for parameter in block.parameters()):
        raise Mistake("`alpha` is not among the block's own parameters, so no optimiser would update it. Write "
                      "`self.alpha = nn.Parameter(...)` inside __init__.", key="alpha-not-own")
    twin = call(answer, d, name="ReZeroBlock", shown=f"ReZeroBlock({d})")
    if any(alpha is parameter for parameter in twin.parameters()):
        raise Mistake("two ReZeroBlocks share one `alpha` (the same tensor, made once outside __init__), so every "
                      "block would learn the same gate. Make a new nn.Parameter inside __init__.", key="alpha-shared")
    if not alpha.requires_grad:
        raise Mistake(f"`alpha` does not require a gradient (requires_grad=False). {GATE_WHY} Leave "
                      "nn.Parameter's default, requires_grad=True.", key="alpha-frozen")
    if alpha.numel() != 1:
        raise Mistake(f"`alpha` has {alpha.numel()} numbers; ReZero uses one scalar per block.", key="alpha-not-scalar")
    if float(alpha.detach()) != 0.0:
        raise Mistake(f"`alpha` starts at {float(alpha.detach()):g}; ReZero starts it at 0, so that the block "
                      "is exactly the identity at initialisation.", key="alpha-not-zero")
    return block


def _check_rezero(answer) -> str:
    if isinstance(answer, nn.Module):
        raise Mistake("you passed a block, not the class: pass the class `ReZeroBlock`, not `ReZeroBlock(d)`. "
                      "The checker builds its own blocks, of two widths.", key="instance-not-class")
    require_function(answer, "ReZeroBlock", 1)
    for d, shape in ((8, (5, 8)), (4, (2, 3, 4))):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(d)
            block = _instance(answer, d)
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(d + 1))
        shown = f"ReZeroBlock({d}) on x of shape {shape}"
        with torch.no_grad():
            branch = block.fc2(functional.gelu(block.fc1(x)))
            got = call(block, x, name="ReZeroBlock.forward", shown=f"{shown}, alpha = 0")
            if isinstance(got, torch.Tensor) and got.shape == x.shape and not torch.equal(got, x) and \
                    torch.allclose(got, x, rtol=1e-5, atol=1e-5):
                raise Mistake(f"for {shown}, alpha = 0: your block must return x exactly, and it is off by up to "
                              f"{float((got - x).abs().max()):.2g}: something is added and taken away again (or "
                              "rounded) instead of the gate multiplying the branch, x + alpha * F(x).",
                              key="not-identity-at-zero")
            expect_close(got, x, name="ReZeroBlock.forward", shown=f"{shown}, alpha = 0", rtol=0, atol=0, mistakes=[
                (x + branch, "the block does not start as the identity: the gate is missing. Multiply the branch "
                 "by alpha: x + alpha * F(x).", "no-gate"),
                (torch.zeros_like(x), "with alpha = 0 your block outputs 0: you returned alpha * F(x) only. Add "
                 "the skip path: x + alpha * F(x).", "no-skip"),
                (branch, "with alpha = 0 your block outputs F(x): alpha multiplies x. The gate belongs on the "
                 "branch: x + alpha * F(x).", "gate-on-skip"),
            ])
            block.alpha.fill_(0.7)
            relu = block.fc2(torch.relu(block.fc1(x)))
            tanh_gelu = block.fc2(functional.gelu(block.fc1(x), approximate="tanh"))
            got = call(block, x, name="ReZeroBlock.forward", shown=f"{shown}, alpha = 0.7")
            expect_close(got, x + 0.7 * branch, name="ReZeroBlock.forward", shown=f"{shown}, alpha = 0.7",
                         rtol=1e-5, atol=1e-6, terms=[("the skip path x", x), ("the gated branch alpha * F(x)",
                                                                                0.7 * branch)], mistakes=[
                             (0.7 * branch, "you returned only the branch, alpha * F(x). Add the skip path x.",
                             "branch-only"),
                             (0.7 * x + branch, "alpha multiplies x. It belongs on the branch: x + alpha * F(x).",
                             "alpha-multiplies-x"),
                             (x + 0.7 * relu, "the branch uses ReLU; this course's branch uses GELU between fc1 "
                              "and fc2 (F.gelu or nn.GELU()).", "relu-not-gelu"),
                             (x + 0.7 * block.fc2(block.fc1(x)), "the branch has no activation between fc1 and "
                              "fc2: apply GELU in between.", "no-activation"),
                             (x + 0.7 * tanh_gelu, "the branch uses the tanh approximation of GELU (GPT-2's "
                              "choice). Use the exact GELU, x * Phi(x): F.gelu or nn.GELU() without `approximate`.",
                              "tanh-gelu"),
                         ])
        for alpha in (0.0, 0.7):
            with torch.no_grad():
                block.alpha.fill_(alpha)
            leaf = x.detach().clone().requires_grad_()
            shown_grad = f"{shown}, alpha = {alpha:g}, backward pass"
            with torch.enable_grad():
                got = call(block, leaf, name="ReZeroBlock.forward", shown=shown_grad, copies=False)
                want = leaf + block.alpha * block.fc2(functional.gelu(block.fc1(leaf)))
            expect_gradients(got, want, {"x": (leaf, INPUT_WHY), **parameter_leaves(block, "self.")},
                             name="ReZeroBlock.forward", shown=shown_grad, rtol=1e-4, atol=1e-6)
        block.eval()
        call(block, x, name="ReZeroBlock.forward", shown=f"{shown}, in eval mode")
        if block.training:
            raise Mistake(f"for {shown}: your forward switched the block to training mode (`self.train()`). Leave "
                          "the mode to the caller: model.train() before training, model.eval() before testing.",
                          key="forced-train")
    return ("x + alpha * F(x) with a learnable alpha starting at 0 and no LayerNorm: exactly the identity at "
            "initialisation, and the right edit once alpha moves, for two widths.")


rezero_block = Exercise(
    "Exercise 05.2: ReZero as published",
    _check_rezero,
    [
        "In __init__, below the branch's two layers fc1 and fc2 (already written for you), add one more line: "
        "the gate alpha, a single learnable number that starts at 0.",
        "alpha must be learnable, so wrap a zero in nn.Parameter: one scalar, torch.zeros(()).",
        "In forward: F(x) = fc2(GELU(fc1(x))); return the input plus alpha times that. No LayerNorm anywhere.",
    ],
)
