import math

import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from tests.output_tolerance import DEFAULT, Rule, printed_values_agree  # tests/: the stored outputs' rule
from utils import gradient_flow as gf
from utils.blocks import make_stack

# The reference table is float32 arithmetic: another CPU, numeric backend or thread count
# adds its products in another order, so a printed digit may move. What holds everywhere
# is what notebook 06's stored table promises under the course's rule for stored outputs
# (tests/output_tolerance.py): each entry within one unit of its fourth decimal, except the
# plain stack's gradient norm, whose float32 noise reaches the fourth decimal (63.51165
# with ATen's scalar kernels and 63.51170 with its AVX2 and AVX-512 ones on the course's
# AMD EPYC, 63.5116 or 63.5117 on an AVX-512/AMX Xeon, 63.5118 in the chapter): that
# entry gets the rule the notebook declares for its table cell.
NOISY_ENTRY_RULE = Rule(abs=2e-4)
RULES = {("plain", "gradient_norm"): NOISY_ENTRY_RULE}


def _disagreements(want: dict, got: dict) -> list:
    """The entries of two reference tables whose four printed decimals disagree."""
    return [(column, metric, want[column][metric], got[column][metric])
            for column in ("plain", "residual") for metric in gf._METRICS
            if not printed_values_agree(want[column][metric], got[column][metric], 4,
                                        RULES.get((column, metric), DEFAULT))]


def test_reference_table_agrees_with_the_chapter_to_the_fourth_decimal():
    assert _disagreements(gf.REFERENCE_TABLE, gf.reference_comparison()) == []


def test_reference_table_with_two_threads_agrees_with_one_thread():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = gf.reference_comparison()
        torch.set_num_threads(2)
        two = gf.reference_comparison()
    finally:
        torch.set_num_threads(before)
    assert _disagreements(one, two) == []


def test_disagreements_name_an_entry_off_by_more_than_its_rule():
    moved = {column: dict(values) for column, values in gf.REFERENCE_TABLE.items()}
    moved["plain"]["gradient_norm"] += 2e-4  # float noise of this entry: passes
    assert _disagreements(gf.REFERENCE_TABLE, moved) == []
    moved["plain"]["gradient_norm"] += 2e-4
    moved["residual"]["output_std"] += 2e-4  # two units of the fourth decimal: fails
    assert [entry[:2] for entry in _disagreements(gf.REFERENCE_TABLE, moved)] == [
        ("plain", "gradient_norm"), ("residual", "output_std")]


def test_format_table_shows_four_decimals_and_the_reference():
    text = gf.format_table(gf.REFERENCE_TABLE, reference=gf.REFERENCE_TABLE)
    assert "202.0742 (202.0742)" in text and "-0.0082 (-0.0082)" in text
    assert "reference chapter" in text
    with pytest.raises(ValueError, match="results"):
        gf.format_table({"plain": gf.REFERENCE_TABLE["plain"]})


def test_profile_of_the_reference_stacks_ends_in_the_table_values():
    stacks, inputs = gf.reference_setup()
    profile = gf.profile_stack(stacks["residual"], inputs["residual"])
    assert profile.depth == 30
    assert printed_values_agree(202.0742, profile.grad_norm[0], 4)  # gradient with respect to the input
    assert profile.grad_norm[-1] == pytest.approx(math.sqrt(4 * 32 * 128))  # all-ones upstream: norm 128
    assert printed_values_agree(1.4831, profile.act_std[-1], 4)
    plain = gf.profile_stack(stacks["plain"], inputs["plain"])
    assert printed_values_agree(63.5118, plain.grad_norm[0], 4, NOISY_ENTRY_RULE)
    assert printed_values_agree(-0.0082, plain.act_mean[-1], 4)


def test_streamed_profile_matches_the_whole_stack_for_every_configuration():
    x, g = gf.probe(5, 16, 3)
    shared = gf._WeightStream(16, 3, cache_layers=2)
    for config in ({"residual": True, "norm": "pre", "scale": 1.0}, {"residual": False},
                   {"residual": True, "norm": "post", "scale": 2.0},
                   {"residual": True, "norm": "pre", "scale": "rezero"}):
        whole = gf.profile_stack(gf.stack_from_stream(6, 16, 3, **config), x, g)
        streamed = gf.streamed_profile(6, 16, tokens=5, seed=3, **config)
        reused = gf._streamed(config, shared, x, g, [6])[0]
        np.testing.assert_allclose(streamed.grad_norm, whole.grad_norm, rtol=1e-5)
        np.testing.assert_allclose(streamed.act_std, whole.act_std, rtol=1e-5)
        np.testing.assert_allclose(streamed.act_mean, whole.act_mean, rtol=1e-4, atol=1e-7)
        np.testing.assert_array_equal(reused.grad_norm, streamed.grad_norm)  # same bits, same operations


def test_float64_streamed_profile_uses_the_same_weights_in_double_precision():
    x, g = gf.probe(4, 16, 1)
    whole = gf.profile_stack(gf.stack_from_stream(5, 16, 1, residual=False).double(), x.double(), g.double())
    streamed = gf.streamed_profile(5, 16, residual=False, tokens=4, seed=1, dtype=torch.float64)
    np.testing.assert_allclose(streamed.grad_norm, whole.grad_norm, rtol=1e-12)
    single = gf.streamed_profile(5, 16, residual=False, tokens=4, seed=1)
    np.testing.assert_allclose(single.grad_norm, whole.grad_norm, rtol=1e-5)
    with pytest.raises(ValueError, match="dtype"):
        gf.streamed_profile(5, 16, dtype=torch.int64)


def test_weight_stream_redraws_any_layer_identically_from_nn_linears_distribution():
    stream = gf._WeightStream(8, 5)
    first = [t.clone() for t in stream.draw(3)]
    block = make_stack(1, 8)[0]
    for layer in (3, 0, 2, 3):
        stream.load(block, layer)
    assert all(torch.equal(a, b) for a, b in zip(first, (block.fc1.weight, block.fc1.bias,
                                                          block.fc2.weight, block.fc2.bias)))
    assert not torch.equal(stream.draw(2)[0], first[0])  # another layer, other weights
    assert not torch.equal(gf._WeightStream(8, 6).draw(3)[0], first[0])  # another seed, other weights
    big = gf._WeightStream(256, 0).draw(0)
    for tensor, fan_in in zip(big, (256, 256, 1024, 1024)):  # uniform on +-1/sqrt(fan_in), like nn.Linear
        bound = float(np.float32(1 / math.sqrt(fan_in)))
        assert tensor.dtype == torch.float32 and tensor.abs().max() <= bound
        if tensor.dim() == 2:
            assert tensor.abs().max() > 0.99 * bound and abs(float(tensor.std()) - bound / math.sqrt(3)) < 0.01 * bound
    cached = gf._WeightStream(8, 5, cache_layers=4)
    assert cached.draw(3) is cached.draw(3) and torch.equal(cached.draw(3)[0], first[0])


def test_weight_stream_keeps_the_layers_it_is_told_to_drawn_at_once_and_forgets_the_rest():
    stream, fresh = gf._WeightStream(8, 5, cache_layers=1), gf._WeightStream(8, 5)
    stream.keep(4)
    assert sorted(stream._cache) == [0, 1, 2, 3] and stream.cache_layers == 4
    assert all(torch.equal(a, b) for a, b in zip(stream.draw(3), fresh.draw(3)))  # the same weights
    assert stream.draw(3) is stream.draw(3)
    stream.keep(2)
    assert sorted(stream._cache) == [0, 1] and stream.draw(3) is not stream.draw(3)


def test_the_widgets_static_grid_keeps_the_deep_layers_only_while_it_is_drawn():
    plot = gf.gradient_flow_plot()
    assert gf._WIDGET_WEIGHTS.cache_layers == gf.WIDGET_CACHE_LAYERS
    with plot.static_setup():
        assert gf._WIDGET_WEIGHTS.cache_layers == gf.STATIC_CACHE_LAYERS == len(gf._WIDGET_WEIGHTS._cache)
    assert gf._WIDGET_WEIGHTS.cache_layers == gf.WIDGET_CACHE_LAYERS
    assert max(gf._WIDGET_WEIGHTS._cache, default=0) < gf.WIDGET_CACHE_LAYERS


def test_probe_is_a_reproducible_standard_normal_pair():
    x, g = gf.probe(64, 128, 0)
    again, _ = gf.probe(64, 128, 0)
    assert torch.equal(x, again) and x.dtype == torch.float32 and x.shape == (64, 128)
    assert not torch.equal(x, g) and not torch.equal(x, gf.probe(64, 128, 1)[0])
    for t in (x, g):
        assert abs(float(t.mean())) < 0.03 and abs(float(t.std()) - 1) < 0.03


def test_shortcut_scale_multiplies_the_skip_path_so_an_identity_branchless_stack_gains_its_power():
    # With a ReZero branch (zero at init) each block is x -> lam * x: the gain is lam ** depth.
    for lam in (0.9, 1.1):
        profile = gf.streamed_profile(20, 16, scale="rezero", tokens=4, shortcut=lam, dtype=torch.float64)
        assert profile.gain[0] == pytest.approx(lam ** 20, rel=1e-12)
    same = gf.streamed_profile(5, 16, tokens=3, shortcut=1.0)
    np.testing.assert_array_equal(same.grad_norm, gf.streamed_profile(5, 16, tokens=3).grad_norm)  # the block itself
    x, g = gf.probe(3, 16, 0)
    torch.manual_seed(0)
    stack = gf.stack_from_stream(5, 16, 0, scale=0.5)
    xs = [x.double().requires_grad_(True)]
    for block in stack.double():
        xs.append(0.7 * xs[-1] + 0.5 * block.branch(block.norm(xs[-1])))
    (grad,) = torch.autograd.grad((xs[-1] * g.double()).sum(), xs[0])
    shortcut = gf.streamed_profile(5, 16, tokens=3, scale=0.5, shortcut=0.7, dtype=torch.float64)
    assert shortcut.grad_norm[0] == pytest.approx(float(grad.norm()), rel=1e-10)
    with pytest.raises(ValueError, match="pre-norm residual"):
        gf.streamed_profile(5, 16, norm="post", shortcut=0.5)
    with pytest.raises(ValueError, match="shortcut"):
        gf.streamed_profile(5, 16, shortcut=-1.0)


def test_nudge_perturbs_the_input_by_the_relative_amount_asked():
    base = gf.streamed_profile(3, 16, tokens=8, dtype=torch.float64)
    nudged = gf.streamed_profile(3, 16, tokens=8, dtype=torch.float64, nudge=1e-3)
    assert nudged.act_std[0] != base.act_std[0]
    assert abs(nudged.act_std[0] / base.act_std[0] - 1) < 1e-2
    np.testing.assert_allclose(nudged.grad_norm, base.grad_norm, rtol=1e-2)  # 3 blocks: not chaotic
    with pytest.raises(ValueError, match="nudge"):
        gf.streamed_profile(3, 16, nudge=2.0)


def test_rezero_pre_norm_passes_the_gradient_unchanged_and_post_norm_sum_loss_is_blind():
    rezero = gf.streamed_profile(20, 32, scale="rezero", tokens=4)
    assert np.all(rezero.gain == 1.0)  # identity stack: the gradient is the upstream one at every layer
    ones = gf.profile_stack(make_stack(3, 32, scale="rezero"), torch.randn(2, 32))
    assert np.all(ones.grad_norm == 8.0)  # all-ones gradient of output.sum(): sqrt(2 * 32)
    torch.manual_seed(0)
    post = gf.profile_stack(make_stack(5, 32, norm="post"), torch.randn(4, 32))
    assert post.grad_norm[0] < 1e-4 * post.grad_norm[-1]  # LN output sums to 0: float noise only


def test_plain_stack_gradient_shrinks_at_30_and_explodes_at_300_layers():
    shallow = gf.streamed_profile(30, 128, residual=False)
    deep = gf.streamed_profile(300, 128, residual=False)
    assert shallow.gain[0] < 1 and deep.gain[0] > 100
    assert np.all(deep.act_std[1:] < 0.3)  # the activations stay small while the gradient grows
    residual = gf.streamed_profile(300, 128)
    assert 1 < residual.gain[0] < 10 and residual.act_std[-1] > residual.act_std[0]


def test_depth_sweep_equals_separate_streamed_profiles_in_the_order_given():
    from utils.progress import progress_bar

    with progress_bar(4 * 7, "sweep") as bar:
        sweep = gf.depth_sweep([7, 2, 5], d=16, tokens=3, seed=2, norm="post", scale=2.0, progress=bar)
    assert bar.n == 28
    for name, residual in (("plain", False), ("residual", True)):
        assert [p.depth for p in sweep[name]] == [7, 2, 5]
        for depth, profile in zip([7, 2, 5], sweep[name]):
            alone = gf.streamed_profile(depth, 16, residual=residual, norm="post", scale=2.0, tokens=3, seed=2)
            np.testing.assert_allclose(profile.grad_norm, alone.grad_norm, rtol=1e-6)
            np.testing.assert_array_equal(profile.act_std, alone.act_std)  # one forward pass, the same in both
    double = gf.depth_sweep([4, 2], d=16, tokens=3, seed=2, dtype=torch.float64)
    alone = gf.streamed_profile(4, 16, residual=False, tokens=3, seed=2, dtype=torch.float64)
    np.testing.assert_allclose(double["plain"][0].grad_norm, alone.grad_norm, rtol=1e-12)
    with pytest.raises(ValueError, match="dtype"):
        gf.depth_sweep([3], dtype=torch.float16)
    with pytest.raises(ValueError, match="depths"):
        gf.depth_sweep([])
    with pytest.raises(ValueError, match="depths"):
        gf.depth_sweep([10, 0])


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="depth"):
        gf.streamed_profile(0)
    with pytest.raises(ValueError, match="depth"):
        gf.widget_profile(-5, True, "pre", 1.0)
    with pytest.raises(ValueError, match="norm"):
        gf.streamed_profile(3, 8, norm="middle")
    with pytest.raises(ValueError, match="norm"):
        gf.widget_profile(30, True, "both", 1.0)
    with pytest.raises(TypeError, match="residual"):
        gf.widget_profile(30, 1, "pre", 1.0)
    with pytest.raises(ValueError, match="scale"):
        gf.widget_profile(30, True, "pre", "half")
    with pytest.raises(TypeError, match="stack"):
        gf.profile_stack([torch.nn.Identity()], torch.ones(2, 3))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        gf.profile_stack(make_stack(1, 4), np.ones((2, 4)))
    with pytest.raises(ValueError, match="last dimension d=4"):
        gf.profile_stack(make_stack(1, 4), torch.ones(2, 5))
    with pytest.raises(ValueError, match="upstream"):
        gf.profile_stack(make_stack(1, 4), torch.ones(2, 4), torch.ones(3, 4))
    with pytest.raises(ValueError, match="tokens"):
        gf.probe(0, 8, 0)


@pytest.mark.parametrize("depth, residual, norm, scale", [
    (30, True, "pre", 1.0), (30, False, "post", "rezero"), (10, True, "post", 4.0),
    (1000, True, "pre", "rezero"), (1000, False, "pre", 1.0), (1000, True, "post", 4.0)])
def test_widget_draw_gives_a_plot_and_a_meaningful_table_at_every_setting(depth, residual, norm, scale):
    fig = Figure()
    text = gf.draw_gradient_flow(fig, depth=depth, residual=residual, norm=norm, scale=scale)
    assert len(fig.axes) == 1 and fig.axes[0].get_lines()
    assert f"blocks                   {depth}" in text
    profile = gf.widget_profile(depth, residual, norm, scale)
    assert np.isfinite(profile.grad_norm).all()
    if not residual:
        assert "norm position and scale do not apply" in text
        assert profile is gf.widget_profile(depth, False, "post", 2.0)  # one measurement, whatever is greyed out
    if residual and scale == "rezero" and norm == "pre":
        assert "gain input/output        1\n" in text and "exactly 1" in text


@pytest.mark.parametrize("depth", [30, 1000])
def test_widget_draw_keeps_redraws_cheap(depth):
    # No layout engine and few x ticks keep a redraw short.
    fig = Figure(layout="constrained")
    gf.draw_gradient_flow(fig, depth=depth)
    ax = fig.axes[0]
    assert fig.get_layout_engine() is None
    ticks = [t for t in ax.get_xticks() if 0 <= t <= depth]
    assert 3 <= len(ticks) <= 6 and all(float(t).is_integer() for t in ticks)


def test_widget_extreme_plain_depth_explodes_and_says_so_in_numbers():
    profile = gf.widget_profile(1000, False, "pre", 1.0)
    assert profile.gain[0] > 1e5
    assert gf.widget_profile(1000, True, "pre", 1.0).gain[0] < 20


def test_panel_greys_out_norm_and_scale_for_a_plain_stack():
    panel = gf.gradient_flow_plot()
    assert panel.controls["depth"].continuous_update is False
    assert "residual, pre-norm, scale 1" in panel.text
    panel.controls["residual"].value = False
    assert panel.controls["norm"].disabled and panel.controls["scale"].disabled
    assert panel.text.startswith("configuration            plain")
    panel.controls["residual"].value = True
    assert not panel.controls["norm"].disabled


def test_summary_text_names_each_configuration():
    profile = gf.LayerProfile(np.array([2.0, 4.0]), np.zeros(2), np.ones(2))
    name = lambda residual, norm, scale: gf._summary_text(profile, residual, norm, scale).splitlines()[0]
    assert name(True, "pre", 1.0) == "configuration            residual, pre-norm, scale 1"
    assert name(True, "post", "rezero").endswith("  residual, post-norm, ReZero-style gate (alpha = 0 at init)")
    assert name(False, "post", 3.0).startswith("configuration            plain (no skip path")


def test_summary_text_reports_the_profile_and_flags_special_cases():
    profile = gf.LayerProfile(np.array([2.0, 4.0, 8.0]), np.zeros(3), np.array([1.0, 1.5, 2.0]))
    text = gf._summary_text(profile, True, "pre", 1.0)
    assert "blocks                   2" in text
    assert "grad norm at input       2" in text and "grad norm at output      8" in text
    assert "gain input/output        0.25" in text
    assert "activation std in / out  1 / 2" in text
    rezero = gf._summary_text(profile, True, "pre", "rezero")
    assert "every block is the identity" in rezero
    overflow = gf.LayerProfile(np.array([np.inf, 1.0]), np.zeros(2), np.array([1.0, np.nan]))
    assert "overflowed float32" in gf._summary_text(overflow, False, "pre", 1.0)


def test_stack_from_stream_holds_the_streams_weights_and_leaves_torchs_generator_alone():
    torch.manual_seed(9)
    before = torch.rand(1)
    torch.manual_seed(9)
    stack = gf.stack_from_stream(3, 8, 4, residual=False)
    assert torch.equal(torch.rand(1), before)
    assert len(stack) == 3 and torch.equal(stack[2].fc2.weight, gf._WeightStream(8, 4).draw(2)[2])
    with pytest.raises(ValueError, match="depth"):
        gf.stack_from_stream(0)


def test_figures_draw_both_stacks_and_reject_bad_input():
    profile = gf.LayerProfile(np.array([2.0, 4.0, 8.0]), np.zeros(3), np.array([1.0, 1.5, 2.0]))
    fig = Figure()
    gf.draw_layer_profiles(fig, {"plain": profile, "residual": profile})
    assert len(fig.axes) == 2 and all(len(ax.get_lines()) == 2 for ax in fig.axes)
    fig = Figure()
    gf.draw_depth_sweep(fig, [2, 1], {"plain": [profile, profile], "residual": [profile, profile]})
    assert fig.axes[0].get_xscale() == "log" and "2 blocks" in fig.axes[1].get_title()
    with pytest.raises(ValueError, match="profiles"):
        gf.draw_layer_profiles(Figure(), {"plain": profile})
    with pytest.raises(TypeError, match="LayerProfile"):
        gf.draw_layer_profiles(Figure(), {"plain": profile, "residual": [1.0]})
    with pytest.raises(ValueError, match="one profile per depth"):
        gf.draw_depth_sweep(Figure(), [1, 2, 3], {"plain": [profile], "residual": [profile]})


def test_the_static_widget_measures_a_stacks_depths_together_as_the_live_widget_does_one_by_one():
    """notebook 07's static widget (the site) measures STATIC_DEPTHS of a stack in one pass; the
    profiles are those the live widget measures one depth at a time."""
    with gf._static_weights():
        together = [gf.widget_profile(depth, True, "post", 0.5) for depth in gf.STATIC_DEPTHS[:3]]
    assert gf._static_profiles.cache_info().currsize >= 1
    for depth, profile in zip(gf.STATIC_DEPTHS, together):
        alone = gf._cached_profile(depth, True, "post", 0.5)
        assert profile.depth == alone.depth == depth
        np.testing.assert_allclose(profile.grad_norm, alone.grad_norm, rtol=1e-5)
        np.testing.assert_allclose(profile.act_std, alone.act_std, rtol=1e-5)
