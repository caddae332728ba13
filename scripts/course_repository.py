"""The course's GitHub repository (owner/name) and branches, read from ``[tool.course]`` in
pyproject.toml: the one place a fork changes. Every link that names the repository is written
from here (``python -m scripts.write_links``; README, "Fork it"), and
tests/test_course_repository.py fails when one disagrees."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _course_table() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["tool"]["course"]


REPOSITORY: str = _course_table()["repository"]
BRANCH: str = _course_table()["branch"]
STUDENT_BRANCH: str = _course_table()["student-branch"]  # where a teacher pushes build/student/ (README, "For teachers")
GITHUB_URL = f"https://github.com/{REPOSITORY}"
