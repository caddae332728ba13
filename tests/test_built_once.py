"""tests/built_once.py: a build shared by a whole test run happens once, also across workers."""
import multiprocessing

import pytest

from tests import built_once


def _build_counting(folder):
    counter = folder.parent / "builds.txt"
    with counter.open("a") as out:
        out.write("built\n")
    (folder / "page.html").write_text("<p>site</p>")


def _ask(tmp_path_factory_base, results):
    results.put(str(built_once.folder(_Factory(tmp_path_factory_base), "site", _build_counting)))


class _Factory:
    """Stands in for pytest's tmp_path_factory in another process."""

    def __init__(self, base):
        self.base = base

    def getbasetemp(self):
        return self.base


def test_the_first_asker_builds_and_everyone_else_reuses_it(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    askers = [context.Process(target=_ask, args=(tmp_path, results)) for _ in range(3)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    folders = {results.get() for _ in askers}
    assert folders == {str(tmp_path / "built-once" / "site")}
    assert (tmp_path / "built-once" / "builds.txt").read_text() == "built\n"
    assert (tmp_path / "built-once" / "site" / "page.html").read_text() == "<p>site</p>"


def test_workers_of_one_run_share_the_run_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert built_once.run_directory(_Factory(tmp_path / "popen-gw1")) == tmp_path
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert built_once.run_directory(_Factory(tmp_path)) == tmp_path


def test_a_failed_build_is_tried_again_by_the_next_asker(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)

    def broken(folder):
        (folder / "half.html").write_text("")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        built_once.folder(_Factory(tmp_path), "site", broken)
    folder = built_once.folder(_Factory(tmp_path), "site", _build_counting)
    assert sorted(p.name for p in folder.iterdir()) == [built_once.DONE, "page.html"]
