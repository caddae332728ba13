"""The course's one figure style: colour-blind-safe colours (plain and residual always the
same two), opaque backgrounds, honest log axes when values under- or overflow. Figures are
plain ``Figure`` objects (no pyplot state), shown as PNG; widgets redraw them as SVG."""
from __future__ import annotations

import base64
import functools
import io
import threading
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .validation import check_callable, check_figure, check_float, check_int

__all__ = ["DRAWING", "PLAIN_COLOR", "RESIDUAL_COLOR", "PALETTE", "HOUSE_STYLE", "LOG_FLOOR", "new_figure", "show",
           "render"]

# matplotlib is not thread-safe (shared fonts, rcParams), and widgets draw pictures ahead in a
# background thread (utils/pictures.py): every rendering, in any thread, holds this lock.
DRAWING = threading.RLock()

PLAIN_COLOR = "#D55E00"  # vermillion: every plain (no skip path) curve in the course
RESIDUAL_COLOR = "#0072B2"  # blue: every residual curve in the course
# Okabe-Ito palette (Okabe & Ito 2008), safe for the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")

# Where a log axis stops. float64 reaches about 1e-308 and 1e308; we clip well inside,
# because matplotlib pads a log axis by 5% of its decades and would itself overflow.
LOG_FLOOR = 1e-200
_LOG_CEILING = 1e200

HOUSE_STYLE = {
    "figure.facecolor": "white", "axes.facecolor": "white", "savefig.facecolor": "white",
    "figure.dpi": 100, "savefig.dpi": 100,
    "font.size": 11, "axes.titlesize": 12, "axes.labelsize": 11, "legend.fontsize": 10,
    "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
    "axes.prop_cycle": matplotlib.cycler(color=list(PALETTE)), "lines.linewidth": 2.0,
    "svg.fonttype": "none",  # widget SVGs carry text as text, in the font _figure_svg embeds
}
matplotlib.rcParams.update(HOUSE_STYLE)  # every later figure in the course style


def _empty_figure(width: float = 7.0, height: float = 4.0) -> Figure:
    """A figure outside pyplot (nothing leaks between redraws), constrained layout, no axes."""
    width = check_float("width", width, minimum=1, maximum=30)
    height = check_float("height", height, minimum=1, maximum=30)
    return Figure(figsize=(width, height), layout="constrained")


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 7.0, height: float = 4.0):
    """``(fig, axes)``: a figure of ``nrows x ncols`` axes (one Axes when both are 1)."""
    nrows = check_int("nrows", nrows, minimum=1, maximum=6)
    ncols = check_int("ncols", ncols, minimum=1, maximum=6)
    fig = _empty_figure(width, height)
    return fig, fig.subplots(nrows, ncols)


def _use_fixed_margins(fig: Figure, *, left: float = 0.1, right: float = 0.97, bottom: float = 0.13,
                       top: float = 0.9) -> None:
    """Switch ``fig`` to fixed margins (fractions of the figure): a widget's redraw then takes
    half the time, since constrained layout measures every label once more."""
    fig.set_layout_engine(None)  # no engine at all: savefig then skips its layout dry run
    fig.subplots_adjust(left=left, right=right, bottom=bottom, top=top)


def _legend_below(fig: Figure) -> None:
    """One legend for all of ``fig``'s fixed-margin axes (each label once) in a band under the
    plot: the data keeps the width and no curve is covered at any widget setting. Two columns
    of 11-point text: the course's smallest figure text, readable when projected."""
    entries = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if not entries:
        return
    rows = -(-len(entries) // 2)
    band = 0.1 + rows * 1.45 * 11 / 72 + 0.55  # inches: a text line and spacing per row, x label
    fig.subplots_adjust(bottom=min(0.8, band / fig.get_figheight()))
    fig.legend(list(entries.values()), list(entries), loc="lower left", bbox_to_anchor=(0.02, 0.0),
               ncols=2, fontsize=11, frameon=False, borderaxespad=0.2)


def _log_ticks(ax, low: float | None = None, high: float | None = None, *, max_ticks: int = 7,
               exponent_labels: bool = False) -> None:
    """The course's one way to label a log y axis, after its limits are final: plain text, no
    minor ticks (a fifth faster than math text). Two decades or more: decades only, at most
    ``max_ticks``; fewer: 1-2-5 steps, else 1-9, else even steps. ``exponent_labels`` labels
    each decade 1e+NN. With the data's ``low`` and ``high``, plain ticks may sit up to 1.5x
    outside it and the limits widen to show them."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogFormatter, MaxNLocator, NullLocator

    widen = low is not None
    ax.yaxis.set_minor_locator(NullLocator())
    lowest, highest = (low / 1.5, high * 1.5) if widen else sorted(ax.get_ylim())
    bottom, top = float(np.log10(lowest)), float(np.log10(highest))
    first, last = int(np.ceil(bottom)), int(np.floor(top))
    if exponent_labels and last < first:  # less than one decade in view: label its ends
        ax.yaxis.set_major_locator(FixedLocator([10 ** bottom, 10 ** top]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:.1e}"))
    elif exponent_labels or last - first >= 2:
        stride = next(s * 10 ** p for p in range(4) for s in (1, 2, 5) if (last - first) / (s * 10 ** p) < max_ticks)
        exponents = np.arange(int(np.ceil(first / stride)) * stride, last + 1, stride)
        ax.yaxis.set_major_locator(FixedLocator(10.0 ** exponents))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:.0e}" if value > 0 else "")
                                     if exponent_labels else LogFormatter(labelOnlyBase=False))
    else:
        exponents = range(int(np.floor(bottom)), int(np.ceil(top)) + 1)
        for steps in ((1, 2, 5), range(1, 10)):
            ticks = [m * 10.0 ** e for e in exponents for m in steps if lowest <= m * 10.0 ** e <= highest]
            if len(ticks) >= 3:
                break
        else:
            ticks = [t for t in MaxNLocator(nbins=5).tick_values(lowest, highest) if lowest <= t <= highest]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_formatter(FuncFormatter(_short_number))
        if widen and ticks:
            ax.set_ylim(min(low, ticks[0]) * 0.9, max(high, ticks[-1]) * 1.1)  # every tick in view


def _short_number(value: float, _position=None) -> str:
    """Tick label in plain text: 0.5, 2, 1.25, and 1e8 or 1e-6 outside 0.001-10000."""
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        return f"{value:g}"
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _figure_png(fig: Figure) -> bytes:
    """Render ``fig`` to PNG bytes (what the notebook stores and the browser shows)."""
    buffer = io.BytesIO()
    with DRAWING:
        fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _figure_small_png(fig: Figure, *, dpi: float = 72) -> bytes:
    """Render ``fig`` to a small PNG (``dpi``, a palette of 32 colours): a quarter of the bytes
    and still sharp, for pages of hundreds of pictures. Same figure, same bytes."""
    from PIL import Image

    # Raw pixels, not a PNG: the full-colour PNG was only decoded again (a tenth of the time).
    buffer = io.BytesIO()
    with DRAWING:
        fig.savefig(buffer, format="rgba", dpi=dpi)
    size = (int(fig.get_figwidth() * dpi), int(fig.get_figheight() * dpi))  # as the Agg canvas rounds
    picture = Image.frombuffer("RGBA", size, buffer.getbuffer(), "raw", "RGBA", 0, 1).convert("RGB")
    picture = picture.quantize(colors=32, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    small = io.BytesIO()
    picture.save(small, format="png", optimize=True)
    return small.getvalue()


_SVG_RASTER_DPI = 100  # artists drawn with rasterized=True: one dot per pixel as shown
# matplotlib's font (DejaVu Sans) cut to the characters listed, a 15 kB WOFF file; others show in
# the browser's next font. tests/test_plotting.py checks it with fontTools (16 MB, not loaded here).
_SVG_FONT_FILE = Path(__file__).with_name("dejavu_sans_subset.woff")
_SVG_FONT_CHARACTERS = ((0x20, 0x7E), (0xA0, 0xFF), (0x391, 0x3C9), (0x2010, 0x2027), (0x2190, 0x2194),
                       (0x2212, 0x2212), (0x221A, 0x221E), (0x2248, 0x2248), (0x2260, 0x2265))


@functools.cache
def _svg_font_style() -> str:
    """A CSS rule that makes the font travel inside each SVG (read once per kernel)."""
    data = base64.b64encode(_SVG_FONT_FILE.read_bytes()).decode("ascii")
    return (f'<style type="text/css">@font-face {{font-family: "DejaVu Sans"; '
            f'src: url(data:font/woff;base64,{data}) format("woff");}}</style>')


def _figure_svg(fig: Figure) -> str:
    """Render ``fig`` as SVG text, what a widget sends on each move: sharp on any screen, text
    kept as text in the embedded font (the PNGs' letters in any browser; faster than paths)."""
    buffer = io.StringIO()
    with DRAWING, matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buffer, format="svg", dpi=_SVG_RASTER_DPI)
    return buffer.getvalue().replace("<defs>", "<defs>" + _svg_font_style(), 1)


def show(fig: Figure) -> None:
    """Display ``fig`` as a PNG in the notebook (works without pyplot's inline backend)."""
    from IPython.display import Image, display

    display(Image(data=_figure_png(check_figure("fig", fig)), format="png"))


def _log_safe(values):
    """``(clipped, underflow, overflow)``: magnitudes clipped into [LOG_FLOOR, _LOG_CEILING]
    (zeros and inf too; NaN stays) and masks of the points moved, so a plot can mark them."""
    array = np.abs(np.asarray(values, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        underflow = array < LOG_FLOOR
        overflow = array > _LOG_CEILING  # inf counts as overflow
    clipped = np.where(underflow, LOG_FLOOR, np.where(overflow, _LOG_CEILING, array))
    return clipped, underflow, overflow


def _plot_log_safe(ax, x, values, *, color: str, label: str, **line_kwargs) -> tuple[int, int]:
    """Draw ``|values|`` against ``x`` on a log y axis, an open triangle down (up) where a value
    under- (over)flowed; return how many did, so a caption can say so."""
    clipped, underflow, overflow = _log_safe(values)
    x = np.asarray(x)
    ax.plot(x, clipped, color=color, label=label, **line_kwargs)
    for mask, marker, text in ((underflow, "v", f"below {LOG_FLOOR:.0e} or 0 (underflow)"),
                               (overflow, "^", f"above {_LOG_CEILING:.0e} or inf (overflow)")):
        if mask.any():
            ax.plot(x[mask], clipped[mask], marker, color=color, mfc="none", ms=7,
                    label=f"{label}: {text}, clipped")
    ax.set_yscale("log")
    return int(underflow.sum()), int(overflow.sum())


def render(draw, *, width: float = 7.0, height: float = 4.0, **params) -> None:
    """Show ``draw(fig, **params)``'s picture and print its text: a widget's default state,
    drawn without a kernel widget. Returns None, so a cell ending in it stores nothing more."""
    check_callable("draw", draw, what="a function draw(fig, **params) -> text")
    fig = _empty_figure(width, height)
    with DRAWING:
        text = draw(fig, **params)
        show(fig)
    if text:
        print(text)
