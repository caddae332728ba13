"""Exercises of notebook 13: the reference passes, recorded wrong answers get their own message."""
from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import three_more_lenses as ex

NOTEBOOK = "13_three_more_lenses.ipynb"


def _euler(update: str, loop: str = "    for weight in weights:\n") -> str:
    return "def euler_stack(x, weights, h):\n" + loop + "        x = " + update + "\n    return x\n"


def _lens(body: str) -> str:
    return "def decode_stream(model, x):\n" + body


_LOOP = ("    h = model.stem(x)\n    readings = [model.head(h)]\n    for block in model.blocks:\n"
         "        h = block(h)\n        readings.append(model.head(h))\n")

CASES = [
    ExerciseCases(ex.euler_stack, NOTEBOOK, "euler_stack", wrong=[
        ("no skip", _euler("h * torch.tanh(x @ weight.T)"), "no skip path"),
        ("h on the skip", _euler("h * x + torch.tanh(x @ weight.T)"), "scaled the skip path by h"),
        ("no step size", _euler("x + torch.tanh(x @ weight.T)"), "left out the step size"),
        ("not transposed", _euler("x + h * torch.tanh(x @ weight)"), "instead of its transpose"),
        ("reversed", _euler("x + h * torch.tanh(x @ weight.T)", "    for weight in reversed(weights):\n"),
         "from the last to the first"),
        ("divided by depth", _euler("x + h / len(weights) * torch.tanh(x @ weight.T)"), "do not divide it by the depth"),
        ("relu", _euler("x + h * torch.relu(x @ weight.T)"), "you used ReLU"),
        ("reads the input", "def euler_stack(x, weights, h):\n    out = x\n    for weight in weights:\n"
         "        out = out + h * torch.tanh(x @ weight.T)\n    return out\n", "read the original input x"),
        ("detached", "def euler_stack(x, weights, h):\n    x = x.detach()\n    for weight in weights:\n"
         "        x = x + h * torch.tanh(x @ weight.T)\n    return x\n", "no gradient reaches x"),
    ]),
    ExerciseCases(ex.decode_stream, NOTEBOOK, "decode_stream", wrong=[
        ("no stem reading", _lens("    h = model.stem(x)\n    readings = []\n    for block in model.blocks:\n"
                                  "        h = block(h)\n        readings.append(model.head(h))\n"
                                  "    return torch.stack(readings)\n"), "read the stream right after the stem"),
        ("before each block", _lens("    h = model.stem(x)\n    readings = []\n    for block in model.blocks:\n"
                                    "        readings.append(model.head(h))\n        h = block(h)\n"
                                    "    return torch.stack(readings)\n"), "before each block"),
        ("softmax", _lens(_LOOP + "    return torch.softmax(torch.stack(readings), dim=-1)\n"), "probabilities"),
        ("streams", _lens("    h = model.stem(x)\n    readings = [h]\n    for block in model.blocks:\n"
                          "        h = block(h)\n        readings.append(h)\n    return torch.stack(readings)\n"),
         "returned the stream itself"),
        ("only the output", _lens("    return torch.stack([model(x)] * (len(model.blocks) + 1))\n"),
         "every reading is the model's final output"),
        ("training mode", _lens("    import copy\n    model = copy.deepcopy(model).train()\n" + _LOOP
                                + "    return torch.stack(readings)\n"), "batch statistics"),
        ("mode changed in place", _lens("    model.train()\n" + _LOOP + "    return torch.stack(readings)\n"),
         "changed the model you were given in place"),
        ("last only", _lens(_LOOP + "    return readings[-1]\n"), "only the last reading"),
        ("detached", _lens(_LOOP + "    return torch.stack(readings).detach()\n"), "no gradient reaches"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)
