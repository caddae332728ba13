"""Every notebook opens with the course's header (scripts/notebook_header.py puts it there): the
Binder and Colab badges, then the setup cell that installs the course's utils package on Colab
only. The setup cell's logic is run here with a fake pip (package present, missing, install
failing) and with the real pip and no network."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from scripts import notebook_header as header

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_notebook_has_the_badges_and_the_setup_cell_first(path):
    notebook = nbformat.read(path, as_version=4)
    fix = f"run: python -m scripts.notebook_header {path.relative_to(ROOT)}"
    assert header.badges_line(path.name) in notebook.cells[0].source.split("\n"), f"{path.name}: no badges line; {fix}"
    first_code = next(cell for cell in notebook.cells if cell.cell_type == "code")
    assert header.is_setup_cell(first_code) and first_code.source == header.SETUP_SOURCE, (
        f"{path.name}: the first code cell is not the current setup cell; {fix}")
    assert not header.update(notebook, path.name), f"{path.name}: the header is not up to date; {fix}"


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def test_update_adds_badges_and_setup_cell_once_and_keeps_the_rest():
    title = nbformat.v4.new_markdown_cell(
        "# 04 · A title\n" + header.binder_badge("04_x.ipynb") + "\n\n**What you will learn:** ...")
    code = nbformat.v4.new_code_cell("print(1)")
    notebook = _notebook(title, code)
    assert header.update(notebook, "04_x.ipynb")
    lines = notebook.cells[0].source.split("\n")
    assert lines[:2] == ["# 04 · A title", header.badges_line("04_x.ipynb")] and lines[3] == "**What you will learn:** ..."
    assert [c.source for c in notebook.cells[1:]] == [header.SETUP_SOURCE, "print(1)"]
    assert notebook.cells[1].id == header.SETUP_TAG and notebook.cells[1].metadata["tags"] == [header.SETUP_TAG, header.SITE_TAG]
    assert not header.update(notebook, "04_x.ipynb")  # idempotent
    assert len(notebook.cells) == 3


def test_update_puts_badges_under_the_title_and_moves_an_old_setup_cell_first():
    old_setup = nbformat.v4.new_code_cell("# an older setup cell", metadata={"tags": [header.SETUP_TAG]})
    old_setup.outputs = [nbformat.v4.new_output("stream", text="old\n")]
    notebook = _notebook(nbformat.v4.new_markdown_cell("# 11 · New\nText."),
                         nbformat.v4.new_code_cell("x = 1"), old_setup)
    assert header.update(notebook, "11_new.ipynb")
    assert notebook.cells[0].source == f"# 11 · New\n{header.badges_line('11_new.ipynb')}\nText."
    assert [c.source for c in notebook.cells[1:]] == [header.SETUP_SOURCE, "x = 1"]
    assert notebook.cells[1].outputs == []  # its old output described the old source


def test_update_refuses_a_notebook_without_a_markdown_header():
    with pytest.raises(ValueError, match="the first cell must be the markdown header"):
        header.update(_notebook(nbformat.v4.new_code_cell("x = 1")), "12_x.ipynb")


def test_the_script_is_idempotent_on_a_copy_of_a_notebook(tmp_path):
    copy = tmp_path / NOTEBOOKS[0].name
    copy.write_bytes(NOTEBOOKS[0].read_bytes())
    script = [sys.executable, "-m", "scripts.notebook_header", str(copy)]
    subprocess.run(script, check=True, capture_output=True, cwd=ROOT)
    once = copy.read_bytes()
    second = subprocess.run(script, check=True, capture_output=True, text=True, cwd=ROOT)
    assert copy.read_bytes() == once and "already up to date" in second.stdout


# ---------------------------------------------------------------- the setup cell's logic


class FakePip:
    def __init__(self, returncode, stderr=""):
        self.calls, self.returncode, self.stderr = [], returncode, stderr

    def __call__(self, command, **options):
        self.calls.append(command)
        return subprocess.CompletedProcess(command, self.returncode, "", self.stderr)


def _run_setup(monkeypatch, capsys, installed: bool, pip: FakePip, source: str = header.SETUP_SOURCE) -> str:
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "utils" and not installed else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(subprocess, "run", pip)
    exec(compile(source, "setup-cell", "exec"), {})
    return capsys.readouterr().out


def test_setup_cell_does_nothing_when_the_course_is_installed(monkeypatch, capsys):
    pip = FakePip(0)
    assert _run_setup(monkeypatch, capsys, installed=True, pip=pip) == "" and pip.calls == []


def test_setup_cell_installs_only_the_course_when_it_is_missing(monkeypatch, capsys):
    pip = FakePip(0)
    out = _run_setup(monkeypatch, capsys, installed=False, pip=pip)
    assert out == "Installed the course's utils package.\n"
    [command] = pip.calls
    assert command[:4] == [sys.executable, "-m", "pip", "install"] and "--no-deps" in command
    assert command[-1] == header.COURSE_ARCHIVE == f"https://github.com/{header.REPOSITORY}/archive/{header.BRANCH}.zip"
    assert not any(name in " ".join(command[1:]) for name in ("torch", "numpy", "ipywidgets", "--upgrade", "-U"))


def test_setup_cell_without_network_prints_a_clear_message(monkeypatch, capsys):
    stderr = ("WARNING: Retrying ...\nERROR: Could not install requirement https://github.com/x/archive/main.zip "
              "because of HTTP error: Network is unreachable")
    out = _run_setup(monkeypatch, capsys, installed=False, pip=FakePip(1, stderr))
    assert out.startswith("Could not install the course's utils package (no network?); the cells below need it. "
                          "pip said: ERROR: Could not install")
    assert "Traceback" not in out


def test_setup_cell_with_the_real_pip_and_an_unreachable_address(monkeypatch, capsys):
    """pip really fails here (nothing listens on port 9 of this machine): the cell still ends
    with one message, not an exception."""
    assert header.COURSE_ARCHIVE in header.SETUP_SOURCE
    source = header.SETUP_SOURCE.replace(header.COURSE_ARCHIVE, "http://127.0.0.1:9/course.zip")
    out = _run_setup(monkeypatch, capsys, installed=False, pip=subprocess.run, source=source)
    assert out.startswith("Could not install the course's utils package (no network?)")
    assert "pip said: " in out and out.count("\n") == 1


def test_setup_cell_is_a_few_lines_of_plain_python():
    """A learner scrolls past it in every notebook: short, and no IPython magic, so it runs
    (and is tested here) as ordinary Python."""
    assert len(header.SETUP_SOURCE.splitlines()) <= 8
    compile(header.SETUP_SOURCE, "setup-cell", "exec")
