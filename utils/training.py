"""Train a classifier briefly and evaluate it: the one training loop of the course.

Plain SGD with momentum on full tensors held in memory (no DataLoader: the data are tiny
and a loop over index slices is several times faster on a CPU). A run that diverges is a
result to show, not a crash: the loop stops at the first non-finite loss and records it.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .validation import check_float, check_int


def _as_data(x, y) -> tuple[torch.Tensor, torch.Tensor]:
    """Check and convert inputs ``x`` (float, first axis = examples) and labels ``y`` (int, 1-D)."""
    x = torch.as_tensor(x)
    y = torch.as_tensor(y)
    if not torch.is_floating_point(x) or x.ndim < 2:
        raise ValueError(f"x must be a float tensor of shape (n, features), got dtype {x.dtype} and shape {tuple(x.shape)}")
    if y.dtype != torch.int64 or y.ndim != 1:
        raise ValueError(f"y must be an int64 tensor of class labels with shape (n,), got dtype {y.dtype} and shape {tuple(y.shape)}")
    if len(x) != len(y):
        raise ValueError(f"x and y must hold the same number of examples, got {len(x)} and {len(y)}")
    if len(x) == 0:
        raise ValueError("x must hold at least one example, got none")
    return x, y


def _check_model(model) -> nn.Module:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return model


def train(model, x, y, *, steps: int = 200, lr: float = 0.05, momentum: float = 0.9,
          batch_size: int = 128, seed: int = 0, progress=None) -> list[float]:
    """Train ``model`` in place with cross-entropy and SGD with momentum; return the
    training loss of every step (the mini-batch loss before that step's update).

    Mini-batches are drawn without replacement from a shuffled order that is reshuffled
    when fewer than ``batch_size`` examples remain; the order depends only on ``seed``
    (a private generator, so the global torch seed is untouched). If the loss becomes
    NaN or infinite the run stops there, and that value is the last entry of the list.
    ``progress`` (a ``utils.progress.Progress``) is advanced once per step, and by the
    steps left over when a run stops early, so a bar shared by several runs ends full.
    """
    model = _check_model(model)
    x, y = _as_data(x, y)
    steps = check_int("steps", steps, minimum=1)
    lr = check_float("lr", lr, minimum=0.0)
    momentum = check_float("momentum", momentum, minimum=0.0, maximum=1.0)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    if batch_size > len(x):
        raise ValueError(f"batch_size must be at most the number of examples ({len(x)}), got {batch_size}")
    if progress is not None and not hasattr(progress, "advance"):
        raise TypeError(f"progress must be a utils.progress.Progress or None, got {type(progress).__name__}")

    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    losses: list[float] = []
    order = torch.randperm(len(x), generator=generator)
    position = 0
    for step in range(steps):
        if position + batch_size > len(x):
            order = torch.randperm(len(x), generator=generator)
            position = 0
        index = order[position:position + batch_size]
        position += batch_size
        loss = loss_fn(model(x[index]), y[index])
        value = float(loss.detach())
        losses.append(value)
        if not math.isfinite(value):
            if progress is not None:
                progress.advance(steps - step)
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if progress is not None:
            progress.advance()
    return losses


@torch.no_grad()
def evaluate(model, x, y) -> tuple[float, float]:
    """Return ``(mean cross-entropy loss, accuracy)`` of ``model`` on all of ``x, y``, in
    eval mode (BatchNorm uses its running statistics) and without building a graph. The
    model's previous train/eval mode is restored afterwards."""
    model = _check_model(model)
    x, y = _as_data(x, y)
    was_training = model.training
    model.eval()
    try:
        logits = model(x)
        loss = float(nn.functional.cross_entropy(logits, y))
        accuracy = float((logits.argmax(dim=1) == y).float().mean())
    finally:
        model.train(was_training)
    return loss, accuracy
