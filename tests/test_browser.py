"""The course as a learner sees it: every notebook opened in JupyterLab in a real (headless)
Chromium, run with "Run All", every widget rendered, and every LivePlot answering its
controls. A screenshot of each notebook after run-all goes to build/screenshots/ (not
tracked, so a test run leaves the work tree clean); `make screenshots` copies them over
the committed ones in docs/screenshots/.

Needs Debian's Chromium at /usr/bin/chromium (``apt-get install -y chromium``) and Playwright
for Python (requirements.txt); never ``playwright install``. Without Chromium the tests are
skipped, except when CI=true, where they fail. Run them with ``pytest -m browser``.

One JupyterLab server serves all notebooks (from a private copy of the repository, so
nothing here writes to the notebooks), with private JUPYTER_* directories and settings; each
notebook's kernel is shut down after its test, and the server is stopped by its PID.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
HOW_TO_ENABLE = ("Install Debian's Chromium to run the browser tests: apt-get update && apt-get install -y chromium "
                 "(Playwright for Python comes from requirements.txt; do not run `playwright install`).")
# Generous limits: the machine is shared, and notebooks 06-07 compute for up to a minute.
KERNEL_START_MS = 180_000
RUN_ALL_MS = 900_000
WIDGETS_RENDER_MS = 120_000
REDRAW_MS = 300_000
# A LivePlot (utils/widgets.py): a VBox of [controls HBox, status HTML, Output with the PNG and its text].
LIVEPLOT = ".widget-vbox.liveplot"  # utils.widgets.LivePlot: controls, status, picture, caption
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STDERR = '[data-mime-type="application/vnd.jupyter.stderr"]'
THREADS = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def _require_chromium() -> None:
    problem = None
    if not CHROMIUM.is_file():
        problem = f"no Chromium at {CHROMIUM}"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "Playwright for Python is not installed"
    if problem:
        message = f"{problem}. {HOW_TO_ENABLE}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: browser tests must run here, but {message}")
        pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _write_settings(folder: Path) -> None:
    """JupyterLab user settings: start kernels without asking, keep every cell in the page
    (no windowing, so selectors see all outputs), never autosave, never fetch news."""
    settings = {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"autoStartDefaultKernel": True,
                                                                      "windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                           "checkForUpdates": False},
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    }
    for name, value in settings.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


class Lab:
    """A running JupyterLab server: its URL, token, process and log."""

    def __init__(self, url: str, token: str, process: subprocess.Popen, log: Path):
        self.url, self.token, self.process, self.log = url, token, process, log

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, characters: int = 3000) -> str:
        """The end of the server's log (kernel start-up errors show there)."""
        return self.log.read_text(errors="replace")[-characters:]

    def shut_down_kernels(self) -> None:
        """Shut down every session and kernel, so the next notebook starts with free memory."""
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")
        for kernel in self.api("/api/kernels"):
            self.api(f"/api/kernels/{kernel['id']}", method="DELETE")


def _stop(process: subprocess.Popen) -> None:
    """Stop the server we started, by its PID: SIGTERM lets it shut its kernels down; if it
    hangs, kill its process group (the server and the kernels it started, nothing else)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    _require_chromium()
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "course"  # a private copy: nothing the browser does can touch the real notebooks
    for folder in ("notebooks", "docs"):  # docs: pictures the notebooks' markdown may show
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, root / folder,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "screenshots"))
    private = {name: base / name.lower() for name in (
        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR",
        "JUPYTERLAB_WORKSPACES_DIR", "IPYTHONDIR", "MPLCONFIGDIR")}
    for folder in private.values():
        folder.mkdir()
    _write_settings(private["JUPYTERLAB_SETTINGS_DIR"])
    env = {key: value for key, value in os.environ.items() if key != "JUPYTER_PATH"}
    env.update({key: str(value) for key, value in private.items()}, **THREADS)
    port, token = _free_port(), secrets.token_hex(24)
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
               "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = base / "server.log"
    with open(log, "w") as log_file:
        process = subprocess.Popen(command, env=env, cwd=root, stdout=log_file, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = Lab(f"http://127.0.0.1:{port}", token, process, log)
    started = time.perf_counter()
    try:
        while True:
            assert process.poll() is None, f"JupyterLab exited with {process.returncode}:\n{server.log_tail()}"
            try:
                server.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert time.perf_counter() - started < 120, f"JupyterLab did not answer in 120 s:\n{server.log_tail()}"
                time.sleep(0.5)
        yield server
    finally:
        _stop(process)
        print(f"\nbrowser tests: JupyterLab server {process.pid} stopped; "
              f"{time.perf_counter() - started:.0f} s from server start to stop")


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
    finally:
        playwright.stop()


CELLS_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.filter(cell => cell.model.type === 'code').map((cell, index) => {
    const outputs = [];
    for (let i = 0; i < cell.model.outputs.length; i++) {
      const o = cell.model.outputs.get(i).toJSON();
      outputs.push({type: o.output_type, name: o.name || null, ename: o.ename || null, evalue: o.evalue || null,
                    text: typeof o.text === 'string' ? o.text : (o.text || []).join(''),
                    mimes: Object.keys(o.data || {})});
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

REDRAWN_JS = """([plot, before]) => {
  const image = plot.querySelector(':scope > img.widget-image');
  const status = plot.querySelector(':scope > .liveplot-status').innerText.trim();
  return image !== null && image.src !== before && status === '';
}"""


def _liveplot_state(plot) -> tuple[str | None, str]:
    image = plot.locator(":scope > img.widget-image")
    source = image.first.get_attribute("src") if image.count() else None
    text = "\n".join(plot.locator(":scope > .liveplot-caption").all_inner_texts()).strip()
    return source, text


def _moves(plot) -> list:
    """One move for each enabled slider (a keyboard step, away from its end) and dropdown (to
    another option) of a LivePlot; each move returns what it did."""
    def step(slider):
        handle = slider.locator(".noUi-handle").first
        now, top = float(handle.get_attribute("aria-valuenow")), float(handle.get_attribute("aria-valuemax"))
        key = "ArrowLeft" if now >= top else "ArrowRight"
        handle.focus()
        handle.press(key)
        return f"slider {_label(slider)!r} {now:g} {key}"

    def choose(dropdown):
        select = dropdown.locator("select")
        current = select.input_value()
        other = next(v for v in select.locator("option").evaluate_all("os => os.map(o => o.value)") if v != current)
        select.select_option(other)
        return f"dropdown {_label(dropdown)!r} {current} -> {other}"

    moves = []
    sliders = plot.locator(":scope > .widget-hbox > .widget-slider")
    for index in range(sliders.count()):
        if sliders.nth(index).locator(".noUi-handle").count() and not sliders.nth(index).locator("[disabled]").count():
            moves.append(lambda slider=sliders.nth(index): step(slider))
    dropdowns = plot.locator(":scope > .widget-hbox > .widget-dropdown")
    for index in range(dropdowns.count()):
        select = dropdowns.nth(index).locator("select")
        if select.count() and select.is_enabled() and select.locator("option").count() > 1:
            moves.append(lambda dropdown=dropdowns.nth(index): choose(dropdown))
    return moves


def _label(control) -> str:
    label = control.locator(".widget-label")
    return (label.first.text_content() or "").strip() if label.count() else ""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_and_its_widgets_respond_in_jupyterlab(lab, browser, path):
    started = time.perf_counter()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    console_errors = []
    page.on("console", lambda message: console_errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: console_errors.append(str(error)))
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # here: Playwright may be absent (skip)

    try:
        page.goto(f"{lab.url}/lab/tree/notebooks/{path.name}?token={lab.token}&reset", timeout=KERNEL_START_MS)
        try:
            page.wait_for_function(
                "name => { const w = window.jupyterapp?.shell?.currentWidget;"
                " return w?.context?.path === 'notebooks/' + name && w.sessionContext?.session?.kernel?.status === 'idle'; }",
                arg=path.name, timeout=KERNEL_START_MS)
        except PlaywrightTimeout:
            raise AssertionError(f"{path.name}: no idle kernel after {KERNEL_START_MS / 1000:.0f} s; "
                                 f"console: {console_errors}\nserver log:\n{lab.log_tail()}") from None
        panel = page.locator(f'[id="{page.evaluate("window.jupyterapp.shell.currentWidget.id")}"]')
        page.evaluate("() => { window.__runAll = null; window.jupyterapp.commands.execute('notebook:run-all-cells')"
                      ".then(ok => { window.__runAll = {ok}; }, error => { window.__runAll = {error: String(error)}; }); }")
        try:
            page.wait_for_function("window.__runAll !== null", timeout=RUN_ALL_MS, polling=500)
        except PlaywrightTimeout:
            raise AssertionError(f"{path.name}: run-all did not finish in {RUN_ALL_MS / 1000:.0f} s") from None
        status = page.wait_for_function(
            "() => { const s = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status;"
            " return ['idle', 'dead', 'unknown', undefined].includes(s) && (s || 'no kernel'); }",
            timeout=RUN_ALL_MS, polling=500).json_value()
        assert status == "idle", f"{path.name}: the kernel is {status} after run-all (out of memory?)\n{lab.log_tail()}"
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

        # Every widget rendered.
        expected_widgets = sum(WIDGET_VIEW in o["mimes"] for c in cells for o in c["outputs"])
        page.wait_for_timeout(500)
        page.wait_for_function("panel => !panel.innerText.includes('Loading widget')", arg=panel.element_handle(),
                               timeout=WIDGETS_RENDER_MS)
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
        moved = []
        for index in range(plots.count()):
            plot = plots.nth(index)
            for move in _moves(plot):
                plot.scroll_into_view_if_needed()
                source, text = _liveplot_state(plot)
                assert source, f"{path.name}: LivePlot {index} shows no picture"
                redraw_started = time.perf_counter()
                what = move()
                try:
                    page.wait_for_function(REDRAWN_JS, arg=[plot.element_handle(), source], timeout=REDRAW_MS,
                                           polling=100)
                except PlaywrightTimeout:
                    status = plot.locator(":scope > .liveplot-status").inner_text().strip()
                    raise AssertionError(
                        f"{path.name}: LivePlot {index} ({what}) did not redraw within {REDRAW_MS / 1000:.0f} s; "
                        f"status {status!r}. A status stuck on busy means its draw function raised at the new "
                        "value: call it there outside the widget to see the traceback.") from None
                seconds = time.perf_counter() - redraw_started
                new_source, new_text = _liveplot_state(plot)
                assert new_source != source, f"{path.name}: LivePlot {index} ({what}) kept the same picture"
                assert new_text != text, f"{path.name}: LivePlot {index} ({what}) printed the same text {text!r}"
                assert plot.locator(STDERR).count() == 0, f"{path.name}: LivePlot {index} ({what}) shows stderr output"
                moved.append(f"{what} {seconds:.1f} s")
        print(f"\n{path.name}: run-all {run_seconds:.0f} s, {rendered} widgets rendered, "
              f"{plots.count()} LivePlots, moved: {moved or 'none'}; total {time.perf_counter() - started:.0f} s")
    finally:
        context.close()
        lab.shut_down_kernels()
