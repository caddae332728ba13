#!/usr/bin/env python
"""Write an nbgrader course from the teacher edition (the committed notebooks).

    python -m scripts.build_nbgrader               # into build/nbgrader/
    python -m scripts.build_nbgrader --out DIR

One assignment per notebook: ``source/<notebook name without .ipynb>/<notebook>``, with
nbgrader's cell metadata added to the cells the student edition already knows
(scripts/build_student_edition.py reads the same tags):

- a ``solution`` cell becomes an nbgrader solution cell: ``generate_assignment`` replaces its
  ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` lines with a ``raise NotImplementedError`` stub;
- a ``check`` cell becomes a locked autograded test cell worth 1 point. The course's checks
  print a verdict and never raise, so the cell keeps the verdict and asserts that it passed:
  it scores only when the checker says ✓;
- an ``answer`` cell (the homework answers) becomes a manually graded answer cell, one point
  per numbered answer; the released notebook shows "YOUR ANSWER HERE" in its place.

Stored figures stay (``nbgrader_config.py`` turns ClearOutput off); solution and check cells
lose their outputs, as in the student edition. ``make nbgrader`` then runs nbgrader's
``generate_assignment`` for every notebook, which writes ``release/``.
"""
from __future__ import annotations

import ast
import copy
import re
import shutil
import sys
from pathlib import Path

import nbformat

from scripts.build_student_edition import (ANSWER, CHECK, ROOT, SOLUTION, _clear_outputs, build_command, course_notebooks,
                                          tags)

DEFAULT_OUT = ROOT / "build" / "nbgrader"
STUB = 'raise NotImplementedError("Exercise: write your code here")'
CONFIG = "\n".join([
    "# nbgrader configuration of the course, written by scripts/build_nbgrader.py.",
    "c = get_config()  # noqa: F821",
    "# Keep the stored figures and printed results: the notebooks teach with them.",
    "c.ClearOutput.enabled = False",
    f"c.ClearSolutions.code_stub = {{'python': {STUB!r}}}",
    "# Some notebooks train for seconds: allow a slow machine.",
    "c.ExecutePreprocessor.timeout = 600",
    ""])
_NUMBERED = re.compile(r"^\d+\.\s", re.MULTILINE)


def graded_check(source: str) -> str:
    """The check cell ``source`` (ending in the expression that returns the verdict) as a test
    cell: the verdict is printed as before, then asserted. Raises ValueError otherwise."""
    tree = ast.parse(source)
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        raise ValueError(f"a check cell must end with the check's call, got {source!r}")
    last = tree.body[-1]
    lines = source.splitlines()
    before = "\n".join(lines[:last.lineno - 1])
    call = "\n".join(lines[last.lineno - 1:last.end_lineno])
    return ((before + "\n" if before else "") + f"verdict = {call}\nprint(verdict)\n"
            "assert verdict.passed, \"the check above did not say ✓\"")


def _grader(cell, grade_id: str, *, solution: bool, grade: bool, points: int = 0) -> None:
    cell.metadata["nbgrader"] = {"grade": grade, "grade_id": grade_id, "locked": not solution,
                                 "schema_version": 3, "solution": solution, "task": False}
    if grade:
        cell.metadata["nbgrader"]["points"] = points


def nbgrader_notebook(notebook, number: str):
    """``notebook`` (teacher edition) with nbgrader metadata; a new object."""
    notebook = copy.deepcopy(notebook)
    counts = {SOLUTION: 0, CHECK: 0, ANSWER: 0}
    for cell in notebook.cells:
        cell_tags = tags(cell)
        kind = next((tag for tag in (SOLUTION, CHECK, ANSWER) if tag in cell_tags), None)
        if kind is None:
            continue
        counts[kind] += 1
        grade_id = f"nb{number}_{kind}_{counts[kind]}"
        if kind == SOLUTION:
            _grader(cell, grade_id, solution=True, grade=False)
        elif kind == CHECK:
            cell.source = graded_check(cell.source)
            _grader(cell, grade_id, solution=False, grade=True, points=1)
        else:
            _grader(cell, grade_id, solution=True, grade=True, points=max(1, len(_NUMBERED.findall(cell.source))))
        if cell.cell_type == "code":
            _clear_outputs(cell)
    return notebook


def build(out: Path = DEFAULT_OUT, notebooks: Path = ROOT / "notebooks") -> list[Path]:
    """Write the nbgrader course into ``out`` (its ``source/`` emptied first; a gradebook
    already there is kept); return the source notebooks written."""
    out, sources = course_notebooks(out, notebooks)
    shutil.rmtree(out / "source", ignore_errors=True)
    written = []
    for path in sources:
        target = out / "source" / path.stem / path.name
        target.parent.mkdir(parents=True)
        nbformat.write(nbgrader_notebook(nbformat.read(path, as_version=4), path.name[:2]), target)
        written.append(target)
    (out / "nbgrader_config.py").write_text(CONFIG)
    return written


def main(argv=None) -> int:
    return build_command(argv, doc=__doc__, default_out=DEFAULT_OUT, builder=build,
                         summary="nbgrader course: {count} assignments in {out}/source")


if __name__ == "__main__":
    sys.exit(main())
