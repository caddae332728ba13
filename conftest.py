"""pytest configuration shared by the unit tests and nbval.

nbval cannot compare a cell whose output lives inside a widget (the stored notebook keeps
it in the widget state, a live run sends it as plain output), so such cells still run,
and still fail on an error, but their outputs are not compared. Every other cell is
compared as tests/output_tolerance.py says: text exactly, numbers within one unit of
their last printed digit unless the cell declares its own rule (so a stored output holds
on any CPU, numeric backend and thread count). tests/test_notebooks_saved.py checks that
every notebook was saved with its outputs.
"""
import os
import sys

# A learner's answer may run 20 s in a check (utils.exercises.core.TIME_LIMIT); under the tests,
# which a loaded machine can slow many times over, only a hang may hit the limit. Set before utils
# is imported, for this process and every kernel it starts.
os.environ.setdefault("COURSE_TIME_LIMIT", "600")

import pytest  # noqa: E402

from tests import output_tolerance  # noqa: E402
from utils.threads import fit_cpu_share  # noqa: E402

# nbval waits only 5 s for each output message once a cell has replied; on a loaded 2-core
# machine (two notebooks under xdist, a browser test beside them) a message can take longer.
OUTPUT_TIMEOUT = 60


def pytest_collection_modifyitems(config, items):
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None or not hasattr(item, "options"):
            continue
        item.output_timeout = OUTPUT_TIMEOUT
        if output_tolerance.shows_widget(cell):
            item.options["check"] = False
    items.sort(key=_start_early)  # stable: each notebook's cells stay in order


# How `make test` shares the work between its two xdist workers (see pytest_xdist_make_scheduler).
RUN_ALONE = ("tests/test_browser.py",)  # long tests: each in a JupyterLab session of its worker
# A notebook's nbgrader test and its student-edition test read one autograde (tests/autograded_once.py):
# the two go to one worker as a unit, so the second finds it made; the notebooks spread over both workers.
AUTOGRADED_TOGETHER = ("tests/test_nbgrader.py", "tests/test_student_edition.py")


def _start_early(item) -> tuple[int, int]:
    """Long work first, so the two workers finish together: slow tests (one of its own, such as
    the Binder install or the site, then those of a notebook, latest first), then the notebooks'
    cells, then the browser tests, then unit tests. Notebooks 06-08 train networks, so
    later notebooks go first."""
    if item.get_closest_marker("slow"):  # one long test (Binder, the site) first, then a notebook's, latest first
        return (0, -_notebook_number(item.callspec.id)) if hasattr(item, "callspec") else (0, -100)
    if hasattr(item, "cell"):
        return 1, -_notebook_number(item.path.name)
    if item.get_closest_marker("browser") and hasattr(item, "callspec"):
        return 2, -_notebook_number(item.callspec.id)
    return 3, 0


def _notebook_number(name: str) -> int:
    return int(name[:2]) if name[:2].isdigit() else 0


def work_unit(nodeid: str) -> str:
    """The tests that must run on one worker, in order: a notebook's cells share one kernel,
    a test file may share module fixtures (Binder's two slow tests share one install: on two
    workers, one would wait for the other's). A test of a RUN_ALONE file is a unit by itself
    (a browser test starts its worker's own JupyterLab if that worker has none yet). A notebook's
    tests in AUTOGRADED_TOGETHER (their id starts with its number) are one unit."""
    path = nodeid.split("::", 1)[0]
    if path in AUTOGRADED_TOGETHER and "[" in nodeid:
        return "autograded " + nodeid.split("[", 1)[1][:2]
    return nodeid if path in RUN_ALONE else path


def pytest_xdist_make_scheduler(config, log):
    """Units as work_unit says, handed out in collection order (longest first, see
    _start_early). xdist's ``--dist loadgroup`` would do this with marks, but under pytest 9
    its marks do not reach the scheduler (the nodeid it rewrites is no longer the one used)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False  # keep the longest-first order
    return ByWorkUnit(config, log)


def _compare_numbers_within_tolerance() -> None:
    """Let nbval's strict comparison see, for each fresh text output that agrees with its
    stored twin under the cell's rule, the stored text itself (see output_tolerance)."""
    from nbval.plugin import IPyNbCell

    strict = IPyNbCell.compare_outputs
    if getattr(strict, "tolerant", False):
        return

    def compare_outputs(self, test, ref, skip_compare=None):
        rule = output_tolerance.rule_from_metadata(self.cell.get("metadata"))
        return strict(self, output_tolerance.reconcile(test, ref, rule), ref, skip_compare)

    compare_outputs.tolerant = True
    IPyNbCell.compare_outputs = compare_outputs


def pytest_configure(config):
    if config.pluginmanager.hasplugin("nbval"):
        _compare_numbers_within_tolerance()
    # Notebooks and tests run with one torch thread and one BLAS thread unless told
    # otherwise (OMP_NUM_THREADS), as the stored outputs were made: utils.threads sets its
    # LIBRARY_VARIABLES for this process and the kernels it starts. Another CPU still adds in
    # another order: outputs are compared as output_tolerance says, and
    # scripts/backend_matrix.py checks them under other kernels, with one thread and with two.
    fit_cpu_share()


@pytest.fixture(autouse=True)
def _no_drawing_ahead_into_the_next_test():
    """A live plot's background thread may still draw after the test that moved its controls;
    its models, built under torch's fork_rng, would disturb the next test's random draws in this
    worker. The kernel pauses it before every cell in the same way (utils.pictures)."""
    yield
    if "utils.pictures" in sys.modules:
        sys.modules["utils.pictures"]._pause_drawing_ahead()
