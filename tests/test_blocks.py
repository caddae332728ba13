import math

import pytest
import torch
from matplotlib.figure import Figure
from torch import nn

from tests.output_tolerance import texts_agree  # tests/: the stored outputs' rule
from utils import blocks
from utils.blocks import LayerNormPlainBlock, LayerNormResidualBlock, make_block, make_stack


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def test_pre_norm_block_computes_x_plus_scaled_branch_of_normalised_x():
    torch.manual_seed(0)
    block = LayerNormResidualBlock(8, norm="pre", scale=0.5)
    x = _x(3, 8)
    ln = nn.functional.layer_norm(x, (8,))
    branch = block.fc2(nn.functional.gelu(block.fc1(ln)))
    assert torch.allclose(block(x), x + 0.5 * branch, atol=1e-6)
    assert block.scale == 0.5


def test_post_norm_block_normalises_the_sum():
    torch.manual_seed(0)
    block = LayerNormResidualBlock(8, norm="post", scale=2.0)
    x = _x(3, 8)
    expected = nn.functional.layer_norm(x + 2.0 * block.fc2(nn.functional.gelu(block.fc1(x))), (8,))
    assert torch.allclose(block(x), expected, atol=1e-6)


def test_plain_block_is_the_same_layers_without_the_skip_path():
    torch.manual_seed(0)
    plain = LayerNormPlainBlock(8)
    torch.manual_seed(0)
    residual = LayerNormResidualBlock(8)
    x = _x(3, 8)
    assert torch.equal(plain.fc1.weight, residual.fc1.weight)  # same draw order: fc1 first
    expected = plain.fc2(nn.functional.gelu(plain.fc1(nn.functional.layer_norm(x, (8,)))))
    assert torch.allclose(plain(x), expected, atol=1e-6)
    assert torch.allclose(residual(x) - x, plain(x), atol=1e-6)  # residual = x + plain block at s = 1


def test_first_linear_is_created_before_the_second():
    torch.manual_seed(7)
    block = LayerNormResidualBlock(4)
    torch.manual_seed(7)
    first = nn.Linear(4, 16)
    second = nn.Linear(16, 4)
    assert torch.equal(block.fc1.weight, first.weight) and torch.equal(block.fc2.weight, second.weight)


def test_rezero_pre_norm_is_exactly_the_identity_at_init_and_alpha_is_learnable():
    block = LayerNormResidualBlock(16, norm="pre", scale="rezero")
    x = _x(4, 5, 16)
    assert torch.equal(block(x), x)
    assert block.scale == 0.0 and block.alpha.requires_grad
    (block(x) * _x(4, 5, 16, seed=1)).sum().backward()
    assert block.alpha.grad.abs() > 0  # alpha gets a gradient at init ...
    assert torch.count_nonzero(block.fc1.weight.grad) == 0  # ... the branch weights do not (alpha = 0)


def test_rezero_post_norm_is_layer_norm_of_the_input_not_the_identity():
    block = LayerNormResidualBlock(16, norm="post", scale="REZERO")
    x = 3 * _x(4, 16) + 1
    assert torch.allclose(block(x), nn.functional.layer_norm(x, (16,)), atol=1e-6)
    assert not torch.allclose(block(x), x)


def test_post_norm_output_has_mean_0_and_std_1_per_token():
    torch.manual_seed(0)
    block = LayerNormResidualBlock(128, norm="post")
    y = block(5 * _x(64, 128) + 2)
    assert y.mean(dim=-1).abs().max() < 1e-5
    assert (y.std(dim=-1, unbiased=False) - 1).abs().max() < 1e-4


def test_output_stats_on_the_demo_input():
    x = blocks.demo_input()
    rezero = blocks.output_stats(blocks.demo_block("pre", "rezero"), x)
    assert rezero["relative_change"] == 0.0 and rezero["output_std"] == rezero["input_std"]
    post = blocks.output_stats(blocks.demo_block("post", 1.0), x)
    assert abs(post["output_mean"]) < 1e-6 and abs(post["output_std"] - 1) < 1e-3
    assert post["token_mean_off"] < 1e-5 and post["token_std_off"] < 1e-4
    pre = blocks.output_stats(blocks.demo_block("pre", 1.0), x)
    assert pre["relative_change"] > 0.05 and pre["output_std"] > pre["input_std"]  # pre-norm drifts
    assert blocks.demo_block("pre", 1.0).fc1.weight.equal(blocks.demo_block("post", 2.0).fc1.weight)


def test_make_stack_builds_depth_blocks_in_seeded_order():
    torch.manual_seed(3)
    stack = make_stack(3, 8, residual=True, norm="post", scale=0.5)
    assert len(stack) == 3 and all(isinstance(b, LayerNormResidualBlock) for b in stack)
    assert stack[0].norm_position == "post" and stack[2].scale == 0.5
    torch.manual_seed(3)
    again = [LayerNormResidualBlock(8) for _ in range(3)]
    assert torch.equal(stack[2].fc2.bias, again[2].fc2.bias)
    plain = make_stack(2, 8, residual=False)
    assert all(isinstance(b, LayerNormPlainBlock) for b in plain)
    assert make_stack(5, 8)(_x(2, 8)).shape == (2, 8)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="depth"):
        make_stack(0, 8)
    with pytest.raises(ValueError, match="depth"):
        make_stack(-3, 8)
    with pytest.raises(TypeError, match="depth"):
        make_stack(2.5, 8)
    with pytest.raises(ValueError, match="norm"):
        LayerNormResidualBlock(8, norm="middle")
    with pytest.raises(ValueError, match="norm"):
        make_stack(2, 8, residual=False, norm="sandwich")
    with pytest.raises(ValueError, match="d must be at least 1"):
        LayerNormPlainBlock(0)
    with pytest.raises(ValueError, match="scale"):
        LayerNormResidualBlock(8, scale="fixup")
    with pytest.raises(ValueError, match="scale"):
        LayerNormResidualBlock(8, scale=math.inf)
    with pytest.raises(TypeError, match="scale"):
        LayerNormResidualBlock(8, scale=True)
    with pytest.raises(TypeError, match="residual"):
        make_block(8, residual="yes")
    with pytest.raises(ValueError, match="last dimension d=8"):
        LayerNormResidualBlock(8)(_x(2, 6))
    with pytest.raises(ValueError, match="last dimension d=8"):
        LayerNormPlainBlock(8)(torch.tensor(1.0))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        LayerNormResidualBlock(8)([[0.0] * 8])
    with pytest.raises(TypeError, match="floating-point"):
        LayerNormPlainBlock(8)(torch.ones(2, 8, dtype=torch.long))
    with pytest.raises(TypeError, match="block"):
        blocks.output_stats("block", _x(2, 8))


@pytest.mark.parametrize("norm, scale, rezero", [("pre", 1.0, False), ("post", 0.0, False), ("pre", 3.0, False),
                                                 ("pre", 1.0, True), ("post", 1.0, True)])
def test_draw_block_draws_two_panels_and_says_what_holds(norm, scale, rezero):
    fig = Figure()
    text = blocks.draw_block(fig, norm=norm, scale=scale, rezero=rezero)
    assert len(fig.axes) == 1 and len(fig.axes[0].get_lines()) == 2
    if rezero and norm == "pre":
        assert "||y - x|| / ||x|| = 0.0000" in text and "identity" in text
    elif rezero:
        assert "LN(x), not x" in text
    with pytest.raises(TypeError, match="rezero"):
        blocks.draw_block(Figure(), rezero="no")


def test_draw_block_keeps_redraws_cheap():
    # What keeps the widget's redraw short: no layout engine
    # and five-bin tick locators instead of the default nine.
    fig = Figure(layout="constrained")
    blocks.draw_block(fig)
    ax = fig.axes[0]
    assert fig.get_layout_engine() is None
    low, high = ax.get_xlim()
    assert all(len([t for t in ticks if low <= t <= high]) <= 6 for ticks in (ax.get_xticks(), ax.get_yticks()))


def test_block_panel_greys_out_the_scale_under_rezero():
    panel = blocks.block_plot()
    assert not panel.controls["scale"].disabled
    panel.controls["rezero"].value = True
    assert panel.controls["scale"].disabled and "identity" in panel.text
    panel.controls["norm"].value = "post"
    output = next(line for line in panel.text.splitlines() if line.startswith("output:"))
    assert texts_agree("output: mean +0.0000  std 1.0001", output)  # y = LN(x): std 1 (1.00006, unbiased)


def test_check_scale_accepts_numbers_and_rezero_only():
    assert blocks.check_scale(2) == 2.0 and isinstance(blocks.check_scale(2), float)
    assert blocks.check_scale("ReZero") == blocks.REZERO
    with pytest.raises(ValueError, match="scale must be a number or 'rezero'"):
        blocks.check_scale("zero")
    with pytest.raises(TypeError, match="scale must be a number or 'rezero'"):
        blocks.check_scale(True)
    with pytest.raises(ValueError, match="scale must be finite"):
        blocks.check_scale(float("inf"))


def test_block_numbers_counts_every_weight_and_refuses_absurd_widths():
    assert blocks.block_numbers(8) == sum(p.numel() for p in LayerNormResidualBlock(8).parameters())
    assert blocks.block_numbers(8) == sum(p.numel() for p in LayerNormPlainBlock(8).parameters())
    with pytest.raises(ValueError, match=r"^d=1000000 would need about 32 TB of memory"):
        LayerNormResidualBlock(10**6)
    with pytest.raises(ValueError, match=r"^depth=1000000000 with d=128 would need about 528 TB .* accept depth up to 1894 with d=128"):
        blocks.make_stack(10**9, 128)


def test_published_rezero_block_has_no_layernorm_and_starts_as_the_identity():
    torch.manual_seed(0)
    block = blocks.ReZeroBlock(8)
    x = _x(3, 8)
    assert not any(isinstance(m, nn.LayerNorm) for m in block.modules())
    assert torch.equal(block(x), x)
    (block(x) * _x(3, 8, seed=1)).sum().backward()
    assert float(block.alpha.grad) != 0.0 and float(block.fc1.weight.grad.abs().max()) == 0.0
    with torch.no_grad():
        block.alpha.fill_(0.5)
    expected = x + 0.5 * block.fc2(nn.functional.gelu(block.fc1(x)))
    assert torch.allclose(block(x), expected, atol=1e-6)
    with pytest.raises(ValueError, match="last dimension d=8"):
        block(_x(3, 5))


def test_draw_std_through_stack_draws_one_curve_per_configuration():
    fig = Figure()
    blocks.draw_std_through_stack(fig, {"pre-norm, s = 1": [1.0, 1.1, 1.2], "plain": [1.0, 0.2, 0.2],
                                        "pre-norm, ReZero-style gate": [1.0, 1.0, 1.0]})
    ax = fig.axes[0]
    colors = {line.get_label(): line.get_color() for line in ax.lines}
    assert colors["plain"] == "#D55E00" and colors["pre-norm, s = 1"] == "#0072B2"
    assert [list(line.get_ydata()) for line in ax.lines][1] == [1.0, 0.2, 0.2]
    with pytest.raises(TypeError, match="stds must be a non-empty dict"):
        blocks.draw_std_through_stack(Figure(), {})
    with pytest.raises(ValueError, match="at least two numbers"):
        blocks.draw_std_through_stack(Figure(), {"plain": [1.0]})
