"""pytest configuration shared by the unit tests and nbval.

nbval cannot compare a cell whose output lives inside a widget (the stored notebook keeps
it in the widget state, a live run sends it as plain output), so such cells still run,
and still fail on an error, but their outputs are not compared. Every other cell is
compared strictly. See ../shared/TOOLING.md and tests/test_notebooks_saved.py.
"""
import os

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _shows_widget(cell) -> bool:
    return any(WIDGET_VIEW in output.get("data", {}) for output in cell.get("outputs", []))


# nbval waits only 5 s for each output message once a cell has replied; on a loaded 2-core
# machine (two notebooks under xdist, a browser test beside them) a message can take longer.
OUTPUT_TIMEOUT = 60


def pytest_collection_modifyitems(config, items):
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None or not hasattr(item, "options"):
            continue
        item.output_timeout = OUTPUT_TIMEOUT
        if _shows_widget(cell):
            item.options["check"] = False


def pytest_configure(config):
    # Notebooks and tests run with one torch thread and one BLAS thread, so every float
    # sum is done in the same order on every machine and stored outputs reproduce.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
