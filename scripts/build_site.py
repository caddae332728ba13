#!/usr/bin/env python
"""Build the course's website from the stored notebooks; nothing is executed.

    python -m scripts.build_site                       # into build/site/ (open build/site/index.html)
    python -m scripts.build_site --out DIR --notebooks DIR

Sphinx with myst-nb and sphinx-book-theme (site/conf.py) turns a working copy of the
sources, written to build/site-source/, into HTML. The notebooks in the repository are
never changed; each working copy differs from its notebook in these ways:

- every code cell with ``live_plot`` metadata (``{"factory": "utils.<module>:<function>",
  "kwargs": {...}}``) shows, instead of its stored live widget, the plot's
  ``static_widget()``: the same controls over a precomputed grid of settings, wired with
  ``jslink`` only, so the sliders work on a page without a kernel;
- a stored live plot in a cell without that metadata keeps its picture and text and loses
  its controls, which could not redraw without a kernel (a warning names it);
- every picture in a widget's state (the static widgets' hundreds of precomputed ones) is a
  file of its own beside the pages, ``notebooks/widget-pictures/<SHA-256>.png``, which the
  state names by URL: the renderer draws only the picture each ``Stack`` shows, so a page
  downloads its default pictures at once and each other one when a control first asks for it,
  instead of all of them inside its HTML (02's page went from 6.2 MB to under 5 MB so);
- the Binder and Colab badges (images from other sites) become a line of plain links:
  launch on Binder, open in Colab, download this notebook, download its student edition.

A rebuild redoes only what changed: pictures come from build/site-pictures/ (``draw_live_plots``),
an unchanged working copy keeps its file time (the static widgets' model ids are made from the
notebook's name, not drawn at random) and Sphinx's parsed pages are kept in
build/site-source-doctrees/ (``_reusable_doctrees``), so Sphinx parses only the changed pages.

RequireJS, the widget renderer, MathJax and the renderer's fonts come from the npm packages
pinned in site/package-lock.json (``npm ci`` runs when site/node_modules is missing or
older than the lock file) and are served from the site's _static folder.
"""
from __future__ import annotations

import argparse
import ast
import base64
import copy
import hashlib
import html
import importlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
NODE_MODULES = SITE / "node_modules"
NPM_STAMP = NODE_MODULES / ".installed-from"  # the SHA-256 of the package-lock.json it was installed from
NPM_CI = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"]
DEFAULT_OUT = ROOT / "build" / "site"
WORK = ROOT / "build" / "site-source"
ASSETS = ROOT / "build" / "site-assets"
PICTURE_CACHE = ROOT / "build" / "site-pictures"  # the static widgets' pictures of earlier builds (draw_live_plots)
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REFERENCE = re.compile(r"IPY_MODEL_([0-9a-f]{32})")
LINK_MODELS = ("LinkModel", "DirectionalLinkModel")
PICTURES = "widget-pictures"  # beside the notebook pages, in build/site-source and in the site

from scripts import build_student_edition, notebook_header, site_live, stamped, widget_renderer  # noqa: E402

# (npm package folder, file or folder inside it, where it goes under _static)
ASSET_FILES = [
    ("requirejs", "require.js", "require.min.js"),
    ("@jupyter-widgets/html-manager", "dist/embed-amd.js", "embed-amd.js"),
    # MathJax as components (site/conf.py's mathjax3_config loads them): TeX in, CHTML out, and
    # the hidden MathML screen readers read; without tex-chtml.js's menu (0.4 MB), whose every
    # formula was a tab stop.
    *(("mathjax", f"es5/{part}.js", f"mathjax/{part}.js") for part in (
        "startup", "core", "input/tex", "output/chtml", "output/chtml/fonts/tex", "a11y/assistive-mml")),
    ("mathjax", "es5/output/chtml/fonts/woff-v2", "mathjax/output/chtml/fonts/woff-v2"),
    ("mathjax", "es5/input/tex/extensions", "mathjax/input/tex/extensions"),
    ("mathjax", "es5/adaptors", "mathjax/adaptors"),
]
FONT_SUFFIXES = (".woff2", ".woff", ".ttf", ".eot", ".svg")  # the widget renderer's icon fonts, beside embed-amd.js


def npm_ci() -> None:
    """Install site/node_modules from site/package-lock.json unless it was installed from this
    very lock file (scripts/stamped.py; `make site` and `make test` do the same)."""
    if stamped.up_to_date(NPM_STAMP, [SITE / "package-lock.json"]):
        return
    if shutil.which("npm") is None:
        raise SystemExit("npm is needed to build the site (apt-get install npm): it installs the pinned "
                         "widget renderer, RequireJS and MathJax from site/package-lock.json")
    if stamped.run(NPM_STAMP, [SITE / "package-lock.json"], NPM_CI, cwd=SITE) != 0:
        raise SystemExit("npm ci failed in site/ (its output is above)")


def copy_assets(target: Path = ASSETS) -> None:
    """The scripts and fonts the pages load, from the npm packages, plus site/course.css."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for package, inside, to in ASSET_FILES:
        source, destination = NODE_MODULES / package / inside, target / to
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, destination)
        else:
            shutil.copy2(source, destination)
    fonts = target / "@jupyter-widgets/html-manager/dist"  # where the renderer looks for them (site/require-config.js)
    fonts.mkdir(parents=True)
    for font in (NODE_MODULES / "@jupyter-widgets/html-manager/dist").iterdir():
        if font.suffix in FONT_SUFFIXES:
            shutil.copy2(font, fonts / font.name)
        # The renderer's font path is the folder of whichever of its modules loaded first, and
        # that can be @jupyter-widgets/ (seen as 404s on a page whose widgets loaded in another
        # order): the WOFF2 files, which every current browser takes first, go there too.
        if font.suffix == ".woff2":
            shutil.copy2(font, fonts.parent.parent / font.name)
    for name in ("course.css", "require-config.js", "mathjax-hub.js"):
        shutil.copy2(SITE / name, target / name)
    widget_renderer.trim_file(target / "embed-amd.js")  # without ipywidgets 7's modules and CSS source maps


def load_factory(spec: str):
    """The function named by ``"package.module:function"``."""
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ValueError(f"live_plot factory must be 'module:function', got {spec!r}")
    module, name = spec.split(":")
    factory = getattr(importlib.import_module(module), name, None)
    if not callable(factory):
        raise ValueError(f"live_plot factory {spec!r} names no function")
    return factory


def make_plot(live_plot: dict):
    """The plot a ``live_plot`` cell's metadata names, built by its factory."""
    if not isinstance(live_plot, dict) or "factory" not in live_plot:
        raise ValueError(f"live_plot metadata must be a dict with a 'factory', got {live_plot!r}")
    return load_factory(live_plot["factory"])(**live_plot.get("kwargs", {}))


def _plot_key(live_plot: dict) -> str:
    return json.dumps(live_plot, sort_keys=True)


def _repository_modules(module: str) -> list[Path]:
    """The files of ``module`` and of every module of this repository it imports, directly or
    through others: read from their source, so an import inside a function counts too."""
    seen, todo = {}, [module]
    while todo:
        name = todo.pop()
        if not name or name in seen:
            continue
        parts = name.split(".")
        todo += [".".join(parts[:end]) for end in range(1, len(parts))]  # a.b.c runs a and a.b first
        candidates = (ROOT.joinpath(*parts).with_suffix(".py"), ROOT.joinpath(*parts, "__init__.py"))
        path = seen[name] = next((candidate for candidate in candidates if candidate.is_file()), None)
        if path is None:  # not this repository's (numpy, torch, ...): the versions cover it
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            if isinstance(node, ast.Import):
                todo += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # from . import x, from ..y import z
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                todo += [base, *(f"{base}.{alias.name}" for alias in node.names)]  # a name may be a module
    return sorted(path for path in seen.values() if path is not None)


def _drawing_code(live_plot: dict) -> str:
    """SHA-256 of everything the static pictures of a ``live_plot`` depend on besides its
    metadata: the repository's modules its factory imports (and the other files beside them,
    such as fonts) and the versions of the libraries that draw and compute. A change to a module
    no plot imports (a notebook's helper, the progress bar) keeps every picture."""
    from importlib.metadata import version

    libraries = ("matplotlib", "numpy", "pillow", "torch", "scikit-learn", "ipywidgets")
    digest = hashlib.sha256(" ".join([sys.version, *(f"{name} {version(name)}" for name in libraries)]).encode())
    modules = _repository_modules(live_plot["factory"].partition(":")[0])
    data = {path for folder in {module.parent for module in modules} for path in folder.iterdir()
            if path.is_file() and path.suffix not in (".py", ".pyc")}
    for path in sorted({*modules, *data}):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _cached_stills(cache: Path, key: str) -> dict:
    try:
        return {tuple(map(tuple, setting)): (base64.b64decode(png), text, alt)  # settings as utils.pictures names them
                for setting, png, text, alt in json.loads(cache.joinpath(key + ".json").read_text())}
    except (OSError, ValueError, TypeError):
        return {}  # not drawn yet, or a cache file cut short: drawn again


def draw_live_plots(notebooks: list, cache: Path | None = PICTURE_CACHE, prune: bool = False) -> dict:
    """The plot of every ``live_plot`` cell of ``notebooks``, by its metadata (``_plot_key``),
    with the static pictures of all of them drawn at once: one pool of processes for the whole
    site (``utils.widgets.draw_static_pictures``) keeps every core busy to the last picture.
    Pictures drawn by an earlier build from the same metadata and the same drawing code
    (``_drawing_code``) are read from ``cache`` instead (a rebuild then draws none); None: draw all.
    With ``prune`` (``notebooks`` are the whole course), the cache keeps only these plots'
    pictures, so it does not grow with every change to a plot's code."""
    from utils.widgets import LivePlot, draw_static_pictures

    plots = {_plot_key(cell.metadata["live_plot"]): None for notebook in notebooks for cell in notebook.cells
             if cell.cell_type == "code" and "live_plot" in cell.metadata}
    plots = {key: make_plot(json.loads(key)) for key in plots}
    live = {hashlib.sha256((_drawing_code(json.loads(key)) + key).encode()).hexdigest(): plot
            for key, plot in plots.items() if isinstance(plot, LivePlot)}
    for name, plot in live.items():
        # draw_static_pictures draws only the settings missing from a plot's _stills.
        plot._stills.update(_cached_stills(cache, name) if cache else {})
    draw_static_pictures(list(live.values()))
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
        for name, plot in live.items():
            stills = [[setting, base64.b64encode(png).decode("ascii"), text, alt]
                      for setting, (png, text, alt) in plot._stills.items()]
            (cache / f"{name}.json.part").write_text(json.dumps(stills))
            (cache / f"{name}.json.part").replace(cache / f"{name}.json")
        for stale in (path for path in cache.glob("*.json") if prune and path.stem not in live):
            stale.unlink()
    return plots


def static_widget_state(live_plot: dict, plot=None) -> tuple[str, dict]:
    """The model id of the static widget of a ``live_plot`` cell (of ``plot`` if it was built
    already) and the state of every model it needs (ipywidgets' own embedding: pictures travel
    as base64 buffers)."""
    from ipywidgets import embed, widget
    from ipywidgets.widgets.widget_link import Link

    plot = make_plot(live_plot) if plot is None else plot
    static = plot.static_widget()
    state = embed.dependency_state([static], drop_defaults=True)
    # jslinks are widgets of their own that nothing in the tree refers to: add the ones between its models.
    links = [link for link in list(widget._instances.values()) if isinstance(link, Link)
             and link.source[0].model_id in state and link.target[0].model_id in state]
    state.update(embed.dependency_state(links, drop_defaults=True))
    return static.model_id, state


def _renamed(root: str, models: dict, seed: str) -> tuple[str, dict]:
    """``models`` and their ``root`` under ids made from ``seed`` and their order, instead of
    the random ones ipywidgets gives: an unchanged notebook then gives an unchanged working copy,
    which the next build's Sphinx need not read again."""
    ids = {old: hashlib.sha256(f"{seed} {number}".encode()).hexdigest()[:32] for number, old in enumerate(models)}
    renamed = json.loads(MODEL_REFERENCE.sub(lambda match: "IPY_MODEL_" + ids.get(match[1], match[1]), json.dumps(models)))
    return ids[root], {ids[old]: entry for old, entry in renamed.items()}


def _references(entry: dict) -> set[str]:
    return set(MODEL_REFERENCE.findall(json.dumps(entry.get("state", {}))))


def _reachable(state: dict, roots: set[str]) -> set[str]:
    """The models the shown widget views need: their trees, and the links between their models."""
    seen, todo = set(), list(roots)
    while todo:
        while todo:
            model = todo.pop()
            if model in seen or model not in state:
                continue
            seen.add(model)
            todo += _references(state[model])
        todo = [model for model, entry in state.items() if model not in seen
                and entry.get("model_name") in LINK_MODELS and _references(entry) <= seen]
    return seen


def _views(notebook) -> set[str]:
    return {output["data"][WIDGET_VIEW]["model_id"] for cell in notebook.cells if cell.cell_type == "code"
            for output in cell.get("outputs", []) if WIDGET_VIEW in output.get("data", {})}


def _still_picture(state: dict, root: str) -> bool:
    """Turn a stored live plot (a ``utils.widgets.LivePlot`` saved in its default state, in a cell
    without ``live_plot`` metadata) into its picture and text alone, the picture titled with
    that text: on a page without a kernel its controls would move while the picture stayed."""
    entry = state.get(root, {})
    if "liveplot" not in entry.get("state", {}).get("_dom_classes", ()):
        return False
    children = [child.removeprefix("IPY_MODEL_") for child in entry["state"].get("children", ())]
    kept = {state[child]["model_name"]: child for child in children if child in state
            and (state[child]["model_name"] == "ImageModel"
                 or "liveplot-caption" in state[child]["state"].get("_dom_classes", ()))}
    if "ImageModel" not in kept:
        return False
    caption = state[kept["HTMLModel"]]["state"].get("value", "") if "HTMLModel" in kept else ""
    text = html.unescape(re.sub(r"<[^>]+>", "", caption)).strip()
    state[kept["ImageModel"]]["state"]["tooltip"] = text or "the stored picture of this plot's first setting"
    entry["state"]["children"] = [f"IPY_MODEL_{child}" for child in children if child in kept.values()]
    return True


def student_file_name(name: str) -> str:
    """The student edition's download name: ``NN_name-student.ipynb`` beside ``NN_name.ipynb``, so
    that the two editions never land on one file name in a learner's downloads folder."""
    return f"{Path(name).stem}-student.ipynb"


def _link_line(name: str, student: str) -> str:
    binder, colab = (re.findall(r"\((https://[^)\s]+)\)", badge)[-1]  # a badge is [![name](image)](link)
                     for badge in (notebook_header.binder_badge(name), notebook_header.colab_badge(name)))
    return (f"[Launch on Binder]({binder}) · [Open in Colab]({colab}) · "
            f"<a href=\"../downloads/notebooks/{name}\" download>Download this notebook</a> · "
            f"<a href=\"../downloads/{student}/{student_file_name(name)}\" download>Download its student edition</a>")


def site_notebook(notebook, name: str, plots: dict | None = None):
    """The working copy of one notebook for the site (see the module docstring); ``plots``
    holds the live plots ``draw_live_plots`` built, else they are built here."""
    notebook = copy.deepcopy(notebook)
    kept_ids = {cell.get("id") for cell in notebook.cells}
    metadata = notebook.metadata.setdefault("widgets", {}).setdefault(
        WIDGET_STATE, {"version_major": 2, "version_minor": 0, "state": {}})
    state = metadata.setdefault("state", {})
    static = 0
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and notebook_header.BINDER_BADGE.search(cell.source):
            cell.source = "\n".join(_link_line(name, "student") if "mybinder.org" in line or "colab" in line else line
                                    for line in cell.source.split("\n"))
        if cell.cell_type != "code":
            continue
        if "live_plot" not in cell.metadata:
            for output in cell.outputs:
                view = output.get("data", {}).get(WIDGET_VIEW)
                if view and _still_picture(state, view["model_id"]):
                    print(f"{name}: a live plot without live_plot metadata shows its stored picture only",
                          file=sys.stderr)
            continue
        model_id, models = _renamed(*static_widget_state(cell.metadata["live_plot"],
                                                         (plots or {}).get(_plot_key(cell.metadata["live_plot"]))),
                                    seed=f"{name} static widget {static}")
        state.update(models)
        view = {"model_id": model_id, "version_major": 2, "version_minor": 0}
        shown = [output for output in cell.outputs if WIDGET_VIEW in output.get("data", {})]
        if shown:
            shown[0]["data"] = {WIDGET_VIEW: view, "text/plain": "a static widget"}
            cell.outputs = [output for output in cell.outputs if output is shown[0] or WIDGET_VIEW not in output.get("data", {})]
        else:
            cell.outputs.append(nbformat.v4.new_output("display_data", data={WIDGET_VIEW: view, "text/plain": "a static widget"}))
        static += 1
    keep = _reachable(state, _views(notebook))
    metadata["state"] = {model: state[model] for model in sorted(keep)}
    for entry in metadata["state"].values():
        # The renderer reads a widget's description before showing its tooltip as the title and
        # fails on widgets that have none, such as Image (ipywidgets PR #3921, unmerged).
        if entry["state"].get("tooltip") and "description" not in entry["state"]:
            entry["state"]["description"] = ""
    if not metadata["state"]:
        del notebook.metadata["widgets"]
    notebook.metadata["course_site"] = {"static_widgets": static}
    page = site_live.live_notebook(notebook, name)  # "Run this page", the exercises as the student edition has them
    for number, cell in enumerate(page.cells):  # the cells it adds: ids by place, not random (see _renamed)
        if cell.get("id") not in kept_ids:
            cell["id"] = f"course-site-{number}"
    return page


def picture_files(notebook) -> dict[str, bytes]:
    """Move every picture out of ``notebook``'s widget state (in place): each Image model's
    bytes become a file ``PICTURES/<SHA-256>.<format>`` and the model shows that URL (ipywidgets'
    ``format="url"``). Returns the files, by name relative to the page; equal pictures share one."""
    files = {}
    state = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for entry in state.values():
        picture_format = entry["state"].get("format", "png")
        value = [buffer for buffer in entry.get("buffers", []) if buffer["path"] == ["value"]]
        if entry["model_name"] != "ImageModel" or picture_format == "url" or not value:
            continue
        data = base64.b64decode(value[0]["data"])
        name = f"{PICTURES}/{hashlib.sha256(data).hexdigest()}.{picture_format.split('+')[0]}"
        files[name] = data
        entry["state"]["format"] = "url"
        value[0].update(data=base64.b64encode(name.encode()).decode("ascii"), encoding="base64")
    return files


def _sync(source: Path, target: Path) -> None:
    """Make ``target`` what ``source`` is, moving its files there, except that a file whose bytes
    are unchanged stays as it was, with its time: Sphinx then reads again only what changed.
    ``source`` is removed."""
    wanted = {path.relative_to(source) for path in source.rglob("*") if path.is_file()}
    for name in sorted(wanted):
        new, old = source / name, target / name
        if not (old.is_file() and old.stat().st_size == new.stat().st_size and old.read_bytes() == new.read_bytes()):
            old.parent.mkdir(parents=True, exist_ok=True)
            new.replace(old)
    for path in sorted(target.rglob("*"), reverse=True):  # a folder's files before the folder
        if path.is_file() and path.relative_to(target) not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    shutil.rmtree(source)


def write_sources(notebooks: Path, work: Path = WORK, plots: dict | None = None) -> dict:
    """build/site-source/: the pages of site/, the README they include, the notebooks'
    working copies (with the live plots of ``draw_live_plots``, drawn here if None), and the
    downloads (each notebook as committed, and its student edition). Files whose content an
    earlier build wrote already are kept as they were (``_sync``)."""
    final, work = work, work.parent / (work.name + "-new")
    if work.exists():
        shutil.rmtree(work)
    (work / "notebooks").mkdir(parents=True)
    for page in SITE.glob("*.md"):
        shutil.copy2(page, work / page.name)
    shutil.copy2(ROOT / "README.md", work / "README.md")
    shutil.copytree(ROOT / "docs", work / "docs")
    downloads = work / "downloads"
    build_student_edition.build(downloads / "student-edition", notebooks)
    shutil.copytree(notebooks, downloads / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    student = downloads / "student"
    shutil.copytree(downloads / "student-edition" / "notebooks", student)
    for path in student.glob(NOTEBOOK_GLOB):
        path.rename(path.with_name(student_file_name(path.name)))
    shutil.rmtree(downloads / "student-edition")
    counts = {}
    sources = {path.name: nbformat.read(path, as_version=4) for path in sorted(notebooks.glob(NOTEBOOK_GLOB))}
    plots = draw_live_plots(list(sources.values())) if plots is None else plots
    for name, notebook in sources.items():
        copy_ = site_notebook(notebook, name, plots)
        counts[name] = copy_.metadata["course_site"]["static_widgets"]
        for file, data in picture_files(copy_).items():
            (work / "notebooks" / file).parent.mkdir(exist_ok=True)
            (work / "notebooks" / file).write_bytes(data)
        nbformat.write(copy_, work / "notebooks" / name)
    _sync(work, final)
    return counts


def _tooling_digest() -> str:
    """SHA-256 of what turns the sources into pages besides the sources themselves, which Sphinx
    does not watch: the build's scripts (site_reading.py is a Sphinx extension), site/'s files
    other than its pages, and the versions of Python and of the Sphinx packages."""
    from importlib.metadata import version

    packages = ("sphinx", "docutils", "myst-parser", "myst-nb", "sphinx-book-theme", "pydata-sphinx-theme")
    digest = hashlib.sha256(" ".join([sys.version, *(f"{name} {version(name)}" for name in packages)]).encode())
    files = [*(ROOT / "scripts").glob("*.py"),
             *(path for path in SITE.rglob("*") if path.is_file() and path.suffix != ".md" and NODE_MODULES not in path.parents)]
    for path in sorted(files):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _reusable_doctrees(doctrees: Path) -> Path:
    """Sphinx's parsed pages of the previous build, kept outside the site (not published) for the
    next one, which parses again only the pages whose sources changed; thrown away when the
    tooling changed (``_tooling_digest``), since Sphinx would not notice."""
    stamp, digest = doctrees / "course-tooling.sha256", _tooling_digest()
    if not (stamp.is_file() and stamp.read_text() == digest):
        if doctrees.exists():
            shutil.rmtree(doctrees)
        doctrees.mkdir(parents=True)
        stamp.write_text(digest)
    return doctrees


def _clock() -> tuple[float, float, float]:
    """Wall seconds, CPU seconds of this process, and of every child it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def build(out: Path = DEFAULT_OUT, notebooks: Path = ROOT / "notebooks", work: Path = WORK,
          cache: Path | None = PICTURE_CACHE) -> dict:
    """Build the site into ``out``, with the static pictures of earlier builds kept in ``cache``
    (None: draw every one); returns the build's seconds and sizes, and the wall and CPU
    seconds of each step (``phases``: where a quiet machine's time goes; ``own_cpu_seconds``
    are this process's alone, the rest its drawing processes' and Sphinx's)."""
    from utils.threads import cpu_share

    clocks = [("start", _clock())]
    out, notebooks, work = Path(out).resolve(), Path(notebooks).resolve(), Path(work).resolve()
    if out in (ROOT, notebooks, SITE) or out in ROOT.parents:
        raise ValueError(f"out must be a folder of its own, not {out}")
    npm_ci()
    assets = work.parent / (work.name + "-assets")
    copy_assets(assets)
    site_live.copy_live_assets(assets)  # thebe and the page's "Run this page"
    clocks.append(("assets", _clock()))
    plots = draw_live_plots([nbformat.read(path, as_version=4) for path in sorted(notebooks.glob(NOTEBOOK_GLOB))],
                            cache, prune=notebooks == ROOT / "notebooks")
    clocks.append(("pictures", _clock()))
    counts = write_sources(notebooks, work, plots)
    clocks.append(("sources", _clock()))
    if out.exists():
        shutil.rmtree(out)
    # -a: every page written (the sidebars list every page), though only changed ones are read.
    doctrees = _reusable_doctrees(work.parent / (work.name + "-doctrees"))
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-a", "-j", str(max(1, int(cpu_share()))),
               "-d", str(doctrees), "-c", str(SITE), str(work), str(out)]
    environment = {**os.environ, "COURSE_SITE_ASSETS": str(assets)}
    subprocess.run(command, check=True, env=environment, cwd=ROOT)  # site/conf.py imports scripts.course_repository
    clocks.append(("sphinx", _clock()))
    shutil.copytree(work / "downloads", out / "downloads")
    if (work / "notebooks" / PICTURES).is_dir():
        shutil.copytree(work / "notebooks" / PICTURES, out / "notebooks" / PICTURES)
    clocks.append(("downloads", _clock()))
    sizes = {page.relative_to(out).as_posix(): page.stat().st_size for page in out.rglob("*.html")}
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    phases = {name: {"seconds": now[0] - before[0], "own_cpu_seconds": now[1] - before[1],
                     "cpu_seconds": now[1] + now[2] - before[1] - before[2]}
              for (_, before), (name, now) in zip(clocks, clocks[1:])}
    return {"seconds": clocks[-1][1][0] - clocks[0][1][0], "bytes": total, "pages": sizes, "static_widgets": counts,
            "phases": phases}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where to build (default {DEFAULT_OUT})")
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks", help="the notebooks to publish")
    parser.add_argument("--work", type=Path, default=WORK, help=f"working copy of the sources (default {WORK})")
    parser.add_argument("--redraw", action="store_true",
                        help=f"draw every static picture again instead of reading unchanged ones from {PICTURE_CACHE}")
    parser.add_argument("--report", type=Path, help="also write the build's seconds and sizes there, as JSON")
    args = parser.parse_args(argv)
    report = build(args.out, args.notebooks, args.work, None if args.redraw else PICTURE_CACHE)
    if args.report:
        args.report.write_text(json.dumps(report, indent=1), encoding="utf-8")
    largest = max(report["pages"].items(), key=lambda item: item[1])
    print(f"site: {len(report['pages'])} pages, {sum(report['static_widgets'].values())} static widgets, "
          f"{report['bytes'] / 1e6:.1f} MB in all (largest page {largest[0]}, {largest[1] / 1e6:.1f} MB), "
          f"built in {report['seconds']:.0f} s: open {args.out.resolve() / 'index.html'}")
    print("  " + ", ".join(f"{name} {phase['seconds']:.0f} s ({phase['cpu_seconds']:.0f} CPU-s)"
                           for name, phase in report["phases"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
