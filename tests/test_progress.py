import re

import pytest

from utils.progress import progress_bar


def test_progress_bar_counts_and_shows_no_time_or_rate():
    with progress_bar(3, "training") as bar:
        bar.update()
        bar.update(2)
    assert bar.n == bar.total == 3
    text = str(bar)
    assert text.startswith("training: 100%|") and text.endswith("| 3/3")
    assert not re.search(r"\d\d:\d\d|it/s|s/it", text)  # a saved notebook would change with every run


def test_progress_bar_text_is_the_same_on_every_run():
    texts = set()
    for _ in range(2):
        with progress_bar(4) as bar:
            bar.update(4)
        texts.add(str(bar))
    assert texts == {"100%|" + "█" * 10 + "| 4/4"}


def test_progress_bar_rejects_bad_input():
    with pytest.raises(ValueError, match="total must be at least 1"):
        progress_bar(0)
    with pytest.raises(TypeError, match="description must be a str"):
        progress_bar(3, 7)
