#!/usr/bin/env python
"""The machine a class runs on: checks before the hub starts, and what keeps students apart.

    python -m scripts.classroom_host                     # what `make classroom` runs before the hub
    python -m scripts.classroom_host --remove-students   # the end of a term: students' users and homes
    python -m scripts.classroom_host --remove-teacher    # and the teacher's user and home, course and grades

Checks that the three ports the hub needs are free and that Node.js is new enough for the
proxy, then prepares the hub's state folder (``CLASSROOM_STATE``, by default
/var/lib/residual-course-classroom, outside the repository so no clean deletes it):

    STATE/hub/                    the hub's database, cookie secret, PID file, the students'
                                  password hashes and the slips to hand out (root only)
    STATE/homes/NAME/             each student's home folder (0700, owned by the student)
    STATE/homes/TEACHER/nbgrader/ the nbgrader course make nbgrader, collect, autograde,
                                  feedback and class-report use, and the teacher's formgrader shows
    STATE/python/                 the Python students' servers and kernels run (root-owned)
    STATE/utils/current/          the published ``utils`` (scripts.publish_student_edition)
    STATE/student-edition.git     what nbgitpuller copies into each home folder
    STATE/gitconfig               students' git configuration (names that repository safe)

It also makes the teacher edition (this repository, with every solution) unreadable by
other users, and adds the class list's new names to the hub's accounts
(scripts.classroom_accounts). The hub creates each student's system user when their server first starts
(``ensure_student``); students share the group ``residual-course``, and a name that already
belongs to a user outside it (root, a service, a colleague) is refused.
"""
from __future__ import annotations

import grp
import json
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

from scripts import course_venv

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STATE = Path("/var/lib/residual-course-classroom")
STUDENTS_GROUP = "residual-course"
# The comment (GECOS) of the users ensure_student creates: how the teacher's user is recognised
# at the end of a term even when CLASSROOM_TEACHER is not set then.
USER_COMMENT = {True: "residual course teacher", False: "residual course student"}
PROXY_PACKAGE = ROOT / "classroom" / "node_modules" / "configurable-http-proxy" / "package.json"
# The oldest Node.js every package of classroom/package-lock.json accepts (tests/test_classroom.py
# checks the lock file's "engines" against it); README, "A class on one machine", says the same.
NODE_MAJOR = 20
_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,30}")


def state_folder() -> Path:
    """Where the hub keeps its state: CLASSROOM_STATE, or the documented default."""
    return Path(os.environ.get("CLASSROOM_STATE") or DEFAULT_STATE).resolve()


def teacher_name() -> str:
    """The teacher's name on the hub (CLASSROOM_TEACHER): its admin, with the formgrader."""
    return os.environ.get("CLASSROOM_TEACHER", "teacher")


def check_name(name: str) -> str:
    """``name`` if it can be a student's system user's name; ValueError with a sentence if not."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"{name!r} cannot be a system user's name: use lower-case letters, digits, '-' and '_' "
                         "(starting with a letter or '_', at most 31 characters).")
    return name


def hub_course(state: Path) -> Path:
    """The hub's nbgrader course: in the teacher's home, where the teacher's formgrader finds it
    (nbgrader wants the course inside the server's root folder) and no student can read it."""
    return state / "homes" / teacher_name() / "nbgrader"


def grading_course() -> Path:
    """The nbgrader course make nbgrader, collect, autograde, feedback and class-report use: the
    hub's (:func:`hub_course`) once scripts.classroom_host has prepared the state folder on this
    machine, STATE/nbgrader otherwise. Never inside the repository: the course collects the
    students' notebooks, grades and class report."""
    state = state_folder()
    return hub_course(state) if (state / "hub").is_dir() else state / "nbgrader"


def hand_to_teacher(course: Path) -> None:
    """Give the hub's course back to the teacher's user after root wrote to it (make nbgrader,
    collect, autograde, feedback, class-report), so the formgrader can read and write its
    gradebook; any other course is closed to other users (it holds the students' work)."""
    course = Path(course).resolve()
    if not course.is_dir():
        return
    if course != hub_course(state_folder()):
        course.chmod(0o700)
        return
    teacher = pwd.getpwnam(teacher_name())
    for folder, folders, files in os.walk(course):
        for name in [folder, *(os.path.join(folder, entry) for entry in folders + files)]:
            os.chown(name, teacher.pw_uid, teacher.pw_gid, follow_symlinks=False)
    course.chmod(0o700)


def teacher_nbgrader_config(course: Path, exchange: Path) -> str:
    """The nbgrader_config.py of the teacher's home: the course, and as nbgrader's exchange an
    empty folder of the teacher's own. The exchange is not used (nbgitpuller hands out, make
    collect collects), so the course has no course id and the formgrader's release and collect
    buttons stay off; without an exchange folder that exists and the teacher may write to, the
    formgrader would warn that its default one, /usr/local/share/nbgrader/exchange, is missing."""
    return ("# Written by scripts/classroom_host.py: the hub's nbgrader course (README, \"Grading\").\n"
            "c = get_config()  # noqa: F821\n"
            f"c.CourseDirectory.root = {str(course)!r}\n"
            "# nbgrader's exchange is not used: an empty folder only the teacher can open.\n"
            f"c.Exchange.root = {str(exchange)!r}\n")


def prepare_teacher(state: Path) -> Path:
    """The teacher's user, their course folder (:func:`hub_course`), the unused exchange folder
    and the nbgrader_config.py in their home that names both (:func:`teacher_nbgrader_config`).
    Returns the course."""
    teacher = ensure_student(teacher_name(), state, admin=True)
    course = hub_course(state)
    exchange = Path(teacher.pw_dir) / ".nbgrader-exchange"
    for folder in (course, exchange):
        folder.mkdir(exist_ok=True)
    config = Path(teacher.pw_dir) / "nbgrader_config.py"
    config.write_text(teacher_nbgrader_config(course, exchange))
    for path in (config, course, exchange):
        os.chown(path, teacher.pw_uid, teacher.pw_gid)
    for folder in (course, exchange):
        folder.chmod(0o700)
    return course


def busy_ports(ports: dict[str, int], host: str = "127.0.0.1") -> list[str]:
    """One sentence for each of ``ports`` (what it is for -> number) that something already uses."""
    problems = []
    for purpose, port in ports.items():
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError:
                problems.append(f"Port {port} ({purpose}) is already in use on {host}: stop what uses it "
                                f"(`ss -ltnp 'sport = :{port}'` shows it) or choose another port.")
    return problems


def node_problem(version_text: str | None) -> str | None:
    """A sentence if ``version_text`` (`node --version`'s output, None if missing) is too old."""
    if not version_text:
        return (f"Node.js (`node`) is not on PATH: the hub's proxy needs Node.js {NODE_MAJOR} or newer "
                "(https://nodejs.org, or your system's nodejs package).")
    match = re.match(r"v?(\d+)\.", version_text.strip())
    if not match or int(match.group(1)) < NODE_MAJOR:
        return (f"Node.js {version_text.strip()} is too old: the hub's proxy needs Node.js {NODE_MAJOR} or newer.")
    return None


def node_version() -> str | None:
    node = shutil.which("node")
    if node is None:
        return None
    return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout


def lock_teacher_edition(root: Path = ROOT) -> bool:
    """Take other users' access to the repository away (its notebooks hold every solution);
    True if it had to be changed."""
    mode = root.stat().st_mode
    if not mode & stat.S_IRWXO:
        return False
    root.chmod(mode & ~stat.S_IRWXO)
    return True


def _private_folder(path: Path, mode: int) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chown(path, 0, 0)
    path.chmod(mode)


def prepare_state(state: Path) -> None:
    """The state folder's layout and modes (module docstring)."""
    _private_folder(state, 0o755)
    _private_folder(state / "hub", 0o700)
    _private_folder(state / "homes", 0o755)
    # nbgitpuller runs git as the student on the root-owned edition, which git refuses unless it
    # is named safe in a system or global config: this one (GIT_CONFIG_GLOBAL), which also reads
    # the student's own ~/.gitconfig.
    (state / "gitconfig").write_text(f"[safe]\n\tdirectory = {state / 'student-edition.git' / '.git'}\n"
                                      "[include]\n\tpath = ~/.gitconfig\n")


def student_python(state: Path, venv: Path = ROOT / ".venv") -> Path:
    """The Python environment students' servers and kernels run, STATE/python: the course's
    .venv, hard-linked (a copy where links are impossible) into a venv of an interpreter other
    users can run, without the editable install of ``utils`` that points into the repository.
    Rebuilt when .venv was reinstalled since. Returns its ``bin`` folder."""
    target = state / "python"
    stamp_source, stamp = venv / ".installed-from", target / ".installed-from"  # make install's stamp
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if stamp.is_file() and stamp_source.is_file() and stamp.read_text() == str(stamp_source.stat().st_mtime_ns):
        return target / "bin"
    interpreter = _interpreter_for_everyone(venv, version)
    staging = state / "python.new"
    shutil.rmtree(staging, ignore_errors=True)
    subprocess.run([interpreter, "-m", "venv", "--without-pip", str(staging)], check=True, timeout=300)
    packages = f"lib/python{version}/site-packages"
    editable = re.compile(r"__editable__.*residual_course_utils|residual_course_utils-.*\.dist-info")
    shutil.copytree(venv / packages, staging / packages, dirs_exist_ok=True, symlinks=True, copy_function=_link_or_copy,
                    ignore=lambda folder, names: [n for n in names if editable.match(n)])
    for data in ("etc", "share"):  # Jupyter's extensions (nbgitpuller's among them), kernels and JupyterLab
        if (venv / data).is_dir():
            shutil.copytree(venv / data, staging / data, dirs_exist_ok=True, symlinks=True, copy_function=_link_or_copy)
    shebang = b"#!" + str(venv / "bin" / "python").encode()
    for script in (venv / "bin").iterdir():  # console scripts, then pointed at the students' python
        if (script.is_file() and not script.is_symlink() and not (staging / "bin" / script.name).exists()
                and script.read_bytes().startswith(shebang)):
            shutil.copy2(script, staging / "bin" / script.name)
    course_venv.relocate(staging, venv, target)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    stamp.write_text(str(stamp_source.stat().st_mtime_ns) if stamp_source.is_file() else "")
    return target / "bin"


def _link_or_copy(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:  # another file system
        shutil.copy2(source, destination)


def _interpreter_for_everyone(venv: Path, version: str) -> str:
    """The venv's base Python if every user may run it, else the system's python of the same minor version."""
    base = Path(os.path.realpath(venv / "bin" / "python"))
    candidates = [base, Path(f"/usr/bin/python{version}"), Path(f"/usr/local/bin/python{version}")]
    for candidate in candidates:
        if candidate.is_file() and _everyone_can_run(candidate):
            return str(candidate)
    raise SystemExit(f"No Python {version} that students may run: {base} lies in a folder other users cannot enter. "
                     f"Install python{version} for the whole system (e.g. apt-get install python{version}-venv).")


def _everyone_can_run(path: Path) -> bool:
    if not path.stat().st_mode & stat.S_IXOTH:
        return False
    return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)


def ensure_student(name: str, state: Path, *, admin: bool = False) -> pwd.struct_passwd:
    """The system user ``name`` for a student (or the teacher, ``admin``), created on first use
    with a home folder STATE/homes/NAME that only they can read; a name taken by a user outside
    the course's group is refused."""
    check_name(name)
    try:
        group = grp.getgrnam(STUDENTS_GROUP)
    except KeyError:
        subprocess.run(["groupadd", "--system", STUDENTS_GROUP], check=True, capture_output=True, timeout=60)
        group = grp.getgrnam(STUDENTS_GROUP)
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--home-dir", str(state / "homes" / name), "--shell", "/bin/bash",
                        "--user-group", "--groups", STUDENTS_GROUP,
                        "--comment", USER_COMMENT[admin], name],
                       check=True, capture_output=True, timeout=60)
        user = pwd.getpwnam(name)
    if group.gr_gid not in os.getgrouplist(name, user.pw_gid):
        raise PermissionError(f"{name!r} is a user of this machine outside the course: the hub will not start a "
                              "server as that user. Log in under another name.")
    home = Path(user.pw_dir)
    if home.is_dir():
        os.chown(home, user.pw_uid, user.pw_gid)
        home.chmod(0o700)
    return user


def is_teacher(user: pwd.struct_passwd) -> bool:
    """Whether ``user`` is the hub's teacher: named CLASSROOM_TEACHER, or made as the teacher."""
    return user.pw_name == teacher_name() or user.pw_gecos == USER_COMMENT[True]


def hub_users(state: Path, *, teacher: bool) -> list[str]:
    """The system users whose home folder lies in STATE/homes (the hub made them): the
    teacher's if ``teacher``, else the students'."""
    homes = state / "homes"
    return [user.pw_name for user in pwd.getpwall()
            if Path(user.pw_dir).parent == homes and is_teacher(user) == teacher]


def remove_students(state: Path) -> list[str]:
    """Remove the students' system users (:func:`hub_users`) with their home folders, and the
    course's group once nobody is left in it (the end of a term, or of a test); return the
    names removed. The teacher's user and home, with the nbgrader course and its grades, stay."""
    return _remove_users(hub_users(state, teacher=False))


def remove_teacher(state: Path) -> list[str]:
    """Remove the teacher's system user with their home folder: the nbgrader course, its
    gradebook and the class report in it are deleted too. Returns the names removed."""
    return _remove_users(hub_users(state, teacher=True))


def _remove_users(names: list[str]) -> list[str]:
    for name in names:
        subprocess.run(["userdel", "--remove", name], capture_output=True, timeout=120)
    try:
        if not grp.getgrnam(STUDENTS_GROUP).gr_mem:
            subprocess.run(["groupdel", STUDENTS_GROUP], capture_output=True, timeout=60)
    except KeyError:
        pass
    return names


def prepare(state: Path) -> None:
    """Everything the hub needs before it starts: the state folder, the class's accounts, the
    teacher's course, the teacher edition closed, the students' Python, and the student edition
    and its utils published."""
    from scripts.classroom_accounts import accounts_from_environment
    from scripts.publish_student_edition import publish, publish_utils

    prepare_state(state)
    accounts_from_environment(state)
    prepare_teacher(state)
    if lock_teacher_edition():
        print(f"{ROOT} (the teacher edition, with every solution) is now closed to other users (chmod o-rwx).")
    student_python(state)
    publish(state / "student-edition.git")
    print(f"students' utils: {publish_utils(state / 'student-edition.git', state)}")


PUBLIC_PORT = "the hub's public address"


def hub_address(environment=os.environ) -> str:
    """The address students open: CLASSROOM_URL when the teacher gives one (a public name, a
    reverse proxy's https address), else the hub's own from CLASSROOM_IP (this machine's name
    when it listens on every interface) and CLASSROOM_PORT."""
    if environment.get("CLASSROOM_URL"):
        return environment["CLASSROOM_URL"]
    ip = environment.get("CLASSROOM_IP", "127.0.0.1")
    host = socket.getfqdn() if ip in ("0.0.0.0", "", "::") else ip
    return f"http://{host}:{hub_ports(environment)[PUBLIC_PORT]}/"


def hub_ports(environment=os.environ) -> dict[str, int]:
    """The three ports the hub listens on, by purpose, as the hub's configuration reads them."""
    return {PUBLIC_PORT: int(environment.get("CLASSROOM_PORT", "8000")),
            "the proxy's API": int(environment.get("CLASSROOM_PROXY_API_PORT", "8001")),
            "the hub's API": int(environment.get("CLASSROOM_HUB_PORT", "8081"))}


def preflight(state: Path, ports: dict[str, int]) -> list[str]:
    """One sentence for each reason the hub cannot start now (none: it can)."""
    from scripts.classroom_accounts import class_list_problem

    problems = busy_ports(ports)
    for problem in (node_problem(node_version()), class_list_problem(state)):
        if problem:
            problems.append(problem)
    if not PROXY_PACKAGE.is_file():
        problems.append(f"The proxy is not installed: run  cd {ROOT / 'classroom'} && npm ci")
    if os.geteuid() != 0:
        problems.append("The hub must run as root to start each student's server as that student's own user.")
    if state == ROOT or ROOT in state.parents:
        problems.append(f"CLASSROOM_STATE={state} lies inside the repository, where a clean deletes it: "
                        "choose a folder outside it.")
    return problems


def end_of_term(state: Path, *, students: bool, teacher: bool) -> int:
    """--remove-students and --remove-teacher: remove those users, and say what was removed
    and what was kept."""
    if students:
        print("removed the students' users and home folders:", " ".join(remove_students(state)) or "nobody")
    if teacher:
        for name in remove_teacher(state):
            print(f"removed the teacher's user {name} and home folder {state / 'homes' / name}, with the nbgrader "
                  f"course, its grades, feedback and class report ({state / 'homes' / name / 'nbgrader'})")
    else:
        for name in hub_users(state, teacher=True):
            print(f"kept the teacher's user {name} and home folder {state / 'homes' / name}, with the nbgrader course "
                  f"and its grades ({state / 'homes' / name / 'nbgrader'}); --remove-teacher removes them too")
    return 0


def main(argv=None) -> int:
    """Pre-flight checks, then the state folder, the students' Python and the published edition;
    or, with --remove-students (--remove-teacher), the end of a term."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--remove-students", action="store_true",
                        help="remove the students' system users (home folder in STATE/homes) with their home folders; "
                             "the teacher's user and home, with the nbgrader course and its grades, stay")
    parser.add_argument("--remove-teacher", action="store_true",
                        help="remove the teacher's system user and home folder STATE/homes/TEACHER, deleting the "
                             "nbgrader course in it with every grade, submission, feedback page and class report")
    args = parser.parse_args(argv)
    if args.remove_students or args.remove_teacher:
        return end_of_term(state_folder(), students=args.remove_students, teacher=args.remove_teacher)
    problems = preflight(state_folder(), hub_ports())
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    prepare(state_folder())
    return 0


if __name__ == "__main__":
    sys.exit(main())
