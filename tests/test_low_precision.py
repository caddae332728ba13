"""Tests for utils.low_precision: half an ulp, swamping, and a stack in 16 bits."""
import pytest
import torch
from matplotlib.figure import Figure

from utils import depth_as_time as dat, low_precision as lp


def test_half_ulp_by_hand():
    assert lp.half_ulp(1.0, "bfloat16") == 2.0 ** -8  # 8 significant bits: spacing 2^-7 above 1
    assert lp.half_ulp(1.0, "float16") == 2.0 ** -11
    assert lp.half_ulp(1.0, torch.float32) == 2.0 ** -24
    assert lp.half_ulp(-3.0, "bfloat16") == 2.0 ** -7  # [2, 4): twice the spacing, sign ignored
    with pytest.raises(ValueError, match="value"):
        lp.half_ulp(1e6, "float16")  # beyond float16's largest number, 65504
    with pytest.raises(ValueError, match="dtype"):
        lp.half_ulp(1.0, "int8")


def test_a_write_below_half_an_ulp_vanishes_and_one_above_arrives():
    for name in ("bfloat16", "float16", "float32"):
        half = lp.half_ulp(1.0, name)
        assert lp.repeated_sum(1.0, 0.9 * half, 10, name) == 1.0  # swamped every time
        assert lp.repeated_sum(1.0, 1.1 * half, 1, name) == 1.0 + 2 * half  # rounded up to one ulp
    assert lp.repeated_sum(1.0, 0.001, 100, "float64") == pytest.approx(1.1, abs=1e-12)
    assert lp.repeated_sum(1.0, 0.5, 0, "bfloat16") == 1.0


def test_rounded_flow_in_float64_is_residual_flow_and_bfloat16_drifts():
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    weights = dat.smooth_weights(512)
    exact = dat.residual_flow(x, weights, 1 / 512)
    assert torch.equal(lp.rounded_flow(x, weights, 1 / 512), exact)
    bf16 = dat.relative_distance(lp.rounded_flow(x, weights, 1 / 512, stream="bfloat16", write="bfloat16"), exact)
    mixed = dat.relative_distance(lp.rounded_flow(x, weights, 1 / 512, stream="float32", write="bfloat16"), exact)
    assert bf16 > 0.05  # most writes of about 1/512 of the stream are swamped
    assert mixed < 1e-3  # 16-bit writes into a float32 sum keep the result


def test_rounded_flow_rejects_unknown_formats():
    x, weights = torch.ones(2, 3, dtype=torch.float64), dat.smooth_weights(2, 3)
    with pytest.raises(ValueError, match="stream"):
        lp.rounded_flow(x, weights, 0.5, stream="float8")
    with pytest.raises(ValueError, match="write"):
        lp.rounded_flow(x, weights, 0.5, write="half")


def test_draw_drift_names_the_worst_depth():
    fig = Figure()
    text = lp.draw_drift(fig, {"float64": [0.1, 0.01], "bfloat16": [0.1, 0.2]}, (4, 40))
    assert text == "bfloat16: 20 times the float64 error at depth 40"
    with pytest.raises(TypeError, match="errors"):
        lp.draw_drift(fig, {"float64": [0.1, 0.01]}, (4, 40))
