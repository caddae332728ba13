"""A progress bar for work of more than a few seconds: tqdm's (a widget in JupyterLab, Colab
and VS Code, text elsewhere), showing only the count, since the time and rate it shows by
default would change a saved notebook (and the site) on every run.

A saved notebook keeps, beside the widget, the text the bar had when it was first shown:
"0%". Wherever the widget is not drawn from the saved state (GitHub, nbviewer, a viewer
without ipywidgets, the text the tests compare) that text is what a reader sees. So the
widget bar is shown with a display id and shown again, full, when it closes: the saved
output then reads "training: 100%|██████████| 30/30"."""
from __future__ import annotations

from IPython.display import display
from tqdm.auto import tqdm
from tqdm.notebook import tqdm as notebook_tqdm

from .validation import check_int, check_text

__all__ = ["progress_bar"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
BAR_FORMAT = "{l_bar}{bar:10}| {n_fmt}/{total_fmt}"  # l_bar: "description: 100%|"; 10 wide in every tqdm


class _WidgetBarSavedFull(notebook_tqdm):
    """tqdm's widget bar whose output is replaced by its final state when it closes (an
    ``update_display_data`` message, which nbclient and JupyterLab apply to the saved output)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, display=False, **kwargs)
        # Shown as a raw bundle: ipywidgets 7 displays a widget object itself and drops the
        # display id. None outside a kernel (the bar is printed, there is nothing to update).
        self._shown = None if self.disable else display(self._bundle(), raw=True, display_id=True)
        self.displayed = True

    def _bundle(self) -> dict:
        # The text as print(bar) writes it (blocks; the widget's own text/plain is ASCII).
        return {"text/plain": self.container.__repr__(pretty=True),
                WIDGET_VIEW: {"version_major": 2, "version_minor": 0, "model_id": self.container.model_id}}

    def close(self):
        closing = not self.disable
        super().close()
        shown = getattr(self, "_shown", None)
        if closing and shown is not None:
            shown.update(self._bundle(), raw=True)


def progress_bar(total: int, description: str = "") -> tqdm:
    """``with progress_bar(total, "training") as bar: ... bar.update()``: a tqdm bar of
    ``total`` steps that stays on the page, full, when the work is done (in the saved
    notebook too)."""
    total = check_int("total", total, minimum=1)
    description = check_text("description", description)
    bar = _WidgetBarSavedFull if issubclass(tqdm, notebook_tqdm) else tqdm
    return bar(total=total, desc=description, bar_format=BAR_FORMAT)
