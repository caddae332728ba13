import math

import pytest
import torch
from torch import nn

from utils.data import load_digits_split
from utils.progress import progress_bar
from utils.training import evaluate, output_change, train, warmup_lr, weight_gradient_norms


def small_model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))


@pytest.fixture(scope="module")
def data():
    return load_digits_split()


def test_short_training_run_lowers_the_loss(data):
    model = small_model()
    before, _ = evaluate(model, data.x_train, data.y_train)
    losses = train(model, data.x_train, data.y_train, steps=60, lr=0.05)
    after, accuracy = evaluate(model, data.x_train, data.y_train)
    assert len(losses) == 60 and all(math.isfinite(v) for v in losses)
    assert before > 2.0 and after < 0.5 * before
    assert sum(losses[-10:]) < 0.5 * sum(losses[:10])
    assert accuracy > 0.85


def test_training_is_reproducible_with_a_seed(data):
    runs = [train(small_model(), data.x_train, data.y_train, steps=15, seed=3) for _ in range(2)]
    assert runs[0] == runs[1]
    other = train(small_model(), data.x_train, data.y_train, steps=15, seed=4)
    assert other != runs[0]


def test_training_does_not_touch_the_global_seed(data):
    model = small_model()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    train(model, data.x_train, data.y_train, steps=2)
    assert torch.equal(torch.rand(3), expected)


def test_divergence_stops_early_and_records_the_non_finite_loss(data):
    model = small_model()
    with progress_bar(50, "test") as bar:
        losses = train(model, data.x_train, data.y_train, steps=50, lr=1e6, momentum=0.9, progress=bar)
    assert len(losses) < 50 and not math.isfinite(losses[-1])
    assert all(math.isfinite(v) for v in losses[:-1])
    assert bar.n == 50


def test_progress_advances_once_per_step(data):
    with progress_bar(7, "test") as bar:
        train(small_model(), data.x_train, data.y_train, steps=7, progress=bar)
    assert bar.n == 7


def test_evaluate_counts_accuracy_and_restores_mode():
    model = nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        model.weight.copy_(torch.eye(2))
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    y = torch.tensor([0, 1, 1, 1])
    loss, accuracy = evaluate(model, x, y)
    assert accuracy == pytest.approx(0.75)
    expected = (3 * math.log(1 + math.exp(-1)) + math.log(1 + math.exp(1))) / 4
    assert loss == pytest.approx(expected, rel=1e-6)
    assert model.training


def test_batchnorm_model_is_evaluated_with_running_statistics(data):
    model = nn.Sequential(nn.Linear(64, 10), nn.BatchNorm1d(10))
    one = evaluate(model, data.x_test[:1], data.y_test[:1])  # batch of 1 only works in eval mode
    assert math.isfinite(one[0])


def test_bad_input_names_the_parameter(data):
    model = small_model()
    with pytest.raises(TypeError, match="model"):
        train("not a model", data.x_train, data.y_train)
    with pytest.raises(ValueError, match="steps"):
        train(model, data.x_train, data.y_train, steps=0)
    with pytest.raises(ValueError, match="lr"):
        train(model, data.x_train, data.y_train, lr=-1.0)
    with pytest.raises(ValueError, match="batch_size"):
        train(model, data.x_train, data.y_train, batch_size=10_000)
    with pytest.raises(ValueError, match="y must"):
        train(model, data.x_train, data.y_train.float())
    with pytest.raises(ValueError, match="same number"):
        evaluate(model, data.x_train, data.y_test)
    with pytest.raises(TypeError, match="progress"):
        train(model, data.x_train, data.y_train, steps=1, progress=5)


def test_weight_gradient_norms_match_a_hand_computed_gradient():
    # One Linear layer with zero weights: logits are 0, softmax is uniform (1/2, 1/2), so
    # dL/dW = (p - onehot) x^T averaged over the batch.
    model = nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    x = torch.tensor([[3.0, 4.0]])
    y = torch.tensor([0])
    (norm,) = weight_gradient_norms(model, x, y)
    expected = torch.tensor([[-0.5], [0.5]]) @ x
    assert norm == pytest.approx(float(expected.norm()), rel=1e-6)
    assert model.weight.grad is None and model.training


def test_weight_gradient_norms_lists_every_linear_layer_and_restores_mode(data):
    model = small_model().eval()
    norms = weight_gradient_norms(model, data.x_train[:32], data.y_train[:32])
    assert len(norms) == 2 and all(n > 0 for n in norms)
    assert not model.training
    with pytest.raises(ValueError, match="Linear"):
        weight_gradient_norms(nn.ReLU(), data.x_train[:4], data.y_train[:4])


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_training_matches_torch_sgd_bit_for_bit(data, momentum):
    from utils.mlp import make_mlp

    ours = make_mlp("residual", 8, seed=0)
    reference = make_mlp("residual", 8, seed=0)
    losses = train(ours, data.x_train, data.y_train, steps=10, lr=0.05, momentum=momentum, seed=1)  # 10 x 128 < 1347: no reshuffle
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=momentum)
    generator = torch.Generator().manual_seed(1)
    order, position, expected = torch.randperm(len(data.x_train), generator=generator), 0, []
    for _ in range(10):
        index = order[position:position + 128]
        position += 128
        loss = nn.functional.cross_entropy(reference(data.x_train[index]), data.y_train[index])
        expected.append(float(loss.detach()))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert losses == expected
    assert all(torch.equal(a, b) for a, b in zip(ours.parameters(), reference.parameters()))


def test_a_parameter_outside_the_loss_is_left_as_it_is(data):
    model = nn.Sequential(nn.Linear(64, 10))
    model.unused = nn.Parameter(torch.ones(3))  # takes no part in the forward pass: it never gets a gradient
    before = model[0].weight.detach().clone()
    train(model, data.x_train, data.y_train, steps=3, seed=0)
    assert torch.equal(model.unused, torch.ones(3)) and model.unused.grad is None
    assert not torch.equal(model[0].weight, before)


def test_warmup_rises_linearly_then_holds():
    assert [warmup_lr(step, 0.001, 4) for step in (1, 2, 3, 4, 5, 100)] == pytest.approx(
        [0.00025, 0.0005, 0.00075, 0.001, 0.001, 0.001])
    assert [warmup_lr(step, 0.001, 0) for step in (1, 2, 50)] == [0.001, 0.001, 0.001]  # no warm-up
    assert warmup_lr(1, 0.001, 1) == 0.001


def test_warmup_bad_input_names_the_parameter():
    for call, name in ((lambda: warmup_lr(0, 0.001, 4), "step"), (lambda: warmup_lr(1, -0.1, 4), "lr"),
                       (lambda: warmup_lr(1, 0.001, -1), "warmup_steps"), (lambda: warmup_lr(1.5, 0.001, 4), "step")):
        with pytest.raises((ValueError, TypeError), match=name):
            call()


def test_output_change_is_the_relative_norm_of_the_difference():
    before = torch.tensor([[3.0, 0.0], [0.0, 4.0]])             # norm 5
    after = before + torch.tensor([[0.0, 1.0], [1.0, 0.0]])     # difference of norm sqrt(2)
    assert output_change(before, after) == pytest.approx(math.sqrt(2) / 5)
    assert output_change(before, before.clone()) == 0.0
    assert output_change(before, 2 * before) == pytest.approx(1.0)   # doubling moves it by its own size
    assert output_change(before, -before) == pytest.approx(2.0)


def test_output_change_of_one_adam_step_matches_the_update():
    # One Adam step moves every weight by lr * g / (|g| + eps): for a linear model the output moves by x @ dW^T.
    torch.manual_seed(0)
    model, x = nn.Linear(5, 3, bias=False).double(), torch.randn(7, 5, dtype=torch.float64)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    before, weight = model(x).detach(), model.weight.detach().clone()
    model(x).pow(2).sum().backward()
    grad = model.weight.grad.clone()
    optimiser.step()
    step = -0.01 * grad / (grad.abs() + 1e-8)
    assert torch.allclose(model.weight.detach() - weight, step)
    assert output_change(before, model(x).detach()) == pytest.approx(float((x @ step.T).norm() / before.norm()))


def test_output_change_bad_input_names_the_parameter():
    good = torch.ones(2, 3)
    for call, name in ((lambda: output_change([1.0], good), "before"), (lambda: output_change(good, torch.ones(3, 2)), "after"),
                       (lambda: output_change(torch.zeros(2, 3), good), "before"),
                       (lambda: output_change(good, torch.full((2, 3), float("nan"))), "after"),
                       (lambda: output_change(good, torch.ones(2, 3, dtype=torch.int64)), "after")):
        with pytest.raises((ValueError, TypeError), match=name):
            call()
