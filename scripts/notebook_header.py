#!/usr/bin/env python
"""Give every notebook the course's header: Binder and Colab badges, then a setup cell.

    python -m scripts.notebook_header                        # every notebook, and the README's badges
    python -m scripts.notebook_header notebooks/04_*.ipynb   # just these

Idempotent: run it again and nothing changes. In the first (markdown) cell, the line with the
Binder badge becomes the badges line (Binder, then Open in Colab, both opening this notebook);
without a Binder badge, the badges line goes under the title. The README's badges line (opening
notebook 00) is written the same way. The links name the repository of ``[tool.course]`` in
pyproject.toml (scripts/course_repository.py). The setup cell (SETUP_SOURCE,
tagged ``course-setup``, and ``remove-cell`` for the site) becomes the first code cell, right after the header. Outputs of other
cells are left alone: re-execute the notebooks afterwards (make execute).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

from scripts.course_repository import BRANCH, GITHUB_URL, REPOSITORY  # the one place the repository is named

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
README = ROOT / "README.md"
COURSE_ARCHIVE = f"{GITHUB_URL}/archive/{BRANCH}.zip"  # what the setup cell installs on Colab
SETUP_TAG = "course-setup"
SITE_TAG = "remove-cell"  # the course site (scripts/build_site.py) leaves the setup cell out
BINDER_BADGE = re.compile(r"\[!\[Binder\]\([^)]*\)\]\(https://mybinder\.org/v2/gh/[^)\s]*\)")

# The first code cell of every notebook. On Colab only the notebook is opened, so the course's
# utils package is missing: install it, and only it (--no-deps: Colab's torch, numpy and
# ipywidgets must stay). Everywhere the course was installed (make lab, Binder) it is a no-op.
# pip gives up after one retry of 15 s without network, and the cell then says so in a sentence.
SETUP_SOURCE = f'''\
# On Colab: install this course's `utils` package and nothing else (Colab's torch and numpy stay). Elsewhere: nothing.
import importlib.util, subprocess, sys
if importlib.util.find_spec("utils") is None:
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--retries", "1", "--timeout", "15",
                          "{COURSE_ARCHIVE}"], capture_output=True, text=True)
    importlib.invalidate_caches()
    print("Installed the course's utils package." if pip.returncode == 0 else "Could not install the course's utils package "
          f"(no network?); the cells below need it. pip said: {{(pip.stderr.strip().splitlines() or ['nothing'])[-1]}}")'''


def binder_badge(name: str, branch: str | None = None) -> str:
    """Markdown of the badge that opens ``notebooks/<name>`` in JupyterLab on mybinder.org, from
    the default branch (HEAD), or from ``branch`` (the student edition's)."""
    return (f"[![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/{REPOSITORY}/{branch or 'HEAD'}"
            f"?urlpath=lab/tree/notebooks/{name})")


def colab_badge(name: str, branch: str | None = None) -> str:
    """Markdown of the badge that opens ``notebooks/<name>`` in Google Colab, from the default
    branch or from ``branch``."""
    return (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"(https://colab.research.google.com/github/{REPOSITORY}/blob/{branch or BRANCH}/notebooks/{name})")


def badges_line(name: str, branch: str | None = None) -> str:
    return f"{binder_badge(name, branch)} {colab_badge(name, branch)}"


def with_badges(header: str, name: str, branch: str | None = None) -> str:
    """The header cell's markdown with the badges line (opening ``branch``, see binder_badge) in
    place of the Binder badge's line, or under the title if there is none."""
    lines = header.split("\n")
    for index, line in enumerate(lines):
        if BINDER_BADGE.search(line):
            lines[index] = badges_line(name, branch)
            return "\n".join(lines)
    title = next((i for i, line in enumerate(lines) if line.startswith("# ")), -1)
    lines.insert(title + 1, badges_line(name, branch))
    return "\n".join(lines)


def is_setup_cell(cell) -> bool:
    return SETUP_TAG in cell.get("metadata", {}).get("tags", [])


def update(notebook, name: str) -> bool:
    """Put the badges and the setup cell into ``notebook`` (in place); True if it changed."""
    before = nbformat.writes(notebook)
    header = notebook.cells[0] if notebook.cells else None
    if header is None or header.cell_type != "markdown":
        raise ValueError(f"{name}: the first cell must be the markdown header (title and badges)")
    header.source = with_badges(header.source, name)
    existing = [cell for cell in notebook.cells if is_setup_cell(cell)]
    setup = existing[0] if existing else nbformat.v4.new_code_cell(metadata={"tags": [SETUP_TAG]})
    if SITE_TAG not in setup.metadata["tags"]:
        setup.metadata["tags"].append(SITE_TAG)
    notebook.cells = [cell for cell in notebook.cells if not is_setup_cell(cell)]
    if setup.source != SETUP_SOURCE:
        if setup.outputs:  # they described the old source; an empty output stays true (utils installed)
            setup.outputs, setup.execution_count = [], None
        setup.source = SETUP_SOURCE
    setup.id = SETUP_TAG  # a stable cell id keeps diffs small
    notebook.cells.insert(1, setup)
    return nbformat.writes(notebook) != before


def update_readme(path: Path = README) -> bool:
    """Rewrite the README's badges line (Binder and Colab, opening notebook 00); True if it changed."""
    before = path.read_text()
    if not BINDER_BADGE.search(before):
        raise ValueError(f"{path}: no Binder badge line to rewrite")
    after = with_badges(before, "00_start_here.ipynb")
    if after != before:
        path.write_text(after)
    return after != before


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to update (default: all in notebooks/, and README.md)")
    args = parser.parse_args(argv)
    if not args.notebooks:
        print(f"README.md: {'updated' if update_readme() else 'already up to date'}")
    for path in args.notebooks or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        changed = update(notebook, path.name)
        if changed:
            nbformat.write(notebook, path)
        print(f"{path.name}: {'updated' if changed else 'already up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
