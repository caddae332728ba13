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


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_ffn_sublayer_computes_what_the_residual_block_computes(norm):
    torch.manual_seed(0)
    sublayer = transformer._FeedForwardSublayer(16, norm, rms_norm=False)
    reference = blocks.LayerNormResidualBlock(16, norm=norm)
    reference.load_state_dict(sublayer.state_dict())
    x = _x()
    torch.testing.assert_close(sublayer(x), reference(x), rtol=0, atol=0)


def test_peri_ln_adds_normalised_writes_to_the_stream():
    model = transformer.TinyTransformer(3, d=16, heads=2, norm="peri", seed=2).double()
    x = _x().double()
    stream = transformer.residual_stream(model, x)
    layer_norm = lambda t: torch.nn.functional.layer_norm(t, t.shape[-1:])  # gains 1, biases 0 at initialisation
    h = x
    for block in model.blocks:
        attention = block.attention
        h = h + layer_norm(attention.attention(layer_norm(h)))
        h = h + layer_norm(block.ffn.branch(layer_norm(h)))
    assert stream["final"] == pytest.approx(float(h.detach().pow(2).mean().sqrt()), rel=1e-12)
    np.testing.assert_allclose(stream["write"], 1.0, rtol=1e-4)  # every write normalised: RMS 1
    assert model(x).shape == (2, 5, 16) and isinstance(model.final_norm, torch.nn.LayerNorm)


def test_rms_norm_replaces_every_layer_norm():
    model = transformer.TinyTransformer(2, d=16, heads=2, norm="peri", rms_norm=True, qk_norm=True)
    kinds = {type(m) for m in model.modules()}
    assert torch.nn.RMSNorm in kinds and torch.nn.LayerNorm not in kinds
    # 2 blocks x (2 sublayers x (in + out) + 2 QK norms) + the final norm
    assert sum(isinstance(m, torch.nn.RMSNorm) for m in model.modules()) == 2 * 6 + 1
    sublayer = model.blocks[0].ffn
    x = 3.0 + _x()  # a mean far from 0: RMSNorm keeps it, LayerNorm would remove it
    expected = x / x.pow(2).mean(-1, keepdim=True).add(torch.finfo(x.dtype).eps).sqrt()
    torch.testing.assert_close(sublayer.norm(x), expected)


def test_default_placements_keep_their_weights_and_numbers():
    # rms_norm=False and qk_norm=False build exactly the pre-LN and post-LN models of notebook 10.
    for norm in ("pre", "post"):
        model = transformer.TinyTransformer(2, d=16, heads=2, norm=norm, seed=3)
        assert not any(isinstance(m, torch.nn.RMSNorm) for m in model.modules())
        assert all(isinstance(b.attention.attention.q_norm, torch.nn.Identity) for b in model.blocks)
        assert isinstance(model.blocks[0].attention.out_norm, torch.nn.Identity)
    same = [transformer.TinyTransformer(2, d=16, heads=2, norm=norm, seed=3, qk_norm=True) for norm in ("pre", "peri")]
    plain = transformer.TinyTransformer(2, d=16, heads=2, norm="pre", seed=3)
    for built in same:  # the extra norms draw no random numbers: the Linear weights are the same
        assert torch.equal(built.blocks[1].attention.attention.qkv.weight, plain.blocks[1].attention.attention.qkv.weight)


def test_qk_norm_bounds_the_logits_and_ignores_the_scale_of_q_and_k():
    x = 5 * _x(2, 6, 32)
    for qk_norm, bounded in ((False, False), (True, True)):
        model = transformer.TinyTransformer(3, d=32, heads=2, norm="pre", qk_norm=qk_norm, seed=1).double()
        before = transformer.attention_logits(model, x.double())
        with torch.no_grad():
            for block in model.blocks:
                block.attention.attention.qkv.weight[:64] *= 4  # queries and keys only
        after = transformer.attention_logits(model, x.double())
        assert len(before) == 3
        if bounded:
            assert max(after) <= math.sqrt(16) + 1e-9  # |q|=|k|=sqrt(d_head) after a LayerNorm of gain 1
            np.testing.assert_allclose(after, before, rtol=1e-4)  # up to the norms' eps
        else:
            assert after[0] == pytest.approx(16 * before[0], rel=1e-9)  # block 1 reads the same stream


def test_attention_logits_of_the_first_block_by_hand():
    model = transformer.TinyTransformer(1, d=16, heads=2, norm="post", seed=4)
    x = _x()
    q, k, _ = model.blocks[0].attention.attention.qkv(x).detach().view(2, 5, 3, 2, 8).permute(2, 0, 3, 1, 4)
    expected = float((q @ k.transpose(-2, -1) / math.sqrt(8)).abs().max())
    assert transformer.attention_logits(model, x) == [pytest.approx(expected, rel=1e-6)]


def test_residual_stream_peak_is_largest_over_median():
    model = transformer.TinyTransformer(2, d=16, heads=2, seed=0)
    x = _x()
    x[0, 0, 0] = 40.0  # one massive entry
    stream = transformer.residual_stream(model, x)
    assert stream["peak"][0] == pytest.approx(40.0 / float(x.abs().median()), rel=1e-6)
    assert stream["peak"][0] > 20 and len(stream["peak"]) == 4 and stream["final_peak"] > 1


def test_adam_steps_is_torch_adam_on_the_last_token():
    x = _x(4, 3, 16).double()
    labels = torch.tensor([0, 5, 2, 15])
    ours = transformer.TinyTransformer(2, d=16, heads=2, norm="peri", qk_norm=True, seed=5).double()
    theirs = transformer.TinyTransformer(2, d=16, heads=2, norm="peri", qk_norm=True, seed=5).double()
    losses = transformer.adam_steps(ours, x, labels, steps=5, lr=1e-2)
    optimiser = torch.optim.Adam(theirs.parameters(), lr=1e-2)
    reference = []
    for _ in range(5):
        optimiser.zero_grad()
        loss = torch.nn.functional.cross_entropy(theirs(x)[:, -1], labels)
        reference.append(float(loss.detach()))
        loss.backward()
        optimiser.step()
    np.testing.assert_allclose(losses, reference, rtol=1e-10)
    assert losses[-1] < losses[0]
    torch.testing.assert_close(ours.blocks[1].ffn.fc2.weight, theirs.blocks[1].ffn.fc2.weight)


def test_adam_steps_refuses_bad_labels_and_dtypes():
    model = transformer.TinyTransformer(1, d=16, heads=2).double()
    x = _x().double()
    with pytest.raises(ValueError, match="labels must be 2 int64 class labels from 0 to 15"):
        transformer.adam_steps(model, x, torch.tensor([0, 16]))
    with pytest.raises(ValueError, match="labels"):
        transformer.adam_steps(model, x, torch.tensor([0]))
    with pytest.raises(TypeError, match="x must be a torch.float64 tensor"):
        transformer.adam_steps(model, _x(), torch.tensor([0, 1]))
    with pytest.raises(TypeError, match="qk_norm"):
        transformer.TinyTransformer(1, d=16, heads=2, qk_norm=1)
    with pytest.raises(ValueError, match="norm must be one of 'pre', 'post', 'peri'"):
        transformer.TransformerBlock(16, 4, "around")


def test_attention_mixes_tokens_and_is_permutation_equivariant():
    attention = transformer._SelfAttention(16, 4, qk_norm=False, rms_norm=False)
    x = _x()
    permutation = torch.tensor([3, 0, 4, 1, 2])
    torch.testing.assert_close(attention(x)[:, permutation], attention(x[:, permutation]))
    changed = x.clone()
    changed[:, 0] += 1.0
    assert not torch.allclose(attention(changed)[:, 1], attention(x)[:, 1])  # token 1 sees token 0


def test_attention_matches_torch_reference():
    torch.manual_seed(0)
    attention = transformer._SelfAttention(16, 4, qk_norm=False, rms_norm=False)
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
    # a bent curve: the line is the least-squares one (variances 1, 1, 3, 3 fit 0.8 + 0.8 i), not one through the first point
    bent = {"stream": list(np.sqrt([1.0, 1.0, 3.0])), "final": float(np.sqrt(3.0))}
    fig = Figure()
    slope, _ = transformer.stream_growth(bent)
    transformer.draw_variance(fig, bent, slope)
    np.testing.assert_allclose(fig.axes[0].lines[1].get_ydata(), [0.8, 1.6, 2.4, 3.2])
    with pytest.raises(TypeError, match="slope"):
        transformer.draw_variance(Figure(), stream, float("nan"))
    with pytest.raises(TypeError, match="stream"):
        transformer.draw_variance(Figure(), [1.0], 1.0)


def test_last_block_gradient_is_computed_in_float64():
    # It matches a float64 per-sequence backward to 12 digits (float32 would not).
    slow = _per_sequence_gradient(2, "post", tokens=4, samples=3, seed=5, dtype=torch.float64)
    value = transformer.last_block_gradient(2, "post", d=16, heads=2, tokens=4, samples=3, seed=5)
    assert value == pytest.approx(slow, rel=1e-12)
