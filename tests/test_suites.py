"""tests/suites.py: every test file is placed in one run set, and the matrices use them."""
from scripts import backend_matrix, test_versions
from tests import suites


def test_every_test_file_is_in_exactly_one_set():
    assert suites.unclassified() == [], (
        "place each of these test files in one set of tests/suites.py: NUMBERS if it computes numbers "
        "(it then runs under every numeric backend), LIBRARIES if it depends on library versions, "
        "SAME_EVERYWHERE otherwise")
    listed = suites.NUMBERS | suites.LIBRARIES | suites.SAME_EVERYWHERE
    assert listed <= set(suites.unit_test_files()), f"listed but missing: {sorted(listed - set(suites.unit_test_files()))}"


def test_a_new_file_is_unclassified_until_placed(monkeypatch):
    monkeypatch.setattr(suites, "unit_test_files", lambda: ["test_blocks.py", "test_new_numbers.py",
                                                            "test_exercises_new_topic.py"])
    assert suites.unclassified() == ["test_new_numbers.py"]  # an exercise's tests are numeric by name


def test_the_backend_matrix_runs_every_notebook_and_only_the_numeric_tests():
    paths = suites.backend_run()
    assert paths[0] == "notebooks" and "tests/test_blocks.py" in paths and "tests/test_exercises_core.py" in paths
    for left_out in ("test_site.py", "test_browser.py", "test_student_edition.py", "test_widgets.py",
                     "test_packaging.py", "test_classroom.py", "test_exercises_report.py"):
        assert f"tests/{left_out}" not in paths
    assert backend_matrix.paths(backend_matrix.Backend("scalar", 2)) == paths


def test_a_stand_in_whose_notebooks_make_test_runs_gets_only_the_numeric_tests():
    for backend in backend_matrix.NOTEBOOKS_IN_MAKE_TEST.values():
        assert backend_matrix.paths(backend) == suites.backend_run()[1:]


def test_the_version_environments_run_every_notebook_and_the_library_tests_only():
    paths = suites.version_run()
    assert paths[0] == "notebooks"
    assert {"tests/test_widgets.py", "tests/test_plotting.py", "tests/test_environment.py"} <= set(paths)
    assert set(paths[1:]) == {f"tests/{name}" for name in suites.LIBRARIES}
    assert "tests/test_blocks.py" not in paths and "tests/test_exercises_core.py" not in paths
    assert "tests/test_site.py" not in paths and "tests/test_binder.py" not in paths
    assert test_versions.paths() == paths
