"""What a learner feels: each LivePlot's latency end to end, in JupyterLab in headless
Chromium, from the input event (a keyboard step of a slider, a dropdown choice) until the
new picture has decoded in the page, against a floor measured in the same run.

    .venv/bin/python -m benchmarks.run --browser-only       # this part alone
    .venv/bin/python -m benchmarks.browser 03 10 --steps 6  # some notebooks, for development

The floor is a bare ipywidgets ``Image`` under a slider, redrawn with a small one-line PNG
(60 dpi) on each step: the round trip every widget pays (the input's message to the kernel,
the reply, the picture's bytes back over the websocket, decoding). Every notebook is opened
with "Run All"; then every ``utils.widgets.LivePlot`` in it (found in the page, whatever its
cell) gets, per enabled slider, one untimed warm-up step and ``steps`` timed keyboard steps,
per dropdown ``steps // 2`` timed choices, and per slider a jump to its end ("End" key) and
back ("Home"), to check the heaviest setting shows its busy status. Beside each timing, the
kernel's own redraw time (``LivePlot.last_seconds``) and whether the picture had been drawn
ahead (``LivePlot.last_kept``, see ``utils/pictures.py``) are read through the kernel.

Moves are LOOK_MS apart (plus the two short kernel requests that read those numbers): far
less than a learner looks at a picture before the next step, so pictures drawn ahead in
that time would be ready for a learner too.
"""
from __future__ import annotations

import ast
import json
import sys
import tempfile
from pathlib import Path

from benchmarks import lab_session as lab_tools  # shared with the browser test

FLOOR_NOTEBOOK = "notebooks/_browser_floor.ipynb"
LOOK_MS = 300  # between one picture and the next move: less than a learner looks at it
FLOOR_CLASS = "liveplot-floor"
# The floor panel: shaped like a LivePlot (controls in a row, then the picture), nothing else.
FLOOR_SOURCE = f"""import io, time
import ipywidgets as widgets
from IPython.display import display
from matplotlib.figure import Figure

def _one_line_png(n):
    fig = Figure(figsize=(4, 2), dpi=60)
    fig.subplots().plot([0, n])
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()

_floor_seconds = None
_slider = widgets.IntSlider(value=50, min=0, max=100, continuous_update=False, description="n")
_image = widgets.Image(value=_one_line_png(50), format="png")

def _redraw(change):
    global _floor_seconds
    start = time.perf_counter()
    _image.value = _one_line_png(change["new"])
    _floor_seconds = time.perf_counter() - start

_slider.observe(_redraw, names="value")
_floor = widgets.VBox([widgets.HBox([_slider]), _image])
_floor.add_class("{FLOOR_CLASS}")
display(_floor)
"""

# Run code in the notebook's kernel from the page and hand back one expression's value.
KERNEL_JS = """async ([code, expression]) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({code, silent: false, store_history: false,
                                        user_expressions: {value: expression}});
  const reply = await future.done;
  const value = reply.content.user_expressions.value;
  return value.status === 'ok' ? value.data['text/plain'] : 'error: ' + value.evalue;
}"""
RESET_CODE = ("import utils.widgets as _uw\n"
              "for _p in _uw.LivePlot.instances: _p.last_seconds = None\n_floor_seconds = None")
LIVEPLOT_SECONDS = ("__import__('json').dumps([(p.draw.__name__, p.last_seconds, p.last_kept) "
                    "for p in _uw.LivePlot.instances if p.last_seconds is not None])")
FLOOR_SECONDS = "__import__('json').dumps([['floor', _floor_seconds, False]])"


def _in_kernel(page, code: str, expression: str):
    text = page.evaluate(KERNEL_JS, [code, expression])
    if text.startswith("error"):
        raise AssertionError(f"kernel expression {expression!r}: {text}")
    return json.loads(ast.literal_eval(text))


def _write_floor_notebook(root: Path) -> None:
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FLOOR_SOURCE)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, root / FLOOR_NOTEBOOK)


def _measure_plot(page, plot, steps: int, kernel_expression: str, jumps: bool) -> list[dict]:
    """Timed moves of one panel: ``{"control", "kind", "what", "ms", "decode_ms", "kernel_ms",
    "draw", "kept", "busy", "jump"}`` each (``kept``: the picture had been drawn ahead)."""
    records = []

    def one(control_label, kind, move, jump=False):
        _in_kernel(page, RESET_CODE, "'0'")
        timing = lab_tools.timed_move(page, plot, move)
        seen = _in_kernel(page, "", kernel_expression)
        draw, seconds, kept = (seen[0] if seen else (None, None, False))
        timing.update(control=control_label, kind=kind, kernel_ms=None if seconds is None else seconds * 1000,
                      draw=draw, kept=bool(kept), jump=jump)
        page.wait_for_timeout(LOOK_MS)
        return timing

    controls = [(kind, control, lab_tools.label_of(control)) for kind, control in lab_tools.liveplot_controls(plot)]
    plot.scroll_into_view_if_needed()
    for kind, control, label in controls:
        if kind == "slider":
            one(label, kind, lambda: lab_tools.slider_step(control))  # warm-up, not recorded
            records += [one(label, kind, lambda: lab_tools.slider_step(control)) for _ in range(steps)]
        else:
            default = control.locator("select").input_value()
            one(label, kind, lambda: lab_tools.dropdown_choice(control))  # warm-up
            for index in range(max(2, steps // 2)):
                move = ((lambda: lab_tools.dropdown_choice(control, avoid=default)) if index % 2
                        else (lambda: lab_tools.dropdown_choice(control)))
                records.append(one(label, kind, move))
    # Last, so that every other move ran near the default: each slider to its end and back.
    for kind, control, label in controls if jumps else []:
        if kind == "slider":
            records.append(one(label, kind, lambda: lab_tools.slider_step(control, "End"), jump=True))
            records.append(one(label, kind, lambda: lab_tools.slider_step(control, "Home"), jump=True))
    return records


def measure(notebooks: list[Path], steps: int = 12, log=print) -> dict:
    """Run the floor and every notebook in one JupyterLab and one Chromium; return
    ``{"floor": [timing...], "notebooks": {name: [{"index", "moves": [...]}...]}, "errors": [...]}``."""
    problem = lab_tools.missing_browser()
    if problem:
        return {"floor": [], "notebooks": {}, "errors": [f"browser part skipped: {problem}"]}
    results = {"floor": [], "notebooks": {}, "errors": [], "look_ms": LOOK_MS}
    with tempfile.TemporaryDirectory() as folder, lab_tools.running_lab(Path(folder)) as lab, \
            lab_tools.chromium() as browser:
        _write_floor_notebook(lab.root)
        for relative in [FLOOR_NOTEBOOK] + [f"notebooks/{path.name}" for path in notebooks]:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            try:
                seconds = lab_tools.open_and_run_all(page, lab, relative, errors)
                panel = lab_tools.current_panel(page)
                lab_tools.wait_for_widgets(page, panel)
                page.evaluate("window.jupyterapp.shell.collapseLeft()")
                if relative == FLOOR_NOTEBOOK:
                    results["floor"] = _measure_plot(page, panel.locator(f".{FLOOR_CLASS}").first, steps,
                                                     FLOOR_SECONDS, jumps=False)
                    log(f"  browser floor: {_median([m['ms'] for m in results['floor']]):.0f} ms median")
                    continue
                plots = panel.locator(lab_tools.LIVEPLOT)
                measured = []
                for index in range(plots.count()):
                    moves = _measure_plot(page, plots.nth(index), steps, LIVEPLOT_SECONDS, jumps=True)
                    measured.append({"index": index, "moves": moves})
                    timed = [m["ms"] for m in moves if not m["jump"]]
                    log(f"  browser {Path(relative).name} LivePlot {index + 1}: "
                        f"{_median(timed):.0f} ms median over {len(timed)} moves")
                results["notebooks"][Path(relative).name] = measured
                if not measured:
                    log(f"  browser {Path(relative).name}: no LivePlot (run-all {seconds:.0f} s)")
            except Exception as error:  # a benchmark reports, it does not stop
                results["errors"].append(f"{relative}: {type(error).__name__}: {str(error).splitlines()[0][:300]}")
                log(f"  browser {relative}: ERROR {results['errors'][-1]}")
            finally:
                context.close()
                lab.shut_down_kernels()
    return results


def _median(values) -> float:
    import statistics

    return statistics.median(values) if values else float("nan")


def main(argv=None) -> int:
    import argparse

    from benchmarks.kernel import resolve_notebooks
    from benchmarks.report import browser_report

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*")
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args(argv)
    results = measure(resolve_notebooks(args.notebooks), steps=args.steps)
    markdown, misses = browser_report(results)
    print(markdown)
    print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
