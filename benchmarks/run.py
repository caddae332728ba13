#!/usr/bin/env python
"""Time, memory and widget latency of every notebook, against the course's targets.

    make benchmark                                 # every notebook, 3 runs each
    .venv/bin/python benchmarks/run.py --quick     # 1 run each, for development
    .venv/bin/python benchmarks/run.py 03 06_thirty_layers.ipynb --runs 5

Each run executes a notebook from a fresh kernel (working directory notebooks/, one
BLAS/torch thread as under the tests; the notebook is not saved) and records:

- wall time, from starting the kernel to the end of the last cell (what the execute
  script prints);
- peak resident memory of the kernel: VmHWM from /proc/<pid>/status read when the last
  cell ends (the kernel's true high-water mark), plus the VmHWM of any child process still
  alive then; compared with the floor, a fresh kernel that imports the same libraries
  (numpy, matplotlib, torch, ipywidgets, every utils module) and does nothing;
- widget latency: then, in the same kernel, every control of every
  ``utils.widgets.LivePlot`` is moved across its settings (benchmarks/widget_sweep.py)
  and each move, which redraws synchronously, is timed.

A kernel that sits idle (no CPU) for --stall seconds while a cell waits for its reply has
lost the request (an intermittent nbclient/ipykernel hang); that run starts again in a
fresh kernel (--retries), and the report says so.

Results are the median and the spread (min-max) over the runs, with a pass/miss column
against the targets, written as markdown to benchmarks/RESULTS.md. A benchmark reports,
it never asserts: misses are printed, and the exit status is 0.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.metadata
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SWEEP_MODULE = Path(__file__).resolve().parent / "widget_sweep.py"
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
sys.path.insert(0, str(ROOT / "scripts"))
from execute_notebooks import THREAD_VARIABLES, notebook_client  # noqa: E402  the executor the course saves with
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MB = 1_000_000  # targets are in MB (10^6 bytes)
FLOOR_LIBRARIES = ("numpy", "matplotlib", "matplotlib.figure", "torch", "ipywidgets")


# ---------------------------------------------------------------- pure helpers (tested)

@dataclass(frozen=True)
class Summary:
    """Median and spread of repeated measurements."""
    median: float
    low: float
    high: float
    count: int


def summarize(values) -> Summary:
    """Median, min and max of ``values`` (at least one number)."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("values must hold at least one measurement, got none")
    return Summary(statistics.median(values), min(values), max(values), len(values))


def scaled(summary: Summary, factor: float) -> Summary:
    """``summary`` in other units (seconds to ms: ``factor=1000``)."""
    return Summary(summary.median * factor, summary.low * factor, summary.high * factor, summary.count)


def format_summary(summary: Summary, digits: int = 1) -> str:
    """``"12.3 (11.9-13.0)"``: median, then the spread; just the median for one run; a dash
    for no measurement (NaN)."""
    if summary.median != summary.median:
        return "–"
    if summary.count == 1 or summary.low == summary.high:
        return f"{summary.median:.{digits}f}"
    return f"{summary.median:.{digits}f} ({summary.low:.{digits}f}–{summary.high:.{digits}f})"


@dataclass(frozen=True)
class Targets:
    """What one notebook is held to."""
    seconds: float
    megabytes: float
    widget_default_seconds: float
    widget_extreme_seconds: float = 3.0


def notebook_number(name: str) -> int:
    """The ``NN`` of ``NN_short_name.ipynb``."""
    match = re.match(r"(\d\d)_", Path(name).name)
    if not match:
        raise ValueError(f"name must look like NN_short_name.ipynb, got {name!r}")
    return int(match.group(1))


def targets_for(name: str) -> Targets:
    """Targets of a notebook: 20 s and 400 MB for 00-07, 60 s and 500 MB from 08 on
    (training); a widget update within 100 ms at default settings (300 ms in the
    transformer notebooks, 10 and 11) and within 3 s at its most extreme setting."""
    number = notebook_number(name)
    if number <= 7:
        return Targets(seconds=20.0, megabytes=400.0, widget_default_seconds=0.100)
    return Targets(seconds=60.0, megabytes=500.0,
                   widget_default_seconds=0.300 if number >= 10 else 0.100)


def verdict(value: float, limit: float) -> str:
    """``"pass"`` when ``value`` is at most ``limit``, else ``"miss"``."""
    return "pass" if value <= limit else "miss"


def parse_vmhwm(status: str) -> int:
    """Peak resident set size in bytes, from the text of /proc/<pid>/status."""
    match = re.search(r"^VmHWM:\s+(\d+)\s+kB\s*$", status, flags=re.MULTILINE)
    if not match:
        raise ValueError("status has no 'VmHWM: <n> kB' line; pass the text of /proc/<pid>/status")
    return int(match.group(1)) * 1024


def markdown_table(headers, rows) -> str:
    """A GitHub markdown table; ``|`` inside a cell is escaped."""
    headers = [str(h) for h in headers]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        cells = [str(cell).replace("|", "\\|") for cell in row]
        if len(cells) != len(headers):
            raise ValueError(f"row must have {len(headers)} cells like headers, got {len(cells)}: {row!r}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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


# ---------------------------------------------------------------- measuring

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
from utils.plotting import reuse_axes as _reuse_axes, use_fixed_margins as _use_fixed_margins
from utils.widgets import LivePlot as _LivePlot
def _one_axes(fig):
    _use_fixed_margins(fig)
    return fig.subplots()
def one_line_plot(fig, n):
    _reuse_axes(fig, _one_axes).plot(range(n))
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


# ---------------------------------------------------------------- collecting the runs

def widget_rows(name: str, runs: list[dict]) -> list[dict]:
    """Pool the widget sweeps of all runs of one notebook: one entry per control."""
    pooled: dict[tuple, dict] = {}
    for run in runs:
        cells = run.get("panel_cells", {})
        counts: dict[tuple, int] = {}
        for panel in sorted(run.get("panels", []), key=lambda p: (cells.get(p["model_id"], 10**6), p["draw"])):
            cell = cells.get(panel["model_id"])
            nth = counts[(cell, panel["draw"])] = counts.get((cell, panel["draw"]), 0) + 1
            label = f"{panel['draw']}, In [{cell}]" if cell else f"{panel['draw']}, not shown"
            if nth > 1:
                label += f" #{nth}"
            for control in panel["controls"]:
                key = (cell if cell else 10**6, label, control["control"])
                entry = pooled.setdefault(key, {"notebook": name, "widget": label, "control": control["control"],
                                                "default": control.get("default"), "default_seconds": [],
                                                "moves": [], "notes": set()})
                entry["default_seconds"] += control.get("default_seconds", [])
                entry["moves"] += control.get("moves", [])
                entry["default_is_extreme"] = control.get("default_is_extreme", False)
                for note in ("skipped", "error"):
                    if control.get(note):
                        entry["notes"].add(control[note])
    return [pooled[key] for key in sorted(pooled)]


def judge_widget(entry: dict, targets: Targets) -> dict:
    """Summaries and verdicts of one control (from ``widget_rows``)."""
    everything = entry["default_seconds"] + [m["seconds"] for m in entry["moves"]]
    if not everything:
        return {"default": None, "all": None, "worst": None, "extreme": None, "misses": []}
    default = summarize(entry["default_seconds"]) if entry["default_seconds"] else None
    worst_move = max(entry["moves"], key=lambda m: m["seconds"], default=None)
    worst = (worst_move["seconds"], worst_move["value"]) if worst_move else (None, None)
    if default and default.high > (worst[0] or 0):
        worst = (default.high, entry["default"])
    extremes = [(m["seconds"], m["value"]) for m in entry["moves"] if m["extreme"]]
    if entry.get("default_is_extreme") and entry["default_seconds"]:
        extremes.append((max(entry["default_seconds"]), entry["default"]))
    extreme = max(extremes) if extremes else None
    misses = []
    if default and default.median > targets.widget_default_seconds:
        misses.append(f"median at default {default.median * 1000:.0f} ms > "
                      f"{targets.widget_default_seconds * 1000:.0f} ms "
                      f"(+{(default.median - targets.widget_default_seconds) * 1000:.0f} ms)")
    if worst[0] is not None and worst[0] > targets.widget_extreme_seconds:
        misses.append(f"{worst[0]:.2f} s at {worst[1]} > {targets.widget_extreme_seconds:.0f} s "
                      f"(+{worst[0] - targets.widget_extreme_seconds:.2f} s)")
    for note in sorted(entry["notes"]):
        misses.append(note)
    return {"default": default, "all": summarize(everything), "worst": worst, "extreme": extreme,
            "misses": misses}


def _ms(seconds) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.0f}"


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


def redraw_floor(floor: dict) -> Summary | None:
    """All redraw times of the floor kernel's one-line LivePlot, summarized (seconds)."""
    times = []
    for run in floor["runs"]:
        for panel in run.get("panels", []):
            for control in panel["controls"]:
                times += control.get("default_seconds", []) + [m["seconds"] for m in control.get("moves", [])]
    return summarize(times) if times else None


def build_report(results: dict, floor: dict, info: dict, runs: int, started: str, load: tuple) -> tuple[str, list[str]]:
    """The markdown of RESULTS.md and the list of misses."""
    floor_peak = summarize([r["peak_bytes"] / MB for r in floor["runs"] if r.get("peak_bytes")] or [float("nan")])
    floor_time = summarize([r["seconds"] for r in floor["runs"]])
    misses: list[str] = []
    rows = []
    for name, runs_of in results.items():
        targets = targets_for(name)
        errors = [r["error"] for r in runs_of if r.get("error")]
        times = [r["seconds"] for r in runs_of if r["seconds"] == r["seconds"]]  # not NaN (hung every time)
        seconds = summarize(times or [float("nan")])
        peaks = [r["peak_bytes"] / MB for r in runs_of if r.get("peak_bytes")]
        peak = summarize(peaks or [float("nan")])
        time_ok = verdict(seconds.median, targets.seconds) if times else "–"
        memory_ok = verdict(peak.median, targets.megabytes) if peaks else "–"
        if errors:
            misses.append(f"{name}: ERROR while executing: {errors[0]}")
        if time_ok == "miss":
            misses.append(f"{name}: wall time {seconds.median:.1f} s > {targets.seconds:.0f} s "
                          f"(+{seconds.median - targets.seconds:.1f} s)")
        if memory_ok == "miss":
            misses.append(f"{name}: peak memory {peak.median:.0f} MB > {targets.megabytes:.0f} MB "
                          f"(+{peak.median - targets.megabytes:.0f} MB)")
        result = "error" if errors else ("pass" if time_ok == memory_ok == "pass" else "miss")
        rows.append([name, format_summary(seconds), f"{targets.seconds:.0f}", time_ok,
                     format_summary(peak, 0), f"{peak.median / floor_peak.median:.2f}" if peaks else "–",
                     f"{targets.megabytes:.0f}", memory_ok, result])
    widget_table, without_widgets = [], []
    for name, runs_of in results.items():
        targets = targets_for(name)
        entries = widget_rows(name, runs_of)
        if not entries and not any(r.get("error") or r.get("sweep_error") for r in runs_of):
            without_widgets.append(name)
        for entry in entries:
            judged = judge_widget(entry, targets)
            for miss in judged["misses"]:
                misses.append(f"{name} widget {entry['widget']} control {entry['control']}: {miss}")
            default, everything = judged["default"], judged["all"]
            worst, extreme = judged["worst"], judged["extreme"]
            widget_table.append([
                name, entry["widget"], entry["control"], entry["default"],
                _ms(default.median if default else None),
                f"{targets.widget_default_seconds * 1000:.0f}",
                _ms(everything.median if everything else None),
                f"{_ms(extreme[0])} at {extreme[1]}" if extreme else "–",
                f"{_ms(worst[0])} at {worst[1]}" if worst and worst[0] is not None else "–",
                "miss" if judged["misses"] else "pass",
            ])
        sweep_errors = {r["sweep_error"] for r in runs_of if r.get("sweep_error")}
        for error in sorted(sweep_errors):
            misses.append(f"{name}: widget sweep failed: {error}")

    lines = [
        "# Benchmark results",
        "",
        "Generated by `make benchmark` (`benchmarks/run.py`); do not edit by hand.",
        "",
        f"- Date: {started} UTC; {runs} run(s) of each notebook, each from a fresh kernel "
        "(working directory `notebooks/`, `OMP_NUM_THREADS=1`).",
        f"- Machine: {info['cpu']}, {info['cores']} cores ({info['usable_cores']} usable), "
        f"{info['ram_gb']:.1f} GB RAM; {info['platform']}.",
        f"- Software: Python {info['python']}, torch {info['torch']}, numpy {info['numpy']}, "
        f"matplotlib {info['matplotlib']}, ipywidgets {info['ipywidgets']}.",
        f"- Load average (1 min) at start and end: {load[0]:.2f} and {load[1]:.2f}. Other work on the "
        "machine inflates the times.",
        "",
        "## Notebooks",
        "",
        "Wall time runs from starting the kernel to the end of the last cell. Peak memory is the "
        "kernel's resident high-water mark (VmHWM, plus any live child process) in MB (10^6 bytes). "
        "Each figure is the median over the runs, with the spread (min–max) in brackets. "
        f"The floor is a fresh kernel that imports numpy, matplotlib, torch, ipywidgets and every "
        f"`utils` module and does nothing: {format_summary(floor_peak, 0)} MB, "
        f"{format_summary(floor_time)} s.",
        "",
        "Targets: 20 s and 400 MB for notebooks 00–05, 60 s and 500 MB for 06–08.",
        "",
    ]
    failures = {r.get("import_failures") for r in floor["runs"]} - {"floor import failures: []"}
    if failures:
        lines += [f"Floor note, imports that failed: {sorted(failures)}", ""]
    hangs = [f"{name} ({stall})" for name, runs_of in [("floor", floor["runs"])] + list(results.items())
             for r in runs_of for stall in r.get("stalls", [])]
    if hangs:
        lines += [f"Runs restarted because the kernel went idle with a cell pending (taken as an intermittent lost "
                  f"request between nbclient and ipykernel; the run that completed is the one measured): "
                  f"{'; '.join(hangs)}.", ""]
    lines += [markdown_table(["Notebook", "Time (s)", "Target (s)", "Time", "Peak (MB)", "× floor",
                              "Target (MB)", "Memory", "Result"], rows) if rows else "No notebooks found.", ""]
    lines += [
        "## Widgets",
        "",
        "Each control of each `utils.widgets.LivePlot` is moved, in the kernel that has just run the "
        "notebook, across its settings (sliders: min, max and the quarter points; choices: every "
        "option), back to the default after each setting. A move redraws synchronously, so its time "
        "is the time from the new value to the redrawn output. Times in ms, pooled over the runs. "
        "\"At default\" is the median of the moves back to the default; \"extreme\" the slowest of "
        "the ends of a slider (or of the options); \"worst\" the slowest move of all.",
        "",
        "Targets: median at default at most 100 ms (300 ms in notebook 08); every setting, the most "
        "extreme included, at most 3 s.",
        "",
    ]
    redraw = redraw_floor(floor)
    if redraw:
        lines += [f"Redraw floor: a LivePlot drawing one line on axes it keeps (empty them, draw, SVG, "
                  f"display) takes "
                  f"{format_summary(scaled(redraw, 1000), 0)} ms "
                  "(median, min–max), in the floor kernel; a notebook's widget cannot be faster.", ""]
    lines += [markdown_table(["Notebook", "Widget", "Control", "Default", "At default (ms)", "Target (ms)",
                              "Median, all (ms)", "Extreme (ms)", "Worst (ms)", "Result"], widget_table)
              if widget_table else "No LivePlot widgets found.", ""]
    if without_widgets:
        lines += [f"Notebooks without a LivePlot: {', '.join(without_widgets)}.", ""]
    lines += ["## Misses", ""]
    lines += [f"- {miss}" for miss in misses] if misses else ["None: every notebook and widget meets its targets."]
    lines.append("")
    return "\n".join(lines), misses


def _megabytes(measured: dict) -> str:
    return f"{measured['peak_bytes'] / MB:.0f}" if measured.get("peak_bytes") else "–"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", help="notebooks to run: paths, names or prefixes like 03 "
                                                      "(default: every notebooks/NN_*.ipynb)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each notebook (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run of each notebook (development)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds one cell may take (default 600)")
    parser.add_argument("--stall", type=float, default=30.0,
                        help="seconds of an idle kernel with a cell pending that count as a hang (default 30)")
    parser.add_argument("--retries", type=int, default=2, help="fresh-kernel retries of a run that hangs (default 2)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"markdown file to write (default {RESULTS})")
    args = parser.parse_args(argv)
    runs = 1 if args.quick else args.runs
    if runs < 1:
        parser.error(f"--runs must be at least 1, got {runs}")
    try:
        paths = resolve_notebooks(args.notebooks)
    except ValueError as error:
        parser.error(str(error))
    for variable in THREAD_VARIABLES:
        os.environ[variable] = "1"

    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    load_start = os.getloadavg()[0]
    print(f"benchmarking {len(paths)} notebook(s), {runs} run(s) each", flush=True)
    floor = {"runs": []}
    results: dict[str, list[dict]] = {}
    for run in range(runs):
        measured = run_floor(args)
        floor["runs"].append(measured)
        print(f"  floor, run {run + 1}: {measured['seconds']:.1f} s, {_megabytes(measured)} MB", flush=True)
    for path in paths:
        results[path.name] = []
        for run in range(runs):
            measured = run_notebook(path, args)
            results[path.name].append(measured)
            controls = sum(len(p["controls"]) for p in measured.get("panels", []))
            status = f"ERROR {measured['error']}" if measured.get("error") else "ok"
            seconds = format_summary(summarize([measured["seconds"]]))
            print(f"  {path.name}, run {run + 1}: {seconds} s, {_megabytes(measured)} MB, "
                  f"{controls} widget control(s) swept, {status}", flush=True)

    markdown, misses = build_report(results, floor, machine(), runs, started, (load_start, os.getloadavg()[0]))
    args.output.write_text(markdown, encoding="utf-8")
    print()
    print(markdown)
    print(f"written to {args.output}")
    if misses:
        print(f"\n*** {len(misses)} MISS(ES) ***")
        for miss in misses:
            print(f"  MISS  {miss}")
    else:
        print("\nall targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
