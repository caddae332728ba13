"""The course as a learner sees it: every notebook opened in JupyterLab in a real (headless)
Chromium, run with "Run All", every widget rendered, and every LivePlot answering its
controls. A screenshot of each notebook after run-all goes to build/screenshots/ (not
tracked, so a test run leaves the work tree clean); `make screenshots` copies them over
the committed ones in docs/screenshots/.

Needs Debian's Chromium at /usr/bin/chromium (``apt-get install -y chromium``) and Playwright
for Python (requirements.txt); never ``playwright install``. Without Chromium the tests are
skipped, except when CI=true, where they fail. Run them with ``pytest -m browser``.

Every stored output must come again (tests/output_tolerance.py), on native kernels with two
threads: the backend matrix's stand-in whose notebooks run only here.

One JupyterLab server serves all notebooks (from a private copy of the repository, so
nothing here writes to the notebooks), with private JUPYTER_* directories and settings; each
notebook's kernel is shut down after its test, and the server is stopped by its PID. The
server and browser set-up, and the bare-Image floor printed beside every LivePlot's move
times (reported, not asserted: the latency targets are `make benchmark`'s), are the
benchmark's (benchmarks/lab_session.py, browser.py).
"""
from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import nbformat
import pytest

from benchmarks import browser as browser_benchmark  # its bare-Image floor
from benchmarks import lab_session as lab_tools  # the server and browser set-up the benchmark uses too
from scripts import backend_matrix
from tests import output_tolerance

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SCREENSHOTS = ROOT / "build" / "screenshots"
# Generous limits: the machine is shared, and notebooks 08-10 compute for up to a minute.
WIDGETS_RENDER_MS = 120_000
REDRAW_MS = 300_000
LIVEPLOT = lab_tools.LIVEPLOT
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STDERR = '[data-mime-type="application/vnd.jupyter.stderr"]'
FLOOR_STEPS = 6


def _require_chromium() -> None:
    problem = lab_tools.missing_browser()
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: browser tests must run here, but {problem}")
        pytest.skip(problem)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    _require_chromium()
    started = time.perf_counter()
    stand_in = backend_matrix.kernel_variables(backend_matrix.NOTEBOOKS_IN_MAKE_TEST["tests/test_browser.py"])
    with lab_tools.running_lab(tmp_path_factory.mktemp("jupyterlab"), variables=stand_in) as server:
        yield server
        pid = server.process.pid
    print(f"\nbrowser tests: JupyterLab server {pid} stopped; "
          f"{time.perf_counter() - started:.0f} s from server start to stop")


@pytest.fixture(scope="module")
def browser(lab):
    with lab_tools.chromium() as chromium:
        yield chromium


def _measure_floor(lab, browser) -> float:
    """Median end-to-end ms of the bare-Image floor (benchmarks/browser.py), in this server
    and browser, now; only the floor notebook's own kernel is shut down afterwards."""
    browser_benchmark._write_floor_notebook(lab.root)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        lab_tools.open_and_run_all(page, lab, browser_benchmark.FLOOR_NOTEBOOK, [])
        panel = lab_tools.current_panel(page)
        lab_tools.wait_for_widgets(page, panel)
        plot = panel.locator(f".{browser_benchmark.FLOOR_CLASS}").first
        slider = lab_tools.liveplot_controls(plot)[0][1]
        lab_tools.timed_move(page, plot, lambda: lab_tools.slider_step(slider))  # warm-up
        return statistics.median(lab_tools.timed_move(page, plot, lambda: lab_tools.slider_step(slider))["ms"]
                                 for _ in range(FLOOR_STEPS))
    finally:
        context.close()
        for session in lab.api("/api/sessions"):
            if session.get("path", "").endswith(Path(browser_benchmark.FLOOR_NOTEBOOK).name):
                lab.api(f"/api/sessions/{session['id']}", method="DELETE")


@pytest.fixture(scope="module")
def floor_ms(lab, browser):
    """The bare-Image floor, measured once before the notebooks and printed beside each
    LivePlot's move times, so a reader of the log can tell a slow widget from a busy machine."""
    return _measure_floor(lab, browser)


CELLS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.filter(cell => cell.model.type === 'code').map((cell, index) => {
    const outputs = [];
    for (let i = 0; i < cell.model.outputs.length; i++) {
      const o = cell.model.outputs.get(i).toJSON();
      const text = typeof o.text === 'string' ? o.text : (o.text || []).join('');
      // as nbformat has it, to compare with the stored output: every MIME type, only text/plain's content
      const data = o.data ? Object.fromEntries(Object.entries(o.data).map(([m, v]) => [m, m === 'text/plain' ? v : ''])) : null;
      outputs.push({type: o.output_type, name: o.name || null, ename: o.ename || null, evalue: o.evalue || null,
                    text, mimes: Object.keys(o.data || {}),
                    nbformat: {output_type: o.output_type, name: o.name, text, ...(data ? {data} : {})}});
    }
    return {index, source: cell.model.sharedModel.getSource(), count: cell.model.executionCount, outputs};
  });
}"""

# Top-level widget views that rendered: a widget root directly inside a cell's output area.
RENDERED_WIDGETS_JS = """panel => panel.querySelectorAll(
  '.jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output > .jupyter-widgets').length"""

# The screenshot shows the first LivePlot, else the first figure, else the top of the notebook.
SCROLL_TO_FIRST_FIGURE_JS = """(panel, liveplot) => {
  const target = panel.querySelector(liveplot) || panel.querySelector('.jp-Cell-outputArea img');
  (target?.closest('.jp-Cell') || panel.querySelector('.jp-Cell')).scrollIntoView({block: 'start'});
}"""


def _liveplot_state(plot) -> tuple[str | None, str]:
    image = plot.locator(":scope > img.widget-image")
    source = image.first.get_attribute("src") if image.count() else None
    text = "\n".join(plot.locator(":scope > .liveplot-caption").all_inner_texts()).strip()
    return source, text


SLIDER_STEPS = 3  # keyboard steps per slider: one move is too noisy to judge


def _moves(plot) -> list:
    """SLIDER_STEPS moves for each enabled slider (keyboard steps, away from its end) and one
    for each dropdown (to another option) of a LivePlot; each move returns what it did."""
    moves = []
    for kind, control in lab_tools.liveplot_controls(plot):
        if kind == "slider":
            moves += [lambda control=control: lab_tools.slider_step(control)] * SLIDER_STEPS
        else:
            moves.append(lambda control=control: lab_tools.dropdown_choice(control))
    return moves


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_and_its_widgets_respond_in_jupyterlab(lab, browser, floor_ms, path):
    started = time.perf_counter()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    console_errors = []
    page.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: console_errors.append(str(error)))
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # here: Playwright may be absent (skip)

    try:
        lab_tools.open_and_run_all(page, lab, f"notebooks/{path.name}", console_errors)
        panel = lab_tools.current_panel(page)
        run_seconds = time.perf_counter() - started

        # Every code cell ran, and none shows an error or a warning.
        cells = page.evaluate(CELLS_JS)
        problems = [f"cell {c['index']}: {o['ename']}: {o['evalue']}" for c in cells for o in c["outputs"]
                    if o["type"] == "error"]
        problems += [f"cell {c['index']}: stderr {o['text'][:300]!r}" for c in cells for o in c["outputs"]
                     if o["type"] == "stream" and o["name"] == "stderr" and ("Traceback" in o["text"] or "Warning" in o["text"])]
        assert not problems, f"{path.name} in JupyterLab:\n" + "\n".join(problems)
        not_run = [c["index"] for c in cells if c["source"].strip() and c["count"] is None]
        assert not not_run, f"{path.name}: code cells {not_run} did not run (run-all gave {page.evaluate('window.__runAll')})"
        assert page.evaluate("window.__runAll") == {"ok": True}, f"{path.name}: run-all reported {page.evaluate('window.__runAll')}"
        stored = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        differences = output_tolerance.run_differences(stored, [[o["nbformat"] for o in c["outputs"]] for c in cells])
        assert not differences, f"{path.name} in JupyterLab: outputs differ from the stored ones:\n" + "\n".join(differences)

        # Every widget rendered.
        expected_widgets = sum(WIDGET_VIEW in o["mimes"] for c in cells for o in c["outputs"])
        lab_tools.wait_for_widgets(page, panel, WIDGETS_RENDER_MS)
        text = panel.inner_text()
        assert "Error displaying widget" not in text, f"{path.name}: a widget failed to display; console: {console_errors}"
        rendered = panel.evaluate(RENDERED_WIDGETS_JS)
        assert rendered == expected_widgets, (
            f"{path.name}: {expected_widgets} widget outputs, {rendered} rendered; console: {console_errors}")
        tracebacks = [t for t in panel.locator(f".jp-Cell-outputArea {STDERR}").all_inner_texts() if "Traceback" in t]
        assert not tracebacks, f"{path.name}: a traceback is shown:\n{tracebacks[0][:1000]}"

        # A picture of the notebook after run-all.
        plots = panel.locator(LIVEPLOT)
        page.evaluate("window.jupyterapp.shell.collapseLeft()")
        panel.evaluate(SCROLL_TO_FIRST_FIGURE_JS, LIVEPLOT)
        page.wait_for_timeout(500)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{path.stem}.png"))

        # Moving any slider or dropdown of a LivePlot redraws its picture and changes its text.
        # Each move's time (from the input event until the new picture has decoded) is printed
        # beside the bare-Image floor, but not asserted: on a shared machine a timed test fails
        # for other people's work. `make benchmark`'s browser part holds the latency targets.
        moved = []
        for index in range(plots.count()):
            plot = plots.nth(index)
            times = []
            for move in _moves(plot):
                plot.scroll_into_view_if_needed()
                source, text = _liveplot_state(plot)
                assert source, f"{path.name}: LivePlot {index} shows no picture"
                try:
                    timing = lab_tools.timed_move(page, plot, move, timeout_ms=REDRAW_MS)
                except PlaywrightTimeout:
                    status = plot.locator(":scope > .liveplot-status").inner_text().strip()
                    raise AssertionError(
                        f"{path.name}: LivePlot {index} did not redraw within {REDRAW_MS / 1000:.0f} s; "
                        f"status {status!r}. A status stuck on busy means its draw function raised at the new "
                        "value: call it there outside the widget to see the traceback.") from None
                what = timing["what"]
                new_source, new_text = _liveplot_state(plot)
                assert new_source != source, f"{path.name}: LivePlot {index} ({what}) kept the same picture"
                assert new_text != text, f"{path.name}: LivePlot {index} ({what}) printed the same text {text!r}"
                assert plot.locator(STDERR).count() == 0, f"{path.name}: LivePlot {index} ({what}) shows stderr output"
                times.append(timing["ms"])
                moved.append(f"{what} {timing['ms']:.0f} ms")
                page.wait_for_timeout(browser_benchmark.LOOK_MS)  # a learner looks before the next step
        print(f"\n{path.name}: run-all {run_seconds:.0f} s, {rendered} widgets rendered, "
              f"{plots.count()} LivePlots, moved: {moved or 'none'} (floor {floor_ms:.0f} ms); "
              f"total {time.perf_counter() - started:.0f} s")
    finally:
        context.close()
        lab.shut_down_kernels()
