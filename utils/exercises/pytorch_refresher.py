"""Checkers for notebook 04 (a PyTorch refresher): LayerNorm written by hand, and a
gradient from autograd checked against a central finite difference in float64."""
from __future__ import annotations

import contextlib

import numpy as np
import torch
from torch.nn import functional

from utils.exercises.core import (INPUT_WHY, WEIGHT_WHY, Exercise, Mistake, as_array, call, describe_container,
                                  expect_close, expect_float64, expect_gradients, require_function)


# ----- Exercise 04.2: LayerNorm by hand -----------------------------------------------------

def _layer_norm_cases() -> list[tuple]:
    """(x, gamma, beta, eps, what the case is) for the LayerNorm checker."""
    generator = torch.Generator().manual_seed(4)

    def randn(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float64)

    return [
        (randn(2, 3, 4) * 3 + 1, randn(4), randn(4), 1e-5, "a batch of shape (2, 3, 4)"),
        (torch.tensor([1.0, -2.0, 0.5, 4.0, 0.0], dtype=torch.float64), torch.ones(5, dtype=torch.float64),
         torch.zeros(5, dtype=torch.float64), 1e-5, "one token x = [1, -2, 0.5, 4, 0]"),
        (randn(3, 6) * 0.5, randn(6), randn(6), 0.5, "a (3, 6) input with a large eps = 0.5"),
        (torch.full((2, 4), 3.0, dtype=torch.float64), randn(4), randn(4), 1e-5,
         "tokens whose entries are all equal (variance 0)"),
    ]


def _layer_norm_mistakes(x, gamma, beta, eps) -> list[tuple]:
    """The wrong results of the common mistakes, each with what to say about it."""
    centred = x - x.mean(dim=-1, keepdim=True)
    biased = x.var(dim=-1, unbiased=False, keepdim=True)
    mistakes = []
    if x.shape[-1] > 1:
        unbiased = x.var(dim=-1, unbiased=True, keepdim=True)
        mistakes.append((gamma * centred / torch.sqrt(unbiased + eps) + beta,
                         "you used the unbiased variance (dividing by d - 1). LayerNorm divides by d: "
                         "use `unbiased=False` (or `correction=0`), or compute the mean of the squared deviations.",
                         "unbiased-variance"))
    if eps != 1e-5:
        mistakes.append((gamma * centred / torch.sqrt(biased + 1e-5) + beta,
                         f"your result does not use the eps it was given (here {eps:g}): a fixed 1e-5 inside the "
                         "function. Use the argument eps.", "fixed-eps"))
    mistakes += [
        (gamma * centred / (biased.sqrt() + eps) + beta,
         "eps is added to the standard deviation. LayerNorm adds it to the variance, inside the square root: "
         "divide by sqrt(variance + eps).", "eps-on-std"),
        (gamma * centred / torch.sqrt(biased + eps ** 2) + beta,
         "eps is squared: add eps itself to the variance, sqrt(variance + eps).", "eps-squared"),
        (gamma * centred / biased.sqrt() + beta,
         "eps is missing: divide by sqrt(variance + eps), not by sqrt(variance) (eps keeps a constant token "
         "from giving 0 / 0).", "eps-missing"),
        (centred / torch.sqrt(biased + eps),
         "the learnable scale gamma and shift beta are missing: multiply by gamma, then add beta.", "no-gamma-beta"),
        (beta * centred / torch.sqrt(biased + eps) + gamma,
         "gamma and beta are swapped: gamma multiplies, beta is added.", "gamma-beta-swapped"),
        (gamma * x / torch.sqrt(biased + eps) + beta,
         "the mean is not subtracted: normalise x - mean(x), not x.", "mean-not-subtracted"),
    ]
    if x.ndim > 1:
        whole = (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + eps)
        mistakes.append((gamma * whole + beta,
                         "you normalised with the mean and variance of the whole tensor. LayerNorm works per "
                         "token: take them over the last dimension only (`dim=-1, keepdim=True`).",
                         "whole-tensor-statistics"))
        first = (x - x.mean(dim=0, keepdim=True)) / torch.sqrt(x.var(dim=0, unbiased=False, keepdim=True) + eps)
        mistakes.append((gamma * first + beta,
                         "you normalised across the first dimension (across tokens or the batch). LayerNorm "
                         "normalises each token over its d features: use `dim=-1`.", "wrong-axis"))
    return mistakes


def _diagnose_layer_norm(layer_norm, x, eps, shown: str) -> None:
    """Run the answer with gamma = 1 and beta = 0, and say which step of the normalisation
    is wrong: the centring, the scaling, or (both right) how gamma and beta are applied."""
    ones, zeros = torch.ones(x.shape[-1], dtype=x.dtype), torch.zeros(x.shape[-1], dtype=x.dtype)
    try:
        plain = as_array(call(layer_norm, x, ones, zeros, eps, name="layer_norm", shown=shown), "layer_norm", shown)
    except Mistake:
        return
    if plain.shape != tuple(x.shape):
        return
    variance = x.var(dim=-1, unbiased=False, keepdim=True).numpy()
    if not np.allclose(plain.mean(axis=-1), 0.0, atol=1e-7):
        raise Mistake(f"for {shown}: with gamma = 1 and beta = 0 your tokens do not come out centred (their means are "
                      "not 0). Subtract each token's own mean, over the last dimension (dim=-1, keepdim=True), "
                      "from x.", key="not-centred")
    if not np.allclose(plain.var(axis=-1, keepdims=True), variance / (variance + eps), rtol=1e-6, atol=1e-9):
        raise Mistake(f"for {shown}: with gamma = 1 and beta = 0 your tokens are centred but not scaled right. "
                      "Divide by sqrt(variance + eps), the variance being the mean of the squared deviations over "
                      "the last dimension.", key="not-scaled")
    raise Mistake(f"for {shown}: your normalisation is right (it gives the right result with gamma = 1 and beta = 0), "
                  "so gamma and beta are applied wrongly: return gamma * x_hat + beta.", key="gamma-beta-misapplied")


_LIBRARY_NORM = ("your `layer_norm` calls one of torch's own normalisations (F.layer_norm, nn.LayerNorm, "
                 "native_layer_norm, rms_norm, group_norm, instance_norm, batch_norm or F.normalize, by any route). "
                 "The exercise is to write it yourself with tensor arithmetic: the mean, the variance and the "
                 "division, as in the worked example above.")
_LIBRARY_NORM_NODES = ("NativeLayerNorm", "NativeGroupNorm", "NativeBatchNorm", "RmsNorm")  # their backward nodes


def _computed_by_a_library_norm(result: torch.Tensor) -> bool:
    """Whether autograd's graph of ``result`` holds a node of torch's own normalisations: the
    route (``torch.ops.aten``, ``torch._C``) does not matter, the node is the same."""
    seen, nodes = set(), [result.grad_fn]
    while nodes:
        node = nodes.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if any(kind in type(node).__name__ for kind in _LIBRARY_NORM_NODES):
            return True
        nodes.extend(following for following, _ in node.next_functions)
    return False


@contextlib.contextmanager
def _library_layer_norm_refused():
    """The task asks for LayerNorm written with tensor arithmetic: while the learner's code
    runs, torch's own LayerNorm (the function, the module, the operator) answers with a
    Mistake instead of the result the checker compares against."""
    def refuse(*_args, **_kwargs):
        raise Mistake(_LIBRARY_NORM, key="library-layer-norm")
    places = [(functional, name) for name in ("layer_norm", "group_norm", "instance_norm", "batch_norm", "normalize")]
    places += [(functional, "rms_norm")] if hasattr(functional, "rms_norm") else []
    places += [(torch, name) for name in ("layer_norm", "native_layer_norm", "rms_norm", "group_norm", "instance_norm",
                                          "batch_norm") if hasattr(torch, name)]
    places += [(torch.nn.LayerNorm, "forward")]
    saved = [getattr(owner, attribute) for owner, attribute in places]
    for owner, attribute in places:
        setattr(owner, attribute, refuse)
    try:
        yield
    finally:
        for (owner, attribute), original in zip(places, saved):
            setattr(owner, attribute, original)


def _check_layer_norm(answer) -> str:
    layer_norm = require_function(answer, "layer_norm", 4)
    for x, gamma, beta, eps, shown in _layer_norm_cases():
        try:
            with _library_layer_norm_refused():
                got = call(layer_norm, x, gamma, beta, eps, name="layer_norm", shown=shown)
        except Mistake as mistake:
            if "raised RuntimeError" in str(mistake) and "must match the size" in str(mistake):
                raise Mistake(f"for {shown}: the sizes do not match, because the mean or the variance lost its "
                              "last dimension. Keep it, `x.mean(dim=-1, keepdim=True)`, so that it broadcasts "
                              "against x.", key="lost-axis") from None
            raise
        if not isinstance(got, torch.Tensor):
            raise Mistake(f"`layer_norm` returned a {type(got).__name__} for {shown}; return a torch tensor "
                          "of the same shape as x.", key="not-a-tensor-result")
        expect_float64(got, what="your result", shown=shown, why="Your formula may be right, but float32 keeps "
                       "only about 7 digits of each entry: compute from x, gamma and beta as they are.")
        want = functional.layer_norm(x, x.shape[-1:], gamma, beta, eps)
        try:
            expect_close(got, want, name="layer_norm", shown=shown, mistakes=_layer_norm_mistakes(x, gamma, beta, eps),
                         rtol=1e-9, atol=1e-9)
        except Mistake as mistake:
            if "Work through one entry by hand" in str(mistake):
                _diagnose_layer_norm(layer_norm, x, eps, shown)
            raise
    for x, gamma, beta, eps, shown in _layer_norm_cases():
        x, gamma, beta = (t.detach().clone().requires_grad_() for t in (x, gamma, beta))
        shown = f"{shown}, backward pass"
        with torch.enable_grad():
            got = call(layer_norm, x, gamma, beta, eps, name="layer_norm", shown=shown, copies=False)
            want = torch.nn.functional.layer_norm(x, x.shape[-1:], gamma, beta, eps)
        if isinstance(got, torch.Tensor) and _computed_by_a_library_norm(got):
            raise Mistake(_LIBRARY_NORM, key="library-layer-norm")
        expect_gradients(got, want, {"x": (x, INPUT_WHY), "gamma": (gamma, WEIGHT_WHY), "beta": (beta, WEIGHT_WHY)},
                         name="layer_norm", shown=shown, rtol=1e-8, atol=1e-10)
    return ("matches torch's LayerNorm on a batch, a single token, a large eps and constant tokens: per token, "
            "biased variance, eps inside the square root, then gamma and beta.")


layer_norm = Exercise(
    "Exercise 04.2: LayerNorm by hand",
    _check_layer_norm,
    [
        "Work on the last dimension only: each token (a vector of d numbers) gets its own mean and variance. "
        "Keep that dimension (keepdim=True) so the result broadcasts against x.",
        "The variance LayerNorm uses is the mean of the squared deviations: it divides by d, not d - 1. "
        "torch's .var() divides by d - 1 unless you say otherwise.",
        "eps goes inside the square root: divide the centred x by sqrt(variance + eps).",
        "Finish with the learnable part: multiply by gamma (entry by entry), then add beta.",
    ],
)


# ----- Exercise 04.1: autograd against a central finite difference --------------------------

with torch.inference_mode(False):  # a normal tensor even if this module is first imported under inference mode
    _WEIGHT = torch.tensor([[0.5, -1.0, 0.3], [0.2, 0.8, -0.6]], dtype=torch.float64)


def _cubic(x):
    return (x ** 3).sum() - x.flatten()[0] * x.flatten()[-1]


def _wavy(x):
    return torch.sin(x).sum() * torch.cos(x).sum()


def _tanh_layer(x):
    return torch.tanh(_WEIGHT @ x).pow(2).sum()


def _kinked(x):
    return torch.relu(x).sum() + (x ** 2).sum()


_GRADIENTS = {  # the exact gradients, written out by hand
    _cubic: lambda x: 3 * x ** 2 - _ends(x),
    _wavy: lambda x: torch.cos(x) * torch.cos(x).sum() - torch.sin(x) * torch.sin(x).sum(),
    _tanh_layer: lambda x: _WEIGHT.T @ (2 * torch.tanh(_WEIGHT @ x) * (1 - torch.tanh(_WEIGHT @ x) ** 2)),
    _kinked: lambda x: (x > 0).to(x.dtype) + 2 * x,  # autograd's slope of ReLU at 0 is 0
}


def _ends(x):
    """d/dx of x_first * x_last, as a tensor shaped like x."""
    flat = torch.zeros(x.numel(), dtype=x.dtype)
    flat[0] += x.flatten()[-1]
    flat[-1] += x.flatten()[0]
    return flat.reshape(x.shape)


def _gradient_cases() -> list[tuple]:
    """(f, x, h, what the case is) for the gradient checker."""
    return [
        (_cubic, torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64), 1e-3,
         "f(x) = sum(x^3) - x_first * x_last at x = [1, -2, 0.5], h = 1e-3"),
        (_wavy, torch.tensor([0.3, -1.2, 2.0, 0.7], dtype=torch.float64), 1e-4,
         "f(x) = sum(sin x) * sum(cos x) at x = [0.3, -1.2, 2, 0.7], h = 1e-4"),
        (_tanh_layer, torch.tensor([0.4, -0.1, 1.5], dtype=torch.float64), 1e-6,
         "f(x) = sum(tanh(W x)^2) at x = [0.4, -0.1, 1.5], h = 1e-6"),
        (_cubic, torch.tensor([0.5, 1.5, -1.0, 2.0], dtype=torch.float64), 0.1,
         "f(x) = sum(x^3) - x_first * x_last at x = [0.5, 1.5, -1, 2] with a large step, h = 0.1"),
        (_kinked, torch.tensor([0.0, 1.5, -0.5], dtype=torch.float64), 1e-3,
         "f(x) = sum(ReLU(x)) + sum(x^2) at x = [0, 1.5, -0.5], where ReLU has a kink at x_0 = 0, h = 1e-3"),
    ]


_FLOAT32_ROUNDING = 20 * torch.finfo(torch.float32).eps


def _one_sided(f, x, h, sign: float) -> torch.Tensor:
    flat = x.detach().flatten()
    base = float(f(x.detach()))
    steps = []
    for i in range(flat.numel()):
        moved = flat.clone()
        moved[i] += sign * h
        steps.append(sign * (float(f(moved.reshape(x.shape))) - base) / h)
    return torch.tensor(steps, dtype=torch.float64).reshape(x.shape)


def _central(f, x, h, divisor: float) -> torch.Tensor:
    flat = x.detach().flatten()
    out = []
    for i in range(flat.numel()):
        plus, minus = flat.clone(), flat.clone()
        plus[i] += h
        minus[i] -= h
        out.append((float(f(plus.reshape(x.shape))) - float(f(minus.reshape(x.shape)))) / divisor)
    return torch.tensor(out, dtype=torch.float64).reshape(x.shape)


def _check_gradient(answer) -> str:
    gradient_check = require_function(answer, "gradient_check", 3)
    for f, x, h, shown in _gradient_cases():
        result = call(gradient_check, f, x, h, name="gradient_check", shown=shown)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise Mistake(f"`gradient_check` should return two tensors, (autograd gradient, finite-difference "
                          f"gradient); for {shown} it returned {describe_container(result)}.", key="not-a-pair")
        auto, numeric = result
        want = _GRADIENTS[f](x)
        if auto is None:
            raise Mistake(f"the autograd gradient for {shown} is None: leaf.grad stays None until a backward pass "
                          "reaches leaf. Call f(leaf).backward() on f's own result: `.item()`, `torch.tensor(...)`, "
                          "`.detach()` or NumPy on the way cut the graph, and nothing is recorded under "
                          "`torch.no_grad()`.", key="grad-none")
        central = _central(f, x, h, 2 * h)
        for label, got in (("autograd gradient", auto), ("finite-difference gradient", numeric)):
            if not isinstance(got, torch.Tensor):
                raise Mistake(f"the {label} for {shown} is a {type(got).__name__}; return a torch tensor shaped "
                              "like x.", key="not-a-tensor-result")
            expect_float64(got, what=f"the {label}", shown=shown, why="In float32 a difference of two nearly "
                           "equal values keeps only about 7 digits, and dividing by a small h blows the rounding up.")
        value = float(f(x))
        if not torch.allclose(auto, want, rtol=1e-10, atol=1e-12):
            if torch.allclose(auto, central, rtol=1e-12, atol=1e-14) and torch.allclose(numeric, want, rtol=1e-10,
                                                                                        atol=1e-12):
                raise Mistake(f"for {shown}: you returned the pair in the wrong order: return "
                              "(by_autograd, by_difference).", key="pair-swapped")
            if torch.allclose(auto, central, rtol=1e-6, atol=1e-8):
                raise Mistake(f"for {shown}: your autograd gradient matches the central difference, not autograd. "
                              "Get it from f(leaf).backward(), then leaf.grad.", key="autograd-is-difference")
            if torch.allclose(auto, want, rtol=1e-3, atol=1e-6):
                raise Mistake(f"for {shown}: your autograd gradient is near the exact one but off by up to "
                              f"{float((auto - want).abs().max()):.2g}, as a finite difference (or arithmetic in "
                              "float32) would be. Get it from autograd: f(leaf).backward(), then leaf.grad, exact "
                              "to the last digits.", key="autograd-low-precision")
        expect_close(auto, want, name="gradient_check", shown=f"{shown} (autograd gradient)", rtol=1e-10, atol=1e-12,
                     mistakes=[(torch.full_like(x, value),
                                "the autograd gradient holds f(x) itself. Call .backward() on f(x) and return x.grad, "
                                "the derivative, not the value.", "grad-holds-f"),
                               (2 * want, "the autograd gradient is twice the right one: x.grad adds up over "
                                "backward() calls; call backward() once, on a fresh copy of x.", "grad-accumulated")])
        try:
            _expect_difference(numeric, want, f, x, h, shown)
        except Mistake as mistake:
            error = float((torch.as_tensor(numeric, dtype=torch.float64) - central).abs().max())
            rounding = _FLOAT32_ROUNDING * max(1.0, abs(value)) / h  # what float32 values of f can cost
            if ("gives wrong values" in str(mistake) or "level of rounding" in str(mistake)) and error <= rounding:
                raise Mistake(f"for {shown}: the finite difference is off by {error:.2g}, about what rounding f's "
                              "values to float32 (7 digits) and dividing by h costs. Somewhere the values were "
                              "computed in float32, or rounded: keep x, the steps and f's values in float64, and "
                              "do not round.", key="difference-low-precision") from None
            raise
    return ("autograd agrees with the exact gradient, and the central difference with its own value for the step "
            "given, on four functions of a vector x, with steps from 0.1 to 1e-6, in float64. At ReLU's kink the two "
            "disagree, as they should: autograd takes ReLU's slope at 0 to be 0, while the central difference "
            "averages the slopes on either side, 0 and 1.")


def _expect_difference(numeric, want, f, x, h, shown) -> None:
    """The finite difference must match the central difference with the learner's step ``h``
    (``want``, the exact gradient, is a wrong answer where h is large); name the common
    mistakes if it does not."""
    central = _central(f, x, h, 2 * h)
    if not torch.allclose(central, want, rtol=1e-7, atol=1e-9) and torch.allclose(
            torch.as_tensor(numeric, dtype=torch.float64), want, rtol=1e-8, atol=1e-10):
        raise Mistake(f"for {shown}: your finite difference is the exact gradient, although with this h the "
                      f"central difference differs from it by up to {float((central - want).abs().max()):.2g}. "
                      "It does not use the step h it was given (a fixed step inside the function, or autograd's "
                      "gradient returned twice): step by exactly h.", key="difference-is-exact")
    expect_close(numeric, central, name="gradient_check", shown=f"{shown} (finite-difference gradient)",
                 rtol=1e-7, atol=1e-9, mistakes=[
                     (_one_sided(f, x, h, 1.0) / 2, "one of your two points is x itself: the central difference "
                      "evaluates f at x + h e_i and at x - h e_i.", "point-at-x"),
                     (_one_sided(f, x, h, -1.0) / 2, "one of your two points is x itself: the central difference "
                      "evaluates f at x + h e_i and at x - h e_i.", "point-at-x-2"),
                     (_one_sided(f, x, h, 1.0), "the finite difference is one-sided, (f(x + h e_i) - f(x)) / h: "
                      "its error shrinks only like h. Use the central difference "
                      "(f(x + h e_i) - f(x - h e_i)) / (2h), whose error shrinks like h squared.", "one-sided"),
                     (_one_sided(f, x, h, -1.0), "the finite difference is one-sided, (f(x) - f(x - h e_i)) / h: "
                      "use the central difference (f(x + h e_i) - f(x - h e_i)) / (2h).", "one-sided-backward"),
                     (_central(f, x, h, h), "the finite difference is twice the right one: the two points "
                      "x + h e_i and x - h e_i are 2h apart, so divide by 2h.", "twice-too-large"),
                     (_all_at_once(f, x, h),
                      "every entry of the finite difference is the same number: you moved all entries of x "
                      "at once. Move one entry at a time (x + h e_i, with e_i zero except a 1 at entry i).",
                      "all-entries-moved"),
                 ])


def _all_at_once(f, x, h) -> torch.Tensor:
    x = x.detach()
    ones = torch.ones_like(x)
    slope = (float(f(x + h * ones)) - float(f(x - h * ones))) / (2 * h)
    return torch.full_like(x, slope)


gradient_check = Exercise(
    "Exercise 04.1: autograd checked by a central difference",
    _check_gradient,
    [
        "Autograd part: the skeleton's `leaf` is a copy of x that records operations. Compute f(leaf) and call "
        ".backward() on the result; leaf.grad then holds the gradient, which the skeleton returns.",
        "Finite-difference part: inside the loop, build h e_i, zero everywhere except h at entry i "
        "(step = torch.zeros_like(x), then step[i] = h), and evaluate f at x + step and at x - step.",
        "The central difference is (f(x + h e_i) - f(x - h e_i)) / (2h). Store it at entry i of a tensor shaped "
        "like x (torch.zeros_like(x) makes one to fill).",
        "Do every step in float64 (the checker hands you float64 tensors: do not call .float()), and evaluate f "
        "on tensors without requires_grad, or under torch.no_grad(), for the finite difference.",
    ],
)
