"""Exercises of notebook 11: the reference passes, recorded wrong answers get their own message."""
from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import deep_stack_recipes as ex

NOTEBOOK = "11_deep_stack_recipes.ipynb"


def _fixup(body: str, copy: bool = True) -> str:
    start = "    import copy\n    new = copy.deepcopy(model)\n" if copy else "    new = model\n"
    return "def fixup(model):\n" + start + "    L = len(new.blocks)\n    with torch.no_grad():\n" + body + "    return new\n"


_FC2 = "        for b in new.blocks:\n            b.fc2.weight.zero_()\n"
_HEAD = "        new.head.weight.zero_()\n"
_FC1 = "        for b in new.blocks:\n            b.fc1.weight.mul_({factor})\n"


def _stream(step: str, first: str = "states = [x]") -> str:
    return f'''
def scaled_stream(x, branches):
    L = len(branches)
    {first}
    h = x
    for f in branches:
        h = {step}
        states.append(h)
    return states
'''


CASES = [
    ExerciseCases(ex.fixup, NOTEBOOK, "fixup", wrong=[
        ("one-over-L", _fixup(_FC1.format(factor="1 / L") + _FC2 + _HEAD), "by 1/L"),
        ("last-layer-kept", _fixup(_FC1.format(factor="L ** -0.5") + _HEAD), "last layer of each branch (fc2) is not zero"),
        ("head-kept", _fixup(_FC1.format(factor="L ** -0.5") + _FC2), "classifier (model.head) is not zero"),
        ("no-rescale", _fixup(_FC2 + _HEAD), "not rescaled"),
        ("layers-swapped", _fixup("        for b in new.blocks:\n            b.fc2.weight.mul_(L ** -0.5)\n"
                                  "            b.fc1.weight.zero_()\n" + _HEAD),
         "the other way round"),
        ("weight-layers", _fixup("        D = 2 * L + 2\n" + _FC1.format(factor="D ** -0.5") + _FC2 + _HEAD),
         "number of weight layers"),
        ("unchanged", _fixup("        pass\n"), "still has its He-normal weights"),
        ("no-grad-missing", "def fixup(model):\n    import copy\n    new = copy.deepcopy(model)\n"
         "    for b in new.blocks:\n        b.fc2.weight.zero_()\n    return new\n", "torch.no_grad()"),
        ("precedence", _fixup(_FC1.format(factor="L ** -1/2") + _FC2 + _HEAD), "are scaled by"),
        ("model-passed", "import torch\nfrom utils import recipes\nfixup = recipes.build_deep_mlp(6, 'default')\n",
         "Pass the function itself"),
        ("in-place", _fixup(_FC1.format(factor="L ** -0.5") + _FC2 + _HEAD, copy=False), "changed the model it was given"),
        ("frozen-head", _fixup(_FC1.format(factor="L ** -0.5") + _FC2 + _HEAD
                               + "        new.head.weight.requires_grad_(False)\n"), "does not require a gradient"),
        ("shared-fc2", _fixup(_FC1.format(factor="L ** -0.5") + _HEAD
                              + "        shared = torch.nn.Parameter(torch.zeros_like(new.blocks[0].fc2.weight))\n"
                              + "        for b in new.blocks:\n            b.fc2.weight = shared\n"),
         "share one weight tensor"),
        ("double", _fixup(_FC1.format(factor="L ** -0.5") + _FC2 + _HEAD + "    new = new.double()\n"),
         "not the weights' type"),
        ("stem shared", _fixup(_FC1.format(factor="L ** -0.5") + _FC2 + _HEAD + "    new.stem = model.stem\n"),
         "is the very tensor of the model you were given"),
        ("one-more-branch", _fixup(_FC1.format(factor="(L + 1) ** -0.5") + _FC2 + _HEAD), "not one more"),
    ]),
    ExerciseCases(ex.scaled_stream, NOTEBOOK, "scaled_stream", wrong=[
        ("one-over-L", _stream("h + f(h) / L"), "by 1/L"),
        ("skip-scaled", _stream("h / math.sqrt(L) + f(h)"), "scaled the skip path"),
        ("sum-scaled", _stream("(h + f(h)) / math.sqrt(L)"), "the whole sum"),
        ("no-scale", _stream("h + f(h)"), "forgot the scale"),
        ("L-plus-one", _stream("h + f(h) / math.sqrt(L + 1)"), "not one more"),
        ("no-input", _stream("h + f(h) / math.sqrt(L)", first="states = []"), "left out the input"),
        ("aliased", "def scaled_stream(x, branches):\n    states, h = [x], x.clone()\n    for f in branches:\n"
         "        h += f(h) / math.sqrt(len(branches))\n        states.append(h)\n    return states\n",
         "every state after x in your list is the same tensor"),
        ("no-skip", _stream("f(h) / math.sqrt(L)"), "dropped the skip path"),
        ("reads-x", _stream("h + f(x) / math.sqrt(L)"), "every branch read x"),
        ("returns-None", "def scaled_stream(x, branches):\n    states = [x]\n", "forget `return`"),
        ("twice-the-scale", _stream("h + 2 * f(h) / math.sqrt(L)"), "scaled each branch's write by"),
        ("write-detached", _stream("h + (f(h) / math.sqrt(L)).detach()"), "no gradient reaches branch 1's weight"),
        ("write-subtracted", _stream("h - f(h) / math.sqrt(L)"), "the branch's write is subtracted"),
        ("reads-scaled", _stream("h + f(h / math.sqrt(L))"), "scaled what each branch reads"),
        ("float32-scale", _stream("h + float(np.float32(1 / math.sqrt(L))) * f(h)"), "rounded to lower precision"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)
