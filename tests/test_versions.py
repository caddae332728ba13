"""The pure parts of scripts/test_versions.py (make test-versions builds venvs; it is not a test)."""
import io
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from scripts import backend_matrix
from scripts import test_versions as versions


def test_requirements_pins_lie_inside_the_supported_ranges():
    pins, ranges = versions.read_pins(), versions.supported_ranges()
    assert {"torch", "numpy", "matplotlib", "scikit-learn", "ipywidgets", "ipykernel", "tqdm"} == set(ranges)
    for name, (oldest, newest) in ranges.items():
        assert Version(oldest) <= Version(pins[name]) <= Version(newest), f"{name}=={pins[name]} is outside {oldest}..{newest}"


def test_supported_ranges_parse_both_forms_and_reject_others(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\ndependencies = ["numpy>=1.26.4,<=2.4.6", "torch==2.13.0", "Scikit_Learn >= 1.3, <= 1.9"]\n')
    assert versions.supported_ranges(pyproject) == {"numpy": ("1.26.4", "2.4.6"), "torch": ("2.13.0", "2.13.0"),
                                                    "scikit-learn": ("1.3", "1.9")}
    pyproject.write_text('[project]\ndependencies = ["numpy>=1.26"]\n')
    with pytest.raises(ValueError, match="must read name>=OLDEST,<=NEWEST or name==VERSION"):
        versions.supported_ranges(pyproject)


def test_the_three_environments_vary_the_libraries_and_keep_torch():
    pins = {"torch": "2.13.0", "numpy": "2.4.6", "ipywidgets": "8.1.9", "ipykernel": "7.4.0", "pytest": "9.2.0",
            "jupyterlab": "4.6.6", "playwright": "1.65.2"}
    ranges = {"torch": ("2.13.0", "2.13.0"), "numpy": ("1.26.4", "2.4.6"), "ipywidgets": ("7.7.1", "8.1.9"),
              "ipykernel": ("6.17.1", "7.4.0")}
    envs = versions.environments(pins, ranges, {"pyparsing": "3.1.1"})
    assert envs["ipywidgets7"].requirements == ["pytest==9.2.0", "torch==2.13.0", "numpy==2.4.6",
                                                "ipywidgets==7.7.1", "ipykernel==6.17.1", "ipython==7.34.0"]
    assert envs["oldest"].requirements == ["pytest==9.2.0", "torch==2.13.0", "numpy==1.26.4", "ipywidgets==7.7.1",
                                           "ipykernel==6.17.1", "pyparsing==3.1.1"]
    assert envs["newest"].requirements == ["torch==2.13.0", "ipykernel", "ipywidgets", "numpy", "pytest"]
    assert envs["newest"].upgrade and not envs["oldest"].upgrade


def test_read_pins_takes_exact_pins_only(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# comment\ntorch==2.13.0  # CPU\n--extra-index-url https://x\nNumPy == 2.4.6\n-e .\nfoo>=1\n")
    assert versions.read_pins(requirements) == {"torch": "2.13.0", "numpy": "2.4.6"}


def test_summary_table():
    table = versions.summary({
        "oldest": {"ok": True, "outcome": "424 passed", "install_seconds": 61.2, "test_seconds": 200.4,
                   "versions": {"python": "3.11.7", "numpy": "1.26.4"}},
        "newest": {"ok": False, "outcome": "install failed", "install_seconds": 5.0}}).splitlines()
    assert table[0].split()[:3] == ["environment", "python", "torch"]
    assert table[1].split()[:4] == ["oldest", "3.11.7", "?", "1.26.4"] and table[1].split()[-7:] == ["61", "s", "200", "s", "ok:", "424", "passed"]
    assert table[2].split()[-6:] == ["5", "s", "-", "FAILED:", "install", "failed"]


def test_a_venv_is_kept_only_when_built_from_the_same_pins_and_newest_only_on_its_day(monkeypatch, tmp_path):
    """The install step is skipped for a venv whose stamp matches (newest's, whose point is
    today's PyPI, only on the day it was built; never under --rebuild); anything else is built
    afresh. A kept venv gets the course installed again when it points at another clone."""
    monkeypatch.setattr(versions, "CACHE", tmp_path)
    built = []
    points_here = {"oldest": True, "newest": True}

    def install(command, log, **_):  # the venv step makes the folder the stamp goes in
        if command[1:3] == ["-m", "venv"]:
            (tmp_path / command[3]).mkdir()
        built.append(command)
        return 0

    monkeypatch.setattr(versions, "run_logged", install)
    monkeypatch.setattr(versions, "installed_from_here", lambda venv: points_here[venv.name])
    envs = versions.environments({"torch": "2.13.0", "numpy": "2.4.6"}, {"numpy": ("1.26.4", "2.4.6")}, {})

    def steps(name: str, reuse: bool, day: str = "2026-12-06") -> list:
        built.clear()
        assert versions.build(envs[name], sys.executable, reuse, io.StringIO(), day=day)
        return [command[1:3] if command[1:3] == ["-m", "venv"] else command[-1] for command in built]

    assert steps("oldest", True)[0] == ["-m", "venv"]  # nothing there yet: built, and stamped
    assert steps("oldest", True) == [] and steps("oldest", False)[0] == ["-m", "venv"]
    points_here["oldest"] = False  # kept, but another clone installed the course last
    assert steps("oldest", True) == ["."]
    envs["oldest"].requirements.append("numpy==2.0.0")  # a pin changed: built again
    assert steps("oldest", True)[0] == ["-m", "venv"]
    assert steps("newest", True)[0] == ["-m", "venv"] and steps("newest", True) == []
    assert steps("newest", True, day="2026-12-07")[0] == ["-m", "venv"]  # a new day: PyPI again


def test_the_environments_live_outside_the_clone():
    """A fresh clone finds the venvs an earlier clone built (and its logs stay in its build/)."""
    assert versions.ROOT not in versions.CACHE.parents and versions.LOGS.parent == versions.ROOT / "build"


def test_the_environments_on_one_thread_run_together_and_a_two_thread_one_alone():
    assert versions.batches(["ipywidgets7", "oldest", "newest"]) == [["ipywidgets7", "newest"], ["oldest"]]
    assert versions.batches(["oldest"]) == [["oldest"]]
    assert versions.batches(["newest", "ipywidgets7"]) == [["newest", "ipywidgets7"]]
    # which is which follows the stand-ins: oldest is the one on two threads
    assert [name for name, backend in backend_matrix.IN_VERSION_ENVIRONMENTS.items() if backend.threads > 1] == ["oldest"]


def test_newest_is_not_run_when_the_course_loads_make_tests_libraries(monkeypatch, tmp_path, capsys):
    """When every library the course loads (and the Python) is the one make test has, newest
    would repeat make test: the summary says so and the other environments get the CPUs."""
    monkeypatch.setattr(versions, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(versions, "LOGS", tmp_path / "logs")
    monkeypatch.setattr(versions, "build", lambda *args, **kwargs: True)
    libraries = {"python": "3.11.7", "numpy": "2.4.6", "ipython": "9.19.1"}
    found = {"newest": dict(libraries), ".venv": dict(libraries)}
    monkeypatch.setattr(versions, "course_libraries", lambda python: found[python.parent.parent.name])
    newest = versions.environments({"torch": "2.13.0"}, {"numpy": ("1.26.4", "2.4.6")}, {})["newest"]
    result = versions.already_tested(newest, sys.executable, True)
    assert result["ok"] and result["outcome"].startswith("not run") and result["versions"]["numpy"] == "2.4.6"
    found["newest"]["ipython"] = "9.20.0"  # PyPI released something the course loads: newest runs
    assert versions.already_tested(newest, sys.executable, True) is None
    assert "[newest] runs: PyPI has what make test's venv does not: ipython 9.19.1 -> 9.20.0" in capsys.readouterr().out
    found[".venv"] = None  # no make install (the weekly workflow): it cannot tell, so newest runs
    assert versions.already_tested(newest, sys.executable, True) is None
    assert "cannot compare" in capsys.readouterr().out

    ran = []
    monkeypatch.setattr(versions, "already_tested", lambda environment, *_: {
        "ok": True, "outcome": "not run: the same", "install_seconds": 0.0, "log": "-"})
    monkeypatch.setattr(versions, "run", lambda environment, python, reuse, extra, workers: ran.append(
        (environment.name, workers)) or {"ok": True, "outcome": "1 passed", "install_seconds": 0.0, "log": "-"})
    monkeypatch.setattr(versions.backend_matrix, "workers_each", lambda runs: 2 if runs == 1 else 0)
    assert versions.main([]) == 0
    assert ran == [("ipywidgets7", 2), ("oldest", 2)]  # each alone, on both workers


def test_course_libraries_follow_the_dependencies_and_leave_the_test_tools_out():
    here = versions.course_libraries(Path(sys.executable))
    assert {"numpy", "torch", "matplotlib", "ipykernel", "ipython", "pyzmq", "python"} <= set(here)
    assert "pytest" not in here and "hypothesis" not in here and "nbval" not in here
    assert versions.course_libraries(Path("/nonexistent/python")) is None
