"""Exercises of notebook 07 (a thousand layers deep): the log of a long product of
Jacobians computed without overflow, and a stack whose skip path or branch is scaled."""
from __future__ import annotations

import math

import numpy as np
import torch

from utils.blocks import make_stack
from utils.exercises.core import (Exercise, Mistake, call, describe_container, expect_close, expect_float64,
                                  require_function)


_FLOAT32_NEAR = 1e-4  # float32 rounding moves these answers by about 1e-7 to 1e-5; real mistakes by far more


def _as_number(result, name: str, shown: str, *, why: str) -> float:
    """One number from the learner's result; a float32 tensor gets its own message."""
    expect_float64(result, what="the result", shown=shown, why=why)
    if isinstance(result, torch.Tensor):
        raise Mistake(f"`{name}` returned a tensor for {shown}; return a Python float (`.item()` of a one-number "
                      "tensor, or float(...)).", key="tensor-not-float")
    if isinstance(result, (str, bytes)):
        raise Mistake(f"`{name}` returned text (a string) for {shown}: return the number itself, a Python float, "
                      "and format it only when you print it.", key="returned-text")
    if isinstance(result, bool) or not isinstance(result, (int, float, np.integer, np.floating)):
        raise Mistake(f"`{name}` returned {describe_container(result)} for {shown}; return one number, a Python "
                      "float (`float(...)` of it).", key="not-one-number")
    return float(result)


def _expect_not_float32(got: float, want: float, tolerance: float, *, shown: str, why: str) -> None:
    """Off by more than the tolerance but only by rounding-sized amounts: the formula is right and
    the arithmetic ran in float32."""
    error = abs(got - want)
    if any(got == round(want, decimals) for decimals in range(9)):
        return  # rounded: expect_close names that
    if tolerance < error <= _FLOAT32_NEAR * max(1.0, abs(want)):
        raise Mistake(f"for {shown}: your result is off by {error:.2g}, the size of float32 rounding. The formula "
                      f"looks right; keep every tensor in float64 (no .float(), no float32 tensors). {why}",
                      key="float32-rounding")


# ----- Exercise 07.1: the log of a long product, without overflow -------------------------

def _backward_log10(jacobians: torch.Tensor, g: torch.Tensor, *, order: str = "right",
                    transpose: bool = True) -> float:
    """log10 |J_0^T ... J_{L-1}^T g| / |g| with the vector renormalised after every step;
    ``order``/``transpose`` give the wrong variants a learner may compute."""
    steps = list(jacobians)
    if order == "right":
        steps = steps[::-1]
    v, total = g / g.norm(), 0.0
    for jacobian in steps:
        v = (jacobian.T if transpose else jacobian) @ v
        size = v.norm()
        total += math.log10(float(size))
        v = v / size
    return total


def _jacobian_cases():
    generator = torch.Generator().manual_seed(71)
    cases = []
    for layers, d, size, label in ((6, 3, 1.0, "6 random 3x3 Jacobians"),
                                   (3000, 4, 1.6, "3000 Jacobians of size about 1.6 (the product overflows)"),
                                   (2000, 5, 0.5, "2000 Jacobians of size about 0.5 (the product underflows)"),
                                   (1, 2, 1.0, "a single 2x2 Jacobian")):
        jacobians = size * torch.randn(layers, d, d, generator=generator, dtype=torch.float64) / math.sqrt(d)
        jacobians += size * torch.eye(d, dtype=torch.float64)
        g = torch.randn(d, generator=generator, dtype=torch.float64)
        cases.append((jacobians, g, label))
    return cases


def _check_log10_gain(answer) -> str:
    name = "log10_gain"
    answer = require_function(answer, name, 2)
    for jacobians, g, label in _jacobian_cases():
        shown = label
        why = "Over thousands of factors float32's rounding adds up."
        got = _as_number(call(answer, jacobians, g, name=name, shown=shown), name, shown, why=why)
        want = _backward_log10(jacobians, g)
        overflows = abs(want + math.log10(float(g.norm()))) > 300  # the unnormalised product leaves float64
        if math.isinf(got) or (math.isnan(got) and overflows):
            raise Mistake(f"for {shown}: got {got}. The product left float64's range (about 1e-308 to 1e308) "
                          "on the way: multiply the vector, not the matrices, and divide it by its norm after "
                          "every step, adding up the log10 of the norms you divided by.", key="overflow")
        if math.isnan(got):
            raise Mistake(f"for {shown}: got NaN, the result of 0 / 0, inf / inf or inf - inf somewhere (this "
                          "product stays well inside float64's range, so it is not an overflow). Look for a "
                          "division by a norm of 0, a log10 of 0 or of a negative number.", key="nan")
        _expect_not_float32(got, want, 1e-8 * (1 + abs(want)), shown=shown, why=why)
        expect_close(got, want, name=name, shown=shown, rtol=1e-8, atol=1e-8, mistakes=[
            (want + math.log10(float(g.norm())),
             "you started from g, not g / |g|: the total is then log10 of the gradient norm, not of the gain. "
             "Start with the unit vector g / g.norm().", "not-unit-vector"),
            (want * math.log(10), "this is the natural logarithm; the exercise asks for log10 "
                                  "(divide by ln 10, or use math.log10).", "natural-log"),
            (_backward_log10(jacobians, g, order="left", transpose=False),
             "you pushed g forwards through the stack: J_0 first and no transposes, the way a change of the "
             "input travels. A gradient travels backwards: apply the transposes, last block first, "
             "J_{L-1}^T, then ..., then J_0^T.", "forward-not-backward"),
            (_backward_log10(jacobians, g, order="left"),
             "the Jacobians are applied in the wrong order. The gradient starts at the output, so "
             "J_{L-1}^T acts first and J_0^T last.", "wrong-order"),
            (_backward_log10(jacobians, g, transpose=False),
             "you applied J_l instead of its transpose J_l^T. A gradient travels backwards: dL/dx_l = "
             "J_l^T dL/dx_{l+1}.", "no-transpose"),
            (sum(math.log10(float(torch.linalg.matrix_norm(j, ord=2))) for j in jacobians) if len(jacobians) < 10
             else float("nan"),
             "you added up the log10 of each Jacobian's largest stretch (its matrix norm). That bounds the "
             "gain from above; the gain itself follows the one vector g through all the Jacobians.", "norm-bound"),
        ])
    return ("log10 of the gain through up to 3000 Jacobians, with no overflow or underflow, in the right order "
            "and with transposes.")


log10_gain = Exercise(
    "Exercise 07.1: the log of the gain through a long product, without overflow",
    _check_log10_gain,
    [
        "Start from the gradient at the output, g, and apply the transposed Jacobians from the last one "
        "(J_{L-1}^T) to the first (J_0^T).",
        "3000 factors of about 1.6 give 1.6^3000, about 10^612: far beyond float64's 10^308. Never form the "
        "product; carry one vector.",
        "After every step divide the vector by its norm, and add the log10 of that norm to a running total. "
        "Start with the vector g / |g| so the total is the gain, not the gradient norm.",
    ])


# ----- Exercise 07.2: scale the skip path or scale the branch -----------------------------

def _scaled_gain(blocks, x, g, shortcut: float, branch: float, *, variant: str = "right") -> float:
    h = x.detach().clone().requires_grad_(True)
    out = h
    for block in blocks:
        if variant == "swapped":
            out = branch * out + shortcut * block.branch(block.norm(out))
        elif variant == "outside":
            out = shortcut * (out + branch * block.branch(block.norm(out)))
        elif variant == "no-skip":
            out = branch * block.branch(block.norm(out))
        elif variant == "no-norm":
            out = shortcut * out + branch * block.branch(out)
        elif variant == "cut":  # the branch's write reaches the output, its gradient does not flow back
            out = shortcut * out + branch * block.branch(block.norm(out)).detach()
        elif variant == "minus":
            out = shortcut * out - branch * block.branch(block.norm(out))
        elif variant == "whole-block":  # block(h) already adds its own skip path
            out = shortcut * out + branch * block(out)
        else:
            out = shortcut * out + branch * block.branch(block.norm(out))
    loss = out.sum() if variant == "sum" else (out * g).sum()
    (grad,) = torch.autograd.grad(loss, h)
    return float(grad.norm()) / (1.0 if variant == "unnormalised" else float(g.norm()))


def _check_scaled_stack_gain(answer) -> str:
    name = "scaled_stack_gain"
    answer = require_function(answer, name, 5)
    generator = torch.Generator().manual_seed(72)
    torch.manual_seed(72)
    deep = make_stack(6, 16).double()
    x = torch.randn(5, 16, generator=generator, dtype=torch.float64)
    g = torch.randn(5, 16, generator=generator, dtype=torch.float64)
    for blocks, shortcut, branch in ((deep, 0.9, 1.0), (deep, 1.0, 0.3), (deep, 1.1, 0.5), (deep, 0.8, 0.0),
                                     (deep[:1], 1.2, 0.7)):
        shown = f"{len(blocks)} block{'s' * (len(blocks) != 1)}, shortcut {shortcut}, branch {branch}"
        why = "The checker compares to seven digits, finer than float32 resolves."
        got = _as_number(call(answer, blocks, x, g, shortcut, branch, name=name, shown=shown), name, shown,
                         why=why)
        want = _scaled_gain(blocks, x, g, shortcut, branch)
        _expect_not_float32(got, want, 1e-7 * abs(want) + 1e-12, shown=shown, why=why)
        expect_close(got, want, name=name, shown=shown, rtol=1e-7, atol=1e-12, mistakes=[
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="swapped"),
             "shortcut and branch are swapped: `shortcut` multiplies the skip path x_l, `branch` multiplies "
             "F(LN(x_l)).", "shortcut-branch-swapped"),
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="outside"),
             "you multiplied the whole block output by `shortcut`; only the skip path gets it: "
             "shortcut * x_l + branch * F(LN(x_l)).", "scaled-whole-block"),
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="no-skip"),
             "the skip path is missing: each block must add shortcut * x_l to the branch, "
             "x_{l+1} = shortcut * x_l + branch * F(LN(x_l)).", "no-skip"),
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="whole-block"),
             "x_l is counted twice: either you scaled block(x_l), the whole block, which already adds its own skip "
             "path, or you added x_l besides shortcut * x_l. Each block is shortcut * x_l + branch * F(LN(x_l)), "
             "with F(LN(x_l)) = block.branch(block.norm(x_l)).", "skip-counted-twice"),
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="no-norm"),
             "the branch must see the normalised input: block.branch(block.norm(x_l)), not block.branch(x_l).",
             "branch-not-normalised"),
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="cut"),
             "only the skip path's part of the gradient arrives: the branches' part is missing. Something in the "
             "loop cuts them from autograd's graph (`.detach()`, `.data`, `torch.no_grad()`, NumPy), so their "
             "values reach the output but no gradient flows back through them.", "branches-cut"),
            (_scaled_gain(blocks, x, g, 1.0, branch),
             f"your result does not change with `shortcut` (it is the gain for shortcut 1, not {shortcut}): "
             "multiply the skip path x_l by shortcut.", "shortcut-ignored"),
            (_scaled_gain(blocks, x, g, shortcut, 1.0),
             f"your result does not change with `branch` (it is the gain for branch 1, not {branch}): multiply "
             "F(LN(x_l)) by branch.", "branch-ignored"),
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="minus"),
             "the branch is subtracted: each block adds it, shortcut * x_l + branch * F(LN(x_l)).",
             "branch-subtracted"),
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="sum"),
             "you differentiated output.sum(); the loss is (x_L * g).sum().", "output-sum-loss"),
            (_scaled_gain(blocks, x, g, shortcut, branch, variant="unnormalised"),
             "that is the gradient norm at the input; the gain divides it by the norm of g.", "gradient-norm-not-gain"),
        ])
    return ("the gain of a stack with a scaled skip path and a scaled branch, including the branch-free case, "
            "where it is exactly shortcut ** depth.")


scaled_stack_gain = Exercise(
    "Exercise 07.2: scale the skip path or scale the branch",
    _check_scaled_stack_gain,
    [
        "Each block maps x_l to shortcut * x_l + branch * F(LN(x_l)), with F(LN(x_l)) = "
        "block.branch(block.norm(x_l)).",
        "Start from x0 = x.detach().clone().requires_grad_(True) and run the blocks one after another.",
        "The loss is (x_L * g).sum(); torch.autograd.grad(loss, x0) gives the gradient at the input.",
        "Return grad.norm() / g.norm() as a float. With branch = 0 you should get shortcut ** depth exactly.",
    ])
