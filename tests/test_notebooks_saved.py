"""Every notebook is stored as it really runs: executed top to bottom in one go from a
fresh kernel and saved, with outputs, without errors. nbval cannot see this by itself:
a cell stored with no execution count is not compared at all."""
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_the_course_has_notebooks():
    assert NOTEBOOKS, "no notebooks found in notebooks/"
    assert NOTEBOOKS[0].name == "00_start_here.ipynb"


def _code_cells(path):
    notebook = nbformat.read(path, as_version=4)
    return [cell for cell in notebook.cells if cell.cell_type == "code" and cell.source.strip()]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_was_executed_top_to_bottom(path):
    cells = _code_cells(path)
    assert cells, f"{path.name} has no code cells"
    counts = [cell.execution_count for cell in cells]
    assert None not in counts, (
        f"{path.name}: {counts.count(None)} code cell(s) have no stored output; "
        "run python -m scripts.execute_notebooks " + f"notebooks/{path.name}")
    assert counts == list(range(1, len(cells) + 1)), (
        f"{path.name}: execution counts {counts} are not 1..{len(cells)}; re-execute it from a fresh kernel")
    assert any(cell.outputs for cell in cells), f"{path.name}: no cell has any output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_stores_no_error_or_warning(path):
    for index, cell in enumerate(_code_cells(path)):
        for output in cell.outputs:
            assert output.output_type != "error", f"{path.name} cell {index}: stored error {output.get('ename')}"
            if output.output_type == "stream" and output.name == "stderr":
                text = output.text
                assert "Warning" not in text and "Traceback" not in text, (
                    f"{path.name} cell {index}: stored warning on stderr: {text[:200]}")


# A tqdm bar as utils.progress writes it ("training:  40%|████      | 12/30"): its percentage and count.
BAR = re.compile(r"(\d+)%\|[^|\n]*\|\s*(\d+)/(\d+)")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _stored_texts(notebook):
    """Every text a reader may see of each cell's outputs: the plain text (what a viewer
    without the widget state shows), a stream as a terminal leaves it (after its last carriage
    return), and the text of the widgets in the saved state."""
    for index, cell in enumerate(cell for cell in notebook.cells if cell.cell_type == "code"):
        for output in cell.outputs:
            if output.output_type == "stream":
                yield f"cell {index}", "\n".join(line.rsplit("\r", 1)[-1] for line in output.text.split("\n"))
            else:
                yield f"cell {index}", str(output.get("data", {}).get("text/plain", ""))
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for model, entry in state.items():
        yield f"widget {model}", str(entry["state"].get("value", "")).replace("\u2007", " ")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_stores_only_finished_progress_bars(path):
    """The work of a stored notebook finished, so every bar it stores is full: in its text,
    and in its widget's saved state (JupyterLab and the site draw that one)."""
    notebook = nbformat.read(path, as_version=4)
    for where, text in _stored_texts(notebook):
        for percent, done, total in BAR.findall(text):
            assert percent == "100" and done == total, (
                f"{path.name} {where}: stores an unfinished progress bar {text.strip()!r}; the saved output "
                "must be the finished bar (utils.progress.progress_bar), re-execute the notebook")
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for model, entry in state.items():
        if entry["model_name"] in ("FloatProgressModel", "IntProgressModel"):
            value, top = entry["state"].get("value", 0), entry["state"].get("max", 100)
            assert value == top, f"{path.name} widget {model}: a progress bar saved at {value} of {top}"
