"""Pictures of a widget's draw function, kept by setting and drawn ahead of the learner.

A redraw costs 50-200 ms in matplotlib, but a learner's next setting is almost always one
step away, and they look at each picture for a moment first: so the settings one step away
are drawn in a background thread, under ``plotting.DRAWING`` (matplotlib is not thread-safe)."""
from __future__ import annotations

import atexit
import sys
import threading
import time
import weakref
from collections import OrderedDict

import ipywidgets as widgets
from matplotlib.figure import Figure

from .plotting import DRAWING

__all__: list[str] = []  # the machinery behind widgets.LivePlot: nothing here is for notebooks

_IDLE_SECONDS = 30.0  # a background thread with nothing to draw for this long ends
_SLOW_SECONDS = 0.5  # no drawing ahead from a setting whose picture took longer
_ALL: "weakref.WeakSet[_Pictures]" = weakref.WeakSet()


def _pause_drawing_ahead(*_) -> None:
    """Before each cell: finish every background picture and drop the guesses waiting, so the
    cell has the CPU and torch's global random state to itself (drawing a model under
    ``fork_rng`` restores that state, which would undo or repeat a running cell's draws)."""
    for pictures in list(_ALL):
        with pictures._changed:
            pictures._forget_wanted()
        pictures.idle(10.0)


@atexit.register
def _stop_drawing_ahead() -> None:
    """At exit, let every background thread finish: one inside torch or matplotlib aborts the teardown."""
    for pictures in list(_ALL):
        pictures.stop()


class _RedrawFigure(Figure):
    """A figure a widget draws into again and again: after ``start()``, ``subplots`` called as in
    the last drawing hands back the same axes, emptied, which skips making the axes and ticks
    again (a third of a redraw). The picture is a fresh figure's (tested pixel for pixel)."""

    _kept = None  # (subplots' arguments, the axes it returned, every axes of the figure)

    def __init__(self, width: float = 7.0, height: float = 4.0):
        super().__init__(figsize=(width, height), layout="constrained")

    def start(self) -> None:
        """Empty the figure for the next drawing, keeping the axes ``subplots`` made."""
        if self._kept is None or self.axes != self._kept[2]:
            self.clear()
            return
        for ax in self.axes:  # back to what a new Axes draws, except that its tick objects are kept
            for artist in (*ax.lines, *ax.collections, *ax.patches, *ax.texts, *ax.images):
                artist.remove()
            if ax.get_legend() is not None:
                ax.get_legend().remove()
            for loc in ("left", "center", "right"):
                ax.set_title("", loc=loc)
            ax.set(xlabel="", ylabel="", xscale="linear", yscale="linear")  # resets locators too
            ax.set_prop_cycle(None)  # the next curve takes the first colour again, as on new axes
            ax.relim()
            ax.set_autoscale_on(True)
        for artist in (*self.legends, *self.texts):
            artist.remove()
        self._suptitle = self._supxlabel = self._supylabel = None  # so suptitle() makes a new one

    def subplots(self, *args, **kwargs):
        kept = self._kept
        if kept is not None and kept[0] == (args, kwargs) and self.axes == kept[2]:
            return kept[1]
        self.clear()
        axes = super().subplots(*args, **kwargs)
        self._kept = ((args, kwargs), axes, list(self.axes))
        return axes

    def clear(self, keep_observers: bool = False) -> None:
        self._kept = None
        super().clear(keep_observers)


def _setting_key(values: dict) -> tuple:
    """A hashable name for a setting ``{keyword: value}``, floats rounded to 12 digits so that
    0.1 + 0.01 (a step computed here) and 0.11 (the browser's) name one setting."""
    tidy = lambda v: float(f"{v:.12g}") if isinstance(v, float) else v
    return tuple(sorted((name, tidy(value)) for name, value in values.items()))


def _nearby_values(control, direction: int = 1) -> list:
    """The values one move away from ``control``'s, most likely first: a slider's next step in
    ``direction`` (+1 or -1: the way it last moved) then the step back, a selection slider's
    neighbours, every other option, the other state of a checkbox (nothing for other controls)."""
    value = control.value
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
        steps = (value + direction * control.step, value - direction * control.step)
        return [v for v in steps if control.min <= v <= control.max]
    options = getattr(control, "_options_values", None)
    if options is not None and not isinstance(value, tuple):
        if isinstance(control, widgets.SelectionSlider):
            here = options.index(value)
            return [options[i] for i in (here + direction, here - direction) if 0 <= i < len(options)]
        return [option for option in options if option != value]
    if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        return [not value]
    return []


class _Pictures:
    """The last ``capacity`` pictures ``render(figure, values)`` gave, by setting; ``draw_ahead``
    draws more in a background thread into ``spare_figure``. ``clock`` times each drawing and
    a setting that took longer than ``slow_seconds`` is not drawn ahead of: a test sets both,
    so what counts as slow is its choice, not the machine's load."""

    def __init__(self, render, spare_figure, *, capacity: int = 48, clock=time.perf_counter,
                 slow_seconds: float = _SLOW_SECONDS):
        self.capacity = capacity
        self.clock, self.slow_seconds = clock, slow_seconds
        self._render = render
        self._spare = spare_figure
        self._kept: OrderedDict = OrderedDict()
        self._wanted: list[dict] = []
        self._drawing_ahead = None  # the key the background thread is drawing now
        self._changed = threading.Condition()
        self._thread = None
        self._stopped = False
        self.drawn_ahead = 0  # how many pictures the background thread has drawn
        _ALL.add(self)
        shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
        if shell is not None and _pause_drawing_ahead not in shell.events.callbacks["pre_run_cell"]:
            shell.events.register("pre_run_cell", _pause_drawing_ahead)  # once per kernel

    def __len__(self) -> int:
        return len(self._kept)

    def find(self, values: dict):
        """The kept picture for ``values`` (waiting if it is being drawn ahead), or None. Forgets
        the settings waiting to be drawn ahead: the learner has moved, they are stale guesses."""
        key = _setting_key(values)
        with self._changed:
            self._forget_wanted()
            while self._drawing_ahead == key:
                self._changed.wait()
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key][0]
        return None

    def seconds(self, values: dict) -> float | None:
        """How long the kept picture for ``values`` took to draw (None if none is kept)."""
        with self._changed:
            return self._kept.get(_setting_key(values), (None, None))[1]

    def draw(self, figure, values: dict):
        """Draw ``values`` into ``figure`` now (in the caller's thread), keep and return it."""
        picture, seconds = self._timed(figure, values)
        with self._changed:
            self._keep(_setting_key(values), picture, seconds)
        return picture

    def _timed(self, figure, values: dict):
        with DRAWING:
            start = self.clock()
            return self._render(figure, values), self.clock() - start

    def draw_ahead(self, now: dict, settings: list[dict]) -> None:
        """Draw ``settings`` (a learner's likely next ones) in the background, in this order,
        replacing earlier requests; nothing if ``now`` was slow to draw."""
        seconds = self.seconds(now)
        if seconds is None or seconds > self.slow_seconds:
            return
        with self._changed:
            if self._stopped:
                return
            self._wanted = [s for s in settings if _setting_key(s) not in self._kept]
            if self._wanted and self._thread is None:
                self._thread = threading.Thread(target=self._work, name="pictures-ahead", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def idle(self, timeout: float = 10.0) -> bool:
        """Whether nothing is being or waiting to be drawn ahead within ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._wanted and self._drawing_ahead is None, timeout)

    def _forget_wanted(self) -> None:
        self._wanted.clear()
        self._changed.notify_all()

    def stop(self, timeout: float = 10.0) -> None:
        """Draw nothing more ahead; wait (up to ``timeout`` seconds) for a picture in progress."""
        with self._changed:
            self._stopped = True
            self._forget_wanted()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _keep(self, key, picture, seconds: float) -> None:
        self._kept[key] = (picture, seconds)
        self._kept.move_to_end(key)
        while len(self._kept) > self.capacity:
            self._kept.popitem(last=False)

    def _work(self) -> None:
        while True:
            with self._changed:
                self._changed.notify_all()  # for idle(): this thread may have just run out of work
                self._changed.wait_for(lambda: self._wanted or self._stopped, _IDLE_SECONDS)
                if not self._wanted or self._stopped:
                    self._thread = None
                    return
                values = self._wanted.pop(0)
                key = _setting_key(values)
                if key in self._kept:
                    continue
                self._drawing_ahead = key
            try:
                picture, seconds = self._timed(self._spare, values)
            except Exception:  # the kernel's own redraw of this setting will show the error
                picture = None
            with self._changed:
                self._drawing_ahead = None
                if picture is not None:
                    self._keep(key, picture, seconds)
                    self.drawn_ahead += 1
                self._changed.notify_all()
