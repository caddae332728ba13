import numpy as np
import pytest

from utils.validation import check_array, check_choice, check_float, check_int


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
    with pytest.raises(ValueError, match=r"norm must be one of 'pre', 'post'; got 'middle'"):
        check_choice("norm", "middle", ("pre", "post"))


def test_check_array_converts_and_checks_shape():
    array = check_array("x", [2, -1], shape=(2,))
    assert array.dtype == np.float64 and array.tolist() == [2.0, -1.0]
    assert check_array("W", np.zeros((3, 2)), shape=(None, 2)).shape == (3, 2)
    with pytest.raises(ValueError, match=r"W must have shape \(any, 2\), got \(2, 3\)"):
        check_array("W", np.zeros((2, 3)), shape=(None, 2))
    with pytest.raises(ValueError, match="x must have 1 dimension"):
        check_array("x", [[1.0]], ndim=1)
    with pytest.raises(ValueError, match="x contains NaN"):
        check_array("x", [1.0, np.nan])
    with pytest.raises(TypeError, match="x must be an array of numbers"):
        check_array("x", ["a", "b"])
