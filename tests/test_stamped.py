"""scripts/stamped.py: an install runs again when, and only when, its inputs' contents change."""
import sys

from scripts import stamped


def _counting_install(tmp_path):
    """A command that appends a line to a file each time it runs."""
    log = tmp_path / "runs.txt"
    return log, [sys.executable, "-c", f"open({str(log)!r}, 'a').write('ran\\n')"]


def test_an_install_is_skipped_until_a_lock_file_changes_its_contents(tmp_path):
    lock, stamp = tmp_path / "package-lock.json", tmp_path / "node_modules" / ".installed-from"
    lock.write_text('{"version": 1}')
    log, command = _counting_install(tmp_path)
    assert stamped.run(stamp, [lock], command) == 0 and log.read_text() == "ran\n"
    assert stamped.run(stamp, [lock], command) == 0 and log.read_text() == "ran\n"  # same contents: skipped
    lock.write_text('{"version": 1}')  # touched, same bytes: still skipped
    assert stamped.main([str(stamp), str(lock), "--", *command]) == 0 and log.read_text() == "ran\n"
    lock.write_text('{"version": 2}')
    assert stamped.run(stamp, [lock], command) == 0 and log.read_text() == "ran\nran\n"


def test_a_failed_install_leaves_no_stamp_and_runs_again(tmp_path):
    lock, stamp = tmp_path / "requirements.txt", tmp_path / "venv" / ".installed-from"
    lock.write_text("numpy==2.4.6\n")
    assert stamped.run(stamp, [lock], [sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert not stamp.exists() and not stamped.up_to_date(stamp, [lock])


def test_the_digest_depends_on_names_and_contents_not_on_the_folder(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "requirements.txt").write_text("torch==2.13.0\n")
    assert stamped.digest([tmp_path / "a" / "requirements.txt"]) == stamped.digest([tmp_path / "b" / "requirements.txt"])
    (tmp_path / "b" / "pyproject.toml").write_text("torch==2.13.0\n")
    assert stamped.digest([tmp_path / "a" / "requirements.txt"]) != stamped.digest([tmp_path / "b" / "pyproject.toml"])


def test_the_command_line_wants_a_stamp_inputs_and_a_command(tmp_path, capsys):
    assert stamped.main([str(tmp_path / "stamp"), "--", "true"]) == 2
    assert stamped.main([str(tmp_path / "stamp"), str(tmp_path / "missing.txt"), "--", "true"]) == 2
    assert "no such input file(s)" in capsys.readouterr().err
