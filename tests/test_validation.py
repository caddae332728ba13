import numpy as np
import pytest

import torch
from matplotlib.figure import Figure

from utils import validation
from utils.validation import (check_array, check_axes, check_bool, check_callable, check_choice, check_cost,
                              check_figure, check_float, check_int, check_module, check_sequence, check_tensor,
                              check_text, describe_value, invalid)


def test_check_int_accepts_numpy_integers_and_returns_int():
    value = check_int("depth", np.int64(30), minimum=1)
    assert value == 30 and type(value) is int


@pytest.mark.parametrize("bad", [2.5, "3", None, True])
def test_check_int_rejects_non_integers_naming_the_parameter(bad):
    with pytest.raises(TypeError, match="depth must be a whole number"):
        check_int("depth", bad)


def test_check_int_range():
    assert check_int("depth", 1, minimum=1, maximum=1) == 1
    with pytest.raises(ValueError, match="depth must be at least 1, got 0"):
        check_int("depth", 0, minimum=1)
    with pytest.raises(ValueError, match="depth must be at most 10, got 11"):
        check_int("depth", 11, maximum=10)


def test_check_float():
    assert check_float("slope", 2) == 2.0
    with pytest.raises(ValueError, match="slope must be finite"):
        check_float("slope", float("nan"))
    with pytest.raises(TypeError, match="slope must be a real number"):
        check_float("slope", "0.5")
    with pytest.raises(ValueError, match="slope must be at least 0"):
        check_float("slope", -0.1, minimum=0)


def test_check_choice_lists_the_valid_options():
    assert check_choice("norm", "pre", ("pre", "post")) == "pre"
    with pytest.raises(ValueError, match=r"norm must be one of 'pre', 'post', got 'middle'"):
        check_choice("norm", "middle", ("pre", "post"))
    assert check_choice("scale", 1, (0.5, 1.0)) == 1
    for bad in (True, np.ones(3), None):  # True is not 1; an array equals nothing
        with pytest.raises(ValueError, match="must be one of"):
            check_choice("n", bad, (1, 2))


def test_check_array_converts_and_checks_shape():
    array = check_array("x", [2, -1], shape=(2,))
    assert array.dtype == np.float64 and array.tolist() == [2.0, -1.0]
    assert check_array("W", np.zeros((3, 2)), shape=(None, 2)).shape == (3, 2)
    with pytest.raises(ValueError, match=r"W must be an array of shape \(any, 2\), got an array of shape \(2, 3\)"):
        check_array("W", np.zeros((2, 3)), shape=(None, 2))
    with pytest.raises(ValueError, match=r"x must be an array with 1 dimension\(s\)"):
        check_array("x", [[1.0]], ndim=1)
    with pytest.raises(ValueError, match="x must be finite"):
        check_array("x", [1.0, np.nan])
    for bad in (["a", "b"], None, "12"):
        with pytest.raises(TypeError, match="x must be an array of numbers"):
            check_array("x", bad)


def test_invalid_words_every_message_the_same_way():
    error = invalid("depth", "at least 1", 0, fix="try 30")
    assert isinstance(error, ValueError) and str(error) == "depth must be at least 1, got 0; try 30"
    assert str(invalid("x", "a tensor", error=TypeError)) == "x must be a tensor"
    assert isinstance(invalid("x", "a tensor", None, error=TypeError), TypeError)


def test_describe_value_shows_values_shapes_and_types():
    assert describe_value(None) == "None" and describe_value(2.5) == "2.5" and describe_value(np.int64(3)) == "3"
    assert describe_value("30") == "'30'"
    assert describe_value(np.ones((2, 3, 4))) == "an array of shape (2, 3, 4)"
    assert describe_value(torch.ones(2, 3)) == "a float32 tensor of shape (2, 3)"
    assert describe_value(object()) == "a object" and describe_value(len) == "the function len"
    assert describe_value("x" * 100) == "'" + "x" * 36 + "..."


def test_check_bool_and_check_text():
    assert check_bool("residual", np.bool_(True)) is True
    with pytest.raises(TypeError, match="residual must be True or False, got 1"):
        check_bool("residual", 1)
    assert check_text("title", "a") == "a" and check_text("title", None, allow_none=True) is None
    with pytest.raises(TypeError, match="title must be a str or None, got 3"):
        check_text("title", 3, allow_none=True)
    with pytest.raises(TypeError, match="title must be a str, got None"):
        check_text("title", None)


def test_check_sequence_wants_a_list_not_a_string_or_a_set():
    assert check_sequence("depths", (1, 2)) == [1, 2] and check_sequence("depths", np.arange(2)) == [0, 1]
    assert check_sequence("depths", [], allow_empty=True) == []
    for bad in ("12", {1, 2}, 3, None, np.ones((2, 2))):
        with pytest.raises(TypeError, match="depths must be a list or tuple of depths"):
            check_sequence("depths", bad, what="depths")
    with pytest.raises(ValueError, match="depths must be a non-empty list"):
        check_sequence("depths", [])


def test_check_callable_module_figure_and_axes():
    assert check_callable("f", len) is len
    with pytest.raises(TypeError, match="f must be a function of x, got 3"):
        check_callable("f", 3, what="a function of x")
    linear = torch.nn.Linear(2, 2)
    assert check_module("model", linear) is linear and check_module("stem", linear, torch.nn.Linear) is linear
    with pytest.raises(TypeError, match="model must be a torch.nn.Module, got None"):
        check_module("model", None)
    with pytest.raises(TypeError, match="stem must be a Linear layer"):
        check_module("stem", torch.nn.ReLU(), torch.nn.Linear, what="a Linear layer")
    fig = Figure()
    assert check_figure("fig", fig) is fig and check_axes("ax", fig.subplots()) is fig.axes[0]
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure, got a Axes"):
        check_figure("fig", fig.axes[0])
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes, got a Figure"):
        check_axes("ax", fig)


def test_check_tensor_rank_width_and_dtype():
    x = torch.zeros(2, 3, 8)
    assert check_tensor("x", x, ndim=3, last_dim=8) is x
    with pytest.raises(TypeError, match=r"x must be a torch.Tensor of shape \(b, 8\)"):
        check_tensor("x", np.zeros((2, 8)), shape_text="(b, 8)")
    with pytest.raises(ValueError, match=r"x must be a torch.Tensor with 2 dimension\(s\) and last dimension 8"):
        check_tensor("x", x, ndim=2, last_dim=8)
    with pytest.raises(ValueError, match=r"x must be a torch.Tensor with 3 dimension\(s\)"):
        check_tensor("x", torch.zeros(8), ndim=3)
    with pytest.raises(ValueError, match=r"x must be a torch.Tensor with last dimension 4,"):
        check_tensor("x", x, last_dim=4)
    with pytest.raises(TypeError, match="convert it with .float()"):
        check_tensor("x", torch.zeros(2, dtype=torch.long))
    assert check_tensor("y", torch.zeros(2, dtype=torch.long), ndim=1, floating=False).ndim == 1


def test_check_cost_names_the_size_too_big_and_the_largest_accepted():
    cost = lambda depth, d: (4.0 * depth * 8 * d * d, 0.0)  # float32 weights of depth blocks
    check_cost({"depth": 30, "d": 128}, cost, what="the weights")
    with pytest.raises(ValueError) as caught:
        check_cost({"depth": 10**9, "d": 128}, cost, what="the weights")
    message = str(caught.value)
    largest = int(validation.MAX_BYTES // (4 * 8 * 128 * 128))
    assert message.startswith("depth=1000000000 with d=128 would need about 524 TB of memory for the weights")
    assert f"accept depth up to {largest} with d=128" in message
    with pytest.raises(ValueError, match=r"^d=1000000 with depth=2 would need"):
        check_cost({"depth": 2, "d": 10**6}, cost, what="the weights")
    slow = lambda steps: (0.0, 1e9 * steps)  # a second a step
    with pytest.raises(ValueError, match=r"steps=3600 would need about 3.6e\+12 operations \(some 1 hours"):
        check_cost({"steps": 3600}, slow, what="training")
