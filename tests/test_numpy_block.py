import numpy as np
import pytest

from utils import numpy_block

X = [2.0, -1.0]
W1 = [[0.5, 0.0], [0.0, -0.5]]
W2 = [[0.1, 0.0], [0.2, 0.2]]


def test_worked_example_comes_out_exactly():
    steps = numpy_block.forward(X, W1, W2)
    np.testing.assert_allclose(steps.pre, [1.0, 0.5])
    np.testing.assert_allclose(steps.hidden, [1.0, 0.5])
    np.testing.assert_allclose(steps.branch, [0.1, 0.3])
    np.testing.assert_allclose(steps.skip, X)
    np.testing.assert_allclose(steps.y, [2.1, -0.7])


def test_zero_weights_give_the_identity():
    x = np.random.default_rng(0).normal(size=5)
    steps = numpy_block.forward(x, np.zeros((7, 5)), np.zeros((5, 7)))
    np.testing.assert_array_equal(steps.y, x)
    np.testing.assert_array_equal(steps.branch, np.zeros(5))


def test_relu_cuts_negative_pre_activations():
    steps = numpy_block.forward([1.0, 1.0], [[-1.0, 0.0], [0.0, 2.0]], np.eye(2))
    np.testing.assert_array_equal(steps.hidden, [0.0, 2.0])
    np.testing.assert_array_equal(steps.y, [1.0, 3.0])


def test_size_change_without_projection_is_a_clear_error():
    rng = np.random.default_rng(0)
    x, w1, w2 = rng.normal(size=64), rng.normal(size=(32, 64)), rng.normal(size=(128, 32))
    with pytest.raises(ValueError, match=r"w2 makes the branch F\(x\) 128 numbers long but x has 64.*w_s.*\(128, 64\)"):
        numpy_block.forward(x, w1, w2)


def test_projection_shortcut_fixes_the_size():
    rng = np.random.default_rng(0)
    x, w1, w2, w_s = rng.normal(size=64), rng.normal(size=(32, 64)), rng.normal(size=(128, 32)), rng.normal(size=(128, 64))
    steps = numpy_block.forward(x, w1, w2, w_s)
    assert steps.y.shape == (128,)
    np.testing.assert_allclose(steps.skip, w_s @ x)
    np.testing.assert_allclose(steps.y, w_s @ x + w2 @ np.maximum(w1 @ x, 0))


@pytest.mark.parametrize("kwargs, error, name", [
    (dict(x=[[1.0, 2.0]]), ValueError, "x"),
    (dict(x=["a", "b"]), TypeError, "x"),
    (dict(x=[1.0, np.nan]), ValueError, "x"),
    (dict(w1=[[1.0, 0.0, 0.0]]), ValueError, "w1"),
    (dict(w2=[[1.0, 0.0, 0.0]]), ValueError, "w2"),
    (dict(w_s=np.eye(3)), ValueError, "w_s"),
])
def test_bad_input_names_the_parameter(kwargs, error, name):
    args = dict(x=X, w1=W1, w2=W2, w_s=None) | kwargs
    with pytest.raises(error, match=name):
        numpy_block.forward(**args)
