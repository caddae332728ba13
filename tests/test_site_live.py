"""Live code on the course site (scripts/site_live.py, site/course-live.js; README, "The
course as a website").

The fast tests check the build: thebe is the pinned one and its patch applies, and a page's
working copy shows the student edition's exercises with the solutions folded. The browser
tests copy the run's one site build (tests/test_site.py's), serve it on 127.0.0.1 beside a
JupyterLab server of their own (benchmarks/lab_session.py: a private copy of notebooks/,
stopped by its PID) and open the pages in headless Chromium with every request that does not
go to 127.0.0.1 blocked:

- every notebook page starts its kernel and runs every cell: no error, every stored text
  output again (tests/output_tolerance.py), on scalar kernels with one thread (the backend
  matrix's stand-in for a CPU without vector kernels, whose notebooks run only here); each
  exercise's stub is "not done yet", its first recorded wrong answer
  (tests/test_exercises_*.py) gets its own message, and the reference typed into the stub
  passes; each live plot's first control redraws the picture;
- two pages open at once have two kernels that share nothing;
- a kernel from a fake BinderHub (its event stream served here), and one that fails;
- no kernel at all, or one lost after it started: the page says so with the Colab and download
  links; static widgets stay, solutions stay folded;
- edits survive a restart and a reload, and leaving with edits that could not be stored asks.
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import importlib
import json
import re
import shutil
import socket
import urllib.parse
from pathlib import Path

import nbformat
import pytest

from benchmarks import lab_session as lab_tools
from scripts import backend_matrix, build_site, build_student_edition, course_repository, site_live
from tests import built_once, output_tolerance
from tests.test_browser import SCREENSHOTS
from tests.test_site import _QuietHandler, _axe, build_test_site, serving
from tests.test_browser import _require_chromium as require_chromium

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob(build_site.NOTEBOOK_GLOB))
PORTS = range(9100, 9200)
READY_MS, RUN_MS = 180_000, 600_000
NOT_DONE = "not done yet"

site_stack = pytest.mark.browser  # the site's build needs npm and the widget stack, as tests/test_site.py's


def exercise_cases() -> dict[tuple[str, str], object]:
    """Every exercise's recorded cases (tests/test_exercises_*.py), by (notebook, name)."""
    cases = {}
    for path in sorted((ROOT / "tests").glob("test_exercises_*.py")):
        module = importlib.import_module(f"tests.{path.stem}")
        for case in getattr(module, "CASES", []):
            cases[case.notebook, case.name] = case
    return cases


def _defines(source: str) -> str:
    """The name a solution cell defines (its first ``def`` or ``class`` at the left margin)."""
    return re.search(r"^(?:def|class)\s+(\w+)", source, re.MULTILINE).group(1)


# ---- the build ---------------------------------------------------------------------------------

@site_stack
def test_the_site_serves_the_pinned_thebe_with_its_requirejs_patch(tmp_path):
    version, integrity = site_live.thebe_pin()
    lib = site_live.install_thebe() / "lib"
    assert json.loads((lib.parent / "package.json").read_text())["version"] == version
    assert integrity.startswith("sha512-")
    # Fails when a new thebe no longer holds the CDN string the patch replaces.
    original = (lib / "index.js").read_text(encoding="utf-8")
    patched = site_live.patch_thebe(original)
    assert site_live.REQUIREJS_CDN not in patched and site_live.REQUIREJS_LOCAL in patched
    site_live.copy_live_assets(tmp_path)
    served = (tmp_path / "thebe" / "index.js").read_text(encoding="utf-8")
    # (thebe's default MathJax 2 URL stays in the file: course-live.js passes mathjaxUrl "", so it is never used.)
    assert served == patched and "ajax/libs/require.js" not in served
    assert not list((tmp_path / "thebe").glob("*.map"))
    assert {p.name for p in tmp_path.iterdir()} >= {"thebe", *site_live.LIVE_FILES}


def test_a_patch_that_no_longer_applies_stops_the_build():
    with pytest.raises(ValueError, match="no longer applies"):
        site_live.patch_thebe("fetch('https://example.org/require.js')")
    with pytest.raises(ValueError, match="2 copies"):
        site_live.patch_thebe(site_live.REQUIREJS_CDN * 2)


def test_a_page_shows_each_exercise_as_the_student_edition_with_the_solution_folded_under_its_check():
    path = ROOT / "notebooks" / "05_flexible_block.ipynb"
    teacher = nbformat.read(path, as_version=4)
    page = site_live.live_notebook(teacher, path.name)
    student = build_student_edition.student_notebook(teacher, "05")
    solutions = [c for c in teacher.cells if "solution" in c.metadata.get("tags", [])]
    stubs = [c.source for c in student.cells if "solution" in c.metadata.get("tags", [])]
    shown = [c for c in page.cells if "solution" in c.metadata.get("tags", [])]
    assert [c.source for c in shown] == stubs and all("raise NotImplementedError" in s for s in stubs)
    for cell in page.cells:
        if cell.cell_type == "code" and {"solution", "check"} & set(cell.metadata.get("tags", [])):
            assert cell.outputs == [], "a check's stored ✓ would contradict the stub above it"
    for solution in solutions:
        index = next(i for i, c in enumerate(page.cells) if c.get("id") == solution.get("id"))
        check = next(i for i in range(index + 1, len(page.cells)) if "check" in page.cells[i].metadata.get("tags", []))
        folded = page.cells[check + 1]
        assert folded.cell_type == "markdown" and folded.source.startswith('<details class="course-solution">')
        assert "<summary>Show a solution</summary>" in folded.source and " open" not in folded.source.split(">")[0]
        assert solution.source.rstrip() in folded.source
    answers = [c for c in page.cells if "answer" in c.metadata.get("tags", [])]
    assert answers and all(c.source.startswith("<details>") for c in answers), "homework answers stay folded"


def test_a_page_carries_every_code_cell_with_its_hidden_setup_cells_marked():
    path = ROOT / "notebooks" / "07_a_thousand_layers.ipynb"
    teacher = nbformat.read(path, as_version=4)
    page = site_live.live_notebook(teacher, path.name)
    [control] = [c for c in page.cells if "course-live" in c.metadata.get("tags", [])]
    payload = re.search(r'<script type="application/json" id="course-live-config">(.*?)</script>',
                        control.source, re.DOTALL).group(1)
    config = json.loads(payload)
    code = [c for c in page.cells if c.cell_type == "code"]
    assert [cell["source"] for cell in config["cells"]] == [c.source for c in code]
    hidden = [i for i, cell in enumerate(config["cells"]) if not cell["input"]]
    assert hidden and hidden == list(range(len(hidden))), "the setup and import cells come first, hidden"
    assert [cell["page"] for cell in config["cells"][:2]] == [False, True]  # remove-cell, then remove-input
    assert sum(cell["live"] for cell in config["cells"]) == 1
    assert config["binder"] == {"repo": course_repository.REPOSITORY, "ref": course_repository.BRANCH}
    assert config["colab"].endswith(f"/blob/{course_repository.BRANCH}/notebooks/{path.name}")


# ---- the site in a browser ---------------------------------------------------------------------

class FakeBinder(http.server.BaseHTTPRequestHandler):
    """A BinderHub's build endpoint: an event stream that ends "ready" with the test's
    JupyterLab (``reply``: "ready") or "failed"; it records the paths asked for."""
    reply, lab, asked = "ready", None, []

    def log_message(self, *args):
        pass

    def do_GET(self):
        type(self).asked.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        events = [{"phase": "waiting", "message": "Waiting for a build slot"},
                  {"phase": "building", "message": "Step 1/9"}]
        if self.reply == "ready":
            events.append({"phase": "ready", "message": "server running", "url": self.lab.url + "/",
                           "token": self.lab.token})
        else:
            events.append({"phase": "failed", "message": "the image did not build"})
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A copy of the run's one site build (tests/test_site.py's, tests/built_once.py): these
    tests write the kernel's address into the site, so they get their own copy, not a build."""
    require_chromium()
    built = built_once.folder(tmp_path_factory, "site", build_test_site)
    out = tmp_path_factory.mktemp("site-live") / "out"
    shutil.copytree(built / "out", out)
    return out


@pytest.fixture(scope="module")
def server(site):
    with serving(functools.partial(_QuietHandler, directory=str(site)), PORTS) as url:
        yield url


@pytest.fixture(scope="module")
def lab(server, tmp_path_factory):
    """The pages' Jupyter server, on the stand-in whose notebooks these runs check for the backend matrix."""
    stand_in = backend_matrix.kernel_variables(backend_matrix.NOTEBOOKS_IN_MAKE_TEST["tests/test_site_live.py"])
    with lab_tools.running_lab(tmp_path_factory.mktemp("kernels"), (f"--ServerApp.allow_origin={server}",),
                               stand_in) as running:
        yield running


@pytest.fixture(scope="module")
def browser(site):
    with lab_tools.chromium() as chromium:
        yield chromium


@contextlib.contextmanager
def kernel_source(site, settings: dict | None):
    """Where the pages find their kernels while the block runs: ``settings`` written to
    _static/course-live-server.json, or (None) no file, so the pages ask Binder."""
    path = site / "_static" / site_live.SERVER_FILE
    if settings is None:
        path.unlink(missing_ok=True)
    else:
        site_live.write_server_file(site / "_static", settings)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def local(lab) -> dict:
    return {"baseUrl": lab.url + "/", "token": lab.token}


@contextlib.contextmanager
def opened(browser, url: str, init_script: str | None = None):
    """A page in a context of its own, every request that does not go to 127.0.0.1 blocked;
    yields the page and the lists of blocked URLs and page errors."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    if init_script:
        context.add_init_script(init_script)
    page, outside, errors = context.new_page(), [], []

    def route(route):
        request = route.request.url
        if request.startswith(("data:", "blob:")) or urllib.parse.urlsplit(request).hostname == "127.0.0.1":
            route.continue_()
        else:
            outside.append(request)
            route.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(url, wait_until="load")
        yield page, outside, errors
    finally:
        context.close()


def start_kernel(page, expect: str = "ready") -> None:
    page.locator(".course-live-start").click()
    page.wait_for_function("s => document.documentElement.dataset.courseLive === s", arg=expect, timeout=READY_MS)


RUN_JS = """async ([index, source]) => {
  const cell = courseLive.state.cells[index];
  if (source !== null) cell.editor.setValue(source);
  await courseLive.run(cell);
  return JSON.parse(JSON.stringify(cell.thebe.outputs));
}"""


def run_cell(page, index: int, source: str | None = None) -> list[dict]:
    """Run the page's code cell ``index`` (``source`` typed into its editor first); its outputs."""
    return page.evaluate(RUN_JS, [index, source])


def first_visible(page) -> int:
    """The first code cell whose code the page shows (the setup and import cells are hidden)."""
    return page.evaluate("courseLive.state.cells.findIndex(c => c.config.input)")


def text_of(outputs: list[dict]) -> str:
    return "".join(output_tolerance.joined_text(o.get("text", "")) if o["output_type"] == "stream"
                   else output_tolerance.joined_text(o.get("data", {}).get("text/plain", "")) for o in outputs)


PICTURE_JS = """async plot => {
  const image = plot.querySelector(':scope > img.widget-image');
  const bytes = await (await fetch(image.src)).arrayBuffer();
  return Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))).map(b => b.toString(16).padStart(2, '0')).join('');
}"""


def _move_first_control(page, index: int, name: str) -> None:
    """Move the first control of the live plot in cell ``index``: the picture must change."""
    div = cell_div(page, index)
    plot = div.locator(f".course-live-output {lab_tools.LIVEPLOT}")
    plot.wait_for(timeout=RUN_MS)
    assert div.locator(".cell_output").is_hidden(), f"{name}: the static widget still shows beside the live one"
    before = page.evaluate(PICTURE_JS, plot.element_handle())
    kind, control = lab_tools.liveplot_controls(plot)[0]
    lab_tools.timed_move(page, plot, (lambda: lab_tools.slider_step(control)) if kind == "slider"
                         else (lambda: lab_tools.dropdown_choice(control)))
    assert page.evaluate(PICTURE_JS, plot.element_handle()) != before, f"{name}: moving its {kind} left the picture as it was"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_every_cell_and_exercise_runs_on_the_page(site, server, lab, browser, path):
    teacher = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    cases = exercise_cases()
    with kernel_source(site, local(lab)), opened(browser, f"{server}/notebooks/{path.stem}.html") as (page, outside, errors):
        start_kernel(page)
        configs = page.evaluate("courseLive.state.cells.map(c => c.config)")
        assert len(configs) == len(teacher)
        problems, checked = [], 0
        for index, cell in enumerate(teacher):
            tags = cell.metadata.get("tags", [])
            if "solution" in tags:
                case = cases[path.name, _defines(cell.source)]
                check = next(i for i in range(index + 1, len(teacher)) if "check" in teacher[i].metadata.get("tags", []))
                run_cell(page, index)
                assert NOT_DONE in text_of(run_cell(page, check)), f"{path.name} {case.name}: the stub is not 'not done yet'"
                label, wrong, fragment = case.wrong[0]
                run_cell(page, index, wrong)
                told = text_of(run_cell(page, check))
                assert fragment in told, f"{path.name} {case.name}, recorded wrong answer {label!r}: the page said {told!r}"
                fresh = run_cell(page, index, cell.source)  # the reference typed into the stub
                checked += 1
            else:
                fresh = run_cell(page, index)
            errors_out = [o for o in fresh if o["output_type"] == "error"]
            assert not errors_out, f"{path.name} cell {index}: {errors_out[0].get('ename')}: {errors_out[0].get('evalue')}"
            if "check" in tags:
                assert text_of(fresh).startswith("✓"), f"{path.name} cell {index}: the reference did not pass: {text_of(fresh)}"
            if output_tolerance.compared(cell):
                problems += [f"cell {index}: {p}" for p in output_tolerance.cell_differences(cell, fresh)]
        assert checked == sum("solution" in c.metadata.get("tags", []) for c in teacher)
        assert not problems, f"{path.name}: outputs differ from the stored ones:\n" + "\n".join(problems)
        for index, config in enumerate(configs):
            if config["live"]:
                _move_first_control(page, index, path.name)
        # axe-core with every cell run and the live controls on the page, once the reading aids
        # have named the live parts (they do it on the page's next change; this waits for a hang only)
        page.wait_for_function(LIVE_PARTS_NAMED_JS, timeout=RUN_MS)
        for width in (1300, 640):  # a laptop's and a phone's width: at the narrow one a long line would scroll
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_function(SCROLLING_BLOCKS_REACHABLE_JS, timeout=RUN_MS)  # the theme redoes its tab stops on a resize
            violations = _axe(page)
            assert not violations, f"{path.name} at {width} px with its cells run and its live widgets: axe-core found {violations}"
        assert not outside, f"{path.name} asked for something outside 127.0.0.1: {outside}"
        assert not errors, f"{path.name}: errors in the page: {errors}"


SCROLLING_BLOCKS_REACHABLE_JS = """() => [...document.querySelectorAll('pre')]
  .every(p => p.tabIndex === 0 || (p.scrollWidth <= p.clientWidth && p.scrollHeight <= p.clientHeight))"""

LIVE_PARTS_NAMED_JS = """() => [...document.querySelectorAll('.course-live-output .noUi-handle')].every(h => h.getAttribute('aria-label'))
  && [...document.querySelectorAll('.course-live-output img')].every(i => i.hasAttribute('alt'))
  && [...document.querySelectorAll('div.cell .thebe-input textarea')].every(t => t.getAttribute('aria-label'))"""


PROBE = "print('live_probe' in globals(), __import__('os').getcwd().endswith('notebooks'))"


@pytest.mark.browser
def test_two_pages_open_at_once_have_two_kernels_that_share_nothing(site, server, lab, browser):
    with kernel_source(site, local(lab)), \
            opened(browser, f"{server}/notebooks/{NOTEBOOKS[1].stem}.html") as (first, _, _), \
            opened(browser, f"{server}/notebooks/{NOTEBOOKS[2].stem}.html") as (second, _, _):
        start_kernel(first)
        start_kernel(second)
        kernels = [page.evaluate("courseLive.state.session.kernel.id") for page in (first, second)]
        assert kernels[0] != kernels[1]
        paths = {session["path"] for session in lab.api("/api/sessions") if session["kernel"]["id"] in kernels}
        assert len(paths) == 2 and all(p.startswith("notebooks/") for p in paths)
        run_cell(first, first_visible(first), "live_probe = 1\n" + PROBE)
        assert text_of(run_cell(first, first_visible(first), PROBE)).split() == ["True", "True"]
        assert text_of(run_cell(second, first_visible(second), PROBE)).split() == ["False", "True"], (
            "the second page sees the first's variable")


FAILURE = re.compile(r"No kernel could be started for this page .* open it in Colab or download the notebook\.")


def _says_no_kernel(page, name: str, sentence: re.Pattern = FAILURE) -> None:
    status = page.locator(".course-live-status")
    assert sentence.fullmatch(status.inner_text().strip()), status.inner_text()
    links = {a.inner_text(): a.get_attribute("href") for a in status.locator("a").all()}
    assert links["open it in Colab"].startswith("https://colab.research.google.com/github/")
    assert links["download the notebook"] == f"../downloads/notebooks/{name}"


@pytest.mark.browser
@pytest.mark.parametrize("where", ["local server not running", "Binder blocked"])
def test_without_a_kernel_the_page_says_so_and_stays_as_it_was(site, server, browser, where):
    name = "07_a_thousand_layers.ipynb"
    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]  # nothing listens there once the probe is closed
    settings = {"baseUrl": f"http://127.0.0.1:{closed}/", "token": "x"} if where.startswith("local") else None
    with kernel_source(site, settings), opened(browser, f"{server}/notebooks/07_a_thousand_layers.html") as (page, outside, _):
        page.wait_for_function("document.querySelectorAll('.cell_output .widget-subarea img.widget-image').length > 0")
        start_kernel(page, "failed")
        _says_no_kernel(page, name)
        if where == "Binder blocked":
            assert any(url.startswith("https://mybinder.org/build/gh/") for url in outside)
        # The static widget still answers its controls, and no solution is unfolded.
        area = page.locator(".cell_output .widget-subarea").last
        title = area.locator("img.widget-image:visible").get_attribute("title")
        area.locator(".widget-toggle-buttons button").nth(1).click()
        page.wait_for_function("([t]) => Array.from(document.querySelectorAll('.cell_output .widget-subarea img.widget-image'))"
                               ".some(i => i.checkVisibility() && i.title !== t)", arg=[title])
        assert page.locator("details.course-solution").count() == 2
        assert page.locator("details[open]").count() == 0
        # Each solution is inside its closed fold (a div ended inside the fold had put it after
        # the fold, on show), so none of its lines can be seen.
        assert page.locator("details.course-solution pre").count() == 2
        assert not any(line.is_visible() for line in page.get_by_text("BEGIN SOLUTION").all())


@pytest.mark.browser
def test_a_kernel_from_binder_and_binder_failing(site, server, lab, browser):
    FakeBinder.lab, FakeBinder.asked = lab, []
    with serving(FakeBinder, PORTS) as binder:
        for reply in ("ready", "failed"):
            FakeBinder.reply = reply
            with kernel_source(site, {"binderUrl": binder}), \
                    opened(browser, f"{server}/notebooks/{NOTEBOOKS[1].stem}.html") as (page, outside, _):
                page.evaluate("localStorage.clear()")  # no saved Binder server from the last round
                start_kernel(page, "ready" if reply == "ready" else "failed")
                if reply == "ready":
                    assert text_of(run_cell(page, first_visible(page), "print(6 * 7)")).strip() == "42"
                else:
                    _says_no_kernel(page, NOTEBOOKS[1].name)
                assert not outside
    assert FakeBinder.asked[0] == f"/build/gh/{course_repository.REPOSITORY}/{course_repository.BRANCH}"


CHECK_05_2 = "ex.rezero_block.check(ReZeroBlock)"


def cell_div(page, index: int):
    """The page's div.cell of code cell ``index`` (cells removed from the page have none)."""
    return page.locator("div.cell").nth(page.evaluate(
        "i => courseLive.state.cells.slice(0, i).filter(c => c.config.page).length", index))


def _run_by_hand(page, index: int, text: str) -> None:
    """Press cell ``index``'s run button and wait until its output shows ``text``."""
    div = cell_div(page, index)
    div.locator(".thebe-run-button").click()
    div.locator(".course-live-output").get_by_text(text, exact=False).wait_for(timeout=RUN_MS)


def _screenshot(page, index: int, name: str) -> None:
    """The exercise above code cell ``index`` and its check, for the README (make screenshots)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_function("Array.from(document.querySelectorAll('.thebe-busy')).every(b => b.style.display === 'none')")
    cell_div(page, index).evaluate("e => e.previousElementSibling.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(SCREENSHOTS / name))


@pytest.mark.browser
def test_05_2_checked_in_place_and_edits_survive_a_restart_and_a_reload(site, server, lab, browser):
    path = ROOT / "notebooks" / "05_flexible_block.ipynb"
    teacher = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    check = next(i for i, c in enumerate(teacher) if c.source.strip() == CHECK_05_2)
    solution = max(i for i in range(check) if "solution" in teacher[i].metadata.get("tags", []))
    case = exercise_cases()[path.name, "ReZeroBlock"]
    _, wrong, fragment = next(w for w in case.wrong if w[0] == "alpha starts at 1")
    with kernel_source(site, local(lab)), opened(browser, f"{server}/notebooks/{path.stem}.html") as (page, _, _):
        start_kernel(page)
        # A learner types a wrong answer into 05.2's stub, runs it and its check: the named message.
        cell_div(page, solution).locator(".CodeMirror").click()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(wrong)
        run_cell(page, solution)  # what the learner typed
        _run_by_hand(page, check, fragment)
        _screenshot(page, solution, "site_05_live_check_wrong.png")
        # The edit stays through a kernel restart (which runs the setup again)...
        page.locator(".course-live-restart").click()
        page.wait_for_function("document.querySelector('.course-live-status').innerText.startsWith('The kernel restarted')",
                               timeout=READY_MS)
        assert page.evaluate(f"courseLive.state.cells[{solution}].editor.getValue()") == wrong
        run_cell(page, solution)
        assert fragment in text_of(run_cell(page, check))
        # ...and through a reload: shown before the kernel starts, and in the editor after.
        page.wait_for_function(f"localStorage.getItem('course-live:{path.name}') !== null")
        page.reload(wait_until="load")
        assert "nn.Parameter(torch.ones(()))" in cell_div(page, solution).locator(".cell_input").inner_text()
        assert "back in 1 cell" in page.locator(".course-live-status").inner_text()
        start_kernel(page)
        assert page.evaluate(f"courseLive.state.cells[{solution}].editor.getValue()") == wrong
        # The check's hint button answers under the check, the next hint at the next press, and
        # leaves the check as it was; then the learner fixes the answer and sees ✓.
        hint = cell_div(page, check).locator(".course-live-hint")
        hint.click()
        cell_div(page, check).locator(".course-live-output").get_by_text("Hint 1 of", exact=False).wait_for(timeout=RUN_MS)
        hint.click()
        cell_div(page, check).locator(".course-live-output").get_by_text("Hint 2 of", exact=False).wait_for(timeout=RUN_MS)
        assert page.evaluate(f"courseLive.state.cells[{check}].editor.getValue()") == CHECK_05_2
        run_cell(page, solution, wrong.replace("torch.ones", "torch.zeros"))  # the fix: alpha starts at 0
        _run_by_hand(page, check, "✓ Exercise 05.2")
        _screenshot(page, solution, "site_05_live_check_fixed.png")


LOST = re.compile(r"The connection to this page's kernel was lost .* your edits are kept in this browser.* "
                  r"Try again, open it in Colab or download the notebook\.")


@pytest.mark.browser
def test_a_kernel_lost_after_it_started_is_said_in_one_sentence(site, server, browser, tmp_path):
    # The page's Jupyter server stops while the page is open: running a cell must not wait for
    # ever under "Kernel ready"; the page says what happened, with the Colab and download links.
    stopping = contextlib.ExitStack()
    own = stopping.enter_context(lab_tools.running_lab(tmp_path, (f"--ServerApp.allow_origin={server}",)))
    try:
        with kernel_source(site, local(own)), opened(browser, f"{server}/notebooks/{NOTEBOOKS[1].stem}.html") as (page, _, _):
            start_kernel(page)
            stopping.close()  # the server and its kernels stop (by PID)
            cell_div(page, first_visible(page)).locator(".thebe-run-button").click()
            page.wait_for_function("document.documentElement.dataset.courseLive === 'lost'", timeout=READY_MS)
            _says_no_kernel(page, NOTEBOOKS[1].name, LOST)
            assert page.locator(".course-live-start").inner_text() == "Try again"
            assert page.locator(".course-live-run-all").is_hidden()
    finally:
        stopping.close()


@pytest.mark.browser
def test_leaving_with_edits_that_could_not_be_stored_asks_first(site, server, lab, browser):
    no_storage = "Storage.prototype.setItem = function () { throw new DOMException('full', 'QuotaExceededError'); };"
    with kernel_source(site, local(lab)), opened(browser, f"{server}/notebooks/{NOTEBOOKS[1].stem}.html",
                                                 init_script=no_storage) as (page, _, _):
        start_kernel(page)
        page.locator(".cell_input .CodeMirror").first.click()
        page.keyboard.type("# my note")
        # the save after the typing pause has been tried, and failed: the edit is still unsaved
        page.wait_for_function("courseLive.state.saveTimer === null && courseLive.state.unsaved", timeout=READY_MS)
        with page.expect_event("dialog", timeout=10_000) as asked:
            page.close(run_before_unload=True)
        assert asked.value.type == "beforeunload"
        asked.value.accept()
