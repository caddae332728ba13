"""utils.threads fits a kernel's thread count to its CPU share: the cgroup quota (v1 and v2,
read from fake cgroup trees here, not the machine's), the CPU affinity, the hub's CPU_LIMIT
and the teacher's COURSE_THREADS; importing utils applies it."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from utils import threads as th


def fake_cgroup(tmp_path, proc: str, files: dict[str, str]):
    """A fake /sys/fs/cgroup tree with ``files`` (relative path -> text) and /proc/self/cgroup."""
    root = tmp_path / "cgroup"
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    (tmp_path / "proc_cgroup").write_text(proc)
    return root, tmp_path / "proc_cgroup"


@pytest.mark.parametrize("cpu_max, expected", [("150000 100000\n", 1.5), ("50000 100000\n", 0.5), ("max 100000\n", None)])
def test_cgroup_v2_cpu_max(tmp_path, cpu_max, expected):
    root, proc = fake_cgroup(tmp_path, "0::/kernel\n", {"kernel/cpu.max": cpu_max})
    assert th._cgroup_cpu_limit(root, proc) == expected


@pytest.mark.parametrize("quota, expected", [("200000", 2.0), ("25000", 0.25), ("-1", None)])
def test_cgroup_v1_cfs_quota(tmp_path, quota, expected):
    root, proc = fake_cgroup(tmp_path, "4:memory:/x\n2:cpu,cpuacct:/docker/abc\n0::/\n",
                             {"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": quota,
                              "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000"})
    assert th._cgroup_cpu_limit(root, proc) == expected


def test_a_tighter_quota_higher_up_the_path_wins(tmp_path):
    root, proc = fake_cgroup(tmp_path, "1:cpu:/hub/student\n",
                             {"cpu/hub/cpu.cfs_quota_us": "100000", "cpu/hub/cpu.cfs_period_us": "100000",
                              "cpu/hub/student/cpu.cfs_quota_us": "300000",
                              "cpu/hub/student/cpu.cfs_period_us": "100000"})
    assert th._cgroup_cpu_limit(root, proc) == 1.0


def test_no_cgroup_file_means_no_quota(tmp_path):
    assert th._cgroup_cpu_limit(tmp_path, tmp_path / "missing") is None
    root, proc = fake_cgroup(tmp_path, "0::/\n", {})
    assert th._cgroup_cpu_limit(root, proc) is None


def test_cpu_share_is_the_smallest_of_affinity_quota_and_hub_limit(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(th, "_cgroup_cpu_limit", lambda: None)
    assert th.cpu_share({}) == 4.0
    assert th.cpu_share({"CPU_LIMIT": "1.5"}) == 1.5
    monkeypatch.setattr(th, "_cgroup_cpu_limit", lambda: 0.5)
    assert th.cpu_share({"CPU_LIMIT": "2"}) == 0.5


def test_cpu_share_rejects_a_bad_hub_limit_and_a_bad_environ():
    with pytest.raises(ValueError, match="CPU_LIMIT"):
        th.cpu_share({"CPU_LIMIT": "two"})
    with pytest.raises(TypeError, match="environ"):
        th.cpu_share(["OMP_NUM_THREADS=1"])


@pytest.mark.parametrize("environ, share, expected", [
    ({}, 2.0, 1),                                              # the default: one thread
    ({}, 0.5, 1),                                              # at least one
    ({"COURSE_THREADS": "3"}, 8.0, 3),                         # the teacher's choice
    ({"COURSE_THREADS": "4"}, 2.0, 2),                         # but never more than the share
    ({"COURSE_THREADS": "2", "OMP_NUM_THREADS": "1"}, 4.0, 2),  # the course's variable first
    ({"OMP_NUM_THREADS": "2"}, 2.0, 2),                        # an explicit library setting is kept
    ({"OMP_NUM_THREADS": "8"}, 1.0, 1),
])
def test_thread_count(environ, share, expected):
    assert th._thread_count(environ, share) == expected


@pytest.mark.parametrize("variable", ["COURSE_THREADS", "OMP_NUM_THREADS"])
@pytest.mark.parametrize("value", ["two", "0", "-1", "1.5"])
def test_thread_count_rejects_a_bad_setting_by_name(variable, value):
    with pytest.raises(ValueError, match=variable):
        th._thread_count({variable: value}, 2.0)


def test_fit_cpu_share_sets_the_libraries_variables_and_torch(monkeypatch):
    before = torch.get_num_threads()
    for variable in th.LIBRARY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("COURSE_THREADS", "1")
    try:
        assert th.fit_cpu_share() == 1
        assert all(os.environ[variable] == "1" for variable in th.LIBRARY_VARIABLES)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_importing_utils_fits_torch_loaded_afterwards():
    """In a fresh interpreter with no thread variable set, torch imported after utils uses
    the course's count: what a learner's kernel does."""
    env = {key: value for key, value in os.environ.items() if key not in (*th.LIBRARY_VARIABLES, "COURSE_THREADS")}
    env["COURSE_THREADS"] = "2"
    expected = th._thread_count(env)
    code = "import utils, torch; print(torch.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert int(out.stdout.strip()) == expected
