"""Shared, tested helpers for the residual-connections course.

One concept per module; import what you need, e.g. ``from utils import plotting``.
Importing the package fits torch's and the BLAS libraries' thread count to the CPU this
kernel is given (``utils.threads.fit_cpu_share``; a teacher can set ``COURSE_THREADS``).
"""
from .threads import fit_cpu_share as _fit_cpu_share

_fit_cpu_share()
