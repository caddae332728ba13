import io

import numpy as np
import pytest
from matplotlib.figure import Figure

from utils import plotting


def test_plain_and_residual_colours_are_distinct_palette_colours():
    assert plotting.PLAIN_COLOR != plotting.RESIDUAL_COLOR
    assert {plotting.PLAIN_COLOR, plotting.RESIDUAL_COLOR} <= set(plotting.PALETTE)


def test_new_figure_shapes():
    fig, ax = plotting.new_figure()
    assert isinstance(fig, Figure) and len(fig.axes) == 1 and ax is fig.axes[0]
    fig, axes = plotting.new_figure(2, 3, width=9, height=5)
    assert axes.shape == (2, 3)
    assert tuple(fig.get_size_inches()) == (9.0, 5.0)
    with pytest.raises(ValueError, match="nrows must be at least 1"):
        plotting.new_figure(0)
    with pytest.raises(TypeError, match="ncols must be a whole number"):
        plotting.new_figure(1, 1.5)


def test_figure_png_is_a_png_of_the_figure_size():
    fig, ax = plotting.new_figure(width=3, height=2)
    ax.plot([0, 1], [0, 1])
    png = plotting._figure_png(fig)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (300, 200)  # 100 dpi
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        plotting.show("not a figure")


@pytest.mark.parametrize("width, height, dpi", [(7.0, 4.0, 72), (3.3, 2.1, 72.5), (8.0, 4.0, 37)])
def test_figure_small_png_has_the_pixels_of_the_figure_png_quantised(width, height, dpi):
    from PIL import Image

    fig, ax = plotting.new_figure(width=width, height=height)
    ax.plot([0, 1, 2], [0, 1, 4], label="a curve")
    ax.set_title("A title with text")
    ax.legend()
    small = plotting._figure_small_png(fig, dpi=dpi)
    full = io.BytesIO()
    fig.savefig(full, format="png", dpi=dpi)
    expected = Image.open(full).convert("RGB").quantize(colors=32, method=Image.Quantize.FASTOCTREE,
                                                        dither=Image.Dither.NONE)
    picture = Image.open(io.BytesIO(small))
    assert picture.size == expected.size and picture.mode == "P"
    assert list(picture.convert("RGB").getdata()) == list(expected.convert("RGB").getdata())


def test_log_safe_clips_and_reports_under_and_overflow():
    clipped, under, over = plotting._log_safe([0.0, 1e-320, 0.5, -2.0, np.inf, 1e300, np.nan])
    assert clipped[0] == plotting.LOG_FLOOR and clipped[1] == plotting.LOG_FLOOR
    assert clipped[2] == 0.5 and clipped[3] == 2.0  # magnitudes
    assert clipped[4] == plotting._LOG_CEILING and clipped[5] == plotting._LOG_CEILING
    assert np.isnan(clipped[6])
    assert under.tolist() == [True, True, False, False, False, False, False]
    assert over.tolist() == [False, False, False, False, True, True, False]


@pytest.mark.filterwarnings("error")
def test_plot_log_safe_marks_clipped_points_in_the_legend():
    fig, ax = plotting.new_figure()
    depth = np.arange(1, 5)
    counts = plotting._plot_log_safe(ax, depth, [1.0, 1e-200, 0.0, np.inf], color=plotting.PLAIN_COLOR, label="plain")
    assert counts == (1, 1)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[0] == "plain" and any("underflow" in l for l in labels) and any("overflow" in l for l in labels)
    assert ax.get_yscale() == "log"
    plotting._figure_png(fig)  # drawing the clipped extremes warns about nothing


def test_render_draws_shows_and_prints(capsys, monkeypatch):
    shown = []
    monkeypatch.setattr(plotting, "show", shown.append)

    def draw(fig, depth):
        fig.subplots().plot(range(depth))
        return f"depth {depth}"

    assert plotting.render(draw, depth=3) is None
    assert capsys.readouterr().out == "depth 3\n"
    assert len(shown) == 1 and len(shown[0].axes[0].get_lines()[0].get_xdata()) == 3


def test_use_fixed_margins_replaces_constrained_layout():
    fig, ax = plotting.new_figure()
    plotting._use_fixed_margins(fig, left=0.2, right=0.7)
    assert fig.get_layout_engine() is None
    assert ax.get_position().x0 == pytest.approx(0.2) and ax.get_position().x1 == pytest.approx(0.7)


def test_log_ticks_labels_round_decades():
    fig, ax = plotting.new_figure()
    ax.plot([1, 2, 3], [1e-219, 1.0, 1e219])
    ax.set_yscale("log")
    plotting._log_ticks(ax, max_ticks=7)
    ticks = np.log10(ax.get_yticks())
    assert len(ticks) <= 7 and 0.0 in ticks
    assert np.all(np.diff(ticks) == 100)  # stride 100 decades: 1e-200, 1e-100, 1, 1e+100, 1e+200
    assert plotting._figure_png(fig)[:4] == b"\x89PNG"
    fig2, ax2 = plotting.new_figure()
    ax2.plot([1, 2], [0.3, 0.9])
    ax2.set_yscale("log")
    plotting._log_ticks(ax2)  # within a decade: round plain numbers instead
    assert _labels(ax2) == ["0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"]


def test_legend_below_puts_one_legend_under_the_axes():
    fig = Figure(figsize=(9, 5))
    left, right = fig.subplots(1, 2)
    plotting._use_fixed_margins(fig, left=0.1, right=0.97)
    left.plot([1, 2], [1, 2], label="a")
    right.plot([1, 2], [1, 2], label="a")  # repeated label: shown once
    right.plot([1, 2], [2, 1], label="b")
    right.plot([1, 2], [3, 1], label="c")
    plotting._legend_below(fig)
    assert len(fig.legends) == 1 and left.get_legend() is None
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b", "c"]
    # two rows of 11-point text plus the x labels: (0.1 + 2 * 1.45 * 11 / 72 + 0.55) / 5
    assert fig.subplotpars.bottom == pytest.approx((0.1 + 2 * 1.45 * 11 / 72 + 0.55) / 5)
    assert len(plotting._figure_png(fig)) > 1000
    legend_top = fig.legends[0].get_window_extent().y1 / fig.bbox.height
    assert legend_top < left.get_position().y0  # entirely below the axes


def test_legend_below_without_labels():
    fig = Figure()
    fig.subplots()
    plotting._legend_below(fig)
    assert not fig.legends


def test_importing_plotting_applies_the_course_style():
    import matplotlib

    assert all(matplotlib.rcParams[key] == value for key, value in plotting.HOUSE_STYLE.items())
    assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][:2] == [plotting.RESIDUAL_COLOR, plotting.PLAIN_COLOR]


def _labels(ax):
    ax.figure.canvas.draw()
    return [t.get_text() for t in ax.get_yticklabels() if t.get_text()]


def test_log_ticks_exponent_labels_use_one_format():
    fig = Figure()
    ax = fig.subplots()
    ax.plot([1, 2], [1e-3, 1e7])
    ax.set_yscale("log")
    ax.set_ylim(1e-4, 1e8)
    plotting._log_ticks(ax, max_ticks=8, exponent_labels=True)
    assert _labels(ax) == ["1e-04", "1e-02", "1e+00", "1e+02", "1e+04", "1e+06", "1e+08"]
    ax.set_ylim(1e-1, 1e197)  # hundreds of decades: a round stride, not 1e+28, 1e+56, ...
    plotting._log_ticks(ax, max_ticks=8, exponent_labels=True)
    assert _labels(ax) == ["1e+00", "1e+50", "1e+100", "1e+150"]
    ax.set_ylim(2e-3, 5e-3)  # inside one decade: its two ends are labelled
    plotting._log_ticks(ax, exponent_labels=True)
    assert _labels(ax) == ["2.0e-03", "5.0e-03"]


def test_figure_svg_is_an_svg_of_the_figure_size_with_its_text_and_font_inside():
    import base64
    import io
    import re

    from fontTools.ttLib import TTFont

    fig, ax = plotting.new_figure(width=3, height=2)
    ax.set_title("a title α − 1")
    ax.plot(range(50), ".", rasterized=True)
    svg = plotting._figure_svg(fig)
    assert svg.startswith("<?xml") and '<svg xmlns' in svg
    assert 'width="216pt" height="144pt"' in svg  # 72 points per inch
    assert ">a title α − 1</text>" in svg
    # matplotlib 3.10+ writes "font-family: 'DejaVu Sans'", 3.8 the shorthand "font: 11px 'DejaVu Sans', ..."
    assert re.search(r"font(-family)?: (\d+(\.\d+)?px )?'DejaVu Sans'", svg)
    assert svg.count("@font-face") == 1 and svg.count("<image") == 1  # the rasterized dots: one picture
    font = re.search(r"base64,([A-Za-z0-9+/=]+)\) format\(\"woff\"\)", svg).group(1)
    embedded = TTFont(io.BytesIO(base64.b64decode(font)))
    assert embedded["name"].getDebugName(1) == "DejaVu Sans"
    assert {ord(c) for c in "a title α − 1 0123456789e+-"} <= set(embedded.getBestCmap())


def test_empty_figure_has_the_size_and_constrained_layout_and_no_axes():
    fig = plotting._empty_figure(6, 4.5)
    assert tuple(fig.get_size_inches()) == (6.0, 4.5) and fig.axes == []
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    with pytest.raises(ValueError, match="height must be at most 30"):
        plotting._empty_figure(6, 31)


def test_plain_tick_labels_are_plain_in_the_middle_and_short_exponents_outside():
    for low, high, labels in ((0.5, 20, ["0.5", "1", "2", "5", "10", "20"]), (200, 3000, ["200", "500", "1000", "2000"]),
                              (1e6, 3e7, ["1e6", "2e6", "5e6", "1e7", "2e7"])):
        fig, ax = _log_axes(low, high)
        plotting._log_ticks(ax)
        assert _labels(ax) == labels


def _log_axes(low, high):
    fig, ax = plotting.new_figure()
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    return fig, ax


def test_log_ticks_on_a_narrow_axis_uses_1_2_5_then_1_to_9_then_even_steps():
    fig, ax = _log_axes(0.36, 2.1)
    plotting._log_ticks(ax)
    assert list(ax.get_yticks()) == pytest.approx([0.5, 1, 2])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0.5", "1", "2"]
    assert len(ax.yaxis.get_minor_locator()()) == 0
    fig, ax = _log_axes(0.9, 3.5)  # 1-2-5 gives two ticks only
    plotting._log_ticks(ax)
    assert list(ax.get_yticks()) == pytest.approx([0.9, 1, 2, 3])
    fig, ax = _log_axes(0.83, 1.8)  # less than a factor of two: even steps
    plotting._log_ticks(ax)
    ticks = ax.get_yticks()
    assert len(ticks) >= 3 and 0.83 <= ticks.min() and ticks.max() <= 1.8
    assert np.diff(ticks) == pytest.approx(np.full(len(ticks) - 1, ticks[1] - ticks[0]))


def test_log_ticks_on_a_narrow_axis_around_a_data_range_widens_the_limits_to_show_them():
    fig, ax = _log_axes(1, 10)
    plotting._log_ticks(ax, 0.7, 3.1)
    assert list(ax.get_yticks()) == pytest.approx([0.5, 1, 2])
    low, high = ax.get_ylim()
    assert low == pytest.approx(0.45) and high == pytest.approx(3.41)


def test_the_embedded_svg_font_is_matplotlibs_font_cut_to_the_listed_characters():
    """Rebuilds the stored subset (utils/dejavu_sans_subset.woff) with fontTools from the font
    matplotlib draws with, and checks that every listed character is there with the same shape."""
    from fontTools import subset
    from fontTools.pens.recordingPen import RecordingPen
    from fontTools.ttLib import TTFont
    from matplotlib import font_manager

    source = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"))
    wanted = [c for low, high in plotting._SVG_FONT_CHARACTERS for c in range(low, high + 1)]
    rebuilt = TTFont(source)
    options = subset.Options()
    options.hinting, options.layout_features = False, []
    options.drop_tables += ["FFTM"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=wanted)
    subsetter.subset(rebuilt)
    stored = TTFont(plotting._SVG_FONT_FILE)
    assert stored.flavor == "woff" and stored["name"].getDebugName(1) == "DejaVu Sans"
    assert set(stored.getBestCmap()) == set(rebuilt.getBestCmap())  # the same characters
    assert len(stored.getBestCmap()) > 250  # ASCII, Latin-1, Greek, ...

    def outline(font, character):
        pen = RecordingPen()
        glyphs = font.getGlyphSet()
        glyphs[font.getBestCmap()[ord(character)]].draw(pen)
        return pen.value, glyphs[font.getBestCmap()[ord(character)]].width

    for character in "Rg1e−α→≤±·…":
        assert outline(stored, character) == outline(rebuilt, character), character
