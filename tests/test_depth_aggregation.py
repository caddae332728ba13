"""Depth-wise averaging on notebook 10's stream probe: each read is the mean of what came
before (so never larger than its largest part), and under pre-LN the average computes what the
sum computes, up to LayerNorm's epsilon, with the same writes and the same share of the last one."""
import pytest
import torch

from utils import transformer
from utils.depth_aggregation import depth_average_stream


def _model_and_input(depth=6, seed=0):
    model = transformer.TinyTransformer(depth, d=16, heads=2, seed=seed).double()
    x = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return model, x


def test_the_first_read_is_the_input_and_every_read_is_a_mean():
    model, x = _model_and_input()
    averaged = depth_average_stream(model, x)
    rms = float(x.pow(2).mean().sqrt())
    assert averaged["stream"][0] == pytest.approx(rms)
    assert len(averaged["stream"]) == len(averaged["write"]) == 12
    for n, read in enumerate(averaged["stream"]):  # the mean of n + 1 outputs is no larger than the largest
        assert read <= max([rms] + averaged["write"][:n]) + 1e-12


def test_under_pre_ln_the_average_computes_what_the_sum_computes():
    model, x = _model_and_input(depth=8, seed=1)
    summed, averaged = transformer.residual_stream(model, x), depth_average_stream(model, x)
    assert averaged["write"] == pytest.approx(summed["write"], rel=1e-3)  # LayerNorm undoes the 1/count
    assert averaged["last_share"] == pytest.approx(summed["write"][-1] / summed["final"], rel=1e-3)
    assert torch.allclose(averaged["output"], model(x), atol=5e-3)  # epsilon weighs more on small reads
    assert averaged["final"] < summed["final"] / 10  # the growth is gone from the numbers: 17 outputs averaged
    assert averaged["final"] == pytest.approx(summed["final"] / 17, rel=1e-3)


def test_only_pre_ln_models_and_streams_of_the_models_width():
    with pytest.raises(ValueError, match="pre-LN"):
        depth_average_stream(transformer.TinyTransformer(2, d=8, heads=2, norm="post"), torch.zeros(1, 2, 8))
    with pytest.raises(ValueError, match="x"):
        depth_average_stream(transformer.TinyTransformer(2, d=8, heads=2), torch.zeros(1, 2, 7))
