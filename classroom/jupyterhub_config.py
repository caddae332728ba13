# JupyterHub for a class on one machine: `make classroom` starts it (see README, "For teachers").
#
# Every student logs in, gets a JupyterLab of their own with the course's Python environment
# (this repository's .venv), and on first login nbgitpuller copies the student edition into
# their home folder and opens notebook 00. Kernels are limited and culled as on Binder
# (binder/jupyter_server_config.py). Everything below can be changed with the environment
# variables named in CAPITALS (the Makefile passes them through).
#
# Authentication: this file uses JupyterHub's dummy authenticator, for a trial on your own
# machine only: anyone who knows CLASSROOM_PASSWORD gets in under any name. For a class, use a
# real one (README, "For teachers"): NativeAuthenticator (students sign up, you approve),
# OAuthenticator (GitHub, Google or your institution's single sign-on), LTI 1.3 from your
# learning-management system (ltiauthenticator), or the machine's own accounts (PAM).
import os
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STATE = Path(os.environ.get("CLASSROOM_STATE", ROOT / "build" / "classroom"))
BIN = Path(os.environ.get("CLASSROOM_PYTHON_BIN", ROOT / ".venv" / "bin"))
# The student edition's git repository and branch: `make classroom` builds one locally; for a
# term, push build/student/ to a branch of your fork and set CLASSROOM_REPO to its https URL.
REPO = os.environ.get("CLASSROOM_REPO", str(STATE / "student-edition.git"))
BRANCH = os.environ.get("CLASSROOM_BRANCH", "main")
FOLDER = os.environ.get("CLASSROOM_FOLDER", "residual-course")  # the folder in each student's home
# Per student, from benchmarks/RESULTS.md: a kernel with torch peaks at 300-470 MB; with at
# most MAX_KERNELS kernels and the server itself a student needs about 1.5 GB at most.
MAX_KERNELS = os.environ.get("COURSE_MAX_KERNELS", "3")
MEMORY = os.environ.get("CLASSROOM_MEMORY", "2G")
CPUS = float(os.environ.get("CLASSROOM_CPUS", "1"))

c = get_config()  # noqa: F821
c.JupyterHub.ip = os.environ.get("CLASSROOM_IP", "127.0.0.1")  # 0.0.0.0 to let students' machines in
c.JupyterHub.port = int(os.environ.get("CLASSROOM_PORT", "8000"))
c.JupyterHub.hub_port = int(os.environ.get("CLASSROOM_HUB_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('CLASSROOM_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [str(HERE / "node_modules" / ".bin" / "configurable-http-proxy")]
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")

c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = os.environ.get("CLASSROOM_PASSWORD", "residual")
c.Authenticator.allow_all = True
c.Authenticator.admin_users = {os.environ.get("CLASSROOM_TEACHER", "teacher")}

# Every student's server runs as this machine's user, in a home folder of its own.
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "homes" / "{username}")
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.args = [f"--config={ROOT / 'binder' / 'jupyter_server_config.py'}",
                  f"--LabApp.app_settings_dir={ROOT / 'binder'}"]  # overrides.json: no news, kernels end with their tab
if os.geteuid() == 0:
    c.Spawner.args.append("--allow-root")
c.Spawner.environment = {"COURSE_MAX_KERNELS": MAX_KERNELS, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
# The hub exports these as MEM_LIMIT and CPU_LIMIT: the course's kernels fit their threads to
# CPU_LIMIT (utils.threads); a spawner that enforces them (SystemdSpawner on one machine,
# KubeSpawner on Kubernetes) stops a student at these limits, the simple one does not.
c.Spawner.mem_limit = MEMORY
c.Spawner.cpu_limit = CPUS
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120
# Students' servers take ports from CLASSROOM_SERVER_PORTS ("9720-9799") when it is set, any
# free port otherwise.
if os.environ.get("CLASSROOM_SERVER_PORTS"):
    import socket

    LOW, HIGH = map(int, os.environ["CLASSROOM_SERVER_PORTS"].split("-"))
    _given: set[int] = set()

    def _port_in_range(spawner):
        for port in range(LOW, HIGH + 1):
            with socket.socket() as probe:
                if port in _given or probe.connect_ex(("127.0.0.1", port)) == 0:
                    continue
            _given.add(port)
            spawner.port = port
            return
        raise RuntimeError(f"no free port left in CLASSROOM_SERVER_PORTS={LOW}-{HIGH}")

    c.Spawner.pre_spawn_hook = _port_in_range
# benchmarks/classroom.py drives the hub through its REST API with this token, and the
# students' JupyterLab through window.jupyterapp.
if os.environ.get("CLASSROOM_SERVICE_TOKEN"):
    c.Spawner.args.append("--LabApp.expose_app_in_browser=True")
    c.JupyterHub.services = [{"name": "course-benchmark", "api_token": os.environ["CLASSROOM_SERVICE_TOKEN"]}]
    c.JupyterHub.load_roles = [{"name": "course-benchmark", "services": ["course-benchmark"],
                                "scopes": ["admin:users", "admin:servers", "access:servers"]}]
# First page after login: nbgitpuller pulls the student edition (or merges the teacher's
# updates into it) and opens notebook 00. The same link is the one to hand out.
c.Spawner.default_url = "/git-pull?" + urlencode({"repo": REPO, "branch": BRANCH, "targetPath": FOLDER,
                                                  "urlpath": f"lab/tree/{FOLDER}/notebooks/00_start_here.ipynb"})
