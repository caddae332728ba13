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


def test_progress_throttles_widget_updates_but_always_shows_the_last_step():
    with Progress(10_000, "steps") as bar:
        sent = []
        bar.bar.observe(lambda change: sent.append(change.new), names="value")
        for _ in range(9_999):
            bar.advance()
        assert len(sent) < 100  # far fewer messages than steps
        bar.advance()
    assert sent[-1] == 10_000 and bar.label.value == "10000/10000"


def test_progress_shows_the_count_reached_when_interrupted():
    with pytest.raises(KeyboardInterrupt):
        with Progress(1_000) as bar:
            for step in range(500):
                bar.advance()
            raise KeyboardInterrupt
    assert bar.bar.value == 500 and bar.label.value == "500/1000"
