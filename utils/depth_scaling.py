"""Does the best Adam learning rate stay put as the network deepens? Notebook 11's norm-free
residual MLP with each of its L branches times L^(-alpha) (1/2: depth-muP's branch multiplier
1/sqrt(L); 1: CompleteP's 1/L), trained with one learning rate at every depth: no depth-muP
1/sqrt(L) learning-rate factor, no CompleteP epsilon rule. Adam moves every weight by about the
learning rate, so the L branches change the output by about L^(1 - alpha) times a fixed amount:
like sqrt(L) for alpha = 1/2, flat for 1."""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .plotting import PALETTE, _log_ticks
from .recipes import build_deep_mlp
from .training import _adam_run, _as_data, evaluate
from .validation import check_cost, check_figure, check_float, check_int, check_sequence, invalid

__all__ = ["lr_sweep", "draw_lr_sweep", "first_step_change"]


def _branch_scaled_mlp(depth: int, alpha: float, *, seed: int = 0) -> nn.Module:
    """Notebook 11's norm-free residual MLP of ``depth`` layers, each branch times L^(-``alpha``)."""
    model = build_deep_mlp(depth, "default", seed=seed)
    for block in model.blocks:
        block.multiplier = len(model.blocks) ** -alpha
    return model


def _train_adam(model, x, y, *, steps: int = 30, lr: float = 1e-3, batch_size: int = 64, seed: int = 0) -> list[float]:
    """Train ``model`` in place (cross-entropy, ``training._adam_run``) on mini-batches drawn
    from ``seed``; return every step's loss, up to a non-finite one."""
    x, y = _as_data(model, x, y)
    generator = torch.Generator().manual_seed(seed)
    model.train()

    def loss_at(step):
        index = torch.randperm(len(x), generator=generator)[:batch_size]
        return nn.functional.cross_entropy(model(x[index]), y[index])

    return _adam_run(model, loss_at, steps, lr)


def lr_sweep(x, y, *, depths=(6, 18, 54), alphas=(0.5, 1.0), lrs=(1e-3, 4e-3, 1.6e-2, 6.4e-2), steps: int = 30,
             seeds=(0, 1), batch_size: int = 64, progress=None) -> dict:
    """Train ``_branch_scaled_mlp(depth, alpha, seed=seed)`` for ``steps`` Adam steps at each of
    ``lrs``; return ``{(alpha, depth): losses}``, per learning rate the median over ``seeds`` of
    the loss on all of ``x, y`` after training (inf if diverged); ``progress`` advances per run."""
    depths = [check_int("depths", d, minimum=4) for d in check_sequence("depths", depths, what="depths")]
    alphas = [check_float("alphas", a, minimum=0.0, maximum=2.0) for a in check_sequence("alphas", alphas)]
    lrs = [check_float("lrs", lr, minimum=0.0, maximum=10.0) for lr in check_sequence("lrs", lrs)]
    seeds = [check_int("seeds", s, minimum=0) for s in check_sequence("seeds", seeds, what="seeds")]
    if progress is not None and not hasattr(progress, "update"):
        raise invalid("progress", "a progress bar (utils.progress.progress_bar) or None", progress, error=TypeError)
    runs = len(alphas) * len(lrs) * len(seeds)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    check_cost({"steps": check_int("steps", steps, minimum=1), "batch_size": batch_size},
               lambda steps, batch_size: (0.0, runs * 6.0 * steps * batch_size * sum(d * 4160 for d in depths)),
               what=f"{runs * len(depths)} training runs")

    def final_loss(alpha, depth, lr, seed):
        model = _branch_scaled_mlp(depth, alpha, seed=seed)
        losses = _train_adam(model, x, y, steps=steps, lr=lr, batch_size=batch_size, seed=seed)
        final = evaluate(model, x, y)[0] if math.isfinite(losses[-1]) else math.inf
        if progress is not None:
            progress.update()
        return final if math.isfinite(final) else math.inf

    return {(alpha, depth): np.array([float(np.median([final_loss(alpha, depth, lr, seed) for seed in seeds]))
                                      for lr in lrs]) for alpha in alphas for depth in depths}


def draw_lr_sweep(fig, sweep: dict, lrs, *, diverged: float = 10.0) -> str:
    """One panel per alpha: loss after training against learning rate (log-log), a line per
    depth, a run ending above ``diverged`` (or non-finite) an open triangle at the top. Returns
    which runs diverged: a coarse statement that holds on every CPU, unlike a curve's minimum."""
    check_figure("fig", fig)
    if not isinstance(sweep, dict) or not sweep or not all(isinstance(k, tuple) and len(k) == 2 for k in sweep):
        raise invalid("sweep", "the dict returned by lr_sweep", sweep, error=TypeError)
    lrs = np.asarray(check_sequence("lrs", lrs), dtype=np.float64)
    diverged = check_float("diverged", diverged, minimum=0.0)
    alphas, depths = (sorted(set(values)) for values in zip(*sweep))
    fig.clear()
    axes = fig.subplots(1, len(alphas), sharey=True, squeeze=False)[0]
    blown_runs = []
    for ax, alpha in zip(axes, alphas):
        for index, depth in enumerate(depths):
            values = np.asarray(sweep[alpha, depth], dtype=np.float64)
            if values.shape != lrs.shape:
                raise invalid("lrs", f"one learning rate per loss ({values.size})", lrs)
            color = (PALETTE[5], PALETTE[0], PALETTE[6])[index % 3]  # shallow to deep
            blown = ~(values <= diverged)
            ax.plot(lrs, np.where(blown, np.nan, values), "o-", color=color,
                    label=f"depth {depth} (L = {(depth - 2) // 2})")
            ax.plot(lrs[blown], np.full(blown.sum(), diverged), "^", color=color, mfc="none", ms=9)
            blown_runs += [f"alpha={alpha:g} at depth {depth}, lr {lr:g}" for lr in lrs[blown]]
        ax.set(xscale="log", yscale="log", xlabel="Adam learning rate")
        ax.set_title(f"branch multiplier L^-{alpha:g}" + (" (1/sqrt(L))" if alpha == 0.5 else " (1/L)" if alpha == 1 else ""))
        _log_ticks(ax)
    axes[0].set_ylabel("training loss after the run")
    axes[0].legend(fontsize=9)
    return (f"loss above {diverged:g} (diverged, drawn as triangles): " + "; ".join(blown_runs) if blown_runs
            else f"no run ended with a loss above {diverged:g}")


def first_step_change(depth: int, alpha: float, x, y, *, lr: float = 1e-3, seed: int = 0) -> float:
    """||f(w') - f(w)|| / ||f(w)|| on ``x`` (float64) after one Adam step of ``lr`` on ``x, y`` for
    ``_branch_scaled_mlp(depth, alpha, seed=seed)``: that step moves each weight by about ``lr``."""
    alpha = check_float("alpha", alpha, minimum=0.0, maximum=2.0)
    lr = check_float("lr", lr, minimum=0.0, maximum=10.0)
    model = _branch_scaled_mlp(depth, alpha, seed=seed).double()
    x, y = _as_data(model, x.double() if hasattr(x, "double") else x, y)
    with torch.no_grad():
        before = model(x)
    _train_adam(model, x, y, steps=1, lr=lr, batch_size=len(x), seed=seed)
    with torch.no_grad():
        after = model(x)
    return float((after - before).norm() / before.norm())
