import numpy as np
import pytest
import torch
from torch import nn

from utils.lesion import path_length_counts, _delete_blocks, _delete_layers, random_lesion_accuracies, single_lesion_accuracies
from utils.mlp import make_mlp
from utils.training import evaluate


def batch(n=16, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, 64, generator=generator), torch.randint(0, 10, (n,), generator=generator)


def test_deleting_no_block_leaves_the_output_unchanged():
    for architecture in ("plain", "residual"):
        model = make_mlp(architecture, 20, seed=0).eval()
        x, _ = batch()
        assert torch.equal(_delete_blocks(model, [])(x), model(x))
        if architecture == "plain":
            assert torch.equal(_delete_layers(model, [])(x), model(x))


def test_deleting_a_block_removes_exactly_that_block_and_leaves_the_original():
    model = make_mlp("residual", 20, seed=0).eval()
    lesioned = _delete_blocks(model, [2, 5])
    assert isinstance(lesioned.blocks[2], nn.Identity) and isinstance(lesioned.blocks[5], nn.Identity)
    assert sum(isinstance(b, nn.Identity) for b in lesioned.blocks) == 2
    assert not any(isinstance(b, nn.Identity) for b in model.blocks)
    # Deleting block 2 means block 3 receives block 1's output directly.
    x, _ = batch()
    with torch.no_grad():
        h = model.stem(x)
        for i, block in enumerate(model.blocks):
            if i not in (2, 5):
                h = block(h)
        assert torch.allclose(lesioned(x), model.head(h))


def test_deleting_a_plain_layer_counts_over_blocks():
    model = make_mlp("plain", 8, seed=0)
    lesioned = _delete_layers(model, [3, 2, 0])  # block 1 (both layers), block 0 (its first)
    assert isinstance(lesioned.blocks[1].layers[1], nn.Identity)
    assert isinstance(lesioned.blocks[1].layers[0], nn.Identity)
    assert isinstance(lesioned.blocks[0].layers[0], nn.Identity)
    assert sum(isinstance(m, nn.Linear) for m in lesioned.modules()) == 5
    assert sum(isinstance(m, nn.Linear) for m in model.modules()) == 8  # the original is untouched
    assert lesioned.blocks[2] is model.blocks[2]  # untouched layers are shared, not copied


def test_single_and_random_lesions_report_one_accuracy_per_deletion():
    model = make_mlp("residual", 8, seed=0)
    x, y = batch(40)
    single = single_lesion_accuracies(model, x, y)
    assert single.shape == (3,) and np.all((0 <= single) & (single <= 1))
    assert single[1] == evaluate(_delete_blocks(model, [1]), x, y)[1]
    layers = single_lesion_accuracies(make_mlp("plain", 8, seed=0), x, y, unit="layer")
    assert layers.shape == (6,)
    random = random_lesion_accuracies(model, x, y, 0, draws=3)
    assert np.all(random == evaluate(model, x, y)[1])  # deleting nothing changes nothing
    assert np.array_equal(random_lesion_accuracies(model, x, y, 2, draws=4, seed=1),
                          random_lesion_accuracies(model, x, y, 2, draws=4, seed=1))


def test_bad_input_names_the_parameter():
    model = make_mlp("residual", 8, seed=0)
    with pytest.raises(TypeError, match="model"):
        single_lesion_accuracies(nn.Linear(2, 2), *batch())
    x, y = batch()
    with pytest.raises(ValueError, match="unit"):
        single_lesion_accuracies(model, x, y, unit="neuron")
    with pytest.raises(ValueError, match="k"):
        random_lesion_accuracies(model, x, y, 4)


def test_path_lengths_are_binomial():
    assert path_length_counts(3).tolist() == [1, 3, 3, 1]
    assert path_length_counts(0).tolist() == [1]
    counts = path_length_counts(27)
    assert sum(counts) == 2**27 and counts.tolist() == counts[::-1].tolist()
    assert int(np.argmax(counts)) in (13, 14)
    assert sum(path_length_counts(200)) == 2**200  # exact, no float overflow
    with pytest.raises(ValueError, match="n_blocks"):
        path_length_counts(-1)
