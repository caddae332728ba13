# JupyterHub for a class on one machine: `make classroom` starts it as root (see README, "For teachers").
#
# Every student logs in and gets a JupyterLab of their own that runs as their own system user
# (created on their first login, home folder readable by them only); on first login
# nbgitpuller copies the student edition into their home folder and opens notebook 00.
# Students' kernels import the published `utils` (scripts/publish_student_edition.py), not the
# teacher's working copy, and run the course's Python from the hub's state folder: the
# repository itself, with every solution, is closed to them. Kernels are limited and culled as
# on Binder (binder/jupyter_server_config.py). scripts/classroom_host.py prepares all of this
# and checks the ports; everything below can be changed with the environment variables named
# in CAPITALS (the Makefile passes them through).
#
# Logging in: each student with their own name and password, made by `make classroom-accounts`
# (scripts/classroom_accounts.py) from the class list; the hub keeps only salted hashes, in
# STATE/hub, and admits exactly the names there (scripts/classroom_login.py).
import os
import sys
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
from scripts.classroom_accounts import hashes_path  # noqa: E402
from scripts.classroom_host import ensure_student, state_folder, teacher_name  # noqa: E402

STATE = state_folder()  # CLASSROOM_STATE, by default /var/lib/residual-course-classroom
HUB_FILES = STATE / "hub"  # the database, cookie secret and PID file: root's only
EDITION = STATE / "student-edition.git"
PYTHON_BIN = STATE / "python" / "bin"  # the course's environment, readable by students (classroom_host)
# The student edition's git repository and branch: `make classroom` publishes one locally; to
# serve it from GitHub, push that repository (not build/student/, which has no grade cells) to a
# branch of your fork after each publish and set CLASSROOM_REPO and CLASSROOM_BRANCH to them.
REPO = os.environ.get("CLASSROOM_REPO", str(EDITION))
BRANCH = os.environ.get("CLASSROOM_BRANCH", "main")
FOLDER = os.environ.get("CLASSROOM_FOLDER", "residual-course")  # the folder in each student's home
TEACHER = teacher_name()  # CLASSROOM_TEACHER, by default "teacher"
# Terminals are off for students (a terminal is a shell on this machine): CLASSROOM_TERMINALS=1 turns them on.
TERMINALS = os.environ.get("CLASSROOM_TERMINALS", "0").lower() in ("1", "true", "yes")
# Per student, from benchmarks/RESULTS.md: a kernel with torch peaks at 300-470 MB; with at
# most MAX_KERNELS kernels and the server itself a student needs about 1.5 GB at most.
MAX_KERNELS = os.environ.get("COURSE_MAX_KERNELS", "3")
MEMORY = os.environ.get("CLASSROOM_MEMORY", "2G")
CPUS = float(os.environ.get("CLASSROOM_CPUS", "1"))


c = get_config()  # noqa: F821
# 0.0.0.0 lets other machines in: serve it behind HTTPS, since passwords cross the network
# (README, "For teachers").
c.JupyterHub.ip = os.environ.get("CLASSROOM_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("CLASSROOM_PORT", "8000"))
c.JupyterHub.hub_port = int(os.environ.get("CLASSROOM_HUB_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('CLASSROOM_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [str(HERE / "node_modules" / ".bin" / "configurable-http-proxy")]
c.JupyterHub.db_url = f"sqlite:///{HUB_FILES / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(HUB_FILES / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(HUB_FILES / "jupyterhub.pid")

c.JupyterHub.authenticator_class = "scripts.classroom_login.ClassListAuthenticator"
c.ClassListAuthenticator.passwords_file = str(hashes_path(STATE))
c.Authenticator.admin_users = {TEACHER}

# Every server runs as its user's own system user (the hub runs as root to start them).
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(PYTHON_BIN / "jupyterhub-singleuser")]
COMMON_ARGS = [f"--config={EDITION / 'binder' / 'jupyter_server_config.py'}",
               f"--LabApp.app_settings_dir={EDITION / 'binder'}"]  # overrides.json: no news, kernels end with their tab
STUDENT_ARGS = [] if TERMINALS else ["--ServerApp.terminals_enabled=False"]
# The teacher's server gets nbgrader's formgrader, on the course in their home (STATE/homes/TEACHER/
# nbgrader, named by the nbgrader_config.py there: classroom_host.prepare_teacher). Nobody gets
# nbgrader's exchange (course list, assignment list): nbgitpuller hands out, make collect collects.
# Students' servers get none of nbgrader's extensions (binder/jupyter_server_config.py switches them off).
TEACHER_ARGS = [f"--ServerApp.jpserver_extensions=nbgrader.server_extensions.{name}={name == 'formgrader'}"
                for name in ("formgrader", "course_list", "assignment_list", "validate_assignment")]
c.Spawner.environment = {
    "COURSE_MAX_KERNELS": MAX_KERNELS,
    "PATH": f"{PYTHON_BIN}:/usr/local/bin:/usr/bin:/bin",
    "PYTHONPATH": str(STATE / "utils" / "current"),  # the published utils (publish_student_edition.publish_utils)
    "GIT_CONFIG_GLOBAL": str(STATE / "gitconfig"),  # names the root-owned edition safe for git (classroom_host)
}
# The hub exports these as MEM_LIMIT and CPU_LIMIT: the course's kernels fit their threads to
# CPU_LIMIT (utils.threads). This spawner does not enforce them (SystemdSpawner on one machine
# with systemd, KubeSpawner on Kubernetes do).
c.Spawner.mem_limit = MEMORY
c.Spawner.cpu_limit = CPUS
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120

# Students' servers take ports from CLASSROOM_SERVER_PORTS ("9720-9799") when it is set, any
# free port otherwise.
SERVER_PORTS = tuple(map(int, os.environ["CLASSROOM_SERVER_PORTS"].split("-"))) \
    if os.environ.get("CLASSROOM_SERVER_PORTS") else None
_given: set[int] = set()


def _port_in_range(spawner) -> None:
    import socket

    low, high = SERVER_PORTS
    for port in range(low, high + 1):
        with socket.socket() as probe:
            if port in _given or probe.connect_ex(("127.0.0.1", port)) == 0:
                continue
        _given.add(port)
        spawner.port = port
        return
    raise RuntimeError(f"no free port left in CLASSROOM_SERVER_PORTS={low}-{high}")


def before_a_server_starts(spawner) -> None:
    """Create the user's system account on first use, and give the teacher's server and a
    student's their own extensions and terminal setting."""
    admin = bool(spawner.user.admin)
    ensure_student(spawner.user.name, STATE, admin=admin)
    spawner.args = COMMON_ARGS + (TEACHER_ARGS if admin else STUDENT_ARGS) + EXTRA_ARGS
    if SERVER_PORTS:
        _port_in_range(spawner)


c.Spawner.pre_spawn_hook = before_a_server_starts
EXTRA_ARGS: list[str] = []
# benchmarks/classroom.py and tests/test_classroom.py drive the hub through its REST API with
# this token, and the students' JupyterLab through window.jupyterapp.
if os.environ.get("CLASSROOM_SERVICE_TOKEN"):
    EXTRA_ARGS.append("--LabApp.expose_app_in_browser=True")
    c.JupyterHub.services = [{"name": "course-benchmark", "api_token": os.environ["CLASSROOM_SERVICE_TOKEN"]}]
    c.JupyterHub.load_roles = [{"name": "course-benchmark", "services": ["course-benchmark"],
                                "scopes": ["admin:users", "admin:servers", "access:servers"]}]
# First page after login: nbgitpuller pulls the student edition (or merges the teacher's
# updates into it) and opens notebook 00. The same link is the one to hand out.
c.Spawner.default_url = "/git-pull?" + urlencode({"repo": REPO, "branch": BRANCH, "targetPath": FOLDER,
                                                  "urlpath": f"lab/tree/{FOLDER}/notebooks/00_start_here.ipynb"})
