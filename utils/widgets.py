"""The one way the course wires controls to a picture: a plain, tested function
``draw(fig, **values) -> text`` redrawn, as SVG, into an ``Image`` whenever a control moves.

The widget only wires; all computing lives in the function, which notebooks also call
once directly (``plotting.render``) for the static picture of the default state.
"""
from __future__ import annotations

import html
import time
import weakref

import ipywidgets as widgets
from IPython.display import display

from . import plotting
from .validation import check_callable, check_float, invalid

BUSY = "⏳ computing…"


class LivePlot:
    """Controls on top, a status line, then the picture and its text.

    ``controls`` maps each keyword of ``draw`` to an ipywidgets value widget. Moving any
    control redraws at once (set ``continuous_update=False`` on sliders of slow
    functions). ``last_seconds`` holds how long the last redraw took, and
    ``LivePlot.instances`` every live panel of the kernel, so a benchmark can drive them.

    The picture is an ``Image`` widget and the text an ``HTML`` one, not an ``Output``:
    a redraw is then one message per widget, and notebook executors (nbclient, behind
    ``jupyter nbconvert --execute``) never have to echo an Output's state back to the
    kernel, which could make them miss the cell's reply and wait out their whole timeout.
    """

    instances: "weakref.WeakSet[LivePlot]" = weakref.WeakSet()

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
        self.text = None
        self.last_seconds = None
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
        """Recompute and redraw with the current values, showing a busy state meanwhile."""
        self.status.value = BUSY
        start = time.perf_counter()
        if not plotting.reuses_axes(self.figure):
            self.figure.clear()
        self.text = self.draw(self.figure, **self.values())
        self.image.value = plotting.figure_svg(self.figure).encode()
        self.caption.value = f"<pre>{html.escape(self.text)}</pre>" if self.text else ""
        self.last_seconds = time.perf_counter() - start
        self.status.value = ""

    def _on_change(self, _change) -> None:
        self.update()

    def _ipython_display_(self) -> None:
        display(self.widget)
