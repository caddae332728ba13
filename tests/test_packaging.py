"""A non-editable install (Colab's setup cell installs the course from a zip) must carry every
utils package and data file, not only what an editable install happens to find on disk."""
import importlib.metadata
import importlib.util
import os
import re
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_utils_package_and_data_file_is_declared():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "utils").rglob("__init__.py")}
    assert packages == set(setuptools["packages"])
    data = [p.name for p in (ROOT / "utils").iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")]
    patterns = setuptools.get("package-data", {}).get("utils", [])
    assert all(any(Path(name).match(pattern) for pattern in patterns) for name in data), (data, patterns)


# The tooling is packages of the repository root (scripts, benchmarks, tests), imported as such
# (from scripts import build_site) and run as python -m scripts.build_site; pytest puts the root
# on sys.path (pyproject.toml's pythonpath). A file that edits sys.path itself brings back the web
# of imports that depend on where a script happens to be run from.
SKIPPED = {".git", ".venv", "build", "node_modules", "__pycache__", ".ipynb_checkpoints"}
# JupyterHub executes its config file by path, from its own bin folder, with no package around it:
# that file alone puts the checkout on sys.path to import scripts.classroom_host.
LOADED_BY_PATH = {"classroom/jupyterhub_config.py"}
SYS_PATH_EDIT = re.compile(r"\bsys\.path\s*(?:\.\s*(?:insert|append|extend|remove)\b|(?:\[[^\]]*\])?\s*\+?=(?!=))"
                           r"|\bsite\.addsitedir\s*\(")


def _files(suffix: str) -> list[Path]:
    found = []
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if name not in SKIPPED]
        found += [Path(folder) / name for name in names if name.endswith(suffix)]
    return found


def _packages() -> list[Path]:
    return sorted(path.parent for path in _files("__init__.py"))


def test_the_walk_sees_the_tooling():
    assert {"scripts", "benchmarks", "tests", "utils"} <= {path.name for path in _packages()}
    assert ROOT / "scripts" / "build_site.py" in _files(".py")


@pytest.mark.parametrize("text, edits", [  # PATH, ADDSITEDIR: so this file has no edit of its own
    ("PATH.insert(0, str(ROOT))", True), ("PATH[:0] = [folder]", True), ("PATH += [folder]", True),
    ("PATH.append(folder)", True), ("PATH = [folder]", True), ("ADDSITEDIR(folder)", True),
    ("if folder in PATH:", False), ("paths = list(PATH)", False), ("PATH == before", False),
])
def test_the_pattern_tells_an_edit_from_a_read(text, edits):
    text = text.replace("PATH", "sys.path").replace("ADDSITEDIR", "site.addsitedir")
    assert bool(SYS_PATH_EDIT.search(text)) == edits


def test_no_file_of_the_tree_edits_sys_path():
    edits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in _files(".py")
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if SYS_PATH_EDIT.search(line) and str(path.relative_to(ROOT)) not in LOADED_BY_PATH]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):  # the notebooks' own cells too
        edits += [f"{path.name}: {cell.source.splitlines()[0]}" for cell in nbformat.read(path, as_version=4).cells
                  if cell.cell_type == "code" and SYS_PATH_EDIT.search(cell.source)]
    assert not edits, "import the module from its package instead (from scripts import x):\n" + "\n".join(edits)


def _taken_names() -> dict[str, str]:
    """Top-level module names of the standard library and of every installed distribution but
    this course's own (which installs utils), with who owns each."""
    taken = dict.fromkeys(sys.stdlib_module_names, "the standard library")
    for name, owners in importlib.metadata.packages_distributions().items():
        if set(owners) - {"residual-course-utils"}:
            taken[name] = ", ".join(owners)
    return taken


def test_no_module_of_the_tree_is_named_like_an_installed_or_standard_one():
    """A top-level package or module of the root would shadow the installed one on every import
    from the root; a module inside a package would shadow it when its file is run as a script
    (benchmarks/jupyterlab.py once hid JupyterLab from processes that put benchmarks/ first)."""
    taken = _taken_names()
    inside = [path for package in _packages() for path in package.glob("*.py") if path.name != "__init__.py"]
    modules = [ROOT / "conftest.py", *_packages(), *inside]
    clashes = [f"{path.relative_to(ROOT)} ({taken[path.stem]})" for path in modules if path.stem in taken]
    assert not clashes, f"rename: {clashes}"


@pytest.mark.parametrize("name", ["scripts", "benchmarks", "tests", "utils"])
def test_each_package_imports_from_this_checkout(name):
    spec = importlib.util.find_spec(name)
    assert spec.origin and Path(spec.origin).resolve() == ROOT / name / "__init__.py", spec


def test_the_thread_variables_are_named_only_in_utils_threads():
    """scripts, benchmarks, conftest.py and the Makefile take them from utils.threads.LIBRARY_VARIABLES."""
    users = [*(ROOT / "scripts").glob("*.py"), *(ROOT / "benchmarks").glob("*.py"), ROOT / "conftest.py",
             ROOT / "Makefile"]
    assert "MKL_NUM_THREADS" in (ROOT / "utils" / "threads.py").read_text()
    assert [path.name for path in users if "MKL_NUM_THREADS" in path.read_text()] == []
