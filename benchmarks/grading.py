#!/usr/bin/env python
"""make autograde for one notebook and a simulated class, one job at a time and several at once.

    .venv/bin/python -m benchmarks.grading                          # 05 and 08, 6 students, into RESULTS.md
    .venv/bin/python -m benchmarks.grading 01 --students 3 --output /tmp/grading.md

For each notebook, an nbgrader course of that assignment alone (make nbgrader's, in a temporary
folder) gets --students copies of the teacher edition (every exercise right, so every cell runs,
as for a student who did the work); then it is autograded as nbgrader alone does it (one
``nbgrader autograde ASSIGNMENT`` for every student, what make autograde did before it ran jobs
in parallel; with --before), and with make autograde's jobs for each --workers. Measured: wall
time, and CPU seconds of nbgrader and its kernels (this process's children). From those, thirty
students' time for that notebook. The machine may be shared: the load average is in the report.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import markdown_table, write_section
from scripts import autograde, build_nbgrader
from scripts.build_student_edition import ROOT

HEADING = "## Autograding a class"
CLASS = 30  # the class size the estimate is for


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(run) -> dict:
    """Wall and CPU seconds (of the processes ``run`` starts) of one call of ``run``."""
    cpu, wall = _children_cpu(), time.perf_counter()
    run()
    return {"wall": time.perf_counter() - wall, "cpu": _children_cpu() - cpu}


def course_with_class(folder: Path, notebook: Path, students: int) -> Path:
    """An nbgrader course of ``notebook``'s assignment alone, released, with ``students``
    submissions of its teacher edition."""
    build_nbgrader.build(folder)
    assignment = notebook.stem
    for other in (folder / "source").iterdir():
        if other.name != assignment:
            shutil.rmtree(other)
    autograde.run_nbgrader(folder, "generate_assignment", assignment, "--force")
    for number in range(1, students + 1):
        target = folder / "submitted" / f"student{number:02d}" / assignment / notebook.name
        target.parent.mkdir(parents=True)
        shutil.copy(folder / "source" / assignment / notebook.name, target)
    return folder


def bench(notebook: Path, students: int, workers: list[int], before: bool) -> list[dict]:
    """One row per way of grading ``notebook`` for ``students`` students."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="grading-bench-") as folder:
        course = course_with_class(Path(folder) / "course", notebook, students)
        if before:
            load = os.getloadavg()[0]
            result = measured(lambda: autograde.run_nbgrader(course, "autograde", notebook.stem, "--force"))
            rows.append({"way": "nbgrader alone (one process, one notebook at a time)", "load": load, **result})
        for count in workers:
            load = os.getloadavg()[0]
            result = measured(lambda: autograde.autograde(course, progress=lambda line: None, assignment=notebook.stem,
                                                          workers=count))
            rows.append({"way": f"make autograde WORKERS={count}", "load": load, **result})
        print(f"{notebook.name}: {rows}", flush=True)
    return [{"notebook": notebook.name, "students": students, **row} for row in rows]


def report(rows: list[dict], started: str, cores: int) -> str:
    """The section for RESULTS.md: the table, and per notebook what the jobs cost and saved."""
    table = [[row["notebook"], row["way"], row["students"], f"{row['wall']:.0f}", f"{row['cpu']:.0f}",
              f"{row['cpu'] / row['students']:.1f}", f"{row['wall'] / row['students'] * CLASS / 60:.1f}",
              f"{row['load']:.1f}"] for row in rows]
    notes = []
    for notebook in dict.fromkeys(row["notebook"] for row in rows):
        ways = {row["way"]: row for row in rows if row["notebook"] == notebook}
        alone, one = ways.get("nbgrader alone (one process, one notebook at a time)"), ways.get("make autograde WORKERS=1")
        if alone and one:
            extra = (one["cpu"] - alone["cpu"]) / one["students"]
            notes.append(f"{notebook}: one job per notebook cost {extra:.1f} CPU-s more per student than nbgrader alone "
                         "(nbgrader starts once per notebook).")
        others = [row for way, row in ways.items() if way.startswith("make autograde WORKERS=") and row is not one]
        if one and others:
            notes.append(f"{notebook}: " + "; ".join(f"{row['way'].split()[-1]} took {row['wall'] / one['wall']:.2f} "
                                                     "times the wall time of WORKERS=1" for row in others) + ".")
    return "\n".join([
        HEADING, "",
        f"Measured {started} by benchmarks/grading.py on this {cores}-core machine: an nbgrader course of one "
        "notebook, each simulated student submitting the teacher edition (every exercise right, every cell run), "
        "autograded by nbgrader alone and by make autograde's jobs. CPU: nbgrader's processes and their kernels. "
        f"The estimate for {CLASS} students scales the wall time per student; it assumes the same load. "
        "The machine was shared with other work: times are noisy.", "",
        markdown_table(["Notebook", "How", "Students", "Wall (s)", "CPU (s)", "CPU per student (s)",
                        f"{CLASS} students, estimated (min)", "Load average at the start"], table), "",
        *[f"- {note}" for note in notes], ""])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", default=["05", "08"], help="notebook numbers (default 05 08)")
    parser.add_argument("--students", type=int, default=6)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--before", action="store_true", help="also time one nbgrader process for every student")
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "RESULTS.md")
    args = parser.parse_args(argv)
    by_number = {path.name[:2]: path for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
    unknown = [number for number in args.notebooks if number not in by_number]
    if unknown or args.students < 1:
        parser.error(f"notebooks are two digits of {', '.join(sorted(by_number))} and --students at least 1; "
                     f"got {', '.join(unknown) or args.students}")
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = [row for number in args.notebooks for row in bench(by_number[number], args.students, args.workers, args.before)]
    write_section(args.output, report(rows, started, os.cpu_count() or 1), HEADING)
    print(f"wrote {HEADING!r} into {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
