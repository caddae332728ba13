"""Tests for utils.recipes: the norm-free deep residual MLP and its initialisation recipes."""
import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from utils import recipes


def test_deepnorm_constants_match_the_formula():
    for n in (1, 6, 12, 100, 1000):
        alpha, beta = recipes.deepnorm_constants(n)
        assert alpha == pytest.approx((2 * n) ** 0.25)
        assert beta == pytest.approx((8 * n) ** -0.25)
    alpha, beta = recipes.deepnorm_constants(8)  # 2N = 16 and 8N = 64: round numbers
    assert alpha == pytest.approx(2.0)
    assert beta == pytest.approx(64 ** -0.25) == pytest.approx(1 / (2 * math.sqrt(2)))


def test_branches_counts_weight_layers_like_notebook_06():
    assert recipes.branches(56) == 27
    assert recipes.branches(2) == 0
    assert len(recipes.build_deep_mlp(20).blocks) == 9
    model = recipes.build_deep_mlp(56)
    assert sum(isinstance(m, torch.nn.Linear) for m in model.modules()) == 56


def test_rezero_is_the_identity_at_initialisation():
    model = recipes.build_deep_mlp(20, "rezero")
    x = torch.randn(5, 64, generator=torch.Generator().manual_seed(1))
    for block in model.blocks:
        h = torch.randn(7, 64)
        assert torch.equal(block(h), h)
    states = model.stream(x)
    for state in states[1:]:
        assert torch.equal(state, states[0])
    assert all(float(block.alpha.detach()) == 0.0 for block in model.blocks)


def test_fixup_zero_initialised_layers_are_zero_and_the_rest_is_rescaled():
    model = recipes.build_deep_mlp(56, "fixup", seed=3)
    reference = recipes.build_deep_mlp(56, "default", seed=3)
    assert torch.count_nonzero(model.head.weight) == 0 and torch.count_nonzero(model.head.bias) == 0
    for block, ref in zip(model.blocks, reference.blocks):
        assert torch.count_nonzero(block.fc2.weight) == 0 and torch.count_nonzero(block.fc2.bias) == 0
        assert float(block.alpha.detach()) == 1.0
        torch.testing.assert_close(block.fc1.weight, ref.fc1.weight / math.sqrt(27))
    x = torch.randn(4, 64)
    assert torch.count_nonzero(model(x)) == 0  # zero classifier: every logit is 0


def test_scaled_and_init_only_shrink_the_branch_by_one_over_sqrt_L():
    default = recipes.build_deep_mlp(20, "default", seed=2)
    scaled = recipes.build_deep_mlp(20, "scaled", seed=2)
    init_only = recipes.build_deep_mlp(20, "init-only", seed=2)
    x = torch.randn(3, 64)
    for d, s, g in zip(default.blocks, scaled.blocks, init_only.blocks):
        assert s.multiplier == pytest.approx(1 / 3)  # L = 9
        torch.testing.assert_close(g.fc2.weight, d.fc2.weight / 3)
        torch.testing.assert_close(s.branch(x), d.branch(x) / 3)
        torch.testing.assert_close(g.branch(x), d.branch(x) / 3)


def test_every_recipe_starts_from_the_same_he_normal_draw():
    model = recipes.build_deep_mlp(56, "default", seed=0)
    std = float(torch.cat([b.fc1.weight.detach().flatten() for b in model.blocks]).std())
    assert std == pytest.approx(math.sqrt(2 / 64), rel=0.02)
    again = recipes.build_deep_mlp(56, "rezero", seed=0)
    assert torch.equal(model.blocks[5].fc1.weight, again.blocks[5].fc1.weight)


def test_signal_at_init_grows_for_default_and_stays_flat_for_rezero():
    x = torch.randn(64, 64, generator=torch.Generator().manual_seed(0))
    forward, backward = recipes.signal_at_init(recipes.build_deep_mlp(20, "default"), x)
    assert forward.shape == backward.shape == (10,)
    # Each He-initialised branch adds twice the stream's variance: RMS x sqrt(3) per block.
    assert forward[-1] / forward[0] == pytest.approx(math.sqrt(3) ** 9, rel=0.5)
    forward, backward = recipes.signal_at_init(recipes.build_deep_mlp(20, "rezero"), x)
    np.testing.assert_allclose(forward, forward[0], rtol=1e-6)
    np.testing.assert_allclose(backward, backward[0], rtol=1e-6)


def test_signal_overflow_comes_back_as_inf_not_nan():
    x = torch.randn(16, 64, generator=torch.Generator().manual_seed(0))
    forward, backward = recipes.signal_at_init(recipes.build_deep_mlp(400, "default"), x)
    assert np.isinf(forward[-1]) and not np.isnan(forward).any() and not np.isnan(backward).any()


@pytest.mark.parametrize("recipe", recipes.RECIPES)
@pytest.mark.parametrize("depth", [2, 56, 1000])
def test_draw_signal_draws_at_every_setting(recipe, depth):
    x = torch.randn(32, 64, generator=torch.Generator().manual_seed(0))
    fig = Figure()
    text = recipes.draw_signal(fig, recipe=recipe, depth=depth, x=x)
    assert fig.axes and fig.axes[0].lines
    assert text.startswith("forward")
    if recipe == "default" and depth == 1000:
        assert "overflowed" in text


def test_plot_losses_marks_a_nan_run_instead_of_dropping_it():
    fig = Figure()
    note = recipes.draw_losses(fig, {"default": [2.3, 80.0, float("nan")], "gpt2": [2.3, float("inf")],
                                     "rezero": [2.3, 1.0, 0.5]})
    assert note == "stayed finite: rezero; ended in NaN or inf: default, gpt2"
    everything = fig.axes[0]
    assert everything.get_title() == "One run per recipe: 2 of 3 ended in NaN or inf"
    notes = [text.get_text() for text in everything.texts]
    assert notes == ["default: NaN at step 3", "gpt2: inf at step 2"]  # honest names, one under the other
    assert not any("overflow" in line.get_label() for line in everything.lines)
    # the axis spans the finite losses (0.5 to 80), not an invented value for the NaN
    low, high = everything.get_ylim()
    assert 0.1 < low < 0.5 and 80 < high < 1e4
    # the NaN marker sits at the top edge (axes coordinate 1) at the step it happened
    markers = [line for line in everything.lines if line.get_marker() == "^"]
    assert [tuple(m.get_xdata()) + tuple(m.get_ydata()) for m in markers] == [(3, 1.0), (2, 1.0)]
    assert all(legend.get_texts()[0].get_fontsize() >= 10 for legend in (ax.get_legend() for ax in fig.axes))


def test_draw_losses_when_no_run_stayed_finite():
    fig = Figure()
    note = recipes.draw_losses(fig, {"default": [float("nan")]})
    assert note == "stayed finite: none; ended in NaN or inf: default"
    assert fig.axes[0].get_title() == "One run per recipe: 1 of 1 ended in NaN"
    assert fig.axes[1].texts[0].get_text() == "no run stayed finite"


def test_scaled_is_not_drawn_in_the_branch_green_or_the_plain_colour():
    from utils.plotting import PLAIN_COLOR, RESIDUAL_COLOR

    assert recipes._RECIPE_COLORS["scaled"] not in (PLAIN_COLOR, RESIDUAL_COLOR, "#009E73")


def test_the_default_recipe_diverges_and_rezero_trains_briefly():
    from utils.data import load_digits_split
    from utils.training import train

    data = load_digits_split()
    losses = train(recipes.build_deep_mlp(56, "default"), data.x_train, data.y_train, steps=20)
    assert not math.isfinite(losses[-1])
    losses = train(recipes.build_deep_mlp(56, "rezero"), data.x_train, data.y_train, steps=40)
    assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0]


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="recipe"):
        recipes.build_deep_mlp(20, "warmup")
    with pytest.raises(ValueError, match="depth"):
        recipes.build_deep_mlp(0)
    with pytest.raises(ValueError, match="depth must be even"):
        recipes.build_deep_mlp(21)
    with pytest.raises(TypeError, match="depth"):
        recipes.build_deep_mlp(20.0)
    with pytest.raises(ValueError, match="layers"):
        recipes.deepnorm_constants(0)
    with pytest.raises(ValueError, match="x must"):
        recipes.signal_at_init(recipes.build_deep_mlp(4), torch.zeros(3, 5))
    with pytest.raises(TypeError, match="model"):
        recipes.signal_at_init(torch.nn.Linear(64, 64), torch.zeros(3, 64))
    with pytest.raises(TypeError, match="x must"):
        recipes.draw_signal(Figure(), recipe="default", depth=4, x=[[0.0] * 64])
    ax = Figure().subplots()
    assert recipes._plot_losses(ax, [2.3, 0.5], color="k", label="a") == "a: final training loss 5.0e-01"
    assert recipes._plot_losses(ax, [2.3, float("nan")], color="k", label="b") == "b: loss became NaN at step 2"


def test_building_leaves_the_global_seed_alone():
    torch.manual_seed(5)
    before = torch.rand(1)
    torch.manual_seed(5)
    recipes.build_deep_mlp(20, "fixup")
    assert torch.equal(torch.rand(1), before)
