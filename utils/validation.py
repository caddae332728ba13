"""Input checks shared by every module, so bad input fails early, naming the parameter, not
deep inside NumPy or torch: ``<name> must be <requirement>, got <what it got>`` (``invalid``).
``check_cost`` refuses a call too big for a laptop before anything is allocated."""
from __future__ import annotations

import bisect
import numbers
import sys
from collections.abc import Callable, Iterable

import numpy as np

__all__ = ["MAX_BYTES", "OPERATIONS_PER_SECOND", "MAX_OPERATIONS", "describe_value", "invalid", "check_int",
           "check_float", "check_bool", "check_text", "check_choice", "check_sequence", "check_callable",
           "check_tensor", "check_module", "check_figure", "check_axes", "check_array", "check_cost"]

# What one call may use: half of Binder's 2 GB per notebook, and five minutes of a laptop core
# (about 1e9 simple operations a second), far more than the course's largest cell (about 1e10
# operations) and far less than a typo like depth=10**9.
MAX_BYTES = 1e9
OPERATIONS_PER_SECOND = 1e9
MAX_OPERATIONS = 300 * OPERATIONS_PER_SECOND

_NOTHING = object()


def _instance_of(value, module: str, kind: str) -> bool:
    """isinstance for a class of a library that may not be imported yet (then nothing is one)."""
    return module in sys.modules and isinstance(value, getattr(sys.modules[module], kind))


def describe_value(value) -> str:
    """A short description of ``value`` for an error message: the value itself for
    numbers, strings and None; the shape (and dtype) for arrays and tensors; else the type."""
    if _instance_of(value, "torch", "Tensor"):
        return f"a {str(value.dtype).removeprefix('torch.')} tensor of shape {tuple(value.shape)}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, numbers.Number)):
        return repr(value)
    if isinstance(value, (str, bytes, list, tuple, dict, set, range)):
        text = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        return text if isinstance(value, (str, bytes)) else f"{type(value).__name__} {text}"
    if callable(value) and hasattr(value, "__name__"):
        return f"the function {value.__name__}"
    return f"a {type(value).__name__}"


def invalid(name: str, requirement: str, value=_NOTHING, *, fix: str | None = None,
            error: type[Exception] = ValueError) -> Exception:
    """The exception for a bad argument: ``<name> must be <requirement>, got <value>[; <fix>]``.
    ``raise invalid("depth", "at least 1", depth)``; ``error=TypeError`` for a wrong type."""
    got = "" if value is _NOTHING else f", got {describe_value(value)}"
    return error(f"{name} must be {requirement}{got}" + (f"; {fix}" if fix else ""))


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not a whole number in range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise invalid(name, "a whole number (int)", value, error=TypeError)
    return _in_range(name, int(value), minimum, maximum)


def check_float(name: str, value, *, minimum: float | None = None, maximum: float | None = None) -> float:
    """Return ``value`` as a finite float, or raise if it is not a real number in range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise invalid(name, "a real number", value, error=TypeError)
    if not np.isfinite(value := float(value)):
        raise invalid(name, "finite", value)
    return _in_range(name, value, minimum, maximum)


def _in_range(name: str, value, minimum, maximum):
    if minimum is not None and value < minimum:
        raise invalid(name, f"at least {minimum}", value)
    if maximum is not None and value > maximum:
        raise invalid(name, f"at most {maximum}", value)
    return value


def check_bool(name: str, value) -> bool:
    """Return ``value`` if it is True or False (not 1, not "yes"), else raise."""
    if not isinstance(value, (bool, np.bool_)):
        raise invalid(name, "True or False", value, error=TypeError)
    return bool(value)


def check_text(name: str, value, *, allow_none: bool = False) -> str | None:
    """Return ``value`` if it is a str (or None when ``allow_none``), else raise."""
    if not isinstance(value, str) and not (value is None and allow_none):
        raise invalid(name, "a str" + (" or None" if allow_none else ""), value, error=TypeError)
    return value


def check_choice(name: str, value, choices: Iterable):
    """Return ``value`` if it is one of ``choices``, else raise listing the valid ones."""
    choices = tuple(choices)
    if not any(_same(value, choice) for choice in choices):
        raise invalid(name, "one of " + ", ".join(repr(c) for c in choices), value)
    return value


def _same(value, choice) -> bool:
    """value == choice, where True is not 1 and an array is equal to nothing."""
    try:
        return bool(value == choice) and isinstance(value, bool) == isinstance(choice, bool)
    except (TypeError, ValueError):
        return False


def check_sequence(name: str, value, *, what: str = "values", allow_empty: bool = False) -> list:
    """Return ``value`` as a list if it is a sequence (list, tuple, range or 1-D array),
    not a string, a set or a single number; ``what`` names its items in the message."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if not isinstance(value, (list, tuple, range)):
        raise invalid(name, f"a list or tuple of {what}", value, error=TypeError)
    if not value and not allow_empty:
        raise invalid(name, f"a non-empty list of {what}", value)
    return list(value)


def check_callable(name: str, value, *, what: str = "a function") -> Callable:
    """Return ``value`` if it can be called, else raise; ``what`` says which function is wanted."""
    if not callable(value):
        raise invalid(name, what, value, error=TypeError)
    return value


def check_tensor(name: str, value, *, ndim: int | None = None, last_dim: int | None = None,
                 floating: bool = True, shape_text: str | None = None):
    """Return ``value`` if it is a torch.Tensor of rank ``ndim``, last dimension ``last_dim`` (each
    when given), floating-point when ``floating``; ``shape_text`` words it: "(batch, 64)"."""
    rank = [f"{ndim} dimension(s)"] * (ndim is not None) + [f"last dimension {last_dim}"] * (last_dim is not None)
    wanted = "a torch.Tensor" + (f" of shape {shape_text}" if shape_text else
                                 f" with {' and '.join(rank)}" if rank else "")
    if not _instance_of(value, "torch", "Tensor"):
        raise invalid(name, wanted, value, error=TypeError)
    if floating and not value.is_floating_point():
        raise invalid(name, "a floating-point torch.Tensor", value, error=TypeError, fix="convert it with .float()")
    if (ndim is not None and value.ndim != ndim) or (
            last_dim is not None and (value.ndim == 0 or value.shape[-1] != last_dim)):
        raise invalid(name, wanted, value)
    return value


def check_module(name: str, value, kind: type | None = None, *, what: str | None = None):
    """Return ``value`` if it is a torch.nn.Module (an instance of ``kind`` when given),
    else raise; ``what`` says where such a module comes from (e.g. "a utils.mlp.MLP")."""
    if not (isinstance(value, kind) if kind else _instance_of(value, "torch.nn", "Module")):
        raise invalid(name, what or "a torch.nn.Module", value, error=TypeError)
    return value


def check_figure(name: str, value):
    """Return ``value`` if it is a matplotlib Figure (what every draw function draws on)."""
    if not _instance_of(value, "matplotlib.figure", "Figure"):
        raise invalid(name, "a matplotlib Figure", value, error=TypeError,
                      fix="make one with matplotlib.figure.Figure() or utils.plotting.new_figure()")
    return value


def check_axes(name: str, value):
    """Return ``value`` if it is a matplotlib Axes (e.g. ``fig.subplots()``)."""
    if not _instance_of(value, "matplotlib.axes", "Axes"):
        raise invalid(name, "a matplotlib Axes", value, error=TypeError, fix="make one with fig.subplots()")
    return value


def check_array(name: str, value, *, ndim: int | None = None, shape: tuple | None = None) -> np.ndarray:
    """Return ``value`` as a finite float64 array of rank ``ndim`` and ``shape`` (``None`` in
    it for a free dimension, e.g. ``(None, 2)``), each when given."""
    if value is None or isinstance(value, (str, bytes)):
        raise invalid(name, "an array of numbers", value, error=TypeError)
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise invalid(name, "an array of numbers", value, error=TypeError, fix=str(exc)) from None
    if ndim is not None and array.ndim != ndim:
        raise invalid(name, f"an array with {ndim} dimension(s)", array)
    if shape is not None and (array.ndim != len(shape) or any(
            want is not None and got != want for got, want in zip(array.shape, shape))):
        wanted = str(tuple("any" if s is None else s for s in shape)).replace("'", "")
        raise invalid(name, f"an array of shape {wanted}", array)
    if not np.all(np.isfinite(array)):
        raise invalid(name, "finite (it contains NaN or infinity)", fix="pass finite numbers")
    return array


_BYTES = {"EB": 1e18, "PB": 1e15, "TB": 1e12, "GB": 1e9, "MB": 1e6, "kB": 1e3, "bytes": 1}
_SECONDS = {"years": 3.15e7, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}


def _in_units(value: float, units: dict) -> str:
    """``value`` in the largest of ``units`` (name -> size, largest first) it reaches: '3.2 GB'."""
    unit = next((unit for unit, size in units.items() if value >= size), [*units][-1])
    return f"{value / units[unit]:.3g} {unit}"


def check_cost(sizes: dict, cost: Callable[..., tuple[float, float]], *, what: str) -> None:
    """Refuse a call whose ``cost(**sizes)`` (bytes, operations; ``sizes`` checked, positive)
    exceeds ``MAX_BYTES`` or ``MAX_OPERATIONS``: a ValueError naming the size furthest beyond what
    fits, what the call needs for ``what``, and the largest value of that size accepted."""
    def fits(**changed) -> bool:
        nbytes, operations = cost(**{**sizes, **changed})
        return nbytes <= MAX_BYTES and operations <= MAX_OPERATIONS

    if fits():
        return
    # Per size (a size of 0 is never the one too big), the largest n in [1, value] that fits
    # with the others unchanged, or 0 if none, the cost growing with n.
    fitting = {name: bisect.bisect_left(range(1, value + 1), True,
                                        key=lambda n, name=name: not fits(**{name: n}))
               for name, value in sizes.items() if value >= 1}
    # Blame the size furthest beyond what fits; one that cannot fit at all whatever its
    # value (another size is too big) only when no size can be fixed on its own.
    blame = max(fitting, key=lambda name: sizes[name] / fitting[name] if fitting[name] else 0.0)
    largest, (nbytes, operations) = fitting[blame], cost(**sizes)
    seconds = lambda operations: _in_units(operations / OPERATIONS_PER_SECOND, _SECONDS)
    need = (f"about {_in_units(nbytes, _BYTES)} of memory" if nbytes > MAX_BYTES else
            f"about {operations:.2g} operations (some {seconds(operations)} on a laptop core)")
    others = ", ".join(f"{name}={value}" for name, value in sizes.items() if name != blame)
    others = f" with {others}" if others else ""
    accepted = (f"this course's functions accept {blame} up to {largest}{others}" if largest
                else f"no {blame} fits{others}: make those smaller")
    raise ValueError(f"{blame}={sizes[blame]}{others} would need {need} for {what}; {accepted} (one call "
                     f"may use {_in_units(MAX_BYTES, _BYTES)} and about {seconds(MAX_OPERATIONS)} of a laptop core)")
