import sys
import threading

import ipywidgets
import pytest
from matplotlib.figure import Figure

from utils import pictures, plotting
from utils.pictures import _Pictures, _RedrawFigure, _nearby_values, _setting_key
from utils.widgets import LivePlot


# How long a test waits for the background thread or for itself before calling it a hang. The
# pictures here take milliseconds; a loaded machine may take seconds, but never this long. No
# outcome below depends on how fast anything runs (slowness is decided by injected clocks).
HANG = 300


def _two_axes(fig):
    return fig.subplots(1, 2)


def test_a_redraw_figure_hands_the_next_drawing_the_same_axes_emptied():
    fig = _RedrawFigure()
    fig.start()
    left, right = fig.subplots(1, 2)
    left.plot([1, 2], [1, 1e5])
    left.set_yscale("log")
    left.set_title("before")
    left.set_xlim(5, 6)
    right.fill_between([0, 1], [0, 1])
    right.text(0, 0, "note")
    right.legend(["x"])
    fig.suptitle("first headline")
    fig.legend(["y"])
    fig.start()
    assert not left.lines and not right.collections and not right.texts and right.get_legend() is None
    assert not fig.legends and not fig.texts and fig.get_suptitle() == ""
    assert left.get_yscale() == "linear" and left.get_title() == "" and left.get_autoscalex_on()
    again = fig.subplots(1, 2)
    assert again[0] is left and again[1] is right and len(fig.axes) == 2
    fig.suptitle("second headline")  # a new headline is drawn, not a detached one
    assert fig.get_suptitle() == "second headline" and len(fig.texts) == 1


def test_a_redraw_figure_makes_new_axes_after_a_clear_or_for_another_layout():
    fig = _RedrawFigure(6, 3)
    first = fig.subplots(1, 2)
    fig.clear()
    fig.start()
    second = fig.subplots(1, 2)
    assert second[0] is not first[0] and len(fig.axes) == 2
    fig.start()
    single = fig.subplots()
    assert fig.axes == [single]
    fig.start()
    fig.add_subplot()  # a drawing that makes its axes another way is cleared every time
    fig.start()
    assert fig.axes == []


def _draw_line(fig, scale):
    ax = fig.subplots()
    plotting._use_fixed_margins(fig)  # as every widget of the course: constrained layout would move the axes
    ax.plot([1, 2, 3], [1, scale, 2 * scale])
    ax.set_title(f"up to {2 * scale:g}")  # (tests/test_slopes.py checks log axes, on the course's own draws)


def test_a_redraw_matches_a_fresh_figure_pixel_for_pixel():
    reused = _RedrawFigure(6, 3)
    for scale in (1e5, 1.0, 1e5):
        reused.start()
        _draw_line(reused, scale)
        fresh = Figure(figsize=(6, 3), layout="constrained")
        _draw_line(fresh, scale)
        assert plotting._figure_png(reused) == plotting._figure_png(fresh), scale


def test_setting_key_names_one_setting_whatever_the_order_and_float_noise():
    assert _setting_key({"s": 0.1 + 0.01, "depth": 3}) == _setting_key({"depth": 3, "s": 0.11})
    assert _setting_key({"s": 0.11}) != _setting_key({"s": 0.12})
    assert _setting_key({"norm": "pre"}) != _setting_key({"norm": "post"})


def test_sliders_offer_the_next_step_in_the_direction_moved_first():
    depth = ipywidgets.IntSlider(value=10, min=2, max=20, step=2)
    assert _nearby_values(depth) == [12, 8]
    assert _nearby_values(depth, -1) == [8, 12]
    depth.value = 20
    assert _nearby_values(depth) == [18]  # nothing past the end
    scale = ipywidgets.FloatSlider(value=0.1, min=0.0, max=2.0, step=0.01)
    assert [round(v, 12) for v in _nearby_values(scale)] == [0.11, 0.09]


def test_choices_offer_their_other_options_and_a_checkbox_its_other_state():
    recipe = ipywidgets.Dropdown(options=["default", "scaled", "rezero"], value="scaled")
    assert _nearby_values(recipe) == ["default", "rezero"]
    blocks = ipywidgets.ToggleButtons(options=[("two-layer blocks", 2), ("one-layer blocks", 1)], value=2)
    assert _nearby_values(blocks) == [1]
    ladder = ipywidgets.SelectionSlider(options=["a", "b", "c", "d"], value="b")
    assert _nearby_values(ladder) == ["c", "a"] and _nearby_values(ladder, -1) == ["a", "c"]
    assert _nearby_values(ipywidgets.Checkbox(value=True)) == [False]
    assert _nearby_values(ipywidgets.Text(value="x")) == []  # not a control a learner steps


def _counting_render(gates=None):
    """A render that records each call; for a setting in ``gates`` ({n: (started, go)}) it
    says it has started and waits until the test lets it go on."""
    calls = []

    def render(figure, values):
        started, go = (gates or {}).get(values["n"], (None, None))
        if started is not None:
            started.set()
            assert go.wait(HANG), "the test never let this picture finish"
        calls.append((figure, values["n"], threading.current_thread().name))
        return f"picture {values['n']}"

    return render, calls


def _gate():
    return threading.Event(), threading.Event()


class _FakeClock:
    """A clock for _Pictures: each reading is ``step`` seconds after the last, so every
    picture seems to take ``step`` seconds however fast it really is."""

    def __init__(self, step):
        self.now, self.step = 0.0, step

    def __call__(self):
        self.now += self.step
        return self.now


def test_pictures_drawn_now_are_kept_and_found_again():
    render, calls = _counting_render()
    main, spare = plotting._empty_figure(), plotting._empty_figure()
    kept = _Pictures(render, spare)
    assert kept.find({"n": 1}) is None
    assert kept.draw(main, {"n": 1}) == "picture 1" and kept.find({"n": 1}) == "picture 1"
    assert calls == [(main, 1, threading.current_thread().name)] and len(kept) == 1
    assert kept.seconds({"n": 1}) >= 0 and kept.seconds({"n": 2}) is None


def test_settings_asked_for_are_drawn_ahead_in_the_background_into_the_spare_figure():
    render, calls = _counting_render()
    spare = plotting._empty_figure()
    kept = _Pictures(render, spare)
    kept.draw(plotting._empty_figure(), {"n": 1})
    kept.draw_ahead({"n": 1}, [{"n": 2}, {"n": 0}, {"n": 1}])  # n=1 is kept already: not drawn again
    assert kept.idle(HANG)
    assert [(figure, n) for figure, n, _ in calls[1:]] == [(spare, 2), (spare, 0)]
    assert {thread for _, _, thread in calls[1:]} == {"pictures-ahead"}
    assert kept.find({"n": 2}) == "picture 2" and len(kept) == 3


def test_a_setting_being_drawn_ahead_is_waited_for_not_drawn_twice():
    started, go = gate = _gate()
    render, calls = _counting_render({2: gate})
    kept = _Pictures(render, plotting._empty_figure())
    kept.draw(plotting._empty_figure(), {"n": 1})
    kept.draw_ahead({"n": 1}, [{"n": 2}])
    assert started.wait(HANG)  # the background thread is inside n=2 now
    wait = kept._changed.wait

    def let_it_finish(*args, **kwargs):  # find() is waiting for n=2: only now may it be finished
        go.set()
        return wait(*args, **kwargs)

    kept._changed.wait = let_it_finish
    assert kept.find({"n": 2}) == "picture 2"
    assert [n for _, n, _ in calls] == [1, 2]


@pytest.mark.parametrize("seconds, drawn_ahead", [(0.01, [2]), (1.0, [])])
def test_only_a_setting_that_was_quick_to_draw_is_drawn_ahead_of(seconds, drawn_ahead):
    render, calls = _counting_render()
    kept = _Pictures(render, plotting._empty_figure(), clock=_FakeClock(seconds), slow_seconds=0.5)
    kept.draw(plotting._empty_figure(), {"n": 1})
    assert kept.seconds({"n": 1}) == seconds
    kept.draw_ahead({"n": 1}, [{"n": 2}])
    assert kept.idle(HANG)  # returns once the background thread has drawn n=2, or at once if none was asked
    assert [n for _, n, _ in calls] == [1, *drawn_ahead] and kept.drawn_ahead == len(drawn_ahead)
    assert (kept.find({"n": 2}) is not None) == bool(drawn_ahead)


def test_only_the_last_pictures_are_kept_and_a_failed_guess_is_dropped():
    def render(figure, values):
        if values["n"] < 0:
            raise ValueError("n must be >= 0")
        return values["n"]

    kept = _Pictures(render, plotting._empty_figure(), capacity=2)
    for n in (1, 2, 3):
        kept.draw(plotting._empty_figure(), {"n": n})
    assert kept.find({"n": 1}) is None and kept.find({"n": 3}) == 3 and len(kept) == 2
    kept.draw_ahead({"n": 3}, [{"n": -1}, {"n": 4}])
    assert kept.idle(HANG) and kept.drawn_ahead == 1
    assert kept.find({"n": -1}) is None and kept.find({"n": 4}) == 4
    with pytest.raises(ValueError, match="n must be >= 0"):  # the kernel's own redraw shows the error
        kept.draw(plotting._empty_figure(), {"n": -1})


def _draw_steps(fig, depth, scale=1.0):
    ax = fig.subplots()
    ax.plot(range(depth), [scale * d for d in range(depth)])
    ax.set_title(f"depth {depth}")
    return f"depth {depth}, scale {scale:.2f}"


def _comparable(svg: bytes) -> bytes:
    """The SVG without what differs between two renderings of one picture: ids and the date."""
    import re

    return re.sub(rb'(id|href|clip-path)="[^"]*"|<dc:date>[^<]*</dc:date>', b"", bytes(svg))


def test_live_plot_serves_the_next_step_drawn_ahead_as_a_direct_redraw_would_show_it():
    depth = ipywidgets.IntSlider(value=5, min=2, max=9)
    scale = ipywidgets.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.25)
    panel = LivePlot(_draw_steps, {"depth": depth, "scale": scale})
    panel.pictures.clock = _FakeClock(0.01)  # every picture quick, however loaded the machine
    depth.value = 6  # a learner's move: the next settings are drawn ahead
    assert panel.last_kept is False
    assert panel.pictures.idle(HANG)  # (find() would cancel the drawing ahead)
    assert panel.pictures.seconds({"depth": 7, "scale": 1.0}) is not None
    depth.value = 7
    assert panel.last_kept is True and panel.text == "depth 7, scale 1.00"
    fresh = plotting._empty_figure(7.0, 4.0)
    _draw_steps(fresh, 7, 1.0)
    assert _comparable(panel.image.value) == _comparable(plotting._figure_svg(fresh).encode())


def test_live_plot_draws_every_move_from_scratch_when_switched_off(monkeypatch):
    monkeypatch.setattr(LivePlot, "keep_pictures", False)
    depth = ipywidgets.IntSlider(value=5, min=2, max=9)
    panel = LivePlot(_draw_steps, {"depth": depth})
    depth.value = 6
    assert panel.pictures.idle(HANG) and panel.pictures._thread is None  # nothing was asked to be drawn ahead
    depth.value = 7
    assert panel.last_kept is False and panel.pictures.drawn_ahead == 0 and panel.text == "depth 7, scale 1.00"
    depth.value = 5  # drawn before, drawn again
    assert panel.last_kept is False and panel.text == "depth 5, scale 1.00"


def _inside_n2_of_two_drawn_ahead():
    """Pictures with n=1 drawn, n=2 and n=3 asked for ahead, and the background thread inside
    n=2 until ``go`` is set."""
    started, go = gate = _gate()
    render, calls = _counting_render({2: gate})
    kept = _Pictures(render, plotting._empty_figure())
    kept.draw(plotting._empty_figure(), {"n": 1})
    kept.draw_ahead({"n": 1}, [{"n": 2}, {"n": 3}])
    assert started.wait(HANG)
    return kept, calls, go


def test_stop_waits_for_the_picture_in_progress_and_draws_nothing_more():
    kept, calls, go = _inside_n2_of_two_drawn_ahead()
    thread = kept._thread
    thread.join = lambda timeout: (go.set(), threading.Thread.join(thread, timeout))  # n=2 ends while stop() waits
    kept.stop()
    assert kept._thread is None and [n for _, n, _ in calls] == [1, 2]  # n=2 finished, n=3 never started
    kept.draw_ahead({"n": 1}, [{"n": 4}])  # stopped: decided at once, no thread starts
    assert kept._thread is None and kept.drawn_ahead == 1


def test_a_cell_about_to_run_waits_for_the_picture_in_progress_and_drops_the_guesses():
    kept, calls, go = _inside_n2_of_two_drawn_ahead()
    idle = kept.idle
    kept.idle = lambda timeout: (go.set(), idle(HANG))[1]  # n=2 ends while the cell waits
    pictures._pause_drawing_ahead({"raw_cell": "x = torch.randn(3)"})
    assert kept._drawing_ahead is None and kept._wanted == []
    assert [n for _, n, _ in calls] == [1, 2]  # n=3 never started: the cell has the CPU to itself
    del kept.idle
    kept.draw_ahead({"n": 1}, [{"n": 4}])  # the next move of a control draws ahead again
    assert kept.idle(HANG) and kept.find({"n": 4}) == "picture 4"


def test_the_pause_is_hooked_into_the_kernel_once_before_each_cell(monkeypatch):
    from IPython.core.events import EventManager

    shell = type("Shell", (), {})()
    shell.events = EventManager(shell, {"pre_run_cell": lambda info: None})
    monkeypatch.setattr(sys.modules["IPython"], "get_ipython", lambda: shell)
    _Pictures(lambda figure, values: None, plotting._empty_figure())
    _Pictures(lambda figure, values: None, plotting._empty_figure())
    assert shell.events.callbacks["pre_run_cell"] == [pictures._pause_drawing_ahead]
