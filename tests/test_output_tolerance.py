"""The comparison of stored and fresh outputs: float noise passes, real changes fail."""
import math
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests import output_tolerance
from tests.output_tolerance import (DEFAULT, Rule, last_digit_unit, numbers_agree, printed_values_agree, reconcile,
                              rule_from_metadata, split_numbers, texts_agree)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("number, unit", [("63.5117", 1e-4), ("-0.0000", 1e-4), ("1.0e7", 1e6), ("9.5e-07", 1e-8),
                                          ("12", 0.0), ("2.", 0.0), (".25", 0.01)])
def test_last_digit_unit(number, unit):
    assert last_digit_unit(number) == pytest.approx(unit)


@pytest.mark.parametrize("stored, fresh, agree", [
    ("63.5117", "63.5116", True),     # the reference table's unstable digit
    ("63.5117", "63.5115", False),
    ("-0.0000", "0.0000", True),      # the sign of zero
    ("1.0e7", "1.1e7", True),
    ("1.0e7", "7.9e8", False),        # a float32 product through 1000 layers on another CPU
    ("9.99e-01", "1.00e+00", True),   # rounding across a power of ten
    ("30", "31", False),              # counts are exact
    ("2.", "3.", False),
])
def test_numbers_agree_by_default_within_one_unit_of_the_last_digit(stored, fresh, agree):
    assert numbers_agree(stored, fresh) is agree


def test_declared_rules():
    assert not numbers_agree("2.1", "2.2", Rule(exact=True))
    assert numbers_agree("0.055", "0.060", Rule(rel=0.1)) and not numbers_agree("0.055", "0.097", Rule(rel=0.3))
    assert numbers_agree("200", "203", Rule(abs=5)) and not numbers_agree("200", "206", Rule(abs=5))


def test_printed_values_agree_compares_the_printed_digits_under_the_rule():
    assert printed_values_agree(63.5118, 63.511654, 4)              # 63.5118 and 63.5117: one unit apart
    assert not printed_values_agree(63.5118, 63.51154, 4)           # 63.5118 and 63.5115: three
    assert printed_values_agree(63.51165, 63.51174, 3)              # 63.512 both
    assert printed_values_agree(-1e-9, 0.0, 4)                      # -0.0000 and 0.0000
    assert printed_values_agree(63.5118, 63.5116, 4, Rule(abs=2e-4))
    assert not printed_values_agree(63.5118, 63.5114, 4, Rule(abs=2e-4))


def test_texts_agree_only_when_the_words_match():
    assert texts_agree("gain 1.0e7 at 1000 blocks\n", "gain 1.1e7 at 1000 blocks\n")
    assert not texts_agree("gain 1.0e7 at 1000 blocks\n", "gain 1.0e7 at 999 blocks\n")
    assert not texts_agree("plain 0.50\n", "residual 0.50\n")
    assert not texts_agree("[0.5, 0.25]", "[0.5, 0.25, 0.1]")
    assert texts_agree("torch 2.13.0, W1 x = [1.0, 0.5]", "torch 2.13.0, W1 x = [1.0, 0.5]")
    assert split_numbers("W1 x = -0.5e-3, 2.13.0") == (["W", " x = ", ", ", ".0"], ["1", "-0.5e-3", "2.13"])


def test_rule_from_metadata():
    assert rule_from_metadata({}) == DEFAULT and rule_from_metadata(None) == DEFAULT
    assert rule_from_metadata({"tolerance": "exact"}) == Rule(exact=True)
    assert rule_from_metadata({"tolerance": {"rel": 0.2, "abs": 0.01}}) == Rule(rel=0.2, abs=0.01)
    for bad in ({"rel": 0.5}, {"rel": -1}, {"digits": 2}, {}, "loose", {"abs": math.inf}):
        with pytest.raises(ValueError, match="tolerance"):
            rule_from_metadata({"tolerance": bad})


def _stream(name, text):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_reconcile_replaces_only_agreeing_texts_and_pairs_outputs_by_stream_and_position():
    stored = [_stream("stdout", "norm 63.5117\n"),
              nbformat.v4.new_output("execute_result", data={"text/plain": "0.25"}, execution_count=3)]
    fresh = [_stream("stdout", "norm 63.5116\n"),
             nbformat.v4.new_output("execute_result", data={"text/plain": "0.30"}, execution_count=3)]
    result = reconcile(fresh, stored)
    assert result[0]["text"] == "norm 63.5117\n"       # float noise: takes the stored text
    assert result[1]["data"]["text/plain"] == "0.30"   # a real change: left for nbval to report
    assert fresh[0]["text"] == "norm 63.5116\n"        # inputs untouched


def _numbers_of(notebook):
    """(cell index, rule, stored text, number's position) for every stored number worth halving."""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        rule = rule_from_metadata(cell.get("metadata"))
        for output in cell.get("outputs", []):
            texts = [output.get("text", "")] + [output.get("data", {}).get(m, "") for m in ("text/plain",)]
            for text in texts:
                text = "".join(text) if isinstance(text, list) else text
                for position, number in enumerate(split_numbers(text)[1]):
                    value = float(number)
                    big_enough = abs(value) >= 3 * last_digit_unit(number) and abs(value) > 2 * rule.abs
                    if value != 0 and big_enough and not math.isinf(value):
                        yield index, rule, text, position


def _with_number_scaled(text, position, factor):
    pieces, numbers = split_numbers(text)
    number = numbers[position]
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    scaled = float(number) * factor
    if exponent:
        new = f"{scaled:.{decimals}e}"
    else:
        new = f"{scaled:.{decimals}f}" if "." in mantissa else str(round(scaled))
    numbers[position] = new
    return "".join(p + n for p, n in zip(pieces, numbers + [""]))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_a_stored_number_changed_by_half_fails_its_notebook(path):
    notebook = nbformat.read(path, as_version=4)
    checked = 0
    for index, rule, text, position in _numbers_of(notebook):
        for factor in (0.5, 1.5):
            changed = _with_number_scaled(text, position, factor)
            assert not texts_agree(text, changed, rule), f"{path.name} cell {index}: {text!r} vs {changed!r}"
        checked += 1
    assert checked > 0 or path.name.startswith("00")


def test_nbval_uses_the_tolerant_comparison(tmp_path):
    """A real nbval run on a one-cell notebook: the last digit may move, half the value may not."""
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")  # a package: older IPython puts its own `tests` on sys.path
    shutil.copy(ROOT / "tests" / "output_tolerance.py", tmp_path / "tests" / "output_tolerance.py")

    def run_with_stored(text):
        cell = nbformat.v4.new_code_cell("print(round(63.51171, 4))", execution_count=1,
                                         outputs=[_stream("stdout", text)])
        notebook = nbformat.v4.new_notebook(cells=[cell])
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, tmp_path / "check.ipynb")
        return subprocess.run([sys.executable, "-m", "pytest", "--nbval", "-p", "no:cacheprovider", "-q",
                               "check.ipynb"], cwd=tmp_path, capture_output=True, text=True, timeout=300)

    assert run_with_stored("63.5116\n").returncode == 0
    failed = run_with_stored("95.2676\n")
    assert failed.returncode == 1 and "95.2676" in failed.stdout


def test_a_run_outside_nbval_is_compared_as_nbval_compares_it():
    """run_differences (the live site's, JupyterLab's and nbgrader's runs): the last digit may
    move; a changed number, a changed result, any stderr and a missing cell are differences;
    a widget's cell and one tagged nbval-ignore-output are not compared."""
    printed = nbformat.v4.new_code_cell("", outputs=[_stream("stdout", "loss 63.5117\n")])
    result = nbformat.v4.new_code_cell("", outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "2.59"})])
    widget = nbformat.v4.new_code_cell("", outputs=[nbformat.v4.new_output(
        "display_data", {"text/plain": "VBox()", output_tolerance.WIDGET_VIEW: {"model_id": "a"}})])
    ignored = nbformat.v4.new_code_cell("", metadata={"tags": ["nbval-ignore-output"]}, outputs=[_stream("stdout", "7 s\n")])
    stored = [printed, result, widget, ignored]

    def fresh(loss="loss 63.5116\n", value="2.59", extra=()):
        return [[_stream("stdout", loss), *extra], [nbformat.v4.new_output("execute_result", {"text/plain": value})],
                [_stream("stdout", "a picture")], [_stream("stdout", "9 s\n")]]

    assert output_tolerance.run_differences(stored, fresh()) == []
    assert output_tolerance.run_differences(stored, fresh(loss="loss 95.2676\n"))[0].startswith("cell 0: stdout")
    assert output_tolerance.run_differences(stored, fresh(value="3.0"))[0].startswith("cell 1: results")
    assert output_tolerance.run_differences(stored, fresh(extra=[_stream("stderr", "UserWarning")])) == [
        "cell 0: stderr: 'UserWarning'"]
    assert output_tolerance.run_differences(stored, fresh()[:3]) == ["3 code cells ran, the notebook has 4"]
