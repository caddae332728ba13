import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from utils import environment
from utils.environment import (NO_WIDGETS, _describe_range, _detect_front_end, _python_problem, _version_problem,
                               _widget_problems)

ROOT = Path(__file__).resolve().parent.parent
NUMPY = Requirement("numpy>=1.26.4,<=2.4.6")
TORCH = Requirement("torch==2.13.0")


def test_tested_ranges_are_the_dependencies_of_pyproject():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    ranges = environment._tested_ranges()
    assert {name: str(r.specifier) for name, r in ranges.items()} == {
        Requirement(line).name: str(Requirement(line).specifier) for line in declared}, (
        "installed metadata differs from pyproject.toml: reinstall with pip install --no-deps -e .")
    assert {"torch", "numpy", "matplotlib", "ipywidgets"} <= set(ranges)


def test_tested_python_is_the_one_binder_and_the_version_environments_use():
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == f"python-{environment.TESTED_PYTHON}"


def test_describe_range_reads_like_prose():
    assert _describe_range(NUMPY) == "1.26.4 to 2.4.6"
    assert _describe_range(TORCH) == "2.13.0"


def test_python_problem_only_outside_the_tested_minor_version():
    assert _python_problem(f"{environment.TESTED_PYTHON}.7") is None
    sentence = _python_problem("3.13.1")
    assert sentence.startswith(f"Python 3.13.1 is not the tested {environment.TESTED_PYTHON}")


def test_version_problem_inside_older_newer_missing_and_unreadable():
    assert _version_problem("numpy", "1.26.4", NUMPY) is None and _version_problem("numpy", "2.4.6", NUMPY) is None
    assert _version_problem("torch", "2.13.0+cpu", TORCH) is None  # the CPU build is the tested release
    older = _version_problem("numpy", "1.24.0", NUMPY)
    assert older == ("numpy 1.24.0 is outside the tested range (1.26.4 to 2.4.6): if a cell fails or a printed "
                     "number differs from the text, install numpy<=2.4.6,>=1.26.4.")
    assert "torch 2.11.0 is outside the tested range (2.13.0)" in _version_problem("torch", "2.11.0", TORCH)
    assert "numpy 2.5.0 is outside" in _version_problem("numpy", "2.5.0", NUMPY)
    on_colab = _version_problem("torch", "2.11.0", TORCH, on_colab=True)
    assert on_colab.endswith("compare with the stored outputs, or use Binder (Colab's own torch is best left as it is).")
    assert _version_problem("numpy", None, NUMPY).startswith("numpy is not installed: the cells that use it will fail")
    assert "numpy weird is outside" in _version_problem("numpy", "weird", NUMPY)


def test_widget_problems_by_version_and_front_end():
    assert _widget_problems("8.1.9", "JupyterLab", "3.0.17") == []
    assert _widget_problems("7.7.1", "JupyterLab", "3.0.17") == []  # the ipywidgets 8 extension renders 7 too
    assert _widget_problems("7.7.1", "Colab", None) == []
    assert _widget_problems("6.0.0", "JupyterLab", None) == [f"ipywidgets 6 found: {NO_WIDGETS}."]
    assert _widget_problems(None, "VS Code", None) == [f"ipywidgets is not installed: {NO_WIDGETS}."]
    colab = _widget_problems("8.1.9", "Colab", None)
    assert len(colab) == 1 and colab[0].startswith("ipywidgets 8.1.9 on Colab, whose widget manager is built for 7.7")
    old_extension = _widget_problems("8.1.9", "Binder", "1.1.1")
    assert len(old_extension) == 1 and "jupyterlab_widgets 3, found 1.1.1" in old_extension[0]


@pytest.mark.parametrize("environ, modules, in_kernel, expected", [
    ({"COLAB_RELEASE_TAG": "release-colab"}, {}, True, "Colab"),
    ({}, {"google.colab": None}, True, "Colab"),
    ({"BINDER_LAUNCH_HOST": "https://mybinder.org/", "JPY_SESSION_NAME": "00.ipynb"}, {}, True, "Binder"),
    ({"VSCODE_PID": "123"}, {}, True, "VS Code"),
    ({"JPY_SESSION_NAME": "/notebooks/00.ipynb", "JPY_PARENT_PID": "1"}, {}, True, "JupyterLab"),
    ({"JPY_PARENT_PID": "1"}, {}, True, environment.SCRIPT_KERNEL),
    ({}, {}, False, environment.NOT_A_KERNEL),
])
def test_detect_front_end(environ, modules, in_kernel, expected):
    assert _detect_front_end(environ, modules, in_kernel) == expected


def test_check_here_finds_no_problem_and_lists_every_library():
    report = environment.check()
    assert report.problems == [], report.problems
    assert report.verdict() == "Environment check: no problems found; every version is inside the tested range."
    details = report.details().splitlines()
    assert details[0].startswith(f"Python {environment.TESTED_PYTHON}.")
    for name in ("torch", "numpy", "matplotlib", "ipywidgets"):
        assert any(line.startswith(f"{name} {metadata.version(name)} (tested: ") for line in details), name
    assert report.front_end in environment.FRONT_ENDS and "CPU cores" in report.threads


def test_check_reports_a_library_that_does_not_import(monkeypatch):
    environment.check()  # everything imported for real first, so only the faked failure shows
    real_import = environment.importlib.import_module

    def broken(name):
        if name == "numpy":
            raise ImportError("numpy.core.multiarray failed to import")
        return real_import(name)

    monkeypatch.setattr(environment.importlib, "import_module", broken)
    report = environment.check()
    assert report.problems == ["numpy is installed but does not import (ImportError: numpy.core.multiarray "
                               "failed to import): reinstall it."]
    assert report.verdict().splitlines() == ["Environment check: 1 problem found.", f"- {report.problems[0]}"]


def test_check_without_the_course_package_says_how_to_install_it(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(environment.metadata, "requires", missing)
    report = environment.check()
    assert len(report.problems) == 1 and "pip install -e ." in report.problems[0]


def test_check_reports_widget_and_version_problems_together(monkeypatch):
    versions = {"ipywidgets": "8.1.9", "numpy": "1.22.0"}
    real_version = environment._installed_version
    monkeypatch.setattr(environment, "_installed_version", lambda name: versions.get(name, real_version(name)))
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-test")
    report = environment.check()
    assert report.front_end == "Colab" and report.widgets == "will not work here (see above)"
    assert [p.split(" ")[0:2] for p in report.problems] == [["numpy", "1.22.0"], ["ipywidgets", "8.1.9"]]
    assert report.verdict().startswith("Environment check: 2 problems found.\n- numpy 1.22.0 is outside")
    assert "Colab's own numpy is best left as it is" in report.problems[0]


def test_running_the_module_prints_the_report_and_exits_zero_here():
    result = subprocess.run([sys.executable, "-m", "utils.environment"], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Environment check: no problems found") and "running in: " in result.stdout
