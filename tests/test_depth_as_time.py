"""Tests for utils.depth_as_time: the weights, the stack as Euler's method, its convergence."""
import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from utils import depth_as_time as dat


def _inputs(batch=4, d=8, seed=0):
    return torch.randn(batch, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_smooth_weights_sample_one_curve():
    coarse, fine = dat.smooth_weights(4, 8), dat.smooth_weights(8, 8)
    assert coarse.shape == (4, 8, 8) and coarse.dtype == torch.float64
    assert torch.allclose(coarse, fine[::2])  # W(l / 4) = W(2l / 8): the same curve, sampled more finely
    steps = (fine[1:] - fine[:-1]).norm(dim=(1, 2))
    assert float(steps.max()) < 0.5 * float(fine.norm(dim=(1, 2)).min())  # neighbours nearly equal


def test_independent_weights_have_the_smooth_ones_entry_size_and_differ_between_layers():
    weights = dat.independent_weights(200, 16)
    assert abs(float(weights.std()) - 1 / 4) < 0.01  # N(0, 1/d), d = 16
    assert float((weights[1:] - weights[:-1]).norm(dim=(1, 2)).min()) > 2.0  # no two neighbours alike
    assert torch.equal(weights, dat.independent_weights(200, 16))  # seeded


def test_residual_flow_is_euler_by_hand_and_identity_without_branch():
    x, weights = _inputs(2, 3), dat.independent_weights(3, 3)
    want = x.clone()
    for weight in weights:
        want = want + 0.25 * torch.tanh(want @ weight.T)
    assert torch.allclose(dat.residual_flow(x, weights, 0.25), want, rtol=0, atol=1e-15)
    assert torch.equal(dat.residual_flow(x, weights, 0.0), x)


def test_smooth_stack_with_step_one_over_depth_converges_first_order():
    x = _inputs()
    reference = dat.residual_flow(x, dat.smooth_weights(4096, 8), 1 / 4096)
    errors = [dat.relative_distance(dat.residual_flow(x, dat.smooth_weights(L, 8), 1 / L), reference)
              for L in (8, 32, 128)]
    for coarse, fine in zip(errors, errors[1:]):
        assert 3.0 < coarse / fine < 5.0  # fourfold depth, about fourfold smaller error: first order


def test_independent_weights_one_over_depth_fade_and_one_over_sqrt_depth_do_not():
    x = _inputs(16, 16)
    fade = [dat.relative_distance(dat.residual_flow(x, dat.independent_weights(L, 16), 1 / L), x) for L in (16, 1024)]
    walk = [dat.relative_distance(dat.residual_flow(x, dat.independent_weights(L, 16), L ** -0.5), x)
            for L in (16, 1024)]
    assert 4.0 < fade[0] / fade[1] < 16.0  # like 1/sqrt(L): 8-fold over 64-fold depth
    assert 0.5 < walk[0] / walk[1] < 2.0  # about the same size at every depth


def test_relative_distance_by_hand_and_its_checks():
    b = torch.tensor([3.0, 4.0])
    assert dat.relative_distance(b + torch.tensor([0.0, 1.0]), b) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="shape"):
        dat.relative_distance(torch.ones(3), b)
    with pytest.raises(ValueError, match="non-zero"):
        dat.relative_distance(b, torch.zeros(2))


def test_flow_rejects_mismatched_inputs():
    with pytest.raises(ValueError, match="x must be"):
        dat.residual_flow(torch.ones(2, 4, dtype=torch.float64), dat.smooth_weights(2, 3), 0.5)
    with pytest.raises(ValueError, match="weights must be"):
        dat.residual_flow(torch.ones(2, 3, dtype=torch.float64), torch.ones(2, 3, 4, dtype=torch.float64), 0.5)
    with pytest.raises(ValueError, match="weights must be"):
        dat.residual_flow(torch.ones(2, 3), torch.ones(2, 3, 3), 0.5)  # float32 weights
    with pytest.raises(ValueError, match="finite"):
        dat.residual_flow(torch.full((2, 3), math.nan, dtype=torch.float64), dat.smooth_weights(2, 3), 0.5)


def test_draw_convergence_reports_the_slope():
    fig = Figure()
    text = dat.draw_convergence(fig, {"euler": [0.4, 0.1, 0.025]}, (4, 16, 64))
    assert text == "euler: slope -1.00"
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"
    with pytest.raises(ValueError, match="errors"):
        dat.draw_convergence(fig, {"euler": [0.4, -0.1, 0.025]}, (4, 16, 64))
    with pytest.raises(ValueError, match="depths"):
        dat.draw_convergence(fig, {"euler": [0.4]}, (4,))
    assert np.isfinite(fig.axes[0].get_ylim()).all()
