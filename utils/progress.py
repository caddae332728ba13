"""A progress bar for anything that takes more than a few seconds, so a learner sees the
notebook working. In a notebook it is an ipywidgets bar; elsewhere it stays silent."""
from __future__ import annotations

import ipywidgets as widgets
from IPython import get_ipython
from IPython.display import display

from .validation import check_int


class Progress:
    """``with Progress(total, "training") as bar: ... bar.advance()``.

    The bar counts steps; its text shows ``done/total``. Outside a notebook kernel (tests,
    benchmarks) nothing is displayed, but the count is still kept in ``done``.
    """

    def __init__(self, total: int, description: str = ""):
        self.total = check_int("total", total, minimum=1)
        if not isinstance(description, str):
            raise TypeError(f"description must be a str, got {type(description).__name__}")
        self.description = description
        self.done = 0
        self.bar = widgets.IntProgress(value=0, min=0, max=self.total, description=description)
        self.label = widgets.Label(value=f"0/{self.total}")
        self.shown = get_ipython() is not None and hasattr(get_ipython(), "kernel")

    def __enter__(self) -> "Progress":
        if self.shown:
            display(widgets.HBox([self.bar, self.label]))
        return self

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps as done."""
        steps = check_int("steps", steps, minimum=0)
        self.done = min(self.total, self.done + steps)
        self.bar.value = self.done
        self.label.value = f"{self.done}/{self.total}"

    def __exit__(self, *exc_info) -> None:
        if exc_info[0] is None:
            self.bar.bar_style = "success"
        else:
            self.bar.bar_style = "danger"
