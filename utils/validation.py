"""Input checks shared by every module, so bad input fails early with a message that
names the parameter and says how to fix it, instead of deep inside NumPy or torch."""
from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not a whole number in range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be a whole number (int), got {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_float(name: str, value, *, minimum: float | None = None, maximum: float | None = None) -> float:
    """Return ``value`` as a finite float, or raise if it is not a real number in range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_choice(name: str, value, choices: Iterable):
    """Return ``value`` if it is one of ``choices``, else raise listing the valid ones."""
    choices = tuple(choices)
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {listed}; got {value!r}")
    return value


def check_array(name: str, value, *, ndim: int | None = None, shape: tuple | None = None) -> np.ndarray:
    """Return ``value`` as a finite float64 array, checking its rank and shape.

    ``shape`` may contain ``None`` for a free dimension, e.g. ``(None, 2)``.
    """
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__}: {exc}") from None
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {array.shape}")
    if shape is not None:
        if array.ndim != len(shape) or any(want is not None and got != want for got, want in zip(array.shape, shape)):
            wanted = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {wanted}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinity; pass finite numbers")
    return array
