"""The backend matrix's pure parts: what each stand-in machine sets, and the shared test command."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import backend_matrix  # noqa: E402


def test_each_backend_forces_one_combination_and_the_thread_run_has_the_cores_to_itself():
    by_name = {b.name: b for b in backend_matrix.backends(cores=2)}
    assert by_name["avx2"].variables == {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"}
    assert by_name["scalar"].variables == {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}
    assert by_name["threads-2"].variables["OMP_NUM_THREADS"] == "2" and by_name["threads-2"].workers == 1
    assert by_name["avx2"].workers == 2


def test_the_command_is_shared_with_the_version_environments():
    assert backend_matrix.command()[backend_matrix.command().index("-n") + 1] == "2"
    assert backend_matrix.command(1)[-2:] == ["-m", "not slow and not browser"]
    assert "--nbval" in backend_matrix.command(1) and backend_matrix.command(1)[3] == "-n"


def test_environment_drops_stray_backend_variables(monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")
    threads = backend_matrix.backends(cores=2)[2]
    assert "ATEN_CPU_CAPABILITY" not in backend_matrix.environment(threads)
    assert backend_matrix.closing_line("x\n== 3 passed in 1.0s ==\n") == "3 passed in 1.0s"
