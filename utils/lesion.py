"""Lesion studies (Veit, Wilber and Belongie 2016): delete parts of a trained network at test
time and see how much accuracy survives. A deleted residual block leaves its skip path; a deleted
plain layer leaves its successor inputs it never saw. A lesioned network shares its other layers
with the original (fast for hundreds of deletions): evaluate it only: training changes both."""
from __future__ import annotations

import copy
import math

import numpy as np
from torch import nn

from .mlp import MLP
from .training import evaluate
from .validation import check_choice, check_cost, check_int, check_module, check_tensor

__all__ = ["path_length_counts", "single_lesion_accuracies", "random_lesion_accuracies"]

_AN_MLP = "a utils.mlp.MLP (from make_mlp)"


def path_length_counts(n_blocks: int) -> np.ndarray:
    """Exact number of paths of each length 0..n through ``n_blocks`` residual blocks: C(n, k) of
    the 2**n paths pass through k branches (Veit et al. 2016), most about n/2 blocks long."""
    n_blocks = check_int("n_blocks", n_blocks, minimum=0, maximum=1000)
    return np.array([math.comb(n_blocks, k) for k in range(n_blocks + 1)], dtype=object)


def _share(module: nn.Module, part: str) -> nn.Module:
    """A shallow copy of ``module`` with its own list ``part``, to change without the original."""
    clone = copy.copy(module)
    clone._modules = dict(module._modules)
    setattr(clone, part, nn.ModuleList(getattr(module, part)))
    return clone


def _delete_blocks(model, blocks) -> MLP:
    """``model`` with the blocks at indices ``blocks`` replaced by the identity: a residual
    block keeps its skip path (its input, non-negative after a ReLU, passes on unchanged)."""
    lesioned = _share(model, "blocks")
    for i in blocks:
        lesioned.blocks[i] = nn.Identity()
    return lesioned


def _delete_layers(model, layers) -> MLP:
    """A plain ``model`` with the hidden layers at indices ``layers`` (counted over all blocks)
    replaced by the identity, possible since every hidden layer maps width to width."""
    per_block = len(model.blocks[0].layers) if len(model.blocks) else 1
    lesioned = _share(model, "blocks")
    for i in layers:
        block = lesioned.blocks[i // per_block]
        if block is model.blocks[i // per_block]:  # first deletion in this block: give it its own layer list
            block = lesioned.blocks[i // per_block] = _share(block, "layers")
        block.layers[i % per_block] = nn.Identity()
    return lesioned


def single_lesion_accuracies(model, x, y, *, unit: str = "block") -> np.ndarray:
    """Test accuracy after deleting each single block (``unit="block"``) or, for a plain
    net, each single hidden layer (``unit="layer"``): one number per deletion."""
    model = check_module("model", model, MLP, what=_AN_MLP)
    check_choice("unit", unit, ("block", "layer"))
    if unit == "layer" and model.architecture != "plain":
        raise ValueError("unit='layer' needs a plain model; use unit='block' for a residual one")
    count, delete = ((len(model.blocks), _delete_blocks) if unit == "block"
                     else (sum(len(b.layers) for b in model.blocks), _delete_layers))
    return np.array([evaluate(delete(model, [i]), x, y)[1] for i in range(count)])


def random_lesion_accuracies(model, x, y, k: int, *, draws: int = 10, seed: int = 0) -> np.ndarray:
    """Test accuracy after deleting ``k`` blocks chosen at random (without repetition),
    for ``draws`` independent random choices drawn with ``seed``."""
    model = check_module("model", model, MLP, what=_AN_MLP)
    k = check_int("k", k, minimum=0, maximum=len(model.blocks))
    draws = check_int("draws", draws, minimum=1)
    weights = sum(p.numel() for p in model.parameters())
    examples = len(check_tensor("x", x, ndim=2, shape_text="(n, features)"))
    check_cost({"draws": draws}, lambda draws: (0.0, 2.0 * draws * weights * examples),
               what=f"evaluating the {weights}-weight model on {examples} examples once per draw")
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    chosen = [rng.choice(len(model.blocks), size=k, replace=False).tolist() for _ in range(draws)]
    return np.array([evaluate(_delete_blocks(model, c), x, y)[1] for c in chosen])
