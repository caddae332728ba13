"""The chain rule for vectors: each layer's slope is a Jacobian matrix and a stack's is the
product of the layers' Jacobians. A residual block's Jacobian is I + J_F: the skip path
adds the identity. This module computes Jacobians of the NumPy block, checks them with
finite differences, and follows the singular values of long products of Jacobians
(computed in log space, so depth 1000 neither loses the smallest one to rounding nor
overflows silently)."""
from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from .numpy_block import forward
from .plotting import (PALETTE, PLAIN_COLOR, RESIDUAL_COLOR, legend_below, log_ticks, plot_log_safe,
                       use_fixed_margins)
from .slopes import MAX_DEPTH, plotted_depths, text_table

FIGURE_SIZE = {"width": 10.0, "height": 5.0}  # notebook 03's widget pictures: two panels, legend below
from .validation import (check_array, check_axes, check_callable, check_cost, check_figure, check_float, check_int,
                        check_sequence, invalid)

__all__ = ["FIGURE_SIZE", "branch_jacobian", "block_jacobian", "finite_difference_jacobian", "draw_unit_circle_image",
           "random_layer_matrices", "product_singular_values", "draw_jacobian_products", "singular_values_plot",
           "drift_table"]


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
    """Estimate the Jacobian of ``f`` at ``x`` by central differences,
    column j = (f(x + eps e_j) - f(x - eps e_j)) / (2 eps): the independent check that
    an analytic Jacobian is right before we trust it."""
    check_callable("f", f, what="a function from a vector to a vector")
    x = check_array("x", x, ndim=1)
    eps = check_float("eps", eps, minimum=1e-12, maximum=1.0)
    columns = []
    for j in range(x.shape[0]):
        step = np.zeros_like(x)
        step[j] = eps
        plus = check_array("f(x)", f(x + step), ndim=1)
        minus = check_array("f(x)", f(x - step), ndim=1)
        columns.append((plus - minus) / (2 * eps))
    return np.stack(columns, axis=1)


def draw_unit_circle_image(ax, matrix, *, points=200) -> np.ndarray:
    """Draw the unit circle (every direction, length 1) and its image under the 2 x 2
    ``matrix``, an ellipse, with the ellipse's semi-axes as arrows: their lengths are the
    singular values, how much the matrix stretches its most stretched direction and
    shrinks its least stretched one. Returns the singular values, largest first."""
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
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.axhline(0, color="grey", lw=0.8)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel("first entry")
    ax.set_ylabel("second entry")
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
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 1.0 / np.sqrt(dim), size=(depth, dim, dim))


def _layer_jacobians(matrices, *, scale, residual) -> np.ndarray:
    """The layers' Jacobians built from ``matrices`` W (shape (depth, d, d)): s W for
    plain layers, I + s W for residual blocks, with s = ``scale`` the branch scale."""
    jacobians = scale * matrices
    if residual:
        jacobians = jacobians + np.eye(matrices.shape[1])
    return jacobians


def _log_top_singular(stack: np.ndarray, log_scales: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return log_scales + np.log10(np.linalg.svd(stack, compute_uv=False)[:, 0])


def product_singular_values(jacobians, depths=None):
    """Largest and smallest singular value of the products P_k = J_k ... J_2 J_1 at
    each depth k in ``depths`` (default 1..len(jacobians)), as base-10 logarithms
    ``(log10_largest, log10_smallest)``, so values far outside float64's range (1e-308
    to 1e308) are still exact; -inf means exactly 0.

    Why not just np.linalg.svd(P_k)? Rounding hides every singular value below about
    1e-16 times the largest, and P_k overflows long before depth 1000. So the products
    are renormalised at every step (their log size kept aside), the largest singular
    value comes from P_k and the smallest as 1 / largest of P_k^-1 = J_1^-1 ... J_k^-1.
    """
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
    forward_stack = np.empty((depth, rows, rows))
    inverse_stack = np.ones((depth, rows, rows))
    forward_log = np.zeros(depth)
    inverse_log = np.zeros(depth)
    product, inverse = np.eye(rows), np.eye(rows)
    log_p, log_q = 0.0, 0.0
    for k in range(depth):
        product = jacobians[k] @ product
        size = np.linalg.norm(product)
        if size == 0:  # a zero layer: the product is 0 from here on
            forward_stack[k:], forward_log[k:] = 0.0, -np.inf
            break
        product, log_p = product / size, log_p + np.log10(size)
        forward_stack[k], forward_log[k] = product, log_p
        if k < invertible:
            inverse = inverse @ inverses[k]
            size = np.linalg.norm(inverse)
            inverse, log_q = inverse / size, log_q + np.log10(size)
            inverse_stack[k], inverse_log[k] = inverse, log_q
    pick = depths - 1
    log_largest = _log_top_singular(forward_stack[pick], forward_log[pick])
    log_smallest = -_log_top_singular(inverse_stack[pick], inverse_log[pick])
    log_smallest[pick >= invertible] = -np.inf  # a singular layer makes the product singular
    return log_largest, log_smallest


def _format_log10(log10_value) -> str:
    """Print 10**``log10_value`` with two significant digits, even when it is far
    outside float64's range (e.g. 3.2e-412), and exactly 0 as 0."""
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
    """Draw the largest and smallest singular value of the product of ``depth`` layer
    Jacobians against depth on a log axis: plain layers s W (vermillion) against
    residual blocks I + s W (blue), with s = ``scale`` and the same random W for both.
    Values beyond float64's range are clipped and marked. Returns a one-line summary.
    This is the function behind notebook 03's widget."""
    check_figure("fig", fig)
    depth = check_int("depth", depth, minimum=1, maximum=MAX_DEPTH)
    scale = check_float("scale", scale)
    matrices = random_layer_matrices(depth, dim, seed=seed)
    layers = plotted_depths(depth)
    both, zoom = fig.subplots(1, 2, gridspec_kw={"width_ratios": (3, 2), "wspace": 0.25})  # residual zoomed in right
    use_fixed_margins(fig, left=0.1, right=0.98, bottom=0.13, top=0.86)
    summary = []
    marker = "o" if depth == 1 else None  # a single depth: a dot, not an invisible line
    for residual, color, name in ((False, PLAIN_COLOR, "plain s·W"), (True, RESIDUAL_COLOR, "residual I + s·W")):
        largest, smallest = product_singular_values(_layer_jacobians(matrices, scale=scale, residual=residual),
                                                    depths=layers)
        for ax in (both, zoom) if residual else (both,):
            plot_log_safe(ax, layers, _power_of_ten(largest), color=color, label=f"{name}: largest", marker=marker)
            plot_log_safe(ax, layers, _power_of_ten(smallest), color=color, label=f"{name}: smallest", ls="--",
                          marker=marker)
        summary.append(f"{name.split()[0]} {_format_log10(smallest[-1])} to {_format_log10(largest[-1])}")
    for ax, title, ticks in ((both, "plain and residual", 6), (zoom, "residual only, zoomed in", 4)):
        ax.axhline(1.0, color="grey", lw=1, ls=":")
        log_ticks(ax)
        ax.set_xlabel("depth (number of layers)")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=ticks, integer=True))  # few labels: a faster redraw
        ax.set_title(title, fontsize=11, y=1.01)  # a set height: no measuring of the ticks
        if depth == 1:
            ax.set_xlim(0.5, 1.5)
            ax.set_xticks([1])
    both.set_ylabel("singular value of the product (log)")
    fig.suptitle(f"After {depth} layers (s = {scale:g}), singular values: " + "; ".join(summary), fontsize=11)
    legend_below(fig, ncols=2, fontsize=11)  # projection-ready: figure text of at least 11 pt
    return (f"depth {depth}, branch scale s = {scale:g}, d = {dim}: singular values of the product range "
            + "; ".join(summary) + ".")


def singular_values_plot(depth: int = 50, scale: float = 0.1):
    """Notebook 03's live plot: sliders for depth (1 to 1000 layers) and the branch scale s
    (0 to 2), redrawing ``draw_jacobian_products``; its static widget offers depths 1 to
    1000 log-spaced and scales 0 to 2."""
    depth = check_int("depth", depth, minimum=1, maximum=1000)
    scale = check_float("scale", scale, minimum=0.0, maximum=2.0)
    from .widgets import LivePlot, slider

    controls = {"depth": slider("depth (layers)", depth, 1, 1000),
                "scale": slider("branch scale s", scale, 0.0, 2.0)}
    grid = {"depth": [1, 3, 10, 30, 50, 100, 300, 1000], "scale": [0.0, 0.01, 0.1, 0.3, 1.0, 2.0]}
    return LivePlot(draw_jacobian_products, controls, grid=grid, **FIGURE_SIZE)


def drift_table(depths=(10, 50, 200, 1000), scales=(0.01, 0.1, 1.0), *, dim=16, seed=0) -> str:
    """A table of how far the singular values of a product of residual Jacobians
    I + s W drift from 1: for each depth L (rows) and branch scale s (columns), the
    range smallest to largest, plus the rule s = 1/sqrt(L), and plain layers W (s = 1)
    for comparison."""
    depths = [check_int("depths", d, minimum=1, maximum=MAX_DEPTH)
              for d in check_sequence("depths", depths, what="whole numbers")]
    scales = [check_float("scales", s, minimum=0.0) for s in check_sequence("scales", scales, what="numbers")]
    dim = check_int("dim", dim, minimum=1, maximum=512)
    check_cost({"depths": sum(depths), "dim": dim},
               lambda depths, dim: (16.0 * depths * dim * dim,
                                    (len(scales) + 2) * 30.0 * depths * dim ** 3),
               what="the products of every depth's Jacobians")
    header = ["layers", *(f"residual, s = {s:g}" for s in scales), "residual, s = 1/sqrt(L)", "plain, s = 1"]
    rows = []
    for depth in depths:
        matrices = random_layer_matrices(depth, dim, seed=seed)
        cells = [str(depth)]
        for scale, residual in [*((s, True) for s in scales), (1 / np.sqrt(depth), True), (1.0, False)]:
            largest, smallest = product_singular_values(
                _layer_jacobians(matrices, scale=scale, residual=residual), depths=[depth])
            cells.append(f"{_format_log10(smallest[0])} to {_format_log10(largest[0])}")
        rows.append(cells)
    return text_table(header, rows)
