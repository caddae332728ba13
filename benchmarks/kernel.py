"""Running notebooks in fresh kernels for the benchmark: wall time, peak memory, the
floor kernel, and the in-kernel widget sweep (benchmarks/widget_sweep.py), with a guard
against the intermittent lost-request hang of nbclient and ipykernel."""
from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import platform
import re
import subprocess
import tempfile
import time
from pathlib import Path

from scripts.execute_notebooks import notebook_client  # the executor the course saves with

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SWEEP_MODULE = Path(__file__).resolve().parent / "widget_sweep.py"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FLOOR_LIBRARIES = ("numpy", "matplotlib", "matplotlib.figure", "torch", "ipywidgets")


def parse_vmhwm(status: str) -> int:
    """Peak resident set size in bytes, from the text of /proc/<pid>/status."""
    match = re.search(r"^VmHWM:\s+(\d+)\s+kB\s*$", status, flags=re.MULTILINE)
    if not match:
        raise ValueError("status has no 'VmHWM: <n> kB' line; pass the text of /proc/<pid>/status")
    return int(match.group(1)) * 1024


def resolve_notebooks(names, folder: Path = NOTEBOOKS) -> list[Path]:
    """Paths of the notebooks to run: all ``NN_*.ipynb`` in ``folder`` when ``names`` is
    empty; otherwise each name is a path, a file name in ``folder``, or a prefix such as
    ``03`` or ``03_matrix``."""
    if not names:
        return sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    paths = []
    for name in names:
        path = Path(name)
        if path.is_file():
            paths.append(path.resolve())
            continue
        matches = sorted(folder.glob(f"{Path(name).stem}*.ipynb"))
        if len(matches) != 1:
            found = ", ".join(m.name for m in matches) or "none"
            raise ValueError(f"notebook {name!r} must name exactly one notebook in {folder}, found: {found}")
        paths.append(matches[0])
    return paths


def _peak_bytes(pid: int) -> int:
    """VmHWM of ``pid`` plus that of its live descendants."""
    import psutil

    total = parse_vmhwm(Path(f"/proc/{pid}/status").read_text())
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        children = []
    for child in children:
        try:
            total += parse_vmhwm(Path(f"/proc/{child.pid}/status").read_text())
        except (OSError, ValueError):
            pass  # it ended meanwhile
    return total


def _floor_source() -> str:
    modules = list(FLOOR_LIBRARIES) + sorted(
        f"utils.{p.stem}" for p in (ROOT / "utils").glob("*.py") if p.stem != "__init__")
    return ("import importlib\n_failed = []\n"
            f"for _name in {modules!r}:\n"
            "    try:\n        importlib.import_module(_name)\n"
            "    except Exception as _error:\n        _failed.append(f'{_name}: {_error}')\n"
            "print('floor import failures:', _failed)\n")


# After the floor's memory is read: the cheapest LivePlot there is (one line on axes it
# keeps, fixed margins), so the widget table can say how much of a redraw is the widget's
# own cost rather than the panel's (emptying the axes, rendering the SVG, display).
REDRAW_FLOOR = """
import ipywidgets as _w
from utils.plotting import _use_fixed_margins
from utils.widgets import LivePlot as _LivePlot
def one_line_plot(fig, n):
    ax = fig.subplots()
    _use_fixed_margins(fig)
    ax.plot(range(n))
    return f"n = {n}"
_floor_panel = _LivePlot(one_line_plot, {"n": _w.IntSlider(value=2, min=2, max=10)})
"""


def _sweep_source(result_path: str) -> str:
    return ("import importlib.util as _u\n"
            f"_spec = _u.spec_from_file_location('_benchmark_widget_sweep', {str(SWEEP_MODULE)!r})\n"
            "_sweep = _u.module_from_spec(_spec)\n_spec.loader.exec_module(_sweep)\n"
            f"_sweep.measure_all({result_path!r})\n")


class Stalled(Exception):
    """The kernel sat idle while a cell was still waiting for its reply."""


async def _watch_cpu(pid: int, stall_seconds: float) -> None:
    """Return once the kernel has used no CPU for ``stall_seconds``.

    A running cell always uses CPU; an idle kernel with a cell still pending is the
    intermittent lost-request hang of ipykernel 7 (the kernel never sees the execute
    request; compare ipython/ipykernel#1529, jupyter/nbclient#312), which would otherwise
    wait out the whole cell timeout.
    """
    import psutil

    process = psutil.Process(pid)
    used, since = None, time.monotonic()
    while True:
        await asyncio.sleep(1.0)
        times = process.cpu_times()
        now = times.user + times.system + times.children_user + times.children_system
        if now != used:
            used, since = now, time.monotonic()
        elif time.monotonic() - since > stall_seconds:
            return


async def _guarded(coroutine, pid: int, stall_seconds: float):
    """Await ``coroutine``; raise Stalled if the kernel goes idle meanwhile."""
    work = asyncio.ensure_future(coroutine)
    watch = asyncio.ensure_future(_watch_cpu(pid, stall_seconds))
    await asyncio.wait({work, watch}, return_when=asyncio.FIRST_COMPLETED)
    if work.done():
        watch.cancel()
        return work.result()
    work.cancel()
    try:
        await work
    except BaseException:  # nbclient turns the cancellation into DeadKernelError
        pass
    raise Stalled


async def _run_kernel(notebook, cwd: Path, timeout: int, stall_seconds: float, sweep: bool,
                      before_sweep: str = "") -> dict:
    """Execute ``notebook`` (an nbformat node) in a fresh kernel; measure it; then, with
    ``sweep``, run ``before_sweep`` and time every LivePlot of the kernel. Raises Stalled
    (with the cell) when the kernel goes idle with a cell pending."""
    import nbformat

    client = notebook_client(notebook, cwd, timeout, extra_arguments=["--IPKernelApp.log_level=ERROR"])
    result = {"error": None}
    start = time.perf_counter()
    where = {"cell": "the kernel_info request"}

    async def cells():
        await client.async_wait_for_reply(await _ensure(client.kc.kernel_info()))
        for index, cell in enumerate(notebook.cells):
            where["cell"] = f"In [{client.code_cells_executed + 1}]"
            await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)

    # The kernel's own log (not the cells' output, which nbclient captures) would only add
    # shutdown noise from zmq here.
    async with client.async_setup_kernel(stderr=subprocess.DEVNULL):
        pid = client.km.provisioner.process.pid
        try:
            await _guarded(cells(), pid, stall_seconds)
        except Stalled:
            raise Stalled(f"cell {where['cell']}") from None
        except Exception as error:  # a failing cell, a cell timeout, a dead kernel: report, go on
            result["error"] = _last_line(error)
        result["seconds"] = time.perf_counter() - start
        try:
            result["peak_bytes"] = _peak_bytes(pid)
        except (OSError, ValueError):  # the kernel died
            result["peak_bytes"] = None
        if sweep and result["error"] is None:
            with tempfile.TemporaryDirectory() as folder:
                path = os.path.join(folder, "sweep.json")
                cell = nbformat.v4.new_code_cell(before_sweep + _sweep_source(path))
                notebook.cells.append(cell)
                try:
                    await _guarded(client.async_execute_cell(cell, len(notebook.cells) - 1), pid, stall_seconds)
                    with open(path, encoding="utf-8") as handle:
                        result["panels"] = json.load(handle)
                except Stalled:
                    raise Stalled("the widget sweep") from None
                except Exception as error:
                    result["sweep_error"] = _last_line(error)
                finally:
                    notebook.cells.pop()
    if sweep:
        result["panel_cells"] = _panel_cells(notebook)
    return result


def _with_retries(make_notebook, cwd: Path, options, label: str, **kwargs) -> dict:
    """Run in a fresh kernel; after a stall, start over in another fresh kernel."""
    stalls = []
    for attempt in range(options.retries + 1):
        notebook = make_notebook()
        try:
            result = asyncio.run(_run_kernel(notebook, cwd, options.timeout, options.stall, **kwargs))
        except Stalled as stall:
            stalls.append(str(stall))
            again = "starting again in a fresh kernel" if attempt < options.retries else "giving up"
            print(f"  {label}: kernel idle for {options.stall:.0f} s with {stall} pending "
                  f"(taken as a lost request); {again}", flush=True)
            continue
        result["stalls"] = stalls
        result["notebook"] = notebook
        return result
    return {"error": f"the kernel hung in every attempt ({', '.join(stalls)})", "seconds": float("nan"),
            "peak_bytes": None, "stalls": stalls}


def _last_line(error: Exception) -> str:
    lines = re.sub(r"\x1b\[[0-9;]*m", "", str(error)).strip().splitlines() or [type(error).__name__]
    return lines[-1][:300]


async def _ensure(value):
    return await value if asyncio.iscoroutine(value) else value


def _panel_cells(notebook) -> dict:
    """Which cell (its execution count, ``In [n]``) shows each widget, by its model id."""
    where = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                where.setdefault(view.get("model_id"), cell.get("execution_count"))
    return where


def run_notebook(path: Path, options) -> dict:
    """One measured run of the notebook at ``path``, widget sweep included."""
    import nbformat

    result = _with_retries(lambda: nbformat.read(path, as_version=4), path.parent, options, path.name, sweep=True)
    result.pop("notebook", None)
    return result


def run_floor(options) -> dict:
    """One run of the floor kernel: imports only, then the redraw floor's sweep."""
    import nbformat

    def make():
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_floor_source())])

    result = _with_retries(make, NOTEBOOKS, options, "floor", sweep=True, before_sweep=REDRAW_FLOOR)
    notebook = result.pop("notebook", None)
    outputs = notebook.cells[0].get("outputs", []) if notebook else []
    result["import_failures"] = "".join(o.get("text", "") for o in outputs).strip()
    return result


def machine() -> dict:
    """What the numbers were measured on."""
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    ram = parse_meminfo_total(Path("/proc/meminfo").read_text())

    def version(package):
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)),
            "ram_gb": ram / 1e9, "python": platform.python_version(), "torch": version("torch"),
            "numpy": version("numpy"), "matplotlib": version("matplotlib"),
            "ipywidgets": version("ipywidgets"), "platform": platform.platform()}


def parse_meminfo_total(meminfo: str) -> int:
    """Total RAM in bytes, from the text of /proc/meminfo."""
    match = re.search(r"^MemTotal:\s+(\d+)\s+kB", meminfo, flags=re.MULTILINE)
    if not match:
        raise ValueError("meminfo has no 'MemTotal: <n> kB' line; pass the text of /proc/meminfo")
    return int(match.group(1)) * 1024

