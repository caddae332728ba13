import numpy as np
import pytest
from matplotlib.figure import Figure

from utils import jacobians, numpy_block, plotting
from utils.pictures import _RedrawFigure

W1 = [[0.5, 0.0], [0.0, -0.5]]
W2 = [[0.1, 0.0], [0.2, 0.2]]


def test_worked_example_jacobian_by_hand():
    # Both ReLUs are active at x = [2, -1], so J_F = W2 W1 = [[0.05, 0], [0.1, -0.1]].
    np.testing.assert_allclose(jacobians.branch_jacobian([2.0, -1.0], W1, W2), [[0.05, 0.0], [0.1, -0.1]])
    np.testing.assert_allclose(jacobians.block_jacobian([2.0, -1.0], W1, W2), [[1.05, 0.0], [0.1, 0.9]])


def test_inactive_relu_drops_its_column():
    # At x = [-2, 1] both pre-activations are negative: F is flat, the block is the identity.
    np.testing.assert_allclose(jacobians.block_jacobian([-2.0, 1.0], W1, W2), np.eye(2))


def test_block_jacobian_matches_finite_differences():
    rng = np.random.default_rng(3)
    x, w1, w2 = rng.normal(size=6), rng.normal(size=(10, 6)), rng.normal(size=(6, 10)) * 0.3
    assert np.abs(w1 @ x).min() > 1e-3  # away from ReLU kinks
    numeric = jacobians.finite_difference_jacobian(lambda v: numpy_block.forward(v, w1, w2).y, x)
    np.testing.assert_allclose(jacobians.block_jacobian(x, w1, w2), numeric, atol=1e-8)
    np.testing.assert_allclose(jacobians.block_jacobian(x, w1, w2) - jacobians.branch_jacobian(x, w1, w2), np.eye(6))


def test_finite_differences_of_a_linear_map_is_the_matrix():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_allclose(jacobians.finite_difference_jacobian(lambda v: a @ v, np.ones(3)), a, atol=1e-8)


def test_random_layers_keep_length_on_average():
    w = jacobians.random_layer_matrices(200, 32, seed=1)
    assert w.shape == (200, 32, 32)
    assert np.mean(np.sum(w ** 2, axis=1)) == pytest.approx(1.0, rel=0.02)  # E|W e_j|^2 = 1
    np.testing.assert_array_equal(w, jacobians.random_layer_matrices(200, 32, seed=1))


def test_layer_jacobians_add_the_identity_only_for_residual():
    w = jacobians.random_layer_matrices(3, 4)
    np.testing.assert_allclose(jacobians._layer_jacobians(w, scale=0.5, residual=False), 0.5 * w)
    np.testing.assert_allclose(jacobians._layer_jacobians(w, scale=0.5, residual=True), np.eye(4) + 0.5 * w)


def test_singular_values_match_direct_svd_at_small_depth():
    w = jacobians.random_layer_matrices(8, 6, seed=2)
    for residual in (False, True):
        jac = jacobians._layer_jacobians(w, scale=0.7, residual=residual)
        largest, smallest = jacobians.product_singular_values(jac)
        product = np.eye(6)
        for k in range(8):
            product = jac[k] @ product
            sv = np.linalg.svd(product, compute_uv=False)
            assert 10 ** largest[k] == pytest.approx(sv[0], rel=1e-9)
            assert 10 ** smallest[k] == pytest.approx(sv[-1], rel=1e-6)


def test_singular_values_of_products_of_orthogonal_and_diagonal_layers():
    # diag(2, 0.5) repeated 1000 times: singular values 2^1000 and 0.5^1000, beyond float64.
    jac = np.repeat(np.diag([2.0, 0.5])[None], 1000, axis=0)
    largest, smallest = jacobians.product_singular_values(jac, depths=[1, 1000])
    np.testing.assert_allclose(largest, [np.log10(2), 1000 * np.log10(2)])
    np.testing.assert_allclose(smallest, [-np.log10(2), -1000 * np.log10(2)])
    assert jacobians._format_log10(largest[-1]) == "1.1e+301"
    assert jacobians._format_log10(smallest[-1]) == "9.3e-302"


def test_a_zero_layer_makes_the_product_zero():
    jac = jacobians._layer_jacobians(jacobians.random_layer_matrices(5, 3), scale=0.0, residual=False)
    largest, smallest = jacobians.product_singular_values(jac)
    assert np.all(largest == -np.inf) and np.all(smallest == -np.inf)
    identity = jacobians._layer_jacobians(jacobians.random_layer_matrices(5, 3), scale=0.0, residual=True)
    np.testing.assert_allclose(jacobians.product_singular_values(identity), 0.0, atol=1e-12)


def test_format_log10():
    assert jacobians._format_log10(-np.inf) == "0"
    assert jacobians._format_log10(np.log10(0.36)) == "0.36"
    assert jacobians._format_log10(-411.5) == "3.2e-412"
    assert jacobians._format_log10(2.99999999) == "1e+03"
    assert jacobians._format_log10(8.99999) == "1e+09"


def test_power_of_ten_under_and_overflows_quietly():
    with np.errstate(all="raise"):
        np.testing.assert_array_equal(jacobians._power_of_ten([-np.inf, -400.0, 0.0, 400.0]), [0.0, 0.0, 1.0, np.inf])


def test_drift_table_shows_small_edits_stay_near_one():
    text = jacobians.drift_table(depths=(50,), scales=(0.01,))
    header, _, row = text.splitlines()
    assert "1/sqrt(L)" in header and "plain, s = 1" in header
    cells = [c.strip() for c in row.split("  ") if c.strip()]
    assert cells[0] == "50" and cells[1] == "0.91 to 1.1"


@pytest.mark.parametrize("call, error, name", [
    (lambda: jacobians.block_jacobian([1.0, 2.0], W1, [[1.0, 0.0]]), ValueError, "w2"),
    (lambda: jacobians.branch_jacobian([1.0, np.nan], W1, W2), ValueError, "x"),
    (lambda: jacobians.branch_jacobian([1.0, 2.0, 3.0], W1, W2), ValueError, "w1"),
    (lambda: jacobians.finite_difference_jacobian("f", [1.0]), TypeError, "f"),
    (lambda: jacobians.finite_difference_jacobian(lambda v: v, [1.0], eps=0.0), ValueError, "eps"),
    (lambda: jacobians.random_layer_matrices(-1, 4), ValueError, "depth"),
    (lambda: jacobians.random_layer_matrices(3, 0), ValueError, "dim"),
    (lambda: jacobians.product_singular_values(np.ones((2, 3))), ValueError, "jacobians"),
    (lambda: jacobians.product_singular_values(np.ones((2, 3, 3)), depths=[3]), ValueError, "depths"),
    (lambda: jacobians.drift_table(scales=(-1.0,)), ValueError, "scales"),
    (lambda: jacobians.draw_jacobian_products(Figure(), depth=-5), ValueError, "depth"),
    (lambda: jacobians.draw_jacobian_products(Figure(), scale=np.nan), ValueError, "scale"),
])
def test_bad_input_names_the_parameter(call, error, name):
    with pytest.raises(error, match=name):
        call()


def test_draw_default_state():
    fig = Figure()
    text = jacobians.draw_jacobian_products(fig, depth=50, scale=0.1)
    assert text.startswith("depth 50, branch scale s = 0.1, d = 16")
    assert "residual 0.36 to 2.1" in text
    both, zoom = fig.axes
    assert both.get_yscale() == "log" and zoom.get_yscale() == "log"
    # The zoomed panel holds only the residual curves, and its y range hugs their 0.36 to 2.1.
    assert {line.get_color() for line in zoom.get_lines() if line.get_label()[0] != "_"} == {plotting.RESIDUAL_COLOR}
    low, high = zoom.get_ylim()
    assert 0.25 < low < 0.36 and 2.1 < high < 2.6
    assert [t.get_text() for t in zoom.get_yticklabels()] == ["0.5", "1", "2"]
    # One legend, under the plot: the axes use (almost) the full width.
    assert both.get_legend() is None and len(fig.legends) == 1
    assert both.get_position().x0 < 0.15 and zoom.get_position().x1 > 0.95
    assert len(plotting._figure_png(fig)) > 1000


def test_unit_circle_image_has_the_singular_values_as_semi_axes():
    fig, ax = plotting.new_figure()
    matrix = np.array([[1.05, 0.0], [0.1, 0.9]])  # I + J_F of the worked example
    singular = jacobians.draw_unit_circle_image(ax, matrix, points=2000)
    np.testing.assert_allclose(singular, np.linalg.svd(matrix, compute_uv=False))
    np.testing.assert_allclose(singular[0] * singular[1], abs(np.linalg.det(matrix)))  # area factor 0.945
    circle, ellipse = (np.stack(line.get_data()) for line in ax.get_lines()[:2])
    np.testing.assert_allclose(np.linalg.norm(circle, axis=0), 1.0)
    radii = np.linalg.norm(ellipse, axis=0)
    assert abs(radii.max() - singular[0]) < 1e-4 and abs(radii.min() - singular[1]) < 1e-4
    tips = [np.array(a.xy) for a in ax.texts if hasattr(a, "xyann")]
    np.testing.assert_allclose(sorted(np.linalg.norm(tip) for tip in tips), sorted(singular))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "largest singular value σ1 = 1.07" in labels and "smallest singular value σ2 = 0.89" in labels
    assert plotting._figure_png(fig)[:4] == b"\x89PNG"


@pytest.mark.parametrize("args, error, name", [
    (("axes", np.eye(2)), TypeError, "ax"),
    ((None, np.eye(3)), ValueError, "matrix"),
    ((None, [[1.0, np.nan], [0.0, 1.0]]), ValueError, "matrix"),
])
def test_unit_circle_image_bad_input(args, error, name):
    ax = plotting.new_figure()[1] if args[0] is None else args[0]
    with pytest.raises(error, match=name):
        jacobians.draw_unit_circle_image(ax, args[1])


@pytest.mark.parametrize("depth, scale, mark", [(1000, 0.0, "underflow"), (1000, 2.0, "overflow"),
                                                (1000, 1.0, "underflow"), (1, 0.0, "underflow"), (1, 2.0, None)])
def test_every_extreme_setting_draws_with_clipping_labelled(depth, scale, mark):
    fig = Figure()
    with np.errstate(all="raise"):
        text = jacobians.draw_jacobian_products(fig, depth=depth, scale=scale)
    assert text.startswith(f"depth {depth},")
    ax = fig.axes[0]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    if mark:
        assert any(mark in label for label in labels), labels
    for line in ax.get_lines():
        y = np.asarray(line.get_ydata(), dtype=float)
        assert np.all(np.isfinite(y)) and np.all(y > 0)
    assert len(plotting._figure_png(fig)) > 1000


def test_every_corner_of_the_widget_draws_without_warnings():
    import warnings

    for depth in (1, 2, 1000):
        for scale in (0.0, 0.01, 1.0, 2.0):
            fig = Figure()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                text = jacobians.draw_jacobian_products(fig, depth=depth, scale=scale)
                assert text and fig.axes[0].get_lines()
                assert plotting._figure_png(fig)[:4] == b"\x89PNG"


def test_a_redraw_on_the_widget_figure_matches_a_fresh_figure_pixel_for_pixel():
    reused = _RedrawFigure(**jacobians.FIGURE_SIZE)
    for depth, scale in ((1, 0.0), (1000, 2.0), (50, 0.1), (2, 1.0), (50, 0.1)):
        reused.start()
        jacobians.draw_jacobian_products(reused, depth=depth, scale=scale)
        fresh = Figure(figsize=(jacobians.FIGURE_SIZE["width"], jacobians.FIGURE_SIZE["height"]), layout="constrained")
        jacobians.draw_jacobian_products(fresh, depth=depth, scale=scale)
        assert plotting._figure_png(reused) == plotting._figure_png(fresh), (depth, scale)
    assert len(reused.axes) == 2


def test_the_panel_starts_at_its_defaults_and_redraws_when_a_slider_moves():
    panel = jacobians.singular_values_plot()
    assert panel.values() == {"depth": 50, "scale": 0.1}
    first = panel.text
    panel.controls["depth"].value = 200
    assert panel.text != first and "200" in panel.text
    assert jacobians.singular_values_plot(depth=5, scale=2.0).values() == {"depth": 5, "scale": 2.0}


@pytest.mark.parametrize("keyword, value, message", [
    ("depth", 0, "depth must be at least 1"), ("depth", 1001, "depth must be at most 1000"),
    ("scale", 2.5, "scale must be at most 2.0"), ("scale", -0.1, "scale must be at least 0.0"),
])
def test_the_panel_refuses_a_start_outside_its_sliders(keyword, value, message):
    with pytest.raises(ValueError, match=message):
        jacobians.singular_values_plot(**{keyword: value})
