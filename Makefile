# The course's two commands (see README.md):
#   make lab    install everything into .venv and open the course in JupyterLab at notebook 00
#   make test   install everything into .venv and run every test
# For teachers: `make student` builds the student edition into build/student/, `make nbgrader`
# an nbgrader course in the hub's state folder, `make classroom` starts a JupyterHub for a class.
# Both are safe to re-run: the install step only runs again when requirements change.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-from
PORT ?= 8888
CLASSROOM_PORT ?= 8000
PIP_EXTRA ?=
NPM_CI := npm ci --ignore-scripts --no-audit --no-fund
# An install step runs again only when its inputs' contents change (scripts/stamped.py keeps
# their SHA-256 in a stamp inside what it installed); otherwise it is a check of a few ms.
STAMPED := $(PYTHON) -m scripts.stamped

.PHONY: install venv npm-site npm-classroom classroom-accounts lab test test-backends test-versions execute benchmark screenshots student exercises-report nbgrader classroom site links \
	publish collect autograde feedback class-report update-report site-live pdf

# Everything `make test` needs: the course's venv, the site's npm packages and the classroom's proxy.
install: venv npm-site npm-classroom

# requirements.txt's packages, then the course's utils (editable): scripts/course_venv.py, which
# copies a venv this machine built today from the same requirements.txt when there is one.
venv:
	@$(STAMPED) $(STAMP) requirements.txt pyproject.toml -- env PIP_EXTRA="$(PIP_EXTRA)" $(PYTHON) -m scripts.course_venv $(VENV)

# The scripts the site serves itself (widget renderer, RequireJS, MathJax) and axe-core for its
# test, exactly as site/package-lock.json pins them.
npm-site:
	@$(STAMPED) site/node_modules/.installed-from site/package-lock.json -- sh -c 'cd site && $(NPM_CI)'

# The proxy JupyterHub needs, at the versions of classroom/package-lock.json.
npm-classroom:
	@$(STAMPED) classroom/node_modules/.installed-from classroom/package-lock.json -- sh -c 'cd classroom && npm ci --no-audit --no-fund'

lab: venv
	$(BIN)/jupyter lab --port=$(PORT) $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/00_start_here.ipynb

# One torch and BLAS thread, as the stored outputs were made: the variables utils/threads.py
# lists (conftest.py sets the same when pytest runs without make). Expanded when a recipe runs.
ONE_THREAD = $(shell $(BIN)/python -c 'from utils.threads import LIBRARY_VARIABLES as v; print(*(f"{n}=1" for n in v))')

# Every notebook is run and its stored outputs compared three times inside (the live site,
# JupyterLab, nbgrader's autograde; scripts/backend_matrix.py), so no --nbval pass here.
# The log ends with the 25 slowest tests: where make test's time goes.
test: install
	$(ONE_THREAD) $(BIN)/python -m pytest -n 2 -p no:cacheprovider --durations=25

# The tests under other library versions (Colab's ipywidgets 7, the oldest and the newest
# supported), each in its own venv in ~/.cache/residual-course/versions/ (reused while its pins hold;
# logs in build/versions/); ENVS="oldest" runs just that one.
test-versions:
	$(PYTHON) -m scripts.test_versions $(ENVS)

# The numeric unit tests again under the numeric backends and thread counts whose notebooks
# make test checks (scripts/backend_matrix.py): the stored outputs must hold on any CPU.
test-backends: venv
	$(BIN)/python -m scripts.backend_matrix

# Refresh the committed screenshots (README, docs/) from the browser tests' latest run (JupyterLab's
# notebooks and the site's notebook 07 with its static widget's controls moved).
screenshots: venv
	CI=true $(BIN)/python -m pytest -n 2 -p no:cacheprovider -m browser tests/test_browser.py tests/test_site.py tests/test_site_live.py
	cp build/screenshots/*.png docs/screenshots/

execute: venv
	$(BIN)/python -m scripts.execute_notebooks $(NOTEBOOKS)

benchmark: venv npm-classroom
	$(BIN)/python -m benchmarks.run

# The student edition (solutions replaced by stubs, answer cells removed) in build/student/,
# which git ignores: zip that folder to hand it out (see README, "For teachers").
student: venv
	$(BIN)/python -m scripts.build_student_edition

# One line per exercise: does the reference pass, and what each recorded wrong answer is told.
exercises-report: venv
	$(BIN)/python -m scripts.exercises_report
	$(BIN)/python -m scripts.exercise_mutants

# An nbgrader course: one assignment per notebook, solutions as solution cells, each check an
# autograded test, homework answers graded by hand; then nbgrader's generate_assignment writes
# the students' versions into its release/. The course is the hub's (in the teacher's home in
# the hub's state folder, where the formgrader shows it) once `make classroom` has prepared the
# hub on this machine, nbgrader/ of the state folder otherwise (never the repository: it holds
# the students' work); collect, autograde, feedback and class-report use the same one.
nbgrader: venv
	$(BIN)/python -m scripts.build_nbgrader

# Grading the hub's notebooks (README, "Grading"): collect every student's notebooks from their
# home (HOMES, the hub's homes by default; run as root) into the course's submitted/, autograde
# them (refusing a notebook without grade cells; WORKERS notebooks at once, default this machine's
# CPUs), write the feedback pages and the class report (into the course's class-report/, or
# CLASS_REPORT=DIR; NAMES=1 names the students). ASSIGNMENT=05_flexible_block autogrades, or
# writes the feedback of, that notebook only, for every student.
HOMES ?=
CLASS_REPORT ?=
ASSIGNMENT ?=
WORKERS ?=
collect: venv
	$(BIN)/python -m scripts.collect_submissions $(if $(HOMES),--homes $(HOMES))

autograde: venv
	$(BIN)/python -m scripts.autograde $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT)) $(if $(WORKERS),--workers $(WORKERS))

feedback: venv npm-site
	$(BIN)/python -m scripts.feedback $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT))

class-report: venv
	$(BIN)/python -m scripts.class_report $(if $(NAMES),--names) $(if $(CLASS_REPORT),--out $(CLASS_REPORT))

# Publish the student edition (with nbgrader's metadata) to the hub's repository during a term;
# the commit message says which notebooks and cells changed. update-report FIX=<commit> lists
# the students whose copies lack that commit's change (nbgitpuller may have dropped it).
publish: venv
	$(BIN)/python -m scripts.publish_student_edition

update-report: venv
	@test -n "$(FIX)" || { echo "make update-report FIX=<commit of the student edition>: which fix to look for"; exit 2; }
	$(BIN)/python -m scripts.update_report $(FIX) $(if $(HOMES),--homes $(HOMES))

# A JupyterHub for a class on this machine, run as root (classroom/jupyterhub_config.py; README,
# "For teachers"): scripts/classroom_host.py checks the ports and Node.js, prepares the hub's
# state folder (CLASSROOM_STATE, default /var/lib/residual-course-classroom) and publishes the
# student edition there; each student on the class list (CLASSROOM_ROSTER or CLASSROOM_STUDENTS,
# see classroom-accounts below) who logs in at http://127.0.0.1:$(CLASSROOM_PORT) with their own
# password gets a copy (nbgitpuller) in a server that runs as their own system user.
classroom: venv npm-classroom
	CLASSROOM_PORT=$(CLASSROOM_PORT) $(BIN)/python -m scripts.classroom_host
	CLASSROOM_PORT=$(CLASSROOM_PORT) PATH="$(CURDIR)/$(BIN):$$PATH" \
	$(BIN)/jupyterhub -f classroom/jupyterhub_config.py

# Each student's own password (scripts/classroom_accounts.py): the class list's new names
# (CLASSROOM_ROSTER=FILE, one name a line, or CLASSROOM_STUDENTS="alice bob") get one, on
# slips in the state folder's hub/ with the hub's address (CLASSROOM_URL=https://... when students
# reach it under another name); RESET=NAME gives one student a new one. As root.
classroom-accounts: venv
	$(BIN)/python -m scripts.classroom_accounts $(if $(RESET),--reset $(RESET))

# The course as a website, from the stored notebooks (nothing is executed), in build/site/:
# open build/site/index.html. See README, "The course as a website".
site: install
	$(BIN)/python -m scripts.build_site

# Every link that names the repository (notebooks' and README's badges, the Zero to JupyterHub
# first page), written from pyproject.toml's [tool.course] repository: run after changing it
# (README, "Fork it").
links: venv
	$(BIN)/python -m scripts.write_links

# The site with live code: builds it, then serves it on http://127.0.0.1:$(SITE_PORT) beside a local
# Jupyter server for its "Run this page" buttons (scripts/site_live.py); Ctrl-C stops both.
SITE_PORT ?= 8800
site-live: install
	$(BIN)/python -m scripts.site_live --port $(SITE_PORT)

# The printable edition in build/pdf/: each notebook's page printed by Chromium, the teacher
# edition (answers open) and the student edition (without them), and both whole courses.
# See README, "The course as a website".
pdf: site
	$(BIN)/python -m scripts.build_pdf
