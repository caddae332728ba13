"""Widget latency, measured inside the kernel that has just run a notebook.

``benchmarks/run.py`` loads this file by path in that kernel and calls ``measure_all``.
For every ``utils.widgets.LivePlot`` of the kernel and every control of it, the control is
moved across a sweep of its settings (``sweep_values``); each new value is followed by a
move back to the default, so every move is timed from a real change (setting the value a
control already has does nothing) and the default is restored between settings and
between controls. A move redraws synchronously, so the time around
``control.value = v`` is the time from the new value to the redrawn output.

Only ipywidgets is needed here, so the sweep can be unit-tested without a kernel.
"""
from __future__ import annotations

import json
import math
import time

import ipywidgets as widgets

SLIDER_FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _snap(control, value):
    """``value`` moved onto the slider's step grid, inside its range."""
    low, high, step = control.min, control.max, control.step
    if step:
        value = low + round((value - low) / step) * step
    value = min(max(value, low), high)
    if isinstance(control, widgets.IntSlider):
        return int(value)
    digits = max(0, -math.floor(math.log10(step))) + 2 if step else 12
    return round(float(value), digits)


def sweep_values(control) -> tuple[list, list] | None:
    """The settings to time for ``control``, as ``(values, extremes)``, default first.

    Sliders: the default, min, max and the quarter points between (on the step grid; for a
    FloatLogSlider, evenly spaced exponents). Choice controls (Dropdown, ToggleButtons,
    RadioButtons, SelectionSlider, ...): every option. Checkbox and ToggleButton: both
    states. ``extremes`` are the ends of a slider, or every option of a choice. Returns
    None for a control this sweep does not know (range sliders, text boxes).
    """
    default = control.value
    if isinstance(control, widgets.FloatLogSlider):
        exponents = [control.min + f * (control.max - control.min) for f in SLIDER_FRACTIONS]
        values = [float(control.base ** e) for e in exponents]
        extremes = [values[0], values[-1]]
    elif isinstance(control, (widgets.IntSlider, widgets.FloatSlider, widgets.BoundedIntText,
                              widgets.BoundedFloatText)):
        span = control.max - control.min
        values = [_snap(control, control.min + f * span) for f in SLIDER_FRACTIONS]
        extremes = [values[0], values[-1]]
    elif hasattr(control, "_options_values") and not isinstance(control.value, tuple):
        values = list(control._options_values)
        extremes = list(values)
    elif isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        values = [False, True]
        extremes = list(values)
    else:
        return None
    ordered = [default]
    for value in values:
        if value not in ordered:
            ordered.append(value)
    return ordered, [value for value in extremes if value in ordered]


def _time_move(panel, control, value) -> tuple[float, float | None]:
    """Seconds to set ``control`` to ``value`` (the redraw happens inside), and the
    panel's own ``last_seconds`` for that redraw."""
    panel.last_seconds = None
    start = time.perf_counter()
    control.value = value
    seconds = time.perf_counter() - start
    return seconds, panel.last_seconds


def measure_panel(panel, min_default_samples: int = 4) -> list[dict]:
    """Time every control of one LivePlot across its sweep; one record per control.

    The sweep is repeated until the default has been timed ``min_default_samples`` times,
    so a checkbox or a two-option choice gets a median too. Every move is drawn from
    scratch, with no picture kept or drawn ahead (``LivePlot.keep_pictures``)."""
    keeping, type(panel).keep_pictures = type(panel).keep_pictures, False
    try:
        return [_measure_control(panel, name, control, min_default_samples)
                for name, control in panel.controls.items()]
    finally:
        type(panel).keep_pictures = keeping


def _measure_control(panel, name, control, min_default_samples: int) -> dict:
    record = {"control": name, "kind": type(control).__name__, "default": repr(control.value)}
    sweep = sweep_values(control)
    if sweep is None:
        record["skipped"] = f"no sweep for a {type(control).__name__}"
        return record
    values, extremes = sweep
    default = values[0]
    moves, at_default = [], []
    others = values[1:]
    passes = -(-min_default_samples // len(others)) if others else 0
    try:
        for value in others * passes:
            seconds, own = _time_move(panel, control, value)
            moves.append({"value": repr(value), "seconds": seconds, "panel_seconds": own,
                          "extreme": value in extremes})
            seconds, own = _time_move(panel, control, default)
            at_default.append(seconds)
    except Exception as error:  # a benchmark reports a failing redraw, it does not stop
        record["error"] = f"{type(error).__name__}: {error}"
        try:
            control.value = default
        except Exception:
            pass
    record["moves"] = moves
    record["default_seconds"] = at_default
    record["default_is_extreme"] = default in extremes
    return record


def measure_all(path: str | None = None) -> list[dict]:
    """Measure every LivePlot of this kernel; write the records as JSON to ``path``."""
    from utils.widgets import LivePlot

    panels = []
    for panel in list(LivePlot.instances):
        panels.append({"draw": getattr(panel.draw, "__name__", repr(panel.draw)),
                       "model_id": panel.widget.model_id,
                       "controls": measure_panel(panel)})
    if path is not None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(panels, handle)
    return panels
