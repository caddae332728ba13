"""The figures of notebooks 08 and 09, so their cells show the experiment, not axis labels:
each function draws the notebook's results in the house style (chance a grey dashed line)
and shows it, returning None so a cell may end with the call."""
from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import LogNorm

from . import plotting
from .validation import check_array, check_int, check_sequence, invalid

__all__ = ["loss_curves", "error_against_depth", "layer_gradients", "branch_ratios", "loss_surfaces",
           "single_lesions", "random_lesions", "gradient_grid", "autocorrelation_by_depth"]

_COLORS = {"plain": plotting.PLAIN_COLOR, "residual": plotting.RESIDUAL_COLOR}  # by architecture


def _chance(ax, level: float, label: str = "chance") -> None:
    ax.axhline(level, color="grey", ls="--", lw=1, zorder=0, label=label)  # beneath the data


def _entries(name: str, mapping, keys, what: str, length: int | None = None) -> list:
    """``mapping``'s entries for ``keys`` (all if None) if it is a non-empty dict of ``what`` with
    every key, each a tuple of ``length`` when given; else an error naming ``name``."""
    if not isinstance(mapping, dict):
        raise invalid(name, f"a dict of {what}", mapping, error=TypeError)
    if not mapping:
        raise invalid(name, f"a non-empty dict of {what}", mapping)
    for key in mapping if keys is None else keys:
        if key not in mapping:
            raise invalid(name, f"a dict with an entry for {key!r}",
                          fix="pass the results of every run drawn")
        if length and (not isinstance(mapping[key], (tuple, list)) or len(mapping[key]) != length):
            raise invalid(name, f"a dict of {what}", mapping[key], error=TypeError)
    return [mapping[key] for key in (mapping if keys is None else keys)]


def _run_keys(depths, seeds) -> list[tuple]:
    return [(a, d, s) for a in _COLORS for d in depths for s in seeds]


def _whole_numbers(name: str, values, *, minimum: int) -> list[int]:
    """``values`` as a non-empty list of whole numbers of at least ``minimum``."""
    return [check_int(name, v, minimum=minimum) for v in check_sequence(name, values, what="whole numbers")]


def loss_curves(runs: dict, depths, seeds, *, window: int = 10) -> None:
    """Mini-batch training loss against step (``window``-step moving average, log axis),
    one panel per depth, one line per seed; ``runs[architecture, depth, seed]["losses"]``."""
    depths, seeds = _whole_numbers("depths", depths, minimum=1), _whole_numbers("seeds", seeds, minimum=0)
    window = check_int("window", window, minimum=1)
    for run in _entries("runs", runs, _run_keys(depths, seeds), "training runs"):
        check_array("runs", _entries("runs", run, ["losses"], "results")[0], ndim=1)
    fig, axes = plotting.new_figure(1, len(depths), width=3.4 * len(depths), height=3.8)
    for ax, depth in zip(np.atleast_1d(axes), depths):
        for architecture, color in _COLORS.items():
            for seed in seeds:
                losses = np.asarray(runs[architecture, depth, seed]["losses"], dtype=np.float64)
                width = min(window, len(losses))  # a moving average over window steps
                curve = np.convolve(losses, np.ones(width) / width, mode="valid")
                ax.plot(np.arange(len(curve)) + window, curve, color=color, alpha=0.8, lw=1.5,
                        label=architecture if seed == seeds[0] else None)
        _chance(ax, math.log(10), "chance (ln 10)")
        ax.set(yscale="log", ylim=(1e-3, 10), title=f"depth {depth}", xlabel="training step")
    first = np.atleast_1d(axes)[0]
    first.set_ylabel(f"mini-batch loss\n({window}-step average)")
    first.legend(loc="lower left")
    fig.suptitle("Deep plain nets stall near chance; residual nets of every depth train")
    plotting.show(fig)


def error_against_depth(runs: dict, depths, seeds) -> None:
    """Training and test error (%) against depth, a dot per seed and a line through the
    median, like He et al.'s Figure 1; ``runs[...]["train"|"test"] = (loss, accuracy)``."""
    depths, seeds = _whole_numbers("depths", depths, minimum=1), _whole_numbers("seeds", seeds, minimum=0)
    for run in _entries("runs", runs, _run_keys(depths, seeds), "training runs"):
        for split in _entries("runs", run, ["train", "test"], "results"):
            check_array("runs", split, shape=(2,))
    fig, axes = plotting.new_figure(1, 2, width=10, height=4)
    for ax, (split, name) in zip(axes, (("train", "training"), ("test", "test"))):
        for architecture, color in _COLORS.items():
            errors = np.array([[100 * (1 - runs[architecture, d, s][split][1]) for s in seeds] for d in depths])
            for column in errors.T:
                ax.plot(depths, column, "o", color=color, alpha=0.6, ms=5)
            ax.plot(depths, np.median(errors, axis=1), "-", color=color, label=architecture)
        _chance(ax, 90, "chance (90% error)")
        ax.set(ylim=(0, 100), xticks=list(depths), xlabel="depth (weight layers)", ylabel=f"{name} error (%)",
               title=f"{name} set")
    axes[0].legend(loc="center left")
    fig.suptitle("Plain nets get worse with depth, even on the training set; residual nets do not")
    plotting.show(fig)


def layer_gradients(norms: dict, depth: int) -> None:
    """Gradient norm of every weight layer at initialisation, log axis; ``norms[architecture]``
    holds one value per layer (stem first)."""
    depth = check_int("depth", depth, minimum=2)
    checked = _entries("norms", norms, _COLORS, "gradient norms")
    for architecture, values in zip(_COLORS, checked):
        if check_array("norms", values, ndim=1).shape != (depth,):
            raise invalid("norms", f"one value per weight layer, {depth} (depth) for {architecture}",
                          np.asarray(values))
    fig, ax = plotting.new_figure(width=7, height=4)
    for (architecture, color), values in zip(_COLORS.items(), checked):
        plotting._plot_log_safe(ax, np.arange(1, depth + 1), values, color=color,
                                label=f"{architecture}-{depth}")
    ax.set(xlabel=f"weight layer (1 = stem, {depth} = head)",
           ylabel="gradient norm at initialisation",
           title=f"At initialisation, plain-{depth}'s gradient explodes towards the input")
    ax.legend()
    plotting.show(fig)


def branch_ratios(ratios) -> None:
    """Var(branch) / Var(skip) against block index, one line per seed (``ratios`` is a list
    of lists), log axis."""
    rows = list(ratios) if isinstance(ratios, np.ndarray) and ratios.ndim == 2 else ratios  # a row per seed
    for values in check_sequence("ratios", rows, what="lists of ratios, one per seed"):
        check_array("ratios", values, ndim=1)
    fig, ax = plotting.new_figure(width=7, height=4)
    for i, values in enumerate(ratios):
        ax.plot(np.arange(1, len(values) + 1), values, "o-", color=plotting.RESIDUAL_COLOR, alpha=0.7, ms=3, lw=1.2,
                label="one line per seed" if i == 0 else None)
    _chance(ax, 1, "branch as large as skip")
    ax.set(yscale="log", xlabel="residual block (1 = right after the stem)",
           ylabel="Var(branch) / Var(skip)",
           title="At initialisation, deeper blocks add ever smaller edits")
    ax.legend()
    plotting.show(fig)


def loss_surfaces(surfaces: dict) -> None:
    """Filled contours of loss slices side by side, log-spaced levels shared by all panels;
    ``surfaces[title] = (a values, b values, losses)``."""
    for surface in _entries("surfaces", surfaces, None, "(a values, b values, losses) triples", 3):
        a, b = check_array("surfaces", surface[0], ndim=1), check_array("surfaces", surface[1], ndim=1)
        if np.shape(surface[2]) != (len(b), len(a)):  # losses may hold NaN where a slice diverged
            raise invalid("surfaces", f"losses of shape (len(b), len(a)) = {(len(b), len(a))}",
                          np.asarray(surface[2]))
    fig, axes = plotting.new_figure(1, len(surfaces), width=4.6 * len(surfaces), height=4.2)
    axes = np.atleast_1d(axes)
    every = np.concatenate([np.ravel(s[2]) for s in surfaces.values()], dtype=np.float64)
    levels = np.geomspace(max(np.nanmin(every), 1e-4), max(np.nanmax(every), 10.0), 13)
    for ax, (name, (a, b, losses)) in zip(axes, surfaces.items()):
        filled = ax.contourf(a, b, np.clip(losses, levels[0], levels[-1]), levels=levels, cmap="viridis",
                             norm=LogNorm(vmin=float(levels[0]), vmax=float(levels[-1])))
        ax.contour(a, b, losses, levels=[math.log(10)], colors="white", linewidths=1.5)
        ax.plot([0], [0], "x", color="white", ms=9, mew=2)
        ax.set(title=name, xlabel="direction 1", aspect="equal")
        ax.grid(False)
    axes[0].set_ylabel("direction 2")
    fig.colorbar(filled, ax=list(axes), label="training loss (log scale)", format="%.2g")
    fig.suptitle("Loss around the trained weights (x); white line: chance level")
    plotting.show(fig)


def single_lesions(lesions: dict, seeds) -> None:
    """Test accuracy after each single deletion: residual blocks left, plain layers right;
    ``lesions[architecture, seed] = (intact accuracy, accuracies after each deletion)``."""
    seeds = _whole_numbers("seeds", seeds, minimum=0)
    keys = [(a, s) for a in _COLORS for s in seeds]
    for entry in _entries("lesions", lesions, keys, "(intact, after deletions) accuracy pairs", 2):
        check_array("lesions", entry[0], ndim=0)
        check_array("lesions", entry[1], ndim=1)
    fig, axes = plotting.new_figure(1, 2, width=11, height=4)
    for ax, (architecture, color), unit in zip(axes, reversed(_COLORS.items()), ("block", "hidden layer")):
        for seed in seeds:
            intact, after = lesions[architecture, seed]
            ax.plot(np.arange(1, len(after) + 1), after, "o-", color=color, alpha=0.7, ms=4, lw=1,
                    label="after deleting it" if seed == seeds[0] else None)
            ax.axhline(intact, color=color, ls=":", lw=1, label="intact network" if seed == seeds[0] else None)
        _chance(ax, 0.1)
        ax.set(ylim=(0, 1.02), xticks=range(1, len(after) + 1, 2 if architecture == "plain" else 3),
               xlabel=f"deleted {unit} (1 = first after the stem)", ylabel="test accuracy")
    axes[0].set_title("residual-56: deleting one block barely hurts")
    axes[1].set_title("plain-20: deleting one layer is catastrophic")
    axes[0].legend(loc="lower right")
    axes[1].legend(loc="center right")
    plotting.show(fig)


def random_lesions(accuracies: dict, blocks: int) -> None:
    """Median and middle half of the test accuracy after deleting k random blocks;
    ``accuracies[k]`` holds the accuracies of all draws for that k."""
    blocks = check_int("blocks", blocks, minimum=1)
    for k, values in zip(accuracies, _entries("accuracies", accuracies, None, "accuracy lists")):
        check_int("accuracies", k, minimum=0, maximum=blocks)
        if check_array("accuracies", values, ndim=1).size == 0:
            raise invalid("accuracies", f"a dict of non-empty lists of accuracies (none for k={k})")
    ks = sorted(accuracies)
    q1, median, q3 = np.array([np.percentile(accuracies[k], [25, 50, 75]) for k in ks]).T
    fig, ax = plotting.new_figure(width=7, height=4)
    ax.fill_between(ks, q1, q3, color=plotting.RESIDUAL_COLOR, alpha=0.25, label="middle half of the draws")
    ax.plot(ks, median, "o-", color=plotting.RESIDUAL_COLOR, label="median")
    _chance(ax, 0.1)
    ax.set(ylim=(0, 1.02), xticks=ks, xlabel=f"number of blocks deleted at random (of {blocks})",
           ylabel="test accuracy", title="Residual-56 degrades smoothly as blocks are deleted")
    ax.legend(loc="upper right")
    plotting.show(fig)


def gradient_grid(curves: dict, rows, depths) -> None:
    """A grid of input-gradient curves dy/dx, each scaled by its own largest |value|: one
    row per ``(architecture, block_layers, label)`` in ``rows``, one column per depth;
    ``curves[architecture, block_layers, depth] = (x, dy/dx, lag-1 autocorrelation)``."""
    rows = check_sequence("rows", rows, what="(architecture, block_layers, label) triples")
    if not all(isinstance(row, (tuple, list)) and len(row) == 3 and row[0] in _COLORS
               for row in rows):
        raise invalid("rows", "a list of (architecture, block_layers, label) triples, architecture "
                      "'plain' or 'residual'", rows, error=TypeError)
    depths = _whole_numbers("depths", depths, minimum=1)
    keys = [(a, b, d) for a, b, _ in rows for d in depths]
    _entries("curves", curves, keys, "(x, dy/dx, autocorrelation) triples", 3)
    fig, axes = plotting.new_figure(len(rows), len(depths), width=10, height=2.4 * len(rows))
    axes = np.atleast_2d(axes)
    for r, (architecture, block_layers, label) in enumerate(rows):
        color = _COLORS[architecture]
        for c, depth in enumerate(depths):
            x, grad, correlation = curves[architecture, block_layers, depth]
            ax = axes[r, c]
            ax.plot(x, grad / np.abs(grad).max(), color=color, lw=1.2)
            ax.set(ylim=(-1.1, 1.1), yticks=[-1, 0, 1], title=f"depth {depth}: r = {correlation:.2f}")
        axes[r, 0].set_ylabel(f"{label}\n(dy/dx, scaled)", color=color)
    for ax in axes[-1]:
        ax.set_xlabel("input x")
    fig.suptitle("With depth, the plain net's gradient turns into noise first")
    plotting.show(fig)


def autocorrelation_by_depth(autocorrelation: dict, depths) -> None:
    """Lag-1 autocorrelation of dy/dx against depth (log axis) for plain and residual nets;
    ``autocorrelation[architecture, depth]``."""
    depths = _whole_numbers("depths", depths, minimum=1)
    keys = [(a, d) for a in _COLORS for d in depths]
    for value in _entries("autocorrelation", autocorrelation, keys, "autocorrelations"):
        check_array("autocorrelation", value, ndim=0)
    fig, ax = plotting.new_figure(width=7, height=4)
    for architecture, color in _COLORS.items():
        ax.plot(depths, [autocorrelation[architecture, d] for d in depths], "o-", color=color, label=architecture)
    ax.axhline(0, color="black", ls="--", lw=1, label="white noise")
    ax.set_xscale("log")
    ax.set_xticks(depths, [str(d) for d in depths])
    ax.set(xlabel="depth (weight layers, log scale)", ylabel="lag-1 autocorrelation of dy/dx",
           title="Plain gradients shatter first; residual ones decay more slowly")
    ax.legend()
    plotting.show(fig)
