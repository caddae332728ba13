"""The course launches on mybinder.org: every notebook carries a Binder badge that opens
itself, binder/ pins what requirements.txt pins, and (slow) an environment built the way
repo2docker builds it runs a notebook in well under Binder's 2 GB of memory.

repo2docker reads only binder/ when it exists: binder/runtime.txt picks Python,
binder/requirements.txt is installed with pip from the repository root (so its line ``.``
installs utils), on top of a base image that already has JupyterLab 4 and ipykernel.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import NamedTuple

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from scripts.course_repository import BRANCH, REPOSITORY
from utils.threads import LIBRARY_VARIABLES

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
BADGE_IMAGE = "https://mybinder.org/badge_logo.svg"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
BADGE = re.compile(r"\[!\[Binder\]\((?P<image>[^)]*)\)\]\((?P<url>https://mybinder\.org/v2/gh/[^)\s]*)\)")
BINDER_SLUG = re.compile(r"https://mybinder\.org/v2/gh/(?P<slug>[^/]+/[^/]+)/")
COLAB_BADGE = re.compile(r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]"
                         r"\(https://colab\.research\.google\.com/github/(?P<slug>[^/]+/[^/]+)/blob/(?P<branch>[^/]+)"
                         r"/(?P<path>[^)\s]+)\)")
# What repo2docker's base image already provides: installed before binder/requirements.txt.
BASE_IMAGE_PACKAGES = ("jupyterlab", "ipykernel", "nbclient", "nbformat")
# Import names that differ from the distribution that provides them.
IMPORT_TO_DISTRIBUTION = {"sklearn": "scikit-learn", "IPython": "ipykernel", "utils": "residual-course-utils"}
KERNEL_MEMORY_LIMIT = 1.5 * 2**30  # bytes; mybinder.org kills a user at 2 GB


def badge_line(notebook_name: str) -> str:
    """The exact badge markdown that opens ``notebooks/<notebook_name>`` in JupyterLab on Binder."""
    return (f"[![Binder]({BADGE_IMAGE})](https://mybinder.org/v2/gh/{REPOSITORY}/HEAD"
            f"?urlpath=lab/tree/notebooks/{notebook_name})")


def read_pins(path: Path) -> dict[str, Requirement]:
    """Requirements of a pip requirements file by canonical name (options, comments and
    local paths such as ``.`` or ``-e .`` are left out)."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith(("-", ".", "/")):
            requirement = Requirement(line)
            pins[canonicalize_name(requirement.name)] = requirement
    return pins


def pinned_version(requirement: Requirement) -> Version:
    specifiers = list(requirement.specifier)
    assert len(specifiers) == 1 and specifiers[0].operator == "==", (
        f"{requirement} is not an exact pin (write {requirement.name}==VERSION)")
    return Version(specifiers[0].version)


def binder_lines() -> list[str]:
    return [line.split("#", 1)[0].strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]


# ---------------------------------------------------------------- fast checks


def test_the_course_has_notebooks():
    assert NOTEBOOKS, "no notebooks/NN_*.ipynb found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_first_cell_has_a_binder_badge_that_opens_this_notebook(path):
    first = nbformat.read(path, as_version=4).cells[0]
    assert first.cell_type == "markdown", f"{path.name}: the first cell must be the markdown header with the badge"
    badges = list(BADGE.finditer(first.source))
    assert badges, f"{path.name}: no Binder badge in the first cell; add this line under the title:\n{badge_line(path.name)}"
    for badge in badges:
        assert badge.group(0) == badge_line(path.name), (
            f"{path.name}: the badge\n{badge.group(0)}\ndoes not open this notebook on Binder; use\n{badge_line(path.name)}")


def test_readme_has_the_binder_badge_opening_notebook_00():
    readme = ROOT / "README.md"
    assert readme.is_file(), f"README.md is missing; it must show the Binder badge:\n{badge_line('00_start_here.ipynb')}"
    assert badge_line("00_start_here.ipynb") in readme.read_text(), (
        f"README.md has no Binder badge opening notebook 00; add:\n{badge_line('00_start_here.ipynb')}")


@pytest.mark.parametrize("path", [ROOT / "README.md", *NOTEBOOKS], ids=["README.md", *(p.name for p in NOTEBOOKS)])
def test_the_colab_badge_opens_the_same_repository_as_the_binder_badge(path):
    text = path.read_text() if path.suffix == ".md" else nbformat.read(path, as_version=4).cells[0].source
    wanted = "notebooks/00_start_here.ipynb" if path.suffix == ".md" else f"notebooks/{path.name}"
    colab = list(COLAB_BADGE.finditer(text))
    assert len(colab) == 1, f"{path.name}: expected one Open in Colab badge; run python -m scripts.notebook_header"
    binder_slugs = {BINDER_SLUG.match(badge["url"])["slug"] for badge in BADGE.finditer(text)}
    assert binder_slugs == {REPOSITORY} and colab[0]["slug"] == REPOSITORY, (
        f"{path.name}: Colab opens {colab[0]['slug']}, Binder opens {binder_slugs}; both must open {REPOSITORY}")
    assert colab[0]["path"] == wanted and colab[0]["branch"] == BRANCH, f"{path.name}: the Colab badge opens {colab[0]['path']}"
    binder_line = next(line for line in text.splitlines() if BADGE.search(line))
    assert COLAB_BADGE.search(binder_line), f"{path.name}: put the Colab badge beside the Binder badge, on its line"


def test_binder_pins_the_same_versions_as_requirements():
    binder, local = read_pins(BINDER / "requirements.txt"), read_pins(ROOT / "requirements.txt")
    shared = sorted(set(binder) & set(local))
    assert "torch" in shared and "numpy" in shared, f"binder and requirements share only {shared}"
    for name in shared:
        # torch==2.13.0+cpu on Binder is the same release as torch==2.13.0 here: compare public versions.
        binder_version, local_version = pinned_version(binder[name]), pinned_version(local[name])
        assert binder_version.public == local_version.public, (
            f"{name}: binder/requirements.txt pins {binder_version}, requirements.txt pins {local_version}")


def test_binder_installs_cpu_torch_and_leaves_jupyterlab_to_the_base_image():
    lines = binder_lines()
    pins = read_pins(BINDER / "requirements.txt")
    assert f"--extra-index-url {CPU_INDEX}" in lines, f"binder/requirements.txt needs --extra-index-url {CPU_INDEX}"
    assert pinned_version(pins["torch"]).local == "cpu", "pin the CPU wheel: torch==VERSION+cpu (the CUDA one is 6-8 GB)"
    assert "jupyterlab" not in pins, "the Binder base image has JupyterLab 4; do not pin it in binder/requirements.txt"
    assert "." in lines, "binder/requirements.txt must install the utils package: a line '.'"
    assert "-e ." not in lines, ("install utils into the environment ('.'), not editable: on Zero to JupyterHub each "
                                 "student's volume hides the home folder an editable install points into")
    assert "nbgitpuller" in pins, "binder/requirements.txt needs nbgitpuller: a hub's first page is /git-pull"
    post_build = BINDER / "postBuild"
    if post_build.is_file():
        assert "set -e" in post_build.read_text(), "binder/postBuild must start with set -e so a failed step fails the build"


def test_binder_python_version_satisfies_the_package():
    runtime = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", runtime)
    assert match, f"binder/runtime.txt must read python-3.X, not {runtime!r}"
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert Version(f"{match[1]}.{match[2]}") in SpecifierSet(requires), f"{runtime} does not satisfy requires-python {requires}"


def _imported_top_level_names(path: Path) -> set[str]:
    names = set()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            for match in re.finditer(r"^\s*(?:from\s+([A-Za-z_]\w*)[\w.]*\s+import|import\s+([A-Za-z_][\w., ]*))",
                                     cell.source, flags=re.MULTILINE):
                if match[1]:
                    names.add(match[1])
                else:
                    names.update(part.split()[0].split(".")[0] for part in match[2].split(",") if part.strip())
    return names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_import_of_the_notebook_is_installed_on_binder(path):
    provided = set(read_pins(BINDER / "requirements.txt")) | {canonicalize_name(p) for p in BASE_IMAGE_PACKAGES}
    provided.add("residual-course-utils")  # the line '.'
    missing = sorted(name for name in _imported_top_level_names(path) - set(sys.stdlib_module_names)
                     if canonicalize_name(IMPORT_TO_DISTRIBUTION.get(name, name)) not in provided)
    assert not missing, f"{path.name} imports {missing}, which binder/requirements.txt does not install"


# ---------------------------------------------------------------- slow: build and run


def _runtime_python() -> str:
    """An interpreter of the version binder/runtime.txt asks for, as repo2docker would use."""
    wanted = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
    if ".".join(map(str, sys.version_info[:2])) == wanted:
        return sys.executable
    found = shutil.which(f"python{wanted}")
    if not found:
        pytest.skip(f"binder/runtime.txt asks for Python {wanted}, which is not installed here")
    return found


def _local_wheel_folders(python: str) -> list[Path]:
    """The find-links folders pip is configured with on this machine (config files or PIP_FIND_LINKS)."""
    listed = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    values = re.findall(r"find-links='([^']*)'", listed) + [os.environ.get("PIP_FIND_LINKS", "")]
    return [Path(entry) for value in values for entry in value.split() if Path(entry).is_dir()]


def binder_requirements_for_this_machine(python: str) -> str:
    """binder/requirements.txt as pip should read it here. Where pip is configured with a local
    wheel folder that holds the pinned torch wheel, the CPU index line is replaced by that folder
    (no network needed); anywhere else the file is used unchanged, CPU index included."""
    torch = read_pins(BINDER / "requirements.txt")["torch"]
    version = str(pinned_version(torch))
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    for folder in _local_wheel_folders(python):
        if any(folder.glob(f"torch-{version}-*.whl")) or any(folder.glob(f"torch-{version.replace('+', '%2B')}-*.whl")):
            return "\n".join(f"--find-links {folder}" if line.strip() == f"--extra-index-url {CPU_INDEX}" else line
                             for line in lines) + "\n"
    return "\n".join(lines) + "\n"


def _pip(python: str, *args: str, cwd: Path) -> None:
    # --no-compile: no .pyc for every file of torch up front (half the install time); Python
    # compiles what a kernel imports when it imports it, so what is installed is the same.
    result = subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check",
                             *args],
                            cwd=cwd, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, f"pip install {' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def notebook_for_the_binder_run() -> Path:
    """The flexible-block notebook: PyTorch, a widget and the largest memory of the short notebooks."""
    for prefix in ("05_", "02_", "00_"):
        for path in NOTEBOOKS:
            if path.name.startswith(prefix):
                return path
    return NOTEBOOKS[0]


RUNNER = r'''
import json, sys
from pathlib import Path
import nbformat
path = Path(sys.argv[1])
# The course's executor, from the repository (the working directory): it polls in short steps (nbclient#312).
from scripts.execute_notebooks import notebook_client
notebook = nbformat.read(path, as_version=4)
notebook.cells.append(nbformat.v4.new_code_cell(
    "import json as _j, resource as _r, sys as _s\n"
    "print('BINDER-RUN', _j.dumps({'prefix': _s.prefix, 'peak_kb': _r.getrusage(_r.RUSAGE_SELF).ru_maxrss}))"))
notebook_client(notebook, path.parent, timeout=600).execute()
errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
assert not errors, errors
print(notebook.cells[-1].outputs[0]["text"].strip())
'''


class BinderImage(NamedTuple):
    """What repo2docker's image holds: the environment, the repository as it was copied in
    (``source``), and the home folder it was copied to, empty now as a hub's volume leaves it."""
    venv: Path
    source: Path
    home: Path
    install_seconds: float


def _install_like_repo2docker(image: Path) -> float:
    """Install the course into ``image`` as repo2docker builds it from binder/; the seconds taken."""
    python = _runtime_python()
    started = time.perf_counter()
    # repo2docker copies the repository into the home folder and installs from there.
    home, venv = image / "home", image / "venv"
    shutil.copytree(ROOT, home, ignore=shutil.ignore_patterns(
        ".venv", ".git", "__pycache__", ".ipynb_checkpoints", "*.egg-info", "build", "screenshots"))
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
    venv_python = str(venv / "bin" / "python")
    local = read_pins(ROOT / "requirements.txt")
    _pip(venv_python, *(str(local[name]) for name in BASE_IMAGE_PACKAGES), cwd=home)  # the base image
    requirements = image / "binder-requirements.txt"
    requirements.write_text(binder_requirements_for_this_machine(venv_python))
    _pip(venv_python, "-r", str(requirements), cwd=home)  # what repo2docker runs for binder/requirements.txt
    post_build = subprocess.run(["bash", "binder/postBuild"], cwd=home, capture_output=True, text=True, timeout=120,
                                env={**os.environ, "NB_PYTHON_PREFIX": str(venv)})
    assert post_build.returncode == 0, f"binder/postBuild failed:\n{post_build.stderr[-3000:]}"
    # On Zero to JupyterHub the student's volume is mounted over the home folder: nothing of
    # the copy stays reachable there. (The Binder run below reads its notebook from the moved copy.)
    home.rename(image / "source")
    home.mkdir()
    return time.perf_counter() - started


@pytest.fixture(scope="session")
def binder_image(tmp_path_factory, worker_id) -> BinderImage:
    """One image for this file's slow tests, built once per run: conftest.work_unit keeps them on
    one worker, and should they run on two, the first builds it under a file lock and the
    other waits and reuses it."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    image = shared / "binder-image"
    with FileLock(str(shared / "binder-image.lock")):
        done = image / "installed-in-seconds"
        if not done.is_file():
            shutil.rmtree(image, ignore_errors=True)
            image.mkdir()
            done.write_text(f"{_install_like_repo2docker(image):.1f}")
    return BinderImage(image / "venv", image / "source", image / "home", float(done.read_text()))


def _private_jupyter_env(venv: Path, folder: Path, home: Path | None = None) -> dict[str, str]:
    """This machine's environment without its venv and Jupyter paths: the image's ``venv``
    first on PATH, Jupyter's and IPython's own folders under ``folder`` (or, given a ``home``,
    HOME and everything under it, as in the image)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH", "JUPYTER_CONFIG_PATH")}
    base = home or folder
    env.update({name: str(base / subfolder) for name, subfolder in (
        ("JUPYTER_CONFIG_DIR", ".jupyter"), ("JUPYTER_DATA_DIR", ".local/share/jupyter"),
        ("JUPYTER_RUNTIME_DIR", ".local/share/jupyter/runtime"), ("IPYTHONDIR", ".ipython"),
        ("MPLCONFIGDIR", ".config/matplotlib"))},
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", **dict.fromkeys(LIBRARY_VARIABLES, "1"))
    if home:
        env["HOME"] = str(home)
    return env


@pytest.mark.slow
def test_a_binder_like_environment_runs_a_notebook_under_the_memory_limit(binder_image, tmp_path):
    import psutil

    assert NOTEBOOKS, "no notebooks to run"
    venv, repo, install_seconds = binder_image.venv, binder_image.source, binder_image.install_seconds
    venv_python = str(venv / "bin" / "python")
    notebook = repo / "notebooks" / notebook_for_the_binder_run().name
    env = _private_jupyter_env(venv, tmp_path)
    run_started = time.perf_counter()
    process = subprocess.Popen([venv_python, "-c", RUNNER, str(notebook)], cwd=repo, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak_rss = 0
    try:
        while process.poll() is None:  # sample the kernel's resident memory while it runs
            assert time.perf_counter() - run_started < 900, f"{notebook.name} did not finish in 900 s"
            try:
                for child in psutil.Process(process.pid).children(recursive=True):
                    if "ipykernel" in " ".join(child.cmdline()):
                        peak_rss = max(peak_rss, child.memory_info().rss)
            except psutil.Error:
                pass
            time.sleep(0.2)
        stdout, stderr = process.communicate()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    run_seconds = time.perf_counter() - run_started
    assert process.returncode == 0, f"{notebook.name} failed in the Binder-like environment:\n{stderr[-4000:]}"
    report = json.loads(stdout.split("BINDER-RUN", 1)[1])
    assert Path(report["prefix"]).resolve() == venv.resolve(), f"the kernel ran in {report['prefix']}, not the new environment"
    peak = max(peak_rss, report["peak_kb"] * 1024)  # ru_maxrss is in kB on Linux and catches short peaks
    print(f"\nBinder-like install {install_seconds:.0f} s; {notebook.name} ran in {run_seconds:.0f} s; "
          f"kernel peak memory {peak / 2**20:.0f} MB (sampled RSS {peak_rss / 2**20:.0f} MB)")
    assert peak_rss > 0, "never saw the kernel process"
    assert peak < KERNEL_MEMORY_LIMIT, f"{notebook.name}: kernel peak memory {peak / 2**20:.0f} MB, over 1.5 GB"


KERNEL_PROBE = r'''
import json, sys
from jupyter_client.manager import start_new_kernel
manager, client = start_new_kernel(kernel_name="python3", cwd=sys.argv[1])
printed = []
try:
    reply = client.execute_interactive(
        "import json, os, sys, utils, utils.exercises\n"
        "print(json.dumps({'cwd': os.getcwd(), 'utils': utils.__file__, 'prefix': sys.prefix}))",
        timeout=300, output_hook=lambda message: printed.append(
            message["content"].get("text") or message["content"].get("evalue", "")))
finally:
    client.stop_channels()
    manager.shutdown_kernel(now=True)
print(reply["content"]["status"], "".join(printed).strip())
'''


def _free_port(low: int = 9540, high: int = 9599) -> int:
    import socket

    for port in range(low, high + 1):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise RuntimeError(f"no free port in {low}-{high}")


def _get(url: str, token: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


@pytest.mark.slow
def test_the_image_serves_a_student_whose_volume_hides_the_repository(binder_image, tmp_path):
    """Zero to JupyterHub mounts each student's volume over the image's home folder, where
    repo2docker copied the repository: in that empty home, the first page's nbgitpuller pulls
    the student edition, and a kernel in the student's folder imports utils."""
    import urllib.parse

    venv, home = binder_image.venv, binder_image.home
    assert not any(home.iterdir()), "the home folder must start empty, as a new student's volume"
    # A student edition to pull: a git repository with the course's notebook 00.
    edition = tmp_path / "student-edition"
    (edition / "notebooks").mkdir(parents=True)
    shutil.copy2(binder_image.source / "notebooks" / "00_start_here.ipynb", edition / "notebooks")
    for command in (["init", "--quiet", "--initial-branch=student"], ["add", "--all"],
                    ["-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "--quiet", "-m", "edition"]):
        subprocess.run(["git", "-C", str(edition), *command], check=True, capture_output=True, timeout=60)

    token, port = "layout-test", _free_port()
    server = subprocess.Popen(
        [str(venv / "bin" / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={home}",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=home, env=_private_jupyter_env(venv, tmp_path, home=home),
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "server.log").open("w"))
    try:
        base = f"http://127.0.0.1:{port}"
        started = time.perf_counter()
        while _get_or_none(f"{base}/api/status", token) != 200:
            assert server.poll() is None, f"the server stopped:\n{(tmp_path / 'server.log').read_text()[-3000:]}"
            assert time.perf_counter() - started < 300, "the server did not answer within 300 s"
            time.sleep(0.5)
        query = urllib.parse.urlencode({"repo": str(edition), "branch": "student", "targetpath": "residual-course"})
        status, page = _get(f"{base}/git-pull?{query}&urlpath=lab/tree/residual-course/notebooks/00_start_here.ipynb",
                            token)
        assert status == 200, f"no nbgitpuller first page (HTTP {status}): is nbgitpuller in binder/requirements.txt?"
        status, events = _get(f"{base}/git-pull/api?{query}", token)
        assert status == 200 and '"phase": "finished"' in events, f"nbgitpuller's pull failed (HTTP {status}):\n{events[-3000:]}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    student_folder = home / "residual-course" / "notebooks"
    assert (student_folder / "00_start_here.ipynb").is_file(), "the pull left no notebook 00 in the student's folder"

    probe = subprocess.run([str(venv / "bin" / "python"), "-c", KERNEL_PROBE, str(student_folder)], cwd=student_folder,
                           env=_private_jupyter_env(venv, tmp_path, home=home), capture_output=True, text=True,
                           timeout=600)
    assert probe.returncode == 0, f"the kernel did not start:\n{probe.stderr[-3000:]}"
    status, _, printed = probe.stdout.strip().splitlines()[-1].partition(" ")
    assert status == "ok", f"import utils failed in a kernel in the student's folder:\n{printed}\n{probe.stderr[-3000:]}"
    found = json.loads(printed)
    assert Path(found["cwd"]).resolve() == student_folder.resolve()
    assert Path(found["prefix"]).resolve() == venv.resolve()
    assert venv.resolve() in Path(found["utils"]).resolve().parents, (
        f"utils was imported from {found['utils']}, not from the image's environment")


def _get_or_none(url: str, token: str) -> int | None:
    try:
        return _get(url, token)[0]
    except OSError:
        return None
