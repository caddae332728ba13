"""Checkers for notebook 08 (the degradation problem at small scale): the course's
residual MLP block ReLU(x + F(x)) written as a PyTorch module, and the branch-to-skip
variance ratio of every block of a residual MLP at initialisation."""
from __future__ import annotations

import copy

import torch
from torch import nn

from utils.exercises.core import (INPUT_WHY, Exercise, Mistake, call, expect_close, expect_float_list,
                                  expect_gradients,
                                  parameter_leaves, require_function)
from utils.mlp import branch_to_skip_ratios as _reference_ratios
from utils.mlp import make_mlp

# ----- Exercise 08.1: the residual MLP block ---------------------------------------------------

_LAYERS = ("linear1", "norm1", "linear2", "norm2")


def _build_block(answer, width: int, seed: int) -> nn.Module:
    """The learner's block for ``width``, in float64, with random weights and BatchNorm
    scales and shifts (so that a forgotten layer changes the result)."""
    try:
        block = answer(width)
    except NotImplementedError:
        raise
    except Exception as error:
        raise Mistake(f"`ResidualMLPBlock({width})` raised {type(error).__name__} ({error}). "
                      "Keep the given __init__ and run its cell again.", key="init-raised") from None
    if not isinstance(block, nn.Module):
        raise Mistake(f"`ResidualMLPBlock({width})` made a {type(block).__name__}; it should be an nn.Module.",
        key="not-a-module")
    missing = [name for name in _LAYERS if not hasattr(block, name)]
    if missing:
        raise Mistake(f"the block has no {', '.join(missing)}: keep the given __init__, which creates "
                      "linear1, norm1, linear2 and norm2.", key="layers-missing")
    block = block.double().train()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name in ("linear1", "linear2"):
            layer = getattr(block, name)
            layer.weight.copy_(torch.randn(layer.weight.shape, generator=generator, dtype=torch.float64)
                               * (2.0 / width) ** 0.5)
        for name in ("norm1", "norm2"):
            layer = getattr(block, name)
            layer.weight.copy_(1.0 + 0.5 * torch.rand(width, generator=generator, dtype=torch.float64))
            layer.bias.copy_(0.3 * torch.randn(width, generator=generator, dtype=torch.float64))
    return block


def _batch_norm(layer, h):
    """A BatchNorm layer with batch statistics, nothing stored."""
    return nn.functional.batch_norm(h, None, None, layer.weight, layer.bias, training=True, eps=layer.eps)


def _branch(block: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """F(x) = norm2(linear2(ReLU(norm1(linear1(x))))), with the learner's own layers."""
    return _batch_norm(block.norm2, block.linear2(torch.relu(_batch_norm(block.norm1, block.linear1(x)))))


def _block_parts(block: nn.Module, x: torch.Tensor) -> dict:
    """The pieces the right answer and the common wrong ones are made of, computed with
    the learner's own layers."""
    with torch.no_grad():
        return {"branch": _branch(block, x), "unnormalised": block.linear2(torch.relu(block.linear1(x)))}


def _block_mistakes(x: torch.Tensor, parts: dict) -> list[tuple]:
    branch = parts["branch"]
    return [
        (torch.relu(x + torch.relu(branch)), "your branch ends in a ReLU, so the block applies a ReLU twice: "
         "ReLU(x + ReLU(F(x))). F ends with norm2, not with a ReLU; the block's only ReLU outside F comes after "
         "the sum. Remove the ReLU you put on the branch's output.", "relu-twice"),
        (x + torch.relu(branch), "the ReLU is applied to the branch before the sum, x + ReLU(F(x)). In this block "
         "the ReLU comes after the sum: ReLU(x + F(x)).", "relu-before-sum"),
        (x + branch, "the ReLU after the sum is missing: return ReLU(x + F(x)), not x + F(x).", "no-final-relu"),
        (torch.relu(branch), "the skip is missing: you returned ReLU(F(x)). Add the input x to the branch before "
         "the last ReLU.", "no-skip"),
        (branch, "you returned the branch F(x) alone. The block's output is ReLU(x + F(x)).", "branch-only"),
        (torch.relu(x - branch), "the branch is subtracted: the block adds it to the skip path, ReLU(x + F(x)).",
        "branch-subtracted"),
        (torch.relu(x), "the branch is missing: you returned ReLU(x). The block is ReLU(x + F(x)), "
         "F(x) = norm2(linear2(ReLU(norm1(linear1(x))))).", "no-branch"),
        (torch.relu(x + parts["unnormalised"]), "the BatchNorm layers are not used: F(x) is "
         "norm2(linear2(ReLU(norm1(linear1(x))))), with a BatchNorm after each Linear.", "no-batchnorm"),
    ]


def _check_block(answer) -> str:
    if isinstance(answer, nn.Module):
        raise Mistake(f"got a block, a {type(answer).__name__} already built, instead of the class. Pass the class "
                      "itself, `.check(ResidualMLPBlock)`, not `ResidualMLPBlock(8)`: the checker builds its own "
                      "blocks of several widths.", key="instance-not-class")
    block_class = require_function(answer, "ResidualMLPBlock", 1)
    generator = torch.Generator().manual_seed(8)
    cases = [(6, torch.randn(16, 6, generator=generator, dtype=torch.float64), "a batch of 16 inputs of width 6"),
             (3, torch.randn(5, 3, generator=generator, dtype=torch.float64) * 3 - 1,
              "a batch of 5 inputs of width 3 (mean -1, std 3)"),
             (4, -torch.rand(8, 4, generator=generator, dtype=torch.float64), "a batch of 8 negative inputs")]
    for seed, (width, x, shown) in enumerate(cases):
        block = _build_block(block_class, width, seed)
        got = call(block, x, name="forward", shown=shown)
        if not block.training:
            raise Mistake(f"for {shown}: your forward switched the block to eval mode (`self.eval()`). Leave the "
                          "mode to the caller: model.train() before training, model.eval() before testing.",
                          key="forced-eval")
        parts = _block_parts(block, x)
        want = torch.relu(x + parts["branch"])
        expect_close(got, want, name="forward", shown=shown, mistakes=_block_mistakes(x, parts), rtol=1e-7, atol=1e-9)
        leaf, shown = x.detach().clone().requires_grad_(), f"{shown}, backward pass"
        with torch.enable_grad():
            got = call(block, leaf, name="forward", shown=shown, copies=False)
            want = torch.relu(leaf + _branch(block, leaf))
        expect_gradients(got, want, {"x": (leaf, INPUT_WHY), **parameter_leaves(block, "self.")}, name="forward",
                         shown=shown, rtol=1e-7, atol=1e-9)
        _expect_eval_mode(block, x, shown.removesuffix(", backward pass"))
    return ("ReLU(x + F(x)) with F = Linear, BatchNorm, ReLU, Linear, BatchNorm, on three widths, "
            "negative inputs included, the input left untouched, and in eval mode with BatchNorm's running "
            "statistics.")


def _expect_eval_mode(block: nn.Module, x: torch.Tensor, shown: str) -> None:
    """In eval mode (how notebook 08 measures test accuracy) the block's BatchNorm layers
    must use the running statistics the training-mode calls above collected."""
    def norm(layer, h):
        return nn.functional.batch_norm(h, layer.running_mean, layer.running_var, layer.weight, layer.bias,
                                        training=False, eps=layer.eps)
    shown = f"{shown}, in eval mode"
    with torch.no_grad():
        want = torch.relu(x + norm(block.norm2, block.linear2(torch.relu(norm(block.norm1, block.linear1(x))))))
        batch_statistics = torch.relu(x + _branch(block, x))
    block.eval()
    got = call(block, x, name="forward", shown=shown)
    if block.training:
        raise Mistake(f"for {shown}: your forward switched the block back to training mode (`self.train()`). "
                      "Leave the mode to the caller: model.eval() before testing, model.train() before training.",
                      key="forced-train")
    expect_close(got, want, name="forward", shown=shown, rtol=1e-7, atol=1e-9, mistakes=[
        (batch_statistics, "your block still normalises with each batch's own mean and variance. "
         "Call the layers self.norm1 and self.norm2 themselves (not a BatchNorm written by hand or "
         "F.batch_norm(..., training=True)): they switch to their running statistics in eval mode, so a "
         "test input's result does not depend on the rest of its batch.", "batch-statistics")])
    block.train()


residual_mlp_block = Exercise(
    "Exercise 08.1: the residual MLP block",
    _check_block,
    [
        "Write the branch first: F(x) = norm2(linear2(ReLU(norm1(linear1(x))))). Call each layer like a function.",
        "The block adds the input to the branch and only then applies a ReLU: ReLU(x + F(x)).",
        "There is no ReLU at the end of the branch itself: the one ReLU after the sum plays that role.",
        "`torch.relu(...)` applies a ReLU; compute the sum into a new tensor (`x + branch`) rather than changing x.",
    ],
)


# ----- Exercise 08.2: branch-to-skip variance ratios --------------------------------------------

def _ratio_mistakes(model, x) -> list[tuple]:
    probe = copy.deepcopy(model).train()
    with torch.no_grad():
        stem = probe.stem(x)
        h, frozen, inverted, outputs, branch_path, alone, product = stem, [], [], [], [], [], []
        for block in probe.blocks:
            branch = block.branch(h)
            inverted.append(float(h.var() / branch.var()))
            alone.append(float(branch.var()))
            product.append(float(branch.var() * h.var()))
            outputs.append(float(block(h).var() / h.var()))
            h = block(h)
        h, no_relu, after_sum = stem, [], []
        for block in probe.blocks:
            no_relu.append(float(block.branch(h).var() / h.var()))
            branch = block.branch(h)
            after_sum.append(float(branch.var() / (h + branch).var()))
            h = h + branch
        h, after_block = stem, []
        for block in probe.blocks:
            branch = block.branch(h)
            h = block(h)
            after_block.append(float(branch.var() / h.var()))
        h = stem
        for block in probe.blocks:
            frozen.append(float(block.branch(stem).var() / stem.var()))
            branch_path.append(float(block.branch(h).var() / h.var()))
            h = block.branch(h)
    right = _reference_ratios(model, x)
    return [
        ([r ** 0.5 for r in right], "these are ratios of standard deviations. The exercise asks for variances: "
         "use .var(), not .std().", "std-not-var"),
        (inverted, "the ratio is upside down: divide the branch's variance by the skip's, Var(F(h)) / Var(h).",
        "ratio-inverted"),
        (alone, "these are the branch's variances alone: divide each by the skip's variance, Var(F(h)) / Var(h).",
        "not-divided"),
        (product, "you multiplied the two variances: the ratio divides them, Var(F(h)) / Var(h).", "multiplied"),
        (outputs, "you divided the variance of the whole block's output, ReLU(h + F(h)), by Var(h). Use the branch "
         "alone: block.branch(h).", "whole-block-output"),
        (frozen, "every block got the stem's output: after measuring a block, set h to that whole block's output, so "
         "the next block sees what it sees in the network.", "stem-output-every-block"),
        (branch_path, "you moved on with h = block.branch(h): that drops the skip. Move on with the whole block's "
         "output instead.", "moved-on-with-branch"),
        (no_relu, "the first ratio is right, the later ones are not: you moved on with h + F(h), the sum without "
         "the block's final ReLU. The next block's input is the whole block's output, ReLU(h + F(h)): let the "
         "block compute it instead of adding the branch yourself.", "moved-on-without-relu"),
        (after_sum, "you divided by the variance of h + F(h), after adding the branch. The skip is h as it was "
         "before the sum: take the ratio first, then move on, through the whole block with its ReLU.",
         "skip-after-sum"),
        (after_block, "you divided by the variance of the block's output, after moving h on. The skip is the "
         "block's input: take the ratio before you move h on.", "skip-after-move"),
    ]


def _check_ratios(answer) -> str:
    ratios = require_function(answer, "branch_to_skip_ratios", 2)
    generator = torch.Generator().manual_seed(82)
    cases = [("residual", 10, 12, 5, 32, "a residual MLP of depth 10 (4 blocks), width 12, 32 inputs"),
             ("residual", 4, 6, 3, 8, "a residual MLP of depth 4 (1 block), width 6, 8 inputs"),
             ("residual", 16, 8, 4, 64, "a residual MLP of depth 16 (7 blocks), width 8, 64 inputs")]
    for seed, (architecture, depth, width, features, batch, shown) in enumerate(cases):
        model = make_mlp(architecture, depth, width=width, in_features=features, seed=seed, dtype=torch.float64)
        x = torch.randn(batch, features, generator=generator, dtype=torch.float64)
        got = call(ratios, model, x, name="branch_to_skip_ratios", shown=shown)
        if isinstance(got, (list, tuple)) and any(getattr(item, "requires_grad", False) for item in got):
            raise Mistake(f"`branch_to_skip_ratios` returned a list of tensors that still track gradients for "
                          f"{shown}. Return floats: `float(...)` of each ratio (under `torch.no_grad()` if you "
                          "like).", key="tensors-not-floats")
        got = expect_float_list(got, name="branch_to_skip_ratios", shown=shown)
        want = _reference_ratios(model, x)
        expect_close(got, want, name="branch_to_skip_ratios", shown=shown, mistakes=_ratio_mistakes(model, x),
                     rtol=1e-6, atol=1e-9)
    return ("one Var(branch) / Var(skip) per block, the batch carried through the stem and every whole block, "
            "and the model's BatchNorm statistics left as they were.")


branch_to_skip_ratios = Exercise(
    "Exercise 08.2: branch-to-skip variance ratios",
    _check_ratios,
    [
        "Inside the loop, h is the block's input. The skip carries h itself; the branch adds block.branch(h). "
        "Their variances over the whole batch are h.var() and block.branch(h).var().",
        "Append the branch's variance divided by the skip's, converted to a Python float with float(...).",
        "Then move on with the whole block's output, not with the branch's alone: the next block's input is "
        "ReLU(h + F(h)).",
        "Keep the skeleton's copy, `copy.deepcopy(model).train()`: BatchNorm in training mode updates its running "
        "statistics on every call, and the model you were given must stay as it was.",
    ],
)
