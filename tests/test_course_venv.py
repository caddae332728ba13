"""scripts/course_venv.py: a venv built from nothing is cached, a missing one is copied back
from a copy built today from the same requirements.txt (and works where it lands), and an
existing one is updated in place."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import course_venv

DAY = "2026-12-07"


def _tiny_build(log: list):
    """A builder that makes a real but package-less venv with one console script naming its
    python (as pip writes them), and records each build."""
    def build(venv: Path, python: str, pip_extra: list[str]) -> None:
        log.append(venv)
        subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
        script = venv / "bin" / "where"
        script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nprint(sys.prefix)\n")
        script.chmod(0o755)
    return build


@pytest.fixture
def requirements(tmp_path) -> Path:
    path = tmp_path / "requirements.txt"
    path.write_text("torch==2.13.0\n")
    return path


def _install(venv, requirements, cache, log, day=DAY):
    return course_venv.install(venv, cache=cache, day=day, builder=_tiny_build(log), requirements=requirements)


def test_a_venv_built_from_nothing_is_copied_to_the_next_clone_and_works_there(tmp_path, requirements):
    cache, log = tmp_path / "cache", []
    first, second = tmp_path / "clone-a" / ".venv", tmp_path / "clone-b" / ".venv"
    assert _install(first, requirements, cache, log).startswith("built and cached")
    assert _install(second, requirements, cache, log).startswith("copied from")
    assert log == [first], "the second clone built again"
    # The copy's script runs with the copy's python, not the first clone's or the cache's.
    ran = subprocess.run([str(second / "bin" / "where")], capture_output=True, text=True, check=True)
    assert Path(ran.stdout.strip()) == second
    for text in ((second / "bin" / "where").read_text(), (second / "bin" / "activate").read_text(),
                 (second / "pyvenv.cfg").read_text()):
        assert str(first) not in text and str(cache) not in text
    assert os.access(second / "bin" / "where", os.X_OK)


def test_other_requirements_python_extras_or_day_build_afresh(tmp_path, requirements):
    cache, log = tmp_path / "cache", []
    _install(tmp_path / "a", requirements, cache, log)
    _install(tmp_path / "b", requirements, cache, log, day="2026-12-08")  # a new day: new releases possible
    requirements.write_text("torch==2.13.0\nnumpy==2.4.6\n")
    _install(tmp_path / "c", requirements, cache, log)
    assert log == [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    keys = {course_venv.key(b"r", "3.11.7", "", DAY), course_venv.key(b"r", "3.12.1", "", DAY),
            course_venv.key(b"r", "3.11.7", "--extra-index-url https://download.pytorch.org/whl/cpu", DAY)}
    assert len(keys) == 3
    # Only the most recent copies are kept.
    assert len([p for p in cache.iterdir()]) == course_venv.KEPT


def test_an_existing_venv_is_updated_in_place_and_never_cached(tmp_path, requirements):
    cache, log = tmp_path / "cache", []
    venv = tmp_path / ".venv"
    venv.mkdir()
    (venv / "learner-installed.txt").write_text("kept")
    assert _install(venv, requirements, cache, log) == "updated in place"
    assert log == [venv] and (venv / "learner-installed.txt").read_text() == "kept"
    assert not cache.exists() or not any(cache.iterdir())


def test_the_command_line_wants_one_folder(capsys):
    assert course_venv.main([]) == 2 and course_venv.main(["--help"]) == 2
    assert "course_venv .venv" in capsys.readouterr().err


def test_relocation_leaves_binary_files_alone(tmp_path):
    venv = tmp_path / "v"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"command = python3 -m venv {venv}\n")
    binary = b"\x7fELF\0" + str(venv).encode()
    (venv / "bin" / "tool").write_bytes(binary)
    course_venv.relocate(venv, venv, tmp_path / "elsewhere")
    assert (venv / "bin" / "tool").read_bytes() == binary
    assert str(tmp_path / "elsewhere") in (venv / "pyvenv.cfg").read_text()


def test_the_module_needs_only_the_standard_library():
    """It runs before the venv exists, with the system's Python, as the student edition's make lab does."""
    imported = subprocess.run([sys.executable, "-S", "-c",  # -S: no site-packages
                               "import sys; import scripts.course_venv, scripts.stamped; print(sorted(m for m in sys.modules"
                               " if m.split('.')[0] not in sys.stdlib_module_names and m != '__main__'))"],
                              cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "['scripts', 'scripts.course_venv', 'scripts.stamped']"
