"""A progress bar for anything that takes more than a few seconds, so a learner sees the
notebook working. In a notebook it is an ipywidgets bar; elsewhere it stays silent."""
from __future__ import annotations

import time

import ipywidgets as widgets
from IPython import get_ipython
from IPython.display import display

from .validation import check_int, check_text

__all__ = ["MIN_SECONDS_BETWEEN_UPDATES", "Progress"]

# A training loop may advance thousands of times; sending each step to the browser floods
# the kernel's message channel (and has stalled test runs here). Ten updates a second look
# smooth, and the last step is always shown.
MIN_SECONDS_BETWEEN_UPDATES = 0.1


class Progress:
    """``with Progress(total, "training") as bar: ... bar.advance()``.

    The bar counts steps; its text shows ``done/total``. Outside a notebook kernel (tests,
    benchmarks) nothing is displayed, but the count is still kept in ``done``.
    """

    def __init__(self, total: int, description: str = ""):
        self.total = check_int("total", total, minimum=1)
        self.description = check_text("description", description)
        self.done = 0
        self.bar = widgets.IntProgress(value=0, min=0, max=self.total, description=description)
        self.label = widgets.Label(value=f"0/{self.total}")
        self.shown = get_ipython() is not None and hasattr(get_ipython(), "kernel")
        self._last_update = float("-inf")

    def __enter__(self) -> "Progress":
        if self.shown:
            display(widgets.HBox([self.bar, self.label]))
        return self

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps as done."""
        steps = check_int("steps", steps, minimum=0)
        self.done = min(self.total, self.done + steps)
        now = time.monotonic()
        if self.done == self.total or now - self._last_update >= MIN_SECONDS_BETWEEN_UPDATES:
            self._show_count()
            self._last_update = now

    def _show_count(self) -> None:
        self.bar.value = self.done
        self.label.value = f"{self.done}/{self.total}"

    def __exit__(self, *exc_info) -> None:
        self._show_count()
        if exc_info[0] is None:
            self.bar.bar_style = "success"
        else:
            self.bar.bar_style = "danger"
