#!/usr/bin/env python
"""Build the student edition of the course from the notebooks in the repository.

    python -m scripts.build_student_edition            # into build/student/
    python -m scripts.build_student_edition --out DIR  # somewhere else

The committed notebooks are the teacher edition. In the student edition:

- in every cell tagged ``solution``, the lines from ``# BEGIN SOLUTION`` to
  ``# END SOLUTION`` (markers included) become one line,
  ``raise NotImplementedError("Exercise NN.k: write your code here")``, indented like the
  ``# BEGIN SOLUTION`` marker, so the cell still defines the function (a stub);
- every cell tagged ``answer`` (answers and hints to the homework questions) is removed;
- cells tagged ``solution`` or ``check`` lose their outputs and execution counts, so the
  only check output a learner sees is the one their own code produces.

Everything else (prose, figures, the other cells' outputs) is kept, except that the Binder and
Colab badges open the student edition's branch of the course's repository (``student-branch``
in pyproject.toml's ``[tool.course]``), where a teacher publishes it. The folder also gets
what a learner needs to run the notebooks (``utils/``, ``requirements.txt``,
``pyproject.toml``, ``binder/``, the ``Makefile`` and the scripts its install runs) and a short README, so it can be zipped
and handed out, or committed to a branch of its own and opened on Binder.
"""
from __future__ import annotations

import argparse
import copy
import importlib
import re
import shutil
import sys
from pathlib import Path

import nbformat

from scripts import notebook_header
from scripts.course_repository import STUDENT_BRANCH

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "build" / "student"
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
SOLUTION, CHECK, ANSWER = "solution", "check", "answer"
# What a learner needs beside the notebooks to run them (tests and CI stay behind).
# The Makefile's install (make lab) runs scripts/stamped.py and scripts/course_venv.py.
COURSE_FILES = ("utils", "binder", "requirements.txt", "pyproject.toml", "Makefile",
                "scripts/__init__.py", "scripts/stamped.py", "scripts/course_venv.py")
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"

# `from utils.exercises import block_by_hand as ex`, `import utils.exercises.block_by_hand as ex`
_IMPORT_FROM = re.compile(r"^\s*from\s+utils\.exercises\s+import\s+(.+)$", re.MULTILINE)
_IMPORT_AS = re.compile(r"^\s*import\s+utils\.exercises\.(\w+)\s+as\s+(\w+)", re.MULTILINE)
_CHECK_CALL = re.compile(r"\b(\w+)\.(\w+)\.check\(")
_LABEL = re.compile(r"^(Exercise\s+\S+?)\s*:")


def tags(cell) -> list[str]:
    """The cell's tags (an empty list when it has none)."""
    return list(cell.get("metadata", {}).get("tags", []))


def stub_solution(source: str, label: str) -> str:
    """``source`` with each ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` region replaced by a
    ``raise NotImplementedError`` line at the BEGIN marker's indentation. Raises ValueError
    for a cell without a region, or with a marker out of place."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a string, got {type(source).__name__}")
    lines, inside, regions = [], None, 0
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        marker = line.strip()
        if marker == BEGIN:
            if inside is not None:
                raise ValueError(f"line {number}: {BEGIN} inside a solution that starts on line {inside}")
            inside, regions = number, regions + 1
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(f'{indent}raise NotImplementedError("{label}: write your code here")\n')
        elif marker == END:
            if inside is None:
                raise ValueError(f"line {number}: {END} without a {BEGIN} before it")
            inside = None
        elif inside is None:
            lines.append(line)
    if inside is not None:
        raise ValueError(f"the solution that starts on line {inside} has no {END}")
    if not regions:
        raise ValueError(f"a cell tagged {SOLUTION!r} has no {BEGIN} ... {END} region")
    return "".join(lines)


def _exercise_modules(cells) -> dict[str, str]:
    """Alias -> module name for every ``utils.exercises`` module the notebook imports."""
    aliases = {}
    for cell in cells:
        if cell.cell_type != "code":
            continue
        for match in _IMPORT_FROM.finditer(cell.source):
            for part in match.group(1).strip("() ").split(","):
                words = part.split()
                if words:
                    aliases[words[-1]] = words[0]  # "x as ex" -> ex: x; "x" -> x: x
        for match in _IMPORT_AS.finditer(cell.source):
            aliases[match.group(2)] = match.group(1)
    return aliases


def exercise_label(check_source: str, aliases: dict[str, str], fallback: str) -> str:
    """"Exercise NN.k" from the title of the exercise that the check cell calls
    (``ex.name.check(...)``); ``fallback`` when it cannot be found."""
    match = _CHECK_CALL.search(check_source)
    if not match or match.group(1) not in aliases:
        return fallback
    try:
        module = importlib.import_module(f"utils.exercises.{aliases[match.group(1)]}")
    except ImportError:
        return fallback
    title = getattr(getattr(module, match.group(2), None), "title", "")
    label = _LABEL.match(title) if isinstance(title, str) else None
    return label.group(1) if label else fallback


def _clear_outputs(cell) -> None:
    cell.outputs = []
    cell.execution_count = None
    cell.metadata.pop("execution", None)


def student_notebook(notebook, number: str, answer_stub: str | None = None):
    """The student edition of ``notebook`` (a new object; the original is left as it is).
    ``number`` ("01") labels exercises whose title cannot be looked up: the k-th exercise
    is the one whose check is the k-th cell tagged ``check``. Cells tagged ``answer`` are
    removed, or, with ``answer_stub``, kept with that text in place of the answer (a cell to
    write one's own answer in, as nbgrader's release has)."""
    notebook = copy.deepcopy(notebook)
    aliases = _exercise_modules(notebook.cells)
    kept = []
    for index, cell in enumerate(notebook.cells):
        cell_tags = tags(cell)
        if ANSWER in cell_tags and answer_stub is None:
            continue
        if ANSWER in cell_tags:
            cell.source = answer_stub
        if SOLUTION in cell_tags:
            checks_before = sum(CHECK in tags(c) for c in notebook.cells[:index])
            following = [c for c in notebook.cells[index + 1:] if CHECK in tags(c)]
            fallback = f"Exercise {number}.{checks_before + 1}"
            label = exercise_label(following[0].source, aliases, fallback) if following else fallback
            try:
                cell.source = stub_solution(cell.source, label)
            except ValueError as error:
                raise ValueError(f"cell {index} (id {cell.get('id')}): {error}") from None
        if cell.cell_type == "code" and (SOLUTION in cell_tags or CHECK in cell_tags):
            _clear_outputs(cell)
        kept.append(cell)
    notebook.cells = kept
    return notebook


STUDENT_README = f"""# Residual connections, interactively: student edition

{notebook_header.badges_line("00_start_here.ipynb", STUDENT_BRANCH)}

The notebooks in `notebooks/` are the course with the exercises left for you. In each
exercise, replace the line `raise NotImplementedError(...)` with your code, run the cell,
then run the check cell below it: it says what is right and the first thing that is wrong.
Stuck? Run `ex.<name>.hint()` (again for the next hint). The badges above open it on Binder
or Colab once your teacher has published it on the branch `{STUDENT_BRANCH}`.

To run it on your computer (Python 3.11 or newer): `make lab`, or
`python -m pip install -r requirements.txt && python -m pip install -e .` and then
`jupyter lab notebooks/00_start_here.ipynb`.
"""


def course_notebooks(out: Path, notebooks: Path) -> tuple[Path, list[Path]]:
    """``out`` resolved and the course's notebooks in ``notebooks``; raises ValueError when
    there are none, or when ``out`` is not a folder of its own (it will be emptied)."""
    out, notebooks = Path(out).resolve(), Path(notebooks).resolve()
    sources = sorted(notebooks.glob(NOTEBOOK_GLOB))
    if not sources:
        raise ValueError(f"no notebooks matching {NOTEBOOK_GLOB} in {notebooks}")
    if out in (ROOT, notebooks) or out in notebooks.parents:
        raise ValueError(f"out must be a folder of its own, not {out}")
    return out, sources


def build(out: Path = DEFAULT_OUT, notebooks: Path = ROOT / "notebooks", edition=student_notebook) -> list[Path]:
    """Write the student edition into ``out`` (emptied first); return the notebooks written.
    ``edition(notebook, number)`` makes each notebook (the hub's, with nbgrader's metadata, is
    scripts.build_nbgrader.release_notebook)."""
    out, sources = course_notebooks(out, notebooks)
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    written = []
    for path in sources:
        student = edition(nbformat.read(path, as_version=4), path.name[:2])
        if student.cells and student.cells[0].cell_type == "markdown":
            student.cells[0].source = notebook_header.with_badges(student.cells[0].source, path.name, STUDENT_BRANCH)
        target = out / "notebooks" / path.name
        nbformat.write(student, target)
        written.append(target)
    for name in COURSE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, out / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif source.is_file():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, out / name)
    (out / "README.md").write_text(STUDENT_README)
    return written


def build_command(argv, *, doc: str, default_out: Path, builder, summary: str) -> int:
    """The command line of a builder of the course's notebooks (this one, build_nbgrader):
    ``--out DIR``, then ``summary`` filled with how many it wrote (``count``) and where (``out``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=default_out, help=f"where to build (default {default_out})")
    args = parser.parse_args(argv)
    written = builder(args.out)
    print(summary.format(count=len(written), out=args.out.resolve()))
    return 0


def main(argv=None) -> int:
    return build_command(argv, doc=__doc__, default_out=DEFAULT_OUT, builder=build,
                         summary="student edition: {count} notebooks in {out}/notebooks")


if __name__ == "__main__":
    sys.exit(main())
