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
