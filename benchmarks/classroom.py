#!/usr/bin/env python
"""A class on one machine: the hub of classroom/ (what `make classroom` starts), measured.

    .venv/bin/python -m benchmarks.classroom --trial             # one student, in Chromium
    .venv/bin/python -m benchmarks.classroom --students 10 30    # the load test, into RESULTS.md

Both run as root and start a private hub (classroom/jupyterhub_config.py, ports 9710-9712 or
--base-port, students' servers on the next 90 ports, all on 127.0.0.1) with its state in a
temporary folder, each student's server running as a system user of their own; at the end
they stop the hub by its PID and remove those users.

--trial: a student logs in through headless Chromium, nbgitpuller copies the student edition
into their home folder and opens notebook 00, then the student opens 01 and runs it; every
exercise check must say "not done yet" and no cell may fail.

--students: first one student alone, then N students at once for each N: each logs in (the
login form's request, with their own password) and is followed to their first page, gets the student edition (nbgitpuller's API), runs --notebook in a kernel
of their server and moves one slider of its widget. Reported per N: the time from login to
the first page, the notebook's time against the one student alone, the slider's redraw, memory per
student (proportional set size of their server and kernel, shared libraries counted once)
and the hub's own (hub and proxy), and failures. The machine may be shared: the load average
is in the report.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.lab_session import ROOT, chromium, missing_browser, run_all, wait_for_idle_kernel
from benchmarks.report import MB, markdown_table, write_section
from scripts import classroom_accounts, classroom_host
from utils.threads import COURSE_THREADS, LIBRARY_VARIABLES

HEADING = "## A class on one machine"
RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
BASE_PORT = 9710  # the hub 9710, its proxy's API 9711, the hub's API 9712, students' servers 9720-9809
FOLDER = "residual-course"
PROXY = ROOT / "classroom" / "node_modules" / ".bin" / "configurable-http-proxy"


class Hub:
    """A running hub of classroom/ as root on ``base_port`` (public), +1 (proxy API), +2 (hub
    API), students' servers on +10 to +99, with its state in ``state``: its URL, the
    benchmark's service token, its process. ``stop`` stops it and removes the students' users."""

    def __init__(self, state: Path, base_port: int = BASE_PORT, students: tuple[str, ...] = (), **environment: str):
        state = state.resolve()
        self.state, self.token, self.port = state, secrets.token_hex(24), base_port
        self.url = f"http://127.0.0.1:{base_port}"
        self.repo_path = state / "student-edition.git"  # where the hub's config looks for it
        ports = {"CLASSROOM_PORT": str(base_port), "CLASSROOM_PROXY_API_PORT": str(base_port + 1),
                 "CLASSROOM_HUB_PORT": str(base_port + 2)}
        state.mkdir(parents=True, exist_ok=True)
        self.passwords = classroom_accounts.add_accounts(state, list(students))  # name -> password
        problems = classroom_host.preflight(state, classroom_host.hub_ports(ports))
        if problems:
            raise RuntimeError(" ".join(problems))
        classroom_host.prepare(state)
        bin_folder = Path(sys.executable).parent
        env = {**os.environ, **ports, "CLASSROOM_STATE": str(state),
               "CLASSROOM_SERVER_PORTS": f"{base_port + 10}-{base_port + 99}", "CLASSROOM_SERVICE_TOKEN": self.token,
               "PATH": f"{bin_folder}{os.pathsep}{os.environ.get('PATH', '')}",
               **environment}
        for variable in (*LIBRARY_VARIABLES, COURSE_THREADS):
            env.pop(variable, None)  # the course's own choice, as in a real class
        self.log = state / "hub.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen([str(bin_folder / "jupyterhub"), "-f",
                                             str(ROOT / "classroom" / "jupyterhub_config.py")],
                                            cwd=state, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        started = time.perf_counter()
        while True:
            try:
                self.api("GET", "/hub/api/")
                break
            except OSError:
                if self.process.poll() is not None or time.perf_counter() - started > 180:
                    self.stop()
                    raise RuntimeError(f"the hub did not start:\n{self.log_tail()}") from None
                time.sleep(0.5)
        self.seconds_to_start = time.perf_counter() - started

    def log_tail(self, characters: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-characters:]

    def api(self, method: str, path: str, body=None, timeout: float = 60):
        import requests

        response = requests.request(method, f"{self.url}{path}", json=body, timeout=timeout,
                                    headers={"Authorization": f"token {self.token}"})
        if response.status_code >= 400:
            raise OSError(f"{method} {path}: HTTP {response.status_code} {response.text[:300]}")
        return response.json() if response.content else None

    def stop(self) -> None:
        """Stop the hub by its PID (it stops the students' servers), then its process group;
        remove the system users it created, the teacher's too."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # what is left of the session we started
        except ProcessLookupError:
            pass
        classroom_host.remove_students(self.state)
        classroom_host.remove_teacher(self.state)

    def pss(self, user: str | None) -> int:
        """Summed PSS of a student's server and kernels (``user``), or of the hub and proxy (None)."""
        import psutil

        total = 0
        for process in psutil.Process(self.process.pid).children(recursive=True) + [psutil.Process(self.process.pid)]:
            try:
                owner = process.environ().get("JUPYTERHUB_USER")
                if owner == user or (user is None and owner is None):
                    total += process.memory_full_info().pss
            except psutil.Error:
                pass
        return total


def log_in(hub: Hub, user: str) -> float:
    """Log ``user`` in with their password, as the login form does, and follow them to
    their first page (nbgitpuller's, once their server runs); return the seconds it took."""
    import requests

    started = time.perf_counter()
    with requests.Session() as browser:
        browser.get(f"{hub.url}/hub/login", timeout=120).raise_for_status()
        browser.post(f"{hub.url}/hub/login", timeout=600, data={
            "username": user, "password": hub.passwords[user], "_xsrf": browser.cookies.get("_xsrf", "")}).raise_for_status()
        while not hub.api("GET", f"/hub/api/users/{user}")["servers"].get("", {}).get("ready"):
            if time.perf_counter() - started > 600:  # the spawn page waits for this in a browser
                raise RuntimeError(f"{user}'s server not ready after 600 s")
            time.sleep(0.5)
        first = browser.get(f"{hub.url}/user/{user}/", timeout=600)
        first.raise_for_status()
        if "/git-pull" not in first.url:
            raise RuntimeError(f"{user}'s first page is {first.url}, not nbgitpuller's")
    return time.perf_counter() - started


def pull(hub: Hub, user: str) -> None:
    """What the nbgitpuller link does: clone (or merge) the student edition into the home folder."""
    import requests

    response = requests.get(f"{hub.url}/user/{user}/git-pull/api", stream=True, timeout=600,
                            headers={"Authorization": f"token {hub.token}"},
                            params={"repo": str(hub.repo_path), "branch": "main", "targetpath": FOLDER})
    for line in response.iter_lines(decode_unicode=True):
        if line.startswith("data:"):
            event = json.loads(line[5:])
            if event.get("phase") == "error":
                raise RuntimeError(f"nbgitpuller: {event.get('message', event)}")
            if event.get("phase") == "finished":
                return
    raise RuntimeError("nbgitpuller's stream ended without finishing")


async def _execute(hub: Hub, user: str, kernel: str, cells: list[str], timeout: float) -> list[str]:
    """Run ``cells`` one by one in ``kernel`` over its websocket; return their stdout; raise on an error."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    url = f"ws://127.0.0.1:{hub.port}/user/{user}/api/kernels/{kernel}/channels"
    # tornado's 20 s default is too short for thirty students' kernels starting on two cores
    socket = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {hub.token}"},
                                                 connect_timeout=300, request_timeout=300))
    session, outputs = uuid.uuid4().hex, []
    try:
        for code in cells:
            msg_id = uuid.uuid4().hex
            socket.write_message(json.dumps({
                "header": {"msg_id": msg_id, "username": user, "session": session, "msg_type": "execute_request",
                           "version": "5.3", "date": dt.datetime.now(dt.timezone.utc).isoformat()},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True}}))
            text = []
            while True:
                raw = await asyncio.wait_for(socket.read_message(), timeout)
                if raw is None:
                    raise RuntimeError("the kernel's connection closed (did the kernel die?)")
                if not isinstance(raw, str):
                    continue  # binary frames: widget buffers
                message = json.loads(raw)
                if message.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = message["msg_type"]
                if kind == "stream":
                    text.append(message["content"]["text"])
                elif kind == "error":
                    raise RuntimeError(f"{message['content']['ename']}: {message['content']['evalue']}")
                elif kind == "status" and message["content"]["execution_state"] == "idle":
                    break  # iopub's idle comes after the cell's output (the shell reply may come before it)
            outputs.append("".join(text))
    finally:
        socket.close()
    return outputs


SLIDER = """import time as _t
from utils.widgets import LivePlot as _LivePlot
_plot = list(_LivePlot.instances)[-1]
_control = next(c for c in _plot.controls.values() if hasattr(c, "max"))
_start = _t.perf_counter()
_control.value = _control.max if _control.value != _control.max else _control.min
print("SLIDER", (_t.perf_counter() - _start) * 1000)"""


def student(hub: Hub, user: str, notebook: str, barrier: threading.Barrier) -> dict:
    """One student's visit: log in, get the student edition, run ``notebook``, move a slider."""
    import nbformat

    result = {"user": user}
    try:
        barrier.wait(timeout=600)
        result["login_s"] = log_in(hub, user)
        pull(hub, user)
        path = f"{FOLDER}/notebooks/{notebook}"
        session = hub.api("POST", f"/user/{user}/api/sessions",
                          {"path": path, "type": "notebook", "name": notebook, "kernel": {"name": "python3"}})
        cells = [cell.source for cell in nbformat.read(hub.state / "homes" / user / path, as_version=4).cells
                 if cell.cell_type == "code" and "course-setup" not in cell.metadata.get("tags", [])]
        started = time.perf_counter()
        asyncio.run(_execute(hub, user, session["kernel"]["id"], cells, timeout=1800))
        result["notebook_s"] = time.perf_counter() - started
        slider = asyncio.run(_execute(hub, user, session["kernel"]["id"], [SLIDER], timeout=600))[0]
        result["slider_ms"] = float(slider.split()[-1])
        result["pss"] = hub.pss(user)
    except Exception as error:  # a failure is a result of the load test
        result["error"] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:200]
    return result


SPARE_MEMORY = 3 * 2**30  # a class size is not run if it would leave less memory than this to the machine's other work
MEMORY_FLOOR = 1.5 * 2**30  # and the hub is stopped if free memory falls below this while it runs


def _stop_if_memory_runs_out(hub: Hub, finished: threading.Event, info: dict) -> None:
    """Stop the hub (its students then fail) before a shared machine runs out of memory."""
    import psutil

    while not finished.wait(2):
        if psutil.virtual_memory().available < MEMORY_FLOOR:
            info["stopped"] = f"the hub was stopped when free memory fell below {MEMORY_FLOOR / 2**30:.1f} GB"
            hub.stop()
            return


def load_test(levels: list[int], notebook: str, done_row=lambda rows, info: None,
              base_port: int = BASE_PORT) -> tuple[list[dict], dict]:
    """The one student alone, then each class size in ``levels`` (one that would leave less than
    SPARE_MEMORY free is reported as not run); ``done_row`` is called after each."""
    import psutil

    rows, info = [], {}
    with tempfile.TemporaryDirectory(prefix="classroom-") as state_folder:
        hub = Hub(Path(state_folder), base_port, students=tuple(f"s{n + 1}" for n in range(1 + sum(levels))))
        info["hub_start_s"] = hub.seconds_to_start
        try:
            done = 0
            for count in [1, *levels]:
                if rows and _median(rows[0]["results"], "pss"):  # a shared machine: leave the others room
                    needed = count * _median(rows[0]["results"], "pss")
                    free = psutil.virtual_memory().available
                    if free - needed < SPARE_MEMORY:
                        rows.append({"students": count, "not_run": f"needs about {needed / 2**30:.0f} GB, "
                                                                   f"{free / 2**30:.0f} GB free"})
                        done_row(rows, info)
                        continue
                users = [f"s{done + index + 1}" for index in range(count)]
                done += count
                barrier, finished = threading.Barrier(count), threading.Event()
                watchdog = threading.Thread(target=_stop_if_memory_runs_out, args=(hub, finished, info), daemon=True)
                watchdog.start()
                with ThreadPoolExecutor(count) as pool:
                    results = list(pool.map(lambda u: student(hub, u, notebook, barrier), users))
                finished.set()
                row = {"students": count, "results": results, "hub_pss": hub.pss(None),
                       "load": os.getloadavg()[0]}
                rows.append(row)
                done_row(rows, info)
                failures = [r["error"] for r in results if "error" in r]
                print(f"  {count} student(s): {len(failures)} failure(s) {failures[:2]}; "
                      f"notebook {[round(r.get('notebook_s', 0)) for r in results]} s", flush=True)
                for user in users:  # this round's students leave before the next round comes
                    try:
                        hub.api("DELETE", f"/hub/api/users/{user}/server", timeout=120)
                    except OSError:
                        pass
                time.sleep(5)  # the stopped servers release their memory
                if "stopped" in info:
                    break
        finally:
            hub.stop()
    return rows, info


def _median(results: list[dict], key: str):
    values = [r[key] for r in results if key in r]
    return statistics.median(values) if values else None


def report(rows: list[dict], info: dict, notebook: str, stamp: str) -> str:
    alone = _median(rows[0]["results"], "notebook_s")
    table = []
    for row in rows:
        if "not_run" in row:
            table.append([row["students"], *["–"] * 7, f"not run: {row['not_run']}"])
            continue
        results = row["results"]
        failures = [r for r in results if "error" in r]
        seconds = [r["notebook_s"] for r in results if "notebook_s" in r]
        table.append([
            "1 (alone)" if row is rows[0] else row["students"],
            f"{_median(results, 'login_s'):.0f}" if _median(results, "login_s") else "–",
            f"{statistics.median(seconds):.0f} / {max(seconds):.0f}" if seconds else "–",
            f"{statistics.median(seconds) / alone:.1f}" if seconds and alone else "–",
            f"{_median(results, 'slider_ms'):.0f}" if _median(results, "slider_ms") else "–",
            f"{_median(results, 'pss') / MB:.0f}" if _median(results, "pss") else "–",
            f"{row['hub_pss'] / MB:.0f}", f"{row['load']:.1f}",
            f"{len(failures)}" + (f" ({failures[0]['error']})" if failures else "")])
    return (f"{HEADING}\n\nMeasured {stamp} UTC by benchmarks/classroom.py: the hub of classroom/ "
            f"(started in {info['hub_start_s']:.0f} s) on this {os.cpu_count()}-core machine, each student's server "
            "and kernels running as their own system user; students logging in with their own passwords and "
            f"following the hub to their first page (nbgitpuller's), each getting the student edition with nbgitpuller, running {notebook} in a kernel "
            "of their own server and moving one slider of its widget; all students of a row at once. Memory: the "
            "proportional set size (shared libraries counted once) of a student's server and kernel after the "
            "notebook, and of the hub and its proxy. The machine was shared with other work: times are noisy."
            + (f" {info['stopped'].capitalize()}." if "stopped" in info else "") + "\n\n"
            + markdown_table(["Students", "Login to first page (s, median)", "Notebook (s, median / slowest)",
                              "× alone", "Slider redraw (ms, median)", "Per student (MB)", "Hub + proxy (MB)",
                              "Load average at the end", "Failures"], table))


OUTPUTS_JS = """() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells, texts = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') continue;
    for (let j = 0; j < cell.outputs.length; j++) texts.push(JSON.stringify(cell.outputs.get(j).toJSON()));
  }
  return texts;
}"""


def trial(base_port: int = BASE_PORT) -> None:
    """One student in Chromium: log in, land in notebook 00 of their copy, run 01."""
    problem = missing_browser()
    if problem:
        raise SystemExit(f"classroom trial needs a browser: {problem}")
    with tempfile.TemporaryDirectory(prefix="classroom-") as state_folder:
        hub = Hub(Path(state_folder), base_port, students=("student1",))
        print(f"hub started in {hub.seconds_to_start:.0f} s", flush=True)
        try:
            with chromium() as browser:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                errors = []
                page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                started = time.perf_counter()
                page.goto(f"{hub.url}/hub/login", timeout=120_000)
                page.fill("input[name=username]", "student1")
                page.fill("input[name=password]", hub.passwords["student1"])
                page.click("input[type=submit], button[type=submit]")
                page.wait_for_url(f"**/user/student1/lab/tree/{FOLDER}/notebooks/00_start_here.ipynb*",
                                  timeout=600_000)
                print(f"logged in and in notebook 00 of the student edition after "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
                pulled = Path(state_folder) / "homes" / "student1" / FOLDER / "notebooks"
                stub = (pulled / "01_residual_block_by_hand.ipynb").read_text()
                assert "NotImplementedError" in stub and "# BEGIN SOLUTION" not in stub, "not the student edition"
                relative = f"{FOLDER}/notebooks/01_residual_block_by_hand.ipynb"
                started = time.perf_counter()
                page.goto(f"{hub.url}/user/student1/lab/tree/{relative}", timeout=180_000)
                wait_for_idle_kernel(page, hub, relative, errors)
                run_all(page, hub, relative)
                text = page.evaluate(OUTPUTS_JS)  # from the model: cells scrolled away are not in the page
                checks = [t for t in text if "Exercise" in t and ("not done yet" in t or "correct" in t)]
                failed = sum('"output_type":"error"' in t for t in text)
                assert checks and all("not done yet" in t for t in checks), f"check outputs: {checks}"
                assert failed == 0, f"{failed} cell(s) failed"
                print(f"student1 ran 01 in {time.perf_counter() - started:.0f} s: {len(checks)} checks say "
                      f"'not done yet', no cell failed; student server and kernel {hub.pss('student1') / MB:.0f} MB, "
                      f"hub and proxy {hub.pss(None) / MB:.0f} MB", flush=True)
                page.screenshot(path=str(Path(tempfile.gettempdir()) / "classroom-trial.png"))
        finally:
            hub.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trial", action="store_true", help="one student through Chromium")
    parser.add_argument("--students", type=int, nargs="*", default=[10, 30], help="class sizes (default 10 30)")
    parser.add_argument("--base-port", type=int, default=BASE_PORT,
                        help=f"the hub's port; the next two and +10 to +99 are used too (default {BASE_PORT})")
    parser.add_argument("--notebook", default="11_deep_stack_recipes.ipynb",
                        help="the notebook each student runs (default 11: training loops and a widget)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"markdown file to update (default {RESULTS})")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: stop the hub on the way out
    if not PROXY.is_file():
        parser.error(f"no {PROXY}: run  cd classroom && npm ci")
    if args.trial:
        trial(args.base_port)
        return 0
    if os.geteuid() != 0:
        parser.error("run as root: the hub starts each student's server as a system user of their own")
    if not args.students or min(args.students) < 1 or sum(args.students) + 1 > 90:
        parser.error("--students: class sizes of at least 1, at most 89 students in all (90 server ports)")
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    def write(rows, info):  # after every class size, so an interrupted run still reports
        write_section(args.output, report(rows, info, args.notebook, stamp), HEADING)

    rows, info = load_test(args.students, args.notebook, write, args.base_port)
    print(report(rows, info, args.notebook, stamp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
