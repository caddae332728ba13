import pytest
import torch
from torch import nn

from utils.mlp import MLP, BatchNormResidualBlock, _BatchNormPlainBlock, make_mlp, weight_layers


@pytest.mark.parametrize("architecture", ["plain", "residual"])
@pytest.mark.parametrize("depth", [2, 8, 20, 56])
def test_depth_counts_weight_layers(architecture, depth):
    model = make_mlp(architecture, depth, seed=0)
    assert weight_layers(model) == depth
    assert len(model.blocks) == (depth - 2) // 2
    assert model(torch.randn(5, 64)).shape == (5, 10)


def test_odd_depths_fit_one_layer_blocks():
    model = make_mlp("residual", 17, width=200, in_features=1, out_features=1, block_layers=1, seed=0)
    assert weight_layers(model) == 17 and len(model.blocks) == 15
    assert model(torch.randn(4, 1)).shape == (4, 1)


def test_plain_and_residual_share_weights_for_one_seed():
    plain, residual = make_mlp("plain", 20, seed=3), make_mlp("residual", 20, seed=3)
    plain_weights = [m.weight for m in plain.modules() if isinstance(m, nn.Linear)]
    residual_weights = [m.weight for m in residual.modules() if isinstance(m, nn.Linear)]
    assert all(torch.equal(a, b) for a, b in zip(plain_weights, residual_weights, strict=True))
    assert sum(p.numel() for p in plain.parameters()) == sum(p.numel() for p in residual.parameters())
    assert not torch.equal(make_mlp("plain", 20, seed=4).stem[0].weight, plain.stem[0].weight)


def test_weights_are_he_normal():
    model = make_mlp("plain", 56, seed=0)
    weights = torch.cat([m.weight.flatten() for b in model.blocks for m in b.modules() if isinstance(m, nn.Linear)])
    assert weights.std().item() == pytest.approx((2 / 64) ** 0.5, rel=0.02)
    assert abs(weights.mean().item()) < 0.005
    assert torch.equal(model.head.bias, torch.zeros(10))


def test_residual_block_adds_its_input():
    block = BatchNormResidualBlock(8).eval()
    with torch.no_grad():
        for m in block.modules():
            if isinstance(m, nn.Linear):
                m.weight.zero_()
        for m in block.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.bias.zero_()
    x = torch.rand(3, 8)  # non-negative, like the output of the ReLU before it
    assert torch.equal(block(x), x)  # zero branch: the block is the identity
    plain = _BatchNormPlainBlock(8).eval()
    with torch.no_grad():
        for m in plain.modules():
            if isinstance(m, nn.Linear):
                m.weight.zero_()
    assert torch.equal(plain(x), torch.zeros(3, 8))  # zero plain block: the signal is gone


def test_seed_leaves_the_global_generator_alone():
    torch.manual_seed(7)
    expected = torch.rand(2)
    torch.manual_seed(7)
    make_mlp("residual", 8, seed=1)
    assert torch.equal(torch.rand(2), expected)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="architecture"):
        make_mlp("resnet", 8)
    with pytest.raises(ValueError, match="depth"):
        make_mlp("plain", 7)
    with pytest.raises(ValueError, match="depth"):
        make_mlp("plain", 1)
    with pytest.raises(TypeError, match="depth"):
        make_mlp("plain", 8.0)
    with pytest.raises(ValueError, match="width"):
        make_mlp("plain", 8, width=0)
    with pytest.raises(ValueError, match="block_layers"):
        make_mlp("plain", 8, block_layers=0)
    with pytest.raises(TypeError, match="model"):
        weight_layers("model")
    assert isinstance(make_mlp("plain", 8), MLP)


def test_branch_to_skip_ratios_one_per_block_falling_with_depth_and_model_untouched():
    from utils.mlp import branch_to_skip_ratios

    model = make_mlp("residual", 30, seed=0).double()
    x = torch.randn(128, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ratios = branch_to_skip_ratios(model, x)
    assert len(ratios) == 14
    # BatchNorm gives each branch variance about 1 while the skip accumulates (De and Smith 2020)
    assert ratios[0] > 1 > ratios[-1] and ratios[-1] < ratios[len(ratios) // 2] < ratios[1]
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())
    with torch.no_grad():  # by hand for the first block
        h = model.train().stem(x)
        assert ratios[0] == pytest.approx(float(model.blocks[0].branch(h).var() / h.var()), rel=1e-12)
    with pytest.raises(TypeError, match="residual"):
        branch_to_skip_ratios(make_mlp("plain", 8, seed=0), x)
    with pytest.raises(ValueError, match="x must be"):
        branch_to_skip_ratios(model, x[0])


def test_dtype_draws_the_weights_in_that_precision():
    wide = make_mlp("residual", 8, seed=5, dtype=torch.float64)
    narrow = make_mlp("residual", 8, seed=5)
    assert all(p.dtype == torch.float64 for p in wide.parameters())
    assert all(b.dtype == torch.float64 for b in wide.buffers() if b.is_floating_point())
    assert narrow.stem[0].weight.dtype == torch.get_default_dtype()
    # He-normal in both precisions (float64 draws are their own sequence, not the float32 one widened)
    for model in (wide, narrow):
        weights = torch.cat([m.weight.detach().double().flatten() for m in model.blocks.modules()
                             if isinstance(m, nn.Linear)])
        assert float(weights.std()) == pytest.approx((2 / 64) ** 0.5, rel=0.03)
    assert torch.equal(wide.stem[0].weight, make_mlp("residual", 8, seed=5, dtype=torch.float64).stem[0].weight)
    with pytest.raises(TypeError, match="dtype"):
        make_mlp("plain", 8, dtype=torch.int64)


def test_dtype_must_be_a_float_dtype_and_x_must_fit_the_stem():
    from utils.mlp import branch_to_skip_ratios

    with pytest.raises(TypeError, match="dtype"):
        make_mlp("plain", 4, dtype=[1.0, 2.0])
    with pytest.raises(TypeError, match="dtype"):
        make_mlp("plain", 4, dtype=torch.int64)
    with pytest.raises(ValueError, match="x must be"):
        branch_to_skip_ratios(make_mlp("residual", 4, seed=0), torch.randn(8, 3))
