"""Property-based test of the whole public API of ``utils``, generated from the functions'
signatures: every function and class constructor in the ``__all__`` of every module, and every
exercise checker under ``utils.exercises``, is called with bad values of each kind, one
parameter at a time, and must refuse them with a ValueError or TypeError that names the
parameter (a checker: with a failed Feedback and a message), within a time limit. What a
function rightly accepts, and its valid example arguments, are in tests/api_contract.py.
"""
from __future__ import annotations

import inspect
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
import ipywidgets  # noqa: F401 - imported here so the time limit measures calls, not first imports
import sklearn.model_selection  # noqa: F401

from tests import api_contract as contract
from utils.validation import describe_value

CALLABLES = contract.public_callables()
PAIRS = [(name, parameter.name) for name, function in CALLABLES.items()
         for parameter in contract.parameters(function)]

# Words some parameter accepts as a choice: a drawn string must not be one of them.
CHOICE_WORDS = {"pre", "post", "rezero", "plain", "residual", "block", "layer", "default", "scaled", "gpt2",
                "fixup", "forward", "backward"}

# Further values of each kind of KINDS, drawn by Hypothesis.
STRATEGIES = {
    "none": st.none(),
    "string": st.one_of(st.integers(-10**6, 10**12).map(str),
                        st.text(max_size=12).filter(lambda s: s.strip().lower() not in CHOICE_WORDS)),
    "negative": st.one_of(st.integers(-10**12, -1), st.floats(-1e12, -1e-6)),
    "zero": st.sampled_from([0, 0.0, np.int64(0)]),
    "nan": st.sampled_from([math.nan, np.float64("nan")]),
    "inf": st.sampled_from([math.inf, -math.inf, np.float32("inf")]),
    "array3d": hnp.arrays(np.float64, hnp.array_shapes(min_dims=3, max_dims=3, max_side=4),
                          elements=st.floats(-10, 10)),
    "huge": st.one_of(st.integers(10**9, 10**15), st.just(np.int64(10**9))),
    "object": st.sampled_from([object(), 1j, frozenset({1, 2}), b"30", Ellipsis]),
}

# Hypothesis draws a few values per parameter beyond the fixed one of each kind; the same
# ones every run (derandomize), so a failure in CI reproduces. No shrinking: a failing call
# may take the whole time limit, and the first failing value already says what is wrong.
SETTINGS = settings(max_examples=4, deadline=None, database=None, derandomize=True,
                    phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


def _outcome(function, arguments: dict):
    """Call ``function(**arguments)`` within the time limit (and enter the ``with`` block of
    a @contextmanager, whose body only runs then); return the exception it raised, or None."""
    try:
        with contract.time_limit():
            result = function(**arguments)
            if inspect.isgeneratorfunction(getattr(function, "__wrapped__", None)):
                with result:
                    pass
    except contract.TookTooLong:
        raise
    except Exception as error:  # noqa: BLE001 - whatever it is, the test reports it
        return error
    return None


def _call_text(name: str, parameter: str, value) -> str:
    return f"{name}({parameter}={describe_value(value)})"


def test_every_module_lists_its_public_api_and_nothing_else_goes_without_an_underscore():
    for name, module in contract.public_modules().items():
        listed = getattr(module, "__all__", None)
        assert listed is not None, f"{name} has no __all__: list what notebooks and learners call"
        assert all(hasattr(module, entry) for entry in listed), f"{name}.__all__ names something {name} lacks"
        unlisted = [entry for entry, value in vars(module).items()
                    if not entry.startswith("_") and entry not in listed and (inspect.isfunction(value) or inspect.isclass(value))
                    and value.__module__ == name]
        assert not unlisted, f"{name} defines {unlisted} outside __all__: list them or start their names with _"


def test_the_time_limit_stops_a_hang_and_lets_a_quick_call_through():
    with pytest.raises(contract.TookTooLong, match="still running after 0.2 s"):
        with contract.time_limit(hang_seconds=0.2):
            while True:
                pass
    with pytest.raises(contract.TookTooLong, match="CPU seconds, more than 0.0"):
        with contract.time_limit(0.0):
            sum(range(10**6))  # some CPU time, however fast the machine
    with contract.time_limit():
        assert sum(range(10)) == 45


def test_the_contract_names_only_what_exists():
    assert len(CALLABLES) > 50, "the walk over utils found too few functions"
    for name in list(contract.VALID) + list(contract.ACCEPTS):
        assert name in CALLABLES, f"{name} is in tests/api_contract.py but not in utils (renamed or removed?)"
    for name, accepted in contract.ACCEPTS.items():
        names = {p.name for p in contract.parameters(CALLABLES[name])}
        for parameter, kinds in accepted.items():
            assert parameter in names, f"ACCEPTS names {name}({parameter}=...), which has no such parameter"
            assert set(kinds.split()) <= set(contract.KINDS), f"unknown kind in ACCEPTS[{name!r}][{parameter!r}]"


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_valid_arguments_work(name):
    function = CALLABLES[name]
    missing = [p.name for p in contract.parameters(function)
               if p.default is p.empty and p.name not in contract.valid_arguments(name)]
    assert not missing, f"{name} needs valid example values for {missing} in VALID in tests/api_contract.py"
    try:
        error = _outcome(function, contract.valid_arguments(name))
    except contract.TookTooLong as slow:
        pytest.fail(f"{name} with its valid example arguments {slow}")
    assert error is None, f"{name} failed on its valid example arguments: {type(error).__name__}: {error}"


@pytest.mark.parametrize("name, parameter", PAIRS, ids=[f"{n}-{p}" for n, p in PAIRS])
def test_bad_values_are_refused_naming_the_parameter(name, parameter):
    function = CALLABLES[name]
    accepted = contract.accepted_kinds(name, next(p for p in contract.parameters(function) if p.name == parameter))
    rejected = [kind for kind in contract.KINDS if kind not in accepted]

    def refused(value) -> None:
        arguments = contract.valid_arguments(name)
        arguments[parameter] = value
        call = _call_text(name, parameter, value)
        try:
            error = _outcome(function, arguments)
        except contract.TookTooLong as slow:
            pytest.fail(f"{call} {slow}: it must be refused before any work")
        assert error is not None, f"{call} was accepted; refuse it, or list it in ACCEPTS in tests/api_contract.py"
        assert isinstance(error, (ValueError, TypeError)), (
            f"{call} raised {type(error).__name__}: {error}; it must raise ValueError or TypeError")
        assert re.search(rf"(?<![A-Za-z0-9_]){re.escape(parameter)}(?![A-Za-z0-9_])", str(error)), (
            f"{call} raised {type(error).__name__} without naming {parameter!r}: {error}")

    if rejected:
        check = given(value=st.one_of(*(STRATEGIES[kind] for kind in rejected)))(refused)
        for kind in rejected:
            check = example(value=contract.KINDS[kind])(check)
        SETTINGS(check)()
    for kind in sorted(accepted):  # what it rightly accepts must then really work
        value = contract.KINDS[kind]
        arguments = {**contract.valid_arguments(name), parameter: value}
        try:
            error = _outcome(function, arguments)
        except contract.TookTooLong as slow:
            pytest.fail(f"{_call_text(name, parameter, value)}, listed as accepted, {slow}")
        assert error is None, (f"{_call_text(name, parameter, value)} is listed as accepted but raised "
                               f"{type(error).__name__}: {error}")


# ----- exercise checkers ------------------------------------------------------------------

def _raises(*args, **kwargs):
    raise ZeroDivisionError("a learner's bug")


# One of each bad kind of answer a learner may hand a checker.
BAD_ANSWERS = {
    "None": None,
    "a string": "not an answer",
    "an int": -123456789,
    "a function that raises": _raises,
    "a function returning None": lambda *args, **kwargs: None,
    "a function of no parameters": lambda: 0.0,
    "a function of five parameters": lambda a, b, c, d, e: 0.0,
}

_ERRORS = (ZeroDivisionError, ValueError, TypeError, IndexError, KeyError, AttributeError, RuntimeError,
           RecursionError, np.linalg.LinAlgError)


def _raising(error: type[Exception]):
    def answer(*args, **kwargs):
        raise error("raised by the learner's function")
    return answer


def _returning(value):
    return lambda *args, **kwargs: value


# More bad answers, drawn by Hypothesis: none of them can be a right answer.
BAD_ANSWER_STRATEGY = st.one_of(
    st.text(max_size=20).map(lambda s: "not an answer: " + s),
    st.sampled_from(_ERRORS).map(_raising),
    st.sampled_from([None, "text", math.nan, object(), np.ones((2, 3, 4)), [None]]).map(_returning),
    st.sampled_from([object(), math.nan, math.inf, np.ones((2, 3, 4)), {"answer": None}, [], ()]),
)


def feedback_problems(exercise, answer) -> list[str]:
    """What is wrong with how ``exercise`` answers a bad ``answer`` (empty if nothing):
    ``check`` must return a Feedback with ``passed`` False and a non-empty message,
    without raising and within the time limit."""
    try:
        with contract.time_limit():
            feedback = exercise.check(answer)
    except contract.TookTooLong as slow:
        return [f"check {slow}"]
    except Exception as error:  # noqa: BLE001 - the point: check must never raise
        return [f"check raised {type(error).__name__}: {error}"]
    problems = []
    if getattr(feedback, "passed", None) is not False:
        problems.append(f"passed is {getattr(feedback, 'passed', 'missing')!r}, not False")
    message = getattr(feedback, "message", None)
    if not isinstance(message, str) or not message.strip():
        problems.append(f"message is {message!r}, not a sentence for the learner")
    return problems


def reference_exercise():
    """An exercise with the behaviour every exercise must have, built with the course's
    own machinery (utils.exercises.core), so this test runs, and tests that machinery, even
    before the first notebook's exercises exist: the answer is a function double(x) = 2 x."""
    from utils.exercises.core import Exercise, call, expect_close, require_function

    def checks(answer) -> str:
        double = require_function(answer, "double", 1)
        expect_close(call(double, 3.0, name="double", shown="x = 3.0"), 6.0, name="double", shown="x = 3.0")
        return "double(3.0) = 6.0"

    return Exercise("reference stand-in", checks, ["Return 2 * x."])


EXERCISES = {"reference stand-in (tests/test_api_contract.py)": reference_exercise(), **contract.exercises()}


def test_every_exercise_module_is_searched():
    folder = Path(__file__).resolve().parents[1] / "utils" / "exercises"
    notebooks = [path for path in folder.glob("*.py") if path.stem not in ("__init__", "core")]
    if notebooks:
        assert len(EXERCISES) > 1, f"{[p.name for p in notebooks]} hold no Exercise object at module level"
    assert feedback_problems(reference_exercise(), lambda x: 2 * x) == ["passed is True, not False"]


def test_a_checker_that_raises_is_caught():
    class Broken:
        def check(self, answer):
            return answer(3.0)  # raises for None, returns no Feedback otherwise

    assert feedback_problems(Broken(), None)[0].startswith("check raised TypeError")
    assert feedback_problems(Broken(), lambda x: x) == ["passed is 'missing', not False",
                                                         "message is None, not a sentence for the learner"]


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_an_exercise_fails_bad_answers_with_a_message(name):
    exercise = EXERCISES[name]

    def fails(answer) -> None:
        problems = feedback_problems(exercise, answer)
        assert not problems, f"{name}.check({describe_value(answer)}): " + "; ".join(problems)

    check = given(answer=BAD_ANSWER_STRATEGY)(fails)
    for answer in BAD_ANSWERS.values():
        check = example(answer=answer)(check)
    SETTINGS(check)()
