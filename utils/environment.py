"""Is this environment one the course is tested in? ``check()`` answers in sentences: versions
against the tested ranges (pyproject.toml's ``dependencies``, from the installed metadata, so on
Colab too), front end, threads, widgets; ``python -m utils.environment`` prints it (exit 1 on a
problem). It imports only the standard library and ``packaging``: a broken NumPy shows too."""
from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
import platform
import sys
from contextlib import suppress
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from .threads import _cores

__all__ = ["DISTRIBUTION", "TESTED_PYTHON", "IMPORT_NAMES", "NOT_A_KERNEL", "SCRIPT_KERNEL", "FRONT_ENDS",
           "NO_WIDGETS", "Report", "check"]

DISTRIBUTION = "residual-course-utils"
TESTED_PYTHON = "3.11"  # make test and make test-versions run Python 3.11 (binder/runtime.txt too)
IMPORT_NAMES = {"scikit-learn": "sklearn"}  # distribution name -> import name, where they differ
NOT_A_KERNEL = "a terminal, not a notebook"  # python -m utils.environment, pytest
SCRIPT_KERNEL = "a script, not a notebook app"  # nbclient, nbval: how the stored outputs are made
FRONT_ENDS = ("Colab", "Binder", "VS Code", "JupyterLab", SCRIPT_KERNEL, NOT_A_KERNEL)
NO_WIDGETS = "sliders will not appear; the static pictures below each widget show its default state"


def _tested_ranges() -> dict[str, Requirement]:
    """The tested ranges by distribution name (``dependencies``, as installed); {} without them."""
    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    return {r.name: r for r in map(Requirement, requires) if r.marker is None}


def _installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None if it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _detect_front_end(environ, modules, in_kernel: bool) -> str:
    """Which of FRONT_ENDS runs this kernel, from its environment variables and modules (a
    Jupyter server, JupyterLab or Notebook 7, sets ``JPY_SESSION_NAME``)."""
    if "google.colab" in modules or "COLAB_RELEASE_TAG" in environ:
        return "Colab"
    for prefix, front_end in (("BINDER_", "Binder"), ("VSCODE_", "VS Code")):
        if any(key.startswith(prefix) for key in environ):
            return front_end
    if not in_kernel:
        return NOT_A_KERNEL
    return "JupyterLab" if "JPY_SESSION_NAME" in environ else SCRIPT_KERNEL


def _describe_range(tested: Requirement) -> str:
    """A range as a reader says it: '1.26.4 to 2.4.6', or '2.13.0' for a single version."""
    bounds = {spec.operator: spec.version for spec in tested.specifier}
    return bounds.get("==") or f"{bounds.get('>=', 'any')} to {bounds.get('<=', 'newest')}"


def _version_problem(name: str, version: str | None, tested: Requirement, on_colab: bool = False) -> str | None:
    """The sentence for a library outside its tested range (None inside). On Colab it never
    advises another version: that breaks Colab's runtime."""
    if version is None:
        return f"{name} is not installed: the cells that use it will fail; install {name}{tested.specifier}."
    with suppress(InvalidVersion):  # a version packaging cannot read is outside every range
        if tested.specifier.contains(Version(version), prereleases=True):
            return None
    advice = (f"compare with the stored outputs, or use Binder (Colab's own {name} is best left as it is)"
              if on_colab else f"install {name}{tested.specifier}")
    return (f"{name} {version} is outside the tested range ({_describe_range(tested)}): if a cell fails or a printed "
            f"number differs from the text, {advice}.")


def _python_problem(version: str) -> str | None:
    """The sentence for a Python other than the tested one (None for the tested one)."""
    return None if ".".join(version.split(".")[:2]) == TESTED_PYTHON else (
        f"Python {version} is not the tested {TESTED_PYTHON}: if a cell fails, use Python {TESTED_PYTHON} "
        "(make lab with it, or Binder).")


def _widget_problems(ipywidgets: str | None, front_end: str, lab_widgets: str | None) -> list[str]:
    """Why widgets cannot work here, a sentence each, from the versions installed (or None)."""
    if ipywidgets is None:
        return [f"ipywidgets is not installed: {NO_WIDGETS}."]
    major = Version(ipywidgets).major
    if major < 7:
        return [f"ipywidgets {major} found: {NO_WIDGETS}."]
    problems = []
    if front_end == "Colab" and major >= 8:
        problems.append(f"ipywidgets {ipywidgets} on Colab, whose widget manager is built for 7.7: {NO_WIDGETS}; "
                        "use Colab's own ipywidgets (Runtime > Disconnect and delete runtime, then run again).")
    if front_end in ("JupyterLab", "Binder") and major >= 8 and lab_widgets and Version(lab_widgets).major < 3:
        problems.append(f"ipywidgets {ipywidgets} needs JupyterLab's widget extension jupyterlab_widgets 3, "
                        f"found {lab_widgets}: {NO_WIDGETS}; install jupyterlab_widgets>=3 and reload the page.")
    return problems


def _import_problem(name: str) -> str | None:
    try:
        importlib.import_module(IMPORT_NAMES.get(name, name))
    except Exception as error:  # a broken install shows as any error at import
        return f"{name} is installed but does not import ({type(error).__name__}: {error}): reinstall it."
    return None


def _threads() -> str:
    torch = sys.modules.get("torch")
    if not torch:
        return f"{_cores()} CPU cores here (PyTorch is not loaded yet)"
    variable = os.environ.get("OMP_NUM_THREADS")
    return (f"PyTorch computes on {torch.get_num_threads()} of the {_cores()} CPU cores here"
            + (f" (the setting OMP_NUM_THREADS={variable} asks for that)" if variable else ""))


@dataclass
class Report:
    """What ``check`` found: a line per library, the front end, threads, widgets, problems."""

    lines: list[str]
    front_end: str
    threads: str
    widgets: str
    problems: list[str]

    def verdict(self) -> str:
        """One line when all is well, the same on every supported machine; else each problem."""
        if not self.problems:
            return "Environment check: no problems found; every version is inside the tested range."
        count = f"{len(self.problems)} problem{'s' if len(self.problems) > 1 else ''}"
        return "\n".join([f"Environment check: {count} found."] + [f"- {p}" for p in self.problems])

    def details(self) -> str:
        """Versions, front end, threads and widgets: these differ from machine to machine."""
        return "\n".join([*self.lines, f"running in: {self.front_end}", f"CPU: {self.threads}",
                          f"widgets: {self.widgets}"])

    def __str__(self) -> str:
        return f"{self.verdict()}\n\n{self.details()}"


def check() -> Report:
    """Check this environment against the course's tested versions; see the module docstring."""
    ranges = _tested_ranges()
    shell = sys.modules["IPython"].get_ipython() if "IPython" in sys.modules else None
    front_end = _detect_front_end(os.environ, sys.modules, in_kernel=hasattr(shell, "kernel"))
    python = platform.python_version()
    lines, problems = [f"Python {python} (tested: {TESTED_PYTHON})"], [_python_problem(python)]
    if not ranges:
        problems.append(f"the course package ({DISTRIBUTION}) is not installed, so its tested ranges are "
                        "unknown: run `pip install -e .` in the course folder (make lab does).")
    for name, tested in ranges.items():
        version = _installed_version(name)
        lines.append(f"{name} {version or 'missing'} (tested: {_describe_range(tested)})")
        problem = _version_problem(name, version, tested, on_colab=front_end == "Colab")
        problems.append(problem if problem or version is None else _import_problem(name))
    ipywidgets, lab_widgets = _installed_version("ipywidgets"), _installed_version("jupyterlab_widgets")
    found = _widget_problems(ipywidgets, front_end, lab_widgets)
    problems += found
    widgets = ("will not work here (see above)" if found
               else f"only in a notebook (ipywidgets {ipywidgets} is ready)" if front_end == NOT_A_KERNEL
               else f"can work here (ipywidgets {ipywidgets})")
    return Report(lines, front_end, _threads(), widgets, [p for p in problems if p])


if __name__ == "__main__":
    report = check()
    print(report)
    sys.exit(1 if report.problems else 0)
