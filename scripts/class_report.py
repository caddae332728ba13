#!/usr/bin/env python
"""What the class got wrong: every exercise's outcomes across the autograded notebooks.

    python -m scripts.class_report                    # the hub's course (or STATE/nbgrader) -> its class-report/
    python -m scripts.class_report --names            # say which student made which mistake
    python -m scripts.class_report --out DIR          # write it into DIR instead

Reads each autograded notebook's check cells (the record ``utils.exercises.grading.graded``
leaves in its output: exercise, passed, attempted, mistake key; never code) and writes
``index.html`` (tables and a bar chart, a PNG inside the page: it opens offline) and
``class-report.csv``: per exercise, how many students passed, had not started, made each
named mistake, or whose check did not run. Students stay anonymous unless ``--names``. The
code exercises' points and the written answers still to grade are counted apart, per
notebook. When students opted in to the log of checks (``make collect`` brings it to
``attempts/``), the report adds how many checks they needed before an exercise passed.
The report goes into the course's ``class-report/`` (in the hub's state folder, with the
notebooks it counts, never in the repository), unless ``--out`` says otherwise.
"""
from __future__ import annotations

import argparse
import base64
import csv
import html
import io
import json
import statistics
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from scripts.classroom_host import hand_to_teacher
from scripts.collect_submissions import DEFAULT_COURSE
from utils.exercises.grading import RECORD_TYPE

OUT = "class-report"  # in the course
PASSED, NOT_STARTED, NO_VERDICT, UNNAMED = "passed", "not started", "check did not run", "(mistake without a key)"


@dataclass
class ExerciseOutcomes:
    """One exercise across the class: student names by outcome ("passed", "not started",
    "check did not run", or a mistake's key)."""
    number: str
    title: str = ""
    outcomes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    checks_before_passing: list[int] = field(default_factory=list)  # from the opt-in logs

    @property
    def mistakes(self) -> Counter:
        return Counter({key: len(names) for key, names in self.outcomes.items()
                        if key not in (PASSED, NOT_STARTED, NO_VERDICT)})


def check_records(notebook) -> list[dict | None]:
    """The record of each autograded check cell, in order; None for a check cell that left
    none (it raised before its verdict: the function it checks was never defined, say)."""
    records = []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        found = [output["data"][RECORD_TYPE] for output in cell.get("outputs", [])
                 if RECORD_TYPE in output.get("data", {})]
        records.append(dict(found[-1]) if found else {"grade_id": meta.get("grade_id")})
    return records


def outcome(record: dict) -> str:
    """What one check says, as the report counts it."""
    if "passed" not in record:
        return NO_VERDICT
    if record["passed"]:
        return PASSED
    if not record.get("attempted", True):
        return NOT_STARTED
    return record.get("mistake") or UNNAMED


def gather(course: Path) -> dict[str, ExerciseOutcomes]:
    """Exercise number -> its outcomes, from ``course/autograded/STUDENT/ASSIGNMENT/*.ipynb``."""
    exercises: dict[str, ExerciseOutcomes] = {}
    for path in sorted(Path(course).glob("autograded/*/*/*.ipynb")):
        student = path.parent.parent.name
        for position, record in enumerate(check_records(nbformat.read(path, as_version=4)), start=1):
            number = record.get("exercise") or f"{path.stem[:2]}, check {position}"
            entry = exercises.setdefault(number, ExerciseOutcomes(number))
            entry.title = entry.title or record.get("title", "")
            entry.outcomes[outcome(record)].append(student)
    for log in sorted(Path(course).glob("attempts/*.jsonl")):
        for number, count in checks_before_passing(log).items():
            if number in exercises:
                exercises[number].checks_before_passing.append(count)
    return dict(sorted(exercises.items()))


def checks_before_passing(log: Path) -> dict[str, int]:
    """From one student's log of checks: exercise -> how many attempted checks failed before
    the first that passed (exercises never passed are left out). Unreadable lines are skipped."""
    failed: Counter = Counter()
    passed: dict[str, int] = {}
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
            number = str(entry["exercise"])
        except (ValueError, KeyError, TypeError):
            continue
        if number in passed:
            continue
        if entry.get("passed"):
            passed[number] = failed[number]
        elif entry.get("attempted", True):
            failed[number] += 1
    return passed


def notebook_scores(course: Path) -> list[dict]:
    """Per assignment, from nbgrader's gradebook: students, how many have every code check
    right, the median code points, and how many written answers await grading. Empty when
    there is no gradebook."""
    database = Path(course) / "gradebook.db"
    if not database.is_file():
        return []
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(f"sqlite:///{database}") as gradebook:
        for assignment in sorted(gradebook.assignments, key=lambda a: a.name):
            code, full, awaiting, students = [], 0, 0, 0
            for submission in gradebook.assignment_submissions(assignment.name):
                students += 1
                checks = [g for n in submission.notebooks for g in n.grades if g.cell.cell_type == "code"]
                points = sum(g.score for g in checks)
                code.append(points)
                full += points == sum(g.max_score for g in checks)
                awaiting += sum(g.needs_manual_grade for n in submission.notebooks for g in n.grades
                                if g.cell.cell_type == "markdown")
            if students:
                total = sum(cell.max_score for nb in assignment.notebooks for cell in nb.grade_cells
                            if cell.cell_type == "code")
                rows.append({"assignment": assignment.name, "students": students, "every check right": full,
                             "median code points": f"{statistics.median(code):g} / {total:g}",
                             "written answers to grade": awaiting})
    return rows


def write_csv(exercises: dict[str, ExerciseOutcomes], path: Path, names: bool) -> None:
    """One row per exercise and outcome: exercise, title, outcome, students (and their names)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["exercise", "title", "outcome", "students"] + (["names"] if names else []))
        for entry in exercises.values():
            for key, who in sorted(entry.outcomes.items(), key=lambda item: (-len(item[1]), item[0])):
                writer.writerow([entry.number, entry.title, key, len(who)] + ([" ".join(sorted(who))] if names else []))
            if entry.checks_before_passing:
                writer.writerow([entry.number, entry.title, "median failed checks before passing (opt-in logs)",
                                 f"{statistics.median(entry.checks_before_passing):g}"] + ([""] if names else []))


def bar_chart(exercises: dict[str, ExerciseOutcomes]) -> str:
    """A PNG (base64) of every exercise's outcomes as stacked bars: passed, named mistakes,
    not started, check did not run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numbers = list(exercises)
    parts = [(PASSED, "#2e7d32", lambda e: len(e.outcomes.get(PASSED, []))),
             ("made a named mistake", "#c62828", lambda e: sum(e.mistakes.values())),
             (NOT_STARTED, "#9e9e9e", lambda e: len(e.outcomes.get(NOT_STARTED, []))),
             (NO_VERDICT, "#ef6c00", lambda e: len(e.outcomes.get(NO_VERDICT, [])))]
    figure, axes = plt.subplots(figsize=(8, 0.4 * len(numbers) + 1.6))
    left = [0] * len(numbers)
    for label, colour, count in parts:
        widths = [count(exercises[n]) for n in numbers]
        axes.barh(numbers, widths, left=left, color=colour, label=label)
        left = [a + b for a, b in zip(left, widths)]
    axes.invert_yaxis()
    axes.set_xlabel("students")
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, fontsize="small", frameon=False)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


def page(exercises: dict[str, ExerciseOutcomes], scores: list[dict], names: bool) -> str:
    """The report as one HTML page (no script, no outside file)."""
    escape = html.escape
    rows = []
    for entry in exercises.values():
        mistakes = "<br>".join(f"<code>{escape(entry.number)}/{escape(key)}</code>: {count}"
                               + (f" ({escape(', '.join(sorted(entry.outcomes[key])))})" if names else "")
                               for key, count in entry.mistakes.most_common()) or "none"
        attempts = (f"{statistics.median(entry.checks_before_passing):g} ({len(entry.checks_before_passing)} logs)"
                    if entry.checks_before_passing else "no logs")
        counts = [len(entry.outcomes.get(k, [])) for k in (PASSED, NOT_STARTED, NO_VERDICT)]
        rows.append(f"<tr><td>{escape(entry.number)}</td><td>{escape(entry.title)}</td>"
                    + "".join(f"<td>{count}</td>" for count in counts) + f"<td>{mistakes}</td><td>{attempts}</td></tr>")
    score_rows = "".join("<tr>" + "".join(f"<td>{escape(str(value))}</td>" for value in row.values()) + "</tr>"
                         for row in scores)
    score_table = ("<h2>Scores, code and written answers apart</h2><table><tr><th>notebook</th><th>students</th>"
                   "<th>every check right</th><th>median code points</th><th>written answers to grade</th></tr>"
                   f"{score_rows}</table>") if scores else ""
    chart = f'<img alt="Outcomes per exercise as stacked bars" src="data:image/png;base64,{bar_chart(exercises)}">' \
        if exercises else "<p>No autograded notebooks yet: run make collect and make autograde.</p>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>What the class got wrong</title>
<style>body {{ font-family: sans-serif; max-width: 70em; margin: 2em auto; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 0.3em 0.6em; vertical-align: top; text-align: left; }}</style></head>
<body><h1>What the class got wrong</h1>
<p>From the autograded notebooks: per exercise, the students whose check passed, who had not started, whose check
cell did not run, and each named mistake (the checker's key; a student counts once, with the verdict of their
notebook as handed in). {"Names are shown (--names)." if names else "Anonymous: make class-report NAMES=1 names the students."}</p>
{chart}
<table><tr><th>exercise</th><th>title</th><th>{PASSED}</th><th>{NOT_STARTED}</th><th>{NO_VERDICT}</th>
<th>named mistakes</th><th>median failed checks before passing</th></tr>
{"".join(rows)}</table>
{score_table}
</body></html>
"""


def report(course: Path = DEFAULT_COURSE, out: Path | None = None, names: bool = False) -> dict[str, ExerciseOutcomes]:
    """Write ``out/index.html`` and ``out/class-report.csv`` (``out``: the course's
    class-report/ unless given); return what they count."""
    exercises = gather(course)
    out = Path(course) / OUT if out is None else Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(exercises, out / "class-report.csv", names)
    (out / "index.html").write_text(page(exercises, notebook_scores(course), names), encoding="utf-8")
    return exercises


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course", type=Path, default=DEFAULT_COURSE, help=f"nbgrader course (default {DEFAULT_COURSE})")
    parser.add_argument("--out", type=Path, help=f"where to write (default: the course's {OUT}/)")
    parser.add_argument("--names", action="store_true", help="name the students (anonymous by default)")
    args = parser.parse_args(argv)
    out = args.out or args.course / OUT
    try:
        exercises = report(args.course, out, args.names)
    finally:
        hand_to_teacher(args.course)  # the hub's course, and the report in it, are the teacher's
    if not exercises:
        print(f"make class-report: no autograded notebooks in {args.course.resolve() / 'autograded'}: run make collect "
              "and make autograde first", file=sys.stderr)
        return 1
    print(f"class report of {len(exercises)} exercises: {out.resolve() / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
