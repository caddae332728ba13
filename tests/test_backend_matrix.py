"""The backend matrix's pure parts: which stand-in machines it runs, what each sets, and
the shared test command."""
import pytest

from scripts import backend_matrix, test_versions
from utils.threads import LIBRARY_VARIABLES


def test_every_kernel_set_runs_with_one_and_two_threads_except_what_make_test_runs():
    combinations = {(b.kernels, b.threads) for b in backend_matrix.stand_ins()}
    every = {(kernels, threads) for kernels in backend_matrix.KERNELS for threads in (1, 2)}
    assert combinations == every - {("native", 1)}  # native kernels on one thread: `make test`
    assert len(combinations) == len(backend_matrix.stand_ins())  # no combination twice


def test_a_stand_in_run_by_a_version_environment_is_not_run_again_here():
    moved = set(backend_matrix.IN_VERSION_ENVIRONMENTS.values())
    assert moved == {backend_matrix.Backend("avx2", 1)}
    assert set(backend_matrix.backends()) == set(backend_matrix.stand_ins()) - moved
    assert set(backend_matrix.IN_VERSION_ENVIRONMENTS) <= set(test_versions.environments(
        test_versions.read_pins(), test_versions.supported_ranges(), {}))


def test_the_runs_in_make_test_that_check_notebooks_each_have_a_stand_in_of_their_own():
    """Three stand-ins' notebooks are checked by make test's runs (their files must exist and
    use the stand-in), none of them one a version environment checks."""
    moved = backend_matrix.NOTEBOOKS_IN_MAKE_TEST
    assert len(set(moved.values())) == len(moved) == 3
    assert set(moved.values()) <= set(backend_matrix.backends())
    for path, backend in moved.items():
        source = (backend_matrix.ROOT / path).read_text()
        assert f'NOTEBOOKS_IN_MAKE_TEST["{path}"]' in source, f"{path} does not run its stand-in {backend.name}"


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
    assert command[-2:] == ["-m", "not slow and not browser"]
    assert backend_matrix.closing_line("x\n== 3 passed in 1.0s ==\n") == "3 passed in 1.0s"


def test_unknown_backend_names_are_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit):
        backend_matrix.main(["avx512"])
    assert "['avx2', 'scalar', 'native-2', 'avx2-2', 'scalar-2']" in capsys.readouterr().err


def test_a_run_that_collected_no_tests_fails_and_says_so():
    assert backend_matrix.outcome(0) == "pass"
    assert backend_matrix.outcome(backend_matrix.NO_TESTS) == "FAIL: pytest collected no tests"
    assert backend_matrix.outcome(1) == "FAIL (exit 1)"
