"""The course's GitHub repository (owner/name) and branch, read from ``[tool.course]`` in
pyproject.toml: the one place a fork changes, so every link written from here follows it."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _course_table() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["tool"]["course"]


REPOSITORY: str = _course_table()["repository"]
BRANCH: str = _course_table()["branch"]
