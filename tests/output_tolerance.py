"""How a notebook's stored outputs are compared with a fresh run: text exactly, numbers
within what the printed digits claim.

A notebook is executed on one machine and re-run by the tests on others: another CPU,
numeric backend (ATen's kernels, MKL's code branch) or thread count may move the last
printed digit of a float result, or turn 0.0000 into -0.0000. nbval alone compares
strings, so this module decides when two outputs say the same thing:

- Everything that is not a number must match to the letter.
- An integer (no decimal point, no exponent: a count, a shape, a depth) must match exactly.
- A decimal number may differ by one unit in its last printed digit: 63.5117 and 63.5116
  agree, 63.5117 and 63.52 do not. The sign of zero does not count.
- A cell can declare its own rule in its metadata, under ``"tolerance"``:
  ``"exact"``: the text must match to the letter (a hand-computed worked example);
  ``{"rel": r}`` and/or ``{"abs": a}``: every number in the cell, integers included, may
  differ by ``a + r * |stored|`` (on top of the last-digit unit). ``r`` must be below 0.5,
  so a stored number changed by half still fails; tests/test_output_tolerance.py checks
  that for every number in every notebook that is larger than twice its cell's ``a``.

``conftest.py`` applies it to nbval: before nbval's strict comparison, each fresh text
output that agrees with its stored twin under these rules is replaced by the stored text,
so only real differences reach nbval's report. ``run_differences`` compares the same way
for a run nbval does not make (a browser's kernel, nbgrader's autograde).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

# A number: optional sign, digits with an optional fraction (or a bare fraction), optional
# exponent; never starting inside another number (after a digit or a dot), so "2.13.0"
# reads as 2.13 and the text ".0" on both sides. Names such as "W1" or "x64" read as text
# and an integer, which must match exactly.
NUMBER = re.compile(r"(?<![\d.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
MAX_REL = 0.5


@dataclass(frozen=True)
class Rule:
    """How closely the numbers of one cell must agree."""
    exact: bool = False
    rel: float = 0.0
    abs: float = 0.0


DEFAULT = Rule()


def rule_from_metadata(metadata) -> Rule:
    """The comparison rule a cell declares under ``metadata["tolerance"]`` (default: last digit)."""
    declared = (metadata or {}).get("tolerance")
    if declared is None:
        return DEFAULT
    if declared == "exact":
        return Rule(exact=True)
    if not isinstance(declared, dict) or not declared or set(declared) - {"rel", "abs"}:
        raise ValueError(f'tolerance must be "exact" or a dict with "rel" and/or "abs", got {declared!r}')
    rel, absolute = float(declared.get("rel", 0.0)), float(declared.get("abs", 0.0))
    if not (0.0 <= rel < MAX_REL) or not (0.0 <= absolute < math.inf):
        raise ValueError(f"tolerance rel must be in [0, {MAX_REL}) and abs >= 0, got {declared!r}")
    return Rule(rel=rel, abs=absolute)


def split_numbers(text: str) -> tuple[list[str], list[str]]:
    """The text between numbers (one more piece than numbers) and the numbers themselves."""
    pieces, numbers, start = [], [], 0
    for match in NUMBER.finditer(text):
        pieces.append(text[start:match.start()])
        numbers.append(match.group())
        start = match.end()
    pieces.append(text[start:])
    return pieces, numbers


def last_digit_unit(number: str) -> float:
    """The value of one unit in the last printed digit: 0.0001 for "63.5117", 1e-9 for
    "1.0e-08", 0 for a whole number (which must match exactly)."""
    mantissa, _, exponent = number.lower().partition("e")
    if (mantissa.endswith(".") or "." not in mantissa) and not exponent:
        return 0.0  # "12" or NumPy's "2.": shown as whole numbers, so compared exactly
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def numbers_agree(stored: str, fresh: str, rule: Rule = DEFAULT) -> bool:
    """Whether two printed numbers say the same thing under ``rule``."""
    if stored == fresh:
        return True
    if rule.exact:
        return False
    integers = last_digit_unit(stored) == 0.0 and last_digit_unit(fresh) == 0.0
    if integers and rule == DEFAULT:
        return False
    a, b = float(stored), float(fresh)
    allowed = max(last_digit_unit(stored), last_digit_unit(fresh)) + rule.abs + rule.rel * abs(a)
    return abs(a - b) <= allowed * (1 + 1e-6)  # slack for the float subtraction itself


def printed_values_agree(stored: float, fresh: float, decimals: int, rule: Rule = DEFAULT) -> bool:
    """Whether two values printed with ``decimals`` decimals agree under ``rule``: the
    unit tests' form of the comparison a stored output gets (no test asserts a digit that
    another CPU or thread count can move)."""
    return numbers_agree(f"{stored:.{decimals}f}", f"{fresh:.{decimals}f}", rule)


def texts_agree(stored: str, fresh: str, rule: Rule = DEFAULT) -> bool:
    """Whether two printed texts are the same but for numbers that agree under ``rule``."""
    if stored == fresh:
        return True
    if rule.exact:
        return False
    stored_pieces, stored_numbers = split_numbers(stored)
    fresh_pieces, fresh_numbers = split_numbers(fresh)
    return (stored_pieces == fresh_pieces and len(stored_numbers) == len(fresh_numbers)
            and all(numbers_agree(s, f, rule) for s, f in zip(stored_numbers, fresh_numbers)))


TEXT_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex")


def reconcile(fresh_outputs: list, stored_outputs: list, rule: Rule = DEFAULT) -> list:
    """``fresh_outputs`` with each text that agrees with its stored twin (same stream, or
    same position among rich outputs, same MIME type) replaced by the stored text, so a
    strict comparison afterwards sees only real differences. Outputs are nbformat nodes
    (dicts); the inputs are not modified."""
    stored_streams = {}
    stored_rich = []
    for output in stored_outputs:
        if output.get("output_type") == "stream":
            stored_streams.setdefault(output.get("name"), []).append(output)
        elif "data" in output:
            stored_rich.append(output)
    seen_streams: dict = {}
    rich_index = 0
    result = []
    for output in fresh_outputs:
        output = _copy(output)
        kind = output.get("output_type")
        if kind == "stream":
            name = output.get("name")
            position = seen_streams.get(name, 0)
            seen_streams[name] = position + 1
            twins = stored_streams.get(name, [])
            if position < len(twins) and texts_agree(joined_text(twins[position]["text"]), joined_text(output["text"]), rule):
                output["text"] = twins[position]["text"]
        elif "data" in output:
            if rich_index < len(stored_rich):
                twin = stored_rich[rich_index]["data"]
                for mime in TEXT_TYPES:
                    if mime in output["data"] and mime in twin and \
                            texts_agree(joined_text(twin[mime]), joined_text(output["data"][mime]), rule):
                        output["data"][mime] = twin[mime]
            rich_index += 1
        result.append(output)
    return result


def joined_text(value) -> str:
    """An output's text as one string (nbformat may store it as a list of lines)."""
    return "".join(value) if isinstance(value, list) else value


def _copy(output):
    """A copy deep enough to replace texts (keeps the nbformat node type)."""
    duplicate = type(output)(output)
    if "data" in output:
        duplicate["data"] = type(output["data"])(output["data"])
    return duplicate


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def shows_widget(cell) -> bool:
    """A cell whose output lives in a widget: its stored notebook keeps it in the widget
    state, a live run sends it as plain output, so nobody can compare the two."""
    return any(WIDGET_VIEW in output.get("data", {}) for output in cell.get("outputs", []))


def compared(cell) -> bool:
    """Whether a run's outputs of this code cell are compared with its stored ones, as nbval
    compares them under conftest.py: not a widget's cell, nor one tagged nbval-ignore-output."""
    return not shows_widget(cell) and "nbval-ignore-output" not in cell.get("metadata", {}).get("tags", [])


def _texts(outputs) -> tuple[str, list[str], list[str]]:
    """A cell's stdout (streams merge in a front end), its rich outputs' text/plain, and stderr."""
    stdout = "".join(joined_text(o["text"]) for o in outputs if o["output_type"] == "stream" and o["name"] == "stdout")
    stderr = [joined_text(o["text"]) for o in outputs if o["output_type"] == "stream" and o["name"] == "stderr"]
    rich = [joined_text(o["data"].get("text/plain", "")) for o in outputs if "data" in o and WIDGET_VIEW not in o["data"]]
    return stdout, rich, stderr


def cell_differences(cell, fresh: list[dict]) -> list[str]:
    """How the fresh outputs of code cell ``cell`` differ from its stored ones (none: they
    agree under the cell's rule); any stderr is a difference, as no stored cell has one."""
    rule = rule_from_metadata(cell.get("metadata"))
    (stored_out, stored_rich, _), (out, rich, err) = _texts(cell["outputs"]), _texts(fresh)
    problems = [f"stderr: {text[:300]!r}" for text in err]
    if not texts_agree(stored_out, out, rule):
        problems.append(f"stdout {out[:500]!r}, stored {stored_out[:500]!r}")
    if len(rich) != len(stored_rich) or not all(texts_agree(s, f, rule) for s, f in zip(stored_rich, rich)):
        problems.append(f"results {rich!r}, stored {stored_rich!r}")
    return problems


def run_differences(stored_cells: list, fresh_outputs: list[list[dict]]) -> list[str]:
    """Every difference between a run of a notebook's code cells (``fresh_outputs``, one list
    per code cell, in order) and the stored ``stored_cells`` (its code cells), as
    "cell N: ..." with N the cell's index among the code cells."""
    if len(stored_cells) != len(fresh_outputs):
        return [f"{len(fresh_outputs)} code cells ran, the notebook has {len(stored_cells)}"]
    return [f"cell {index}: {problem}" for index, (cell, fresh) in enumerate(zip(stored_cells, fresh_outputs))
            if compared(cell) for problem in cell_differences(cell, fresh)]
