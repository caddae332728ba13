"""Live code on the course site: a "Run this page" control on every notebook page.

scripts/build_site.py calls two functions from here:

- ``copy_live_assets(static)`` puts thebe's prebuilt ``lib/`` (the npm package pinned in
  site/package-lock.json, patched below so it fetches nothing from a CDN) and
  site/course-live.js and .css into the site's _static folder;
- ``live_notebook(notebook, name)`` turns a page's working copy into the student edition's
  exercises (the stub that raises NotImplementedError, check cells without output, from
  scripts/build_student_edition.py) with the reference solution folded under each check
  in a closed "Show a solution", and adds the control with the page's cells as JSON: their
  sources (the hidden setup and import cells too, which run first), which are hidden, and
  which hold a live plot.

Binder (``scripts.course_repository``) gives the kernel in production. ``make site-live``
(``python -m scripts.site_live``) serves the site with a local Jupyter server instead: it
writes ``_static/course-live-server.json``, which the page reads when its control is used.

thebe is installed on its own: ``npm ci`` leaves it out (site/.npmrc omits optional
packages: its build tree is about 960 packages), and ``install_thebe`` unpacks the
tarball that ``npm pack`` fetches, after checking it against the lock file's integrity.
"""
from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat

from scripts import build_student_edition, course_repository

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
THEBE = SITE / "node_modules" / "thebe"
LIVE_FILES = ("course-live.js", "course-live.css")
SERVER_FILE = "course-live-server.json"  # written into _static by make site-live and the tests
CONFIG_ID = "course-live-config"

# thebe-core's widget manager fetches RequireJS from cdnjs, even for the built-in controls; the
# page's own RequireJS (site/package.json) serves instead. course-live.js sets the global.
REQUIREJS_CDN = '"https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min.js"'
REQUIREJS_LOCAL = "window.courseLiveRequireJs"
PATCHES = [(REQUIREJS_CDN, REQUIREJS_LOCAL)]


def thebe_pin(lock: Path = SITE / "package-lock.json") -> tuple[str, str]:
    """thebe's version and integrity (``sha512-...``) as site/package-lock.json pins them."""
    entry = json.loads(lock.read_text())["packages"].get("node_modules/thebe")
    if not entry:
        raise SystemExit(f"{lock} pins no thebe: run `npm install --package-lock-only` in site/")
    return entry["version"], entry["integrity"]


def install_thebe(target: Path = THEBE) -> Path:
    """thebe's package (its prebuilt lib/) in site/node_modules/thebe, fetched by ``npm pack``
    only when the installed one is not the pinned version; the tarball must match the lock."""
    version, integrity = thebe_pin()
    installed = target / "package.json"
    if installed.exists() and json.loads(installed.read_text()).get("version") == version:
        return target
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(["npm", "pack", f"thebe@{version}", "--pack-destination", scratch, "--silent"],
                       check=True, cwd=scratch, stdout=subprocess.DEVNULL)
        [tarball] = Path(scratch).glob("thebe-*.tgz")
        digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if digest != integrity:
            raise SystemExit(f"thebe {version} from npm is not the one site/package-lock.json pins "
                             f"({digest} != {integrity})")
        with tarfile.open(tarball) as archive:
            archive.extractall(scratch, filter="data")
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(Path(scratch) / "package", target)
    return target


def patch_thebe(text: str) -> str:
    """thebe's index.js with every string of PATCHES replaced; a string that is not there
    exactly once (a new thebe moved it) stops the build."""
    for old, new in PATCHES:
        if text.count(old) != 1:
            raise ValueError(f"thebe's index.js holds {text.count(old)} copies of {old}, not 1: "
                             "the patch in scripts/site_live.py no longer applies to this thebe")
        text = text.replace(old, new)
    return text


def copy_live_assets(static: Path) -> None:
    """thebe's lib (scripts, styles and licences, not its 12 MB of source maps) into
    ``static``/thebe with index.js patched, and the course's live script and styles."""
    lib = install_thebe() / "lib"
    target = static / "thebe"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for path in lib.iterdir():
        if path.is_file() and path.suffix in (".js", ".css", ".txt"):
            shutil.copy2(path, target / path.name)
    (target / "index.js").write_text(patch_thebe((lib / "index.js").read_text(encoding="utf-8")), encoding="utf-8")
    for name in LIVE_FILES:
        shutil.copy2(SITE / name, static / name)


# ---- a page's working copy ----------------------------------------------------------------------

HIDDEN_TAGS = ("remove-cell", "remove-input")


def _solution_details(source: str) -> nbformat.NotebookNode:
    fence = "````" if "```" in source else "```"
    return nbformat.v4.new_markdown_cell(
        f'<details class="course-solution"><summary>Show a solution</summary>\n\n{fence}python\n{source.rstrip()}\n{fence}\n\n</details>',
        metadata={"tags": ["course-solution"]})


def live_notebook(notebook, name: str):
    """The page's working copy with the student edition's exercises, each reference solution
    folded under its check, and the control with the page's cells (see the module docstring)."""
    notebook = copy.deepcopy(notebook)
    student = build_student_edition.student_notebook(notebook, name[:2])
    as_student = {cell.get("id"): cell for cell in student.cells}
    cells, solutions, code = [], {}, []
    for cell in notebook.cells:
        cell_tags = build_student_edition.tags(cell)
        if build_student_edition.SOLUTION in cell_tags:
            solutions[len(cells)] = cell.source
        if build_student_edition.SOLUTION in cell_tags or build_student_edition.CHECK in cell_tags:
            twin = as_student[cell.get("id")]
            cell = copy.deepcopy(cell)
            cell.source, cell.outputs, cell.execution_count = twin.source, twin.outputs, twin.execution_count
        cells.append(cell)
        if build_student_edition.CHECK in cell_tags and solutions:
            cells.append(_solution_details(solutions.pop(max(solutions))))
    for cell in cells:
        if cell.cell_type != "code":
            continue
        cell_tags = build_student_edition.tags(cell)
        code.append({"source": cell.source,
                     "page": "remove-cell" not in cell_tags,  # a div.cell on the page
                     "input": not any(tag in cell_tags for tag in HIDDEN_TAGS),  # its code shown
                     "live": "live_plot" in cell.metadata,  # its live widget replaces the static one
                     "exercise": build_student_edition.SOLUTION in cell_tags})
    config = {"page": name, "cells": code, "binder": {"repo": course_repository.REPOSITORY,
                                                      "ref": course_repository.BRANCH},
              "colab": f"https://colab.research.google.com/github/{course_repository.REPOSITORY}/blob/"
                       f"{course_repository.BRANCH}/notebooks/{name}",
              "download": f"../downloads/notebooks/{name}", "student": f"../downloads/student/{name}"}
    payload = json.dumps(config).replace("<", "\\u003c")  # no "</script>" inside the script element
    control = nbformat.v4.new_markdown_cell(
        '<div class="course-live" role="region" aria-label="Run this page">'
        '<button type="button" class="course-live-start">Run this page</button> '
        '<span class="course-live-status" role="status" aria-live="polite">The code on this page can run here, '
        'in a kernel of its own.</span></div>\n'
        f'<script type="application/json" id="{CONFIG_ID}">{payload}</script>\n'
        '<link rel="stylesheet" href="../_static/course-live.css">\n'
        '<script src="../_static/course-live.js" defer></script>', metadata={"tags": ["course-live"]})
    first_code = next((i for i, cell in enumerate(cells) if cell.cell_type == "code"), len(cells))
    header = next((i for i, cell in enumerate(cells[:first_code]) if cell.cell_type == "markdown"), None)
    cells.insert(0 if header is None else header + 1, control)
    notebook.cells = cells
    return notebook


# ---- make site-live ----------------------------------------------------------------------------

def free_port(ports: range) -> int:
    """The first port of ``ports`` nothing listens on at 127.0.0.1."""
    for port in ports:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return port
    raise SystemExit(f"no free port in {ports.start}-{ports.stop - 1}")


def jupyter_command(port: int, token: str, origin: str) -> list[str]:
    """A Jupyter server for the site's pages: kernels start in the repository's notebooks/
    (each page asks for its own session), and only the site's origin may use it."""
    command = [sys.executable, "-m", "jupyter", "server", "--no-browser", "--ip", "127.0.0.1", "--port", str(port),
               f"--IdentityProvider.token={token}", f"--ServerApp.allow_origin={origin}",
               f"--ServerApp.root_dir={ROOT}", "--ServerApp.port_retries=0"]
    if hasattr(os, "getuid") and os.getuid() == 0:
        command.append("--allow-root")
    return command


def write_server_file(static: Path, settings: dict) -> Path:
    """``_static/course-live-server.json``: where the pages find their kernels (``baseUrl`` and
    ``token`` of a Jupyter server, or ``binderUrl`` of another BinderHub)."""
    path = static / SERVER_FILE
    path.write_text(json.dumps(settings), encoding="utf-8")
    return path


def wait_for(url: str, seconds: float = 60) -> None:
    """Wait until ``url`` answers (a server just started), or fail saying which."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"{url} did not answer within {seconds:.0f} s")
            time.sleep(0.3)


def main(argv=None) -> int:
    """``make site-live``: build the site, serve it and a local Jupyter server, until Ctrl-C."""
    from scripts import build_site

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=8800, help="the site's port (the Jupyter server takes the next free one)")
    parser.add_argument("--no-build", action="store_true", help="serve build/site as it is")
    args = parser.parse_args(argv)
    if not args.no_build:
        print("Building the site first (a minute or so; --no-build serves build/site as it is)…", flush=True)
        build_site.build()
    # Ctrl-C, and a plain `kill`, stop both servers (a shell may start this with SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    site_port = free_port(range(args.port, args.port + 100))
    kernel_port = free_port(range(site_port + 1, site_port + 101))
    token, origin = secrets.token_hex(16), f"http://127.0.0.1:{site_port}"
    write_server_file(build_site.DEFAULT_OUT / "_static", {"baseUrl": f"http://127.0.0.1:{kernel_port}/", "token": token})
    from utils.threads import LIBRARY_VARIABLES  # one thread per kernel, as the stored outputs were made

    one_thread = {**os.environ, **dict.fromkeys(LIBRARY_VARIABLES, "1")}
    servers = [subprocess.Popen(jupyter_command(kernel_port, token, origin), env=one_thread, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True),
               subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory",
                                 str(build_site.DEFAULT_OUT), str(site_port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    try:
        wait_for(f"http://127.0.0.1:{kernel_port}/api/status?token={token}")
        wait_for(origin + "/index.html")
        print(f"The course site:  {origin}/index.html  (every notebook page: Run this page)\n"
              f"Its kernels:      http://127.0.0.1:{kernel_port}/  (a local Jupyter server, token in "
              f"{build_site.DEFAULT_OUT / '_static' / SERVER_FILE})\nCtrl-C stops both.", flush=True)
        while all(server.poll() is None for server in servers):
            time.sleep(0.5)
        raise SystemExit("a server stopped on its own: " + ", ".join(
            f"{name} (exit {server.returncode})" for name, server in zip(("jupyter", "site"), servers)
            if server.poll() is not None))
    except KeyboardInterrupt:
        print("\nstopping the site and the Jupyter server")
    finally:
        for server in servers:
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)  # they are in sessions of their own: Ctrl-C reached only this process
        for server in servers:
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        (build_site.DEFAULT_OUT / "_static" / SERVER_FILE).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
