"""Notebook 09's exercises: the reference passes, and each recorded wrong answer is caught
with its own message."""
from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import why_it_works as ex

NOTEBOOK = "09_why_it_works.ipynb"

_COPY = "def delete_block(model, k):\n    import copy\n    lesioned = copy.deepcopy(model)\n"
_LAG = "def lag1_autocorrelation(values):\n    c = values - values.mean()\n"

CASES = [
    ExerciseCases(ex.delete_block, NOTEBOOK, "delete_block", wrong=[
        ("block deleted from the list", _COPY + "    del lesioned.blocks[k]\n    return lesioned\n", "rather than removing it"),
        ("the copy retyped", _COPY.replace("copy.deepcopy(model)", "copy.deepcopy(model).float()")
         + "    lesioned.blocks[k] = nn.Identity()\n    return lesioned\n", "is torch.float32; the model you were given has torch.float64"),
        ("the copy frozen", _COPY.replace("copy.deepcopy(model)", "copy.deepcopy(model).requires_grad_(False)")
         + "    lesioned.blocks[k] = nn.Identity()\n    return lesioned\n", "does not require a gradient"),
        ("the copy in training mode", _COPY.replace("copy.deepcopy(model)", "copy.deepcopy(model).train()")
         + "    lesioned.blocks[k] = nn.Identity()\n    return lesioned\n", "is in training mode"),
        ("an identity of its own", _COPY + "    class Id(nn.Module):\n        def forward(self, h):\n            return h\n"
         "    lesioned.blocks[k] = Id()\n    return lesioned\n", "is `Id`, not nn.Identity()"),
        ("the head shared", _COPY + "    lesioned.blocks[k] = nn.Identity()\n    lesioned.head = model.head\n"
         "    return lesioned\n", "is the very tensor of the model you were given"),
        ("off by one (k + 1)", _COPY + "    lesioned.blocks[k + 1] = nn.Identity()\n    return lesioned\n",
         "you deleted block k + 1"),
        ("off by one (k - 1)", _COPY + "    lesioned.blocks[k - 1] = nn.Identity()\n    return lesioned\n",
         "you deleted block k - 1"),
        ("deleted the skip", _COPY + "    lesioned.blocks[k] = nn.Sequential(lesioned.blocks[k].branch, nn.ReLU())\n"
         "    return lesioned\n", "dropped the skip"),
        ("in place", "def delete_block(model, k):\n    model.blocks[k] = nn.Identity()\n    return model\n",
         "work on `copy.deepcopy(model)`"),
        ("nothing deleted", _COPY + "    return lesioned\n", "same as the intact network"),
        ("deleted the rest", _COPY + "    for i in range(k, len(lesioned.blocks)):\n"
         "        lesioned.blocks[i] = nn.Identity()\n    return lesioned\n", "every block after it"),
    ]),
    ExerciseCases(ex.lag1_autocorrelation, NOTEBOOK, "lag1_autocorrelation", wrong=[
        ("a list of one number", _LAG + "    return [float(c[1:] @ c[:-1] / (c @ c))]\n", "return one number, a float"),
        ("absolute value", _LAG + "    return abs(float(c[1:] @ c[:-1] / (c @ c)))\n", "you returned the absolute value"),
        ("short sequences skipped", _LAG + "    return float(c[1:] @ c[:-1] / (c @ c)) if len(values) > 3 else 0.0\n",
         "v = [1, 2, 4], the shortest sequence"),
        ("forgot the mean", "def lag1_autocorrelation(values):\n"
         "    return float(values[1:] @ values[:-1] / (values @ values))\n", "mean is not subtracted"),
        ("lag 0", _LAG + "    return float(c @ c / (c @ c))\n", "lag-0"),
        ("corrcoef", "import numpy as np\ndef lag1_autocorrelation(values):\n"
         "    return float(np.corrcoef(values[1:], values[:-1])[0, 1])\n", "two separate series"),
        ("n - 1 against n", _LAG + "    n = len(c)\n    return float((c[1:] @ c[:-1] / (n - 1)) / (c @ c / n))\n",
         "averaged the n - 1 products"),
        ("not normalised", _LAG + "    return float(c[1:] @ c[:-1] / len(c))\n", "not normalised"),
        ("float32", "import numpy as np\ndef lag1_autocorrelation(values):\n"
         "    c = values.astype(np.float32) - values.astype(np.float32).mean()\n"
         "    return c[1:] @ c[:-1] / (c @ c)\n", "is float32: keep it in float64"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)
