"""Tests for utils.looks_linear: CReLU, the looks-linear weight and the plain network."""
import pytest
import torch

from utils.looks_linear import crelu, looks_linear, make_looks_linear_mlp


def test_crelu_doubles_the_width_and_keeps_the_signal():
    x = torch.tensor([[1.5, -2.0, 0.0]])
    out = crelu(x)
    assert out.tolist() == [[1.5, 0.0, 0.0, 0.0, 2.0, 0.0]]
    assert torch.equal(out[:, :3] - out[:, 3:], x)


def test_looks_linear_weight_computes_u_x_after_crelu():
    u = torch.randn(3, 5, dtype=torch.float64)
    x = torch.randn(7, 5, dtype=torch.float64)
    assert looks_linear(u).shape == (3, 10)
    assert torch.allclose(crelu(x) @ looks_linear(u).T, x @ u.T)


def test_the_network_starts_as_an_orthogonal_linear_map():
    model = make_looks_linear_mlp(20, seed=1)
    x = torch.randn(6, 64, dtype=torch.float32)
    with torch.no_grad():
        h = start = model.stem(x)
        for layer in model.hidden:
            h = layer(crelu(h))
        assert torch.allclose(h.norm(dim=1), x.norm(dim=1), rtol=1e-4)
        assert torch.allclose(start.norm(dim=1), x.norm(dim=1), rtol=1e-4)
        doubled = model(2 * x)
        assert torch.allclose(doubled, 2 * model(x), rtol=1e-4, atol=1e-5)  # linear: f(2x) = 2 f(x)
        assert torch.allclose(model(-x), -model(x), rtol=1e-4, atol=1e-5)


def test_build_counts_weight_layers_and_uses_its_own_generator():
    model = make_looks_linear_mlp(56)
    assert sum(isinstance(m, torch.nn.Linear) for m in model.modules()) == 56
    state = torch.random.get_rng_state()
    again = make_looks_linear_mlp(56)
    assert torch.equal(state, torch.random.get_rng_state())
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="in_features"):
        make_looks_linear_mlp(6, width=8, in_features=16)
    with pytest.raises(ValueError, match="depth"):
        make_looks_linear_mlp(1)
