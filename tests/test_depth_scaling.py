"""Tests for utils.depth_scaling: branch multipliers L^-alpha under Adam."""
import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from utils import depth_scaling as ds
from utils.data import load_digits_split


@pytest.fixture(scope="module")
def digits():
    data = load_digits_split()
    return data.x_train[:128], data.y_train[:128]


def test_branch_multiplier_is_L_to_the_minus_alpha():
    for alpha in (0.5, 1.0):
        model = ds._branch_scaled_mlp(18, alpha)
        assert all(b.multiplier == pytest.approx(8 ** -alpha) for b in model.blocks)


def test_train_adam_lowers_the_loss_and_is_reproducible(digits):
    x, y = digits
    first = ds._train_adam(ds._branch_scaled_mlp(6, 1.0), x, y, steps=20, lr=1e-2)
    again = ds._train_adam(ds._branch_scaled_mlp(6, 1.0), x, y, steps=20, lr=1e-2)
    assert len(first) == 20 and first == again
    assert first[-1] < first[0]


def test_first_step_change_grows_like_sqrt_L_for_half_and_stays_for_one(digits):
    x, y = digits
    half = [ds.first_step_change(d, 0.5, x, y) for d in (6, 54)]
    one = [ds.first_step_change(d, 1.0, x, y) for d in (6, 54)]
    assert half[1] / half[0] > 2.0  # sqrt(26 / 2) = 3.6 by the estimate
    assert 0.5 < one[1] / one[0] < 1.5


def test_lr_sweep_shape_and_a_far_too_large_rate(digits):
    x, y = digits
    sweep = ds.lr_sweep(x, y, depths=(6,), alphas=(1.0,), lrs=(1e-3, 10.0), steps=5, seeds=(0,))
    assert set(sweep) == {(1.0, 6)}
    values = sweep[1.0, 6]
    assert values.shape == (2,) and math.isfinite(values[0]) and not values[1] < 10 * values[0]


def test_draw_lr_sweep_names_the_diverged_runs():
    sweep = {(0.5, 6): np.array([1.0, 0.5, math.inf]), (1.0, 6): np.array([1.0, 0.2, 30.0])}
    text = ds.draw_lr_sweep(Figure(), sweep, (1e-3, 1e-2, 1e-1))
    assert text == "loss above 10 (diverged, drawn as triangles): alpha=0.5 at depth 6, lr 0.1; alpha=1 at depth 6, lr 0.1"
    calm = ds.draw_lr_sweep(Figure(), {(1.0, 6): np.array([1.0, 0.2])}, (1e-3, 1e-2))
    assert calm == "no run ended with a loss above 10"
    with pytest.raises(ValueError, match="lrs"):
        ds.draw_lr_sweep(Figure(), sweep, (1e-3, 1e-2))
