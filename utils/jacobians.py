"""The chain rule for vectors: a stack's Jacobian is the product of its layers', and a
residual block's is I + J_F (the skip path adds the identity). Jacobians of the NumPy
block, checked by finite differences, and the singular values of long products of
Jacobians, computed in log space so that depth 1000 neither underflows nor overflows."""
from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from .numpy_block import forward
from .plotting import (PALETTE, PLAIN_COLOR, RESIDUAL_COLOR, _legend_below, _log_ticks,
                       _plot_log_safe, _use_fixed_margins)
from .slopes import MAX_DEPTH, _plotted_depths, _text_table
from .validation import (check_array, check_axes, check_callable, check_cost, check_figure, check_float, check_int,
                         check_sequence, invalid)

__all__ = ["FIGURE_SIZE", "branch_jacobian", "block_jacobian", "finite_difference_jacobian", "draw_unit_circle_image",
           "random_layer_matrices", "product_singular_values", "draw_jacobian_products", "singular_values_plot",
           "drift_table"]

FIGURE_SIZE = {"width": 10.0, "height": 5.0}  # notebook 03's widget pictures: two panels, legend below


def branch_jacobian(x, w1, w2) -> np.ndarray:
    """J_F(x) = W2 diag(ReLU'(W1 x)) W1, the Jacobian of the branch F(x) = W2 ReLU(W1 x)
    (ReLU' is 1 where W1 x > 0 and 0 elsewhere, also at the kink 0)."""
    x = check_array("x", x, ndim=1)
    w1 = check_array("w1", w1, ndim=2, shape=(None, x.shape[0]))
    w2 = check_array("w2", w2, ndim=2, shape=(None, w1.shape[0]))
    active = (w1 @ x > 0).astype(np.float64)
    return w2 @ (active[:, None] * w1)


def block_jacobian(x, w1, w2) -> np.ndarray:
    """The Jacobian of the residual block y = x + F(x): I + J_F(x). The identity is
    the skip path's contribution."""
    forward(x, w1, w2)  # raises the size-mismatch error if F changes the size
    jf = branch_jacobian(x, w1, w2)
    return np.eye(jf.shape[0]) + jf


def finite_difference_jacobian(f, x, *, eps=1e-6) -> np.ndarray:
    """The Jacobian of ``f`` at ``x`` by central differences, column j = (f(x + eps e_j) -
    f(x - eps e_j)) / (2 eps): the independent check of an analytic Jacobian."""
    check_callable("f", f, what="a function from a vector to a vector")
    x = check_array("x", x, ndim=1)
    eps = check_float("eps", eps, minimum=1e-12, maximum=1.0)
    value = lambda x: check_array("f(x)", f(x), ndim=1)
    return np.stack([(value(x + step) - value(x - step)) / (2 * eps) for step in eps * np.eye(len(x))], axis=1)


def draw_unit_circle_image(ax, matrix, *, points=200) -> np.ndarray:
    """Draw the unit circle and its image under the 2 x 2 ``matrix``, an ellipse whose semi-axes
    (arrows) are the singular values: how much the matrix stretches its most and least
    stretched directions. Returns the singular values, largest first."""
    check_axes("ax", ax)
    matrix = check_array("matrix", matrix, shape=(2, 2))
    points = check_int("points", points, minimum=8, maximum=10_000)
    u, singular, _ = np.linalg.svd(matrix)
    angles = np.linspace(0.0, 2 * np.pi, points)
    circle = np.stack([np.cos(angles), np.sin(angles)])
    image = matrix @ circle
    ax.plot(*circle, color="grey", ls="--", lw=1.5, label="unit circle: every direction, length 1")
    ax.plot(*image, color=RESIDUAL_COLOR, lw=2.5, label="its image under the matrix: an ellipse")
    for k, (color, name) in enumerate(((PALETTE[6], "largest"), (PALETTE[2], "smallest"))):
        direction = u[:, k] if u[0, k] + 1e-12 * u[1, k] >= 0 else -u[:, k]  # point rightwards: easier to read
        tip = singular[k] * direction
        ax.annotate("", xy=tip, xytext=(0, 0), arrowprops=dict(arrowstyle="-|>", color=color, lw=2,
                                                                 mutation_scale=14, shrinkA=0, shrinkB=0))
        ax.plot([], [], color=color, lw=2, label=f"{name} singular value σ{k + 1} = {singular[k]:.2f}")
    reach = 1.15 * max(1.0, float(singular[0]))
    ax.set(xlim=(-reach, reach), ylim=(-reach, reach), aspect="equal", xlabel="first entry", ylabel="second entry")
    ax.axhline(0, color="grey", lw=0.8)
    ax.axvline(0, color="grey", lw=0.8)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, fontsize=11, frameon=False)
    return singular


def random_layer_matrices(depth, dim, *, seed=0) -> np.ndarray:
    """``depth`` random d x d matrices W with entries from N(0, 1/d): the Jacobians of
    plain layers initialised to keep lengths on average (E|Wv|^2 = |v|^2)."""
    depth = check_int("depth", depth, minimum=1, maximum=MAX_DEPTH)
    dim = check_int("dim", dim, minimum=1, maximum=512)
    seed = check_int("seed", seed, minimum=0)
    check_cost({"depth": depth, "dim": dim}, lambda depth, dim: (8.0 * depth * dim * dim, 1.0 * depth * dim * dim),
               what="the matrices")
    return np.random.default_rng(seed).normal(0.0, 1.0 / np.sqrt(dim), size=(depth, dim, dim))


def _layer_jacobians(matrices, *, scale, residual) -> np.ndarray:
    """The layers' Jacobians from ``matrices`` W: s W for plain layers, I + s W for residual blocks."""
    return scale * matrices + np.eye(matrices.shape[1]) if residual else scale * matrices


def _log_top_singular(factors: np.ndarray, multiply, depth: int, pick: np.ndarray) -> np.ndarray:
    """log10 of the largest singular value of the running products of ``factors``
    (``multiply(product, factor)``) at positions ``pick``, each divided by its norm at every
    step and the log10 of that kept; -inf after a zero product and beyond the factors given."""
    stack, logs = np.zeros((depth, *factors.shape[1:])), np.full(depth, -np.inf)
    product, log = np.eye(factors.shape[1]), 0.0
    for k, factor in enumerate(factors):
        product = multiply(product, factor)
        size = np.linalg.norm(product)
        if size == 0:  # a zero layer: the product is 0 from here on
            break
        product, log = product / size, log + np.log10(size)
        stack[k], logs[k] = product, log
    with np.errstate(divide="ignore"):
        return logs[pick] + np.log10(np.linalg.svd(stack[pick], compute_uv=False)[:, 0])


def product_singular_values(jacobians, depths=None):
    """``(log10_largest, log10_smallest)`` singular values of the products P_k = J_k ... J_1 at
    each depth k in ``depths`` (default all), exact far outside float64's range (-inf: 0).
    np.linalg.svd(P_k) would round away every singular value below 1e-16 times the largest
    and overflow long before depth 1000, so the products are renormalised at every step,
    and the smallest is 1 / the largest of P_k^-1 = J_1^-1 ... J_k^-1."""
    jacobians = check_array("jacobians", jacobians, ndim=3)
    depth, rows, cols = jacobians.shape
    if rows != cols:
        raise invalid("jacobians", "square, of shape (depth, d, d)", jacobians)
    depths = np.arange(1, depth + 1) if depths is None else np.asarray(
        [check_int("depths", k, minimum=1, maximum=depth) for k in check_sequence("depths", depths, what="depths")],
        dtype=int)
    try:
        inverses, invertible = np.linalg.inv(jacobians), depth
    except np.linalg.LinAlgError:  # some layer is singular (e.g. a plain layer with scale 0)
        layer_smallest = np.linalg.svd(jacobians, compute_uv=False)[:, -1]
        invertible = int(np.flatnonzero(layer_smallest == 0.0)[0])  # layers before the first singular one
        inverses = np.linalg.inv(jacobians[:invertible])
    pick = depths - 1
    log_largest = _log_top_singular(jacobians, lambda p, j: j @ p, depth, pick)
    log_smallest = -_log_top_singular(inverses, lambda p, j: p @ j, depth, pick)
    log_smallest[pick >= invertible] = -np.inf  # a singular layer makes the product singular
    return log_largest, log_smallest


def _format_log10(log10_value) -> str:
    """10**``log10_value`` with two significant digits, also far outside float64's range (3.2e-412)."""
    if log10_value == -np.inf:
        return "0"
    if -4 <= log10_value < 4:
        return f"{10 ** log10_value:.2g}"
    exponent = int(np.floor(log10_value))
    mantissa = round(10 ** (log10_value - exponent), 1)
    if mantissa >= 10:
        mantissa, exponent = 1.0, exponent + 1
    return f"{mantissa:.2g}e{exponent:+03d}"


def _power_of_ten(log10_values) -> np.ndarray:
    """10**values as float64: what a plot can draw (0 or inf where out of range)."""
    values = np.asarray(log10_values, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        return np.power(10.0, np.where(np.isneginf(values), -1e9, values))


def draw_jacobian_products(fig, depth=50, scale=0.1, *, dim=16, seed=0) -> str:
    """Notebook 03's widget: the largest and smallest singular value of the product of the
    layers' Jacobians against depth (log axis, values beyond float64 marked), plain layers
    s W against residual blocks I + s W with s = ``scale``. Returns a one-line summary."""
    check_figure("fig", fig)
    depth = check_int("depth", depth, minimum=1, maximum=MAX_DEPTH)
    scale = check_float("scale", scale)
    matrices = random_layer_matrices(depth, dim, seed=seed)
    layers = _plotted_depths(depth)
    both, zoom = fig.subplots(1, 2, gridspec_kw={"width_ratios": (3, 2), "wspace": 0.25})  # residual zoomed in right
    _use_fixed_margins(fig, left=0.1, right=0.98, bottom=0.13, top=0.86)
    summary = []
    marker = "o" if depth == 1 else None  # a single depth: a dot, not an invisible line
    for residual, color, name in ((False, PLAIN_COLOR, "plain s·W"), (True, RESIDUAL_COLOR, "residual I + s·W")):
        largest, smallest = product_singular_values(_layer_jacobians(matrices, scale=scale, residual=residual),
                                                    depths=layers)
        for ax in (both, zoom) if residual else (both,):
            _plot_log_safe(ax, layers, _power_of_ten(largest), color=color, label=f"{name}: largest", marker=marker)
            _plot_log_safe(ax, layers, _power_of_ten(smallest), color=color, label=f"{name}: smallest", ls="--",
                           marker=marker)
        summary.append(f"{name.split()[0]} {_format_log10(smallest[-1])} to {_format_log10(largest[-1])}")
    for ax, title, ticks in ((both, "plain and residual", 6), (zoom, "residual only, zoomed in", 4)):
        ax.axhline(1.0, color="grey", lw=1, ls=":")
        _log_ticks(ax)
        ax.set_xlabel("depth (number of layers)")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=ticks, integer=True))  # few labels: a faster redraw
        ax.set_title(title, fontsize=11, y=1.01)  # a set height: no measuring of the ticks
        if depth == 1:
            ax.set(xlim=(0.5, 1.5), xticks=[1])
    both.set_ylabel("singular value of the product (log)")
    fig.suptitle(f"After {depth} layers (s = {scale:g}), singular values: " + "; ".join(summary), fontsize=11)
    _legend_below(fig)
    return (f"depth {depth}, branch scale s = {scale:g}, d = {dim}: singular values of the product range "
            + "; ".join(summary) + ".")


def singular_values_plot(depth: int = 50, scale: float = 0.1):
    """Notebook 03's live plot of ``draw_jacobian_products``: sliders for depth (1 to 1000 layers)
    and the branch scale s (0 to 2)."""
    depth = check_int("depth", depth, minimum=1, maximum=1000)
    scale = check_float("scale", scale, minimum=0.0, maximum=2.0)
    from .widgets import LivePlot, slider

    controls = {"depth": slider("depth (layers)", depth, 1, 1000),
                "scale": slider("branch scale s", scale, 0.0, 2.0)}
    grid = {"depth": [1, 3, 10, 30, 50, 100, 300, 1000], "scale": [0.0, 0.01, 0.1, 0.3, 1.0, 2.0]}
    return LivePlot(draw_jacobian_products, controls, grid=grid, **FIGURE_SIZE)


def drift_table(depths=(10, 50, 200, 1000), scales=(0.01, 0.1, 1.0), *, dim=16, seed=0) -> str:
    """How far the singular values of a product of residual Jacobians I + s W drift from 1: smallest
    to largest per depth L (rows) and branch scale s (columns; then s = 1/sqrt(L), plain W)."""
    depths = [check_int("depths", d, minimum=1, maximum=MAX_DEPTH)
              for d in check_sequence("depths", depths, what="whole numbers")]
    scales = [check_float("scales", s, minimum=0.0) for s in check_sequence("scales", scales, what="numbers")]
    dim = check_int("dim", dim, minimum=1, maximum=512)
    check_cost({"depths": sum(depths), "dim": dim},
               lambda depths, dim: (16.0 * depths * dim * dim,
                                    (len(scales) + 2) * 30.0 * depths * dim ** 3),
               what="the products of every depth's Jacobians")
    header = ["layers", *(f"residual, s = {s:g}" for s in scales), "residual, s = 1/sqrt(L)", "plain, s = 1"]

    def cell(depth, scale, residual) -> str:
        matrices = random_layer_matrices(depth, dim, seed=seed)
        jacobians = _layer_jacobians(matrices, scale=scale, residual=residual)
        largest, smallest = product_singular_values(jacobians, [depth])
        return f"{_format_log10(smallest[0])} to {_format_log10(largest[0])}"

    rows = [[str(depth), *(cell(depth, s, True) for s in (*scales, 1 / np.sqrt(depth))),
             cell(depth, 1.0, False)] for depth in depths]
    return _text_table(header, rows)
