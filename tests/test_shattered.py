import numpy as np
import pytest
import torch

from utils.mlp import make_mlp
from utils.shattered import (draw_gradient_curves, _freeze_batch_statistics, gradient_autocorrelation, input_gradient_curve,
                             lag1_autocorrelation)


def test_autocorrelation_of_a_smooth_function_is_near_one():
    assert lag1_autocorrelation(np.sin(np.linspace(0, 2 * np.pi, 256))) > 0.99


def test_autocorrelation_of_white_noise_is_near_zero_and_alternation_is_minus_one():
    noise = np.random.default_rng(0).standard_normal(10_000)
    assert abs(lag1_autocorrelation(noise)) < 0.03
    assert lag1_autocorrelation([1.0, -1.0] * 50) == pytest.approx(-0.99, abs=1e-12)  # -(n-1)/n


def test_autocorrelation_rejects_bad_input():
    with pytest.raises(ValueError, match="values"):
        lag1_autocorrelation([1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="values"):
        lag1_autocorrelation(np.ones((3, 3)))
    with pytest.raises(ValueError, match="values"):
        lag1_autocorrelation([1.0, 2.0])


def test_frozen_batch_statistics_are_those_of_the_batch():
    model = make_mlp("plain", 4, width=6, in_features=1, out_features=1, seed=0)
    x = torch.linspace(-2, 2, 32).unsqueeze(1)
    _freeze_batch_statistics(model, x)
    assert not model.training
    stem_out = torch.nn.functional.linear(x, model.stem[0].weight)
    assert torch.allclose(model.stem[1].running_mean, stem_out.mean(0), atol=1e-6)
    assert torch.allclose(model.stem[1].running_var, stem_out.var(0), atol=1e-5)


def test_input_gradient_matches_finite_differences():
    x, grad = input_gradient_curve("residual", 6, width=20, n_inputs=64, seed=0)
    model = make_mlp("residual", 6, width=20, in_features=1, out_features=1, seed=0, dtype=torch.float64)
    _freeze_batch_statistics(model, torch.linspace(-2, 2, 64, dtype=torch.float64).unsqueeze(1))
    h = 1e-6
    xs = torch.tensor(x).unsqueeze(1)
    with torch.no_grad():
        numeric = ((model(xs + h) - model(xs - h)) / (2 * h))[:, 0].numpy()
    # Skip the few inputs within h of a ReLU kink; elsewhere the two must agree.
    close = np.isclose(grad, numeric, rtol=1e-3, atol=1e-4)
    assert close.mean() > 0.95
    assert x[0] == -2.0 and x[-1] == 2.0 and len(grad) == 64


def test_deep_plain_gradients_shatter_while_shallow_ones_do_not():
    assert gradient_autocorrelation("plain", 2, seeds=[0, 1]) > 0.95
    assert abs(gradient_autocorrelation("plain", 34, seeds=[0, 1, 2])) < 0.15
    assert gradient_autocorrelation("residual", 18, seeds=[0, 1, 2]) > 0.4


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="n_inputs"):
        input_gradient_curve("plain", 4, n_inputs=2)
    with pytest.raises(ValueError, match="architecture"):
        input_gradient_curve("dense", 4)
    with pytest.raises(ValueError, match="seeds"):
        gradient_autocorrelation("plain", 4, seeds=[])


@pytest.mark.parametrize("depth", [2, 18, 200])
def test_draw_gradient_curves_draws_two_panels_at_default_and_extremes(depth):
    from matplotlib.figure import Figure

    fig = Figure()
    text = draw_gradient_curves(fig, depth=depth)
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == 2  # one panel, one line per net
    for line in fig.axes[0].lines:  # each curve scaled by its own largest |dy/dx|, around its offset
        y = line.get_ydata()
        assert np.all(np.isfinite(y)) and np.ptp(y) <= 2 + 1e-9
    assert "plain" in text and "residual" in text and "nan" not in text
    assert f"{lag1_autocorrelation(input_gradient_curve('plain', depth)[1]):.3f}" in text


def test_draw_gradient_curves_rejects_a_bad_depth():
    from matplotlib.figure import Figure

    with pytest.raises(ValueError, match="depth"):
        draw_gradient_curves(Figure(), depth=7)
    with pytest.raises(ValueError, match="depth"):
        draw_gradient_curves(Figure(), depth=1)
    with pytest.raises(ValueError, match="depth"):
        draw_gradient_curves(Figure(), depth=1000)


def test_draw_gradient_curves_caches_each_setting_and_keeps_the_figure_light():
    from matplotlib.figure import Figure

    from utils import shattered

    shattered._cached_curve.cache_clear()
    first = draw_gradient_curves(Figure(), depth=6, block_layers=1)
    misses = shattered._cached_curve.cache_info().misses
    fig = Figure()
    again = draw_gradient_curves(fig, depth=6, block_layers=1)
    assert again == first  # same numbers from the cache
    assert shattered._cached_curve.cache_info().misses == misses  # nothing recomputed
    x, grad = shattered._cached_curve("plain", 6, 1, 0)
    assert not grad.flags.writeable and not x.flags.writeable
    assert np.array_equal(grad, input_gradient_curve("plain", 6, block_layers=1, seed=0)[1])
    assert fig.get_layout_engine() is None  # fixed margins, no constrained layout
    assert len(fig.axes[0].get_yticks()) == 0 and len(fig.axes[0].get_xticks()) == 5


def test_draw_gradient_curves_rejects_bad_settings():
    from matplotlib.figure import Figure

    with pytest.raises(ValueError, match="depth"):
        draw_gradient_curves(Figure(), depth=201)
    with pytest.raises(ValueError, match="block_layers"):
        draw_gradient_curves(Figure(), depth=6, block_layers=3)
