"""Run small tensor work on one CPU thread.

Loops over tiny tensors (a few thousand numbers per operation) spend more time handing
work between threads than computing; on a busy laptop or Binder the hand-offs can make
such a loop tens of times slower. One thread also fixes the order of every sum.
"""
from __future__ import annotations

from contextlib import contextmanager

import torch

from .validation import check_int


@contextmanager
def threads(count: int = 1):
    """Within the ``with`` block torch uses ``count`` threads; the previous number is restored after."""
    count = check_int("count", count, minimum=1, maximum=256)  # more than any laptop has cores
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield count
    finally:
        torch.set_num_threads(before)
