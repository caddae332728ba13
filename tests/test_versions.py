"""The pure parts of scripts/test_versions.py (make test-versions builds venvs; it is not a test)."""
import io
import sys

import pytest
from packaging.version import Version

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


def test_a_venv_is_kept_only_when_built_from_the_same_pins_and_newest_never(monkeypatch, tmp_path):
    """The install step is skipped for a venv whose stamp matches (never for newest, whose point
    is today's PyPI, nor under --rebuild); anything else is built afresh."""
    monkeypatch.setattr(versions, "BUILD", tmp_path)
    built = []

    def install(command, log, **_):  # the venv step makes the folder the stamp goes in
        if command[1:3] == ["-m", "venv"]:
            (tmp_path / command[3]).mkdir()
        built.append(command)
        return 0

    monkeypatch.setattr(versions, "run_logged", install)
    envs = versions.environments({"torch": "2.13.0", "numpy": "2.4.6"}, {"numpy": ("1.26.4", "2.4.6")}, {})

    def kept(name: str, reuse: bool) -> bool:
        built.clear()
        assert versions.build(envs[name], sys.executable, reuse, io.StringIO())
        return not built

    assert not kept("oldest", True)  # nothing there yet: built, and stamped
    assert kept("oldest", True) and not kept("oldest", False)
    assert not kept("newest", True) and not kept("newest", True)
    envs["oldest"].requirements.append("numpy==2.0.0")  # a pin changed: built again
    assert not kept("oldest", True)
