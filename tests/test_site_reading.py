"""The site's reading aids that need no browser (scripts/site_reading.py)."""
import re
from pathlib import Path

import nbformat
import pytest

from scripts import site_reading

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_the_header_times_are_read_as_core_going_further_and_homework():
    header = ("**Time:** about 40 to 45 minutes for the core (reading); the optional *Going further* part "
              "(with the widget) about 20 more; the homework questions about 15 more. **Run time:** 1 s")
    assert site_reading.notebook_minutes(header) == {"core": (40, 45), "going_further": 20, "homework": 15}
    assert site_reading.notebook_minutes("**Time:** about 20 minutes (reading)") == {"core": (20, 20), "going_further": 0, "homework": 0}
    with pytest.raises(ValueError, match="must say"):
        site_reading.notebook_minutes("**Time:** an afternoon")


def test_every_notebook_states_its_time_and_the_landing_page_sums_them():
    headers = [nbformat.read(path, as_version=4).cells[0].source for path in NOTEBOOKS]
    times = [site_reading.notebook_minutes(header) for header in headers]  # raises for a header without one
    low = sum(t["core"][0] for t in times)
    sentence = site_reading.course_length(headers + ["# A page without a time"])
    assert sentence.startswith(f"The {len(NOTEBOOKS)} notebooks take about {low / 60:.1f} to ")
    assert f"({low} to " in sentence


FOLDED_PAGE = """# A question

What does the block compute?

<details><summary>Answer</summary>

The answer is **quixotic**, and so is this line.

</details>

<details class="course-solution"><summary>Show a solution</summary>

```python
def zanzibar(x):
    return x
```

</details>

After the folds.
"""


def _fold(html: str, summary: str) -> str:
    """The HTML from ``<details>`` with ``summary`` to its ``</details>``."""
    start = html.index(f"<summary>{summary}</summary>")
    return html[html.rindex("<details", 0, start):html.index("</details>", start)]


def _closes_outside(fold: str) -> bool:
    """Whether ``fold`` ends a div it did not open (a browser then ends the fold there)."""
    depth = 0
    for tag in re.finditer(r"<(/?)div\b", fold):
        depth += -1 if tag.group(1) else 1
        if depth < 0:
            return True
    return False


def test_a_folded_answer_and_solution_stay_inside_their_fold_and_out_of_search(tmp_path):
    # A Sphinx build of one MyST page with the course's extension: what a browser reads must keep
    # each answer inside its <details>. A div closed between <summary> and </details> (docutils'
    # wrapper for a raw node with a class) ends the fold there and shows the answer unfolded.
    from sphinx.application import Sphinx

    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    (source / "conf.py").write_text('extensions = ["myst_parser", "scripts.site_reading"]\n')
    (source / "index.md").write_text(FOLDED_PAGE)
    Sphinx(str(source), str(source), str(out), str(tmp_path / "doctrees"), "html", status=None, warning=None,
           freshenv=True).build()
    html = (out / "index.html").read_text(encoding="utf-8")
    for summary, hidden in (("Answer", "quixotic"), ("Show a solution", "zanzibar")):
        fold = _fold(html, summary)
        assert hidden in fold, f"the {summary!r} fold ends before its content: {fold!r}"
        assert not _closes_outside(fold), f"a div opened before the {summary!r} fold closes inside it: {fold!r}"
    index = (out / "searchindex.js").read_text(encoding="utf-8")
    assert '"fold"' in index and "quixot" not in index and "zanzibar" not in index
