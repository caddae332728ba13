"""The site's reading aids that need no browser (scripts/site_reading.py)."""
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
