"""Tests for utils.hyper_connections: Sinkhorn, the mixing matrices and the stack."""
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from utils import hyper_connections as hc
from utils.gradient_flow import profile_stack


def test_sinkhorn_gives_a_doubly_stochastic_matrix():
    matrix = torch.exp(torch.randn(5, 5, generator=torch.Generator().manual_seed(3), dtype=torch.float64))
    out = hc.sinkhorn(matrix, 200)
    assert torch.allclose(out.sum(0), torch.ones(5, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(out.sum(1), torch.ones(5, dtype=torch.float64), atol=1e-9)
    assert bool((out > 0).all())
    assert not torch.equal(out, matrix)  # a new tensor, the input untouched
    assert torch.equal(matrix, torch.exp(torch.randn(5, 5, generator=torch.Generator().manual_seed(3),
                                                      dtype=torch.float64)))


def test_sinkhorn_by_hand_on_a_two_by_two_matrix():
    # rows [1, 3] and [1, 1] -> [1/4, 3/4], [1/2, 1/2]; column sums 3/4 and 5/4
    out = hc.sinkhorn(torch.tensor([[1.0, 3.0], [1.0, 1.0]], dtype=torch.float64), 1)
    want = torch.tensor([[1 / 3, 3 / 5], [2 / 3, 2 / 5]], dtype=torch.float64)
    assert torch.allclose(out, want)


def test_sinkhorn_rejects_bad_matrices():
    with pytest.raises(ValueError, match="matrix"):
        hc.sinkhorn(torch.ones(2, 3))
    with pytest.raises(ValueError, match="positive"):
        hc.sinkhorn(torch.tensor([[1.0, -1.0], [1.0, 1.0]]))


def test_constrained_products_keep_gain_one_and_unconstrained_grow():
    free = hc.composite_gain(hc.mixing_matrices(64, constrained=False))
    doubly = hc.composite_gain(hc.mixing_matrices(64, constrained=True))
    assert np.allclose(doubly, 1.0, atol=1e-3)  # Sinkhorn stops after 50 iterations
    assert free[-1] > 10 * free[0]
    same = hc.mixing_matrices(3, spread=0.0)
    assert all(torch.equal(m, torch.eye(4, dtype=torch.float64)) for m in same)
    assert np.allclose(hc.composite_gain(same), 1.0)


def test_backward_gain_is_the_largest_column_sum_of_the_product():
    first = torch.tensor([[1.0, 2.0], [0.0, 1.0]], dtype=torch.float64)  # rows sum to 3 and 1, columns to 1 and 3
    second = torch.tensor([[1.0, 0.0], [-1.0, 1.0]], dtype=torch.float64)
    product = second @ first  # [[1, 2], [-1, -1]]: rows sum to 3 and 2 in absolute value, columns to 2 and 3
    forward, backward = (hc.composite_gain([first, second], direction=d) for d in ("forward", "backward"))
    assert np.allclose(forward, [3.0, float(product.abs().sum(1).max())])
    assert np.allclose(backward, [3.0, float(product.abs().sum(0).max())])
    assert np.allclose(hc.composite_gain([first.T], direction="backward"), hc.composite_gain([first]))
    doubly = hc.mixing_matrices(16, constrained=True)
    assert np.allclose(hc.composite_gain(doubly, direction="backward"), 1.0, atol=1e-3)
    with pytest.raises(ValueError, match="direction"):
        hc.composite_gain([first], direction="sideways")


def test_one_stream_identity_mixing_is_the_residual_block():
    layer = hc.hyper_stack(1, streams=1, spread=0.0, d=8)[0]
    x = torch.randn(3, 1, 8, dtype=torch.float64)
    assert torch.allclose(layer(x)[:, 0], layer.block(x[:, 0]))


def test_column_sums_one_make_the_average_a_residual_stream():
    layer = hc.hyper_stack(1, constrained=True, d=8, seed=2)[0]
    x = torch.randn(5, 4, 8, dtype=torch.float64)
    mean = x.mean(dim=1)
    assert torch.allclose(layer(x).mean(dim=1), layer.block(mean), atol=1e-9)


def test_gradient_grows_far_more_without_the_constraint():
    x = torch.randn(4, 4, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    free = profile_stack(hc.hyper_stack(64, d=8, constrained=False), x).gain[0]
    doubly = profile_stack(hc.hyper_stack(64, d=8, constrained=True), x).gain[0]
    assert free > 3 * doubly


def test_draw_composite_gain_reports_the_last_values():
    text = hc.draw_composite_gain(Figure(), {"a": [1.0, 2.0, 4.0], "b": [1.0, 1.0, 1.0]})
    assert "a: 4 after 3 layers" in text and "b: 1 after 3 layers" in text
    with pytest.raises(TypeError, match="gains"):
        hc.draw_composite_gain(Figure(), [])
