#!/usr/bin/env python
"""Feedback pages for the autograded notebooks, offline and with honest scores.

    python -m scripts.feedback                 # every assignment of the hub's course, or of STATE/nbgrader
    python -m scripts.feedback --assignment 05_flexible_block   # one assignment's pages only
    python -m scripts.feedback --course DIR

Runs nbgrader's ``generate_feedback`` for every assignment that has autograded notebooks,
with the course's page (classroom/feedback_page: lines wrap, MathJax 3 from a copy beside the
pages) and :class:`ScoreSummary`, which opens each page with the code exercises' score and the
written answers' apart: "Code exercises: 2 / 2 · Written answers: awaiting grading (8
points)", so right code never reads as a low grade while the homework waits for the teacher.
Each student's folder ``feedback/STUDENT/`` gets its own copy of MathJax (2.3 MB) under
``mathjax/``, so the folder can be handed back whole.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

from scripts.autograde import ONE_ASSIGNMENT, chosen, course_command, run_nbgrader
from scripts.build_student_edition import ROOT
from scripts.collect_submissions import DEFAULT_COURSE

MATHJAX = ROOT / "site" / "node_modules" / "mathjax" / "es5" / "tex-svg-full.js"  # site/package-lock.json pins it


def feedback_page_arguments() -> list[str]:
    """nbgrader's options for the course's page (classroom/feedback_page, which extends nbgrader's
    own feedback template). Given to generate_feedback only, not in the course's nbgrader_config.py,
    where they would also replace the template of the formgrader's grading page."""
    import nbgrader

    templates = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"
    return ["--HTMLExporter.template_name=feedback_page",
            f"--HTMLExporter.extra_template_basedirs={ROOT / 'classroom'}",
            f"--HTMLExporter.extra_template_basedirs={templates}"]


def score_summary(cells) -> str:
    """The line that opens a feedback page, from the cells' nbgrader metadata after nbgrader's
    GetGrades (``score`` and ``points`` on every grade cell) and :class:`ScoreSummary`
    (``state`` of each written answer: "graded", "unanswered" or "awaiting")."""
    code = [cell.metadata.nbgrader for cell in cells if _grade(cell) and not cell.metadata.nbgrader.get("solution")]
    written = [cell.metadata.nbgrader for cell in cells if _grade(cell) and cell.metadata.nbgrader.get("solution")]
    parts = []
    if code:
        got, total = sum(float(c.get("score") or 0) for c in code), sum(float(c["points"]) for c in code)
        parts.append(f"**Code exercises: {got:g} / {total:g}**" + (" (every check ✓)" if got == total else ""))
    if written:
        total = sum(float(c["points"]) for c in written)
        states = {c.get("state", "awaiting") for c in written}
        if states == {"graded"}:
            parts.append(f"**Written answers: {sum(float(c.get('score') or 0) for c in written):g} / {total:g}**")
        elif states == {"unanswered"}:
            parts.append(f"**Written answers: not answered** ({total:g} points)")
        else:
            parts.append(f"**Written answers: awaiting grading** ({total:g} points)")
    return " · ".join(parts)


def _grade(cell) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("grade"))


class ScoreSummary(Preprocessor):
    """nbgrader feedback preprocessor (after GetGrades): puts :func:`score_summary` at the
    top of the page. nbgrader's own heading adds every point, a written answer not yet graded
    counting 0."""

    enabled = Bool(True)  # nbconvert's preprocessors are off unless switched on

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        meta = resources["nbgrader"]
        with Gradebook(meta["db_url"]) as gradebook:
            for cell in nb.cells:
                if _grade(cell) and cell.metadata.nbgrader.get("solution"):
                    grade = gradebook.find_grade(cell.metadata.nbgrader["grade_id"], meta["notebook"],
                                                 meta["assignment"], meta["student"])
                    cell.metadata.nbgrader["state"] = (
                        "graded" if grade.manual_score is not None else
                        "awaiting" if grade.needs_manual_grade else "unanswered")  # nbgrader's 0 for an untouched cell
        summary = score_summary(nb.cells)
        if summary:
            nb.cells.insert(0, nbformat.v4.new_markdown_cell(summary))
        return nb, resources


def assignments_with_submissions(course: Path) -> list[str]:
    """The assignments that have autograded notebooks in ``course``."""
    return sorted({path.parent.name for path in (course / "autograded").glob("*/*/*.ipynb")})


def generate(course: Path = DEFAULT_COURSE, assignment: str | None = None) -> list[Path]:
    """Run nbgrader's generate_feedback for each assignment (or ``assignment`` only) and put
    MathJax beside every student's pages; return the pages written. Raises RuntimeError with
    nbgrader's words when it fails, FileNotFoundError when nothing was autograded or MathJax is
    missing, ValueError when ``assignment`` has no autograded notebooks."""
    course = Path(course).resolve()
    assignments = assignments_with_submissions(course)
    if not assignments:
        raise FileNotFoundError(f"no autograded notebooks in {course / 'autograded'}: run make autograde first")
    assignments = chosen(assignment, assignments, f"the autograded notebooks of {course}")
    if not MATHJAX.is_file():
        raise FileNotFoundError(f"{MATHJAX} is missing: run `cd site && npm ci` (the Makefile's site/node_modules step)")
    for assignment in assignments:
        run_nbgrader(course, "generate_feedback", assignment, "--force", *feedback_page_arguments())
    for student in sorted(p for p in (course / "feedback").iterdir() if p.is_dir()):
        (student / "mathjax").mkdir(exist_ok=True)
        shutil.copy2(MATHJAX, student / "mathjax" / MATHJAX.name)
    return sorted(page for name in assignments for page in (course / "feedback").glob(f"*/{name}/*.html"))


def main(argv=None) -> int:
    return course_command(argv, doc=__doc__, name="feedback", action=generate, options=(ONE_ASSIGNMENT,),
                          summary="{count} feedback pages in {course}/feedback")


if __name__ == "__main__":
    sys.exit(main())
