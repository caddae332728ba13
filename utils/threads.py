"""How many CPU threads torch and the BLAS libraries use, set when ``utils`` is imported
(``fit_cpu_share``). The course's tiny tensors spend more time handing work between threads
than computing, one thread fixes the order of every sum, and two kernels with two threads each
on two cores ran a hundred times slower than alone (OpenMP threads spin waiting for cores)."""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

__all__ = ["COURSE_THREADS", "LIBRARY_VARIABLES", "cpu_share", "fit_cpu_share"]

# A teacher or hub sets this (a whole number of threads) to override the course's choice.
COURSE_THREADS = "COURSE_THREADS"
# What JupyterHub's spawners export when the hub sets c.Spawner.cpu_limit (in CPUs).
_HUB_CPU_LIMIT = "CPU_LIMIT"
# Read by OpenMP (torch), MKL and OpenBLAS when they load.
LIBRARY_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _quota(folder: Path) -> float | None:
    """CPUs the quota files in ``folder`` allow (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``), or None."""
    v2, v1 = folder / "cpu.max", folder / "cpu.cfs_quota_us"
    if v2.is_file():
        quota, _, period = v2.read_text().strip().partition(" ")
        return None if quota == "max" else int(quota) / int(period or 100000)
    if v1.is_file():
        quota = int(v1.read_text().strip())
        return None if quota < 0 else quota / int((folder / "cpu.cfs_period_us").read_text().strip())
    return None


def _cgroup_cpu_limit(root=Path("/sys/fs/cgroup"),
                      proc_cgroup=Path("/proc/self/cgroup")) -> float | None:
    """CPUs this process's cgroup quota allows (cgroup v1 or v2, the tightest on its path), or
    None without a quota: what a container's or Binder's CPU limit looks like from inside."""
    if not proc_cgroup.is_file():
        return None
    limits = []
    for line in proc_cgroup.read_text().splitlines():  # hierarchy:controllers:path
        _, controllers, path = line.split(":", 2)
        # v2's one hierarchy names no controller; v1 mounts cpu alone or with cpuacct.
        bases = (("", "unified") if not controllers else ("cpu", "cpu,cpuacct", "cpuacct,cpu")
                 if {"cpu", "cpuacct"} & set(controllers.split(",")) else ())
        parts = [part for part in path.split("/") if part]
        # The cgroup's folder and each one above it: a quota anywhere on the path applies.
        limits += [quota for base in bases for end in range(len(parts), -1, -1)
                   if (quota := _quota((root / base).joinpath(*parts[:end]))) is not None]
    return min(limits, default=None)


def _cores() -> int:
    """The cores this process may run on (all of them where the OS cannot tell)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def cpu_share(environ=None) -> float:
    """CPUs this kernel is given: the cores it may run on, its cgroup's CPU quota, and the
    hub's ``CPU_LIMIT``, whichever is smallest (``environ`` defaults to ``os.environ``)."""
    environ = os.environ if environ is None else environ
    if not hasattr(environ, "get"):
        raise TypeError(f"environ must be a mapping of environment variables, got {environ!r}")
    share = float(_cores())
    quota = _cgroup_cpu_limit()
    hub = environ.get(_HUB_CPU_LIMIT)
    try:
        return min(share, share if quota is None else quota, float(hub or share))
    except ValueError:
        raise ValueError(f"{_HUB_CPU_LIMIT} must be a number of CPUs, got {hub!r}") from None


def _thread_count(environ=os.environ, share: float | None = None) -> int:
    """The threads a kernel should use: ``COURSE_THREADS``, else ``OMP_NUM_THREADS`` (the tests set
    1), else one, never more than the CPU ``share`` (default ``cpu_share()``) rounded down."""
    share = cpu_share(environ) if share is None else share
    for variable in (COURSE_THREADS, "OMP_NUM_THREADS"):
        value = environ.get(variable, "").strip()
        if value:
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"{variable} must be a whole number of threads, at least 1, got {value!r}")
            return max(1, min(int(value), math.floor(share)))
    return 1


def fit_cpu_share() -> int:
    """Apply ``_thread_count()`` to this process: the libraries' variables for what loads later,
    and torch's own setting if torch is already loaded. Returns the count."""
    count = _thread_count()
    os.environ.update(dict.fromkeys(LIBRARY_VARIABLES, str(count)))
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(count)
    return count
