"""Tests for utils.diagrams.draw_transformer_block (kept apart from the other diagrams' tests)."""
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch

from utils import diagrams


def _labels(ax):
    return [text.get_text() for text in ax.texts]


@pytest.mark.parametrize("norm, layer_norms, on_stream", [("pre", 2, 0), ("post", 2, 2)])
def test_two_residual_connections_and_the_layernorms_where_they_belong(norm, layer_norms, on_stream):
    ax = diagrams.draw_transformer_block(Figure().subplots(), norm=norm)
    labels = _labels(ax)
    assert labels.count("+") == 2  # one sum after attention, one after the FFN
    assert sum(isinstance(p, Circle) for p in ax.patches) == 2
    assert labels.count("LayerNorm") == layer_norms
    assert any("attention" in label for label in labels) and any("feed-forward" in label for label in labels)
    # A post-LN LayerNorm box sits on the stream (x = 0); a pre-LN one on the branch.
    centres = [p.get_x() + p.get_width() / 2 for p in ax.patches if isinstance(p, FancyBboxPatch)]
    assert sum(abs(c) < 1e-9 for c in centres) == on_stream
    assert ax.get_title().lower().startswith(norm)


def test_draws_on_a_given_axes():
    fig = Figure()
    axes = fig.subplots(1, 2)
    assert diagrams.draw_transformer_block(axes[1], norm="post") is axes[1]
    assert axes[1].get_title() == "Post-LN: LayerNorm on the stream" and not axes[0].patches


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="norm"):
        diagrams.draw_transformer_block(Figure().subplots(), norm="sandwich")
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        diagrams.draw_transformer_block(Figure())
