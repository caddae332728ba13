"""No notebook rebinds an exercise's name after the exercise: a later cell that imports or
defines the course's version under the learner's name would make a re-run of the check
test the course's code, with a false ✓."""
import ast
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def _tree(source: str) -> ast.Module:
    """A code cell's syntax tree, its IPython magics and shell lines left out."""
    kept = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    return ast.parse("\n".join(kept))


def bound_names(source: str) -> set[str]:
    """Every name a cell binds: assignments, imports, defs and classes, loop and with targets."""
    names = set()
    for node in ast.walk(_tree(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def checked_names(source: str) -> set[str]:
    """The names a check cell hands to a checker: NAME in `ex.something.check(NAME)`."""
    names = set()
    for node in ast.walk(_tree(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "check":
            names.update(arg.id for arg in node.args if isinstance(arg, ast.Name))
    return names


def rebinding_cells(cells) -> list[str]:
    """``cell N rebinds NAME`` for each code cell after an exercise's check that binds its name."""
    found, checked = [], set()
    for number, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        source = "".join(cell.source)
        if "check" in tags:
            checked |= checked_names(source)
        elif "solution" not in tags:
            found += [f"cell {number} rebinds {name}" for name in sorted(bound_names(source) & checked)]
    return found


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_no_cell_rebinds_an_exercise_name_after_its_check(notebook):
    assert rebinding_cells(nbformat.read(notebook, as_version=4).cells) == []


def test_the_rule_sees_imports_defs_and_assignments():
    cells = [nbformat.v4.new_code_cell("def f(x):\n    return x", metadata={"tags": ["solution"]}),
             nbformat.v4.new_code_cell("ex.f.check(f)", metadata={"tags": ["check"]}),
             nbformat.v4.new_code_cell("from utils.mlp import f"),
             nbformat.v4.new_code_cell("import numpy as f"),
             nbformat.v4.new_code_cell("f = 1\nfor g in range(2):\n    pass"),
             nbformat.v4.new_code_cell("%time y = 2\nclass f:\n    pass"),
             nbformat.v4.new_code_cell("from utils.mlp import f as course_f\nprint(f(1))")]
    assert rebinding_cells(cells) == ["cell 2 rebinds f", "cell 3 rebinds f", "cell 4 rebinds f",
                                      "cell 5 rebinds f"]
