"""Sphinx configuration of the course site (built by scripts/build_site.py, which writes the
pages and the notebooks' working copies into build/site-source/ and the scripts and fonts
taken from site/node_modules into build/site-assets/; see README, "The course as a website").

Nothing on a page is fetched from outside the site: RequireJS, the widget renderer and
MathJax are served from _static (the defaults load them from CDNs)."""
import os
from pathlib import Path

# The repository's one setting (pyproject.toml's [tool.course]); scripts/build_site.py runs Sphinx
# from the repository root, where the scripts package is found.
from scripts.course_repository import BRANCH, GITHUB_URL

ROOT = Path(__file__).resolve().parent.parent  # autodoc imports utils as installed: editable, from this checkout

project = "Residual connections, interactively"
author = "the course's contributors"
copyright = "2026, " + author
extensions = ["myst_nb", "sphinx.ext.autodoc", "scripts.site_reading"]  # the last: search, folded answers, reading aids
exclude_patterns = ["README.md", "downloads/**", "_build", "**.ipynb_checkpoints"]
suppress_warnings = ["myst.header"]  # the README's sections start at level 2 inside included pages

# The stored notebooks are the content: never execute them here (the tests do, elsewhere).
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# Served from the site itself (build/site-assets, copied from the npm packages of site/package.json).
html_static_path = [os.environ.get("COURSE_SITE_ASSETS", str(ROOT / "build" / "site-assets"))]
html_css_files = ["course.css"]
nb_ipywidgets_js = {"require.min.js": {}, "require-config.js": {}, "mathjax-hub.js": {}, "embed-amd.js": {}}
mathjax_path = "mathjax/startup.js"
# The components build/site-assets holds (scripts/build_site.py, ASSET_FILES): no menu, so no
# formula is a tab stop (site/reading/course-reading.js puts them there when a reader asks).
mathjax3_config = {"loader": {"load": ["input/tex", "output/chtml", "a11y/assistive-mml"]}}

templates_path = ["_templates"]  # the search button with an accessible name that matches its words
html_theme = "sphinx_book_theme"
html_title = project
html_favicon = "favicon.svg"  # else browsers ask for /favicon.ico, which the site does not have
html_last_updated_fmt = None
html_theme_options = {
    "repository_url": GITHUB_URL,
    "repository_branch": BRANCH,
    "use_repository_button": True,
    "use_download_button": False,  # each notebook page links its own notebook and student edition
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
html_show_sourcelink = False
html_copy_source = False

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}


def _literal_bars(app, what, name, obj, options, lines):
    """The docstrings are plain text for learners, where |x| is an absolute value, not a
    reStructuredText substitution."""
    lines[:] = ["``".join(part if inside % 2 else part.replace("|", "\\|")  # not inside ``code``
                          for inside, part in enumerate(line.split("``"))) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _literal_bars)
