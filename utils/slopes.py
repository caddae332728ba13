"""The chain rule through depth in one dimension: a stack's slope is the product of its
layers' slopes, f'(x) for a plain layer and 1 + f'(x) for a residual block, whose "1"
(the skip path) keeps the product near 1 when the edits f'(x) are small."""
from __future__ import annotations

import numbers

import numpy as np
from matplotlib.ticker import MaxNLocator

from .plotting import (PLAIN_COLOR, RESIDUAL_COLOR, _legend_below, _log_safe, _plot_log_safe,
                       _log_ticks, _use_fixed_margins)
from .validation import check_figure, check_float, check_int, check_sequence, invalid

__all__ = ["MAX_DEPTH", "FIGURE_SIZE", "slope_products", "format_plain", "format_residual",
           "slope_table", "draw_slope_products", "slope_products_plot"]

MAX_DEPTH = 100_000
FIGURE_SIZE = {"width": 9.0, "height": 5.0}  # the widget pictures: the legend sits under the plot


def slope_products(slope, depth) -> np.ndarray:
    """``slope**k`` for k = 1..depth, the slope of a stack of k layers of slope ``slope``, in
    float64: as in a real network, tiny products underflow to 0 and huge ones overflow to inf."""
    slope = check_float("slope", slope)
    depth = check_int("depth", depth, minimum=1, maximum=MAX_DEPTH)
    with np.errstate(over="ignore", under="ignore"):
        return np.power(slope, np.arange(1, depth + 1, dtype=np.float64))


def _real(value) -> float:
    """A real number that may be 0, inf or NaN (a product that under- or overflowed)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise invalid("value", "a real number", value, error=TypeError)
    return float(value)


def format_plain(value: float) -> str:
    """Two significant digits: how the course prints a product that vanishes or explodes."""
    return f"{_real(value):.2g}"


def format_residual(value: float) -> str:
    """Two decimals for a product that stays near 1; two significant digits otherwise."""
    value = _real(value)
    return f"{value:.2f}" if 0.01 <= abs(value) < 1e4 else f"{value:.2g}"


def _text_table(header, rows) -> str:
    """``rows`` (lists of strings) under ``header``, right-aligned: plain text nbval compares exactly."""
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(line, widths)) for line in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def slope_table(depths=(1, 10, 20), *, plain_slope=0.5, edit=0.05) -> str:
    """The table of slope products at each depth in ``depths``: plain layers of slope
    ``plain_slope`` against residual blocks of slope 1 + ``edit`` and 1 - ``edit``."""
    depths = [check_int("depths", d, minimum=1, maximum=MAX_DEPTH)
              for d in check_sequence("depths", depths, what="whole numbers, e.g. (1, 10, 20)")]
    plain_slope = check_float("plain_slope", plain_slope)
    edit = check_float("edit", edit, minimum=0.0)
    header = ["layers", f"plain, slope {plain_slope:g}", f"residual, 1 + {edit:g}", f"residual, 1 - {edit:g}"]
    rows = [[str(depth), format_plain(slope_products(plain_slope, depth)[-1]),
             *(format_residual(slope_products(1 + sign * edit, depth)[-1]) for sign in (1, -1))] for depth in depths]
    return _text_table(header, rows)


def _within(value) -> str:
    """How far a finite non-zero v is from 1 as a factor, max(|v|, 1/|v|), rounded *up* to two
    significant digits so that "within a factor F of 1" stays true."""
    factor = max(abs(value), 1.0 / abs(value))
    step = 10.0 ** (int(np.floor(np.log10(factor))) - 1)
    factor = f"{np.ceil(factor / step - 1e-9) * step:g}"
    return "exactly 1" if factor == "1" else f"within a factor {factor} of 1"


def _fate(value: float) -> str:
    if value == 0:
        return "underflowed to 0: vanished"
    if not np.isfinite(value):
        return "overflowed to inf: exploded"
    if not 1e-3 <= value <= 1e3:
        return "vanishing" if value < 1e-3 else "exploding"
    return _within(value)


def _residual_summary(low: float, high: float) -> str:
    """The residual band in words: one factor for the band when both ends are near 1, else each end's fate."""
    low, high = abs(low), abs(high)
    if all(1e-3 <= value <= 1e3 for value in (low, high)):
        return (f"residual between {format_residual(low)} and {format_residual(high)} "
                f"({_within(max(low, 1.0 / low, high, 1.0 / high))})")
    return (f"residual between {format_residual(low)} ({_fate(low)}) "
            f"and {format_residual(high)} ({_fate(high)})")


def _plotted_depths(depth: int) -> np.ndarray:
    """The depths 1..``depth`` to draw: all up to 100, else 100 evenly spaced ones (a product of
    equal slopes is a straight line on a log axis: nothing is lost)."""
    return np.unique(np.round(np.linspace(1, depth, min(depth, 100))).astype(int))


def draw_slope_products(fig, depth=20, plain_slope=0.5, edit=0.05) -> str:
    """Notebook 02's widget: a stack's slope against its depth (log axis, under- and overflows
    marked), plain layers of slope ``plain_slope`` against residual blocks of slopes 1 - ``edit``
    to 1 + ``edit``. Returns a one-paragraph summary."""
    check_figure("fig", fig)
    depth = check_int("depth", depth, minimum=1, maximum=MAX_DEPTH)
    plain_slope = check_float("plain_slope", plain_slope)
    edit = check_float("edit", edit, minimum=0.0)
    layers = _plotted_depths(depth)
    plain, high, low = (slope_products(slope, depth)[layers - 1]
                        for slope in (plain_slope, 1 + edit, 1 - edit))
    ax = fig.subplots()
    _use_fixed_margins(fig, left=0.11, right=0.97, bottom=0.13, top=0.92)
    _plot_log_safe(ax, layers, plain, color=PLAIN_COLOR, label=f"plain, slope {plain_slope:g} each", lw=3)
    _plot_log_safe(ax, layers, high, color=RESIDUAL_COLOR, label=f"residual, slope 1 + {edit:g} each")
    _plot_log_safe(ax, layers, low, color=RESIDUAL_COLOR, label=f"residual, slope 1 - {edit:g} each", ls="--")
    ax.fill_between(layers, _log_safe(low)[0], _log_safe(high)[0],
                    color=RESIDUAL_COLOR, alpha=0.12, lw=0)
    ax.axhline(1.0, color="grey", lw=1, ls=":")
    _log_ticks(ax)
    ax.set(xlabel="depth (number of layers)", ylabel="|product of slopes| (log scale)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if depth == 1:
        ax.set_xlim(0.5, 1.5)
    ax.set_title(f"After {depth} layers: plain {format_plain(plain[-1])}, "
                 f"residual {format_residual(low[-1])} to {format_residual(high[-1])}",
                 y=1.0)  # a set height: matplotlib's search for a free spot is a seventh of a redraw
    _legend_below(fig)
    return (f"depth {depth}: plain {format_plain(plain[-1])} ({_fate(abs(plain[-1]))}); "
            f"{_residual_summary(low[-1], high[-1])}.")


def slope_products_plot(depth: int = 20, plain_slope: float = 0.5, edit: float = 0.05):
    """Notebook 02's live plot of ``draw_slope_products``: sliders for depth (1 to 1000 layers),
    the plain layers' slope (0 to 2) and the residual edit (0 to 1)."""
    depth = check_int("depth", depth, minimum=1, maximum=1000)
    plain_slope = check_float("plain_slope", plain_slope, minimum=0.0, maximum=2.0)
    edit = check_float("edit", edit, minimum=0.0, maximum=1.0)
    from .widgets import LivePlot, slider

    controls = {"depth": slider("depth (layers)", depth, 1, 1000),
                "plain_slope": slider("plain slope", plain_slope, 0.0, 2.0),
                "edit": slider("residual edit ±", edit, 0.0, 1.0)}
    grid = {"depth": [1, 5, 20, 50, 200, 1000], "plain_slope": [0.5, 0.9, 1.1, 2.0], "edit": [0.0, 0.01, 0.05, 0.2, 1.0]}
    return LivePlot(draw_slope_products, controls, grid=grid, **FIGURE_SIZE)
