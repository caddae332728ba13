"""Every notebook fits a class: its core prose stays within 2,300 words (about 20 minutes of
reading at 120 words a minute for dense technical text, which leaves the rest of a 45-minute core
for predicting, running and the exercises), and every code cell within 20 lines, so it can be
projected and read at once. What does not fit goes into the notebook's optional *Going further*.

The core's prose is counted as the reviews counted it: the words (whitespace-separated) of every
markdown cell from the title up to the cell that opens the homework questions or *Going further*,
whichever comes first, leaving out the teacher's answers (cells tagged ``answer``)."""
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CORE_WORDS, CODE_LINES = 2300, 20
_CORE_ENDS = re.compile(r"^## (Questions \(homework\)|Homework|Going further)", re.MULTILINE)


def core_words(notebook) -> int:
    """The words of the core's markdown, as the module docstring defines it."""
    words = 0
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        if _CORE_ENDS.search(cell.source):
            break
        if "answer" not in cell.metadata.get("tags", []):
            words += len(cell.source.split())
    return words


def test_core_words_stop_at_the_homework_and_skip_the_teachers_answers():
    cell = nbformat.v4.new_markdown_cell
    answers = cell("one two three", metadata={"tags": ["answer"]})
    notebook = nbformat.v4.new_notebook(cells=[
        cell("# 99 · Title\nfour words here"), nbformat.v4.new_code_cell("not counted at all"), answers,
        cell("## Summary\n- two more"), cell("## Questions (homework)\n1. not counted"), cell("after, not counted")])
    assert core_words(notebook) == 7 + 5  # '# 99 · Title four words here', '## Summary - two more'
    notebook.cells.insert(1, cell("## Going further (optional)\nnot counted"))
    assert core_words(notebook) == 7  # the title cell alone


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_core_fits_a_class(path):
    notebook = nbformat.read(path, as_version=4)
    words = core_words(notebook)
    assert words <= CORE_WORDS, (
        f"{path.name}: the core's prose has {words} words, more than {CORE_WORDS}; say it in fewer words "
        "or move a part into the optional 'Going further'")
    long_cells = [(index, len(cell.source.split("\n"))) for index, cell in enumerate(notebook.cells)
                  if cell.cell_type == "code" and len(cell.source.split("\n")) > CODE_LINES]
    assert not long_cells, (
        f"{path.name}: code cells longer than {CODE_LINES} lines (cell index, lines): {long_cells}; "
        "split them, or move plumbing into utils")
