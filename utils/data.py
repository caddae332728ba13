"""The course's one real data set, scikit-learn's bundled digits (1,797 8x8 images, 10 classes, no
download): a deep net fits it in a few hundred CPU steps. The same arguments, the same tensors."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .validation import check_float, check_int

__all__ = ["load_digits_split"]


@dataclass(frozen=True)
class _DigitsSplit:
    """Training and test tensors: ``x_*`` (n, 64) in torch's default dtype, ``y_*`` int64 (n,)."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    n_classes: int = 10
    n_features: int = 64


def load_digits_split(test_fraction: float = 0.25, seed: int = 0) -> _DigitsSplit:
    """The digits, ``test_fraction`` held out (stratified, shuffled with ``seed``), each pixel
    standardised by the training set's statistics (scale 1, an honest test set), default dtype."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    test_fraction = check_float("test_fraction", test_fraction, minimum=0.05, maximum=0.95)
    seed = check_int("seed", seed, minimum=0)
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(x, y.astype(np.int64), test_size=test_fraction,
                                                        random_state=seed, stratify=y)
    mean, std = x_train.mean(axis=0), x_train.std(axis=0)
    std[std == 0] = 1.0
    as_features = lambda a: torch.from_numpy((a - mean) / std).to(torch.get_default_dtype())
    return _DigitsSplit(x_train=as_features(x_train), y_train=torch.from_numpy(y_train),
                       x_test=as_features(x_test), y_test=torch.from_numpy(y_test))
