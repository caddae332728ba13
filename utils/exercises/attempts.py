"""A learner's log of checks, kept only if they ask for it (notebook 00 says what it holds).

``opt_in()`` creates the log, ``.check-log.jsonl`` in the course's folder (the folder that
holds ``notebooks/``); from then on every check appends one line: the exercise's number,
whether it passed or was attempted, the mistake's key, and the time (UTC, to the second).
Never any code. ``opt_out()`` deletes the log, and nothing is written again. The teacher's
``make collect`` copies the log, and ``make class-report`` shows how many checks the class
needed before each exercise passed.
"""
from __future__ import annotations

import datetime
import json
from pathlib import Path

LOG_NAME = ".check-log.jsonl"


def course_folder(start: Path | None = None) -> Path:
    """The course's folder: ``start`` (the working directory by default) or the first folder
    above it that holds ``notebooks/``; ``start`` itself when none does."""
    start = Path.cwd() if start is None else Path(start)
    return next((folder for folder in (start, *start.parents) if (folder / "notebooks").is_dir()), start)


def log_path(start: Path | None = None) -> Path:
    """Where the log is (or would be)."""
    return course_folder(start) / LOG_NAME


def opt_in(start: Path | None = None) -> Path:
    """Start logging this learner's checks; returns the log's path."""
    path = log_path(start)
    path.touch()
    print(f"From now on each check adds a line to {path}: exercise, mistake's name, time. No code. "
          "attempts.opt_out() deletes it.")
    return path


def opt_out(start: Path | None = None) -> None:
    """Stop logging and delete the log."""
    log_path(start).unlink(missing_ok=True)
    print("The log of your checks is deleted; nothing more is written.")


def note(feedback, start: Path | None = None) -> None:
    """Append ``feedback`` (a Feedback) to the log when the learner opted in; otherwise, or
    when the log cannot be written, do nothing (a check never fails for its log)."""
    path = log_path(start)
    if not path.is_file():
        return
    line = {"exercise": feedback.number, "passed": feedback.passed, "attempted": feedback.attempted,
            "mistake": feedback.mistake,
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    try:
        with path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")
    except OSError:
        pass
