"""How conftest.py orders `make test` and shares it between two xdist workers, checked by
running its hooks on a made-up collection and xdist's own scheduler with two stand-in
workers: the longest work starts first, a notebook's cells stay together and in order on
one worker (they share a kernel), and two browser tests can run at the same time."""
from pathlib import Path
from types import SimpleNamespace

import conftest
from tests import output_tolerance

WIDGET = {"outputs": [{"data": {output_tolerance.WIDGET_VIEW: {"model_id": "x"}}}]}


class Item:
    """The parts of a pytest item that conftest's hooks read."""

    def __init__(self, nodeid, *, marker=None, cell=None, param=None):
        self.nodeid, self.path, self.marker = nodeid, Path(nodeid.split("::")[0]), marker
        if cell is not None:  # an nbval cell
            self.cell, self.options = cell, {"check": True}
        if param is not None:
            self.callspec = SimpleNamespace(id=param)

    def get_closest_marker(self, name):
        return name if name == self.marker else None


class Worker:
    """An xdist worker that records the tests it is sent."""

    def __init__(self, name):
        self.gateway, self.shutting_down, self.queue, self.ran = SimpleNamespace(id=name), False, [], []

    def send_runtest_some(self, indices):
        self.queue.extend(indices)

    def shutdown(self):
        self.shutting_down = True


def collected():
    """A collection in pytest's order: files alphabetically, tests in file order."""
    return ([Item(f"notebooks/06_thirty_layers.ipynb::Cell {n}", cell={}) for n in range(3)]
            + [Item(f"notebooks/08_degradation.ipynb::Cell {n}", cell=WIDGET if n == 1 else {}) for n in range(3)]
            + [Item("tests/test_browser.py::test_runs[06_thirty_layers.ipynb]", marker="browser",
                    param="06_thirty_layers.ipynb"),
               Item("tests/test_browser.py::test_runs[08_degradation.ipynb]", marker="browser",
                    param="08_degradation.ipynb"),
               Item("tests/test_slopes.py::test_a"), Item("tests/test_slopes.py::test_b"),
               Item("tests/test_training.py::test_long", marker="slow")])


def run_with_two_workers(nodeids):
    """Hand ``nodeids`` out with conftest's scheduler; the workers finish one test each in
    turn. Returns the two workers (``.ran``: the node ids each ran, in order)."""
    config = SimpleNamespace(option=SimpleNamespace(tx=["2*popen"], loadscopereorder=True))
    config.getvalue = lambda name: getattr(config.option, name)
    scheduler = conftest.pytest_xdist_make_scheduler(config, SimpleNamespace(loadscopesched=lambda *args: None))
    workers = [Worker("gw0"), Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
    for worker in workers:
        scheduler.add_node_collection(worker, nodeids)
    scheduler.schedule()
    while any(worker.queue for worker in workers):  # a worker also runs its last test as it shuts down
        for worker in workers:
            if worker.queue:
                index = worker.queue.pop(0)
                worker.ran.append(nodeids[index])
                scheduler.mark_test_complete(worker, index)
    return workers


def test_long_work_starts_first_and_a_notebooks_cells_keep_their_order():
    items = collected()
    conftest.pytest_collection_modifyitems(None, items)
    assert [item.nodeid.split("/")[-1] for item in items] == [
        "test_training.py::test_long",  # slow tests first
        "08_degradation.ipynb::Cell 0", "08_degradation.ipynb::Cell 1", "08_degradation.ipynb::Cell 2",
        "06_thirty_layers.ipynb::Cell 0", "06_thirty_layers.ipynb::Cell 1", "06_thirty_layers.ipynb::Cell 2",
        "test_browser.py::test_runs[08_degradation.ipynb]", "test_browser.py::test_runs[06_thirty_layers.ipynb]",
        "test_slopes.py::test_a", "test_slopes.py::test_b"]
    checked = {item.nodeid.split("::")[1]: item.options["check"] for item in items if "08_" in item.nodeid
               and hasattr(item, "cell")}
    assert checked == {"Cell 0": True, "Cell 1": False, "Cell 2": True}  # a widget's output is not compared


def test_each_notebook_runs_on_one_worker_and_the_browser_tests_on_both():
    items = collected()
    conftest.pytest_collection_modifyitems(None, items)
    nodeids = [item.nodeid for item in items]
    workers = run_with_two_workers(nodeids)
    assert sorted(nodeids) == sorted(workers[0].ran + workers[1].ran)  # every test ran once
    assert [worker.ran[0] for worker in workers] == nodeids[:2]  # in conftest's order: the slow test, notebook 08
    for group in ("06_thirty_layers.ipynb::", "08_degradation.ipynb::", "test_slopes.py::"):
        runs = [[nodeid for nodeid in worker.ran if group in nodeid] for worker in workers]
        assert sorted(map(len, runs))[0] == 0, f"{group} was split between the workers: {runs}"
        assert max(runs, key=len) == [nodeid for nodeid in nodeids if group in nodeid]  # in order
    browser = [[nodeid for nodeid in worker.ran if "test_browser.py" in nodeid] for worker in workers]
    assert list(map(len, browser)) == [1, 1], browser


def test_slow_tests_of_later_notebooks_start_before_earlier_ones():
    items = [Item("tests/test_nbgrader.py::test_grades[02]", marker="slow", param="02"),
             Item("tests/test_nbgrader.py::test_grades[11]", marker="slow", param="11"),
             Item("tests/test_binder.py::test_install", marker="slow"),
             Item("tests/test_slopes.py::test_a")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [item.nodeid.split("::")[1] for item in items] == ["test_install", "test_grades[11]", "test_grades[02]",
                                                              "test_a"]


def test_the_tests_of_one_binder_install_share_a_worker():
    """Both build on one install (tests/test_binder.py's binder_image): on two workers, one waits."""
    nodeids = ["tests/test_binder.py::test_runs_under_the_memory_limit", "tests/test_binder.py::test_serves_a_student",
               "tests/test_slopes.py::test_a", "tests/test_slopes.py::test_b"]
    workers = run_with_two_workers(nodeids)
    binder = [[nodeid for nodeid in worker.ran if "test_binder.py" in nodeid] for worker in workers]
    assert sorted(map(len, binder)) == [0, 2], binder


def test_a_notebooks_nbgrader_and_student_edition_tests_share_a_worker_and_notebooks_spread():
    """They read one autograde of the notebook (tests/autograded_once.py): the second must find it made."""
    nodeids = [f"tests/test_{kind}[{number}{suffix}]" for number in ("13", "12") for kind, suffix in
               (("nbgrader.py::test_grades", ""), ("student_edition.py::test_runs", "_name.ipynb"))]
    nodeids.append("tests/test_nbgrader.py::test_metadata")
    assert conftest.work_unit(nodeids[0]) == conftest.work_unit(nodeids[1]) != conftest.work_unit(nodeids[2])
    workers = run_with_two_workers(nodeids)
    for number in ("13", "12"):
        ran = [[nodeid for nodeid in worker.ran if f"[{number}" in nodeid] for worker in workers]
        assert sorted(map(len, ran)) == [0, 2], ran
    assert all(worker.ran for worker in workers)
