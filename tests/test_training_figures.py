import numpy as np
import pytest

from utils import plotting, training_figures


@pytest.fixture
def shown(monkeypatch):
    """Capture the figures the functions show instead of displaying them."""
    figures = []
    monkeypatch.setattr(plotting, "show", figures.append)
    return figures


def _runs():
    rng = np.random.default_rng(0)
    return {(a, d, s): {"losses": list(rng.uniform(0.01, 2.5, 30)), "train": (0.1, 0.9), "test": (0.2, 0.8)}
            for a in ("plain", "residual") for d in (8, 20) for s in (0, 1)}


def test_training_figures_draw_one_panel_per_depth_or_split(shown):
    runs = _runs()
    training_figures.loss_curves(runs, (8, 20), (0, 1))
    training_figures.error_against_depth(runs, (8, 20), (0, 1))
    assert [len(f.axes) for f in shown] == [2, 2]
    curves = shown[0].axes[0].get_lines()
    assert len(curves) == 2 * 2 + 1  # two seeds per architecture, and the chance line
    assert {line.get_color() for line in curves[:4]} == {plotting.PLAIN_COLOR, plotting.RESIDUAL_COLOR}
    medians = [line for line in shown[1].axes[0].get_lines() if line.get_linestyle() == "-"]
    assert np.allclose(medians[0].get_ydata(), [10.0, 10.0])  # 100 * (1 - 0.9) training error


def test_gradient_ratio_surface_and_lesion_figures_draw(shown):
    training_figures.layer_gradients({"plain": [1.0, 10.0, 1e4], "residual": [1.0, 2.0, 3.0]}, depth=3)
    training_figures.branch_ratios([[2.0, 0.5, 0.2], [2.1, 0.4, 0.2]])
    grid = np.linspace(-1, 1, 3)
    training_figures.loss_surfaces({"plain": (grid, grid, np.full((3, 3), 2.0)),
                                    "residual": (grid, grid, np.outer(grid ** 2 + 0.1, grid ** 2 + 0.1))})
    lesions = {(a, s): (0.9, np.array([0.5, 0.8, 0.85])) for a in ("plain", "residual") for s in (0, 1)}
    training_figures.single_lesions(lesions, (0, 1))
    training_figures.random_lesions({0: np.array([0.9, 0.95]), 2: np.array([0.5, 0.7])}, blocks=3)
    x = np.linspace(-2, 2, 9)
    curves = {(a, b, d): (x, np.sin(x * d), 0.5) for a, b, _ in (("plain", 2, "p"), ("residual", 1, "r"))
              for d in (2, 4)}
    training_figures.gradient_grid(curves, (("plain", 2, "plain"), ("residual", 1, "residual")), (2, 4))
    training_figures.autocorrelation_by_depth({(a, d): 0.5 for a in ("plain", "residual") for d in (2, 4)}, (2, 4))
    assert len(shown) == 7
    assert shown[0].axes[0].get_yscale() == "log" and shown[1].axes[0].get_yscale() == "log"
    assert len(shown[5].axes) == 4
    assert all(t.get_fontsize() >= 11 for f in shown for ax in f.axes for t in (ax.xaxis.label, ax.yaxis.label))


def test_figures_plot_the_values_they_are_given(shown):
    training_figures.branch_ratios(np.array([[2.0, 0.5, 0.2]]))  # a row per seed
    training_figures.single_lesions({(a, s): (0.9, np.array([0.5, 0.8, 0.85])) for a in ("plain", "residual")
                                     for s in (0,)}, (0,))
    training_figures.random_lesions({0: np.array([0.9, 0.95]), 2: np.array([0.5, 0.7, 0.6])}, blocks=3)
    training_figures.autocorrelation_by_depth({("plain", 2): 0.9, ("plain", 4): 0.1, ("residual", 2): 0.95,
                                               ("residual", 4): 0.7}, (2, 4))
    x = np.linspace(-2, 2, 9)
    training_figures.gradient_grid({("plain", 2, 2): (x, 3 * x, 0.5)}, [("plain", 2, "plain")], [2])
    ratios, lesions, random, autocorrelation, grid = shown
    assert np.allclose(ratios.axes[0].get_lines()[0].get_ydata(), [2.0, 0.5, 0.2])
    assert np.allclose(lesions.axes[0].get_lines()[0].get_ydata(), [0.5, 0.8, 0.85])
    assert np.allclose(random.axes[0].get_lines()[0].get_ydata(), [0.925, 0.6])  # medians per k
    lines = autocorrelation.axes[0].get_lines()
    assert np.allclose(lines[0].get_ydata(), [0.9, 0.1]) and np.allclose(lines[1].get_ydata(), [0.95, 0.7])
    assert np.allclose(grid.axes[0].get_lines()[0].get_ydata(), x / 2)  # scaled by its largest |value|


def test_bad_results_are_refused_naming_the_parameter(shown):
    with pytest.raises(ValueError, match="runs must be a dict with an entry for"):
        training_figures.loss_curves(_runs(), (8, 56), (0, 1))
    with pytest.raises(ValueError, match="window"):
        training_figures.loss_curves(_runs(), (8, 20), (0, 1), window=0)
    with pytest.raises(ValueError, match="norms must be one value per weight layer"):
        training_figures.layer_gradients({"plain": [1.0, 2.0], "residual": [1.0, 2.0]}, depth=3)
    with pytest.raises(ValueError, match="surfaces"):
        training_figures.loss_surfaces({"plain": (np.zeros(3), np.zeros(2), np.zeros((3, 3)))})
    with pytest.raises(ValueError, match="accuracies"):
        training_figures.random_lesions({5: [0.5]}, blocks=3)
    with pytest.raises(TypeError, match="rows"):
        training_figures.gradient_grid({("plain", 2, 2): (np.zeros(3), np.ones(3), 0.5)}, ["plain"], [2])
    assert shown == []
