"""The course's one small real data set: scikit-learn's bundled handwritten digits.

It ships inside scikit-learn (no download), has 1,797 8x8 images in 10 classes, and a
deep network can fit it in a few hundred steps on a laptop CPU, which is what the training
notebooks need. The split and the standardisation are fixed, so every notebook that calls
``load_digits_split()`` with the same arguments sees exactly the same tensors.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .validation import check_float, check_int, check_tensor, invalid

__all__ = ["DigitsSplit", "load_digits_split"]

_N_CLASSES = 10
_N_FEATURES = 64


@dataclass(frozen=True)
class DigitsSplit:
    """Training and test tensors: ``x_*`` float of shape (n, 64) in torch's default dtype
    (float32 unless a notebook chose float64), ``y_*`` int64 of shape (n,)."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    n_classes: int = _N_CLASSES
    n_features: int = _N_FEATURES

    def __post_init__(self):
        check_int("n_classes", self.n_classes, minimum=2)
        check_int("n_features", self.n_features, minimum=1)
        for part in ("train", "test"):
            x = check_tensor(f"x_{part}", getattr(self, f"x_{part}"), ndim=2, last_dim=self.n_features,
                             shape_text=f"(n, n_features={self.n_features})")
            y = check_tensor(f"y_{part}", getattr(self, f"y_{part}"), ndim=1, floating=False,
                             shape_text="(n,) of int64 class labels")
            if y.dtype != torch.int64 or len(y) != len(x):
                raise invalid(f"y_{part}", f"{len(x)} int64 class labels, one per example of x_{part}", y)


def load_digits_split(test_fraction: float = 0.25, seed: int = 0) -> DigitsSplit:
    """Load the digits, hold out ``test_fraction`` of them (stratified by class, shuffled
    with ``seed``) and standardise every pixel with the training set's mean and standard
    deviation (pixels that are constant in the training set are only centred).

    Standardising keeps the first layer's inputs at scale 1, so He-normal initialisation
    behaves as designed; using only training statistics keeps the test set honest. The
    features come in torch's default dtype (``torch.get_default_dtype()``), so a notebook
    that trains in float64 sets that default once and gets float64 data and networks.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    test_fraction = check_float("test_fraction", test_fraction, minimum=0.05, maximum=0.95)
    seed = check_int("seed", seed, minimum=0)
    digits = load_digits()
    x = digits.data.astype(np.float64)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y)
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    std[std == 0] = 1.0
    as_features = lambda a: torch.from_numpy((a - mean) / std).to(torch.get_default_dtype())
    return DigitsSplit(x_train=as_features(x_train), y_train=torch.from_numpy(y_train),
                       x_test=as_features(x_test), y_test=torch.from_numpy(y_test))
