"""The student-edition builder (scripts/build_student_edition.py) on small synthetic
notebooks: solution regions become stubs at their indentation, answer cells go, the
outputs of solution and check cells are cleared, everything else is kept."""

import re
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from scripts import build_student_edition as builder

SOLUTION_CELL = '''def residual_forward(x, W1, W2):
    """The block's forward pass."""
    # BEGIN SOLUTION
    hidden = np.maximum(W1 @ x, 0.0)
    return x + W2 @ hidden
    # END SOLUTION
'''


def _code(source, tags=(), count=1, text="out\n"):
    cell = new_code_cell(source, execution_count=count,
                         outputs=[new_output("stream", name="stdout", text=text)])
    cell.metadata["tags"] = list(tags)
    return cell


def _synthetic():
    answer = new_markdown_cell("<details><summary>Answers</summary>42</details>")
    answer.metadata["tags"] = ["answer"]
    return new_notebook(cells=[
        new_markdown_cell("# 07 · A synthetic notebook"),
        _code("import numpy as np\nfrom utils.exercises import core as ex", count=1),
        _code(SOLUTION_CELL, ["solution"], count=2, text=""),
        _code("ex.residual_forward.check(residual_forward)", ["check"], count=3, text="✓ correct\n"),
        _code("print(2 + 2)", count=4, text="4\n"),
        new_markdown_cell("## Homework"),
        answer,
    ])


def test_a_solution_region_becomes_a_stub_at_its_indentation():
    stub = builder.stub_solution(SOLUTION_CELL, "Exercise 07.1")
    assert stub == ('def residual_forward(x, W1, W2):\n    """The block\'s forward pass."""\n'
                    '    raise NotImplementedError("Exercise 07.1: write your code here")\n')


def test_a_stub_still_defines_the_function_and_raises_when_called():
    namespace = {}
    exec(builder.stub_solution(SOLUTION_CELL, "Exercise 07.1"), namespace)
    with pytest.raises(NotImplementedError, match="Exercise 07.1: write your code here"):
        namespace["residual_forward"](1, 2, 3)


def test_every_region_of_a_cell_is_replaced_and_code_outside_is_kept():
    source = ("x = 1\n# BEGIN SOLUTION\ny = 2\n# END SOLUTION\nclass A:\n    def f(self):\n"
              "        # BEGIN SOLUTION\n        return 3\n        # END SOLUTION\n")
    stub = builder.stub_solution(source, "Exercise 01.2")
    assert stub.splitlines() == ["x = 1", 'raise NotImplementedError("Exercise 01.2: write your code here")',
                                 "class A:", "    def f(self):",
                                 '        raise NotImplementedError("Exercise 01.2: write your code here")']
    assert "BEGIN" not in stub and "END" not in stub and "return 3" not in stub


@pytest.mark.parametrize("source, message", [
    ("def f():\n    return 1\n", "has no # BEGIN SOLUTION"),
    ("# BEGIN SOLUTION\nx = 1\n", "has no # END SOLUTION"),
    ("x = 1\n# END SOLUTION\n", "without a # BEGIN SOLUTION"),
    ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "inside a solution that starts on line 1"),
])
def test_misplaced_markers_are_refused_with_the_line(source, message):
    with pytest.raises(ValueError, match=message):
        builder.stub_solution(source, "Exercise 01.1")


def test_stub_solution_wants_a_string():
    with pytest.raises(TypeError, match="source must be a string"):
        builder.stub_solution(["a list"], "Exercise 01.1")


def test_the_student_notebook_drops_answers_and_clears_exercise_outputs():
    teacher = _synthetic()
    student = builder.student_notebook(teacher, "07")
    sources = [cell.source for cell in student.cells]
    assert len(student.cells) == len(teacher.cells) - 1  # the answer cell is gone
    assert not any("answer" in cell.metadata.get("tags", []) for cell in student.cells)
    solution, check, other = student.cells[2], student.cells[3], student.cells[4]
    assert 'raise NotImplementedError("Exercise 07.1: write your code here")' in solution.source
    assert solution.outputs == [] and solution.execution_count is None
    assert check.outputs == [] and check.execution_count is None
    assert check.source == teacher.cells[3].source  # the check call itself stays
    assert other.outputs[0].text == "4\n" and other.execution_count == 4  # other cells keep their outputs
    assert sources[0] == "# 07 · A synthetic notebook" and sources[5] == "## Homework"
    assert teacher.cells[2].source == SOLUTION_CELL and len(teacher.cells[3].outputs) == 1  # untouched


def test_the_label_comes_from_the_exercise_title_when_the_module_has_it(monkeypatch):
    class Titled:
        title = "Exercise 03.2: the Jacobian of x + W x"

    monkeypatch.setattr(builder.importlib, "import_module", lambda name: type("M", (), {"jac": Titled}))
    aliases = builder._exercise_modules([new_code_cell("from utils.exercises import matrix_story as ex")])
    assert aliases == {"ex": "matrix_story"}
    assert builder.exercise_label("ex.jac.check(jac)", aliases, "Exercise 03.1") == "Exercise 03.2"
    assert builder.exercise_label("ex.other.check(f)", aliases, "Exercise 03.1") == "Exercise 03.1"
    assert builder.exercise_label("print(1)", aliases, "Exercise 03.1") == "Exercise 03.1"


def test_the_k_th_exercise_without_a_known_title_is_numbered_by_its_check_cell():
    notebook = _synthetic()
    notebook.cells += [_code("def g(x):\n    # BEGIN SOLUTION\n    return x\n    # END SOLUTION\n", ["solution"]),
                       _code("ex.g.check(g)", ["check"])]
    student = builder.student_notebook(notebook, "07")
    assert 'NotImplementedError("Exercise 07.2: write your code here")' in student.cells[-2].source


def test_a_solution_cell_without_markers_names_the_cell():
    notebook = _synthetic()
    notebook.cells[2].source = "def f():\n    return 1\n"
    with pytest.raises(ValueError, match=r"cell 2 \(id .*\): a cell tagged 'solution' has no"):
        builder.student_notebook(notebook, "07")


def test_build_writes_every_notebook_and_what_a_learner_needs(tmp_path):
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(_synthetic(), source / "07_synthetic.ipynb")
    nbformat.write(new_notebook(cells=[new_markdown_cell("not a course notebook")]), source / "scratch.ipynb")
    out = tmp_path / "student"
    (out / "stale").mkdir(parents=True)
    written = builder.build(out, source)
    assert [p.name for p in written] == ["07_synthetic.ipynb"]
    assert not (out / "stale").exists()  # rebuilt from scratch
    student = nbformat.read(out / "notebooks" / "07_synthetic.ipynb", as_version=4)
    nbformat.validate(student)
    assert len(student.cells) == 6
    assert (out / "utils" / "exercises" / "core.py").is_file() and (out / "requirements.txt").is_file()
    assert "raise NotImplementedError" in (out / "README.md").read_text()


def test_the_editions_install_finds_every_script_its_makefile_runs(tmp_path):
    """`make lab` in a handed-out edition installs with the Makefile's scripts (it once named
    scripts/stamped.py, which the edition lacked, and stopped with "No module named 'scripts'")."""
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(_synthetic(), source / "07_synthetic.ipynb")
    out = tmp_path / "student"
    builder.build(out, source)
    planned = subprocess.run(["make", "-n", "-C", str(out), "lab"], capture_output=True, text=True, check=True).stdout
    modules = set(re.findall(r"-m (scripts\.\w+)", planned))
    assert modules >= {"scripts.stamped"}, planned
    for module in sorted(modules):
        usage = subprocess.run([sys.executable, "-S", "-m", module], cwd=out, capture_output=True, text=True)
        assert usage.returncode == 2 and "No module named" not in usage.stderr, f"{module}: {usage.stderr}"
    # and the command the stamp runs, when the venv is missing
    assert "scripts.course_venv" in (out / "Makefile").read_text()
    assert (out / "scripts" / "course_venv.py").is_file()


def test_build_refuses_to_write_over_the_notebooks(tmp_path):
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(_synthetic(), source / "07_synthetic.ipynb")
    with pytest.raises(ValueError, match="a folder of its own"):
        builder.build(tmp_path, source)
    with pytest.raises(ValueError, match="no notebooks matching"):
        builder.build(tmp_path / "out", tmp_path / "empty")


def test_the_command_line_builds_into_out_and_says_how_many(tmp_path, capsys):
    built = []

    def build(out):
        built.append(out)
        return ["a.ipynb", "b.ipynb"]

    assert builder.build_command(["--out", str(tmp_path)], doc="d", default_out=tmp_path / "default", builder=build,
                                 summary="edition: {count} notebooks in {out}/notebooks") == 0
    assert built == [tmp_path]
    assert capsys.readouterr().out == f"edition: 2 notebooks in {tmp_path.resolve()}/notebooks\n"
    builder.build_command([], doc="d", default_out=tmp_path / "default", builder=build, summary="{count}")
    assert built[-1] == tmp_path / "default"
