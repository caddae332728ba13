"""A private JupyterLab server and headless Chromium, shared by the browser test
(tests/test_browser.py) and the browser part of the benchmark (benchmarks/browser.py).

Needs Debian's Chromium at /usr/bin/chromium (``apt-get install -y chromium``) and Playwright
for Python (requirements.txt); never ``playwright install``. The server serves a private copy
of the repository's notebooks (nothing the browser does can touch the real ones), with
private JUPYTER_* directories and settings, binds 127.0.0.1 and is stopped by its PID.
"""
from __future__ import annotations

import contextlib
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

from utils.threads import LIBRARY_VARIABLES

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
HOW_TO_ENABLE = ("Install Debian's Chromium: apt-get update && apt-get install -y chromium "
                 "(Playwright for Python comes from requirements.txt; do not run `playwright install`).")
THREADS = dict.fromkeys(LIBRARY_VARIABLES, "1")
KERNEL_START_MS = 180_000
RUN_ALL_MS = 900_000
LIVEPLOT = ".widget-vbox.liveplot"  # utils.widgets.LivePlot: controls, status, picture, caption


def missing_browser() -> str | None:
    """Why the browser cannot run here (no Chromium, no Playwright), or None when it can."""
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM}. {HOW_TO_ENABLE}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return f"Playwright for Python is not installed. {HOW_TO_ENABLE}"
    return None


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
    """A running JupyterLab server: its URL, token, process, log and served folder."""

    def __init__(self, url: str, token: str, process: subprocess.Popen, log: Path, root: Path):
        self.url, self.token, self.process, self.log, self.root = url, token, process, log, root

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


@contextlib.contextmanager
def running_lab(base: Path, extra_args: tuple[str, ...] = (), variables: dict = THREADS):
    """A JupyterLab server on a private copy of notebooks/ and docs/ under ``base``, stopped
    (by its PID) on exit; ``extra_args`` go to its command line, ``variables`` (one thread
    for every library, by default) to its environment and so to its kernels."""
    root = base / "course"
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
    env.update({key: str(value) for key, value in private.items()}, **variables)
    port, token = _free_port(), secrets.token_hex(24)
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
               "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    command += list(extra_args)
    log = base / "server.log"
    with open(log, "w") as log_file:
        process = subprocess.Popen(command, env=env, cwd=root, stdout=log_file, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = Lab(f"http://127.0.0.1:{port}", token, process, log, root)
    started = time.perf_counter()
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{server.log_tail()}")
            try:
                server.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.perf_counter() - started > 120:
                    raise RuntimeError(f"JupyterLab did not answer in 120 s:\n{server.log_tail()}") from None
                time.sleep(0.5)
        yield server
    finally:
        _stop(process)


@contextlib.contextmanager
def chromium():
    """Headless Debian Chromium driven by Playwright, closed on exit."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


def open_and_run_all(page, lab: Lab, relative_path: str, errors: list) -> float:
    """Open ``relative_path`` (under the served folder) in ``page``, wait for its kernel, run
    all cells and wait for the kernel to be idle again; return the seconds this took.
    Raises AssertionError with what went wrong (``errors``: the page's console errors)."""
    started = time.perf_counter()
    page.goto(f"{lab.url}/lab/tree/{relative_path}?token={lab.token}&reset", timeout=KERNEL_START_MS)
    wait_for_idle_kernel(page, lab, relative_path, errors)
    run_all(page, lab, relative_path)
    return time.perf_counter() - started


def wait_for_idle_kernel(page, lab: Lab, relative_path: str, errors: list) -> None:
    """Wait until ``relative_path`` is the notebook in front and its kernel is idle."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            "path => { const w = window.jupyterapp?.shell?.currentWidget;"
            " return w?.context?.path === path && w.sessionContext?.session?.kernel?.status === 'idle'; }",
            arg=relative_path, timeout=KERNEL_START_MS)
    except PlaywrightTimeout:
        state = page.evaluate("() => { const w = window.jupyterapp?.shell?.currentWidget;"
                              " return [w?.context?.path, w?.sessionContext?.session?.kernel?.status,"
                              " document.querySelector('.jp-Dialog')?.innerText]; }")
        raise AssertionError(f"{relative_path}: no idle kernel after {KERNEL_START_MS / 1000:.0f} s "
                             f"(in front: {state[0]}, kernel {state[1]}, dialog: {state[2]}); "
                             f"console: {errors}\nserver log:\n{lab.log_tail()}") from None


def run_all(page, lab: Lab, relative_path: str) -> None:
    """Run every cell of the notebook in front and wait until its kernel is idle again.
    Raises AssertionError if it is not (a kernel that died, out of memory for instance)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate("() => { window.__runAll = null; window.jupyterapp.commands.execute('notebook:run-all-cells')"
                  ".then(ok => { window.__runAll = {ok}; }, error => { window.__runAll = {error: String(error)}; }); }")
    try:
        page.wait_for_function("window.__runAll !== null", timeout=RUN_ALL_MS, polling=500)
    except PlaywrightTimeout:
        raise AssertionError(f"{relative_path}: run-all did not finish in {RUN_ALL_MS / 1000:.0f} s") from None
    status = page.wait_for_function(
        "() => { const s = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status;"
        " return ['idle', 'dead', 'unknown', undefined].includes(s) && (s || 'no kernel'); }",
        timeout=RUN_ALL_MS, polling=500).json_value()
    if status != "idle":
        raise AssertionError(f"{relative_path}: the kernel is {status} after run-all (out of memory?)\n{lab.log_tail()}")


def current_panel(page):
    """The locator of the notebook panel in front."""
    return page.locator(f'[id="{page.evaluate("window.jupyterapp.shell.currentWidget.id")}"]')


def wait_for_widgets(page, panel, timeout_ms: int = 120_000) -> None:
    """Wait until no widget output still says 'Loading widget'."""
    page.wait_for_timeout(500)
    page.wait_for_function("panel => !panel.innerText.includes('Loading widget')", arg=panel.element_handle(),
                           timeout=timeout_ms)


def label_of(control) -> str:
    """The description label of an ipywidgets control (a locator), or ''."""
    label = control.locator(".widget-label")
    return (label.first.text_content() or "").strip() if label.count() else ""


def slider_step(slider, key: str | None = None) -> str:
    """Press ``key`` on an ipywidgets slider (a locator): by default one arrow step away
    from its end; "End" and "Home" jump to its ends. Returns what it did."""
    handle = slider.locator(".noUi-handle").first
    now, top = float(handle.get_attribute("aria-valuenow")), float(handle.get_attribute("aria-valuemax"))
    key = key or ("ArrowLeft" if now >= top else "ArrowRight")
    handle.focus()
    handle.press(key)
    return f"slider {label_of(slider)!r} {now:g} {key}"


def dropdown_choice(dropdown, avoid=None) -> str:
    """Choose another option of an ipywidgets dropdown (a locator), not ``avoid`` if there is
    a third; returns what it did."""
    select = dropdown.locator("select")
    current = select.input_value()
    options = [v for v in select.locator("option").evaluate_all("os => os.map(o => o.value)") if v != current]
    other = next((v for v in options if v != avoid), options[0])
    select.select_option(other)
    return f"dropdown {label_of(dropdown)!r} {current} -> {other}"


def liveplot_controls(plot) -> list[tuple[str, object]]:
    """The enabled sliders and dropdowns of a LivePlot (a locator): ``(kind, locator)``."""
    controls = []
    sliders = plot.locator(":scope > .widget-hbox > .widget-slider")
    for index in range(sliders.count()):
        slider = sliders.nth(index)
        if slider.locator(".noUi-handle").count() and not slider.locator("[disabled]").count():
            controls.append(("slider", slider))
    dropdowns = plot.locator(":scope > .widget-hbox > .widget-dropdown")
    for index in range(dropdowns.count()):
        select = dropdowns.nth(index).locator("select")
        if select.count() and select.is_enabled() and select.locator("option").count() > 1:
            controls.append(("dropdown", dropdowns.nth(index)))
    return controls


# Arm a timer on one widget root: the first input event (key, pointer, or a select's input)
# starts it; the picture's src changing and the new picture decoding stops it.
ARM_JS = """plot => {
  const image = plot.querySelector(':scope > img.widget-image');
  const t = window.__e2e = {start: null, end: null, decoded: null, before: image.src, error: null, busy: false};
  const begin = event => { if (t.start === null) t.start = performance.now(); };
  for (const kind of ['keydown', 'pointerdown', 'input']) {
    document.addEventListener(kind, begin, {capture: true, once: true});
  }
  const status = plot.querySelector(':scope > .liveplot-status');
  if (status) {
    const watcher = new MutationObserver(() => {
      if (status.innerText.trim() !== '') { t.busy = true; watcher.disconnect(); }
    });
    watcher.observe(status, {subtree: true, childList: true, characterData: true});
  }
  const observer = new MutationObserver(() => {
    if (image.src === t.before) return;
    observer.disconnect();
    const changed = performance.now();
    image.decode().then(() => { t.end = performance.now(); t.decoded = t.end - changed; },
                        error => { t.error = String(error); t.end = performance.now(); });
  });
  observer.observe(image, {attributes: true, attributeFilter: ['src']});
}"""

DONE_JS = """plot => {
  const status = plot.querySelector(':scope > .liveplot-status');
  return window.__e2e.end !== null && (status === null || status.innerText.trim() === '');
}"""


def timed_move(page, plot, move, timeout_ms: int = 300_000) -> dict:
    """Do ``move()`` on the widget root ``plot`` (a locator) and time it in the page, from
    the input event until the new picture has decoded: ``{"what", "ms", "decode_ms", "busy"}``
    (``busy``: the status line showed something meanwhile)."""
    handle = plot.element_handle()
    page.evaluate(ARM_JS, handle)
    what = move()
    page.wait_for_function(DONE_JS, arg=handle, timeout=timeout_ms, polling="raf")
    timing = page.evaluate("window.__e2e")
    if timing["error"] or timing["start"] is None:
        raise AssertionError(f"{what}: no timing ({timing})")
    return {"what": what, "ms": timing["end"] - timing["start"], "decode_ms": timing["decoded"],
            "busy": timing["busy"]}
