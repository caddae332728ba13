import numpy as np
import pytest
import torch

from utils.data import load_digits_split


def test_shapes_dtypes_and_split_sizes_are_fixed():
    data = load_digits_split()
    assert data.x_train.shape == (1347, 64) and data.x_test.shape == (450, 64)
    assert data.y_train.shape == (1347,) and data.y_test.shape == (450,)
    assert data.x_train.dtype == torch.float32 and data.y_train.dtype == torch.int64
    assert data.n_classes == 10 and data.n_features == 64
    assert set(data.y_train.tolist()) == set(range(10)) == set(data.y_test.tolist())


def test_split_is_reproducible_and_depends_on_seed():
    a, b = load_digits_split(seed=0), load_digits_split(seed=0)
    assert torch.equal(a.x_train, b.x_train) and torch.equal(a.y_test, b.y_test)
    c = load_digits_split(seed=1)
    assert not torch.equal(a.y_train, c.y_train)


def test_training_features_are_standardised():
    data = load_digits_split()
    mean = data.x_train.double().mean(dim=0)
    std = data.x_train.double().std(dim=0, unbiased=False)
    assert torch.allclose(mean, torch.zeros(64, dtype=torch.float64), atol=1e-5)
    varying = std > 0
    assert torch.allclose(std[varying], torch.ones(int(varying.sum()), dtype=torch.float64), atol=1e-5)
    assert int(varying.sum()) < 64  # some corner pixels are constant (only centred)


def test_split_is_stratified():
    data = load_digits_split()
    train_share = np.bincount(data.y_train.numpy(), minlength=10) / len(data.y_train)
    test_share = np.bincount(data.y_test.numpy(), minlength=10) / len(data.y_test)
    assert np.max(np.abs(train_share - test_share)) < 0.01


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="test_fraction"):
        load_digits_split(test_fraction=1.5)
    with pytest.raises(TypeError, match="seed"):
        load_digits_split(seed=0.5)


def test_features_follow_torchs_default_dtype():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        wide = load_digits_split()
    finally:
        torch.set_default_dtype(previous)
    narrow = load_digits_split()
    assert wide.x_train.dtype == torch.float64 and narrow.x_train.dtype == torch.float32
    assert torch.equal(wide.x_train.float(), narrow.x_train)  # the same numbers, rounded once
