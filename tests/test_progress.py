import re
from pathlib import Path

import pytest

from utils.progress import progress_bar


def test_progress_bar_counts_and_shows_no_time_or_rate():
    with progress_bar(3, "training") as bar:
        bar.update()
        bar.update(2)
    assert bar.n == bar.total == 3
    text = str(bar)
    assert text.startswith("training: 100%|") and text.endswith("| 3/3")
    assert not re.search(r"\d\d:\d\d|it/s|s/it", text)  # a saved notebook would change with every run


def test_progress_bar_text_is_the_same_on_every_run():
    texts = set()
    for _ in range(2):
        with progress_bar(4) as bar:
            bar.update(4)
        texts.add(str(bar))
    assert texts == {"100%|" + "█" * 10 + "| 4/4"}


def test_progress_bar_rejects_bad_input():
    with pytest.raises(ValueError, match="total must be at least 1"):
        progress_bar(0)
    with pytest.raises(TypeError, match="description must be a str"):
        progress_bar(3, 7)


def test_a_saved_notebook_stores_the_finished_bar():
    """Run in a kernel and saved as scripts/execute_notebooks.py saves the course: the stored
    output's text (what a viewer without the widget state shows) and the widget's saved
    state both show the bar full, not the "0%" it had when it was first shown."""
    import nbformat

    from scripts.execute_notebooks import notebook_client

    code = "from utils.progress import progress_bar\nwith progress_bar(30, 'training') as bar:\n    bar.update(30)"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    notebook_client(notebook, Path(__file__).resolve().parent, timeout=120).execute()
    [output] = notebook.cells[0].outputs
    assert output.data["text/plain"] == "training: 100%|" + "█" * 10 + "| 30/30"
    state = notebook.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    shown = state[output.data["application/vnd.jupyter.widget-view+json"]["model_id"]]["state"]
    [progress] = [state[child.removeprefix("IPY_MODEL_")] for child in shown["children"]
                  if state[child.removeprefix("IPY_MODEL_")]["model_name"] == "FloatProgressModel"]
    assert progress["state"]["value"] == progress["state"]["max"] == 30
    assert progress["state"]["bar_style"] == "success"
