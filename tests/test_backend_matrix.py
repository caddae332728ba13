"""The backend matrix's pure parts: which stand-in machines it runs, what each sets, and
the shared test command."""
import pytest

from scripts import backend_matrix, test_versions
from tests import suites
from utils.threads import LIBRARY_VARIABLES


def test_every_kernel_set_runs_with_one_and_two_threads():
    combinations = {(b.kernels, b.threads) for b in backend_matrix.stand_ins()}
    assert combinations == {(kernels, threads) for kernels in backend_matrix.KERNELS for threads in (1, 2)}
    assert len(combinations) == len(backend_matrix.stand_ins())  # no combination twice


def test_every_stand_ins_notebooks_are_checked_by_exactly_one_run_of_every_ci_run():
    """Four in make test (three front ends and nbgrader's run of the release) and two version
    environments, none twice; ``newest``, which runs only when PyPI has something newer than
    requirements.txt, repeats the release's. This script runs the numeric unit tests of make
    test's three front ends: every kernel set, with one thread and with two."""
    in_make_test = [*backend_matrix.NOTEBOOKS_IN_MAKE_TEST.values(), backend_matrix.RELEASE_IN_MAKE_TEST]
    in_versions = [backend for name, backend in backend_matrix.IN_VERSION_ENVIRONMENTS.items() if name != "newest"]
    assert sorted(in_make_test + in_versions, key=str) == sorted(backend_matrix.stand_ins(), key=str)
    assert backend_matrix.IN_VERSION_ENVIRONMENTS["newest"] == backend_matrix.RELEASE_IN_MAKE_TEST
    front_ends = list(backend_matrix.NOTEBOOKS_IN_MAKE_TEST.values())
    assert backend_matrix.backends() == front_ends
    assert {b.kernels for b in front_ends} == set(backend_matrix.KERNELS) and {b.threads for b in front_ends} == {1, 2}
    assert set(backend_matrix.IN_VERSION_ENVIRONMENTS) == set(test_versions.environments(
        test_versions.read_pins(), test_versions.supported_ranges(), {}))


def test_the_runs_in_make_test_that_check_notebooks_use_their_stand_in():
    for path, backend in backend_matrix.NOTEBOOKS_IN_MAKE_TEST.items():
        source = (backend_matrix.ROOT / path).read_text()
        assert f'NOTEBOOKS_IN_MAKE_TEST["{path}"]' in source, f"{path} does not run its stand-in {backend.name}"


def test_a_stand_in_runs_nbval_here_only_when_no_run_in_make_test_checks_its_notebooks():
    for backend in backend_matrix.stand_ins():
        paths = backend_matrix.paths(backend)
        assert (suites.NOTEBOOKS in paths) == (backend not in backend_matrix.NOTEBOOKS_IN_MAKE_TEST.values())
        assert "tests/test_gradient_flow.py" in paths and "tests/test_site.py" not in paths


def test_make_test_does_not_run_nbval_itself():
    """Its three runs above check every notebook; nbval there would be a fourth pass."""
    recipe = (backend_matrix.ROOT / "Makefile").read_text().split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "pytest" in recipe and "--nbval" not in recipe


def test_kernel_variables_are_the_backends_and_sleeping_idle_threads():
    backend = backend_matrix.Backend("scalar", 1)
    assert backend_matrix.kernel_variables(backend) == {**backend.variables, "OMP_WAIT_POLICY": "PASSIVE"}


def test_each_backend_sets_its_kernels_and_one_thread_count_for_every_library():
    by_name = {b.name: b for b in backend_matrix.stand_ins()}
    assert by_name["avx2"].variables == {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2",
                                         "OPENBLAS_CORETYPE": "Haswell", "OMP_NUM_THREADS": "1",
                                         "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    assert by_name["scalar-2"].variables["ATEN_CPU_CAPABILITY"] == "default"
    assert by_name["native-2"].variables == dict.fromkeys(LIBRARY_VARIABLES, "2")
    assert "2 threads" in by_name["avx2-2"].stands_in_for and "threads" not in by_name["avx2"].stands_in_for


def test_environment_replaces_stray_settings_and_keeps_idle_threads_asleep(monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "SkylakeX")
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    native = backend_matrix.environment(backend_matrix.Backend("native", 2))
    assert "ATEN_CPU_CAPABILITY" not in native and "OPENBLAS_CORETYPE" not in native
    assert native["OMP_NUM_THREADS"] == "2" and native["OMP_WAIT_POLICY"] == "PASSIVE"
    assert backend_matrix.environment(backend_matrix.Backend("avx2", 1))["OMP_NUM_THREADS"] == "1"


def test_the_command_is_shared_with_the_version_environments():
    command = backend_matrix.command()
    assert command[command.index("-n") + 1] == "2" and "--nbval" in command
    alone = backend_matrix.command(0)
    assert alone[alone.index("-n") + 1] == "0"
    assert command[-2:] == ["-m", "not slow and not browser"]
    assert backend_matrix.closing_line("x\n== 3 passed in 1.0s ==\n") == "3 passed in 1.0s"


def test_unknown_backend_names_are_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit):
        backend_matrix.main(["avx512"])
    assert "['native', 'avx2', 'scalar', 'native-2', 'avx2-2', 'scalar-2']" in capsys.readouterr().err


def test_a_run_that_collected_no_tests_fails_and_says_so():
    assert backend_matrix.outcome(0) == "pass"
    assert backend_matrix.outcome(backend_matrix.NO_TESTS) == "FAIL: pytest collected no tests"
    assert backend_matrix.outcome(1) == "FAIL (exit 1)"


@pytest.mark.parametrize("runs, cpus, workers", [(1, 2, 2), (3, 2, 0), (2, 2, 0), (1, 1, 0), (3, 8, 2), (2, 8.5, 4)])
def test_runs_started_at_once_share_the_cpus_and_one_process_each_below_two(runs, cpus, workers):
    assert backend_matrix.workers_each(runs, cpus=cpus) == workers
