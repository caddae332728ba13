"""A progress bar for work of more than a few seconds: tqdm's (a widget in JupyterLab, Colab
and VS Code, text elsewhere), showing only the count, since the time and rate it shows by
default would change a saved notebook (and the site) on every run."""
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
