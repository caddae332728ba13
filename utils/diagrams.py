"""Pictures of the residual idea drawn with matplotlib, versioned as code in the course's style:
the block diagram, the 2-D arrows of x, F(x) and y = x + F(x), and a transformer block."""
from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from .plotting import PALETTE, RESIDUAL_COLOR
from .validation import check_array, check_axes, check_choice

__all__ = ["BRANCH_COLOR", "draw_residual_block", "draw_block_arrows", "draw_transformer_block"]

BRANCH_COLOR = PALETTE[2]  # green: the residual branch F and its output


def _arrow(ax, start, end, color):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=16, color=color,
                                 lw=2, shrinkA=0, shrinkB=0))


def draw_residual_block(ax) -> Axes:
    """Draw the residual block diagram on ``ax`` and return it: x goes through the branch F
    (W₁, ReLU, W₂) and, along the skip path, around it; both reach the sum, so x arrives twice."""
    check_axes("ax", ax)
    ax.set_axis_off()
    branch = ("W₁", "ReLU", "W₂")
    box_w, x0 = 1.3, 1.2  # x0: where the first box starts
    xs = [x0 + i * (box_w + 0.5) for i in range(len(branch))]
    sum_x = xs[-1] + box_w + 0.9
    mid_y, skip_y = 0.0, 1.35
    ax.text(0.0, mid_y, "x", ha="center", va="center", fontsize=15, fontweight="bold")
    _arrow(ax, (0.25, mid_y), (x0, mid_y), "black")
    for i, (left, label) in enumerate(zip(xs, branch)):
        ax.add_patch(FancyBboxPatch((left, mid_y - 0.35), box_w, 0.7, boxstyle="round,pad=0.05",
                                    fc="white", ec=BRANCH_COLOR, lw=2))
        ax.text(left + box_w / 2, mid_y, label, ha="center", va="center", fontsize=12)
        if i + 1 < len(branch):
            _arrow(ax, (left + box_w + 0.05, mid_y), (xs[i + 1] - 0.05, mid_y), BRANCH_COLOR)
    # The bracket naming the branch.
    ax.annotate("", xy=(xs[0] - 0.05, mid_y - 0.6), xytext=(xs[-1] + box_w + 0.05, mid_y - 0.6),
                arrowprops=dict(arrowstyle="-", color=BRANCH_COLOR, lw=1.5))
    ax.text((xs[0] + xs[-1] + box_w) / 2, mid_y - 0.85, "residual branch F", color=BRANCH_COLOR,
            ha="center", va="center", fontsize=11)
    _arrow(ax, (xs[-1] + box_w + 0.05, mid_y), (sum_x - 0.3, mid_y), BRANCH_COLOR)
    ax.text((xs[-1] + box_w + sum_x) / 2, mid_y + 0.2, "F(x)", color=BRANCH_COLOR, ha="center", fontsize=11)
    ax.add_patch(Circle((sum_x, mid_y), 0.28, fc="white", ec="black", lw=2))
    ax.text(sum_x, mid_y, "+", ha="center", va="center", fontsize=16, fontweight="bold")
    # The skip path: up from x, across, and down into the sum.
    ax.plot([0.6, 0.6, sum_x, sum_x], [mid_y, skip_y, skip_y, mid_y + 0.6], color=RESIDUAL_COLOR, lw=2)
    _arrow(ax, (sum_x, mid_y + 0.6), (sum_x, mid_y + 0.28), RESIDUAL_COLOR)
    ax.text((0.6 + sum_x) / 2, skip_y + 0.2, "skip path (shortcut): carries x unchanged", color=RESIDUAL_COLOR,
            ha="center", va="bottom", fontsize=11)
    _arrow(ax, (sum_x + 0.28, mid_y), (sum_x + 0.7, mid_y), "black")
    # The label starts a little after the arrowhead, so the head stays visible.
    ax.text(sum_x + 0.88, mid_y, "y = x + F(x)", ha="left", va="center", fontsize=13, fontweight="bold")
    ax.set(xlim=(-0.3, sum_x + 3.15), ylim=(-1.15, skip_y + 0.7), aspect="equal",
           title="A residual block: y = x + F(x)")
    return ax


def draw_block_arrows(ax, x, branch) -> Axes:
    """Draw x, F(x) and y = x + F(x) as 2-D arrows on ``ax``: x from the origin, F(x) starting
    at the tip of x, y from the origin to where F(x) ends."""
    x = check_array("x", x, shape=(2,))
    branch = check_array("branch", branch, shape=(2,))
    check_axes("ax", ax)
    y = x + branch
    for start, vector, color, label in (((0, 0), x, "black", f"x = {_vec(x)}"),
                                         (tuple(x), branch, BRANCH_COLOR, f"F(x) = {_vec(branch)}"),
                                         ((0, 0), y, RESIDUAL_COLOR, f"y = x + F(x) = {_vec(y)}")):
        ax.annotate("", xy=(start[0] + vector[0], start[1] + vector[1]), xytext=start,
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=2.5, mutation_scale=18,
                                    shrinkA=0, shrinkB=0, alpha=0.9))
        ax.plot([], [], color=color, lw=2.5, label=label)  # legend entry
    points = np.array([[0.0, 0.0], x, y])
    low, high = points.min(axis=0), points.max(axis=0)
    pad = 0.15 * max(float((high - low).max()), 1e-9)
    ax.set(xlim=(low[0] - pad, high[0] + pad), ylim=(low[1] - pad, high[1] + pad), aspect="equal",
           xlabel="first entry", ylabel="second entry", title="The block edits x; it does not replace it")
    ax.axhline(0, color="grey", lw=0.8)
    ax.axvline(0, color="grey", lw=0.8)
    ax.legend(loc="best")
    return ax


def _vec(v) -> str:
    return "[" + ", ".join(f"{value:g}" for value in np.round(v, 4)) + "]"


def draw_transformer_block(ax, *, norm: str = "pre") -> Axes:
    """Draw a transformer block on ``ax`` and return it: the stream runs straight up, attention
    and the feed-forward network read from it and add back; a LayerNorm starts each branch
    (``norm="pre"``) or follows each sum (``"post"``)."""
    check_choice("norm", norm, ("pre", "post"))
    check_axes("ax", ax)
    ax.set_axis_off()
    box_w, box_h, branch_x = 3.2, 0.7, 2.5

    def box(cx, cy, label, color):
        ax.add_patch(FancyBboxPatch((cx - box_w / 2, cy - box_h / 2), box_w, box_h, boxstyle="round,pad=0.05",
                                    fc="white", ec=color, lw=2))
        ax.text(cx, cy, label, ha="center", va="center", fontsize=10)

    y = 0.0
    ax.text(0, y - 0.35, "stream in: x", ha="center", va="top", fontsize=12, fontweight="bold")
    for name in ("self-attention", "feed-forward\nd→4d, GELU, 4d→d"):
        split, top = y + 0.5, y + 4.0
        ax.plot([0, branch_x], [split, split], color=BRANCH_COLOR, lw=2)
        labels = ["LayerNorm", name] if norm == "pre" else [name]
        heights = [split + 1.0 + 1.1 * i for i in range(len(labels))]
        _arrow(ax, (branch_x, split), (branch_x, heights[0] - box_h / 2 - 0.05), BRANCH_COLOR)
        for i, (cy, label) in enumerate(zip(heights, labels)):
            box(branch_x, cy, label, BRANCH_COLOR)
            if i + 1 < len(labels):
                _arrow(ax, (branch_x, cy + box_h / 2 + 0.05), (branch_x, heights[i + 1] - box_h / 2 - 0.05),
                       BRANCH_COLOR)
        sum_y = top - 0.4
        ax.plot([branch_x, branch_x], [heights[-1] + box_h / 2 + 0.05, sum_y], color=BRANCH_COLOR, lw=2)
        _arrow(ax, (branch_x, sum_y), (0.28, sum_y), BRANCH_COLOR)
        ax.text(branch_x / 2 + 0.1, sum_y + 0.12, "write", color=BRANCH_COLOR, ha="center", va="bottom",
                fontsize=10)
        # The skip path: the stream itself, carried unchanged up to the sum.
        _arrow(ax, (0, y), (0, sum_y - 0.28), RESIDUAL_COLOR)
        ax.add_patch(Circle((0, sum_y), 0.28, fc="white", ec="black", lw=2, zorder=3))
        ax.text(0, sum_y, "+", ha="center", va="center", fontsize=15, fontweight="bold", zorder=4)
        y = sum_y + 0.28
        if norm == "post":
            box(0, y + 0.75, "LayerNorm", RESIDUAL_COLOR)
            _arrow(ax, (0, y), (0, y + 0.75 - box_h / 2 - 0.05), RESIDUAL_COLOR)
            y += 0.75 + box_h / 2 + 0.05
    _arrow(ax, (0, y), (0, y + 0.6), RESIDUAL_COLOR)
    ax.text(0, y + 0.7, "stream out", ha="center", va="bottom", fontsize=12, fontweight="bold")
    ax.text(-box_w / 2 - 0.15, y / 2, "residual stream (skip path)", color=RESIDUAL_COLOR, rotation=90,
            ha="right", va="center", fontsize=11)
    ax.set(xlim=(-box_w / 2 - 0.8, branch_x + box_w / 2 + 0.3), ylim=(-1.0, y + 1.3),
           aspect="equal", title="Pre-LN: LayerNorm inside each branch" if norm == "pre"
           else "Post-LN: LayerNorm on the stream")
    return ax
