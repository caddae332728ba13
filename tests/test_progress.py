import pytest

from utils.progress import Progress


def test_progress_counts_and_caps_at_total():
    with Progress(3, "training") as bar:
        bar.advance()
        bar.advance(5)
    assert bar.done == 3 and bar.bar.value == 3 and bar.label.value == "3/3"
    assert bar.bar.bar_style == "success"
    assert not bar.shown  # no kernel under pytest: nothing displayed


def test_progress_marks_failure():
    with pytest.raises(RuntimeError):
        with Progress(2) as bar:
            raise RuntimeError("boom")
    assert bar.bar.bar_style == "danger"


def test_progress_rejects_bad_input():
    with pytest.raises(ValueError, match="total must be at least 1"):
        Progress(0)
    with pytest.raises(TypeError, match="description must be a str"):
        Progress(3, 7)
    with pytest.raises(ValueError, match="steps must be at least 0"):
        Progress(3).advance(-1)
