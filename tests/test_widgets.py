import ipywidgets
import pytest

from utils import plotting
from utils.widgets import LivePlot


def _draw(fig, depth, norm="pre"):
    fig.subplots().plot(range(depth))
    return f"{norm} depth {depth}"


def test_live_plot_redraws_on_every_change_with_current_values():
    depth = ipywidgets.IntSlider(value=3, min=1, max=1000)
    norm = ipywidgets.Dropdown(options=["pre", "post"], value="pre")
    panel = LivePlot(_draw, {"depth": depth, "norm": norm})
    assert panel.text == "pre depth 3" and panel.last_seconds >= 0
    depth.value = 1000
    assert panel.text == "pre depth 1000"
    assert len(panel.figure.axes) == 1  # cleared, not stacked
    assert len(panel.figure.axes[0].get_lines()[0].get_xdata()) == 1000
    norm.value = "post"
    assert panel.values() == {"depth": 1000, "norm": "post"}
    assert panel.text == "post depth 1000" and panel.status.value == ""
    assert panel in LivePlot.instances


def test_live_plot_rejects_bad_arguments():
    with pytest.raises(TypeError, match="draw must be a function"):
        LivePlot("draw", {"depth": ipywidgets.IntSlider()})
    with pytest.raises(TypeError, match="controls must be a non-empty dict"):
        LivePlot(_draw, {})
    with pytest.raises(TypeError, match=r"controls\['depth'\] must be an ipywidgets value widget"):
        LivePlot(_draw, {"depth": 3})


def _draw_reusing(fig, depth):
    plotting.reuse_axes(fig, lambda f: f.subplots()).plot(range(depth))
    return f"depth {depth}"


def test_live_plot_shows_svg_and_text_and_keeps_reused_axes():
    depth = ipywidgets.IntSlider(value=3, min=1, max=1000)
    panel = LivePlot(_draw_reusing, {"depth": depth})
    ax = panel.figure.axes[0]
    first = panel.image.value
    depth.value = 50
    assert panel.figure.axes == [ax] and len(ax.get_lines()) == 1  # emptied and redrawn, not cleared
    assert len(ax.get_lines()[0].get_xdata()) == 50
    assert panel.image.format == "svg+xml" and bytes(panel.image.value).startswith(b"<?xml") and bytes(panel.image.value) != bytes(first)
    assert panel.caption.value == "<pre>depth 50</pre>"
    assert panel.widget.children[1:] == (panel.status, panel.image, panel.caption)
    assert panel.image.layout.width == "700px"  # 7 inches at 100 dpi, like the stored PNGs


def test_live_plot_caption_is_escaped_text():
    panel = LivePlot(lambda fig, n: f"n < {n} & more", {"n": ipywidgets.IntSlider(value=2)})
    assert panel.caption.value == "<pre>n &lt; 2 &amp; more</pre>"
    quiet = LivePlot(lambda fig, n: None, {"n": ipywidgets.IntSlider(value=2)})
    assert quiet.caption.value == "" and bytes(quiet.image.value).startswith(b"<?xml")


# ---------------------------------------------------------------- every control, every setting
# As benchmarks/widget_sweep.py moves them. make test-versions runs this under ipywidgets 7.7.1
# (Colab's) as well as 8, so the one code path is checked with both.

def _sweep_module():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "widget_sweep.py"
    spec = importlib.util.spec_from_file_location("widget_sweep_for_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sweep_every_control(panel):
    """Move every control of ``panel`` through every setting; return the texts it showed."""
    texts = set()
    original = panel.update

    def update():
        original()
        texts.add(panel.text)

    panel.update = update
    records = _sweep_module().measure_panel(panel, min_default_samples=1)
    for record in records:
        assert "skipped" not in record and "error" not in record, record
        assert record["moves"], f"{record['control']} was never moved"
    return texts


def _notebook_style_controls():
    """One of each control the notebooks build, with the options they use."""
    style = {"description_width": "initial"}
    return {
        "depth": ipywidgets.IntSlider(value=20, min=1, max=1000, description="depth (layers)", style=style,
                                      continuous_update=False),
        "slope": ipywidgets.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.01, description="plain slope",
                                        style=style, continuous_update=False),
        "blocks": ipywidgets.ToggleButtons(options=[("two-layer blocks", 2), ("one-layer blocks", 1)], value=2,
                                           description="blocks"),
        "recipe": ipywidgets.Dropdown(options=["default", "rezero"], value="default", description="recipe"),
        "residual": ipywidgets.Checkbox(value=True, description="residual (skip path)"),
    }


def test_every_kind_of_control_the_notebooks_use_moves_through_every_setting():
    def draw(fig, depth, slope, blocks, recipe, residual):
        fig.subplots().plot([0, depth], [0, slope * blocks])
        return f"{depth} {slope:.2f} {blocks} {recipe} {residual}"

    panel = LivePlot(draw, _notebook_style_controls(), width=6, height=3)
    texts = _sweep_every_control(panel)
    assert {"1 0.50 2 default True", "1000 0.50 2 default True", "20 2.00 2 default True",
            "20 0.50 1 default True", "20 0.50 2 rezero True", "20 0.50 2 default False"} <= texts
    assert panel.text == "20 0.50 2 default True"  # back at the default


def test_the_course_widget_factories_move_through_every_setting():
    from utils import blocks, gradient_flow

    block_panel = blocks.make_block_panel()
    texts = _sweep_every_control(block_panel)
    assert len(texts) >= 4 and block_panel.controls["scale"].disabled is False
    block_panel.controls["rezero"].value = True
    assert block_panel.controls["scale"].disabled  # ReZero greys out the scale, under 7 and 8 alike
    flow_panel = gradient_flow.make_panel()
    texts = _sweep_every_control(flow_panel)
    assert len(texts) >= 6
    flow_panel.controls["residual"].value = False
    assert flow_panel.controls["norm"].disabled and flow_panel.controls["scale"].disabled


def test_slider_is_int_for_whole_numbers_and_float_otherwise():
    from utils.widgets import slider

    depth = slider("depth (layers)", 20, 1, 1000)
    assert isinstance(depth, ipywidgets.IntSlider) and (depth.value, depth.min, depth.max, depth.step) == (20, 1, 1000, 1)
    assert depth.continuous_update is False and depth.style.description_width == "initial"
    scale = slider("scale", 0.1, 0.0, 2.0)
    assert isinstance(scale, ipywidgets.FloatSlider) and scale.step == 0.01 and scale.value == 0.1
    assert slider("depth", 18, 2, 200, step=2).step == 2
    with pytest.raises(ValueError, match="value must be at most 2.0"):
        slider("scale", 2.5, 0.0, 2.0)
    with pytest.raises(ValueError, match="low must be at most high = 1"):
        slider("depth", 3, 3, 1)
    with pytest.raises(ValueError, match="step must be above 0"):
        slider("depth", 3, 1, 10, step=0)
