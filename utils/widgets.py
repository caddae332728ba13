"""The one way the course builds a live plot (``LivePlot``): a plain, tested function
``draw(fig, **values) -> text`` plus named controls, redrawn as SVG whenever a control moves,
and exported as a widget tree that works on a web page with no kernel (``static_widget``)."""
from __future__ import annotations

import contextlib
import html
import itertools
import math
import multiprocessing
import numbers
import sys
import threading
import time
import weakref

import ipywidgets as widgets
import numpy as np
from IPython.display import display

from . import plotting
from .pictures import _Pictures, _RedrawFigure, _nearby_values, _setting_key
from .threads import cpu_share
from .validation import check_callable, check_float, check_int, check_text, invalid

__all__ = ["slider", "default_grid", "LivePlot", "draw_static_pictures"]

_BUSY = "⏳ computing…"
_AHEAD = 4  # settings drawn ahead after each move: a slider's next steps, a choice's other options
_STILL_DPI = 72  # a static widget's pictures: sharp at their own size, half the pixels of the live plot's
_SLIDERS = (widgets.IntSlider, widgets.FloatSlider)
_CHOICES = (widgets.Dropdown, widgets.ToggleButtons, widgets.RadioButtons, widgets.Select, widgets.SelectionSlider)
_SWITCHES = (widgets.Checkbox, widgets.ToggleButton)


def slider(description: str, value, low, high, step=None):
    """A slider in the course's style: its whole label shows, and it redraws once released,
    not at every pixel of a drag (the draw functions take tens of milliseconds). Whole
    numbers give an IntSlider (step 1 unless given), anything else a FloatSlider (step 0.01)."""
    check_text("description", description)
    is_int = lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)
    whole = all(is_int(v) for v in (value, low, high)) and (step is None or is_int(step))
    check = check_int if whole else check_float
    low, high = check("low", low), check("high", high)
    if high < low:
        raise invalid("low", f"at most high = {high}", low)
    value = check("value", value, minimum=low, maximum=high)
    step = check("step", (1 if whole else 0.01) if step is None else step, minimum=0)
    if step <= 0 or step > high - low > 0:
        raise invalid("step", f"above 0 and at most high - low = {high - low}", step)
    kind = widgets.IntSlider if whole else widgets.FloatSlider
    return kind(value=value, min=low, max=high, step=step, description=description,
                style={"description_width": "initial"}, continuous_update=False)


def _accepts(control, value) -> bool:
    """Whether ``control`` can show ``value``: a slider's value inside its range and on its
    steps, one of a choice's options, True or False for a checkbox."""
    if isinstance(control, _SLIDERS):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not control.min <= value <= control.max:
            return False
        steps = (value - control.min) / control.step
        return abs(steps - round(steps)) < 1e-9
    if isinstance(control, _CHOICES):
        return not isinstance(value, np.ndarray) and any(value == option for option in control._options_values)
    return isinstance(control, _SWITCHES) and isinstance(value, bool)


def default_grid(control) -> list:
    """The settings of ``control`` a static widget offers when its lesson names none: every
    option of a choice, both states of a checkbox, seven slider positions (log-spaced for a
    whole-number slider from 1 or more, even steps otherwise) and its current value."""
    if isinstance(control, _CHOICES):
        return list(control._options_values)
    if isinstance(control, _SWITCHES):
        return [control.value, not control.value]
    if not isinstance(control, _SLIDERS):
        raise invalid("control", "a slider, a choice (dropdown, buttons) or a checkbox", control, error=TypeError)
    low, high, step = control.min, control.max, control.step
    spaced = np.geomspace(low, high, 7) if isinstance(control, widgets.IntSlider) and low >= 1 else np.linspace(low, high, 7)
    snapped = {min(high, low + round((v - low) / step) * step) for v in spaced}
    if _accepts(control, control.value):
        snapped.add(control.value)
    return sorted(int(v) if isinstance(control, widgets.IntSlider) else float(f"{v:.12g}") for v in snapped)


class LivePlot:
    """Controls on top, a status line, then the picture and its text: the course's one live plot.

    ``draw`` is called with the values of ``controls`` (its keywords); ``greyed[name](values)``
    says when a control does not matter, ``grid[name]`` lists the settings a static widget offers
    and ``static_setup()`` holds what those pictures share; ``static_group(setting)``, if given,
    names the settings one drawing process draws together, in grid order, so that they can share
    a computation (notebook 07's depths of one configuration: one pass through the deepest). ``keep_pictures = False`` stops the
    drawing ahead (for benchmarks). The text is an ``HTML``, not an ``Output``, whose state
    notebook executors (nbclient) would echo back to the kernel and then miss the cell's reply."""

    instances: "weakref.WeakSet[LivePlot]" = weakref.WeakSet()
    keep_pictures = True

    def __init__(self, draw, controls: dict, *, width: float = 7.0, height: float = 4.0,
                 greyed: dict | None = None, grid: dict | None = None, static_setup=None, static_group=None):
        check_callable("draw", draw, what="a function draw(fig, **values)")
        if static_setup is not None:
            check_callable("static_setup", static_setup, what="a context manager function, or None")
        if static_group is not None:
            check_callable("static_group", static_group, what="a function setting -> hashable key, or None")
        if not isinstance(controls, dict) or not controls:
            raise invalid("controls", "a non-empty dict mapping draw's keywords to widgets", controls, error=TypeError)
        for name, control in controls.items():
            if not isinstance(control, widgets.ValueWidget):
                raise invalid(f"controls[{name!r}]", "an ipywidgets value widget", control, error=TypeError)
        for what, mapping in (("greyed", greyed), ("grid", grid)):
            if not isinstance(mapping, dict | None) or not set(mapping or ()) <= set(controls):
                raise invalid(what, "a dict whose keys are names of controls"
                              f" ({', '.join(controls)})", mapping, error=TypeError)
        self.greyed, self.grid = dict(greyed or {}), dict(grid or {})
        for name, rule in self.greyed.items():
            check_callable(f"greyed[{name!r}]", rule, what="a function values -> bool")
        for name, values in self.grid.items():
            if not isinstance(values, (list, tuple)) or not values:
                raise invalid(f"grid[{name!r}]", "a non-empty list of settings", values, error=TypeError)
            for value in values:
                if not _accepts(controls[name], value):
                    raise invalid(f"grid[{name!r}]", f"settings controls[{name!r}] accepts", value)
        self.size = (check_float("width", width, minimum=1, maximum=30),
                     check_float("height", height, minimum=1, maximum=30))
        self.draw, self.static_setup, self.static_group, self.controls = draw, static_setup, static_group, controls
        self.first = self.values()  # the setting the text discusses: a greyed control's stand-in
        self.figure = _RedrawFigure(*self.size)
        self.status = widgets.HTML(value="").add_class("liveplot-status")
        pixels = round(self.size[0] * plotting.HOUSE_STYLE["figure.dpi"])  # as wide as the stored PNG of the same figure
        self.image = widgets.Image(format="svg+xml", layout=widgets.Layout(width=f"{pixels}px", max_width="100%",
                                                                           height="auto"))
        self.caption = widgets.HTML(value="").add_class("liveplot-caption")
        self.pictures = _Pictures(self._render, _RedrawFigure(*self.size))
        self.text = self.last_seconds = self.last_kept = None
        self._stills: dict = {}  # static pictures by setting
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.widget = widgets.VBox([self._row(controls.values()), self.status, self.image, self.caption])
        self.widget.add_class("liveplot")
        LivePlot.instances.add(self)
        self._grey_out()
        self.update()

    def values(self) -> dict:
        """The current value of every control, by keyword."""
        return {name: control.value for name, control in self.controls.items()}

    def update(self) -> None:
        """Show the picture for the current values: the one drawn ahead, or a new one."""
        start = time.perf_counter()
        values = self.values()
        picture = self.pictures.find(values) if LivePlot.keep_pictures else None
        self.last_kept = picture is not None
        if picture is None:
            self.status.value = _BUSY
            picture = self.pictures.draw(self.figure, values)
        svg, self.text = picture
        # The text first: the page shows each message in order, so a new picture never sits
        # above the previous setting's text (the background thread can delay the second message).
        self.caption.value = _caption(self.text)
        self.image.value = svg
        self.last_seconds = time.perf_counter() - start
        self.status.value = ""

    def static_grid(self) -> list[dict]:
        """Every setting the static widget offers: each control's grid, all combinations."""
        grids = {name: self._grid_values(name) for name in self.controls}
        return [dict(zip(grids, setting)) for setting in itertools.product(*grids.values())]

    def static_widget(self, processes: int | None = None) -> widgets.VBox:
        """The same controls, offering only ``static_grid()``, over nested ``Stack``s of small PNGs
        with their text, wired by ``jslink``s alone (widgets outside the tree: a page embeds them
        too), so it works with no kernel. Settings that differ only in a greyed control share a
        picture. Needs ipywidgets 8 (``Stack``). For a page script to grey out controls as the live
        plot does, each control carries the DOM class ``liveplot-control-<name>`` and each picture
        with its text (``liveplot-leaf``) ``liveplot-greys-<name>`` for each control greyed there."""
        if not hasattr(widgets, "Stack"):
            raise RuntimeError(f"static_widget needs ipywidgets 8 or newer (its Stack widget); this kernel has "
                               f"ipywidgets {widgets.__version__}. Build the course's site with requirements.txt.")
        names = list(self.controls)
        grids = {name: self._grid_values(name) for name in names}
        static = {name: _static_control(self.controls[name], grids[name]).add_class(f"liveplot-control-{name}")
                  for name in names}
        draw_static_pictures([self], processes)
        leaves, stacks = {}, {}
        # One layout for every picture, shown at its own size (_STILL_DPI): a page holds hundreds.
        layout = widgets.Layout(width=f"{round(self.size[0] * _STILL_DPI)}px", max_width="100%", height="auto")

        def tree(level: int, setting: dict):
            if level == len(names):
                stand_in = self._stand_in(setting)
                key = _setting_key(stand_in)
                if key not in leaves:
                    png, text, alt = self._stills[key]
                    leaves[key] = widgets.VBox([widgets.Image(value=png, format="png", tooltip=alt, layout=layout),
                                                widgets.HTML(value=_caption(text))]).add_class("liveplot-leaf")
                    for name in self.greyed:
                        if self.greyed[name](stand_in):
                            leaves[key].add_class(f"liveplot-greys-{name}")
                return leaves[key]
            name = names[level]
            children = tuple(tree(level + 1, {**setting, name: value}) for value in grids[name])
            if all(child is children[0] for child in children):  # this control changes nothing here
                return children[0]
            key = tuple(id(child) for child in children)
            if key not in stacks:
                stacks[key] = widgets.Stack(children=children,
                                            selected_index=grids[name].index(self.controls[name].value))
                widgets.jslink((static[name], "index"), (stacks[key], "selected_index"))
            return stacks[key]

        return widgets.VBox([self._row(static.values()), tree(0, {})]).add_class("liveplot-static")

    def _grid_values(self, name: str) -> list:
        control = self.controls[name]
        values = list(self.grid.get(name) or default_grid(control))
        if not any(value == control.value for value in values):
            values.append(control.value)  # the setting the lesson starts from is always there
            if isinstance(control, _SLIDERS):
                values.sort()
        return values

    def _stand_in(self, setting: dict) -> dict:
        """``setting`` with every greyed control at its first value: they do not matter there."""
        return {name: self.first[name] if name in self.greyed and self.greyed[name](setting) else value
                for name, value in setting.items()}

    @staticmethod
    def _row(controls) -> widgets.HBox:
        return widgets.HBox(list(controls), layout=widgets.Layout(flex_flow="row wrap"))

    def _render(self, figure, values: dict, still: bool = False) -> tuple:
        """The live picture of ``values`` (SVG bytes) and its text, or if ``still`` the static
        widget's: small PNG bytes, its text and a text equivalent (for the tooltip)."""
        figure.start()
        text = self.draw(figure, **values)
        if still:
            return plotting._figure_small_png(figure, dpi=_STILL_DPI), text or "", _describe_figure(figure, text)
        return plotting._figure_svg(figure).encode(), text

    def _grey_out(self) -> None:
        values = self.values()
        for name, rule in self.greyed.items():
            self.controls[name].disabled = bool(rule(values))

    def _on_change(self, change) -> None:
        self._grey_out()
        self.update()
        if LivePlot.keep_pictures:
            self.pictures.draw_ahead(self.values(), self._next_settings(change["owner"], change["old"])[:_AHEAD])

    def _next_settings(self, moved, previous) -> list[dict]:
        """Settings one move away from now, most likely first: the control just moved,
        onwards in the direction it moved, then every other control."""
        now = self.values()
        down = isinstance(moved, _SLIDERS) and previous > moved.value
        order = sorted(self.controls.items(), key=lambda item: item[1] is not moved)
        return [{**now, name: value}
                for name, control in order if not getattr(control, "disabled", False)
                for value in _nearby_values(control, -1 if down and control is moved else 1)]

    def _ipython_display_(self) -> None:
        display(self.widget)


def draw_static_pictures(plots, processes: int | None = None) -> int:
    """Draw every static picture of ``plots`` not drawn yet in one pool of ``processes`` forked
    processes (the CPU share if None), which keeps every core busy to the end; returns how
    many were drawn. The processes inherit the plots: only settings and pictures cross."""
    if not isinstance(plots, (list, tuple)) or not all(isinstance(plot, LivePlot) for plot in plots):
        raise invalid("plots", "a list of LivePlots", plots, error=TypeError)
    if processes is None:
        processes = max(1, math.floor(cpu_share()))
    processes = check_int("processes", processes, minimum=1, maximum=64)
    groups = {}  # (plot, group): the settings one process draws, in grid order
    for index, plot in enumerate(plots):
        for key, setting in {_setting_key(s): s for s in map(plot._stand_in, plot.static_grid())}.items():
            if key not in plot._stills:
                group = plot.static_group(setting) if plot.static_group is not None else key
                groups.setdefault((index, group), []).append(setting)
    # The largest groups first: the last tasks, small, then keep every process busy to the end.
    tasks = sorted(((index, settings) for (index, _), settings in groups.items()), key=lambda task: -len(task[1]))
    with contextlib.ExitStack() as shared:
        for plot in {id(plots[index]): plots[index] for index, _ in tasks}.values():
            if plot.static_setup is not None:
                shared.enter_context(plot.static_setup())
        if processes > 1 and len(tasks) > 1 and "fork" in multiprocessing.get_all_start_methods():
            global _FORKED
            with plotting.DRAWING:  # no thread of this process is inside matplotlib while it forks
                _FORKED = plots
                pool = multiprocessing.get_context("fork").Pool(min(processes, len(tasks)), _start_forked)
            with pool:
                stills = pool.map(_forked_stills, tasks, chunksize=1)
        else:
            with plotting.DRAWING:  # the live plots' own figures: a drawing ahead may use them
                stills = [[plots[i]._render(plots[i].figure, s, still=True) for s in settings] for i, settings in tasks]
    for (index, settings), drawn in zip(tasks, stills):
        for setting, still in zip(settings, drawn):
            plots[index]._stills[_setting_key(setting)] = still
    return sum(len(settings) for _, settings in tasks)


_FORKED: list = []  # the LivePlots whose static pictures a forked process draws


def _start_forked() -> None:
    plotting.DRAWING = threading.RLock()  # the parent's lock may be held by a thread not copied here
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)  # one process per core already


def _forked_stills(task: tuple[int, list]) -> list:
    index, settings = task
    return [_FORKED[index]._render(_FORKED[index].figure, setting, still=True) for setting in settings]


def _caption(text) -> str:
    return f"<pre>{html.escape(text)}</pre>" if text else ""


def _static_control(control, values: list):
    """A kernel-free stand-in for ``control`` offering only ``values``, with an ``index``
    to link: a slider becomes a SelectionSlider, a checkbox two toggle buttons."""
    if isinstance(control, _SLIDERS):
        kind, labels = widgets.SelectionSlider, {v: f"{v:g}" for v in values}
    elif isinstance(control, _SWITCHES):
        kind, labels = widgets.ToggleButtons, {True: "on", False: "off"}
    else:
        kind, labels = type(control), dict(zip(control._options_values, control._options_labels))
    return kind(options=[(labels[v], v) for v in values], value=control.value,
                description=control.description, style={"description_width": "initial"})


def _describe_figure(fig, text=None) -> str:
    """A text equivalent of a drawn figure, for a picture's tooltip or alt text: its titles,
    what each panel plots against what, and the draw function's ``text``."""
    parts = [fig.get_suptitle()]
    for ax in fig.axes:
        plotted = f"{ax.get_ylabel() or 'values'} against {ax.get_xlabel() or 'position'}"
        parts.append(f"{ax.get_title()}: {plotted}" if ax.get_title() else f"Plot of {plotted}")
    return ". ".join(part.strip().rstrip(".") for part in (*parts, str(text or "")) if part) + "."
