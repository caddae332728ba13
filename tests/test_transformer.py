"""Tests for utils.transformer: the block, its residual stream, and the pre/post-LN gradient."""
import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from utils import blocks, transformer


def _x(batch=2, tokens=5, d=16, seed=0):
    return torch.randn(batch, tokens, d, generator=torch.Generator().manual_seed(seed))


def test_the_ffn_sublayer_is_the_course_residual_block():
    block = transformer.TransformerBlock(16, 4, norm="pre")
    assert isinstance(block.ffn, blocks.LayerNormResidualBlock)
    assert block.ffn.fc1.out_features == 64 and block.ffn.fc2.in_features == 64
    assert block(_x()).shape == (2, 5, 16)


def test_attention_mixes_tokens_and_is_permutation_equivariant():
    attention = transformer.SelfAttention(16, 4)
    x = _x()
    permutation = torch.tensor([3, 0, 4, 1, 2])
    torch.testing.assert_close(attention(x)[:, permutation], attention(x[:, permutation]))
    changed = x.clone()
    changed[:, 0] += 1.0
    assert not torch.allclose(attention(changed)[:, 1], attention(x)[:, 1])  # token 1 sees token 0


def test_attention_matches_torch_reference():
    torch.manual_seed(0)
    attention = transformer.SelfAttention(16, 4)
    reference = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    with torch.no_grad():
        reference.in_proj_weight.copy_(attention.qkv.weight)
        reference.in_proj_bias.copy_(attention.qkv.bias)
        reference.out_proj.weight.copy_(attention.proj.weight)
        reference.out_proj.bias.copy_(attention.proj.bias)
    x = _x()
    torch.testing.assert_close(attention(x), reference(x, x, x, need_weights=False)[0], atol=1e-5, rtol=1e-5)


def test_pre_ln_stream_is_input_plus_the_writes():
    model = transformer.TinyTransformer(3, d=16, heads=2, norm="pre", seed=1)
    x = _x()
    stream = transformer.residual_stream(model, x)
    assert stream["sublayer"] == ["attention 1", "FFN 1", "attention 2", "FFN 2", "attention 3", "FFN 3"]
    # Rebuild the stream by hand: each sublayer adds exactly its write.
    h = x
    for block in model.blocks:
        for sublayer, write in ((block.attention, block.attention.write),
                                (block.ffn, lambda t: block.ffn.branch(block.ffn.norm(t)))):
            torch.testing.assert_close(sublayer(h), h + write(h))
            h = sublayer(h)
    assert stream["final"] == pytest.approx(float(h.detach().pow(2).mean().sqrt()), rel=1e-5)
    assert stream["stream"][0] == pytest.approx(float(x.pow(2).mean().sqrt()), rel=1e-6)
    np.testing.assert_allclose(stream["ratio"], np.array(stream["write"]) / np.array(stream["stream"]))


def test_post_ln_stream_is_normalised_after_every_sublayer():
    model = transformer.TinyTransformer(4, d=16, heads=4, norm="post")
    stream = transformer.residual_stream(model, 3 * _x())
    assert stream["stream"][0] == pytest.approx(3.0, rel=0.3)
    np.testing.assert_allclose(stream["stream"][1:] + [stream["final"]], 1.0, rtol=1e-3)


def test_pre_ln_stream_variance_grows_linearly():
    model = transformer.TinyTransformer(24, d=32, heads=4, norm="pre")
    stream = transformer.residual_stream(model, _x(4, 8, 32))
    slope, r_squared = transformer.stream_growth(stream)
    assert slope > 0.1 and r_squared > 0.95
    assert stream["final"] ** 2 > 5 * stream["stream"][0] ** 2


def test_stream_growth_of_an_exact_line():
    stream = {"stream": list(np.sqrt([1.0, 2.0, 3.0, 4.0])), "final": math.sqrt(5.0)}
    slope, r_squared = transformer.stream_growth(stream)
    assert slope == pytest.approx(1.0) and r_squared == pytest.approx(1.0)


def test_last_block_gradient_flat_for_post_and_shrinking_for_pre():
    post = [transformer.last_block_gradient(L, "post", d=32, samples=8) for L in (2, 32)]
    pre = [transformer.last_block_gradient(L, "pre", d=32, samples=8) for L in (2, 32)]
    assert 0.7 < post[1] / post[0] < 1.4
    assert pre[1] / pre[0] < 0.5  # 1/sqrt(16) = 0.25 asymptotically


def _per_sequence_gradient(depth, norm, *, tokens, samples, seed, dtype):
    """last_block_gradient done the slow way: one backward pass per sequence."""
    model = transformer.TinyTransformer(depth, d=16, heads=2, norm=norm, seed=seed).to(dtype)
    generator = torch.Generator().manual_seed(seed + 1_000)
    x = torch.randn(samples, tokens, 16, generator=generator).to(dtype)
    labels = torch.randint(16, (samples,), generator=generator)
    norms = []
    for i in range(samples):
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(x[i:i + 1])[:, -1], labels[i:i + 1]).backward()
        norms.append(float(model.blocks[-1].ffn.fc2.weight.grad.norm()))
    return float(np.mean(norms))


def test_last_block_gradient_equals_per_sequence_backward():
    slow = _per_sequence_gradient(3, "pre", tokens=6, samples=4, seed=4, dtype=torch.float32)
    value = transformer.last_block_gradient(3, "pre", d=16, heads=2, tokens=6, samples=4, seed=4)
    assert value == pytest.approx(slow, rel=1e-5)


def test_tiny_transformer_is_reproducible_and_leaves_global_seed_alone():
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = transformer.TinyTransformer(2, d=16, heads=2, seed=7)
    after = torch.rand(1)
    b = transformer.TinyTransformer(2, d=16, heads=2, seed=7)
    assert torch.equal(before, after)
    assert torch.equal(a.blocks[1].ffn.fc2.weight, b.blocks[1].ffn.fc2.weight)
    std = float(a.blocks[0].ffn.fc1.weight.detach().std())
    assert std == pytest.approx(math.sqrt(2 / (16 + 64)), rel=0.1)  # Xavier-normal


def test_draw_functions():
    model = transformer.TinyTransformer(2, d=16, heads=2)
    stream = transformer.residual_stream(model, _x())
    fig = Figure()
    text = transformer.draw_stream(fig, {"pre-LN": stream})
    assert text.startswith("pre-LN: stream RMS")
    assert fig.get_suptitle().startswith("pre-LN: stream RMS 1.0 ->")
    fig = Figure()
    transformer.draw_stream(fig, {"pre-LN": stream}, title="the stream grows")
    assert fig.get_suptitle() == "the stream grows"
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels and all("$" not in label and "e" not in label for label in labels), labels
    with pytest.raises(TypeError, match="title"):
        transformer.draw_stream(Figure(), {"pre-LN": stream}, title=3)
    fig = Figure()
    text = transformer.draw_gradient_vs_depth(fig, [3, 12, 48], [5.0, 5.0, 5.0], [4.0, 2.0, 1.0])
    assert "post-LN 5.00 -> 5.00 (x1.00)" in text and "predicts x0.25" in text and "at most 0% off" in text
    assert len(fig.axes[0].lines) == 3
    # 1/sqrt(L) through (3, 4.0) predicts 2.0 at 12 and 1.0 at 48: pre-LN follows it exactly
    assert fig.axes[0].get_title().endswith("within 0% of 1/sqrt(L)")
    fig = Figure()
    transformer.draw_gradient_vs_depth(fig, [3, 12, 48], [5.0, 5.0, 5.0], [4.0, 2.4, 1.0])  # 20% above at 12
    assert fig.axes[0].get_title().endswith("within 20% of 1/sqrt(L)")


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="heads must be a divisor"):
        transformer.TransformerBlock(64, 5)
    with pytest.raises(ValueError, match="heads"):
        transformer.SelfAttention(64, 0)
    with pytest.raises(ValueError, match="depth"):
        transformer.TinyTransformer(0)
    with pytest.raises(ValueError, match="norm"):
        transformer.TinyTransformer(2, norm="middle")
    with pytest.raises(ValueError, match="depth"):
        transformer.last_block_gradient(0, "pre")
    with pytest.raises(ValueError, match="x must be a torch.Tensor of shape"):
        transformer.TransformerBlock(16, 4)(torch.zeros(2, 16))
    with pytest.raises(TypeError, match="model"):
        transformer.residual_stream(torch.nn.Linear(2, 2), _x())
    with pytest.raises(TypeError, match="stream"):
        transformer.stream_growth([1, 2])
    with pytest.raises(ValueError, match="post"):
        transformer.draw_gradient_vs_depth(Figure(), [1, 2], [1.0], [1.0, 2.0])


def test_draw_variance_draws_the_variance_and_its_line():
    stream = {"stream": list(np.sqrt([1.0, 2.0, 3.0])), "final": 2.0}
    fig = Figure()
    text = transformer.draw_variance(fig, stream, 1.0)
    assert text == "variance 1.00 -> 4.00 over 3 sublayers"
    measured, line = fig.axes[0].lines
    np.testing.assert_allclose(measured.get_ydata(), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(line.get_ydata(), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match="slope"):
        transformer.draw_variance(Figure(), stream, float("nan"))
    with pytest.raises(TypeError, match="stream"):
        transformer.draw_variance(Figure(), [1.0], 1.0)


def test_last_block_gradient_is_computed_in_float64():
    # It matches a float64 per-sequence backward to 12 digits (float32 would not).
    slow = _per_sequence_gradient(2, "post", tokens=4, samples=3, seed=5, dtype=torch.float64)
    value = transformer.last_block_gradient(2, "post", d=16, heads=2, tokens=4, samples=3, seed=5)
    assert value == pytest.approx(slow, rel=1e-12)
