#!/usr/bin/env python
"""Write every link that names the course's repository from its one setting, ``[tool.course]``
in pyproject.toml (scripts/course_repository.py). After a fork changes that line:

    python -m scripts.write_links      # or: make links

rewrites the notebooks' Binder and Colab badges and their setup cell's download link, the
README's badges (both by scripts/notebook_header.py) and the Zero to JupyterHub first page,
the nbgitpuller link in classroom/z2jh/config.yaml. The rest reads the setting when it runs:
the site's repository button (site/conf.py), the student edition's badges
(scripts/build_student_edition.py) and the tests. Idempotent.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import urlencode

from scripts import notebook_header
from scripts.course_repository import GITHUB_URL, STUDENT_BRANCH

ROOT = Path(__file__).resolve().parent.parent
Z2JH_VALUES = ROOT / "classroom" / "z2jh" / "config.yaml"
CLASS_FOLDER = "residual-course"  # the folder in each student's home (as on the one-machine hub)
_DEFAULT_URL = re.compile(r'^(  defaultUrl: )"[^"\n]*"$', re.MULTILINE)


def z2jh_first_page() -> str:
    """The nbgitpuller link every student opens first on Kubernetes: the student edition's branch
    of the course's repository, cloned into CLASS_FOLDER, opening notebook 00."""
    return "/git-pull?" + urlencode({"repo": GITHUB_URL, "branch": STUDENT_BRANCH, "targetPath": CLASS_FOLDER,
                                     "urlpath": f"lab/tree/{CLASS_FOLDER}/notebooks/00_start_here.ipynb"})


def update_z2jh_values(path: Path = Z2JH_VALUES) -> bool:
    """Put z2jh_first_page() into the values' ``singleuser.defaultUrl`` line; True if it changed."""
    before = path.read_text()
    if len(_DEFAULT_URL.findall(before)) != 1:
        raise ValueError(f'{path}: expected one line \'  defaultUrl: "..."\' under singleuser')
    after = _DEFAULT_URL.sub(lambda match: f'{match[1]}"{z2jh_first_page()}"', before)
    if after != before:
        path.write_text(after)
    return after != before


def main(argv=None) -> int:
    notebook_header.main([])
    print(f"{Z2JH_VALUES.relative_to(ROOT)}: {'updated' if update_z2jh_values() else 'already up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
