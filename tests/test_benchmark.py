"""The pure helpers of the benchmark (benchmarks/report.py, kernel.py) and its widget sweep
(benchmarks/widget_sweep.py); the benchmark itself runs kernels and a browser and is not a test."""
from pathlib import Path

import ipywidgets
import pytest

from benchmarks import kernel, report, site_build
from benchmarks import widget_sweep as sweep


# ------------------------------------------------------------------ summaries and targets

def test_summarize_gives_median_and_spread():
    assert report.summarize([3.0, 1.0, 2.0]) == report.Summary(median=2.0, low=1.0, high=3.0, count=3)
    assert report.summarize([1, 2, 3, 10]).median == 2.5
    assert report.summarize([7]) == report.Summary(7.0, 7.0, 7.0, 1)
    with pytest.raises(ValueError, match="values"):
        report.summarize([])


def test_format_summary_shows_spread_only_when_there_is_one():
    assert report.format_summary(report.Summary(12.34, 11.91, 13.0, 3)) == "12.3 (11.9–13.0)"
    assert report.format_summary(report.Summary(412.6, 400.2, 431.0, 3), 0) == "413 (400–431)"
    assert report.format_summary(report.Summary(12.34, 12.34, 12.34, 1)) == "12.3"


def test_targets_follow_the_notebook_number():
    assert report.targets_for("00_start_here.ipynb") == report.Targets(20.0, 400.0, 0.100, 3.0)
    assert report.targets_for("/x/notebooks/06_thirty_layers.ipynb") == report.Targets(20.0, 400.0, 0.100, 3.0)
    assert report.targets_for("08_training.ipynb") == report.Targets(60.0, 500.0, 0.100, 3.0)
    assert report.targets_for("10_transformers.ipynb").widget_default_seconds == 0.300
    with pytest.raises(ValueError, match="name must look like NN_short_name"):
        report.targets_for("intro.ipynb")


def test_verdict_passes_at_the_limit_and_misses_above_it():
    assert report.verdict(20.0, 20.0) == "pass"
    assert report.verdict(19.9, 20.0) == "pass"
    assert report.verdict(20.01, 20.0) == "miss"


# ------------------------------------------------------------------ /proc parsing

STATUS = """Name:\tpython
VmPeak:\t 2097152 kB
VmSize:\t 2000000 kB
VmHWM:\t  409600 kB
VmRSS:\t  300000 kB
Threads:\t4
"""


def test_parse_vmhwm_reads_the_high_water_mark_in_bytes():
    assert kernel.parse_vmhwm(STATUS) == 409600 * 1024  # not VmPeak (virtual) nor VmRSS (now)
    with pytest.raises(ValueError, match="status has no 'VmHWM"):
        kernel.parse_vmhwm("VmRSS:\t 1 kB\n")


def test_parse_vmhwm_of_this_process_is_at_least_its_current_rss():
    import psutil

    rss = psutil.Process().memory_info().rss
    peak = kernel.parse_vmhwm(Path("/proc/self/status").read_text())
    assert peak >= rss - 4096 * 1024  # the peak may not be below what is resident now (4 MB of slack)


def test_parse_meminfo_total():
    assert kernel.parse_meminfo_total("MemTotal:       24684032 kB\nMemFree: 1 kB\n") == 24684032 * 1024
    with pytest.raises(ValueError, match="meminfo"):
        kernel.parse_meminfo_total("MemFree: 1 kB\n")


# ------------------------------------------------------------------ markdown and notebook names

def test_markdown_table_is_exact_and_escapes_pipes():
    table = report.markdown_table(["A", "B"], [[1, "x|y"], ["2.5", "z"]])
    assert table == "| A | B |\n|---|---|\n| 1 | x\\|y |\n| 2.5 | z |"
    with pytest.raises(ValueError, match="row must have 2 cells"):
        report.markdown_table(["A", "B"], [[1]])


def test_resolve_notebooks_by_default_prefix_and_path(tmp_path):
    for name in ("03_matrix.ipynb", "00_start_here.ipynb", "notes.ipynb", "04_blocks.ipynb"):
        (tmp_path / name).write_text("{}")
    names = [p.name for p in kernel.resolve_notebooks([], tmp_path)]
    assert names == ["00_start_here.ipynb", "03_matrix.ipynb", "04_blocks.ipynb"]
    assert kernel.resolve_notebooks(["03"], tmp_path) == [tmp_path / "03_matrix.ipynb"]
    assert kernel.resolve_notebooks(["04_blocks.ipynb"], tmp_path) == [tmp_path / "04_blocks.ipynb"]
    assert kernel.resolve_notebooks([str(tmp_path / "notes.ipynb")], tmp_path) == [tmp_path / "notes.ipynb"]
    with pytest.raises(ValueError, match="must name exactly one notebook"):
        kernel.resolve_notebooks(["0"], tmp_path)


# ------------------------------------------------------------------ the widget sweep

def test_sweep_of_an_int_slider_is_default_ends_and_quarters_on_the_grid():
    values, extremes = sweep.sweep_values(ipywidgets.IntSlider(value=10, min=1, max=1000))
    assert values == [10, 1, 251, 501, 750, 1000]
    assert extremes == [1, 1000]
    values, _ = sweep.sweep_values(ipywidgets.IntSlider(value=2, min=1, max=3))
    assert values == [2, 1, 3]  # no duplicates on a short range


def test_sweep_of_float_and_log_sliders():
    values, extremes = sweep.sweep_values(ipywidgets.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.05))
    assert values == [1.0, 0.0, 0.5, 1.5, 2.0] and extremes == [0.0, 2.0]
    values, extremes = sweep.sweep_values(ipywidgets.FloatSlider(value=0.3, min=0.0, max=1.0, step=0.3))
    assert values == [0.3, 0.0, 0.6, 0.9]  # snapped to the grid and kept inside the range
    values, extremes = sweep.sweep_values(ipywidgets.FloatLogSlider(value=1.0, min=-2, max=2))
    assert values == pytest.approx([1.0, 0.01, 0.1, 10.0, 100.0])
    assert extremes == pytest.approx([0.01, 100.0])


def test_sweep_of_choices_and_booleans_is_every_setting():
    assert sweep.sweep_values(ipywidgets.ToggleButtons(options=["pre", "post"], value="post")) == (
        ["post", "pre"], ["pre", "post"])
    assert sweep.sweep_values(ipywidgets.Dropdown(options=[("one", 1), ("ten", 10)], value=1)) == ([1, 10], [1, 10])
    assert sweep.sweep_values(ipywidgets.Checkbox(value=False)) == ([False, True], [False, True])
    assert sweep.sweep_values(ipywidgets.IntRangeSlider(value=(1, 2), min=0, max=5)) is None
    assert sweep.sweep_values(ipywidgets.Text(value="x")) is None


def test_measure_panel_times_every_move_and_restores_the_default():
    from utils.widgets import LivePlot

    seen = []

    def draw(fig, depth, norm):
        seen.append((depth, norm))
        fig.subplots().plot(range(depth))
        return ""

    depth = ipywidgets.IntSlider(value=3, min=1, max=5)
    norm = ipywidgets.Dropdown(options=["pre", "post"], value="pre")
    panel = LivePlot(draw, {"depth": depth, "norm": norm})
    seen.clear()
    records = sweep.measure_panel(panel)
    assert [r["control"] for r in records] == ["depth", "norm"]
    depth_record = records[0]
    assert [m["value"] for m in depth_record["moves"]] == ["1", "2", "4", "5"]
    assert [m["extreme"] for m in depth_record["moves"]] == [True, False, False, True]
    assert len(depth_record["default_seconds"]) == 4 and not depth_record["default_is_extreme"]
    assert all(m["seconds"] >= m["panel_seconds"] > 0 for m in depth_record["moves"])
    # each setting, then back to the default; the other control stays at its default
    # a two-option choice is toggled until the default has been timed 4 times, as often as the slider's
    assert seen == [(1, "pre"), (3, "pre"), (2, "pre"), (3, "pre"), (4, "pre"), (3, "pre"), (5, "pre"), (3, "pre"),
                    (3, "post"), (3, "pre")] + [(3, "post"), (3, "pre")] * 3
    assert records[1]["default_is_extreme"] and len(records[1]["moves"]) == 4
    assert len(records[1]["default_seconds"]) == 4
    assert panel.values() == {"depth": 3, "norm": "pre"}


def test_measure_panel_reports_a_failing_redraw_instead_of_raising():
    from utils.widgets import LivePlot

    def draw(fig, depth):
        if depth > 4:
            raise FloatingPointError("overflow at depth 5")
        fig.subplots()
        return ""

    panel = LivePlot(draw, {"depth": ipywidgets.IntSlider(value=2, min=1, max=5)})
    (record,) = sweep.measure_panel(panel)
    assert record["error"] == "FloatingPointError: overflow at depth 5"
    assert panel.controls["depth"].value == 2


# ------------------------------------------------------------------ judging and the report

def _entry(default_seconds, moves, default_is_extreme=False):
    return {"notebook": "03_matrix.ipynb", "widget": "draw, In [4]", "control": "depth", "default": "10",
            "default_seconds": default_seconds, "default_is_extreme": default_is_extreme, "notes": set(),
            "moves": [{"value": v, "seconds": s, "extreme": e} for v, s, e in moves]}


def test_judge_widget_checks_default_median_and_worst_setting():
    targets = report.targets_for("03_matrix.ipynb")
    fast = report.judge_widget(_entry([0.05, 0.09, 0.07], [("1", 0.04, True), ("500", 0.3, False),
                                                        ("1000", 2.5, True)]), targets)
    assert fast["misses"] == []
    assert fast["default"].median == pytest.approx(0.07)
    assert fast["extreme"] == (2.5, "1000") and fast["worst"] == (2.5, "1000")
    slow = report.judge_widget(_entry([0.15, 0.12, 0.2], [("1", 0.1, True), ("1000", 3.4, True)]), targets)
    assert slow["misses"] == ["median at default 150 ms > 100 ms (+50 ms)", "3.40 s at 1000 > 3 s (+0.40 s)"]
    notebook_10 = report.judge_widget(_entry([0.15, 0.12, 0.2], [("1", 0.1, True)]), report.targets_for("10_x.ipynb"))
    assert notebook_10["misses"] == []


def test_widget_rows_pool_runs_and_order_panels_by_cell():
    def panel(model_id, draw, seconds):
        return {"draw": draw, "model_id": model_id, "controls": [
            {"control": "depth", "default": "3", "default_seconds": [seconds], "default_is_extreme": False,
             "moves": [{"value": "1", "seconds": seconds, "extreme": True}]}]}

    runs = [{"panels": [panel("b", "draw_late", 0.2), panel("a", "draw_early", 0.1)], "panel_cells": {"a": 2, "b": 7}},
            {"panels": [panel("d", "draw_late", 0.4), panel("c", "draw_early", 0.3)], "panel_cells": {"c": 2, "d": 7}}]
    rows = report.widget_rows("02_slopes.ipynb", runs)
    assert [r["widget"] for r in rows] == ["draw_early, In [2]", "draw_late, In [7]"]
    assert rows[0]["default_seconds"] == [0.1, 0.3] and len(rows[1]["moves"]) == 2


def test_build_report_marks_misses_with_their_size():
    def result(seconds, megabytes):
        return {"error": None, "seconds": seconds, "peak_bytes": megabytes * report.MB, "panels": [], "panel_cells": {}}

    floor = {"runs": [{"seconds": 2.0, "peak_bytes": 300 * report.MB, "import_failures": "floor import failures: []"}]}
    results = {"02_slopes.ipynb": [result(10.0, 350), result(12.0, 360), result(11.0, 340)],
               "09_why.ipynb": [result(65.0, 450)]}
    info = {"cpu": "Test CPU", "cores": 2, "usable_cores": 2, "ram_gb": 8.0, "python": "3.11", "torch": "2.13",
            "numpy": "2.4", "matplotlib": "3.11", "ipywidgets": "8.1", "platform": "Linux"}
    markdown, misses = report.build_report(results, floor, info, 3, "2026-11-30 18:35", (1.0, 2.0))
    assert misses == ["09_why.ipynb: wall time 65.0 s > 60 s (+5.0 s)"]
    assert "| 02_slopes.ipynb | 11.0 (10.0–12.0) | 20 | pass | 350 (340–360) | 1.17 | 400 | pass | pass |" in markdown
    assert "| 09_why.ipynb | 65.0 | 60 | miss | 450 | 1.50 | 500 | pass | miss |" in markdown
    assert "Test CPU, 2 cores" in markdown and "- 09_why.ipynb: wall time 65.0 s > 60 s (+5.0 s)" in markdown


def test_last_line_of_an_error_drops_colours_and_traceback():
    error = RuntimeError("Traceback (most recent call last):\n  File x\n\x1b[31mValueError\x1b[39m: depth must be positive\n")
    assert kernel._last_line(error) == "ValueError: depth must be positive"
    assert kernel._last_line(TimeoutError()) == "TimeoutError"


def test_redraw_floor_pools_every_move_of_the_floor_panel_in_ms():
    floor = {"runs": [{"panels": [{"controls": [{"default_seconds": [0.05, 0.07],
                                                 "moves": [{"seconds": 0.06}, {"seconds": 0.09}]}]}]},
                      {"panels": []}]}
    summary = report.redraw_floor(floor)
    assert summary == report.Summary(median=pytest.approx(0.065), low=0.05, high=0.09, count=4)
    assert report.format_summary(report.scaled(summary, 1000), 0) == "65 (50–90)"
    assert report.redraw_floor({"runs": [{}]}) is None


def test_format_summary_of_no_measurement_is_a_dash():
    assert report.format_summary(report.summarize([float("nan")])) == "–"


def test_guard_gives_up_on_an_idle_kernel_and_lets_work_finish_otherwise():
    import asyncio
    import subprocess

    idle = subprocess.Popen(["sleep", "300"])  # stands in for a kernel that never got its request

    async def never_done():
        await asyncio.Event().wait()

    try:
        with pytest.raises(kernel.Stalled):  # work that would never end: only the guard can end it
            asyncio.run(kernel._guarded(never_done(), idle.pid, stall_seconds=1.5))
        # work that is done at once, against a guard only a hang of this test would reach
        assert asyncio.run(kernel._guarded(asyncio.sleep(0, result="done"), idle.pid, stall_seconds=120)) == "done"
    finally:
        idle.kill()
        idle.wait()


def test_build_report_lists_runs_restarted_after_a_hang():
    result = {"error": None, "seconds": 5.0, "peak_bytes": 200 * report.MB, "stalls": ["cell In [9]"]}
    hung = {"error": "the kernel hung in every attempt (cell In [2])", "seconds": float("nan"),
            "peak_bytes": None, "stalls": ["cell In [2]"]}
    floor = {"runs": [{"seconds": 2.0, "peak_bytes": 300 * report.MB, "import_failures": "floor import failures: []"}]}
    info = {"cpu": "Test CPU", "cores": 2, "usable_cores": 2, "ram_gb": 8.0, "python": "3.11", "torch": "2.13",
            "numpy": "2.4", "matplotlib": "3.11", "ipywidgets": "8.1", "platform": "Linux"}
    markdown, misses = report.build_report({"05_flow.ipynb": [result], "08_x.ipynb": [hung]}, floor, info, 1,
                                        "2026-11-30 18:35", (1.0, 2.0))
    assert "05_flow.ipynb (cell In [9]); 08_x.ipynb (cell In [2])." in markdown
    assert "| 08_x.ipynb | – | 60 | – | – | – | 500 | – | error |" in markdown
    assert misses == ["08_x.ipynb: ERROR while executing: the kernel hung in every attempt (cell In [2])"]


# ------------------------------------------------------------------ the browser part

def test_percentile_interpolates_between_order_statistics():
    assert report.percentile([3, 1, 2], 0.5) == 2
    assert report.percentile(range(11), 0.9) == pytest.approx(9.0)
    assert report.percentile([10, 20], 0.9) == pytest.approx(19.0)
    assert report.percentile([], 0.5) != report.percentile([], 0.5)  # NaN
    with pytest.raises(ValueError, match="fraction must be between 0 and 1"):
        report.percentile([1], 1.5)


def _move(ms, kernel_ms=None, jump=False, busy=True, what="slider 'depth' 20 ArrowRight", kept=False):
    return {"what": what, "ms": ms, "decode_ms": 5.0, "kernel_ms": kernel_ms, "jump": jump, "busy": busy,
            "control": "depth", "kind": "slider", "draw": "draw_x", "kept": kept}


def test_judge_browser_widget_compares_median_and_p90_with_the_floor():
    floor = [_move(ms) for ms in (100, 100, 100, 100, 200)]  # median 100, p90 160
    fast = [_move(ms, kernel_ms=ms / 2) for ms in (140, 150, 150, 150, 300)] + [_move(2500, jump=True)]
    judged = report.judge_browser_widget(fast, floor)
    assert (judged["median"], judged["median_ratio"]) == (150, 1.5)
    assert judged["p90"] == pytest.approx(240) and judged["p90_ratio"] == pytest.approx(1.5)
    assert judged["kernel_median"] == 75 and judged["heaviest"]["ms"] == 2500 and judged["misses"] == []
    slow = [_move(ms) for ms in (151, 151, 400)] + [_move(3100, jump=True, busy=False, what="slider 'depth' 30 End")]
    misses = report.judge_browser_widget(slow, floor)["misses"]
    assert misses == ["median 151 ms is 1.51x the floor (> 1.5x)", "p90 350 ms is 2.19x the floor's (> 2.0x)",
                      "slider 'depth' 30 End took 3.1 s (> 3 s)",
                      "a jump to a slider's end did not show the busy status"]


def test_browser_report_has_a_row_per_liveplot_and_replaces_its_section():
    results = {"floor": [_move(100, kernel_ms=20)] * 3, "errors": [],
               "notebooks": {"02_x.ipynb": [{"index": 0, "moves": [_move(120, kernel_ms=60)] * 2
                                                      + [_move(120, kernel_ms=60, kept=True)]}]}, "look_ms": 300}
    section, misses = report.browser_report(results)
    assert section.startswith(report.BROWSER_HEADING) and misses == []
    assert ("| 02_x.ipynb | draw_x (LivePlot 1) | depth | 3 | 120 | 120 | 1.20 | 1.20 | 60 | 1 of 3 | 5 | – | pass |"
            in section)
    assert "steps are 300 ms apart" in section
    old = "# Benchmark results\n\n## Widgets\n\ntable\n\n## Misses\n\nNone.\n"
    once = report.with_browser_section(old, section)
    assert once.index("## Widgets\n") < once.index(report.BROWSER_HEADING) < once.index("## Misses")
    twice = report.with_browser_section(once, section.replace("| 120 | 120 |", "| 130 | 130 |"))
    assert twice.count(report.BROWSER_HEADING) == 1 and "| 130 | 130 |" in twice and "## Misses" in twice
    assert report.browser_report({"floor": [], "errors": ["no Chromium"]})[1] == ["no Chromium"]


def test_site_report_judges_build_time_and_sizes_against_the_limits():
    site = {"seconds": 20.0, "bytes": 40_000_000, "pages": {"index.html": 30_000, "notebooks/07.html": 4_000_000},
            "static_widgets": {"07.ipynb": 1}}
    section, misses = report.site_report(site)
    assert section.startswith(report.SITE_HEADING) and not misses
    assert "| largest page (notebooks/07.html) | 4.00 MB | 10 MB | pass |" in section
    site["pages"]["notebooks/07.html"] = 12_000_000
    site["seconds"] = 75.0
    assert report.site_report(site)[1] == ["site: build time 75 s over 60 s",
                                           "site: largest page (notebooks/07.html) 12.00 MB over 10 MB"]
    placed = report.with_section("# R\n\n## Misses\n", section, report.SITE_HEADING)
    assert placed.index(report.SITE_HEADING) < placed.index("## Misses")


def test_site_report_gives_the_cold_builds_median_cpu_seconds_and_npm_time():
    runs = [{"wall_seconds": w, "cpu_seconds": c, "npm_seconds": 30.0, "load": 6.0}
            for w, c in ((50.0, 70.0), (58.0, 72.0), (80.0, 75.0))]
    site = {"seconds": 58.0, "bytes": 40_000_000, "pages": {"index.html": 30_000}, "static_widgets": {"07.ipynb": 1},
            "runs": runs, "cores": 2,
            "phases": {"pictures": {"seconds": 30.2, "cpu_seconds": 55.0, "own_cpu_seconds": 5.0},
                       "sphinx": {"seconds": 12.0, "cpu_seconds": 16.6, "own_cpu_seconds": 0.0}}}
    section, misses = report.site_report(site)
    assert "own process): pictures 30 s, 55 CPU-s (5); sphinx 12 s, 17 CPU-s (0)." in section
    assert "about 47 s: the pictures' 50 CPU-s spread over 2 drawing processes" in section  # 5 + 25 + 16.6
    assert "| build time, cold, median of 3 | 58 (50–80) s | 60 s | pass |" in section and not misses
    assert "72 (70–75) CPU seconds" in section and "at least 36 s of wall time on this machine's 2 cores" in section
    assert "load average (1 min) at the start of each: 6.0, 6.0, 6.0" in section and "took 30 s" in section
    for run, wall in zip(runs, (62.0, 65.0, 80.0)):
        run["wall_seconds"] = wall
    site["seconds"] = 65.0
    assert report.site_report(site)[1] == ["site: build time, cold, median of 3 65 (62–80) s over 60 s"]


def test_site_report_judges_the_quiet_machine_time_from_cpu_seconds_for_a_build_and_a_rebuild():
    """Wall time on a shared machine is the other users' as much as the build's: the minute is
    also judged from CPU seconds, the drawing processes' spread over the cores."""
    phases = {"pictures": {"seconds": 90.0, "cpu_seconds": 84.0, "own_cpu_seconds": 4.0},
              "sphinx": {"seconds": 30.0, "cpu_seconds": 12.0, "own_cpu_seconds": 0.0}}
    rebuild = {"wall_seconds": 25.0, "cpu_seconds": 15.0,
               "phases": {"pictures": {"seconds": 3.0, "cpu_seconds": 3.0, "own_cpu_seconds": 3.0},
                          "sphinx": {"seconds": 20.0, "cpu_seconds": 11.0, "own_cpu_seconds": 0.0}}}
    site = {"seconds": 120.0, "bytes": 1, "pages": {"index.html": 1}, "static_widgets": {}, "cores": 2,
            "phases": phases, "rebuild": rebuild}
    assert report.quiet_seconds(phases, 2) == 4 + 40 + 12
    section, misses = report.site_report(site)
    assert "| build time on a quiet machine, from CPU-s (last cold build) | 56 s | 60 s | pass |" in section
    assert "| rebuild, nothing changed, on a quiet machine, from CPU-s | 14 s (25 s wall, 15 CPU-s) | 60 s | pass |" in section
    assert misses == ["site: build time 120 s over 60 s"]
    phases["pictures"]["cpu_seconds"] = 104.0  # 4 + 50 + 12
    assert report.site_report(site)[1][1] == "site: build time on a quiet machine, from CPU-s (last cold build) 66 s over 60 s"


def test_the_site_benchmark_refuses_a_count_of_runs_that_is_not_one_or_more():
    for runs in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="runs must be a whole number of at least 1"):
            site_build.measure(runs)


def test_a_run_that_skips_a_part_keeps_that_part_s_last_measurement():
    previous = "# Benchmark results\n\n## Notebooks\n\nold\n\n## A class on one machine\n\nfive students\n\n## Misses\n\nnone\n"
    new = "# Benchmark results\n\n## Notebooks\n\nnew\n\n## Misses\n\none\n"
    kept = report.with_kept_sections(new, previous)
    assert "## Notebooks\n\nnew" in kept and "old" not in kept
    assert kept.index("## A class on one machine\n\nfive students") < kept.index("## Misses\n\none")
    assert report.with_kept_sections(new, new) == new
