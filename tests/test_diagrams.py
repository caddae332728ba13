import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch

from utils import diagrams, plotting


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_block_diagram_on_the_axes_given():
    fig, ax = plotting.new_figure()
    assert diagrams.draw_residual_block(ax) is ax
    texts = _texts(ax)
    for label in ("x", "W₁", "ReLU", "W₂", "F(x)", "+", "y = x + F(x)", "residual branch F"):
        assert label in texts
    assert any("skip path" in t for t in texts)
    assert sum(isinstance(p, FancyBboxPatch) for p in ax.patches) == 3  # one box per branch layer
    assert sum(isinstance(p, Circle) for p in ax.patches) == 1  # one sum
    assert plotting._figure_png(fig)[:8] == b"\x89PNG\r\n\x1a\n"


def test_block_diagram_bad_input():
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        diagrams.draw_residual_block(Figure())


def test_arrows_put_the_branch_at_the_tip_of_x():
    fig, ax = plotting.new_figure()
    diagrams.draw_block_arrows(ax, [2.0, -1.0], [0.1, 0.3])
    arrows = [(np.array(a.xyann), np.array(a.xy)) for a in ax.texts if hasattr(a, "xyann")]
    (x0, x1), (f0, f1), (y0, y1) = arrows
    np.testing.assert_allclose(x0, [0, 0]); np.testing.assert_allclose(x1, [2, -1])
    np.testing.assert_allclose(f0, [2, -1]); np.testing.assert_allclose(f1, [2.1, -0.7])
    np.testing.assert_allclose(y0, [0, 0]); np.testing.assert_allclose(y1, [2.1, -0.7])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["x = [2, -1]", "F(x) = [0.1, 0.3]", "y = x + F(x) = [2.1, -0.7]"]


@pytest.mark.parametrize("x, branch, error, name", [
    ([1.0, 2.0, 3.0], [0.0, 0.0], ValueError, "x"),
    ([1.0, 2.0], [np.nan, 0.0], ValueError, "branch"),
    ([1.0, 2.0], "ab", TypeError, "branch"),
])
def test_arrows_bad_input(x, branch, error, name):
    with pytest.raises(error, match=name):
        diagrams.draw_block_arrows(Figure().subplots(), x, branch)
