#!/usr/bin/env python
"""Write an nbgrader course from the teacher edition (the committed notebooks).

    python -m scripts.build_nbgrader               # what make nbgrader does: the course, then its release/
    python -m scripts.build_nbgrader --out DIR

The course goes into the hub's course folder (STATE/homes/TEACHER/nbgrader, where the
teacher's formgrader finds it) once ``make classroom`` has prepared the hub on this machine,
into STATE/nbgrader/ otherwise (scripts.classroom_host.grading_course): never the repository,
since the course collects the students' work.

One assignment per notebook with exercises (notebook 00 has none, so it is not one):
``source/<notebook name without .ipynb>/<notebook>``, with nbgrader's cell metadata added to
the cells the student edition already knows (scripts/build_student_edition.py reads the
same tags):

- a ``solution`` cell becomes an nbgrader solution cell: ``generate_assignment`` replaces its
  ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` lines with a ``raise NotImplementedError`` stub;
- a ``check`` cell becomes a locked autograded test cell worth 1 point. The course's checks
  return a verdict and never raise, so the cell hands it to ``utils.exercises.grading.graded``:
  it shows the verdict as before and, under nbgrader's autograder only, raises when the
  checker did not say ✓, so the cell scores only then;
- an ``answer`` cell (the homework answers) becomes a manually graded answer cell, one point
  per numbered answer; the released notebook shows "YOUR ANSWER HERE" in its place.

Stored figures stay (``nbgrader_config.py`` turns ClearOutput off); solution and check cells
lose their outputs, as in the student edition. ``make nbgrader`` then runs nbgrader's
``generate_assignment`` for every notebook, which writes ``release/``.

What the hub hands out is :func:`release_notebook`: the student edition of these same
notebooks, metadata and all, so each student's own copy is what ``make autograde`` grades.
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
                                          student_notebook, tags)
from scripts.classroom_host import grading_course, hand_to_teacher

DEFAULT_OUT = grading_course()
STUB = 'raise NotImplementedError("Exercise: write your code here")'
ANSWER_STUB = "YOUR ANSWER HERE"  # nbgrader's own text for an answer to write
GRADED_IMPORT = "from utils.exercises.grading import graded"
_NUMBERED = re.compile(r"^\d+\.\s", re.MULTILINE)


def nbgrader_config() -> str:
    """The course's nbgrader_config.py. It names nothing in this repository: the hub's teacher,
    whose formgrader reads it too, cannot read the repository (the feedback page's template is
    make feedback's argument, scripts.feedback)."""
    return "\n".join([
        "# nbgrader configuration of the course, written by scripts/build_nbgrader.py.",
        "c = get_config()  # noqa: F821",
        "# Keep the stored figures and printed results: the notebooks teach with them.",
        "c.ClearOutput.enabled = False",
        f"c.ClearSolutions.code_stub = {{'python': {STUB!r}}}",
        f"c.ClearSolutions.text_stub = {ANSWER_STUB!r}",
        "# Some notebooks train for seconds: allow a slow machine.",
        "c.ExecutePreprocessor.timeout = 600",
        "# Feedback: make feedback gives nbgrader the course's page (classroom/feedback_page: MathJax from",
        "# feedback/STUDENT/mathjax, no CDN) and scores code exercises and written answers apart (scripts/feedback).",
        "# The score summary needs the course's scripts, which make feedback puts on PYTHONPATH; run",
        "# otherwise, nbgrader writes its own pages, with one total.",
        "try:",
        "    import scripts.feedback  # noqa: F401",
        "    c.GenerateFeedback.preprocessors = ['nbgrader.preprocessors.GetGrades', 'scripts.feedback.ScoreSummary',",
        "                                        'nbconvert.preprocessors.CSSHTMLHeaderPreprocessor']",
        "except ImportError:",
        "    pass",
        ""])


def graded_check(source: str) -> str:
    """The check cell ``source`` (ending in the expression that returns the verdict) as a test
    cell: the verdict goes to ``graded``, which shows it and, under nbgrader, raises unless it
    passed. Raises ValueError for a cell that does not end with the check's call."""
    tree = ast.parse(source)
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        raise ValueError(f"a check cell must end with the check's call, got {source!r}")
    last = tree.body[-1]
    lines = source.splitlines()
    before = "\n".join(lines[:last.lineno - 1])
    call = "\n".join(lines[last.lineno - 1:last.end_lineno])
    return f"{GRADED_IMPORT}\n" + (before + "\n" if before else "") + f"graded({call})"


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


def release_notebook(notebook, number: str):
    """What a student gets from the hub: the student edition (solutions stubbed as
    scripts/build_student_edition.py does, "YOUR ANSWER HERE" where the homework answers
    were) of the nbgrader notebook, so it carries the grade cells ``make autograde`` scores."""
    return student_notebook(nbgrader_notebook(notebook, number), number, answer_stub=ANSWER_STUB)


def grade_ids(notebook) -> list[str]:
    """The grade_id of every cell nbgrader grades (none in a notebook without exercises, or in
    the student edition built without nbgrader's metadata)."""
    return [cell.metadata["nbgrader"]["grade_id"] for cell in notebook.cells
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade")]


def build(out: Path = DEFAULT_OUT, notebooks: Path = ROOT / "notebooks") -> list[Path]:
    """Write the nbgrader course into ``out`` (its ``source/`` emptied first; a gradebook
    already there is kept): an assignment for every notebook with exercises; return the
    source notebooks written."""
    out, sources = course_notebooks(out, notebooks)
    shutil.rmtree(out / "source", ignore_errors=True)
    written = []
    for path in sources:
        graded = nbgrader_notebook(nbformat.read(path, as_version=4), path.name[:2])
        if not grade_ids(graded):
            continue
        target = out / "source" / path.stem / path.name
        target.parent.mkdir(parents=True)
        nbformat.write(graded, target)
        written.append(target)
    (out / "nbgrader_config.py").write_text(nbgrader_config())
    return written


def build_and_release(out: Path = DEFAULT_OUT) -> list[Path]:
    """:func:`build`, then nbgrader's ``generate_assignment`` of every assignment (its
    ``release/`` and gradebook, which autograde needs); the hub's course goes back to the teacher."""
    from scripts.autograde import run_nbgrader

    written = build(out)
    try:
        for source in written:
            run_nbgrader(Path(out).resolve(), "generate_assignment", source.parent.name, "--force")
    finally:
        hand_to_teacher(out)
    return written


def main(argv=None) -> int:
    try:
        return build_command(argv, doc=__doc__, default_out=DEFAULT_OUT, builder=build_and_release,
                             summary="nbgrader course: {count} assignments in {out}/source, released into {out}/release")
    except PermissionError as error:
        print(f"make nbgrader: cannot write {error.filename}: the course goes into the hub's state folder, which is "
              "root's; run it as root, or set CLASSROOM_STATE to a folder of yours outside the repository.",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
