"""How gradients and activations travel through deep stacks of the blocks in
``utils.blocks``: notebook 06's 30-block reference computation, the gradient norm and
activation statistics at every layer, sweeps over depth up to 1000 blocks, and notebook
07's widget. ``streamed_profile`` holds one block at a time, so a 1000-block stack of width
128 (528 MB of weights) costs a few MB; its weights are the same bits on every CPU, since in
a chaotic deep plain stack a last-bit change moves the gradient by orders of magnitude."""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from matplotlib import ticker
from torch import nn

from . import plotting
from .blocks import NORM_POSITIONS, REZERO, block_numbers, check_scale, make_block, make_stack
from .validation import (check_bool, check_choice, check_cost, check_figure, check_float, check_int, check_sequence,
                         check_tensor, check_text, invalid)

__all__ = ["REFERENCE_TABLE", "reference_setup", "reference_comparison", "format_table", "LayerProfile",
           "profile_stack", "stack_from_stream", "probe", "streamed_profile", "depth_sweep", "draw_layer_profiles",
           "draw_depth_sweep", "SCALE_CHOICES", "widget_profile", "draw_gradient_flow", "gradient_flow_plot"]

_METRICS = ("output_norm", "gradient_norm", "output_mean", "output_std")

# The reference computation printed in M. Brenndoerfer, Language AI Handbook, chapter 103
# "Residual Connections", section "Practical Implementation" (2025): a seeded run of the
# recipe in reference_setup, not an empirical result.
REFERENCE_TABLE = {
    "plain": {"output_norm": 22.9232, "gradient_norm": 63.5118, "output_mean": -0.0082, "output_std": 0.1789},
    "residual": {"output_norm": 189.8797, "gradient_norm": 202.0742, "output_mean": 0.0353, "output_std": 1.4831},
}

# The widget's fixed probe: width 128 as in the reference table, 16 token vectors.
_WIDGET_D = 128
_WIDGET_TOKENS = 16
_WIDGET_SEED = 0


def reference_setup() -> tuple[dict, dict]:
    """The reference 30-block stacks and inputs, ``(stacks, inputs)`` keyed "plain" and
    "residual", in the recipe's exact seeding order (it seeds torch's global generator)."""
    torch.manual_seed(42)
    residual = make_stack(30, 128, residual=True, norm="pre", scale=1.0)
    torch.manual_seed(42)
    plain = make_stack(30, 128, residual=False)
    x_residual, x_plain = torch.randn(4, 32, 128), torch.randn(4, 32, 128)
    return {"plain": plain, "residual": residual}, {"plain": x_plain, "residual": x_residual}


def reference_comparison() -> dict:
    """The reference 30-block table recomputed: ``{"plain": {...}, "residual": {...}}`` (loss =
    output.sum(); unbiased std)."""
    stacks, inputs = reference_setup()
    results = {}
    for name, x in inputs.items():
        y = stacks[name](x.requires_grad_(True))
        (grad,) = torch.autograd.grad(y.sum(), x)
        y = y.detach()
        results[name] = {"output_norm": float(y.norm()), "gradient_norm": float(grad.norm()),
                         "output_mean": float(y.mean()), "output_std": float(y.std())}
    return results


def format_table(results: dict, *, reference: dict | None = None) -> str:
    """The comparison as a text table with 4 decimals (stable in stored outputs), each value
    followed by ``reference``'s (e.g. ``REFERENCE_TABLE``) in brackets if given."""
    columns = ("plain", "residual")
    for name, table in (("results", results), *([("reference", reference)] if reference is not None else [])):
        if not isinstance(table, dict):
            raise invalid(name, "a dict with keys 'plain' and 'residual' (see reference_comparison)", table,
                          error=TypeError)
        if any(not isinstance(table.get(column), dict) or set(_METRICS) - set(table[column]) for column in columns):
            raise invalid(name, f"a dict with keys 'plain' and 'residual', each holding {', '.join(_METRICS)}",
                          sorted(map(str, table)))
    header = f"{'metric':<15}" + "".join(f"{c:>22}" for c in columns)
    lines = [header, "-" * len(header)]
    cell = lambda column, metric: f"{results[column][metric]:.4f}" + (
        "" if reference is None else f" ({reference[column][metric]:.4f})")
    lines += [f"{metric:<15}" + "".join(f"{cell(column, metric):>22}" for column in columns) for metric in _METRICS]
    if reference is not None:
        lines.append("(in brackets: the value printed in the reference chapter)")
    return "\n".join(lines)


@dataclass(frozen=True)
class LayerProfile:
    """What happens at every layer of one stack for one input: entry l (0 = the input,
    ``depth`` = the output) is the loss gradient's norm at the input of block l + 1, and
    the mean and unbiased std of that activation."""

    grad_norm: np.ndarray
    act_mean: np.ndarray
    act_std: np.ndarray

    def __post_init__(self):
        for name in ("grad_norm", "act_mean", "act_std"):  # inf and NaN may stand for an overflow
            value = getattr(self, name)
            if not isinstance(value, (np.ndarray, list, tuple)) or np.asarray(value).dtype.kind not in "iuf":
                raise invalid(name, "a 1-D array of numbers, one per layer", value, error=TypeError)
            array = np.asarray(value, dtype=np.float64)
            if array.ndim != 1 or len(array) < 2 or len(array) != len(np.asarray(self.grad_norm)):
                raise invalid(name, "a 1-D array with one number per layer (depth + 1 >= 2, the same length "
                              "as grad_norm)", array)
            object.__setattr__(self, name, array)

    @property
    def depth(self) -> int:
        """Number of blocks."""
        return len(self.grad_norm) - 1

    @property
    def gain(self) -> np.ndarray:
        """How much the gradient has grown (> 1) or shrunk (< 1) from the output back to each layer."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.grad_norm / self.grad_norm[-1]


def _stats(activations) -> np.ndarray:
    """Each activation's mean and unbiased std, one row per layer."""
    return np.array([(float(a.mean()), float(a.std())) for a in activations])


def profile_stack(stack: nn.Sequential, x: torch.Tensor, upstream: torch.Tensor | None = None) -> LayerProfile:
    """The ``LayerProfile`` of ``stack`` for ``x`` and the loss ``(output * upstream).sum()``
    (all ones if None: output.sum(), as in the reference table)."""
    if not isinstance(stack, nn.Sequential) or len(stack) == 0:
        raise invalid("stack", "a non-empty nn.Sequential (see blocks.make_stack)", stack, error=TypeError)
    check_tensor("x", x)
    if upstream is not None:
        check_tensor("upstream", upstream)
    activations = [x.detach().clone().requires_grad_(True)]
    for block in stack:
        activations.append(block(activations[-1]))
    output = activations[-1]
    upstream = torch.ones_like(output) if upstream is None else upstream
    if upstream.shape != output.shape:
        raise invalid("upstream", f"of the output's shape {tuple(output.shape)}", upstream)
    grads = torch.autograd.grad((output * upstream).sum(), activations)  # no weight gradients needed
    means, stds = _stats(a.detach() for a in activations).T
    return LayerProfile(np.array([float(grad.norm()) for grad in grads]), means, stds)


class _WeightStream:
    """The weights of blocks 1, 2, 3, ... of a stack of width ``d``, drawn on demand, layer l
    from its own generator seeded (seed, 1, l), so in any order: nn.Linear's default
    distribution with exact arithmetic and one float32 rounding, the same bits on every CPU.
    The first ``cache_layers`` layers are kept once drawn (0.5 MB each at d = 128)."""

    def __init__(self, d: int = 128, seed: int = 0, *, cache_layers: int = 0):
        self.d, self.seed, self.cache_layers = d, seed, cache_layers
        self._shapes = ((4 * d, d), (4 * d,), (d, 4 * d), (d,))
        self._fan_ins = (d, d, 4 * d, 4 * d)
        self._cache: dict[int, tuple[torch.Tensor, ...]] = {}
        self._scratch = tuple(np.empty(shape, dtype=np.float32) for shape in self._shapes)

    def keep(self, cache_layers: int) -> None:
        """Keep the first ``cache_layers`` layers, drawn at once, and forget any beyond: many
        configurations of one deep stack then draw each layer once (forked processes share them)."""
        self.cache_layers = cache_layers
        self._cache = {layer: drawn for layer, drawn in self._cache.items() if layer < cache_layers}
        for layer in range(cache_layers):
            self.draw(layer)

    def draw(self, layer: int) -> tuple[torch.Tensor, ...]:
        """Layer ``layer``'s ``(fc1.weight, fc1.bias, fc2.weight, fc2.bias)``, float32; one not kept
        is drawn into a scratch copy, valid until the next draw: a deep pass allocates nothing."""
        if layer in self._cache:
            return self._cache[layer]
        arrays = (self._scratch if layer >= self.cache_layers
                  else tuple(np.empty(shape, dtype=np.float32) for shape in self._shapes))
        rng = np.random.default_rng([self.seed, 1, layer])
        for values, fan_in in zip(arrays, self._fan_ins):  # u has 24 bits, so 2u - 1 is exact; then one rounding
            rng.random(out=values, dtype=np.float32)
            values *= 2.0
            values -= 1.0
            values *= np.float32(1.0 / math.sqrt(fan_in))
        drawn = tuple(torch.from_numpy(values) for values in arrays)
        if layer < self.cache_layers:
            self._cache[layer] = drawn
        return drawn

    @torch.no_grad()
    def load(self, block: nn.Module, layer: int) -> None:
        """Give ``block`` (a LayerNorm block of width d) layer ``layer``'s weights (0 = first
        block); its LayerNorm keeps scale 1 and shift 0."""
        values = self.draw(layer)
        for target, value in zip((block.fc1.weight, block.fc1.bias, block.fc2.weight, block.fc2.bias), values):
            target.copy_(value)


def stack_from_stream(depth: int, d: int = 128, seed: int = 0, **config) -> nn.Sequential:
    """``make_stack(depth, d, **config)`` with the weights of ``_WeightStream(d, seed)``: the
    stack ``streamed_profile`` measures block by block, whole, for checks at small depths."""
    depth, d, seed = check_int("depth", depth, minimum=1), check_int("d", d, minimum=1), check_int("seed", seed, minimum=0)
    with torch.random.fork_rng(devices=[]):
        stack = make_stack(depth, d, **config)
    stream = _WeightStream(d, seed)  # after make_stack has checked the sizes
    for layer, block in enumerate(stack):
        stream.load(block, layer)
    return stack


def _checked_probe(name: str, depth: int, d: int, tokens: int, seed: int, norm: str, scale,
                   dtype=torch.float32, chains: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """``probe`` in ``dtype``, after the checks every streamed measurement shares and the refusal
    of one too big for a laptop: one activation per layer (``chains`` side by side), one block
    and a scratch copy; per layer two weight draws, a forward and a backward pass."""
    check_choice("dtype", dtype, (torch.float32, torch.float64))
    d, tokens = check_int("d", d, minimum=1), check_int("tokens", tokens, minimum=1)
    check_choice("norm", norm, NORM_POSITIONS)
    check_scale(scale)
    itemsize = 4 if dtype == torch.float32 else 8
    cost = lambda depth, d, tokens: (itemsize * ((depth + 5.0) * tokens * d + 2.0 * block_numbers(d)),
                                     depth * (2.0 * block_numbers(d) + 3.0 * tokens * block_numbers(d)))
    check_cost({name: depth, "d": d, "tokens": tokens}, lambda d, tokens, **depth: cost(*depth.values(), d,
               chains * tokens), what="the activations of every layer and the weight draws")
    return tuple(t.to(dtype) for t in probe(tokens, d, seed))


def probe(tokens: int, d: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``streamed_profile``'s input ``x`` and upstream gradient ``g``, standard normal of shape
    ``(tokens, d)``: drawn in float64 and rounded once, the same float32 bits on every machine."""
    tokens, d = check_int("tokens", tokens, minimum=1), check_int("d", d, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    check_cost({"tokens": tokens, "d": d}, lambda tokens, d: (8.0 * tokens * d, 2.0 * tokens * d),
               what="the input and the upstream gradient")
    rng = np.random.default_rng([seed, 0])
    x, g = (torch.from_numpy(rng.standard_normal((tokens, d)).astype(np.float32)) for _ in range(2))
    return x, g


def _streamed(config: dict, weights: _WeightStream, x: torch.Tensor, g: torch.Tensor, depths: list,
              advance=lambda: None, shortcut: float = 1.0) -> list[LayerProfile]:
    """The LayerProfiles of the nested stacks of ``depths`` (a deeper one's first D blocks are the
    depth-D stack), with one block of ``config`` (skip path times ``shortcut``) loaded with each
    layer's weights in turn: one forward pass through the deepest, then one backward pass with
    every depth's gradient side by side (a block acts on each token separately). ``advance()``
    is called at each of the 2 * max(depths) steps."""
    with torch.random.fork_rng(devices=[]):
        block = make_block(weights.d, **config).to(x.dtype).requires_grad_(False)
    step = block if shortcut == 1.0 else lambda x: block(x) + (shortcut - 1.0) * x
    deepest = max(depths)
    activations = torch.empty((deepest + 1, *x.shape), dtype=x.dtype)  # one buffer: no heap fragments
    activations[0] = x
    with torch.no_grad():
        for layer in range(deepest):
            weights.load(block, layer)
            activations[layer + 1] = step(activations[layer])
            advance()
    stats = _stats(activations)
    chains = sorted(set(depths))
    current = {}  # current[D]: the gradient of the depth-D chain at this layer
    norms = {depth: [float(g.norm())] for depth in chains}
    for layer in reversed(range(deepest)):
        weights.load(block, layer)
        if layer + 1 in norms:  # the depth-D stack's output is x_D: its chain starts here
            current[layer + 1] = g
        active = [depth for depth in chains if depth > layer]
        inp = activations[layer].repeat(len(active), 1).requires_grad_(True)
        (grad,) = torch.autograd.grad(step(inp), inp, torch.cat([current[depth] for depth in active]))
        for depth, part in zip(active, grad.split(len(x))):
            current[depth] = part
            norms[depth].append(float(part.norm()))
        advance()
    return [LayerProfile(np.array(norms[depth][::-1]), *stats[: depth + 1].T) for depth in depths]


def streamed_profile(depth: int, d: int = 128, *, residual: bool = True, norm: str = "pre", scale=1.0,
                     tokens: int = 16, seed: int = 0, dtype: torch.dtype = torch.float32,
                     shortcut: float = 1.0, nudge: float = 0.0) -> LayerProfile:
    """The ``LayerProfile`` of ``stack_from_stream(depth, d, seed, ...)`` for the input and
    upstream gradient ``probe(tokens, d, seed)``, holding one block at a time. The loss
    ``(output * g).sum()`` is one every configuration feels (a post-norm output sums to zero
    per token). ``dtype=torch.float64``: the same weights in double precision; ``shortcut``
    multiplies a pre-norm residual stack's skip path, x -> shortcut * x + s F(LN(x)); ``nudge``
    multiplies each input entry by 1 + nudge * r (r a fixed normal draw), to see how sensitive
    a deep stack is to its input's last digits. Overflows stay inf/NaN, for a plot to show them."""
    depth = check_int("depth", depth, minimum=1)
    check_bool("residual", residual)
    shortcut = check_float("shortcut", shortcut, minimum=0.0)
    nudge = check_float("nudge", nudge, minimum=-0.5, maximum=0.5)
    if shortcut != 1.0 and not (residual and norm == "pre"):
        raise ValueError("shortcut other than 1 needs a pre-norm residual stack (residual=True, norm='pre')")
    x, g = _checked_probe("depth", depth, d, tokens, seed, norm, scale, dtype)
    if nudge:
        noise = torch.from_numpy(np.random.default_rng([seed, 2]).standard_normal(tuple(x.shape))).to(dtype)
        x = x * (1.0 + nudge * noise)
    config = {"residual": residual, "norm": norm, "scale": scale}
    return _streamed(config, _WeightStream(d, seed), x, g, [depth], shortcut=shortcut)[0]


def depth_sweep(depths, *, d: int = 128, norm: str = "pre", scale=1.0, tokens: int = 16, seed: int = 0,
                progress=None, dtype: torch.dtype = torch.float32) -> dict:
    """``{"plain": [LayerProfile, ...], "residual": [...]}``: ``streamed_profile`` at every depth
    in ``depths``, in that order, in one forward and one backward pass per stack, one stack at a
    time. Deep plain stacks need ``dtype=torch.float64`` (float32 rounding moves the gain at 1000
    blocks about 100-fold). ``progress``: a ``utils.progress.progress_bar`` of ``4 * max(depths)``
    steps, one per block forward and backward of each stack."""
    depths = [check_int("depths[]", depth, minimum=1) for depth in check_sequence("depths", depths, what="depths")]
    if progress is not None and not hasattr(progress, "update"):
        raise invalid("progress", "a progress bar (utils.progress.progress_bar) or None", progress, error=TypeError)
    x, g = _checked_probe("depths", max(depths), d, tokens, seed, norm, scale, dtype,
                          chains=len(set(depths)))
    advance = progress.update if progress is not None else lambda: None
    configs = {"plain": {"residual": False}, "residual": {"residual": True, "norm": norm, "scale": scale}}
    return {name: _streamed(config, _WeightStream(d, seed), x, g, depths, advance)
            for name, config in configs.items()}


# ----- figures of notebooks 06 and 07 ---------------------------------------------------

def draw_layer_profiles(fig, profiles: dict, *, loss: str = "output.sum()") -> None:
    """Notebook 06's figure: the gradient norm (log axis) and the activation std at every
    layer of the plain and the residual stack (``profiles``: two LayerProfiles)."""
    check_figure("fig", fig)
    if not isinstance(profiles, dict) or set(profiles) != {"plain", "residual"}:
        raise ValueError("profiles must be a dict with keys 'plain' and 'residual'")
    for name, profile in profiles.items():
        if not isinstance(profile, LayerProfile):
            raise TypeError(f"profiles[{name!r}] must be a LayerProfile, got {type(profile).__name__}")
    check_text("loss", loss)  # the loss's name for the axis label
    ax_grad, ax_std = fig.subplots(1, 2)
    for name, color in (("plain", plotting.PLAIN_COLOR), ("residual", plotting.RESIDUAL_COLOR)):
        layers = np.arange(profiles[name].depth + 1)
        plotting._plot_log_safe(ax_grad, layers, profiles[name].grad_norm, color=color, label=name)
        ax_std.plot(layers, profiles[name].act_std, color=color, label=name)
    ax_grad.set(title="Plain: the drop is all in block 1", xlabel="layer l (0 = input)",
                ylabel=f"|dL/dx_l|, L = {loss}")
    ax_std.set(title="Plain stays small; residual grows", xlabel="layer l (0 = input)", ylabel="std of x_l")
    for ax in (ax_grad, ax_std):
        ax.legend()


def draw_depth_sweep(fig, depths, sweep: dict) -> None:
    """Notebook 07's figure: the gain at the input against depth (log-log), and the gain
    at every layer of the deepest stacks, plain and residual (``sweep`` from depth_sweep)."""
    check_figure("fig", fig)
    if not isinstance(sweep, dict) or set(sweep) != {"plain", "residual"}:
        raise invalid("sweep", "the dict returned by depth_sweep", sweep, error=TypeError)
    depths = [check_int("depths[]", depth, minimum=1) for depth in check_sequence("depths", depths, what="depths")]
    if any(len(sweep[name]) != len(depths) for name in sweep):
        raise ValueError(f"sweep must hold one profile per depth ({len(depths)})")
    ax_depth, ax_layers = fig.subplots(1, 2)
    for name, color in (("plain", plotting.PLAIN_COLOR), ("residual", plotting.RESIDUAL_COLOR)):
        plotting._plot_log_safe(ax_depth, depths, [p.gain[0] for p in sweep[name]], color=color, label=name,
                                marker="o")
        deepest = sweep[name][int(np.argmax(depths))]
        plotting._plot_log_safe(ax_layers, np.arange(deepest.depth + 1), deepest.gain, color=color, label=name)
    for ax in (ax_depth, ax_layers):
        ax.axhline(1.0, color="grey", lw=1, ls="--")
        ax.legend()
    ax_depth.set(xscale="log", title="Plain explodes, residual grows slowly", xlabel="depth (blocks)",
                 ylabel="gradient gain at the input")
    ax_layers.set(title=f"{max(depths)} blocks: gain at every layer", xlabel="layer l (0 = input)",
                  ylabel="|dL/dx_l| / |dL/dx_out|")


# ----- notebook 07's widget -------------------------------------------------------------

SCALE_CHOICES = (("ReZero-style gate (learnable, 0 at init)", REZERO), ("0.1", 0.1), ("0.5", 0.5), ("1.0", 1.0),
                 ("2.0", 2.0), ("4.0", 4.0))


# Layers whose weights stay in memory once drawn (0.5 MB each): the weight draws were most of
# a depth step's time, and half of the static grid's (kept only while it is drawn, 470 MB).
WIDGET_CACHE_LAYERS = 128
STATIC_CACHE_LAYERS = 900
_WIDGET_WEIGHTS = _WeightStream(_WIDGET_D, _WIDGET_SEED, cache_layers=WIDGET_CACHE_LAYERS)
STATIC_DEPTHS = (10, 30, 100, 300, 1000)  # the static widget's depths (the site)
_drawing_static = False  # True while a static grid is drawn (_static_weights)


@contextmanager
def _static_weights():
    """While a static grid is drawn: the widget's weights of the first STATIC_CACHE_LAYERS layers
    kept, and each configuration's STATIC_DEPTHS measured together (_static_profiles)."""
    global _drawing_static
    _WIDGET_WEIGHTS.keep(STATIC_CACHE_LAYERS)
    _drawing_static = True
    try:
        yield
    finally:
        _drawing_static = False
        _WIDGET_WEIGHTS.keep(WIDGET_CACHE_LAYERS)


def _configuration(setting: dict) -> tuple:
    """The static widget's settings that one drawing process draws together: those of one stack."""
    return setting["residual"], setting["norm"], setting["scale"]


@lru_cache(maxsize=2)
def _static_profiles(residual: bool, norm: str, scale) -> list[LayerProfile]:
    """``_cached_profile`` at every one of STATIC_DEPTHS, in one pass through the deepest stack (the
    shallower ones are its first blocks): a quarter less work than one pass each, the same bits."""
    config = {"residual": residual, "norm": norm, "scale": scale}
    x, g = _checked_probe("depth", max(STATIC_DEPTHS), _WIDGET_D, _WIDGET_TOKENS, _WIDGET_SEED, norm, scale)
    return _streamed(config, _WIDGET_WEIGHTS, x, g, list(STATIC_DEPTHS))


@lru_cache(maxsize=64)
def _cached_profile(depth: int, residual: bool, norm: str, scale) -> LayerProfile:
    config = {"residual": residual, "norm": norm, "scale": scale}
    x, g = _checked_probe("depth", depth, _WIDGET_D, _WIDGET_TOKENS, _WIDGET_SEED, norm, scale)
    return _streamed(config, _WIDGET_WEIGHTS, x, g, [depth])[0]


def widget_profile(depth: int, residual: bool, norm: str, scale) -> LayerProfile:
    """The widget's measurement (width 128, 16 tokens, seed 0), cached per configuration
    (a plain stack's ignores norm and scale)."""
    depth = check_int("depth", depth, minimum=1)
    check_bool("residual", residual)
    norm = check_choice("norm", norm, NORM_POSITIONS)
    scale = check_scale(scale)
    if not residual:
        norm, scale = "pre", 1.0
    if _drawing_static and depth in STATIC_DEPTHS:
        return _static_profiles(residual, norm, scale)[STATIC_DEPTHS.index(depth)]
    return _cached_profile(depth, residual, norm, scale)


def _summary_text(profile: LayerProfile, residual: bool, norm: str, scale) -> str:
    """The widget's table of one profile, with a note where a number has a special meaning."""
    gain = profile.gain
    gate = "ReZero-style gate (alpha = 0 at init)" if scale == REZERO else f"scale {scale:g}"
    rows = [
        ("configuration", f"residual, {norm}-norm, {gate}" if residual
         else "plain (no skip path; norm position and scale do not apply)"),
        ("blocks", f"{profile.depth}"),
        ("grad norm at output", f"{profile.grad_norm[-1]:.4g}"),
        ("grad norm at input", f"{profile.grad_norm[0]:.4g}"),
        ("gain input/output", f"{gain[0]:.4g}"),
        ("smallest / largest gain", f"{np.nanmin(gain):.4g} / {np.nanmax(gain):.4g}"),
        ("activation std in / out", f"{profile.act_std[0]:.4g} / {profile.act_std[-1]:.4g}"),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value}" for name, value in rows]
    if residual and scale == REZERO and norm == "pre":
        lines.append("note: at init alpha = 0, every block is the identity, so the gradient reaches "
                     "every layer unchanged (gain exactly 1).")
    elif residual and scale == REZERO:
        lines.append("note: at init alpha = 0, every post-norm block is just LayerNorm: y = LN(x). "
                     "The first one normalises; the rest barely change anything.")
    if not (np.isfinite(profile.grad_norm).all() and np.isfinite(profile.act_std).all()):
        lines.append("warning: some values overflowed float32 (inf/NaN); the plot marks them.")
    return "\n".join(lines)


def draw_gradient_flow(fig, depth: int = 30, residual: bool = True, norm: str = "pre", scale=1.0) -> str:
    """Notebook 07's widget: the gradient gain at every layer of one configuration (log axis,
    under/overflow marked); returns the summary table."""
    check_figure("fig", fig)
    profile = widget_profile(depth, residual, norm, scale)
    scale = check_scale(scale)
    color = plotting.RESIDUAL_COLOR if residual else plotting.PLAIN_COLOR
    # Fixed margins, few ticks with plain labels and a fixed title position: constrained
    # layout, mathtext log labels and automatic title placement would make each redraw slower.
    ax = fig.subplots()
    plotting._use_fixed_margins(fig, left=0.13, right=0.97, bottom=0.14, top=0.9)
    under, over = plotting._plot_log_safe(ax, np.arange(profile.depth + 1), profile.gain, color=color,
                                          label="gradient gain")
    ax.axhline(1.0, color="grey", lw=1, ls="--")
    gain0 = profile.gain[0]
    ax.set_title(f"Gradient at the input: x{gain0:.3g} the output's" if np.isfinite(gain0)
                 else "The gradient overflowed on its way back", y=1.0)
    ax.set(xlabel="layer (0 = input)", ylabel="|grad at layer| / |grad at output|")
    ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=5, integer=True))  # fewer ticks, faster redraws
    low, high = (float(f(plotting._log_safe(profile.gain)[0])) for f in (np.nanmin, np.nanmax))
    if high / low < 2:  # at least a factor of 2 in view: a flat line sits among labelled ticks
        ax.set_ylim(math.sqrt(low * high) / 1.5, math.sqrt(low * high) * 1.5)
    plotting._log_ticks(ax)
    if under or over:  # only then is there something for a legend to explain
        ax.legend(loc="best", fontsize=8)
    return _summary_text(profile, residual, norm, scale)


def gradient_flow_plot(depth: int = 30, residual: bool = True, norm: str = "pre", scale=1.0):
    """Notebook 07's live plot: depth (10-1000), residual on/off, norm position and scale (greyed
    out for a plain stack). The defaults are checked: a slider would silently clip a depth."""
    import ipywidgets as widgets

    from .widgets import LivePlot

    check_int("depth", depth, minimum=10, maximum=1000)
    check_bool("residual", residual)
    check_choice("norm", norm, NORM_POSITIONS)
    scale = check_choice("scale", check_scale(scale), [value for _, value in SCALE_CHOICES])

    controls = {
        "depth": widgets.IntSlider(value=depth, min=10, max=1000, step=10, description="depth",
                                   continuous_update=False),
        "residual": widgets.Checkbox(value=residual, description="residual (skip path)"),
        "norm": widgets.ToggleButtons(options=[("pre-norm", "pre"), ("post-norm", "post")], value=norm,
                                      description="norm"),
        "scale": widgets.Dropdown(options=list(SCALE_CHOICES), value=scale, description="scale"),
    }
    plain = lambda values: not values["residual"]
    return LivePlot(draw_gradient_flow, controls, width=7, height=3.6, greyed={"norm": plain, "scale": plain},
                    grid={"depth": list(STATIC_DEPTHS)}, static_setup=_static_weights, static_group=_configuration)
