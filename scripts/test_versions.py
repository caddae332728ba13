#!/usr/bin/env python
"""Run the unit tests and every notebook (nbval) under other versions of the course's libraries.

    make test-versions                          # every environment below
    make test-versions ENVS="oldest"            # just these
    python3 -m scripts.test_versions --rebuild  # install every venv afresh

Each environment is a virtual environment in this machine's cache, outside the clone
(``$XDG_CACHE_HOME/residual-course/versions/<name>``, by default under ``~/.cache``), so a
fresh clone reuses it: it is kept when it was built from the same pins with the same Python
(its stamp, requirements.json, says which) and built afresh otherwise; ``newest``, whose point
is whatever PyPI has today, is kept only on the day it was built. The course itself is
installed into it (editable) again whenever it points at another clone, and a lock lets one
run at a time use an environment:

- ``ipywidgets7``: the pins of requirements.txt, but the widget stack Google Colab ships
  (ipywidgets 7.7.1, ipykernel 6.17.1, IPython 7.34.0);
- ``oldest``: the lower end of every range in pyproject.toml's ``dependencies``;
- ``newest``: the newest release of every library in those ranges, whatever PyPI has today.

torch stays at the one version requirements.txt pins in all of them (the CPU build). The
test tools (pytest, nbval, nbclient, ...) keep their pins except in ``newest``. Each
environment's kernels run as one of the backend matrix's stand-ins
(backend_matrix.IN_VERSION_ENVIRONMENTS: AVX2 kernels with one thread, scalar kernels with
two, this CPU's with one). The first two stand-ins' notebooks are checked nowhere else, so
``ipywidgets7`` and ``oldest`` run every time; ``newest`` only when PyPI has something the
course loads that make test's venv does not have (``already_tested``), as make test checks
the rest, its stand-in included. Then ``pytest --nbval -m "not slow and not browser"`` runs
in each (those on one thread at once, then ``oldest``: ``batches``) over what another library
version can change (tests/suites.py: every notebook re-run from a fresh kernel and compared
with its stored outputs, and the tests of widgets, plotting, validation and the environment
check), after a check that the notebook kernel really runs inside the environment. A summary table ends the run; the
exit status is 1 if any environment failed. Logs: build/versions/<name>.log in the clone.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# The same pytest run, thread settings and summary line as make test-backends.
from scripts import backend_matrix
from scripts.backend_matrix import NO_TESTS, Backend, closing_line, command
from tests import suites

ROOT = Path(__file__).resolve().parent.parent

# The venvs, in the machine's cache (outlives a clone); the logs, in the clone's build/.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "residual-course" / "versions"
LOGS = ROOT / "build" / "versions"
# Not needed without the browser tests (the site's tests among them), and JupyterLab would pull a
# newer ipykernel stack; the classroom tools (grading, the hub) need JupyterLab 4 and run only in
# make test's slow tests.
LEFT_OUT = {"jupyterlab", "playwright", "sphinx", "myst-nb", "sphinx-book-theme", "nbgrader", "jupyterhub", "nbgitpuller"}
# What Colab runs next to ipywidgets 7.7.1 (google-colab 1.0.0 requires exactly these).
COLAB_WIDGET_STACK = {"ipywidgets": "7.7.1", "ipykernel": "6.17.1", "ipython": "7.34.0"}
# Versions printed in the summary, as the notebook kernel reports them.
SHOWN = ("torch", "numpy", "matplotlib", "scikit-learn", "scipy", "ipywidgets", "ipykernel", "ipython",
         "jupyter_client", "tqdm")
PIP = ("-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check", "--prefer-binary")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path = ROOT / "requirements.txt") -> dict[str, str]:
    """``name==version`` lines of a requirements file, by canonical name."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*==\s*(\S+)", line)
        if match:
            pins[canonical(match[1])] = match[2]
    return pins


def supported_ranges(path: Path = ROOT / "pyproject.toml") -> dict[str, tuple[str, str]]:
    """pyproject.toml's ``dependencies`` as {name: (oldest, newest tested)}; each must read
    ``name>=OLDEST,<=NEWEST`` or ``name==VERSION`` (one tested version, torch)."""
    ranges = {}
    for requirement in tomllib.loads(path.read_text())["project"]["dependencies"]:
        text = requirement.replace(" ", "")
        match = (re.fullmatch(r"([A-Za-z0-9_.\-]+)>=([^,]+),<=([^,]+)", text)
                 or re.fullmatch(r"([A-Za-z0-9_.\-]+)==()([^,]+)", text))
        if not match:
            raise ValueError(f"pyproject.toml dependency {requirement!r} must read name>=OLDEST,<=NEWEST or name==VERSION")
        ranges[canonical(match[1])] = (match[2] or match[3], match[3])
    return ranges


@dataclass
class Environment:
    name: str
    purpose: str
    requirements: list[str]
    upgrade: bool = False  # newest: let pip take the newest release of anything unpinned
    results: dict = field(default_factory=dict)


def environments(pins: dict[str, str], ranges: dict[str, tuple[str, str]],
                 oldest_extra: dict[str, str]) -> dict[str, Environment]:
    """The environments to test, each as the pip requirements that build it."""
    tools = {name: version for name, version in pins.items() if name not in LEFT_OUT and name not in ranges}
    torch = f"torch=={pins['torch']}"

    def exact(versions: dict[str, str]) -> list[str]:
        return [f"{name}=={version}" for name, version in versions.items()]

    widgets7 = {**tools, **{name: pins[name] for name in ranges if name in pins}, **COLAB_WIDGET_STACK}
    oldest = {**tools, **{name: low for name, (low, _) in ranges.items()}, **oldest_extra}
    newest = [torch] + sorted(name for name in {*tools, *ranges} if name != "torch")
    return {
        "ipywidgets7": Environment("ipywidgets7", "requirements.txt with Colab's widget stack, on AVX2 kernels",
                                   exact(widgets7)),
        "oldest": Environment("oldest", "lower end of every range in pyproject.toml", exact(oldest)),
        "newest": Environment("newest", "newest release of everything but torch", newest, upgrade=True),
    }


KERNEL_CHECK = r'''
import json, sys
import nbformat
from nbclient import NotebookClient
cell = nbformat.v4.new_code_cell("""
import json, sys, importlib.metadata as m
names = %r
print(json.dumps({"prefix": sys.prefix, "python": sys.version.split()[0],
                  **{n: m.version(n) for n in names}}))
""" % (sys.argv[1:],))
notebook = nbformat.v4.new_notebook(cells=[cell])
NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
print(notebook.cells[0].outputs[0]["text"])
'''


def isolated_env(venv: Path, backend: Backend = Backend("native", 1)) -> dict[str, str]:
    """The process environment for a run inside ``venv``: its bin first on PATH, private Jupyter
    folders (so no kernelspec of this machine is used), and ``backend``'s kernels and thread
    count (by default this CPU's own with one thread, as under make test)."""
    env = {key: value for key, value in backend_matrix.environment(backend).items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH")}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        env[name] = str(venv / "home" / name.lower())
        Path(env[name]).mkdir(parents=True, exist_ok=True)
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
               PYDEVD_DISABLE_FILE_VALIDATION="1")  # ipykernel's debugger warns about frozen modules otherwise
    return env


def run_logged(command: list[str], log, env=None, timeout: float = 1800) -> int:
    log.write(f"\n$ {' '.join(command)}\n")
    log.flush()
    return subprocess.run(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                          timeout=timeout).returncode


# Run by a venv's Python: every distribution the course's dependencies need (theirs too, markers
# evaluated, extras left out), by canonical name, with its version; the test tools are not in it.
LIBRARIES_CHECK = r'''
import importlib.metadata as metadata, json, re, sys
from packaging.requirements import Requirement
versions, waiting = {}, list(sys.argv[1:])
while waiting:
    name = re.sub(r"[-_.]+", "-", waiting.pop()).lower()
    if name in versions:
        continue
    try:
        distribution = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        continue
    versions[name] = distribution.version
    for text in distribution.requires or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            waiting.append(requirement.name)
print(json.dumps({"python": sys.version.split()[0], **versions}, sort_keys=True))
'''
COURSE_VENV = ROOT / ".venv"  # make test's venv (make install)


def course_libraries(python: Path) -> dict[str, str] | None:
    """What the course's kernel loads in the environment of ``python``: that Python's version,
    the dependencies in pyproject.toml and everything they need, by name, with versions (None
    if it cannot tell)."""
    if not python.is_file():
        return None
    found = subprocess.run([str(python.absolute()), "-c", LIBRARIES_CHECK, *supported_ranges()], cwd=python.parent,
                           capture_output=True, text=True, timeout=120)
    return json.loads(found.stdout) if found.returncode == 0 else None


def already_tested(environment: Environment, python: str, reuse: bool) -> dict | None:
    """``newest``'s result for the summary if it need not run, else None: PyPI has released
    nothing the course loads since requirements.txt was pinned, so its libraries are make
    test's, which make test checks, and its stand-in is the one make test's nbgrader run of the
    released notebooks is compared on (backend_matrix.RELEASE_IN_MAKE_TEST). Builds (or reuses)
    the venv to find out; without make test's venv (the weekly workflow installs none) it
    cannot tell, and newest runs."""
    venv = CACHE / environment.name
    with locked_log(environment) as log:
        if not build(environment, python, reuse, log):
            return None
        newest = course_libraries(venv / "bin" / "python")
        pinned = course_libraries(COURSE_VENV / "bin" / "python")
        log.write(f"\n$ course libraries\nhere: {newest}\nmake test: {pinned}\n")
    if newest is None or pinned is None:
        print(f"[{environment.name}] runs: cannot compare the libraries the course loads with make test's "
              f"({'its venv' if newest is None else COURSE_VENV} gave none)", flush=True)
        return None
    if newest != pinned:
        changed = ", ".join(f"{name} {pinned.get(name, 'none')} -> {newest.get(name, 'none')}"
                            for name in sorted(set(newest) | set(pinned)) if newest.get(name) != pinned.get(name))
        print(f"[{environment.name}] runs: PyPI has what make test's venv does not: {changed}", flush=True)
        return None
    return {"ok": True, "install_seconds": 0.0, "log": os.path.relpath(log_path(environment), ROOT),
            "versions": {"python": newest["python"], **{name: newest.get(canonical(name), "-") for name in SHOWN}},
            "outcome": f"not run: its Python and the {len(newest) - 1} libraries the course loads are make test's"}


def paths() -> list[str]:
    """What each environment runs (tests/suites.py)."""
    return suites.version_run()


def today() -> str:
    """The UTC date: ``newest`` is rebuilt once a day."""
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def build(environment: Environment, python: str, reuse: bool, log, day: str | None = None) -> bool:
    """Create the venv and install; True on success. With ``reuse``, a venv built from the
    same pins by the same Python is kept as it is (``newest``, whose names are unpinned, only
    on the ``day`` it was built). Either way the course's ``utils`` is installed editable from
    this clone if the venv's points elsewhere."""
    venv = CACHE / environment.name
    stamp = venv / "requirements.json"
    version = subprocess.run([python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True).stdout
    wanted = json.dumps({"python": version.strip(), "requirements": environment.requirements,
                         **({"day": day or today()} if environment.upgrade else {})})
    vpython = str(venv / "bin" / "python")
    editable = [vpython, *PIP, "--no-deps", "-e", "."]
    if reuse and stamp.is_file() and stamp.read_text() == wanted:
        log.write(f"reusing the environment in {venv}\n")
        return installed_from_here(venv) or run_logged(editable, log) == 0
    shutil.rmtree(venv, ignore_errors=True)
    steps = [[python, "-m", "venv", str(venv)],
             [vpython, *PIP, *(["--upgrade"] if environment.upgrade else []), *environment.requirements],
             editable,
             # byte-compile once (PYTHONDONTWRITEBYTECODE may be set): every kernel imports torch
             [vpython, "-m", "compileall", "-qq", "-j", "0", str(venv / "lib")]]
    for step in steps:
        if run_logged(step, log) != 0 and step[-1] != str(venv / "lib"):  # compileall: see Makefile
            return False
    stamp.write_text(wanted)
    return True


def installed_from_here(venv: Path) -> bool:
    """Does the venv import ``utils`` from this clone (its editable install points here)?"""
    found = subprocess.run([str(venv / "bin" / "python"), "-c", "import utils; print(utils.__file__)"],
                           cwd=venv, capture_output=True, text=True)
    return found.returncode == 0 and Path(found.stdout.strip()).resolve().parent == ROOT / "utils"


def kernel_versions(environment: Environment, log) -> dict | None:
    """Versions as a notebook kernel started from the venv sees them, or None if the kernel
    did not run inside it."""
    venv = CACHE / environment.name
    result = subprocess.run([str(venv / "bin" / "python"), "-c", KERNEL_CHECK, *SHOWN], cwd=ROOT,
                            env=isolated_env(venv), capture_output=True, text=True, timeout=300)
    log.write(f"\n$ kernel check\n{result.stdout}{result.stderr}")
    if result.returncode != 0:
        return None
    versions = json.loads(result.stdout.strip().splitlines()[-1])
    if Path(versions.pop("prefix")).resolve() != venv.resolve():
        log.write("the kernel did not run inside the environment\n")
        return None
    return versions


def log_path(environment: Environment) -> Path:
    """Where the environment's log goes (build/versions/, which git ignores), for the summary to name."""
    return LOGS / f"{environment.name}.log"


@contextlib.contextmanager
def locked_log(environment: Environment):
    """The environment's log, opened afresh, while this run holds the environment's lock
    (another clone's run on this machine waits for it)."""
    LOGS.mkdir(parents=True, exist_ok=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    with log_path(environment).open("w") as log, (CACHE / f"{environment.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield log


def run(environment: Environment, python: str, reuse: bool, extra: list[str], workers: int = 2) -> dict:
    """Build (or reuse) the environment and run its tests on ``workers`` xdist workers (0: in
    one process); its result for the summary."""
    result = {"log": os.path.relpath(log_path(environment), ROOT)}
    venv = CACHE / environment.name
    with locked_log(environment) as log:
        started = time.perf_counter()
        ok = build(environment, python, reuse, log)
        result["install_seconds"] = time.perf_counter() - started
        if not ok:
            result.update(ok=False, outcome="install failed")
            return result
        versions = kernel_versions(environment, log)
        if versions is None:
            result.update(ok=False, outcome="the notebook kernel did not start inside the venv")
            return result
        result["versions"] = versions
        started = time.perf_counter()
        backend = backend_matrix.IN_VERSION_ENVIRONMENTS[environment.name]
        log.write(f"\nstand-in: {backend.name} ({backend.stands_in_for})\n")
        code = run_logged([str(venv / "bin" / "python"), *command(workers)[1:], *paths(), *extra],
                          log, env=isolated_env(venv, backend))
        result["test_seconds"] = time.perf_counter() - started
    said = closing_line(log_path(environment).read_text())
    result.update(ok=code == 0, outcome=said if code != NO_TESTS else f"pytest collected no tests ({said})")
    return result


def summary(results: dict[str, dict]) -> str:
    """A plain-text table: one row per environment, its versions, times and outcome."""
    headers = ["environment", "python", *SHOWN, "install", "tests", "outcome"]
    rows = []
    for name, result in results.items():
        versions = result.get("versions", {})
        rows.append([name, versions.get("python", "?"), *(versions.get(n, "?") for n in SHOWN),
                     f"{result['install_seconds']:.0f} s",
                     f"{result['test_seconds']:.0f} s" if "test_seconds" in result else "-",
                     ("ok: " if result["ok"] else "FAILED: ") + result["outcome"]])
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))]
    return "\n".join("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
                     for row in [headers, *rows])


def batches(names: list[str]) -> list[list[str]]:
    """The environments in the order they run: those whose stand-in computes on one thread
    together, sharing the CPUs (two of them here took 233 s at once, 265-281 s one after the
    other), then each other one alone on every CPU. A kernel on two threads beside two other
    busy processes runs many times slower: with all three at once, oldest's notebooks had
    reached 4 % when the other two were at 77 %."""
    alone = [name for name in names if backend_matrix.IN_VERSION_ENVIRONMENTS[name].threads > 1]
    together = [name for name in names if name not in alone]
    return ([together] if together else []) + [[name] for name in alone]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("envs", nargs="*", help="environments to run (default: all)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that creates the venvs")
    parser.add_argument("--rebuild", action="store_true", help="build every venv afresh, even one whose pins did not change")
    parser.add_argument("--pytest", default="", help="extra pytest arguments, e.g. '-k widgets'")
    args = parser.parse_args(argv)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    oldest_extra = pyproject.get("tool", {}).get("course", {}).get("oldest-also", {})
    known = environments(read_pins(), supported_ranges(), {canonical(k): v for k, v in oldest_extra.items()})
    unknown = [name for name in args.envs if name not in known]
    if unknown:
        parser.error(f"unknown environment(s) {unknown}; known: {list(known)}")
    results = {}
    names = args.envs or list(known)
    for name in [name for name in names if known[name].upgrade]:
        result = already_tested(known[name], args.python, not args.rebuild)
        if result:
            results[name] = result
            print(f"[{name}] {known[name].purpose}: {result['outcome']}", flush=True)
    for batch in batches([name for name in names if name not in results]):
        workers = backend_matrix.workers_each(len(batch))
        for name in batch:
            print(f"[{name}] {known[name].purpose}: installing and testing (log: build/versions/{name}.log"
                  + (f"; at once with {', '.join(n for n in batch if n != name)})" if len(batch) > 1 else ")"), flush=True)
        with concurrent.futures.ThreadPoolExecutor(len(batch)) as pool:
            runs = {pool.submit(run, known[name], args.python, not args.rebuild, args.pytest.split(), workers): name
                    for name in batch}
            for done in concurrent.futures.as_completed(runs):
                results[runs[done]] = done.result()
                print(f"[{runs[done]}] {results[runs[done]]['outcome']}", flush=True)
    print("\n" + summary({name: results[name] for name in args.envs or list(known)}))
    return 0 if all(result["ok"] for result in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
