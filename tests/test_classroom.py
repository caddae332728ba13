"""The classroom and Binder configuration: the hub's config loads and points at what exists,
the Zero to JupyterHub values parse and ask for what the measurements say a student needs,
Binder's server settings cap and cull kernels, and the course's kernel manager really shuts
down the longest-idle kernel to make room (real kernels, no browser)."""
from __future__ import annotations

import asyncio
import os
import re
import subprocess
import urllib.parse
from pathlib import Path

import pytest
import yaml
from traitlets.config import PyFileConfigLoader

from benchmarks import cpu_share
from benchmarks.report import write_section
from scripts import publish_student_edition as publish

ROOT = Path(__file__).resolve().parent.parent
BINDER_CONFIG = ROOT / "binder" / "jupyter_server_config.py"
HUB_CONFIG = ROOT / "classroom" / "jupyterhub_config.py"
Z2JH = ROOT / "classroom" / "z2jh" / "config.yaml"


def load(path: Path, **environment):
    """The traitlets config a Jupyter application would read from ``path``."""
    saved = {key: os.environ.get(key) for key in environment}
    os.environ.update(environment)
    try:
        return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def gigabytes(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)([KMGT])", str(text)).groups()
    return float(number) * {"K": 2**-20, "M": 2**-10, "G": 1, "T": 2**10}[unit]


# Needs jupyter_server (JupyterLab's), which make test-versions' environments leave out: marked
# slow, so it runs in make test and not there.
@pytest.mark.slow
def test_binder_server_caps_and_culls_kernels():
    config = load(BINDER_CONFIG)
    manager = config.ServerApp.kernel_manager_class
    assert manager.__name__ == "CourseKernelManager"
    assert config.MappingKernelManager.cull_idle_timeout == 20 * 60 and config.MappingKernelManager.cull_connected
    assert config.MappingKernelManager.cull_busy is False
    assert config.LabApp.news_url is None
    assert not any(config.ServerApp.jpserver_extensions.values()), "students get no nbgrader extension"


def test_binder_postbuild_installs_the_settings_outside_home():
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "set -e" in post_build and "$HOME" not in post_build and "${HOME}" not in post_build
    for name in ("jupyter_server_config.py", "overrides.json"):
        assert f"binder/{name}" in post_build and (ROOT / "binder" / name).is_file()


# Needs jupyter_server (JupyterLab's), which make test-versions' environments leave out: marked
# slow, so it runs in make test and not there.
@pytest.mark.slow
def test_the_kernel_manager_shuts_down_the_longest_idle_kernel_to_make_room(tmp_path):
    """Three kernels allowed; a fourth start shuts down the one idle longest."""
    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager  # noqa: F401

    manager_class = load(BINDER_CONFIG, COURSE_MAX_KERNELS="2").ServerApp.kernel_manager_class
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)}

    async def scenario():
        manager = manager_class(root_dir=str(tmp_path), connection_dir=str(tmp_path))
        try:
            first = await manager.start_kernel(env=env)
            second = await manager.start_kernel(env=env)
            for name in (first, second):
                manager.get_kernel(name).execution_state = "idle"
            manager.get_kernel(second).last_activity = manager.get_kernel(first).last_activity.replace(
                year=manager.get_kernel(first).last_activity.year + 1)  # the first is idle longest
            third = await manager.start_kernel(env=env)
            return first, second, third, list(manager.list_kernel_ids())
        finally:
            await manager.shutdown_all(now=True)

    first, second, third, running = asyncio.run(scenario())
    assert first not in running and sorted(running) == sorted([second, third])


def test_the_hub_config_points_at_what_exists():
    config = load(HUB_CONFIG, CLASSROOM_STATE="/tmp/classroom-state")
    assert config.JupyterHub.authenticator_class == "dummy"
    assert config.JupyterHub.spawner_class == "simple"
    assert config.ConfigurableHTTPProxy.command[0].endswith("classroom/node_modules/.bin/configurable-http-proxy")
    assert any(arg == f"--config={BINDER_CONFIG}" for arg in config.Spawner.args)
    assert any(arg == f"--LabApp.app_settings_dir={ROOT / 'binder'}" for arg in config.Spawner.args)
    url = urllib.parse.urlparse(config.Spawner.default_url)
    query = urllib.parse.parse_qs(url.query)
    assert url.path == "/git-pull" and query["repo"] == ["/tmp/classroom-state/student-edition.git"]
    assert query["urlpath"][0].endswith("notebooks/00_start_here.ipynb")
    assert config.Spawner.cpu_limit == 1 and gigabytes(config.Spawner.mem_limit) == 2


def test_the_proxy_is_pinned_by_a_lock_file():
    import json

    package = json.loads((ROOT / "classroom" / "package.json").read_text())
    lock = json.loads((ROOT / "classroom" / "package-lock.json").read_text())
    version = package["dependencies"]["configurable-http-proxy"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"pin an exact version, not {version}"
    assert lock["packages"]["node_modules/configurable-http-proxy"]["version"] == version


def test_z2jh_values_ask_for_what_a_student_needs():
    values = yaml.safe_load(Z2JH.read_text())
    single = values["singleuser"]
    guarantee, limit = gigabytes(single["memory"]["guarantee"]), gigabytes(single["memory"]["limit"])
    assert 0 < guarantee <= limit <= 2, "Binder's 2 GB is what a whole session was measured to fit"
    assert 0 < single["cpu"]["guarantee"] <= single["cpu"]["limit"]
    assert single["extraEnv"]["COURSE_MAX_KERNELS"] == "3"
    url = urllib.parse.urlparse(single["defaultUrl"])
    assert url.path == "/git-pull" and {"repo", "branch", "urlpath"} <= set(urllib.parse.parse_qs(url.query))
    assert values["cull"]["enabled"] and values["cull"]["timeout"] > 0
    assert values["hub"]["config"]["JupyterHub"]["authenticator_class"]


def test_publish_student_edition_commits_only_changes(tmp_path):
    repo = tmp_path / "student.git"
    first = publish.publish(repo)
    assert publish.publish(repo) == first  # nothing changed: no new commit
    log = subprocess.run(["git", "-C", str(repo), "log", "--oneline"], capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1
    assert (repo / "notebooks" / "00_start_here.ipynb").is_file() and (repo / "utils").is_dir()
    stub = (repo / "notebooks" / "01_residual_block_by_hand.ipynb").read_text()
    assert "NotImplementedError" in stub and "# BEGIN SOLUTION" not in stub


def test_the_classroom_benchmarks_write_their_sections_in_place(tmp_path):
    """benchmarks/cpu_share.py reports a ratio per notebook and replaces its own section only."""
    paths = [Path("10_a.ipynb"), Path("11_b.ipynb")]
    run = {"alone": [{"seconds": 2.0, "threads": 1}, {"seconds": 4.0, "threads": 1}],
           "together": [{"seconds": 3.0, "threads": 1}, {"stopped": True}]}
    section = cpu_share.report(paths, {"course": [run]}, 300.0, (1.0, 2.0), "2026-12-01 16:00")
    rows = [line for line in section.splitlines() if line.startswith("| course")]
    assert [cell.strip() for cell in rows[0].strip("| ").split("|")][2:8] == ["1", "10_a.ipynb", "2.0", "3.0", "1.50",
                                                                            "pass"]
    assert "> 300" in rows[1] and "miss: stopped after 300 s" in rows[1]
    output = tmp_path / "RESULTS.md"
    output.write_text("# Benchmark results\n\n## Notebooks\n\nold\n\n## Misses\n\nnone\n")
    write_section(output, section, cpu_share.HEADING)
    write_section(output, section.replace("1.50", "1.40"), cpu_share.HEADING)
    text = output.read_text()
    assert text.count(cpu_share.HEADING) == 1 and "1.40" in text and "1.50" not in text
    assert text.index("## Notebooks") < text.index(cpu_share.HEADING) < text.index("## Misses")
