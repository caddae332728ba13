"""Which tests each of CI's runs needs, so that each runs only what can differ there.

`make test` runs every test file once, on this CPU with one thread and requirements.txt's
versions, and every notebook in three front ends on three other stand-in CPUs
(scripts/backend_matrix.py). The backend matrix repeats what another CPU or thread count can
change, the unit tests that compute numbers (NUMBERS), on those three; on request every
notebook under nbval too. The
version environments (scripts/test_versions.py) repeat what another version of numpy,
matplotlib, scikit-learn, ipywidgets, ipykernel, IPython or tqdm can change: every notebook
(which calls the numeric functions on real inputs), and the tests of widgets, plotting,
validation and the environment check (LIBRARIES). The rest (SAME_EVERYWHERE) checks
text, structure and tooling: the site, the browser, packaging, Binder, the classroom, the
student edition, grading, the test machinery itself. Their outcome is the same on every CPU
and library version, or they need what only requirements.txt installs.

Every test file is in exactly one set (tests/test_suites.py): a new file fails that test until
it is placed here. An exercise's tests (test_exercises_<topic>.py) are numeric by their name
unless listed elsewhere (the exercises report's own tests).
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = "notebooks"  # nbval runs every notebook in every run

NUMERIC_PATTERN = "test_exercises_*.py"  # checkers compare the learner's numbers with the reference's
NUMBERS = frozenset({
    "test_blocks.py", "test_data.py", "test_depth_scaling.py", "test_exercise_mutants.py", "test_gradient_flow.py",
    "test_hyper_connections.py", "test_jacobians.py", "test_landscape.py", "test_lesion.py", "test_looks_linear.py",
    "test_mlp.py", "test_numpy_block.py", "test_recipes.py", "test_shattered.py", "test_slopes.py",
    "test_training.py", "test_training_figures.py", "test_transformer.py",
    "test_depth_aggregation.py", "test_depth_as_time.py", "test_logit_lens.py", "test_low_precision.py",
})
LIBRARIES = frozenset({
    "test_api_contract.py",  # bad values of NumPy's and torch's types, each refused in words
    "test_diagrams.py", "test_transformer_diagram.py", "test_plotting.py",  # matplotlib
    "test_environment.py",  # the environment check reads the installed versions
    "test_pictures.py", "test_widgets.py",  # ipywidgets, matplotlib
    "test_progress.py",  # tqdm
    "test_validation.py",  # NumPy's scalar and array types
})
SAME_EVERYWHERE = frozenset({
    "test_backend_matrix.py", "test_benchmark.py", "test_binder.py", "test_browser.py",
    "test_build_student_edition.py", "test_classroom.py", "test_cpu_share.py", "test_exercise_names.py",
    "test_exercises_report.py", "test_nbgrader.py", "test_notebook_header.py", "test_notebooks_saved.py",
    "test_output_tolerance.py", "test_packaging.py", "test_scheduling.py", "test_site.py", "test_stamped.py",
    "test_student_edition.py", "test_suites.py", "test_versions.py", "test_built_once.py",
    "test_course_repository.py", "test_course_venv.py", "test_grading.py", "test_parallel_grading.py", "test_pacing.py", "test_site_live.py", "test_site_reading.py",
    "test_widget_renderer.py", "test_workflows.py", "test_z2jh.py",
})


def unit_test_files() -> list[str]:
    """Every test file's name, as pytest collects them from tests/."""
    return sorted(path.name for path in (ROOT / "tests").glob("test_*.py"))


def _numeric(name: str) -> bool:
    return name in NUMBERS or (Path(name).match(NUMERIC_PATTERN) and name not in SAME_EVERYWHERE)


def unclassified() -> list[str]:
    """Test files in no set, or in more than one."""
    problems = []
    for name in unit_test_files():
        sets = [_numeric(name), name in LIBRARIES, name in SAME_EVERYWHERE]
        if sum(sets) != 1:
            problems.append(name)
    return problems


def backend_run() -> list[str]:
    """The paths the backend matrix gives pytest: every notebook and the numeric tests."""
    return [NOTEBOOKS, *(f"tests/{name}" for name in unit_test_files() if _numeric(name))]


def version_run() -> list[str]:
    """The paths each version environment gives pytest: every notebook and LIBRARIES."""
    return [NOTEBOOKS, *(f"tests/{name}" for name in unit_test_files() if name in LIBRARIES)]
