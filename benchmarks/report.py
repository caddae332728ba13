"""The benchmark's numbers turned into verdicts and markdown (pure helpers, tested in
tests/test_benchmark.py): summaries of repeated measurements, the course's targets, the
kernel-side tables and the browser's end-to-end table of benchmarks/RESULTS.md."""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from pathlib import Path

MB = 1_000_000  # targets are in MB (10^6 bytes)

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
        "Targets: 20 s and 400 MB for notebooks 00–07, 60 s and 500 MB from 08 on.",
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
        "Targets: median at default at most 100 ms (300 ms in notebooks 10 and 11); every setting, the most "
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




# ---------------------------------------------------------------- the browser part

BROWSER_MEDIAN_RATIO = 1.5  # a LivePlot's end-to-end median at most this times the floor's
BROWSER_P90_RATIO = 2.0  # and its 90th percentile at most this times the floor's
HEAVIEST_SECONDS = 3.0  # a jump to a slider's end, busy status shown


def percentile(values, fraction: float) -> float:
    """The ``fraction`` quantile of ``values`` (linear between order statistics; 0.5 is the
    median); NaN for no values."""
    values = sorted(float(v) for v in values)
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction}")
    if not values:
        return float("nan")
    position = fraction * (len(values) - 1)
    low = int(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def judge_browser_widget(moves: list[dict], floor: list[dict]) -> dict:
    """End-to-end numbers and verdict of one LivePlot against the floor of the same run:
    median and p90 of its steps (jumps to a slider's end apart), their ratios to the floor's
    median and p90, the in-kernel and decoding medians, the slowest jump and whether every
    jump showed the busy status."""
    steps = [m for m in moves if not m.get("jump")]
    jumps = [m for m in moves if m.get("jump")]
    floor_ms = [m["ms"] for m in floor]
    median, p90 = percentile([m["ms"] for m in steps], 0.5), percentile([m["ms"] for m in steps], 0.9)
    floor_median, floor_p90 = percentile(floor_ms, 0.5), percentile(floor_ms, 0.9)
    kernel = [m["kernel_ms"] for m in steps if m.get("kernel_ms") is not None]
    judged = {"moves": len(steps), "median": median, "p90": p90,
              "median_ratio": median / floor_median if floor_ms else float("nan"),
              "p90_ratio": p90 / floor_p90 if floor_ms else float("nan"),
              "kernel_median": percentile(kernel, 0.5), "kept": sum(bool(m.get("kept")) for m in steps),
              "decode_median": percentile(
                  [m["decode_ms"] for m in steps if m.get("decode_ms") is not None], 0.5),
              "heaviest": max(jumps, key=lambda m: m["ms"], default=None),
              "busy_shown": all(m.get("busy") for m in jumps), "misses": []}
    if not steps:
        judged["misses"].append("no move was timed")
    if not judged["median_ratio"] <= BROWSER_MEDIAN_RATIO:
        judged["misses"].append(f"median {median:.0f} ms is {judged['median_ratio']:.2f}x the floor "
                                f"(> {BROWSER_MEDIAN_RATIO}x)")
    if not judged["p90_ratio"] <= BROWSER_P90_RATIO:
        judged["misses"].append(f"p90 {p90:.0f} ms is {judged['p90_ratio']:.2f}x the floor's "
                                f"(> {BROWSER_P90_RATIO}x)")
    heaviest = judged["heaviest"]
    if heaviest and heaviest["ms"] > HEAVIEST_SECONDS * 1000:
        judged["misses"].append(f"{heaviest['what']} took {heaviest['ms'] / 1000:.1f} s (> {HEAVIEST_SECONDS:.0f} s)")
    if jumps and not judged["busy_shown"]:
        judged["misses"].append("a jump to a slider's end did not show the busy status")
    return judged


def browser_report(results: dict) -> tuple[str, list[str]]:
    """The markdown section of the browser part and its misses."""
    floor = results.get("floor", [])
    lines = [BROWSER_HEADING, ""]
    misses = list(results.get("errors", []))
    if not floor:
        lines += ["Not measured: " + ("; ".join(misses) or "no floor"), ""]
        return "\n".join(lines), misses
    floor_ms = [m["ms"] for m in floor]
    floor_kernel = [m["kernel_ms"] for m in floor if m.get("kernel_ms") is not None]
    lines += [
        "Every `utils.widgets.LivePlot` of every notebook, in JupyterLab in headless Chromium after "
        "\"Run All\": each enabled slider stepped from the keyboard (one warm-up step, then the timed "
        "ones) and each dropdown switched, timed in the page from the input event (key or choice) until "
        "the new picture has decoded (`img.decode()` after its `src` changed). The floor, in the same "
        "browser and server, is a bare ipywidgets `Image` under a slider, redrawn on each step with a small "
        "one-line PNG (60 dpi, a new matplotlib figure each time): "
        f"{percentile(floor_ms, 0.5):.0f} ms median, {percentile(floor_ms, 0.9):.0f} ms p90 over "
        f"{len(floor_ms)} steps ({percentile(floor_kernel, 0.5):.0f} ms of it in the kernel). "
        "In-kernel is the LivePlot's own time for the same steps (`last_seconds`: sending a picture drawn "
        "ahead, or drawing a new one); \"drawn ahead\" counts the steps whose picture the kernel had drawn "
        "in the background while the page showed the previous one (`utils/pictures.py`; steps are "
        f"{results.get('look_ms', '?')} ms apart, plus two short kernel requests that read these numbers). The kernel part "
        "above gives the time to draw each picture from scratch. "
        "\"Heaviest\" is the slowest jump of a slider to its end (\"End\" key, e.g. depth 1000) or back "
        "(\"Home\"), with whether the busy status showed.",
        "",
        f"Targets: median at most {BROWSER_MEDIAN_RATIO}x the floor's median, p90 at most "
        f"{BROWSER_P90_RATIO}x the floor's p90, the heaviest setting under {HEAVIEST_SECONDS:.0f} s with the "
        "busy status shown. Ratios compare numbers of one run; the absolute times move with the machine's load.",
        "",
    ]
    rows = []
    for name, plots in results.get("notebooks", {}).items():
        for plot in plots:
            moves = plot["moves"]
            judged = judge_browser_widget(moves, floor)
            draws = sorted({m["draw"] for m in moves if m.get("draw")})
            widget = f"{', '.join(draws) or 'LivePlot'} (LivePlot {plot['index'] + 1})"
            controls = ", ".join(dict.fromkeys(m["control"] or m["kind"] for m in moves))
            heaviest = judged["heaviest"]
            rows.append([name, widget, controls, judged["moves"], f"{judged['median']:.0f}",
                         f"{judged['p90']:.0f}", f"{judged['median_ratio']:.2f}", f"{judged['p90_ratio']:.2f}",
                         f"{judged['kernel_median']:.0f}", f"{judged['kept']} of {judged['moves']}",
                         f"{judged['decode_median']:.0f}",
                         (f"{heaviest['ms']:.0f} ({'busy shown' if judged['busy_shown'] else 'NO busy status'})"
                          if heaviest else "–"),
                         "miss" if judged["misses"] else "pass"])
            misses += [f"{name} {widget}: {miss}" for miss in judged["misses"]]
    lines += [markdown_table(["Notebook", "Widget", "Controls", "Moves", "End to end, median (ms)", "p90 (ms)",
                              "× floor (median)", "× floor (p90)", "In-kernel median (ms)", "Drawn ahead",
                              "Decode median (ms)",
                              "Heaviest (ms)", "Result"], rows) if rows else "No LivePlot found.", ""]
    lines += ["Browser misses:", ""] + ([f"- {miss}" for miss in misses] or ["None."]) + [""]
    return "\n".join(lines), misses


BROWSER_HEADING = "## Widgets in the browser, end to end"


SITE_HEADING = "## The course site"
SITE_LIMITS = {"seconds": 60, "bytes": 100e6, "page_bytes": 10e6}  # issue 25: a minute, 100 MB, 10 MB a page


def quiet_seconds(phases: dict, cores: int) -> float:
    """A build's wall time on a quiet machine, from its steps' CPU seconds (what a shared machine
    cannot inflate much): the pictures' drawing processes spread over ``cores``, everything else
    (the build's own process, Sphinx) counted as if it ran on one core."""
    pool = phases["pictures"]["cpu_seconds"] - phases["pictures"]["own_cpu_seconds"]
    return sum(phase["cpu_seconds"] for phase in phases.values()) - pool + pool / max(1, cores)


def site_report(site: dict) -> tuple[str, list[str]]:
    """The section of RESULTS.md on ``make site`` (what scripts/build_site.py's build returns,
    with ``runs`` of cold builds from benchmarks/site_build.py if measured so) and its misses
    against SITE_LIMITS."""
    page, page_bytes = max(site["pages"].items(), key=lambda item: item[1])
    runs = site.get("runs", [])
    wall = (format_summary(summarize([run["wall_seconds"] for run in runs]), 0) + " s") if runs else f"{site['seconds']:.0f} s"
    rows = [("build time" + (f", cold, median of {len(runs)}" if runs else ""), wall, f"{SITE_LIMITS['seconds']} s",
             site["seconds"], SITE_LIMITS["seconds"]),
            ("whole site", f"{site['bytes'] / MB:.1f} MB", f"{SITE_LIMITS['bytes'] / 1e6:.0f} MB", site["bytes"], SITE_LIMITS["bytes"]),
            (f"largest page ({page})", f"{page_bytes / MB:.2f} MB", f"{SITE_LIMITS['page_bytes'] / 1e6:.0f} MB",
             page_bytes, SITE_LIMITS["page_bytes"])]
    # The target (a minute on a quiet machine) judged from CPU seconds too: on a shared machine
    # the wall time above says more about the other users than about the build.
    if site.get("phases"):
        quiet = quiet_seconds(site["phases"], site.get("cores", 1))
        rows.insert(1, ("build time on a quiet machine, from CPU-s (last cold build)", f"{quiet:.0f} s",
                        f"{SITE_LIMITS['seconds']} s", quiet, SITE_LIMITS["seconds"]))
    if site.get("rebuild"):
        rebuild = site["rebuild"]
        quiet = quiet_seconds(rebuild["phases"], site.get("cores", 1))
        rows.insert(2, ("rebuild, nothing changed, on a quiet machine, from CPU-s",
                        f"{quiet:.0f} s ({rebuild['wall_seconds']:.0f} s wall, {rebuild['cpu_seconds']:.0f} CPU-s)",
                        f"{SITE_LIMITS['seconds']} s", quiet, SITE_LIMITS["seconds"]))
    misses = [f"site: {name} {value} over {limit}" for name, value, limit, measured, bound in rows if measured > bound]
    lines = [SITE_HEADING, "",
             f"`make site` (scripts/build_site.py, from the stored notebooks): {len(site['pages'])} pages, "
             f"{sum(site['static_widgets'].values())} static widget(s).", ""]
    if runs:
        cpu = summarize([run["cpu_seconds"] for run in runs])
        npm = summarize([run["npm_seconds"] for run in runs])
        loads = ", ".join(f"{run['load']:.1f}" for run in runs)
        lines += [f"Each build from a fresh clone of the committed HEAD (no cache under build/): "
                  f"{format_summary(cpu, 0)} CPU seconds (user + system of the whole process tree), so at "
                  f"least {cpu.median / site['cores']:.0f} s of wall time on this machine's {site['cores']} cores "
                  f"even when quiet; load average (1 min) at the start of each: {loads}. Installing "
                  f"site/node_modules (npm ci, make's separate step, not counted) took {format_summary(npm, 0)} s.", ""]
    if site.get("transferred"):
        heaviest = sorted(site["transferred"].items(), key=lambda item: -item[1])[:5]
        lines += ["What a browser fetches for a page (the page, scripts, styles, fonts and pictures, uncompressed, "
                  "nothing cached), the heaviest five: " + ", ".join(f"{name} {size / MB:.2f} MB" for name, size in heaviest)
                  + ".", ""]
    if site.get("pdf"):
        pdf = site["pdf"]
        files = pdf["files"]
        lines += [f"`make pdf` after it (scripts/build_pdf.py): {len(files)} PDFs, "
                  f"{sum(f['pages'] for f in files.values())} pages, {sum(f['bytes'] for f in files.values()) / MB:.1f} MB, "
                  f"in {pdf['wall_seconds']:.0f} s ({pdf['cpu_seconds']:.0f} CPU-s of its process tree)" + "".join(
                      f"; {name} {files[name]['pages']} pages, {files[name]['bytes'] / MB:.1f} MB"
                      for name in ("course.pdf", "course-student.pdf") if name in files) + ".", ""]
    if site.get("phases"):
        phases = site["phases"]
        lines += ["Its steps (the last build), wall and CPU seconds (of which the build's own process): " + "; ".join(
            f"{name} {phase['seconds']:.0f} s, {phase['cpu_seconds']:.0f} CPU-s ({phase['own_cpu_seconds']:.0f})"
            for name, phase in phases.items()) + ".", ""]
        pool = phases["pictures"]["cpu_seconds"] - phases["pictures"]["own_cpu_seconds"]
        lines += [f"On a quiet machine its wall time would be about {quiet_seconds(phases, site.get('cores', 1)):.0f} s: "
                  f"the pictures' {pool:.0f} CPU-s spread over {site.get('cores', 1)} drawing processes, everything "
                  f"else (the build's own process, Sphinx) counted as if it ran on one core.", ""]
    lines += [markdown_table(["what", "measured", "limit", "verdict"],
                            [[name, value, limit, verdict(measured, bound)] for name, value, limit, measured, bound in rows]), ""]
    return "\n".join(lines), misses


def with_browser_section(markdown: str, section: str) -> str:
    """``markdown`` (a RESULTS.md) with its browser section replaced by ``section``, or
    ``section`` put before its "## Misses" (at the end if there is none)."""
    return with_section(markdown, section, BROWSER_HEADING)


def with_section(markdown: str, section: str, heading: str) -> str:
    """``markdown`` with the section under ``heading`` replaced by ``section`` (which starts
    with it), or ``section`` put before its "## Misses" (at the end if there is none)."""
    if not section.startswith(heading):
        raise ValueError(f"section must start with {heading!r}")
    section = section.rstrip("\n") + "\n\n"
    start = markdown.find(heading)
    if start >= 0:
        end = markdown.find("\n## ", start + len(heading))
        return markdown[:start] + section + (markdown[end + 1:] if end >= 0 else "")
    misses = markdown.find("## Misses")
    if misses >= 0:
        return markdown[:misses] + section + markdown[misses:]
    return markdown.rstrip("\n") + "\n\n" + section


def with_kept_sections(markdown: str, previous: str) -> str:
    """``markdown`` with every section of ``previous`` whose heading it lacks put back (the
    parts a run skipped, e.g. with --no-classroom, keep their last measurement)."""
    for part in previous.split("\n## ")[1:]:
        heading = "## " + part.split("\n", 1)[0]
        if heading != "## Misses" and heading not in markdown:
            markdown = with_section(markdown, "## " + part.rstrip("\n"), heading)
    return markdown


def write_section(path: Path, section: str, heading: str) -> None:
    """Put ``section`` (under ``heading``) into the markdown file ``path``, made if missing."""
    path = Path(path)
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    path.write_text(with_section(old, section, heading), encoding="utf-8")
