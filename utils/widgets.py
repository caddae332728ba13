"""The one way the course wires controls to a picture: a plain, tested function
``draw(fig, **values) -> text`` redrawn, as SVG, into an ``Image`` whenever a control moves.

The widget only wires; all computing lives in the function, which notebooks also call
once directly (``plotting.render``) for the static picture of the default state.
"""
from __future__ import annotations

import html
import numbers
import time
import weakref

import ipywidgets as widgets
from IPython.display import display

from . import plotting
from .pictures import Pictures, nearby_values
from .validation import check_callable, check_float, check_int, check_text, invalid

BUSY = "⏳ computing…"
AHEAD = 4  # settings drawn ahead after each move: a slider's next steps, a choice's other options


def slider(description: str, value, low, high, step=None):
    """A slider in the course's style: its whole label shows, and it redraws once released,
    not at every pixel of a drag (the draw functions take tens of milliseconds). Whole
    numbers give an IntSlider (step 1 unless given), anything else a FloatSlider (step 0.01)."""
    check_text("description", description)
    is_int = lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)
    whole = all(is_int(v) for v in (value, low, high)) and (step is None or is_int(step))
    check = check_int if whole else check_float
    low = check("low", low)
    high = check("high", high)
    if high < low:
        raise invalid("low", f"at most high = {high}", low)
    value = check("value", value, minimum=low, maximum=high)
    step = check("step", 1 if whole else 0.01, minimum=0) if step is None else check("step", step, minimum=0)
    if step <= 0 or step > high - low > 0:
        raise invalid("step", f"above 0 and at most high - low = {high - low}", step)
    kind = widgets.IntSlider if whole else widgets.FloatSlider
    return kind(value=value, min=low, max=high, step=step, description=description,
                style={"description_width": "initial"}, continuous_update=False)


class LivePlot:
    """Controls on top, a status line, then the picture and its text.

    ``controls`` maps each keyword of ``draw`` to an ipywidgets value widget. Moving any
    control redraws at once (set ``continuous_update=False`` on sliders of slow
    functions). ``last_seconds`` holds how long the last redraw took (``last_kept``: whether
    its picture had been drawn ahead), and ``LivePlot.instances`` every live panel of the
    kernel, so a benchmark can drive them.

    After a learner's move, the settings one move away are drawn ahead in the background
    (``utils.pictures``), so the next step usually only sends a finished picture. Set
    ``LivePlot.keep_pictures = False`` to draw every move from scratch (as a benchmark times it).

    The picture is an ``Image`` widget and the text an ``HTML`` one, not an ``Output``:
    a redraw is then one message per widget, and notebook executors (nbclient, behind
    ``jupyter nbconvert --execute``) never have to echo an Output's state back to the
    kernel, which could make them miss the cell's reply and wait out their whole timeout.
    """

    instances: "weakref.WeakSet[LivePlot]" = weakref.WeakSet()
    keep_pictures = True

    def __init__(self, draw, controls: dict, *, width: float = 7.0, height: float = 4.0):
        check_callable("draw", draw, what="a function draw(fig, **values)")
        if not isinstance(controls, dict) or not controls:
            raise invalid("controls", "a non-empty dict mapping draw's keywords to widgets", controls, error=TypeError)
        for name, control in controls.items():
            if not isinstance(control, widgets.ValueWidget):
                raise invalid(f"controls[{name!r}]", "an ipywidgets value widget", control, error=TypeError)
        width = check_float("width", width, minimum=1, maximum=30)
        height = check_float("height", height, minimum=1, maximum=30)
        self.draw = draw
        self.controls = controls
        self.figure = plotting.empty_figure(width, height)
        self.status = widgets.HTML(value="")
        pixels = round(width * self.figure.dpi)  # as wide as the stored PNG of the same figure
        self.image = widgets.Image(format="svg+xml", layout=widgets.Layout(
            width=f"{pixels}px", max_width="100%", height="auto"))
        self.caption = widgets.HTML(value="")
        self.status.add_class("liveplot-status")
        self.caption.add_class("liveplot-caption")
        self.pictures = Pictures(self._render, plotting.empty_figure(width, height))
        self.text = None
        self.last_seconds = None
        self.last_kept = None
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.widget = widgets.VBox([widgets.HBox(list(controls.values()),
                                                 layout=widgets.Layout(flex_flow="row wrap")),
                                    self.status, self.image, self.caption])
        self.widget.add_class("liveplot")
        LivePlot.instances.add(self)
        self.update()

    def values(self) -> dict:
        """The current value of every control, by keyword."""
        return {name: control.value for name, control in self.controls.items()}

    def update(self) -> None:
        """Show the picture for the current values: the one drawn ahead, or a new one
        (with a busy status meanwhile)."""
        start = time.perf_counter()
        values = self.values()
        picture = self.pictures.find(values) if LivePlot.keep_pictures else None
        self.last_kept = picture is not None
        if picture is None:
            self.status.value = BUSY
            picture = self.pictures.draw(self.figure, values)
        svg, self.text = picture
        # The text first: the page shows each message in order, so a new picture never sits
        # above the previous setting's text (the background thread can delay the second message).
        self.caption.value = f"<pre>{html.escape(self.text)}</pre>" if self.text else ""
        self.image.value = svg
        self.last_seconds = time.perf_counter() - start
        self.status.value = ""

    def _render(self, figure, values: dict) -> tuple[bytes, str | None]:
        if not plotting.reuses_axes(figure):
            figure.clear()
        text = self.draw(figure, **values)
        return plotting.figure_svg(figure).encode(), text

    def _on_change(self, change) -> None:
        self.update()
        if LivePlot.keep_pictures:
            self.pictures.draw_ahead(self.values(), self._next_settings(change["owner"], change["old"])[:AHEAD])

    def _next_settings(self, moved, previous) -> list[dict]:
        """Settings one move away from now, most likely first: the control just moved,
        onwards in the direction it moved, then every other control."""
        now = self.values()
        down = isinstance(moved, (widgets.IntSlider, widgets.FloatSlider)) and previous > moved.value
        order = sorted(self.controls.items(), key=lambda item: item[1] is not moved)
        return [{**now, name: value}
                for name, control in order if not getattr(control, "disabled", False)
                for value in nearby_values(control, -1 if down and control is moved else 1)]

    def _ipython_display_(self) -> None:
        display(self.widget)
