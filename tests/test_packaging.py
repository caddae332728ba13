"""A non-editable install (Colab's setup cell installs the course from a zip) must carry every
utils package and data file, not only what an editable install happens to find on disk."""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_utils_package_and_data_file_is_declared():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "utils").rglob("__init__.py")}
    assert packages == set(setuptools["packages"])
    data = [p.name for p in (ROOT / "utils").iterdir() if p.is_file() and p.suffix not in (".py", ".pyc")]
    patterns = setuptools.get("package-data", {}).get("utils", [])
    assert all(any(Path(name).match(pattern) for pattern in patterns) for name in data), (data, patterns)
