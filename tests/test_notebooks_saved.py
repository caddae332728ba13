"""Every notebook is stored as it really runs: executed top to bottom in one go from a
fresh kernel and saved, with outputs, without errors. nbval cannot see this by itself:
a cell stored with no execution count is not compared at all."""
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
