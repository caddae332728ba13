import numpy as np
import pytest
from matplotlib.figure import Figure

from utils import plotting, slopes
from utils.pictures import _RedrawFigure


def test_slope_products_are_powers():
    np.testing.assert_allclose(slopes.slope_products(0.5, 3), [0.5, 0.25, 0.125])
    np.testing.assert_allclose(slopes.slope_products(1.05, 20)[-1], 1.05 ** 20)


def test_products_underflow_and_overflow_like_floats_without_warning():
    with np.errstate(all="raise"):
        assert slopes.slope_products(0.5, 1100)[-1] == 0.0
        assert slopes.slope_products(2.0, 1100)[-1] == np.inf
        assert np.all(slopes.slope_products(0.0, 1000) == 0.0)


def test_table_has_the_digits_notebook_02_prints():
    table = slopes.slope_table()
    rows = [line.split() for line in table.splitlines()[2:]]
    assert rows == [["1", "0.5", "1.05", "0.95"],
                    ["10", "0.00098", "1.63", "0.60"],
                    ["20", "9.5e-07", "2.65", "0.36"]]


def test_exercise_numbers():
    assert slopes.format_plain(slopes.slope_products(0.1, 10)[-1]) == "1e-10"
    assert slopes.format_residual(slopes.slope_products(1.1, 10)[-1]) == "2.59"


def test_formats():
    assert slopes.format_plain(0.0) == "0"
    assert slopes.format_plain(np.inf) == "inf"
    assert slopes.format_residual(12345.0) == "1.2e+04"
    with pytest.raises(TypeError, match="value"):
        slopes.format_plain("0.5")


def test_text_table_aligns():
    text = slopes._text_table(["a", "bb"], [["10", "2"]])
    assert text.splitlines() == [" a  bb", "--  --", "10   2"]


def test_factor_from_one_rounds_up_so_within_stays_true():
    # max(2.65, 1/0.36 = 2.78) = 2.78 -> 2.8; 1/0.5 = 2 exactly stays 2
    assert slopes._within(2.65) == "within a factor 2.7 of 1"
    assert slopes._within(0.36) == "within a factor 2.8 of 1"
    assert slopes._within(0.5) == "within a factor 2 of 1"
    assert slopes._within(1.0) == "exactly 1"
    assert slopes._within(1.05) == "within a factor 1.1 of 1"
    assert slopes._within(146.2) == "within a factor 150 of 1"
    assert slopes._within(-4.0) == "within a factor 4 of 1"


@pytest.mark.parametrize("depth, plain_slope, edit, expected", [
    (1, 1.0, 0.0, "depth 1: plain 1 (exactly 1); residual between 1.00 and 1.00 (exactly 1)."),
    (10, 0.9, 0.05, "depth 10: plain 0.35 (within a factor 2.9 of 1); residual between 0.60 and 1.63 "
                    "(within a factor 1.7 of 1)."),
    (1000, 0.5, 0.05, "depth 1000: plain 9.3e-302 (vanishing); residual between 5.3e-23 (vanishing) "
                      "and 1.5e+21 (exploding)."),
    (1000, 0.0, 1.0, "depth 1000: plain 0 (underflowed to 0: vanished); residual between 0 "
                     "(underflowed to 0: vanished) and 1.1e+301 (exploding)."),
])
def test_summary_text_says_how_far_from_one(depth, plain_slope, edit, expected):
    assert slopes.draw_slope_products(Figure(), depth=depth, plain_slope=plain_slope, edit=edit) == expected


def test_plotted_depths():
    np.testing.assert_array_equal(slopes._plotted_depths(5), [1, 2, 3, 4, 5])
    picked = slopes._plotted_depths(1000)
    assert picked[0] == 1 and picked[-1] == 1000 and len(picked) <= 100


@pytest.mark.parametrize("call, error, name", [
    (lambda: slopes.slope_products(0.5, -3), ValueError, "depth"),
    (lambda: slopes.slope_products(0.5, 2.5), TypeError, "depth"),
    (lambda: slopes.slope_products("0.5", 3), TypeError, "slope"),
    (lambda: slopes.slope_products(np.nan, 3), ValueError, "slope"),
    (lambda: slopes.slope_table(depths=(1, -1)), ValueError, "depths"),
    (lambda: slopes.slope_table(depths=()), ValueError, "depths"),
    (lambda: slopes.slope_table(depths=5), TypeError, "depths"),
    (lambda: slopes.slope_table(edit=-0.1), ValueError, "edit"),
    (lambda: slopes.draw_slope_products(Figure(), depth=0), ValueError, "depth"),
    (lambda: slopes.draw_slope_products(Figure(), plain_slope=None), TypeError, "plain_slope"),
    (lambda: slopes.draw_slope_products(Figure(), edit=np.inf), ValueError, "edit"),
])
def test_bad_input_names_the_parameter(call, error, name):
    with pytest.raises(error, match=name):
        call()


def _drawn(fig):
    ax = fig.axes[0]
    assert ax.get_legend() is None  # one legend for the figure, under the plot
    return ax, [t.get_text() for t in fig.legends[0].get_texts()]


def test_draw_default_state():
    fig = Figure(**{"figsize": (slopes.FIGURE_SIZE["width"], slopes.FIGURE_SIZE["height"])})
    text = slopes.draw_slope_products(fig)
    assert text == "depth 20: plain 9.5e-07 (vanishing); residual between 0.36 and 2.65 (within a factor 2.8 of 1)."
    ax, labels = _drawn(fig)
    assert ax.get_yscale() == "log"
    assert "After 20 layers: plain 9.5e-07, residual 0.36 to 2.65" == ax.get_title()
    assert not any("underflow" in label or "overflow" in label for label in labels)
    assert len(plotting._figure_png(fig)) > 1000


@pytest.mark.parametrize("depth, plain_slope, edit, marks", [
    (1000, 0.0, 1.0, ("underflow",)),
    (1000, 2.0, 1.0, ("overflow", "underflow")),
    (1000, 0.5, 0.05, ("underflow",)),
    (1, 0.0, 0.0, ("underflow",)),
    (1, 2.0, 1.0, ("underflow",)),
])
def test_every_extreme_setting_draws_with_clipping_labelled(depth, plain_slope, edit, marks):
    fig = Figure()
    with np.errstate(all="raise"):
        text = slopes.draw_slope_products(fig, depth=depth, plain_slope=plain_slope, edit=edit)
    ax, labels = _drawn(fig)
    assert text.startswith(f"depth {depth}:")
    for mark in marks:
        assert any(mark in label for label in labels), (mark, labels)
    for line in ax.get_lines():
        y = np.asarray(line.get_ydata(), dtype=float)
        assert np.all(np.isfinite(y)) and np.all(y > 0)  # everything drawable on the log axis
    assert len(plotting._figure_png(fig)) > 1000


def test_every_corner_of_the_widget_draws_without_warnings():
    import warnings

    for depth in (1, 2, 1000):
        for plain_slope in (0.0, 0.01, 1.0, 2.0):
            for edit in (0.0, 1.0):
                fig = Figure()
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    text = slopes.draw_slope_products(fig, depth=depth, plain_slope=plain_slope, edit=edit)
                    assert text and fig.axes[0].get_lines()
                    assert plotting._figure_png(fig)[:4] == b"\x89PNG"


def test_a_redraw_on_the_widget_figure_matches_a_fresh_figure_pixel_for_pixel():
    reused = _RedrawFigure(**slopes.FIGURE_SIZE)
    for depth, plain_slope, edit in ((1, 0.0, 0.0), (1000, 2.0, 1.0), (20, 0.5, 0.05), (1000, 0.5, 0.05),
                                     (20, 1.0, 0.0)):
        reused.start()
        slopes.draw_slope_products(reused, depth=depth, plain_slope=plain_slope, edit=edit)
        fresh = Figure(figsize=(slopes.FIGURE_SIZE["width"], slopes.FIGURE_SIZE["height"]), layout="constrained")
        slopes.draw_slope_products(fresh, depth=depth, plain_slope=plain_slope, edit=edit)
        assert plotting._figure_png(reused) == plotting._figure_png(fresh), (depth, plain_slope, edit)
    assert len(reused.axes) == 1


def test_the_panel_starts_at_its_defaults_and_redraws_when_a_slider_moves():
    panel = slopes.slope_products_plot()
    assert panel.values() == {"depth": 20, "plain_slope": 0.5, "edit": 0.05}
    assert panel.text.startswith("depth 20: plain 9.5e-07")
    panel.controls["depth"].value = 1000
    assert panel.text.startswith("depth 1000: plain 9.3e-302")
    assert slopes.slope_products_plot(depth=5, plain_slope=2.0, edit=1.0).text.startswith("depth 5: plain 32")


@pytest.mark.parametrize("keyword, value, message", [
    ("depth", 0, "depth must be at least 1"), ("depth", 1001, "depth must be at most 1000"),
    ("plain_slope", 2.5, "plain_slope must be at most 2.0"), ("edit", -0.1, "edit must be at least 0.0"),
    ("depth", 2.0, "depth must be a whole number"),
])
def test_the_panel_refuses_a_start_outside_its_sliders(keyword, value, message):
    with pytest.raises((ValueError, TypeError), match=message):
        slopes.slope_products_plot(**{keyword: value})
