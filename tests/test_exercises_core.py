"""The shared exercise machinery: every kind of learner answer becomes a message."""
import re

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
    raise NotImplementedError("Exercise 0.1: write your code here")


def _in_place(x):
    x *= 2
    return x


def _raises(x):
    return 1 / 0


@pytest.mark.parametrize("answer, passed, fragment", [
    (lambda x: 2 * x, True, "double(x) = 2x on both inputs"),
    (lambda x: x, False, "returned x unchanged"),
    (lambda x: x ** 2, False, "squared x"),
    (lambda x: 2 * x + x ** 2, False, "wrong values for x = [1, -2]: it is off by up to 4"),
    (lambda x: 3 * x, False, "is 1.5 times the right one everywhere"),
    (lambda x: -2 * x, False, "the exact negative of the right one"),
    (lambda x: np.append(2 * x, 0), False, "returned an array of shape (3,) for x = [1, -2]; expected shape (2,)"),
    (lambda x: tuple(2 * x) + (0.0,), False, "returned a tuple of 3 items for x = [1, -2]; expected shape (2,)"),
    (lambda x: {"double": 2 * x}, False, "returned a dict (keys 'double')"),
    (lambda x: None, False, "returned None"),
    (lambda x: "two", False, "returned text (a string)"),
    (lambda x: x * np.nan, False, "returned NaN for x = [1, -2]; the right result is finite"),
    (_in_place, False, "changed its argument `x` in place"),
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


def _loops_for_ever(x):
    while True:
        try:
            x = x + 1
        except ValueError:
            pass


def _timed_checks(answer):
    x = np.array([1.0, -2.0])
    got = core.call(answer, x, name="double", shown="x = [1, -2]", time_limit=0.3)
    core.expect_close(got, 2 * x, name="double", shown="x = [1, -2]")
    return "doubles."


TIMED = Exercise("Exercise 0.4: double, timed", _timed_checks, ["Multiply by two."])


def test_an_endless_loop_gets_a_verdict_within_the_time_limit():
    feedback = TIMED.check(_loops_for_ever)
    assert not feedback.passed and "was still running after 0.3 s when called with x = [1, -2]" in feedback.message


def test_learner_code_a_checker_runs_directly_is_stopped_by_the_whole_check_limit(monkeypatch):
    monkeypatch.setattr(core, "CHECK_TIME_LIMIT", 0.3)
    direct = Exercise("Exercise 0.5: direct", lambda answer: answer(np.ones(2)), ["hint"])
    feedback = direct.check(_loops_for_ever)
    assert not feedback.passed and "the check was still running after 0.3 s" in feedback.message


def test_an_outer_timer_is_put_back_with_the_time_it_had_left():
    import signal
    import time
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, 100.0)
    try:
        assert TIMED.check(_loops_for_ever).passed is False
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 100.0 - (time.monotonic() - start) <= left < 100.0  # what it had left, however slow the check
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def test_only_the_stub_itself_is_not_done_yet():
    class Misspelled(torch.nn.Module):
        def forwad(self, x):
            return x

    def bare(x):
        raise NotImplementedError

    def from_torch(x):
        raise NotImplementedError("not implemented for 'Half'")

    assert DOUBLE.check(bare).attempted is False
    feedback = DOUBLE.check(lambda x: Misspelled()(x))
    assert feedback.attempted and "has no method called `forward`" in feedback.message
    assert "raised NotImplementedError (not implemented for 'Half')" in DOUBLE.check(from_torch).message


def test_global_state_an_answer_changes_is_put_back():
    def meddles(x):
        np.seterr(all="raise")
        torch.set_grad_enabled(False)
        torch.set_default_dtype(torch.float64)
        np.random.seed(1), torch.manual_seed(1)
        return 2 * x

    errors, numpy_state, torch_state = np.geterr(), np.random.get_state()[1].copy(), torch.random.get_rng_state()
    assert DOUBLE.check(meddles).passed
    assert np.geterr() == errors and torch.is_grad_enabled() and torch.get_default_dtype() == torch.float32
    assert np.array_equal(np.random.get_state()[1], numpy_state)
    assert torch.equal(torch.random.get_rng_state(), torch_state)


def test_printing_is_captured_and_shown_shortened_after_the_verdict(capsys):
    def chatty(x):
        print("step " * 50_000)
        return 2 * x

    feedback = DOUBLE.check(chatty)
    assert capsys.readouterr().out == ""
    assert feedback.passed and feedback.printed.startswith("step step")
    assert "(500,002 characters in all)" in feedback.printed and len(feedback.printed) < 500
    assert str(feedback).splitlines()[1].startswith("  Your code printed during the check: step")
    assert DOUBLE.check(lambda x: 2 * x).printed == ""


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

    with pytest.raises(Mistake, match=r"changed the model you were given in place .* work on `copy.deepcopy\(module\)`"):
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

    with pytest.raises(Mistake, match="switched on requires_grad of its argument `t`"):
        core.call(switch_on, torch.ones(3), name="f", shown="t")
    gate = torch.zeros((), requires_grad=True)
    assert float(core.call(lambda t: t.detach() + 1, gate, name="f", shown="a gate")) == 1.0


def test_an_in_place_add_of_a_grad_branch_is_named_in_place_not_requires_grad():
    branch = torch.ones(3, requires_grad=True)

    def add_in_place(x):
        x += branch  # switches requires_grad on too: the in-place edit is the mistake to name
        return x

    with pytest.raises(Mistake, match=r"changed its argument `x` in place .* `a \+ b` rather than `a \+= b`"):
        core.call(add_in_place, torch.zeros(3), name="f", shown="x")


@pytest.mark.parametrize("value", [np.ones(2, dtype=np.float32), torch.ones(2), torch.ones(2, dtype=torch.float16)])
def test_expect_float64_names_low_precision(value):
    with pytest.raises(Mistake, match=r"your result for x = \[1\] is float(32|16): keep it in float64. Why."):
        core.expect_float64(value, what="your result", shown="x = [1]", why="Why.")


@pytest.mark.parametrize("value", [np.ones(2), torch.ones(2, dtype=torch.float64), [1.0, 2.0], 3.0])
def test_expect_float64_accepts_float64_and_plain_numbers(value):
    assert core.expect_float64(value, what="your result", shown="x", why="Why.") is None


@pytest.mark.parametrize("got, fragment", [
    (-np.arange(1.0, 5.0), "exact negative"),
    (2 * np.arange(1.0, 5.0), "2 times the right one everywhere (2)"),
    (np.arange(1.0, 5.0) / 4, "0.25 times the right one everywhere (1 / 4, the size of an axis)"),
    (np.arange(1.0, 5.0) / 2, "0.5 times the right one everywhere (1 / 2)"),
    (np.arange(1.0, 5.0) + 0.5, "off by the same amount, 0.5"),
    (np.array([0.0, 0.0, 0.0, 4.0]), "only the last entry"),
    (np.arange(1.0, 5.0) * (1 + 1e-7 * np.array([1, -1, 2, 0])), "only at the level of rounding"),
    (np.arange(4.0, 0.0, -1.0), "the right ones in reverse order"),
])
def test_name_by_shape_names_the_shape_of_a_mistake(got, fragment):
    assert fragment in core.name_by_shape(got, np.arange(1.0, 5.0))


def test_name_by_shape_sees_a_transpose_and_stays_silent_otherwise():
    want = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert "transpose" in core.name_by_shape(want.T, want)
    assert core.name_by_shape(np.array([1.0, 5.0, 2.0]), np.array([3.0, 1.0, 2.5])) is None
    assert core.name_by_shape(np.array([np.nan, 1.0]), np.array([1.0, 1.0])) is None
    with pytest.raises(Mistake, match=r"returned the transpose of the right result \(shape \(3, 2\)"):
        core.expect_close(np.ones((3, 2)), np.ones((2, 3)), name="f", shown="x")


def test_describe_container_names_what_was_returned():
    assert core.describe_container((1, 2, 3)) == "a tuple of 3 items"
    assert core.describe_container([1.0]) == "a list of 1 item"
    assert core.describe_container(np.ones((2, 3))) == "an array of shape (2, 3)"
    assert core.describe_container(torch.ones(2)) == "a tensor of shape (2,)"
    assert core.describe_container(2.5) == "a float"


def _gate_leaves():
    x = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    gate = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    return x, gate, {"x": (x, core.INPUT_WHY), "the gate": (gate, core.GATE_WHY)}


def test_expect_gradients_accepts_the_same_graph():
    x, gate, leaves = _gate_leaves()
    core.expect_gradients(x + gate * torch.tanh(x), x + gate * torch.tanh(x), leaves, name="f", shown="x")


@pytest.mark.parametrize("cut, fragment", [
    (lambda x, gate: x + gate.item() * torch.tanh(x), "no gradient reaches the gate through them"),
    (lambda x, gate: (x + gate * torch.tanh(x)).detach(), "no gradient reaches x through them"),
    (lambda x, gate: x + gate * torch.tanh(x.detach()), "the gradient with respect to x is off by up to"),
    (lambda x, gate: x + gate.data * torch.tanh(x), "can never learn"),
])
def test_expect_gradients_names_the_tensor_a_cut_graph_starves(cut, fragment):
    x, gate, leaves = _gate_leaves()
    with pytest.raises(Mistake, match=fragment):
        core.expect_gradients(cut(x, gate), x + gate * torch.tanh(x), leaves, name="f", shown="x")


def test_parameter_leaves_calls_one_number_a_gate():
    block = torch.nn.Linear(2, 1)
    block.alpha = torch.nn.Parameter(torch.zeros(()))
    leaves = core.parameter_leaves(block, "self.")
    assert list(leaves) == ["`self.weight`", "`self.bias`", "`self.alpha`"]
    assert leaves["`self.alpha`"][1] == core.GATE_WHY and leaves["`self.weight`"][1] == core.WEIGHT_WHY


def test_expect_gradients_names_a_leaf_that_requires_no_gradient():
    x, gate, leaves = _gate_leaves()
    frozen = gate.detach()
    leaves["the gate"] = (frozen, core.GATE_WHY)
    with pytest.raises(Mistake, match="the gate does not require a gradient"):
        core.expect_gradients(x + frozen * torch.tanh(x), x + frozen * torch.tanh(x), leaves, name="f", shown="x")


@pytest.mark.parametrize("value, fragment", [
    ({0: 1.0}, "returned a dict \\(keys 0\\)"),
    ((v for v in [1.0]), "a generator expression makes one"),
    (torch.ones(2), "returned a tensor of shape"),
    ([1.0, torch.tensor(2.0)], "item 1 of the list"),
    ([True], "item 0 of the list"),
])
def test_expect_float_list_names_what_is_not_a_list_of_numbers(value, fragment):
    with pytest.raises(Mistake, match=fragment):
        core.expect_float_list(value, name="f", shown="x")


def test_expect_float_list_gives_floats_for_numbers_of_any_kind():
    got = core.expect_float_list((1, np.float32(0.5), 2.5), name="f", shown="x")
    assert got == [1.0, 0.5, 2.5] and all(type(v) is float for v in got)


def test_a_check_starts_from_the_defaults_whatever_the_notebook_switched():
    def needs_autograd_and_default_errors(x):
        leaf = torch.tensor(x, requires_grad=True)
        (leaf ** 2).sum().backward()
        np.cumprod(np.full(800, 0.05))  # underflows to 0: fine under NumPy's default error state
        return 2 * x

    previous = np.seterr(all="raise")
    try:
        with torch.no_grad():
            torch.set_default_dtype(torch.float64)
            feedback = DOUBLE.check(needs_autograd_and_default_errors)
            assert not torch.is_grad_enabled() and torch.get_default_dtype() == torch.float64
        assert np.geterr()["under"] == "raise"
    finally:
        np.seterr(**previous)
        torch.set_default_dtype(torch.float32)
    assert feedback.passed, feedback.message


def test_an_answer_that_asks_numpy_to_raise_is_told_why_it_stopped():
    def raising(x):
        np.seterr(all="raise")
        np.cumprod(np.full(800, 0.05))
        return 2 * x

    assert "NumPy was told to stop at floating-point errors" in DOUBLE.check(raising).message


def test_a_timeout_spent_printing_says_so(monkeypatch):
    monkeypatch.setattr(core, "TIME_LIMIT", 0.5)

    def chatty(x):
        while True:
            print("x" * 1000)

    message = DOUBLE.check(chatty).message
    assert "still running after" in message and "take the print out of the loop" in message


@pytest.mark.parametrize("value", [np.array([1.0, 2.0, 3.0]), [1.0, 2.0], 4.0])
def test_one_wrong_number_is_not_called_a_constant_factor_but_an_array_is(value):
    want = np.asarray(value, dtype=np.float64)
    said = core.name_by_shape(3 * want, want)
    assert (said is not None and "times the right one" in said) == (want.size > 1)


def test_other_dtype_names_the_first_parameter_of_another_type():
    layer = torch.nn.Linear(2, 2)
    assert core.other_dtype(layer, torch.float32) is None
    assert core.other_dtype(layer.double(), torch.float32) == torch.float64


def test_a_rounding_level_difference_is_told_to_keep_the_tasks_own_precision():
    want = np.arange(1.0, 5.0)
    got = want * (1 + 1e-7 * np.array([1, -1, 2, 0]))
    assert "Keep every step in float64" in core.name_by_shape(got, want)
    assert "the task's float32" in core.name_by_shape(got, want, precision="float32")
    with pytest.raises(Mistake, match="Keep every step in the task's float32, as its tensors"):
        core.expect_close(want * (1 + 1e-5 * np.array([1, -1, 2, 0])), torch.tensor(want, dtype=torch.float32),
                          name="f", shown="x")
    with pytest.raises(Mistake, match=r"expected shape \(1,\) \(1 number\)\."):
        core.expect_close([1.0, 2.0], np.array([1.0]), name="f", shown="x")


def test_a_gradient_off_at_the_level_of_rounding_is_named_as_precision_not_as_a_cut_graph():
    weight = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    with torch.enable_grad():
        want = torch.tanh(3.0 * weight)
        rounded = torch.tanh(3.0 * weight.float()).double()
        other = torch.tanh(3.0 * weight.detach()) + 0.1 * (weight - weight.detach())
    leaves = {"the weight": (weight, core.WEIGHT_WHY)}
    with pytest.raises(Mistake, match="differs only at the level of rounding .* another precision than the task's "
                                      "float64"):
        core.expect_gradients(rounded, want, leaves, name="f", shown="x")
    with pytest.raises(Mistake, match="is off by up to .* cut from autograd's graph"):
        core.expect_gradients(other, want, leaves, name="f", shown="x")


def test_a_check_run_under_inference_mode_still_sees_gradients_and_a_replaced_library_function_is_put_back():
    def right(x):
        y = 2 * x
        return y

    def check(answer):
        x = torch.ones(3, requires_grad=True)
        with torch.enable_grad():
            got = core.call(answer, x, name="f", shown="x", copies=False)
        core.expect_gradients(got, 2 * x, {"x": (x, core.INPUT_WHY)}, name="f", shown="x")
        core.expect_close(core.call(answer, np.ones(2), name="f", shown="ones"), np.full(2, 2.0), name="f", shown="ones")
        return "fine"

    def cheat(x):  # a wrong NumPy result, with a comparison that says yes to everything
        np.allclose = lambda *args, **kwargs: True
        return 0 * x if isinstance(x, np.ndarray) else 2 * x

    original = np.allclose
    with torch.inference_mode():
        assert Exercise("t", check, ["h"]).check(right)
    assert not Exercise("t", check, ["h"]).check(cheat)
    assert np.allclose is original


def test_a_right_answer_that_leaves_gradients_on_a_given_model_hears_of_it_after_the_tick():
    def check(answer):
        model = torch.nn.Linear(2, 1)
        core.call(answer, model, name="f", shown="a model")
        return "fine."

    def with_backward(model):
        model(torch.ones(1, 2)).sum().backward()
        return 1.0

    assert Exercise("t", check, ["h"]).check(with_backward).message == "fine. " + core.GRADIENTS_LEFT
    assert Exercise("t", check, ["h"]).check(lambda model: 1.0).message == "fine."


@pytest.mark.parametrize("value, fragment", [
    (1 + 2j, "complex numbers"),
    (np.array([1 + 0j, 2]), "complex numbers"),
    ((torch.ones(2), 3), "a tuple of 2 items for x, not the real numbers"),
])
def test_what_is_not_real_numbers_is_named(value, fragment):
    with pytest.raises(Mistake, match=re.escape(fragment)):
        core.as_array(value, "f", "x")


def test_a_dict_where_a_list_is_due_is_told_to_be_a_list():
    with pytest.raises(Mistake, match=r"returned a dict \(keys 0.5, 1.0\) for x; return a list of Python floats"):
        core.expect_float_list({0.5: 1.0, 1.0: 2.0}, name="f", shown="x")


def test_rounding_is_named_with_the_most_decimals_that_fit_and_never_to_0_decimals_below_1():
    assert "rounded to 6 decimals" in core.name_by_shape(np.array([0.123457, 2.5]), np.array([0.1234567, 2.5]))
    assert "rounded to 6 decimals" in core.name_by_shape(np.array([0.1, 2.5]), np.array([0.1000004, 2.5]))
    assert "rounded" not in (core.name_by_shape(np.array([0.0, 0.0]), np.array([0.3, -0.2])) or "")


def test_an_edit_in_place_names_the_argument_and_mentions_putting_back_only_when_it_was():
    def moved(x):
        x += 1.0
        return x

    def put_back(x):
        x[0] += 0.1
        x[0] -= 0.1
        return x.copy()

    with pytest.raises(Mistake, match=r"changed its argument `x` in place .* needs its input\.$"):
        core.call(moved, np.array([0.3, 0.7]), name="f", shown="x")
    with pytest.raises(Mistake, match="Putting an entry back afterwards is not enough"):
        core.call(put_back, np.array([0.3, 0.7]), name="f", shown="x")
    block = torch.nn.Linear(2, 2)
    block.forward = lambda x: x.mul_(2)
    with pytest.raises(Mistake, match="changed its argument `x` in place"):
        core.call(block, torch.ones(2), name="forward", shown="x")


def test_a_switch_an_answer_leaves_flipped_is_noted_after_the_tick_and_put_back():
    def check(answer):
        core.call(answer, np.ones(2), name="f", shown="ones")
        return "fine."

    def switches_autograd_off(x):
        torch.set_grad_enabled(False)
        return x * 2

    said = Exercise("t", check, ["h"]).check(switches_autograd_off).message
    assert said.startswith("fine. One thing to know: your function changed autograd (torch.set_grad_enabled)")
    assert torch.is_grad_enabled()


def test_an_argument_returned_as_the_result_is_named_once_its_values_are_right():
    def check(answer):
        core.expect_close(core.call(answer, np.ones(2), name="f", shown="ones"), np.ones(2), name="f", shown="ones")
        return "fine."

    said = Exercise("t", check, ["h"]).check(lambda x: x)
    assert not said and "the values are right, but `f` returned its argument `x` itself" in said.message
    assert Exercise("t", check, ["h"]).check(lambda x: x.copy())

    def check_double(answer):
        got = core.call(answer, np.array([1.0, 3.0]), name="f", shown="x")
        core.expect_close(got, np.array([2.0, 6.0]), name="f", shown="x")
        return "fine."

    assert "0.5 times the right one" in Exercise("t", check_double, ["h"]).check(lambda x: x).message


def test_minus_infinity_is_told_apart_from_an_overflow():
    with pytest.raises(Mistake, match="returned minus infinity .* the log of 0"):
        core.expect_close(np.array([-np.inf, 1.0]), np.array([2.0, 1.0]), name="f", shown="x")
    with pytest.raises(Mistake, match="returned infinity .* past float64's range"):
        core.expect_close(np.array([np.inf, 1.0]), np.array([2.0, 1.0]), name="f", shown="x")


def test_a_learner_has_20_s_and_the_tests_set_their_own_limit_in_words():
    assert core._time_limit_setting({}) == 20.0
    assert core._time_limit_setting({"COURSE_TIME_LIMIT": "600"}) == 600.0
    for bad in ("soon", "0", "-5", "inf", "nan"):
        with pytest.raises(ValueError, match="COURSE_TIME_LIMIT must be a number of seconds above 0"):
            core._time_limit_setting({"COURSE_TIME_LIMIT": bad})
    assert core.TIME_LIMIT == 600.0  # conftest.py's, for these tests and their kernels
