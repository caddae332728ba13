"""Tests for utils.logit_lens: the head's reading after the stem and after every block."""
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from utils.data import load_digits_split
from utils.lesion import single_lesion_accuracies
from utils.logit_lens import draw_lens, first_reaching, lens_logits, lens_scores
from utils.mlp import make_mlp
from utils.training import train


def _x(n=6, seed=0):
    return torch.randn(n, 64, generator=torch.Generator().manual_seed(seed))


def test_last_reading_is_the_model_output_and_the_mode_is_kept():
    model = make_mlp("residual", 8, seed=0).train()
    readings = lens_logits(model, _x())
    assert readings.shape == (4, 6, 10)  # stem + 3 blocks
    assert model.training  # restored
    model.eval()
    with torch.no_grad():
        assert torch.allclose(readings[-1], model(_x()))
        assert torch.allclose(readings[0], model.head(model.stem(_x())))


def test_lens_passes_gradients_to_the_input():
    model = make_mlp("plain", 6, seed=1).eval()
    x = _x().requires_grad_()
    lens_logits(model, x).sum().backward()
    assert x.grad is not None and float(x.grad.abs().max()) > 0


def test_trained_residual_stream_reads_early_and_plain_does_not():
    data = load_digits_split()
    scores = {}
    for architecture in ("residual", "plain"):
        model = make_mlp(architecture, 20, seed=0)
        train(model, data.x_train, data.y_train, steps=200, seed=0)
        scores[architecture] = lens_scores(model, data.x_test, data.y_test)
        assert scores[architecture]["agreement"][-1] == 1.0  # the last reading is the answer itself
        assert len(scores[architecture]["loss"]) == 10
    assert scores["residual"]["accuracy"][4] > 0.8  # halfway through, already mostly right
    assert scores["plain"]["accuracy"][4] < 0.4  # near chance until the end
    assert scores["plain"]["accuracy"][-1] > 0.8


def test_lesion_of_the_last_block_is_the_reading_one_block_earlier():
    data = load_digits_split()
    model = make_mlp("residual", 8, seed=2)
    train(model, data.x_train, data.y_train, steps=20, seed=2)
    lesion = single_lesion_accuracies(model, data.x_test, data.y_test)[-1]
    assert lesion == pytest.approx(lens_scores(model, data.x_test, data.y_test)["accuracy"][-2], abs=1e-6)  # float32 mean


def test_lens_rejects_bad_inputs():
    model = make_mlp("residual", 6, seed=0)
    with pytest.raises(ValueError, match="x must be"):
        lens_logits(model, torch.ones(3, 5))
    with pytest.raises(ValueError, match="x must be"):
        lens_logits(model, torch.ones(3, 64, dtype=torch.float64))
    with pytest.raises(TypeError, match="model must be"):
        lens_logits(torch.nn.Linear(64, 10), _x())


def test_first_reaching_reads_the_median_over_seeds():
    seeds = [[0.4, 0.8, 0.9], [0.2, 0.6, 0.95], [0.3, 0.7, 0.97]]  # medians 0.3, 0.7, 0.95
    assert first_reaching(seeds, 0.3) == 0
    assert first_reaching(seeds, 0.75) == 2  # one seed reaches it at position 1, the median does not
    assert first_reaching([0.1, 0.1, 0.9], 0.5) == 2
    assert first_reaching([0.1, 0.2], 0.5) is None
    assert first_reaching([0.1, 1.0], 1.0) == 1  # reaching includes equality
    with pytest.raises(ValueError, match="share must be above 0"):
        first_reaching([0.1, 0.9], 0)
    with pytest.raises(ValueError, match="readings must be shares between 0 and 1"):
        first_reaching([0.1, 1.5], 0.5)
    with pytest.raises(TypeError, match="readings must be shares"):
        first_reaching(["a", "b"], 0.5)


def test_draw_lens_takes_medians_over_seeds():
    fig = Figure()
    text = draw_lens(fig, {"residual": [[0.4, 0.8, 0.9], [0.2, 0.6, 0.95], [0.3, 0.7, 0.97]],
                           "plain": [0.1, 0.1, 0.9], "plain-short": [0.1, 0.2]})
    assert text == ("residual: 50% or more from position 1; plain: 50% or more from position 2; "
                    "plain-short: never 50%")
    residual_line = fig.axes[0].lines[0]
    np.testing.assert_allclose(residual_line.get_ydata(), [0.3, 0.7, 0.95])  # the medians
    with pytest.raises(ValueError, match="scores"):
        draw_lens(fig, {"residual": [0.4, 1.5]})
