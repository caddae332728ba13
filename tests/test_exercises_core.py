"""The shared exercise machinery: every kind of learner answer becomes a message."""
import numpy as np
import pytest
import torch

from utils.exercises import Exercise, Feedback, Mistake
from utils.exercises import core


def _double_checks(answer):
    core.require_function(answer, "double", 1)
    for x in (np.array([1.0, -2.0]), np.zeros(3)):
        got = core.call(answer, x, name="double", shown=f"x = {core.show_input(x)}")
        core.expect_close(got, 2 * x, name="double", shown=f"x = {core.show_input(x)}",
                          mistakes=[(x, "returned x unchanged; multiply it by 2"), (x ** 2, "squared x instead of doubling it")])
    return "double(x) = 2x on both inputs."


DOUBLE = Exercise("Exercise 0.1: double", _double_checks, ["Multiply by two.", "return 2 * x"])


def _not_done(x):
    raise NotImplementedError


def _in_place(x):
    x *= 2
    return x


def _raises(x):
    return 1 / 0


@pytest.mark.parametrize("answer, passed, fragment", [
    (lambda x: 2 * x, True, "double(x) = 2x on both inputs"),
    (lambda x: x, False, "returned x unchanged"),
    (lambda x: x ** 2, False, "squared x"),
    (lambda x: 3 * x, False, "wrong values for x = [1, -2]: it is off by up to 2"),
    (lambda x: np.append(2 * x, 0), False, "returned shape (3,) for x = [1, -2]; expected shape (2,)"),
    (lambda x: None, False, "returned None"),
    (lambda x: "two", False, "returned a str"),
    (lambda x: x * np.nan, False, "NaN or infinity"),
    (_in_place, False, "changed its argument number 1 in place"),
    (_raises, False, "raised ZeroDivisionError (division by zero) when called with x = [1, -2]"),
    (_not_done, False, "Replace the `raise NotImplementedError`"),
    (None, False, "got None instead of your function `double`"),
    (2.0, False, "got a float instead of a function"),
    (torch.nn.Linear(2, 2), False, "got a Linear instead of a function. Pass the function itself"),
    (lambda x, y: x, False, "should take 1 argument(s)"),
])
def test_every_kind_of_answer_gets_a_message(answer, passed, fragment):
    feedback = DOUBLE.check(answer)
    assert isinstance(feedback, Feedback)
    assert feedback.passed is passed and bool(feedback) is passed
    assert fragment in feedback.message, feedback.message
    assert str(feedback).startswith("✓" if passed else ("…" if answer is _not_done else "✗"))


def test_a_model_passed_for_a_function_is_named_but_a_class_is_left_to_its_checker():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2))
    with pytest.raises(Mistake, match="got a Sequential instead of a function. Pass the function itself"):
        core.require_function(model, "fixup", 1)
    assert core.require_function(torch.nn.Linear, "Block", 2) is torch.nn.Linear


def test_a_stub_reports_not_done_and_not_a_mistake():
    feedback = DOUBLE.check(_not_done)
    assert not feedback.attempted and "not done yet" in str(feedback)


def test_a_checker_bug_is_reported_without_a_traceback():
    broken = Exercise("Exercise 0.2", lambda answer: answer.missing_attribute, ["hint"])
    feedback = broken.check(object())
    assert not feedback.passed and "checker could not finish (AttributeError" in feedback.message


def test_hints_come_one_level_at_a_time_and_stop_at_the_last(capsys):
    exercise = Exercise("Exercise 0.3", _double_checks, ["first", "second"])
    assert exercise.hint() is None
    exercise.hint()
    exercise.hint()
    shown = capsys.readouterr().out.splitlines()
    assert shown == ["Hint 1 of 2 for Exercise 0.3: first", "Hint 2 of 2 for Exercise 0.3: second",
                     "Hint 2 of 2 for Exercise 0.3: second"]


def test_call_sees_an_in_place_edit_of_a_tensor_and_of_a_module():
    def scale_tensor(t):
        t.mul_(2)
        return t

    with pytest.raises(Mistake, match="in place"):
        core.call(scale_tensor, torch.ones(3), name="f", shown="t")
    layer = torch.nn.Linear(2, 2)

    def zero_weights(module):
        with torch.no_grad():
            module.weight.zero_()
        return module.weight

    with pytest.raises(Mistake, match=r"changed the model you were given in place .* work on `copy.deepcopy\(model\)`"):
        core.call(zero_weights, layer, name="f", shown="a layer")
    assert core.call(lambda m: m.weight.sum(), layer, name="f", shown="a layer") is not None


def test_exercise_rejects_a_bad_definition():
    with pytest.raises(TypeError, match="title"):
        Exercise("", _double_checks, ["h"])
    with pytest.raises(TypeError, match="checks"):
        Exercise("t", None, ["h"])
    with pytest.raises(TypeError, match="hints"):
        Exercise("t", _double_checks, "one string")


def test_show_input_and_cases_from_seed():
    assert core.show_input(np.array([1.0, 2.5])) == "[1, 2.5]" and core.show_input(np.eye(2)) == "[[1, 0], [0, 1]]"
    assert core.show_input(np.zeros((4, 4))) == "an array of shape (4, 4)"
    first = core.cases_from_seed(3, 2, lambda rng: (rng.normal(size=2),))
    again = core.cases_from_seed(3, 2, lambda rng: (rng.normal(size=2),))
    assert len(first) == 2 and np.array_equal(first[1][0], again[1][0])
    with pytest.raises(ValueError, match="count"):
        core.cases_from_seed(0, 0, lambda rng: ())


def test_call_sees_requires_grad_switched_on_the_callers_tensor():
    def switch_on(t):
        t.requires_grad_(True)
        return t.sum()

    with pytest.raises(Mistake, match="switched on requires_grad of its argument number 1"):
        core.call(switch_on, torch.ones(3), name="f", shown="t")
    gate = torch.zeros((), requires_grad=True)
    assert float(core.call(lambda t: t.detach() + 1, gate, name="f", shown="a gate")) == 1.0


def test_an_in_place_add_of_a_grad_branch_is_named_in_place_not_requires_grad():
    branch = torch.ones(3, requires_grad=True)

    def add_in_place(x):
        x += branch  # switches requires_grad on too: the in-place edit is the mistake to name
        return x

    with pytest.raises(Mistake, match=r"changed its argument number 1 in place .* `x \+ f` rather than `x \+= f`"):
        core.call(add_in_place, torch.zeros(3), name="f", shown="x")


@pytest.mark.parametrize("value", [np.ones(2, dtype=np.float32), torch.ones(2), torch.ones(2, dtype=torch.float16)])
def test_expect_float64_names_low_precision(value):
    with pytest.raises(Mistake, match=r"your result for x = \[1\] is float(32|16): keep it in float64. Why."):
        core.expect_float64(value, what="your result", shown="x = [1]", why="Why.")


@pytest.mark.parametrize("value", [np.ones(2), torch.ones(2, dtype=torch.float64), [1.0, 2.0], 3.0])
def test_expect_float64_accepts_float64_and_plain_numbers(value):
    assert core.expect_float64(value, what="your result", shown="x", why="Why.") is None
