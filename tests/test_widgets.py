import html
import json
from pathlib import Path

import ipywidgets
import pytest
from ipywidgets.widgets.widget_link import Link

from benchmarks import widget_sweep
from scripts.build_site import make_plot
from utils import plotting
from utils.widgets import _STILL_DPI, LivePlot, _accepts, default_grid, _describe_figure


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
    depth = {"depth": ipywidgets.IntSlider(value=3, min=1, max=10)}
    with pytest.raises(TypeError, match="greyed must be a dict whose keys are names of controls"):
        LivePlot(_draw, depth, greyed={"scale": lambda values: True})
    with pytest.raises(TypeError, match=r"greyed\['depth'\] must be a function"):
        LivePlot(_draw, depth, greyed={"depth": True})
    with pytest.raises(ValueError, match=r"grid\['depth'\] must be settings controls\['depth'\] accepts, got 11"):
        LivePlot(_draw, depth, grid={"depth": [1, 11]})
    with pytest.raises(TypeError, match=r"grid\['depth'\] must be a non-empty list"):
        LivePlot(_draw, depth, grid={"depth": []})


def test_live_plot_shows_svg_and_text_and_keeps_its_axes():
    depth = ipywidgets.IntSlider(value=3, min=1, max=1000)
    panel = LivePlot(_draw, {"depth": depth})
    ax = panel.figure.axes[0]
    first = panel.image.value
    depth.value = 50
    assert panel.figure.axes == [ax] and len(ax.get_lines()) == 1  # emptied and redrawn, not cleared
    assert len(ax.get_lines()[0].get_xdata()) == 50
    assert panel.image.format == "svg+xml" and bytes(panel.image.value).startswith(b"<?xml") and bytes(panel.image.value) != bytes(first)
    assert panel.caption.value == "<pre>pre depth 50</pre>"
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

def _sweep_every_control(panel):
    """Move every control of ``panel`` through every setting; return the texts it showed."""
    texts = set()
    original = panel.update

    def update():
        original()
        texts.add(panel.text)

    panel.update = update
    records = widget_sweep.measure_panel(panel, min_default_samples=1)
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

    block_panel = blocks.block_plot()
    texts = _sweep_every_control(block_panel)
    assert len(texts) >= 4 and block_panel.controls["scale"].disabled is False
    block_panel.controls["rezero"].value = True
    assert block_panel.controls["scale"].disabled  # ReZero greys out the scale, under 7 and 8 alike
    flow_panel = gradient_flow.gradient_flow_plot()
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


# ---------------------------------------------------------------- the static widget
# Every live plot of the course, as its notebook cell names it in its "live_plot" metadata.

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _live_plot_cells():
    cells = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if "live_plot" in cell.get("metadata", {}):
                cells.append((path.name, cell))
    return cells


def test_every_live_plot_cell_names_its_factory_and_calls_it():
    cells = _live_plot_cells()
    assert [name[:2] for name, _ in cells] == ["02", "03", "05", "07", "09", "11"]
    for name, cell in cells:
        metadata = cell["metadata"]["live_plot"]
        function = metadata["factory"].split(":")[1]
        source = "".join(cell["source"])
        assert f"{function}(" in source and len(source.splitlines()) <= 2, name
        assert metadata["kwargs"] == {}, name  # each cell shows the default the text discusses


def test_the_site_rebuilds_a_plot_from_its_cells_metadata():
    plot = make_plot({"factory": "utils.blocks:block_plot", "kwargs": {"norm": "post"}})
    assert isinstance(plot, LivePlot) and plot.values()["norm"] == "post"


def test_default_grid_offers_every_choice_and_spreads_a_slider():
    depth = ipywidgets.IntSlider(value=20, min=1, max=1000)
    assert default_grid(depth) == [1, 3, 10, 20, 32, 100, 316, 1000]  # log-spaced, with the start
    scale = ipywidgets.FloatSlider(value=0.25, min=0.0, max=3.0, step=0.1)
    assert all(_accepts(scale, v) for v in default_grid(scale)) and 0.25 not in default_grid(scale)
    assert default_grid(ipywidgets.ToggleButtons(options=[("pre", "pre"), ("post", "post")])) == ["pre", "post"]
    assert default_grid(ipywidgets.Checkbox(value=True)) == [True, False]
    assert not _accepts(depth, 1001) and not _accepts(depth, 2.5) and not _accepts(depth, True)
    assert not _accepts(scale, 0.25) and _accepts(scale, 0.3) and not _accepts(scale, float("inf"))
    with pytest.raises(TypeError, match="control must be a slider"):
        default_grid(ipywidgets.Text())


def _sample(plot, name):
    """Two settings of a control: where the lesson starts, and its grid's first other value
    (the cheapest to draw: the smallest depth)."""
    control = plot.controls[name]
    values = plot.grid.get(name) or default_grid(control)
    return [control.value, next(value for value in values if value != control.value)]


def _follow_links(plot, static, setting):
    """What a browser does: set each control's index, let every jslink copy it to its Stack,
    then follow the selected children down to one picture."""
    from ipywidgets.widgets.widget import _instances  # ipywidgets 8, as the static widget

    controls = dict(zip(plot.controls, static.children[0].children))
    for name, value in setting.items():
        controls[name].index = list(controls[name]._options_values).index(value)
    stacks = {id(widget) for widget in _tree(static) if isinstance(widget, ipywidgets.Stack)}
    links = [link for link in list(_instances.values()) if isinstance(link, Link) and id(link.target[0]) in stacks]
    assert links  # the jslinks are widgets of their own, outside the tree, as the site finds them
    for link in links:
        (source, index), (target, selected) = link.source, link.target
        assert (index, selected) == ("index", "selected_index") and isinstance(target, ipywidgets.Stack)
        setattr(target, selected, getattr(source, index))
    node = static.children[1]
    while isinstance(node, ipywidgets.Stack):
        node = node.children[node.selected_index]
    return node


KERNEL_FREE = {"VBox", "HBox", "Stack", "Image", "HTML", "SelectionSlider", "Dropdown", "ToggleButtons"}


def _tree(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _tree(child)


@pytest.mark.parametrize("name, cell", _live_plot_cells(), ids=[name[:2] for name, _ in _live_plot_cells()])
def test_each_static_widget_shows_the_direct_draw_of_the_setting_its_controls_show(name, cell):
    plot = make_plot(cell["metadata"]["live_plot"])
    for setting in plot.static_grid():  # the whole grid: only values the live controls accept
        assert all(_accepts(plot.controls[key], value) for key, value in setting.items()), setting
    assert plot.values() in plot.static_grid()  # the default the text discusses is there
    if not hasattr(ipywidgets, "Stack"):  # ipywidgets 7 (Colab's): no static widget, and it says why
        with pytest.raises(RuntimeError, match="static_widget needs ipywidgets 8"):
            plot.static_widget()
        return
    plot.grid = {key: _sample(plot, key) for key in plot.controls}  # two settings per control
    static = plot.static_widget(processes=1)
    assert len(plot.static_grid()) == 2 ** len(plot.controls)
    for setting in plot.static_grid():
        image, caption = _follow_links(plot, static, setting).children
        fig = plotting._empty_figure(*plot.size)
        text = plot.draw(fig, **setting)
        assert bytes(image.value) == plotting._figure_small_png(fig, dpi=_STILL_DPI), (name, setting)
        assert caption.value == f"<pre>{html.escape(text)}</pre>"
        assert image.tooltip == _describe_figure(fig, text) and len(image.tooltip) > 40
    assert {type(widget).__name__ for widget in _tree(static)} <= KERNEL_FREE


def test_static_pictures_drawn_in_two_processes_are_the_ones_drawn_here():
    from utils import slopes

    if not hasattr(ipywidgets, "Stack"):
        with pytest.raises(RuntimeError, match="ipywidgets 8 or newer"):
            slopes.slope_products_plot().static_widget()
        return
    here, forked = slopes.slope_products_plot(), slopes.slope_products_plot()
    for plot in (here, forked):
        plot.grid = {"depth": [1, 20], "plain_slope": [0.5], "edit": [0.05, 1.0]}
    pictures = [[bytes(w.value) for w in _tree(plot.static_widget(processes=n)) if isinstance(w, ipywidgets.Image)]
                for plot, n in ((here, 1), (forked, 2))]
    assert len(pictures[0]) == 4 and pictures[0] == pictures[1]


def test_one_pool_draws_the_pictures_of_several_plots_as_each_plot_draws_its_own():
    from utils import blocks, slopes
    from utils.widgets import draw_static_pictures

    if not hasattr(ipywidgets, "Stack"):
        return  # the static widget itself needs ipywidgets 8 (tested above)

    def plots():
        small_slopes, small_blocks = slopes.slope_products_plot(), blocks.block_plot()
        small_slopes.grid = {"depth": [1, 20], "plain_slope": [0.5], "edit": [0.05]}
        small_blocks.grid = {name: [control.value] for name, control in small_blocks.controls.items()}
        small_blocks.grid["scale"] = [0.0, 1.0]
        return [small_slopes, small_blocks]

    together, alone = plots(), plots()
    assert draw_static_pictures(together, processes=2) == 4
    assert draw_static_pictures(together, processes=2) == 0  # nothing is drawn twice
    for shared, own in zip(together, alone):
        pictures = [[bytes(w.value) for w in _tree(plot.static_widget(processes=1)) if isinstance(w, ipywidgets.Image)]
                    for plot in (shared, own)]
        assert len(pictures[0]) == 2 and pictures[0] == pictures[1]
    with pytest.raises(TypeError, match="plots must be a list of LivePlots"):
        draw_static_pictures([object()])
    with pytest.raises(ValueError, match="processes must be at least 1"):
        draw_static_pictures(together, processes=0)


def test_a_static_group_is_drawn_by_one_process_in_grid_order():
    """Settings with one static_group key go to one drawing process, in grid order, so they can
    share a computation; every other setting is a task of its own."""
    import os

    from utils.widgets import draw_static_pictures

    def draw(fig, depth=2, kind="a"):
        fig.subplots().plot(range(depth))
        return f"{kind} {depth} {os.getpid()}"

    controls = {"depth": ipywidgets.IntSlider(value=2, min=1, max=3),
                "kind": ipywidgets.ToggleButtons(options=["a", "b"], value="a")}
    plot = LivePlot(draw, controls, static_group=lambda setting: setting["kind"])
    assert draw_static_pictures([plot], processes=2) == 6
    texts = [text.split() for _, text, _ in plot._stills.values()]
    for kind in ("a", "b"):
        drawn = [(int(depth), pid) for name, depth, pid in texts if name == kind]
        assert sorted(drawn) == drawn and len({pid for _, pid in drawn}) == 1, drawn
    with pytest.raises(TypeError, match="static_group must be a function"):
        LivePlot(draw, controls, static_group="kind")


def test_static_setup_holds_while_the_static_pictures_are_drawn_and_only_then():
    from contextlib import contextmanager

    from utils.widgets import draw_static_pictures

    held = []

    @contextmanager
    def setup():
        held.append("in")
        yield
        held.append("out")

    def draw(fig, depth=2):
        held.append(depth)
        fig.subplots().plot(range(depth))
        return f"depth {depth}"

    plot = LivePlot(draw, {"depth": ipywidgets.IntSlider(value=2, min=1, max=3)}, static_setup=setup)
    held.clear()  # the live picture drawn on creation
    assert draw_static_pictures([plot], processes=1) == 3
    assert held == ["in", 1, 2, 3, "out"]
    with pytest.raises(TypeError, match="static_setup must be a context manager function"):
        LivePlot(draw, {"depth": ipywidgets.IntSlider(value=2, min=1, max=3)}, static_setup="weights")


def test_a_static_widget_names_its_controls_and_which_ones_each_picture_greys_out():
    # The site's page script greys out controls from these classes (site/reading/course-reading.js).
    plot = LivePlot(_draw, {"depth": ipywidgets.IntSlider(value=2, min=1, max=3),
                            "norm": ipywidgets.ToggleButtons(options=["pre", "post"], value="pre")},
                    greyed={"norm": lambda values: values["depth"] == 1})
    if not hasattr(ipywidgets, "Stack"):  # Colab's ipywidgets 7 (a version environment): refused in words
        with pytest.raises(RuntimeError, match="static_widget needs ipywidgets 8 or newer"):
            plot.static_widget(processes=1)
        return
    static = plot.static_widget(processes=1)
    controls = [w for w in _tree(static) if isinstance(w, (ipywidgets.SelectionSlider, ipywidgets.ToggleButtons))]
    assert [w._dom_classes for w in controls] == [("liveplot-control-depth",), ("liveplot-control-norm",)]
    leaves = {w.children[1].value: w._dom_classes for w in _tree(static) if "liveplot-leaf" in w._dom_classes}
    assert leaves == {"<pre>pre depth 1</pre>": ("liveplot-leaf", "liveplot-greys-norm"),
                      "<pre>pre depth 2</pre>": ("liveplot-leaf",), "<pre>post depth 2</pre>": ("liveplot-leaf",),
                      "<pre>pre depth 3</pre>": ("liveplot-leaf",), "<pre>post depth 3</pre>": ("liveplot-leaf",)}
