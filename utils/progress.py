"""A progress bar for anything that takes more than a few seconds, so a learner sees the
notebook working: tqdm's, which draws a widget bar in JupyterLab, Colab and VS Code and
falls back to text elsewhere.

Its text is only the count: tqdm's default also shows the elapsed time and the rate, which
differ on every run, so a saved notebook (and the course site built from it) would change
each time it is executed."""
from __future__ import annotations

from tqdm.auto import tqdm

from .validation import check_int, check_text

__all__ = ["progress_bar"]

BAR_FORMAT = "{l_bar}{bar:10}| {n_fmt}/{total_fmt}"  # l_bar: "description: 100%|"; 10 wide in every tqdm


def progress_bar(total: int, description: str = "") -> tqdm:
    """``with progress_bar(total, "training") as bar: ... bar.update()``: a tqdm bar of
    ``total`` steps that stays on the page, full, when the work is done."""
    total = check_int("total", total, minimum=1)
    description = check_text("description", description)
    return tqdm(total=total, desc=description, bar_format=BAR_FORMAT)
