"""The repository is named once, in pyproject.toml's [tool.course] (scripts/course_repository.py):
every Binder, Colab, download, site and classroom link agrees with it, and a fork that changes
that one line and runs ``python -m scripts.write_links`` gets every link changed (README,
"Fork it")."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import nbformat
import pytest
import yaml

from scripts import build_student_edition, notebook_header, write_links
from scripts.course_repository import BRANCH, GITHUB_URL, REPOSITORY, STUDENT_BRANCH

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = "OWNER/REPO"  # how the README writes "your fork" in its instructions
TEXT_SUFFIXES = {".md", ".py", ".ipynb", ".yaml", ".yml", ".toml", ".txt", ".cfg"}
SKIPPED_FOLDERS = {".git", ".venv", "build", "node_modules", "__pycache__", ".ipynb_checkpoints"}
SLUG = r"([\w.-]+/[\w.-]+)"
LAUNCH_LINKS = (re.compile(rf"mybinder\.org/v2/gh/{SLUG}/"), re.compile(rf"colab\.research\.google\.com/github/{SLUG}/"))
GITHUB_LINK = re.compile(rf"github\.com/{SLUG}")
FORK = "a-teacher/their-course"


def course_text_files(root: Path):
    """The repository's text files, third-party copies (classroom/z2jh/chart-*) left out."""
    for path in sorted(root.rglob("*")):
        parts = set(path.relative_to(root).parts)
        if (path.suffix in TEXT_SUFFIXES and path.is_file() and not parts & SKIPPED_FOLDERS
                and not any(part.startswith("chart-") for part in parts)):
            yield path


def disagreeing_links(text: str, repository: str) -> list[str]:
    """The links in ``text`` (URL-encoded ones too) that name a repository other than
    ``repository``: every Binder and Colab link, and GitHub links that share its owner or name."""
    owner, name = repository.split("/")
    wrong = []
    for variant in {text, urllib.parse.unquote(text)}:
        for pattern in LAUNCH_LINKS:
            wrong += [match[0] for match in pattern.finditer(variant) if match[1] not in (repository, PLACEHOLDER)]
        for match in GITHUB_LINK.finditer(variant):
            their_owner, their_name = match[1].split("/")
            their_name = their_name.removesuffix(".git")
            if (their_owner == owner or their_name == name) and f"{their_owner}/{their_name}" != repository:
                wrong.append(match[0])
    return sorted(set(wrong))


def test_every_link_agrees_with_the_repository_setting():
    checked, wrong = 0, {}
    for path in course_text_files(ROOT):
        if path.relative_to(ROOT).parts[0] == "tests":
            continue  # the tests' own sample links; their repository comes from the setting (the fork test greps them)
        text = path.read_text(errors="replace")
        checked += bool(any(p.search(text) for p in LAUNCH_LINKS) or GITHUB_LINK.search(urllib.parse.unquote(text)))
        if found := disagreeing_links(text, REPOSITORY):
            wrong[str(path.relative_to(ROOT))] = found
    assert checked >= 14, f"found links in only {checked} files; the README and 13 notebooks have badges"
    assert not wrong, f"links that do not name {REPOSITORY} (pyproject.toml [tool.course]): {wrong}; run make links"


def test_the_scanner_finds_a_link_that_names_another_repository():
    text = (f"[b](https://mybinder.org/v2/gh/someone/else/HEAD) {GITHUB_URL}/archive/main.zip "
            "repo=https%3A%2F%2Fgithub.com%2Fsomeone%2F" + REPOSITORY.split("/")[1])
    assert disagreeing_links(text, REPOSITORY) == ["github.com/someone/" + REPOSITORY.split("/")[1],
                                                   "mybinder.org/v2/gh/someone/else/"]
    assert disagreeing_links(f"https://github.com/jupyter-widgets/ipywidgets {GITHUB_URL}.git", REPOSITORY) == []


def test_the_site_and_the_classroom_values_link_the_repository_of_the_setting():
    import runpy

    options = runpy.run_path(str(ROOT / "site" / "conf.py"))["html_theme_options"]
    assert (options["repository_url"], options["repository_branch"]) == (GITHUB_URL, BRANCH)
    first_page = yaml.safe_load(write_links.Z2JH_VALUES.read_text())["singleuser"]["defaultUrl"]
    assert first_page == write_links.z2jh_first_page(), "classroom/z2jh/config.yaml's first page is stale; run make links"
    query = urllib.parse.parse_qs(urllib.parse.urlparse(first_page).query)
    assert (query["repo"], query["branch"]) == ([GITHUB_URL], [STUDENT_BRANCH])


def test_the_student_editions_badges_open_the_student_branch(tmp_path):
    written = build_student_edition.build(tmp_path / "student")
    for path in written:
        header = nbformat.read(path, as_version=4).cells[0].source
        assert notebook_header.badges_line(path.name, STUDENT_BRANCH) in header.split("\n"), path.name
        assert not disagreeing_links(header, REPOSITORY)
    readme = (tmp_path / "student" / "README.md").read_text()
    assert notebook_header.badges_line("00_start_here.ipynb", STUDENT_BRANCH) in readme


def _run(command: list[str], cwd: Path) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def test_a_fork_changes_one_line_and_every_link_follows(tmp_path):
    fork = tmp_path / "fork"
    shutil.copytree(ROOT, fork, ignore=shutil.ignore_patterns(*SKIPPED_FOLDERS, "*.egg-info", "*.png"))
    pyproject = fork / "pyproject.toml"
    line = f'repository = "{REPOSITORY}"'
    assert pyproject.read_text().count(line) == 1, f"pyproject.toml must hold the one line {line}"
    pyproject.write_text(pyproject.read_text().replace(line, f'repository = "{FORK}"'))

    _run([sys.executable, "-m", "scripts.write_links"], fork)
    _run([sys.executable, "-m", "scripts.build_student_edition", "--out", str(tmp_path / "student")], fork)

    leftovers = [str(path.relative_to(tmp_path)) for path in [*course_text_files(fork), *course_text_files(tmp_path / "student")]
                 if REPOSITORY in path.read_text(errors="replace") or REPOSITORY in urllib.parse.unquote(path.read_text(errors="replace"))]
    assert not leftovers, f"still naming {REPOSITORY} after the fork changed the setting: {leftovers}"
    readme = (fork / "README.md").read_text()
    assert f"mybinder.org/v2/gh/{FORK}/HEAD" in readme and f"colab.research.google.com/github/{FORK}/blob/" in readme
    for path in sorted((fork / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        text = path.read_text()
        assert f"mybinder.org/v2/gh/{FORK}/HEAD" in text and f"https://github.com/{FORK}/archive/" in text, path.name
    for path in sorted((tmp_path / "student" / "notebooks").glob("*.ipynb")):
        assert f"mybinder.org/v2/gh/{FORK}/{STUDENT_BRANCH}" in path.read_text(), f"student edition {path.name}"
    assert f"https%3A%2F%2Fgithub.com%2F{FORK.replace('/', '%2F')}&" in (fork / "classroom" / "z2jh" / "config.yaml").read_text()
    site = _run([sys.executable, "-c", "import runpy; print(runpy.run_path('site/conf.py')['html_theme_options']"
                                       "['repository_url'])"], fork)
    assert site.strip() == f"https://github.com/{FORK}"
    # The fork's own link, badge and header tests pass, and its notebooks still count as executed.
    _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-m", "not slow",
          "tests/test_course_repository.py::test_every_link_agrees_with_the_repository_setting",
          "tests/test_course_repository.py::test_the_site_and_the_classroom_values_link_the_repository_of_the_setting",
          "tests/test_binder.py", "tests/test_notebook_header.py::test_every_notebook_has_the_badges_and_the_setup_cell_first",
          "tests/test_notebooks_saved.py"], fork)
