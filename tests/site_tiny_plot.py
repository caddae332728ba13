"""A live plot the size of a test, built to the course's live-plot contract, so the site's
builder and its browser test can be checked on a static widget of known content: a depth
slider (1 to 1000, log-spaced) and a choice of stack, wired to nested Stacks of pictures with
jslink only. Each picture is a tiny SVG whose bar length and caption name its setting."""
from __future__ import annotations

import html

import ipywidgets as widgets

DEPTHS = (1, 10, 100, 1000)
KINDS = ("plain", "residual")


def describe(kind: str, depth: int) -> str:
    """The text shown under the picture of one setting (and its tooltip)."""
    return f"{kind} stack, depth {depth}: a bar {DEPTHS.index(depth) + 1} units long"


def picture(kind: str, depth: int) -> bytes:
    width = 20 * (DEPTHS.index(depth) + 1)
    colour = "#0072B2" if kind == "residual" else "#D55E00"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="100" height="20">'
            f'<rect width="{width}" height="20" fill="{colour}"/></svg>').encode()


class TinyPlot:
    def __init__(self, depth: int = 10, kind: str = "residual"):
        if depth not in DEPTHS or kind not in KINDS:
            raise ValueError(f"depth must be one of {DEPTHS} and kind one of {KINDS}, got {depth!r}, {kind!r}")
        self.depth, self.kind = depth, kind

    def static_grid(self) -> list[dict]:
        return [{"kind": kind, "depth": depth} for kind in KINDS for depth in DEPTHS]

    def static_widget(self) -> widgets.Widget:
        slider = widgets.SelectionSlider(options=DEPTHS, value=self.depth, description="depth (blocks)")
        choice = widgets.Dropdown(options=KINDS, value=self.kind, description="stack")
        stacks = []
        for kind in KINDS:
            pages = [widgets.VBox([widgets.Image(value=picture(kind, depth), format="svg+xml",
                                                 tooltip=describe(kind, depth)),
                                   widgets.HTML(f"<pre>{html.escape(describe(kind, depth))}</pre>")])
                     for depth in DEPTHS]
            stack = widgets.Stack(pages, selected_index=DEPTHS.index(self.depth))
            widgets.jslink((slider, "index"), (stack, "selected_index"))
            stacks.append(stack)
        outer = widgets.Stack(stacks, selected_index=KINDS.index(self.kind))
        widgets.jslink((choice, "index"), (outer, "selected_index"))
        return widgets.VBox([widgets.HBox([slider, choice]), outer])


def tiny_plot(depth: int = 10, kind: str = "residual") -> TinyPlot:
    return TinyPlot(depth, kind)


def _draw_bar(fig, kind: str) -> str:
    fig.add_subplot().barh([0], [KINDS.index(kind) + 1])
    return f"a {kind} bar"


def tiny_live_plot(kind: str = "plain"):
    """A real utils.widgets.LivePlot with two settings, for the builder's picture cache."""
    from utils.widgets import LivePlot

    return LivePlot(_draw_bar, {"kind": widgets.Dropdown(options=KINDS, value=kind, description="stack")},
                    width=2, height=1)
