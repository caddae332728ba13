"""The classroom and Binder configuration: the hub's config loads and points at what exists,
the Zero to JupyterHub values parse and ask for what the measurements say a student needs,
Binder's server settings cap and cull kernels, and the course's kernel manager really shuts
down the longest-idle kernel to make room (real kernels, no browser)."""
from __future__ import annotations

import asyncio
import csv
import json
import os
import pwd
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest
import yaml
from traitlets.config import PyFileConfigLoader

from benchmarks import cpu_share
from benchmarks.report import write_section
from scripts import classroom_host
from scripts import publish_student_edition as publish

ROOT = Path(__file__).resolve().parent.parent
BINDER_CONFIG = ROOT / "binder" / "jupyter_server_config.py"
HUB_CONFIG = ROOT / "classroom" / "jupyterhub_config.py"
Z2JH = ROOT / "classroom" / "z2jh" / "config.yaml"


def load(path: Path, **environment):
    """The traitlets config a Jupyter application would read from ``path``."""
    saved = {key: os.environ.get(key) for key in environment}
    os.environ.update(environment)
    try:
        return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def gigabytes(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)([KMGT])", str(text)).groups()
    return float(number) * {"K": 2**-20, "M": 2**-10, "G": 1, "T": 2**10}[unit]


# Needs jupyter_server (JupyterLab's), which make test-versions' environments leave out: marked
# slow, so it runs in make test and not there.
@pytest.mark.slow
def test_binder_server_caps_and_culls_kernels():
    config = load(BINDER_CONFIG)
    manager = config.ServerApp.kernel_manager_class
    assert manager.__name__ == "CourseKernelManager"
    assert config.MappingKernelManager.cull_idle_timeout == 20 * 60 and config.MappingKernelManager.cull_connected
    assert config.MappingKernelManager.cull_busy is False
    assert config.LabApp.news_url is None
    assert not any(config.ServerApp.jpserver_extensions.values()), "students get no nbgrader extension"


def test_binder_postbuild_installs_the_settings_outside_home():
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "set -e" in post_build and "$HOME" not in post_build and "${HOME}" not in post_build
    for name in ("jupyter_server_config.py", "overrides.json"):
        assert f"binder/{name}" in post_build and (ROOT / "binder" / name).is_file()


# Needs jupyter_server (JupyterLab's), which make test-versions' environments leave out: marked
# slow, so it runs in make test and not there.
@pytest.mark.slow
def test_the_kernel_manager_shuts_down_the_longest_idle_kernel_to_make_room(tmp_path):
    """Three kernels allowed; a fourth start shuts down the one idle longest."""
    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager  # noqa: F401

    manager_class = load(BINDER_CONFIG, COURSE_MAX_KERNELS="2").ServerApp.kernel_manager_class
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path)}

    async def scenario():
        manager = manager_class(root_dir=str(tmp_path), connection_dir=str(tmp_path))
        try:
            first = await manager.start_kernel(env=env)
            second = await manager.start_kernel(env=env)
            for name in (first, second):
                manager.get_kernel(name).execution_state = "idle"
            manager.get_kernel(second).last_activity = manager.get_kernel(first).last_activity.replace(
                year=manager.get_kernel(first).last_activity.year + 1)  # the first is idle longest
            third = await manager.start_kernel(env=env)
            return first, second, third, list(manager.list_kernel_ids())
        finally:
            await manager.shutdown_all(now=True)

    first, second, third, running = asyncio.run(scenario())
    assert first not in running and sorted(running) == sorted([second, third])


def test_the_hub_config_points_at_what_exists():
    state = "/tmp/classroom-state"
    config = load(HUB_CONFIG, CLASSROOM_STATE=state, CLASSROOM_TEACHER="teacher")
    assert config.JupyterHub.authenticator_class == "scripts.classroom_login.ClassListAuthenticator"
    assert config.ClassListAuthenticator.passwords_file == f"{state}/hub/passwords.json"
    assert config.Authenticator.admin_users == {"teacher"} and "allow_all" not in config.Authenticator
    assert config.JupyterHub.spawner_class == "localprocess"  # each server as its student's own system user
    assert config.JupyterHub.cookie_secret_file == f"{state}/hub/jupyterhub_cookie_secret"
    assert config.JupyterHub.db_url == f"sqlite:///{state}/hub/jupyterhub.sqlite"
    assert config.ConfigurableHTTPProxy.command[0].endswith("classroom/node_modules/.bin/configurable-http-proxy")
    assert config.Spawner.cmd == [f"{state}/python/bin/jupyterhub-singleuser"]
    assert config.Spawner.environment["PYTHONPATH"] == f"{state}/utils/current"
    assert str(ROOT) not in repr(config.Spawner.environment), "nothing students run may lie in the teacher edition"
    assert callable(config.Spawner.pre_spawn_hook)
    url = urllib.parse.urlparse(config.Spawner.default_url)
    query = urllib.parse.parse_qs(url.query)
    assert url.path == "/git-pull" and query["repo"] == [f"{state}/student-edition.git"]
    assert query["urlpath"][0].endswith("notebooks/00_start_here.ipynb")
    assert config.Spawner.cpu_limit == 1 and gigabytes(config.Spawner.mem_limit) == 2


def test_each_student_gets_a_password_of_their_own_kept_only_as_a_hash(tmp_path, monkeypatch):
    """make classroom-accounts: a password per name on the class list and for the teacher, the
    hashes and slips root's only; new names added without changing anyone's password; one reset;
    the hub's authenticator admits a name with its own password only. Bad input: one sentence."""
    from scripts import classroom_accounts as accounts
    from scripts.classroom_login import ClassListAuthenticator

    roster = tmp_path / "class.txt"
    roster.write_text("alice\nbob  # sits at the back\n\n")
    monkeypatch.setenv("CLASSROOM_ROSTER", str(roster))
    monkeypatch.delenv("CLASSROOM_TEACHER", raising=False)
    state = tmp_path / "state"
    first = accounts.accounts_from_environment(state)
    assert sorted(first) == ["alice", "bob", "teacher"] and len(set(first.values())) == 3
    hashes = state / "hub" / accounts.HASHES
    for path in (hashes, state / "hub" / accounts.SLIPS, state / "hub" / accounts.PRINTABLE):
        assert path.stat().st_mode & 0o777 == 0o600
    stored = json.loads(hashes.read_text())
    assert all(password not in hashes.read_text() for password in first.values())
    assert accounts.verify(first["bob"], stored["bob"]) and not accounts.verify(first["bob"], stored["alice"])
    assert first["alice"] in (state / "hub" / accounts.PRINTABLE).read_text()

    roster.write_text("alice\nbob\ncarol\n")
    assert list(accounts.accounts_from_environment(state)) == ["carol"]
    kept = json.loads(hashes.read_text())
    assert kept["alice"] == stored["alice"] and kept["bob"] == stored["bob"]
    new = accounts.reset(state, "bob")
    assert accounts.verify(new, json.loads(hashes.read_text())["bob"]) and new != first["bob"]
    with (state / "hub" / accounts.SLIPS).open() as handle:
        slips = {row["name"]: row["password"] for row in csv.DictReader(handle)}
    assert slips["bob"] == new and slips["alice"] == first["alice"]

    login = ClassListAuthenticator(passwords_file=str(hashes))
    def attempt(name, password):
        return asyncio.run(login.get_authenticated_user(None, {"username": name, "password": password}))
    assert attempt("alice", first["alice"])["name"] == "alice"
    assert attempt("alice", new) is None  # bob's password with alice's name
    assert attempt("bob", first["bob"]) is None  # the password before the reset
    assert attempt("mallory", new) is None and not login.check_allowed("mallory")

    with pytest.raises(KeyError, match="'dave' has no account on this hub"):
        accounts.reset(state, "dave")
    monkeypatch.setenv("CLASSROOM_ROSTER", str(tmp_path / "missing.txt"))
    assert accounts.class_list_problem(state) == (f"CLASSROOM_ROSTER={tmp_path / 'missing.txt'}: no such file (the "
                                                  "class list, one name a line).")
    monkeypatch.delenv("CLASSROOM_ROSTER")
    monkeypatch.setenv("CLASSROOM_STUDENTS", "alice Bob")
    assert "the class list names 'Bob' cannot be a system user's name" in accounts.class_list_problem(state)
    monkeypatch.delenv("CLASSROOM_STUDENTS")
    assert accounts.class_list_problem(tmp_path / "elsewhere").startswith("No class list: name the students")


def test_the_slips_say_where_the_hub_is(tmp_path, monkeypatch):
    """Each slip holds the hub's address: its own from CLASSROOM_IP and CLASSROOM_PORT, or the
    one the teacher gives (CLASSROOM_URL); writing the slips again puts in the new one."""
    from scripts import classroom_accounts as accounts

    for variable in ("CLASSROOM_URL", "CLASSROOM_IP", "CLASSROOM_TEACHER"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("CLASSROOM_PORT", "9311")
    assert classroom_host.hub_address() == "http://127.0.0.1:9311/"
    state = tmp_path / "state"
    passwords = accounts.add_accounts(state, ["alice"])
    page = (state / "hub" / accounts.PRINTABLE).read_text()
    assert "go to <code>http://127.0.0.1:9311/</code><br>name: <b>alice</b>" in page
    monkeypatch.setenv("CLASSROOM_URL", "https://hub.school.example/")
    monkeypatch.setenv("CLASSROOM_STUDENTS", "alice")
    monkeypatch.delenv("CLASSROOM_ROSTER", raising=False)
    assert accounts.accounts_from_environment(state) == {}  # no new name: the slips are written again all the same
    with (state / "hub" / accounts.SLIPS).open() as handle:
        rows = {row["name"]: row for row in csv.DictReader(handle)}
    assert rows["alice"] == {"name": "alice", "password": passwords["alice"], "address": "https://hub.school.example/"}
    assert "http://127.0.0.1:9311/" not in (state / "hub" / accounts.PRINTABLE).read_text()


def test_the_end_of_term_keeps_the_teacher_unless_asked(tmp_path, monkeypatch, capsys):
    """--remove-students removes the students' users only and says that the teacher's user and
    home, with the course and its grades, are kept (the teacher is recognised by the comment the
    hub gave their user even when CLASSROOM_TEACHER is not set now); --remove-teacher removes
    the teacher and names what goes with them. (System users faked: no root needed.)"""
    homes = tmp_path / "homes"
    users = [pwd.struct_passwd((name, "x", 2000 + n, 2000 + n, classroom_host.USER_COMMENT[name == "mrsgrey"],
                                str(homes / name), "/bin/bash")) for n, name in enumerate(["alice", "mrsgrey", "bob"])]
    users.append(pwd.struct_passwd(("root", "x", 0, 0, "root", "/root", "/bin/bash")))
    removed = []
    monkeypatch.setattr(classroom_host.pwd, "getpwall", lambda: [u for u in users if u.pw_name not in removed])
    monkeypatch.setattr(classroom_host.subprocess, "run",
                        lambda command, **_: removed.append(command[-1]) if command[0] == "userdel" else None)
    monkeypatch.setenv("CLASSROOM_STATE", str(tmp_path))
    monkeypatch.delenv("CLASSROOM_TEACHER", raising=False)
    assert classroom_host.main(["--remove-students"]) == 0
    assert removed == ["alice", "bob"]
    assert capsys.readouterr().out.splitlines() == [
        "removed the students' users and home folders: alice bob",
        f"kept the teacher's user mrsgrey and home folder {homes / 'mrsgrey'}, with the nbgrader course and its grades "
        f"({homes / 'mrsgrey' / 'nbgrader'}); --remove-teacher removes them too"]
    assert classroom_host.main(["--remove-teacher"]) == 0
    assert removed == ["alice", "bob", "mrsgrey"]
    assert capsys.readouterr().out.splitlines() == [
        f"removed the teacher's user mrsgrey and home folder {homes / 'mrsgrey'}, with the nbgrader course, its grades, "
        f"feedback and class report ({homes / 'mrsgrey' / 'nbgrader'})"]


def test_the_teachers_formgrader_finds_its_exchange(tmp_path):
    """nbgrader's exchange is not used, but the teacher's nbgrader_config.py names one that
    exists (the teacher's own folder), so the formgrader does not warn that it is missing."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    course, exchange = tmp_path / "nbgrader", tmp_path / ".nbgrader-exchange"
    course.mkdir()
    (tmp_path / "nbgrader_config.py").write_text(classroom_host.teacher_nbgrader_config(course, exchange))
    config = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    assert NbGraderAPI(CourseDirectory(config=config), config=config).exchange_missing
    exchange.mkdir(mode=0o700)
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    assert not api.exchange_missing and api.exchange_root == str(exchange) and not api.course_id


def test_the_hub_keeps_its_state_outside_the_repository(monkeypatch, tmp_path):
    monkeypatch.delenv("CLASSROOM_STATE", raising=False)
    default = classroom_host.state_folder()
    assert default == classroom_host.DEFAULT_STATE and ROOT not in default.parents
    assert classroom_host.DEFAULT_STATE.as_posix() in (ROOT / "README.md").read_text()
    # the course the grading commands fill with the students' work: the state folder's, with or without a hub
    monkeypatch.setenv("CLASSROOM_STATE", str(tmp_path))
    assert classroom_host.grading_course() == tmp_path / "nbgrader"
    (tmp_path / "hub").mkdir()
    assert classroom_host.grading_course() == classroom_host.hub_course(tmp_path)
    problems = classroom_host.preflight(ROOT / "build" / "classroom", {})
    assert any("lies inside the repository" in problem for problem in problems)


def test_a_busy_port_is_named_before_the_hub_starts(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert classroom_host.busy_ports({"the proxy's API": port}) == [
            f"Port {port} (the proxy's API) is already in use on 127.0.0.1: stop what uses it "
            f"(`ss -ltnp 'sport = :{port}'` shows it) or choose another port."]
        state = tmp_path / "state"
        result = subprocess.run([sys.executable, "-m", "scripts.classroom_host"], cwd=ROOT, capture_output=True,
                                text=True, timeout=120, env={**os.environ, "CLASSROOM_STATE": str(state),
                                                             "CLASSROOM_HUB_PORT": str(port)})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"Port {port} (the hub's API) is already in use" in result.stderr
    assert not state.exists(), "nothing is prepared when the hub cannot start"
    assert classroom_host.busy_ports({"the proxy's API": port}) == []  # released: free again


def test_node_is_checked_against_the_version_the_proxy_needs():
    assert classroom_host.node_problem("v20.20.2\n") is None
    assert classroom_host.node_problem("v22.12.0") is None
    assert "Node.js v18.19.1 is too old" in classroom_host.node_problem("v18.19.1")
    assert "not on PATH" in classroom_host.node_problem(None)
    assert f"Node.js {classroom_host.NODE_MAJOR} or newer" in (ROOT / "README.md").read_text()


def _accepts(range_text: str, version: tuple[int, int, int]) -> bool:
    """Whether an npm "engines" range (the forms the lock file uses) accepts ``version``."""
    def one(comparator: str) -> bool:
        operator, number = re.fullmatch(r"(>=|<=|>|<|\^|~|=)?\s*v?([\d.x*]*)", comparator.strip()).groups()
        if number in ("", "*", "x"):
            return True
        wanted = tuple(int(part) for part in (number.split(".") + ["0", "0"])[:3])
        return {">=": version >= wanted, ">": version > wanted, "<=": version <= wanted, "<": version < wanted,
                "^": version[0] == wanted[0] and version >= wanted, "~": version[:2] == wanted[:2] and version >= wanted,
                "=": version == wanted, None: version == wanted}[operator]

    alternatives = [re.findall(r"(?:>=|<=|>|<|\^|~|=)?\s*[\dvx*][\w.*]*", part) for part in range_text.split("||")]
    return any(all(one(comparator) for comparator in comparators) for comparators in alternatives)


def test_the_proxy_is_pinned_by_a_lock_file_that_runs_on_the_stated_node():
    import json

    package = json.loads((ROOT / "classroom" / "package.json").read_text())
    lock = json.loads((ROOT / "classroom" / "package-lock.json").read_text())
    version = package["dependencies"]["configurable-http-proxy"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"pin an exact version, not {version}"
    assert lock["packages"]["node_modules/configurable-http-proxy"]["version"] == version
    assert not _accepts(">=22.12.0", (20, 20, 2)) and _accepts("^16 || ^18 || >=20", (20, 0, 0))
    oldest = (classroom_host.NODE_MAJOR, 0, 0)
    refusing = {name: entry["engines"]["node"] for name, entry in lock["packages"].items()
                if isinstance(entry.get("engines"), dict) and "node" in entry["engines"]
                and not _accepts(entry["engines"]["node"], oldest)}
    assert not refusing, f"these locked packages want a newer Node.js than {classroom_host.NODE_MAJOR}: {refusing}"


def test_z2jh_values_ask_for_what_a_student_needs():
    values = yaml.safe_load(Z2JH.read_text())
    single = values["singleuser"]
    guarantee, limit = gigabytes(single["memory"]["guarantee"]), gigabytes(single["memory"]["limit"])
    assert 0 < guarantee <= limit <= 2, "Binder's 2 GB is what a whole session was measured to fit"
    assert 0 < single["cpu"]["guarantee"] <= single["cpu"]["limit"]
    assert single["extraEnv"]["COURSE_MAX_KERNELS"] == "3"
    url = urllib.parse.urlparse(single["defaultUrl"])
    assert url.path == "/git-pull" and {"repo", "branch", "urlpath"} <= set(urllib.parse.parse_qs(url.query))
    assert values["cull"]["enabled"] and values["cull"]["timeout"] > 0
    assert values["hub"]["config"]["JupyterHub"]["authenticator_class"]


def test_publish_student_edition_commits_only_changes_and_installs_its_utils(tmp_path):
    repo = tmp_path / "student.git"
    first = publish.publish(repo)
    assert publish.publish(repo) == first  # nothing changed: no new commit
    log = subprocess.run(["git", "-C", str(repo), "log", "--oneline"], capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1
    assert (repo / "notebooks" / "00_start_here.ipynb").is_file() and (repo / "utils").is_dir()
    stub = (repo / "notebooks" / "01_residual_block_by_hand.ipynb").read_text()
    assert "NotImplementedError" in stub and "# BEGIN SOLUTION" not in stub
    # the students' utils: a copy of the edition's, installed, found through STATE/utils/current
    installed = publish.publish_utils(repo, tmp_path)
    current = tmp_path / "utils" / "current"
    assert current.resolve() == installed.resolve() and installed.name == first[:12]
    assert (current / "utils" / "__init__.py").read_text() == (ROOT / "utils" / "__init__.py").read_text()
    assert not (current / "utils" / "__init__.py").is_symlink()
    assert not list(current.glob("__editable__*")) and list(current.glob("residual_course_utils-*.dist-info"))
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--ignored"], capture_output=True,
                            text=True).stdout
    assert status == "", f"installing left files in the edition's repository: {status}"


def test_the_classroom_benchmarks_write_their_sections_in_place(tmp_path):
    """benchmarks/cpu_share.py reports a ratio per notebook and replaces its own section only."""
    paths = [Path("10_a.ipynb"), Path("11_b.ipynb")]
    run = {"alone": [{"seconds": 2.0, "threads": 1}, {"seconds": 4.0, "threads": 1}],
           "together": [{"seconds": 3.0, "threads": 1}, {"stopped": True}]}
    section = cpu_share.report(paths, {"course": [run]}, 300.0, (1.0, 2.0), "2026-12-01 16:00")
    rows = [line for line in section.splitlines() if line.startswith("| course")]
    assert [cell.strip() for cell in rows[0].strip("| ").split("|")][2:8] == ["1", "10_a.ipynb", "2.0", "3.0", "1.50",
                                                                            "pass"]
    assert "> 300" in rows[1] and "miss: stopped after 300 s" in rows[1]
    output = tmp_path / "RESULTS.md"
    output.write_text("# Benchmark results\n\n## Notebooks\n\nold\n\n## Misses\n\nnone\n")
    write_section(output, section, cpu_share.HEADING)
    write_section(output, section.replace("1.50", "1.40"), cpu_share.HEADING)
    text = output.read_text()
    assert text.count(cpu_share.HEADING) == 1 and "1.40" in text and "1.50" not in text
    assert text.index("## Notebooks") < text.index(cpu_share.HEADING) < text.index("## Misses")


# The probe bob's kernel runs: who it runs as, where its utils comes from, and what it may read.
PROBE = """import json, os, subprocess, utils
def attempt(path):
    try:
        os.listdir(path) if os.path.isdir(path) else open(path, 'rb').read(1)
        return 'read'
    except OSError as error:
        return type(error).__name__
print(json.dumps({'id': subprocess.run(['id'], capture_output=True, text=True).stdout.strip(),
                  'utils': utils.__file__, 'read': {path: attempt(path) for path in PATHS}}))"""
KERNEL_RUN_JS = """async code => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let text = '';
  const future = kernel.requestExecute({code});
  future.onIOPub = message => {
    if (message.header.msg_type === 'stream') text += message.content.text;
    if (message.header.msg_type === 'error') text += message.content.ename + ': ' + message.content.evalue;
  };
  await future.done;
  return text;
}"""
# The hub 9300, proxy API 9301, hub API 9302, students' servers 9310-9399; CLASSROOM_TEST_PORT
# moves them and CLASSROOM_TEST_PREFIX prefixes the students' names, for two runs on one machine
# (CLASSROOM_TEACHER names the teacher's user).
TEST_BASE_PORT = int(os.environ.get("CLASSROOM_TEST_PORT", "9300"))
PREFIX = os.environ.get("CLASSROOM_TEST_PREFIX", "")


def _login_refused(hub, name: str, password: str) -> bool:
    """Whether the hub's login form turns ``name`` with ``password`` away."""
    import requests

    with requests.Session() as browser:
        browser.get(f"{hub.url}/hub/login", timeout=120).raise_for_status()
        response = browser.post(f"{hub.url}/hub/login", timeout=300, allow_redirects=False, data={
            "username": name, "password": password, "_xsrf": browser.cookies.get("_xsrf", "")})
        return response.status_code == 403 and "jupyterhub-session-id" not in browser.cookies


def _write_as_student(hub, user: str, notebook) -> None:
    """Save ``notebook`` over the student's notebook 01 through their own server's contents API
    (the file is written by their server, as their user, as JupyterLab saves it)."""
    import requests

    from benchmarks.classroom import FOLDER
    from tests.test_grading import NOTEBOOK

    response = requests.put(f"{hub.url}/user/{user}/api/contents/{FOLDER}/notebooks/{NOTEBOOK}", timeout=120,
                            headers={"Authorization": f"token {hub.token}"},
                            json={"type": "notebook", "format": "json", "content": notebook})
    assert response.status_code == 200, response.text[:300]


def _run_as_teacher(module: str, *args: str, state: Path) -> subprocess.CompletedProcess:
    """``python -m scripts.MODULE ARGS`` as `make` runs it on the hub's machine (its state folder set)."""
    return subprocess.run([sys.executable, "-m", f"scripts.{module}", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=1200, env={**os.environ, "CLASSROOM_STATE": str(state)})


@pytest.mark.browser
def test_a_class_on_one_machine_logs_in_apart_and_is_graded(monkeypatch):
    """On the hub `make classroom` starts, with alice and bob on the class list: bob logs in in
    Chromium with his own password (his with alice's name, and a name not on the list, are
    refused); his kernel runs as his own user, imports the published utils, cannot read alice's
    home, the teacher edition, the hub's secret, the password hashes or the teacher's course,
    and he cannot open a terminal. alice gets her copy through nbgitpuller too; alice's notebook
    01 is saved with right answers, bob's with a recorded wrong one; make collect, autograde and
    class-report on the hub's course give 2 / 2 and 1 / 2 and count exactly bob's mistake; the
    teacher's formgrader lists the assignment with both submissions, students' servers have none."""
    import shutil
    import tempfile

    import nbformat
    import requests

    from benchmarks.classroom import FOLDER, Hub, pull
    from benchmarks.lab_session import chromium, missing_browser, wait_for_idle_kernel
    from scripts.classroom_accounts import HASHES
    from tests.test_grading import (ASSIGNMENT, NOTEBOOK, answered, code_score, one_assignment_course,
                                    right_and_wrong_answers)

    problem = missing_browser() or (None if os.geteuid() == 0 else "the hub must run as root to start students' "
                                    "servers as their own users")
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: this test must run here, but {problem}")
        pytest.skip(problem)
    alice_name, bob_name, teacher = f"{PREFIX}alice", f"{PREFIX}bob", classroom_host.teacher_name()
    state = Path(tempfile.mkdtemp(prefix="classroom-test-"))  # not under pytest's root-only tmp folder
    monkeypatch.setenv("CLASSROOM_STATE", str(state))
    hub = None
    try:
        hub = Hub(state, TEST_BASE_PORT, students=(alice_name, bob_name))
        course = classroom_host.hub_course(state)
        assert classroom_host.grading_course() == course  # what make nbgrader, collect, ... use on this machine
        one_assignment_course(course)  # make nbgrader, for notebook 01 alone
        classroom_host.hand_to_teacher(course)
        alice = classroom_host.ensure_student(alice_name, state)
        (Path(alice.pw_dir) / "answers.txt").write_text("alice's work")
        os.chown(Path(alice.pw_dir) / "answers.txt", alice.pw_uid, alice.pw_gid)
        with pytest.raises(PermissionError, match="outside the course"):
            classroom_host.ensure_student("root", state)  # a name taken by this machine's own users
        secret = state / "hub" / "jupyterhub_cookie_secret"
        solutions = ROOT / "notebooks" / NOTEBOOK
        assert secret.is_file() and solutions.is_file() and (course / "gradebook.db").is_file()
        paths = [alice.pw_dir, f"{alice.pw_dir}/answers.txt", str(solutions), str(ROOT), str(secret),
                 str(state / "hub" / "jupyterhub.sqlite"), str(state / "hub" / HASHES), str(course),
                 str(course / "gradebook.db")]

        assert _login_refused(hub, alice_name, hub.passwords[bob_name]), "bob's password with alice's name"
        assert _login_refused(hub, f"{PREFIX}mallory", hub.passwords[bob_name]), "a name not on the class list"
        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors = []
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.goto(f"{hub.url}/hub/login", timeout=120_000)
            page.fill("input[name=username]", bob_name)
            page.fill("input[name=password]", hub.passwords[bob_name])
            page.click("input[type=submit], button[type=submit]")
            first = f"{FOLDER}/notebooks/00_start_here.ipynb"
            page.wait_for_url(f"**/user/{bob_name}/lab/tree/{first}*", timeout=600_000)
            wait_for_idle_kernel(page, hub, first, errors)
            output = page.evaluate(KERNEL_RUN_JS, f"PATHS = {paths!r}\n{PROBE}")
            terminals = page.evaluate("() => window.jupyterapp.serviceManager.terminals.isAvailable()")

        bob = json.loads(output.strip().splitlines()[-1])
        uid = int(subprocess.run(["id", "-u", bob_name], capture_output=True, text=True).stdout)
        assert bob["id"].startswith(f"uid={uid}({bob_name}) ") and uid != 0
        assert bob["utils"] == str(state / "utils" / "current" / "utils" / "__init__.py")
        assert bob["read"] == {path: "PermissionError" for path in paths}
        home = state / "homes" / bob_name
        assert home.stat().st_uid == uid and home.stat().st_mode & 0o777 == 0o700
        assert (home / FOLDER / "notebooks" / "00_start_here.ipynb").is_file()
        assert terminals is False
        headers = {"Authorization": f"token {hub.token}"}
        assert requests.post(f"{hub.url}/user/{bob_name}/api/terminals", headers=headers, timeout=60).status_code == 404

        # alice logs in too (as the login form does) and nbgitpuller copies the edition into her home
        from benchmarks.classroom import log_in

        log_in(hub, alice_name)
        pull(hub, alice_name)
        right, wrong = right_and_wrong_answers()
        for name, answers in ((alice_name, right), (bob_name, wrong)):
            handed_out = nbformat.read(state / "homes" / name / FOLDER / "notebooks" / NOTEBOOK, as_version=4)
            _write_as_student(hub, name, answered(handed_out, answers))
        collected = _run_as_teacher("collect_submissions", state=state)
        assert collected.returncode == 0 and "collected 2 notebooks of 2 students" in collected.stdout, collected.stderr
        graded = _run_as_teacher("autograde", state=state)
        assert graded.returncode == 0, graded.stderr[-2000:]
        assert code_score(course, alice_name) == (2, 2) and code_score(course, bob_name) == (1, 2)
        report = _run_as_teacher("class_report", "--out", str(state / "report"), state=state)
        assert report.returncode == 0, report.stderr
        with (state / "report" / "class-report.csv").open() as handle:
            rows = {(row["exercise"], row["outcome"]): row["students"] for row in csv.DictReader(handle)}
        assert rows == {("01.1", "passed"): "1", ("01.1", "no-relu"): "1", ("01.2", "passed"): "2"}
        teacher_uid = pwd.getpwnam(teacher).pw_uid
        assert all(path.stat().st_uid == teacher_uid for path in [course, *course.rglob("*")])

        hub.api("POST", f"/hub/api/users/{teacher}/server", timeout=300)
        for _ in range(600):
            if hub.api("GET", f"/hub/api/users/{teacher}")["servers"].get("", {}).get("ready"):
                break
            time.sleep(0.5)  # polling a condition; the 300 s are for a hang only
        else:
            pytest.fail(f"the teacher's server did not start: {hub.api('GET', f'/hub/api/users/{teacher}')}")
        formgrader = requests.get(f"{hub.url}/user/{teacher}/formgrader", headers=headers, timeout=120)
        assert formgrader.status_code == 200 and formgrader.url.endswith("/formgrader/manage_assignments")
        assert 'id="warning-exchange"' not in formgrader.text, "the formgrader finds the teacher's exchange folder"
        listed = requests.get(f"{hub.url}/user/{teacher}/formgrader/api/assignments", headers=headers, timeout=120)
        assert listed.status_code == 200, listed.text[:300]
        assignments = {entry["name"]: entry for entry in listed.json()}
        assert list(assignments) == [ASSIGNMENT] and assignments[ASSIGNMENT]["num_submissions"] == 2
        # The page where the teacher grades a written answer renders (it runs the students' Python).
        notebook = requests.get(f"{hub.url}/user/{teacher}/formgrader/api/notebooks/{ASSIGNMENT}", headers=headers,
                                timeout=120).json()[0]["name"]
        submitted = requests.get(f"{hub.url}/user/{teacher}/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{notebook}",
                                 headers=headers, timeout=120).json()
        grading = requests.get(f"{hub.url}/user/{teacher}/formgrader/submissions/{submitted[0]['id']}", headers=headers,
                               timeout=300)
        assert grading.status_code == 200 and "nbgrader" in grading.text, grading.text[-500:]
        assert requests.get(f"{hub.url}/user/{bob_name}/formgrader", headers=headers, timeout=120).status_code == 404
    finally:
        if hub is not None:
            hub.stop()
        classroom_host.remove_students(state)
        classroom_host.remove_teacher(state)
        shutil.rmtree(state, ignore_errors=True)
    assert subprocess.run(["id", bob_name], capture_output=True).returncode != 0, "bob's system user is removed"
