import threading
import time

import ipywidgets
import pytest

from utils import pictures, plotting
from utils.pictures import Pictures, nearby_values, setting_key
from utils.widgets import LivePlot


def test_setting_key_names_one_setting_whatever_the_order_and_float_noise():
    assert setting_key({"s": 0.1 + 0.01, "depth": 3}) == setting_key({"depth": 3, "s": 0.11})
    assert setting_key({"s": 0.11}) != setting_key({"s": 0.12})
    assert setting_key({"norm": "pre"}) != setting_key({"norm": "post"})
    with pytest.raises(TypeError, match="values must be a dict"):
        setting_key([("s", 1.0)])


def test_sliders_offer_the_next_step_in_the_direction_moved_first():
    depth = ipywidgets.IntSlider(value=10, min=2, max=20, step=2)
    assert nearby_values(depth) == [12, 8]
    assert nearby_values(depth, -1) == [8, 12]
    depth.value = 20
    assert nearby_values(depth) == [18]  # nothing past the end
    scale = ipywidgets.FloatSlider(value=0.1, min=0.0, max=2.0, step=0.01)
    assert [round(v, 12) for v in nearby_values(scale)] == [0.11, 0.09]
    with pytest.raises(ValueError, match="direction must be one of 1, -1"):
        nearby_values(depth, 0)


def test_choices_offer_their_other_options_and_a_checkbox_its_other_state():
    recipe = ipywidgets.Dropdown(options=["default", "scaled", "rezero"], value="scaled")
    assert nearby_values(recipe) == ["default", "rezero"]
    blocks = ipywidgets.ToggleButtons(options=[("two-layer blocks", 2), ("one-layer blocks", 1)], value=2)
    assert nearby_values(blocks) == [1]
    ladder = ipywidgets.SelectionSlider(options=["a", "b", "c", "d"], value="b")
    assert nearby_values(ladder) == ["c", "a"] and nearby_values(ladder, -1) == ["a", "c"]
    assert nearby_values(ipywidgets.Checkbox(value=True)) == [False]
    assert nearby_values(ipywidgets.Text(value="x")) == []  # not a control a learner steps
    with pytest.raises(TypeError, match="control must be an ipywidgets value widget"):
        nearby_values(3)


def _counting_render(delay=0.0):
    calls = []

    def render(figure, values):
        time.sleep(delay)
        calls.append((figure, values["n"], threading.current_thread().name))
        return f"picture {values['n']}"

    return render, calls


def _wait_for(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the background thread did not finish in time"
        time.sleep(0.005)


def test_pictures_drawn_now_are_kept_and_found_again():
    render, calls = _counting_render()
    main, spare = plotting.empty_figure(), plotting.empty_figure()
    kept = Pictures(render, spare)
    assert kept.find({"n": 1}) is None
    assert kept.draw(main, {"n": 1}) == "picture 1" and kept.find({"n": 1}) == "picture 1"
    assert calls == [(main, 1, threading.current_thread().name)] and len(kept) == 1
    assert kept.seconds({"n": 1}) >= 0 and kept.seconds({"n": 2}) is None


def test_settings_asked_for_are_drawn_ahead_in_the_background_into_the_spare_figure():
    render, calls = _counting_render()
    spare = plotting.empty_figure()
    kept = Pictures(render, spare)
    kept.draw(plotting.empty_figure(), {"n": 1})
    kept.draw_ahead({"n": 1}, [{"n": 2}, {"n": 0}, {"n": 1}])  # n=1 is kept already: not drawn again
    _wait_for(lambda: kept.drawn_ahead == 2)
    assert [(figure, n) for figure, n, _ in calls[1:]] == [(spare, 2), (spare, 0)]
    assert {thread for _, _, thread in calls[1:]} == {"pictures-ahead"}
    assert kept.find({"n": 2}) == "picture 2" and len(kept) == 3


def test_a_setting_being_drawn_ahead_is_waited_for_not_drawn_twice():
    render, calls = _counting_render(delay=0.3)
    kept = Pictures(render, plotting.empty_figure())
    kept.draw(plotting.empty_figure(), {"n": 1})
    kept.draw_ahead({"n": 1}, [{"n": 2}])
    _wait_for(lambda: len(calls) == 1 and kept._drawing_ahead is not None)
    assert kept.find({"n": 2}) == "picture 2"
    assert [n for _, n, _ in calls] == [1, 2]


def test_no_drawing_ahead_of_a_slow_setting(monkeypatch):
    monkeypatch.setattr(pictures, "SLOW_SECONDS", 0.05)
    render, calls = _counting_render(delay=0.1)
    kept = Pictures(render, plotting.empty_figure())
    kept.draw(plotting.empty_figure(), {"n": 1})
    kept.draw_ahead({"n": 1}, [{"n": 2}])
    time.sleep(0.3)
    assert [n for _, n, _ in calls] == [1] and kept.drawn_ahead == 0


def test_only_the_last_pictures_are_kept_and_a_failed_guess_is_dropped():
    def render(figure, values):
        if values["n"] < 0:
            raise ValueError("n must be >= 0")
        return values["n"]

    kept = Pictures(render, plotting.empty_figure(), capacity=2)
    for n in (1, 2, 3):
        kept.draw(plotting.empty_figure(), {"n": n})
    assert kept.find({"n": 1}) is None and kept.find({"n": 3}) == 3 and len(kept) == 2
    kept.draw_ahead({"n": 3}, [{"n": -1}, {"n": 4}])
    _wait_for(lambda: kept.drawn_ahead == 1)
    assert kept.find({"n": -1}) is None and kept.find({"n": 4}) == 4
    with pytest.raises(ValueError, match="n must be >= 0"):  # the kernel's own redraw shows the error
        kept.draw(plotting.empty_figure(), {"n": -1})


def test_pictures_rejects_bad_arguments():
    with pytest.raises(TypeError, match="render must be a function"):
        Pictures("render", plotting.empty_figure())
    with pytest.raises(TypeError, match="spare_figure"):
        Pictures(lambda f, v: None, "figure")
    with pytest.raises(ValueError, match="capacity"):
        Pictures(lambda f, v: None, plotting.empty_figure(), capacity=0)
    with pytest.raises(TypeError, match="settings must be a list of dicts"):
        Pictures(lambda f, v: None, plotting.empty_figure()).draw_ahead({}, {"n": 1})


def _draw_steps(fig, depth, scale=1.0):
    ax = plotting.reuse_axes(fig, lambda f: f.subplots())
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
    depth.value = 6  # a learner's move: the next settings are drawn ahead
    assert panel.last_kept is False
    _wait_for(lambda: panel.pictures.seconds({"depth": 7, "scale": 1.0}) is not None)  # find() would cancel it
    depth.value = 7
    assert panel.last_kept is True and panel.text == "depth 7, scale 1.00"
    fresh = plotting.empty_figure(7.0, 4.0)
    _draw_steps(fresh, 7, 1.0)
    assert _comparable(panel.image.value) == _comparable(plotting.figure_svg(fresh).encode())


def test_live_plot_draws_every_move_from_scratch_when_switched_off(monkeypatch):
    monkeypatch.setattr(LivePlot, "keep_pictures", False)
    depth = ipywidgets.IntSlider(value=5, min=2, max=9)
    panel = LivePlot(_draw_steps, {"depth": depth})
    depth.value = 6
    time.sleep(0.2)
    depth.value = 7
    assert panel.last_kept is False and panel.pictures.drawn_ahead == 0 and panel.text == "depth 7, scale 1.00"
    depth.value = 5  # drawn before, drawn again
    assert panel.last_kept is False and panel.text == "depth 5, scale 1.00"


def test_stop_waits_for_the_picture_in_progress_and_draws_nothing_more():
    render, calls = _counting_render(delay=0.2)
    kept = Pictures(render, plotting.empty_figure())
    kept.draw(plotting.empty_figure(), {"n": 1})
    kept.draw_ahead({"n": 1}, [{"n": 2}, {"n": 3}])
    _wait_for(lambda: kept._drawing_ahead is not None)
    kept.stop()
    assert kept._thread is None and [n for _, n, _ in calls] == [1, 2]  # n=2 finished, n=3 never started
    kept.draw_ahead({"n": 1}, [{"n": 4}])
    time.sleep(0.1)
    assert kept._thread is None and kept.drawn_ahead == 1
