"""The one place that says what the property test of the public API (test_api_contract.py)
may call and what it must accept.

The test walks every module of ``utils`` and calls every public function and class
constructor, one parameter at a time, with a bad value of each kind in ``KINDS`` while the
other parameters take the valid example values below (or their defaults). Each such call
must raise a ValueError or TypeError that names the parameter, quickly. A new function is
covered as soon as it exists; if it has a parameter without a default, the test asks for
an entry in ``VALID``.

A value that a function rightly accepts goes into ``ACCEPTS`` (or ``ACCEPTS_BY_NAME`` for
a parameter name that means the same everywhere), with the reason. A parameter whose
default is None accepts None without saying so. The test then checks that such a value
really works.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import time
from contextlib import contextmanager

import numpy as np
# torch imports sympy lazily, on the first use of some operations; an alarm of time_limit that
# lands inside that import leaves a half-initialised sympy in sys.modules, and every later torch
# call in the worker then fails (seen under heavy load). Imported whole here, before any alarm.
import sympy  # noqa: F401

from utils.exercises import core

# The kinds of bad value, each with the value tried every time (the test's Hypothesis
# strategies in test_api_contract.py draw further values of each kind).
KINDS = {
    "none": None,
    "string": "30",
    "negative": -1,
    "zero": 0,
    "nan": float("nan"),
    "inf": float("inf"),
    "array3d": np.ones((2, 3, 4)),
    "huge": 10**9,
    "object": object(),
}

# CPU seconds of this process one call may take, a valid one included (the valid examples are
# small): CPU time, which other work on the machine does not inflate as it does wall time.
TIME_LIMIT = 10.0
# Wall seconds after which a call is interrupted as hung: far more than TIME_LIMIT, so that only
# a hang (or work far past the limit) reaches it, however loaded the machine.
HANG_SECONDS = 120.0

# Modules the walk leaves out, and why.
EXEMPT_MODULES = {
    # The checks themselves: their ``value`` takes anything by design, and ``name`` is the
    # caller's own text. tests/test_validation.py tests them one by one.
    "utils.validation": "tested in tests/test_validation.py",
    # Exercise checkers and their machinery take a learner's answer, anything at all, and
    # answer with a Feedback instead of raising: the test checks every Exercise object.
    "utils.exercises": "checked through its Exercise objects",
    # Imports only the standard library and packaging, so it can still report a broken
    # install; it cannot use utils.validation (NumPy). Not yet walked: a follow-up.
    "utils.environment": "stands alone without NumPy; its checks are in tests/test_environment.py",
}

# Classes the walk leaves out, and why.
EXEMPT_CALLABLES = {
    # A NamedTuple of results that forward() fills in; nothing is computed from its fields.
    "utils.numpy_block.BlockSteps": "a record of forward()'s results",
}

# Parameters that mean the same in every function.
ACCEPTS_BY_NAME = {
    "seed": "zero huge",  # any non-negative whole number seeds a generator
    "title": "string",
    "label": "string",
    "description": "string",
}

# function -> parameter -> the kinds it rightly accepts (space-separated), with the reason.
ACCEPTS = {
    "utils.widgets.slider": {"low": "negative zero", "high": "huge"},  # any range a slider can show
    "utils.blocks.block_numbers": {"d": "huge"},  # a formula, nothing is allocated
    "utils.blocks.check_scale": {"scale": "negative zero huge"},  # any finite branch scale
    "utils.blocks.LayerNormResidualBlock": {"scale": "negative zero huge"},
    "utils.blocks.make_block": {"scale": "negative zero huge"},
    "utils.blocks.make_stack": {"scale": "negative zero huge"},
    "utils.blocks.demo_block": {"scale": "negative zero huge"},
    "utils.gradient_flow.streamed_profile": {"scale": "negative zero huge",
                                             "shortcut": "zero huge", "nudge": "zero"},  # skip path off; no nudge
    "utils.gradient_flow.draw_layer_profiles": {"loss": "string"},  # the loss's name on the axis
    "utils.transformer.draw_variance": {"slope": "negative zero huge"},  # any fitted slope
    "utils.gradient_flow.depth_sweep": {"scale": "negative zero huge"},
    "utils.gradient_flow.widget_profile": {"scale": "negative zero huge"},
    "utils.gradient_flow.draw_gradient_flow": {"scale": "negative zero huge"},
    "utils.blocks.draw_block": {"scale": "negative zero huge"},
    "utils.jacobians.draw_jacobian_products": {"scale": "negative zero huge"},
    "utils.slopes.slope_products": {"slope": "negative zero huge"},  # vanishing and exploding products are the lesson
    "utils.slopes.slope_table": {"plain_slope": "negative zero huge", "edit": "zero huge"},
    "utils.slopes.draw_slope_products": {"plain_slope": "negative zero huge", "edit": "zero huge"},
    "utils.slopes.slope_products_plot": {"plain_slope": "zero", "edit": "zero"},  # the sliders' left ends
    "utils.jacobians.singular_values_plot": {"scale": "zero"},  # the slider's left end: no branch
    "utils.slopes.format_plain": {"value": "negative zero nan inf huge"},  # products that under- or overflowed
    "utils.slopes.format_residual": {"value": "negative zero nan inf huge"},
    "utils.recipes.deepnorm_constants": {"layers": "huge"},  # a formula, nothing is allocated
    "utils.blocks.ReZeroBlock": {"multiplier": "negative zero huge", "alpha": "negative zero huge none"},
    "utils.blocks.block_plot": {"scale": "zero"},  # the slider's left end
    # It answers whether a control can show a value, for any value at all.
    "utils.lesion.path_length_counts": {"n_blocks": "zero"},  # no block: one path, the skip
    "utils.lesion.random_lesion_accuracies": {"k": "zero"},  # delete nothing: the intact accuracy
    "utils.progress.progress_bar": {"total": "huge"},  # a counter, nothing is allocated
    "utils.recipes.branches": {"depth": "huge"},  # a formula
    "utils.training.train": {"lr": "zero huge", "momentum": "zero"},  # a diverging run is a result to show
    "utils.training.warmup_lr": {"step": "huge", "lr": "zero huge", "warmup_steps": "zero huge"},  # any schedule
    "utils.landscape.loss_surface": {"span": "huge"},  # any positive span slices the surface
    "utils.training_figures.loss_curves": {"window": "huge"},  # clipped to the curve's length
    "utils.training_figures.random_lesions": {"blocks": "huge"},  # a count in the axis label
    "utils.hyper_connections.mixing_matrices": {"spread": "zero"},  # no perturbation: the identity
    "utils.hyper_connections.hyper_stack": {"spread": "zero"},
    "utils.depth_scaling.first_step_change": {"alpha": "zero", "lr": "zero"},  # no multiplier; no step
    "utils.transformer.adam_steps": {"lr": "zero"},  # a step that changes nothing
    "utils.depth_scaling.draw_lr_sweep": {"diverged": "zero huge"},  # any threshold for "diverged"
    "utils.depth_as_time.residual_flow": {"scale": "zero"},  # no branch: the identity
    "utils.low_precision.rounded_flow": {"scale": "zero"},
    # Any start and write (past the format's range the sum overflows to inf, as the format does); no write at all.
    "utils.low_precision.repeated_sum": {"start": "negative zero huge", "write": "negative zero huge", "count": "zero"},
    "utils.low_precision.half_ulp": {"value": "negative huge"},  # |value| only; refused past the format's range
    "utils.logit_lens.draw_lens": {"chance": "zero"},  # a line at 0
}


# ----- valid example arguments ------------------------------------------------------------

def _figure():
    from matplotlib.figure import Figure

    return Figure()


def _axes():
    return _figure().subplots()


def _mlp(architecture="residual"):
    from utils.mlp import make_mlp

    return make_mlp(architecture, 6, width=8, in_features=4, out_features=3, seed=0)


def _data(n: int = 12, features: int = 4):
    import torch

    x = torch.randn(n, features, generator=torch.Generator().manual_seed(0))
    return x, torch.arange(n) % 3


def _flow_input():
    import torch

    return torch.ones(2, 3, dtype=torch.float64)


def _flow_weights():
    import torch

    return torch.eye(3, dtype=torch.float64).expand(2, 3, 3).clone()


def _positive_matrix():
    import torch

    return torch.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=torch.float64)


def _stack():
    from utils.blocks import make_stack

    return make_stack(2, 8)


def _tokens(d: int = 8):
    import torch

    return torch.randn(3, d, generator=torch.Generator().manual_seed(0))


def _profile():
    from utils.gradient_flow import LayerProfile

    return LayerProfile(np.array([2.0, 1.5, 1.0]), np.zeros(3), np.ones(3))


def _published():
    from utils.gradient_flow import REFERENCE_TABLE

    return REFERENCE_TABLE


def _transformer():
    from utils.transformer import TinyTransformer

    return TinyTransformer(2, d=8, heads=2)


def _stream_input():
    import torch

    return torch.randn(1, 3, 8, generator=torch.Generator().manual_seed(0))


def _stream_labels():
    import torch

    return torch.tensor([3])


def _stream():
    from utils.transformer import residual_stream

    return residual_stream(_transformer(), _stream_input())


def _deep_mlp():
    from utils.recipes import build_deep_mlp

    return build_deep_mlp(6, width=8, in_features=4)


def _controls():
    import ipywidgets as widgets

    return {"depth": widgets.IntSlider(value=2, min=1, max=4)}


def _live_plot():
    from utils.widgets import LivePlot

    return LivePlot(_draw, _controls())


def _draw(fig, depth=2):
    fig.subplots().plot(range(depth))
    return f"depth {depth}"


# Each entry returns fresh keyword arguments (figures and models are changed by a call).
# Parameters not listed take their defaults.
def _runs():
    return {(a, d, s): {"losses": [2.0, 1.0, 0.5], "train": (0.1, 0.9), "test": (0.2, 0.8)}
            for a in ("plain", "residual") for d in (4, 6) for s in (0, 1)}


def _grid():
    values = np.linspace(-1.0, 1.0, 3)
    return values, values, np.outer(values ** 2 + 0.5, values ** 2 + 0.5)


def _curves():
    x = np.linspace(-1.0, 1.0, 5)
    return {(a, 2, d): (x, np.sin(d * x), 0.5) for a in ("plain", "residual") for d in (2, 4)}


VALID = {
    "utils.landscape.loss_surface": lambda: dict(model=_mlp(), x=_data()[0], y=_data()[1], points=3),
    "utils.mlp.branch_to_skip_ratios": lambda: dict(model=_mlp(), x=_data()[0]),
    "utils.training_figures.loss_curves": lambda: dict(runs=_runs(), depths=[4, 6], seeds=[0, 1]),
    "utils.training_figures.error_against_depth": lambda: dict(runs=_runs(), depths=[4, 6], seeds=[0, 1]),
    "utils.training_figures.layer_gradients": lambda: dict(norms={"plain": [1.0, 2.0, 4.0],
                                                                  "residual": [1.0, 1.0, 1.0]}, depth=3),
    "utils.training_figures.branch_ratios": lambda: dict(ratios=[[1.0, 0.5], [0.9, 0.4]]),
    "utils.training_figures.loss_surfaces": lambda: dict(surfaces={"plain": _grid(), "residual": _grid()}),
    "utils.training_figures.single_lesions": lambda: dict(
        lesions={(a, s): (0.9, [0.5, 0.8]) for a in ("plain", "residual") for s in (0, 1)}, seeds=[0, 1]),
    "utils.training_figures.random_lesions": lambda: dict(accuracies={0: [0.9, 0.95], 2: [0.5, 0.7]}, blocks=3),
    "utils.training_figures.gradient_grid": lambda: dict(curves=_curves(), rows=[("plain", 2, "plain"),
                                                                                  ("residual", 2, "residual")],
                                                         depths=[2, 4]),
    "utils.training_figures.autocorrelation_by_depth": lambda: dict(
        autocorrelation={(a, d): 0.5 for a in ("plain", "residual") for d in (2, 4)}, depths=[2, 4]),
    "utils.blocks.check_scale": lambda: dict(scale=1.0),
    "utils.blocks.block_numbers": lambda: dict(d=8),
    "utils.blocks.LayerNormResidualBlock": lambda: dict(d=8),
    "utils.blocks.LayerNormPlainBlock": lambda: dict(d=8),
    "utils.blocks.ReZeroBlock": lambda: dict(d=8),
    "utils.blocks.draw_std_through_stack": lambda: dict(fig=_figure(), stds={"plain": [1.0, 0.5], "pre": [1.0, 2.0]}),
    "utils.blocks.make_block": lambda: dict(d=8),
    "utils.blocks.make_stack": lambda: dict(depth=2, d=8),
    "utils.blocks.output_stats": lambda: dict(block=_stack()[0], x=_tokens()),
    "utils.blocks.draw_block": lambda: dict(fig=_figure()),
    "utils.diagrams.draw_residual_block": lambda: dict(ax=_axes()),
    "utils.diagrams.draw_block_arrows": lambda: dict(ax=_axes(), x=[1.0, 0.5], branch=[0.2, 0.3]),
    "utils.diagrams.draw_transformer_block": lambda: dict(ax=_axes()),
    "utils.gradient_flow.format_table": lambda: dict(results=_published()),
    "utils.gradient_flow.LayerProfile": lambda: dict(grad_norm=np.array([2.0, 1.0]), act_mean=np.zeros(2),
                                                     act_std=np.ones(2)),
    "utils.gradient_flow.profile_stack": lambda: dict(stack=_stack(), x=_tokens()),
    "utils.gradient_flow.probe": lambda: dict(tokens=2, d=8, seed=0),
    "utils.gradient_flow.streamed_profile": lambda: dict(depth=3, d=8, tokens=2),
    "utils.gradient_flow.depth_sweep": lambda: dict(depths=[1, 3], d=8, tokens=2),
    "utils.gradient_flow.widget_profile": lambda: dict(depth=3, residual=True, norm="pre", scale=1.0),
    "utils.gradient_flow.draw_gradient_flow": lambda: dict(fig=_figure(), depth=10),
    "utils.gradient_flow.gradient_flow_plot": lambda: dict(depth=10),
    "utils.gradient_flow.stack_from_stream": lambda: dict(depth=2, d=8),
    "utils.gradient_flow.draw_layer_profiles": lambda: dict(fig=_figure(), profiles={"plain": _profile(),
                                                                                     "residual": _profile()}),
    "utils.gradient_flow.draw_depth_sweep": lambda: dict(fig=_figure(), depths=[2], sweep={"plain": [_profile()],
                                                                                         "residual": [_profile()]}),
    "utils.transformer.draw_variance": lambda: dict(fig=_figure(), stream=_stream(), slope=0.5),
    "utils.jacobians.branch_jacobian": lambda: dict(x=[1.0, -1.0], w1=np.eye(2), w2=np.eye(2)),
    "utils.jacobians.block_jacobian": lambda: dict(x=[1.0, -1.0], w1=np.eye(2), w2=np.eye(2)),
    "utils.jacobians.finite_difference_jacobian": lambda: dict(f=np.tanh, x=[0.5, -0.5]),
    "utils.jacobians.draw_unit_circle_image": lambda: dict(ax=_axes(), matrix=[[1.0, 0.5], [0.0, 1.0]]),
    "utils.jacobians.random_layer_matrices": lambda: dict(depth=3, dim=4),
    "utils.jacobians.product_singular_values": lambda: dict(jacobians=np.stack([np.eye(2) * 2] * 3)),
    "utils.jacobians.draw_jacobian_products": lambda: dict(fig=_figure(), depth=5, dim=4),
    "utils.jacobians.drift_table": lambda: dict(depths=(2, 5), scales=(0.1,), dim=4),
    "utils.lesion.path_length_counts": lambda: dict(n_blocks=4),
    "utils.lesion.single_lesion_accuracies": lambda: dict(model=_mlp(), x=_data()[0], y=_data()[1]),
    "utils.lesion.random_lesion_accuracies": lambda: dict(model=_mlp(), x=_data()[0], y=_data()[1], k=1, draws=2),
    "utils.mlp.BatchNormResidualBlock": lambda: dict(width=8),
    "utils.mlp.MLP": lambda: dict(architecture="plain", depth=4, width=8, in_features=4, out_features=3,
                                  block_layers=2),
    "utils.mlp.make_mlp": lambda: dict(architecture="plain", depth=4, width=8),
    "utils.mlp.weight_layers": lambda: dict(model=_mlp()),
    "utils.numpy_block.forward": lambda: dict(x=[1.0, -1.0], w1=np.eye(2), w2=np.eye(2)),
    "utils.plotting.show": lambda: dict(fig=_figure()),
    "utils.plotting.render": lambda: dict(draw=_draw),
    "utils.progress.progress_bar": lambda: dict(total=3),
    "utils.hyper_connections.sinkhorn": lambda: dict(matrix=_positive_matrix()),
    "utils.hyper_connections.mixing_matrices": lambda: dict(depth=2),
    "utils.hyper_connections.composite_gain": lambda: dict(matrices=[_positive_matrix()]),
    "utils.hyper_connections.hyper_stack": lambda: dict(depth=2, d=4),
    "utils.hyper_connections.draw_composite_gain": lambda: dict(fig=_figure(), gains={"a": [1.0, 2.0]}),
    "utils.looks_linear.crelu": lambda: dict(x=_data()[0]),
    "utils.looks_linear.looks_linear": lambda: dict(weight=_data()[0]),
    "utils.looks_linear.make_looks_linear_mlp": lambda: dict(depth=4, width=8, in_features=4, classes=3),
    "utils.depth_scaling.lr_sweep": lambda: dict(x=_data(8, 64)[0], y=_data(8, 64)[1], depths=(6,), alphas=(1.0,),
                                                 lrs=(1e-3,), steps=1, seeds=(0,), batch_size=4),
    "utils.depth_scaling.draw_lr_sweep": lambda: dict(fig=_figure(), sweep={(1.0, 6): np.array([1.0])}, lrs=(1e-3,)),
    "utils.depth_scaling.first_step_change": lambda: dict(depth=6, alpha=1.0, x=_data(8, 64)[0], y=_data(8, 64)[1]),
    "utils.depth_as_time.smooth_weights": lambda: dict(depth=3, d=4),
    "utils.depth_as_time.independent_weights": lambda: dict(depth=3, d=4),
    "utils.depth_as_time.residual_flow": lambda: dict(x=_flow_input(), weights=_flow_weights(), scale=0.5),
    "utils.depth_as_time.relative_distance": lambda: dict(a=_flow_input() * 2, b=_flow_input()),
    "utils.depth_as_time.draw_convergence": lambda: dict(fig=_figure(), errors={"a": [0.1, 0.05]}, depths=(2, 4)),
    "utils.logit_lens.lens_logits": lambda: dict(model=_mlp(), x=_data()[0]),
    "utils.logit_lens.lens_scores": lambda: dict(model=_mlp(), x=_data()[0], y=_data()[1]),
    "utils.logit_lens.first_reaching": lambda: dict(readings=[[0.3, 0.6, 0.9], [0.4, 0.7, 0.95]], share=0.5),
    "utils.logit_lens.draw_lens": lambda: dict(fig=_figure(), scores={"residual": [0.5, 0.9], "plain": [0.1, 0.9]}),
    "utils.low_precision.half_ulp": lambda: dict(value=1.0, dtype="bfloat16"),
    "utils.low_precision.repeated_sum": lambda: dict(start=1.0, write=0.001, count=3, dtype="float16"),
    "utils.low_precision.rounded_flow": lambda: dict(x=_flow_input(), weights=_flow_weights(), scale=0.5,
                                                     stream="bfloat16"),
    "utils.low_precision.draw_drift": lambda: dict(fig=_figure(), errors={"float64": [0.1, 0.05], "bf16": [0.1, 0.2]},
                                                   depths=(2, 4)),
    "utils.recipes.deepnorm_constants": lambda: dict(layers=12),
    "utils.recipes.branches": lambda: dict(depth=56),
    "utils.recipes.build_deep_mlp": lambda: dict(depth=6, width=8, in_features=4),
    "utils.recipes.signal_at_init": lambda: dict(model=_deep_mlp(), x=_data()[0]),
    "utils.recipes.draw_losses": lambda: dict(fig=_figure(), histories={"default": [2.0, 1.0], "scaled": [2.0, np.nan]}),
    "utils.recipes.draw_signal": lambda: dict(fig=_figure(), depth=6, x=_data(4, 64)[0]),
    "utils.shattered.lag1_autocorrelation": lambda: dict(values=[1.0, 2.0, 4.0, 3.0]),
    "utils.shattered.input_gradient_curve": lambda: dict(architecture="residual", depth=4, width=8, n_inputs=16),
    "utils.shattered.gradient_autocorrelation": lambda: dict(architecture="residual", depth=4, seeds=(0, 1)),
    "utils.shattered.draw_gradient_curves": lambda: dict(fig=_figure(), depth=4),
    "utils.slopes.slope_products": lambda: dict(slope=0.5, depth=10),
    "utils.slopes.format_plain": lambda: dict(value=0.001),
    "utils.slopes.format_residual": lambda: dict(value=1.05),
    "utils.slopes.draw_slope_products": lambda: dict(fig=_figure()),
    "utils.training.train": lambda: dict(model=_mlp(), x=_data()[0], y=_data()[1], steps=2, batch_size=4),
    "utils.training.evaluate": lambda: dict(model=_mlp(), x=_data()[0], y=_data()[1]),
    "utils.training.weight_gradient_norms": lambda: dict(model=_mlp(), x=_data()[0], y=_data()[1]),
    "utils.training.warmup_lr": lambda: dict(step=3, lr=0.001, warmup_steps=10),
    "utils.training.output_change": lambda: dict(before=_stream_input(), after=2 * _stream_input()),
    "utils.transformer.TransformerBlock": lambda: dict(d=8, heads=2),
    "utils.transformer.TinyTransformer": lambda: dict(depth=2, d=8, heads=2),
    "utils.transformer.residual_stream": lambda: dict(model=_transformer(), x=_stream_input()),
    "utils.depth_aggregation.depth_average_stream": lambda: dict(model=_transformer(), x=_stream_input()),
    "utils.transformer.attention_logits": lambda: dict(model=_transformer(), x=_stream_input()),
    "utils.transformer.adam_steps": lambda: dict(model=_transformer(), x=_stream_input(),
                                                 labels=_stream_labels(), steps=2),
    "utils.transformer.last_block_gradient": lambda: dict(depth=2, norm="pre", d=8, heads=2, tokens=3, samples=2),
    "utils.transformer.stream_growth": lambda: dict(stream=_stream()),
    "utils.transformer.draw_stream": lambda: dict(fig=_figure(), streams={"pre-LN": _stream()}),
    "utils.transformer.draw_gradient_vs_depth": lambda: dict(fig=_figure(), depths=[2, 8], post=[1.0, 1.0],
                                                             pre=[1.0, 0.5]),
    "utils.widgets.LivePlot": lambda: dict(draw=_draw, controls=_controls()),
    "utils.widgets.slider": lambda: dict(description="depth", value=2, low=1, high=4),
    "utils.widgets.default_grid": lambda: dict(control=_controls()["depth"]),
    "utils.widgets.draw_static_pictures": lambda: dict(plots=[_live_plot()], processes=1),
    "utils.recipes.signal_plot": lambda: dict(depth=4),
    "utils.shattered.gradient_curves_plot": lambda: dict(depth=4),
}


# ----- what the test walks ----------------------------------------------------------------

def public_modules() -> dict:
    """Every module under ``utils`` but the exempt ones, by name."""
    import utils

    return {info.name: importlib.import_module(info.name) for info in pkgutil.walk_packages(utils.__path__, "utils.")
            if not any(info.name == exempt or info.name.startswith(exempt + ".") for exempt in EXEMPT_MODULES)}


def public_callables() -> dict:
    """The public API: every function and class a module of ``utils`` (but the exempt ones)
    lists in its ``__all__``, by qualified name."""
    found = {}
    for module in public_modules().values():
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            qualified = f"{module.__name__}.{name}"
            if (inspect.isfunction(value) or inspect.isclass(value)) and qualified not in EXEMPT_CALLABLES:
                found[qualified] = value
    return found


def parameters(function) -> list[inspect.Parameter]:
    """The named parameters of ``function`` (``*args``, ``**kwargs`` and ``_private`` ones,
    such as the position matplotlib hands a tick formatter, are left out)."""
    return [p for p in inspect.signature(function).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and not p.name.startswith("_")]


def accepted_kinds(qualified_name: str, parameter: inspect.Parameter) -> set[str]:
    """The kinds of value that ``parameter`` of the function rightly accepts."""
    kinds = set(ACCEPTS.get(qualified_name, {}).get(parameter.name, "").split())
    kinds |= set(ACCEPTS_BY_NAME.get(parameter.name, "").split())
    kinds |= {kind for kind, value in KINDS.items()  # its own default value, e.g. None or 0
              if parameter.default is not parameter.empty and type(parameter.default) is type(value)
              and not isinstance(value, np.ndarray) and parameter.default == value}
    return kinds


def valid_arguments(qualified_name: str) -> dict:
    """Fresh valid keyword arguments for the function (its entry in VALID, or none)."""
    return VALID[qualified_name]() if qualified_name in VALID else {}


def exercises() -> dict:
    """Every ``Exercise`` object in every module under ``utils.exercises`` (module globals,
    and the items of module-level lists, tuples and dicts), by a readable name. Empty
    while the package does not exist."""
    try:
        package = importlib.import_module("utils.exercises")
        from utils.exercises.core import Exercise
    except ModuleNotFoundError:
        return {}
    found = {}
    for info in pkgutil.walk_packages(package.__path__, "utils.exercises."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            items = value.items() if isinstance(value, dict) else (
                enumerate(value) if isinstance(value, (list, tuple)) else [(None, value)])
            for key, item in items:
                if isinstance(item, Exercise):
                    found.setdefault(id(item), (f"{info.name}.{name}" + ("" if key is None else f"[{key!r}]"), item))
    return dict(found.values())


# ----- the time limit ---------------------------------------------------------------------

class TookTooLong(Exception):
    """Raised inside a call that ran past TIME_LIMIT."""


@contextmanager
def time_limit(seconds: float = TIME_LIMIT, hang_seconds: float = HANG_SECONDS):
    """Fail the block if it used more than ``seconds`` of CPU time, and interrupt it after
    ``hang_seconds`` of wall time (a hang becomes a test failure, not a stuck test run) with
    the checkers' own SIGALRM limit. CPU time is checked when the block ends, as one long call
    inside torch or NumPy only returns to Python when it is done."""
    start = time.process_time()
    try:
        with core._time_limit(hang_seconds):
            yield
    except core._TimeUp:
        raise TookTooLong(f"still running after {hang_seconds} s") from None
    used = time.process_time() - start
    if used > seconds:
        raise TookTooLong(f"took {used:.1f} CPU seconds, more than {seconds}")
