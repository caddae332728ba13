"""Train a classifier briefly and evaluate it: the one training loop of the course.

SGD with momentum on full tensors in memory (no DataLoader: the data are tiny). The update
is written out (``_sgd_step``, the arithmetic of ``torch.optim.SGD``: bit-identical losses)
because torch.optim's first step imports ``torch._dynamo``: measured with farm-bench (torch
2.13, medians of 5), 1.6 CPU seconds and 74 MiB more peak memory per process. Each update is
one ``torch._foreach_*`` call per operation over all parameters, and gradients are cleared by
dropping them: for the course's tiny layers the per-tensor Python calls of a loop (and
``Module.zero_grad``'s walk over every submodule) were a sixth of a training step. A run that
diverges is a result to show, not a crash: the loop stops at the first non-finite loss.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .validation import check_cost, check_float, check_int, check_module, check_tensor, invalid

__all__ = ["train", "evaluate", "weight_gradient_norms", "warmup_lr", "output_change"]


def _as_data(model: nn.Module, x, y) -> tuple[torch.Tensor, torch.Tensor]:
    """Check inputs ``x`` (float, shape (n, features) as ``model``'s first Linear layer
    takes them) and labels ``y`` (int64, shape (n,))."""
    check_tensor("x", x, ndim=2, shape_text="(n, features)")
    check_tensor("y", y, ndim=1, floating=False, shape_text="(n,) of int64 class labels")
    if y.dtype != torch.int64:
        raise invalid("y", "an int64 tensor of class labels", y)
    if len(x) != len(y):
        raise invalid("y", f"the same number of labels as x has examples ({len(x)})", y)
    if len(x) == 0:
        raise invalid("x", "at least one example", x)
    first = next((m for m in model.modules() if isinstance(m, nn.Linear)), None)
    if first is not None and (x.shape[1] != first.in_features or x.dtype != first.weight.dtype):
        raise invalid("x", f"a {first.weight.dtype} tensor with {first.in_features} features per example, "
                      "as model's first layer takes", x)
    return x, y


def _clear_gradients(parameters: list) -> None:
    """Drop the gradients (``zero_grad(set_to_none=True)`` of just these parameters)."""
    for parameter in parameters:
        parameter.grad = None


@torch.no_grad()
def _sgd_step(parameters: list, buffers: list, lr: float, momentum: float) -> None:
    """One step of SGD with momentum, in the same order of operations as torch.optim.SGD:
    buffer = grad on a parameter's first step, then momentum * buffer + grad; parameter -=
    lr * buffer. A parameter without a gradient (not in the loss) is left as it is."""
    stepped = [i for i, parameter in enumerate(parameters) if parameter.grad is not None]
    if not stepped:
        return
    updates = [parameters[i].grad for i in stepped]
    if momentum != 0:
        running = [i for i in stepped if buffers[i] is not None]
        if running:
            torch._foreach_mul_([buffers[i] for i in running], momentum)
            torch._foreach_add_([buffers[i] for i in running], [parameters[i].grad for i in running])
        for i in stepped:
            if buffers[i] is None:
                buffers[i] = parameters[i].grad.clone()
        updates = [buffers[i] for i in stepped]
    torch._foreach_add_([parameters[i] for i in stepped], updates, alpha=-lr)


def _adam_run(model: nn.Module, loss_at, steps: int, lr: float) -> list[float]:
    """Train ``model`` in place for ``steps`` steps of Adam with torch's defaults (betas 0.9
    and 0.999, eps 1e-8) on ``loss_at(step)``, a scalar loss; return every step's loss and
    stop at a non-finite one. Written out, as ``_sgd_step`` is, to spare torch.optim's memory."""
    parameters = [p for p in model.parameters() if p.requires_grad]
    means = [torch.zeros_like(p) for p in parameters]
    squares = [torch.zeros_like(p) for p in parameters]
    losses = []
    for step in range(1, steps + 1):
        loss = loss_at(step)
        losses.append(float(loss.detach()))
        if not math.isfinite(losses[-1]):
            break
        _clear_gradients(parameters)
        loss.backward()
        grads = [parameter.grad for parameter in parameters]
        with torch.no_grad():
            torch._foreach_mul_(means, 0.9)  # running averages of g and g^2
            torch._foreach_add_(means, grads, alpha=0.1)
            torch._foreach_mul_(squares, 0.999)
            torch._foreach_addcmul_(squares, grads, grads, value=0.001)
            denominators = torch._foreach_div(squares, 1 - 0.999 ** step)
            torch._foreach_sqrt_(denominators)
            torch._foreach_add_(denominators, 1e-8)
            torch._foreach_addcdiv_(parameters, means, denominators, value=-lr / (1 - 0.9 ** step))
    return losses


def train(model, x, y, *, steps: int = 200, lr: float = 0.05, momentum: float = 0.9,
          batch_size: int = 128, seed: int = 0, progress=None) -> list[float]:
    """Train ``model`` in place with cross-entropy and SGD with momentum; return every step's
    mini-batch loss (before its update), up to the first NaN or inf. Batches come without
    replacement from an order drawn from ``seed`` (not the global seed). ``progress`` (a
    ``utils.progress.progress_bar``) advances per step, and by the steps left if a run stops."""
    check_module("model", model)
    x, y = _as_data(model, x, y)
    steps = check_int("steps", steps, minimum=1)
    lr = check_float("lr", lr, minimum=0.0)
    momentum = check_float("momentum", momentum, minimum=0.0, maximum=1.0)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    if batch_size > len(x):
        raise invalid("batch_size", f"at most the number of examples ({len(x)})", batch_size)
    if progress is not None and not hasattr(progress, "update"):
        raise invalid("progress", "a progress bar (utils.progress.progress_bar) or None", progress, error=TypeError)
    weights = sum(p.numel() for p in model.parameters())
    check_cost({"steps": steps}, lambda steps: (0.0, 6.0 * steps * batch_size * weights),
               what=f"a forward and backward pass per step ({weights} weights, batch_size={batch_size})")

    generator = torch.Generator().manual_seed(seed)
    parameters = [p for p in model.parameters() if p.requires_grad]
    buffers = [None] * len(parameters)
    model.train()
    losses: list[float] = []
    position = len(x)  # no order yet: the first step draws one
    for step in range(steps):
        if position + batch_size > len(x):
            order = torch.randperm(len(x), generator=generator)
            position = 0
        index = order[position:position + batch_size]
        position += batch_size
        loss = nn.functional.cross_entropy(model(x[index]), y[index])
        losses.append(float(loss.detach()))
        if not math.isfinite(losses[-1]):
            if progress is not None:
                progress.update(steps - step)
            break
        _clear_gradients(parameters)
        loss.backward()
        _sgd_step(parameters, buffers, lr, momentum)
        if progress is not None:
            progress.update()
    return losses


@torch.no_grad()
def evaluate(model, x, y) -> tuple[float, float]:
    """``(mean cross-entropy loss, accuracy)`` of ``model`` on all of ``x, y``, in eval mode
    (BatchNorm's running statistics), without a graph; the model's own mode is restored."""
    check_module("model", model)
    x, y = _as_data(model, x, y)
    was_training = model.training
    model.eval()
    try:
        logits = model(x)
        loss = float(nn.functional.cross_entropy(logits, y))
        accuracy = float((logits.argmax(dim=1) == y).float().mean())
    finally:
        model.train(was_training)
    return loss, accuracy


def weight_gradient_norms(model, x, y) -> list[float]:
    """Norm of the cross-entropy's gradient for the weight of every Linear layer of
    ``model``, input to output, on one batch in training mode (BatchNorm's batch statistics):
    do gradients vanish or explode on the way back? Gradients are cleared, the mode kept."""
    check_module("model", model)
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not linears:
        raise invalid("model", "a network with at least one torch.nn.Linear layer", model)
    x, y = _as_data(model, x, y)
    was_training = model.training
    model.train()
    model.zero_grad(set_to_none=True)
    try:
        nn.functional.cross_entropy(model(x), y).backward()
        norms = [float(m.weight.grad.norm()) for m in linears]
    finally:
        model.zero_grad(set_to_none=True)
        model.train(was_training)
    return norms


def warmup_lr(step: int, lr: float, warmup_steps: int) -> float:
    """The learning rate of step ``step`` (from 1) under a linear warm-up, ``lr / warmup_steps``
    up to ``lr`` at step ``warmup_steps`` (0: none): it keeps the first updates small, while
    the network's output is most sensitive to them."""
    step = check_int("step", step, minimum=1)
    lr = check_float("lr", lr, minimum=0.0)
    warmup_steps = check_int("warmup_steps", warmup_steps, minimum=0)
    return lr if warmup_steps == 0 else lr * min(1.0, step / warmup_steps)


def output_change(before, after) -> float:
    """How far an update moved a network's outputs on one input, ``|after - before| / |before|``
    over all entries: what Liu et al. (2020) and DeepNet (Wang et al. 2022) keep small, not the
    gradient at initialisation, since after a large change the next step starts somewhere new."""
    before = check_tensor("before", before)
    after = check_tensor("after", after)
    if after.shape != before.shape:
        raise invalid("after", f"a tensor of the same shape as before, {tuple(before.shape)}", after)
    for name, value in (("before", before), ("after", after)):
        if not bool(torch.isfinite(value).all()):
            raise invalid(name, "a tensor of finite numbers", value)
    size = before.detach().norm()
    if size == 0:
        raise invalid("before", "an output that is not all zeros (the change is relative to its size)", before)
    return float((after.detach() - before.detach()).norm() / size)
