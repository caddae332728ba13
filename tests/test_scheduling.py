"""How conftest.py shares `make test` between two xdist workers: a notebook's cells must
stay on one worker (they share a kernel), while each browser or Binder test may go alone."""
from conftest import RUN_ALONE, work_unit


def test_a_notebooks_cells_are_one_unit_and_long_tests_go_alone():
    assert work_unit("notebooks/08_degradation.ipynb::Cell 0") == "notebooks/08_degradation.ipynb"
    assert work_unit("notebooks/08_degradation.ipynb::Cell 12") == "notebooks/08_degradation.ipynb"
    assert work_unit("tests/test_slopes.py::test_formats") == "tests/test_slopes.py"
    browser = "tests/test_browser.py::test_notebook_runs_and_its_widgets_respond_in_jupyterlab[08_degradation.ipynb]"
    assert work_unit(browser) == browser
    assert "tests/test_browser.py" in RUN_ALONE and "tests/test_binder.py" in RUN_ALONE
    student = "tests/test_student_edition.py::test_the_student_notebook_runs_and_every_check_says_not_done_yet[01_x.ipynb]"
    assert work_unit(student) == student
