import numpy as np
import pytest
import torch

from utils.landscape import _filter_normalised_direction, loss_surface
from utils.mlp import make_mlp


def test_direction_rows_have_the_norms_of_the_weight_rows_and_vectors_stay_put():
    model = make_mlp("residual", 6, width=5, in_features=3, out_features=2, seed=0)
    direction = _filter_normalised_direction(model, seed=1)
    for parameter, d in zip(model.parameters(), direction):
        assert d.shape == parameter.shape
        if parameter.ndim < 2:
            assert torch.count_nonzero(d) == 0
        else:
            assert torch.allclose(d.norm(dim=1), parameter.detach().norm(dim=1), rtol=1e-5)
    again = _filter_normalised_direction(model, seed=1)
    assert all(torch.equal(a, b) for a, b in zip(direction, again))
    other = _filter_normalised_direction(model, seed=2)
    assert not torch.equal(direction[0], other[0])


def test_surface_centre_is_the_models_own_loss_and_the_model_is_restored():
    model = make_mlp("plain", 6, width=8, in_features=4, out_features=3, seed=0).double()
    x = torch.randn(20, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    y = torch.arange(20) % 3
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.eval()
    a, b, losses = loss_surface(model, x, y, span=0.5, points=5)
    assert losses.shape == (5, 5) and np.allclose(a, np.linspace(-0.5, 0.5, 5)) and np.allclose(a, b)
    model.train()
    with torch.no_grad():
        centre = float(torch.nn.functional.cross_entropy(model(x), y))
    model.load_state_dict(before)
    assert losses[2, 2] == pytest.approx(centre, rel=1e-12)
    assert (losses > 0).all() and losses.max() > losses[2, 2]  # moving away from the weights changes the loss
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())


def test_surface_leaves_running_statistics_and_mode_as_they_were():
    model = make_mlp("residual", 4, width=6, in_features=3, out_features=2, seed=0).eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    loss_surface(model, torch.randn(10, 3), torch.arange(10) % 2, points=3)
    assert not model.training
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())


def test_bad_arguments_name_the_parameter():
    model = make_mlp("plain", 4, width=4, in_features=2, out_features=2, seed=0)
    x, y = torch.randn(4, 2), torch.arange(4) % 2
    with pytest.raises(TypeError, match="model"):
        loss_surface("net", x, y)
    with pytest.raises(ValueError, match="span"):
        loss_surface(model, x, y, span=0.0)
    with pytest.raises(ValueError, match="points"):
        loss_surface(model, x, y, points=2)


def test_data_of_the_wrong_shape_or_kind_is_refused_naming_it():
    model = make_mlp("plain", 4, width=4, in_features=2, out_features=2, seed=0)
    x, y = torch.randn(4, 2), torch.arange(4) % 2
    with pytest.raises(ValueError, match="x must be"):
        loss_surface(model, x[0], y)
    with pytest.raises(ValueError, match="y must be a tensor of 4 class indices"):
        loss_surface(model, x, y[:3])
    with pytest.raises(ValueError, match="y must be"):
        loss_surface(model, x, y.double())


def test_a_grid_too_slow_for_a_laptop_is_refused_before_any_work():
    model = make_mlp("residual", 56, width=64, in_features=64, seed=0)
    x, y = torch.randn(4096, 64), torch.arange(4096) % 10
    with pytest.raises(ValueError, match="points=101 would need about .* operations"):
        loss_surface(model, x, y, points=101)
