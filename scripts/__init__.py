"""The course's tools (build the student edition, the site, the nbgrader course; execute the
notebooks; run the test matrices), run from the repository root as ``python -m scripts.<name>``."""
