"""Notebook 05's exercises: the reference passes, and each recorded wrong answer is caught
with its own message."""
from tests.exercise_support import (ExerciseCases, enough_wrong_answers, recorded_answer, reference_passes,
                                    wrong_answers_are_caught)
from utils.exercises import flexible_block as ex

NOTEBOOK = "05_flexible_block.ipynb"


def _forward(pre: str, post: str) -> str:
    return (f"def flexible_forward(x, norm, branch, s, position):\n"
            f"    if position == 'pre':\n        return {pre}\n    return {post}\n")


_RIGHT_PRE, _RIGHT_POST = "x + s * branch(norm(x))", "norm(x + s * branch(x))"


def _rezero(init: str, forward: str) -> str:
    return ("class ReZeroBlock(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
            "        self.fc1 = nn.Linear(d, 4 * d)\n        self.fc2 = nn.Linear(4 * d, d)\n"
            f"        {init}\n\n    def forward(self, x):\n        return {forward}\n")


_ALPHA = "self.alpha = nn.Parameter(torch.zeros(()))"
_RIGHT = "x + self.alpha * self.fc2(F.gelu(self.fc1(x)))"

CASES = [
    ExerciseCases(ex.flexible_forward, NOTEBOOK, "flexible_forward", wrong=[
        ("pre normalises the sum", _forward("norm(x + s * branch(x))", _RIGHT_POST), "that is post-norm"),
        ("pre normalises after the sum too", _forward("norm(x + s * branch(norm(x)))", _RIGHT_POST),
         "you normalised the sum as well"),
        ("pre skip carries LN(x)", _forward("norm(x) + s * branch(norm(x))", _RIGHT_POST), "the skip path carries LN(x)"),
        ("pre forgot the scale", _forward("x + branch(norm(x))", _RIGHT_POST), "the scale is missing: multiply"),
        ("pre returned the branch", _forward("s * branch(norm(x))", _RIGHT_POST), "you returned only the branch, s * F(LN(x))"),
        ("post returns pre", _forward(_RIGHT_PRE, _RIGHT_PRE), "you returned the pre-norm output"),
        ("post normalises x first", _forward(_RIGHT_PRE, "norm(x) + s * branch(x)"), "you normalised x before adding"),
        ("post forgot the scale", _forward(_RIGHT_PRE, "norm(x + branch(x))"), "LN(x + s * F(x)), with the branch multiplied"),
        ("post normalises x everywhere", _forward(_RIGHT_PRE, "norm(x) + s * branch(norm(x))"), "fed LN(x) to the branch. Post-norm adds first"),
        ("pre norm on the skip", _forward("norm(x) + s * branch(x)", _RIGHT_POST), "the LayerNorm is on the skip path"),
        ("post no norm", _forward(_RIGHT_PRE, "x + s * branch(x)"), "post-norm returns LN(x + s * F(x))."),
        ("post normalises the branch", _forward(_RIGHT_PRE, "x + norm(s * branch(x))"),
         "you normalised the branch's output"),
        ("own LayerNorm", _forward("x + s * branch(F.layer_norm(x, x.shape[-1:]))", _RIGHT_POST),
         "a LayerNorm of your own"),
        ("pre scales the sum", _forward("s * (x + branch(norm(x)))", _RIGHT_POST), "the scale multiplies the whole sum"),
        ("post scales the output", _forward(_RIGHT_PRE, "s * norm(x + branch(x))"), "the scale multiplies the whole output"),
        ("float32 output", _forward(f"({_RIGHT_PRE}).float()", _RIGHT_POST), "float32 keeps only about 7 digits: compute"),
        ("gate through float()", _forward("x + float(s) * branch(norm(x))", _RIGHT_POST),
         "no gradient reaches the gate s through them"),
        ("branch detached", _forward("x + s * branch(norm(x)).detach()", _RIGHT_POST),
         "no gradient reaches `norm.weight`"),
        ("post input detached", _forward(_RIGHT_PRE, "norm(x + s * branch(x.detach()))"),
         "the gradient with respect to x is off by up to"),
    ]),
    ExerciseCases(ex.rezero_block, NOTEBOOK, "ReZeroBlock", wrong=[
        ("with a LayerNorm", _rezero(_ALPHA + "\n        self.norm = nn.LayerNorm(d)",
                                     "x + self.alpha * self.fc2(F.gelu(self.fc1(self.norm(x))))"), "contains a LayerNorm"),
        ("alpha shared by every block", "SHARED = nn.Parameter(torch.zeros(()))\n" + _rezero("self.alpha = SHARED", _RIGHT),
         "two ReZeroBlocks share one `alpha`"),
        ("forward forces training mode", _rezero(_ALPHA, _RIGHT).replace("        return ", "        self.train()\n        return "),
         "switched the block to training mode"),
        ("fc2 zeroed", _rezero(_ALPHA + "\n        nn.init.zeros_(self.fc2.weight)", _RIGHT), "starts with an all-zero weight"),
        ("added and taken away", _rezero(_ALPHA, "x + self.fc2(F.gelu(self.fc1(self.alpha * x))) - "
                                                 "self.fc2(F.gelu(self.fc1(torch.zeros_like(x))))"),
         "must return x exactly"),
        ("fc1 without bias", _rezero(_ALPHA + "\n        self.fc1 = nn.Linear(d, 4 * d, bias=False)", _RIGHT),
         "has no bias (bias=False)"),
        ("alpha a float", _rezero("self.alpha = 0.0", _RIGHT), "`alpha` is a float, so the module does not register it"),
        ("alpha a plain tensor", _rezero("self.alpha = torch.zeros(())", _RIGHT), "Wrap the zero tensor in `nn.Parameter(...)`"),
        ("alpha starts at 1", _rezero("self.alpha = nn.Parameter(torch.ones(()))", _RIGHT), "ReZero starts it at 0"),
        ("alpha frozen", _rezero("self.alpha = nn.Parameter(torch.zeros(()), requires_grad=False)", _RIGHT),
         "requires_grad=False"),
        ("alpha a class attribute", "class ReZeroBlock(nn.Module):\n    alpha = nn.Parameter(torch.zeros(()))\n"
         "    def __init__(self, d):\n        super().__init__()\n        self.fc1 = nn.Linear(d, 4 * d)\n"
         "        self.fc2 = nn.Linear(4 * d, d)\n\n    def forward(self, x):\n        return " + _RIGHT + "\n",
         "defined in the class body"),
        ("alpha misspelled", _rezero("self.alfa = nn.Parameter(torch.zeros(()))", _RIGHT.replace("alpha", "alfa")),
         "has no `self.alpha` (its own parameters: alfa)"),
        ("default dtype switched", _rezero(_ALPHA + "\n        torch.set_default_dtype(torch.float64)\n"
                                           "        self.fc2 = nn.Linear(4 * d, d)", _RIGHT), "not torch's default float32"),
        ("returns the branch", _rezero(_ALPHA, "self.alpha * self.fc2(F.gelu(self.fc1(x)))"), "your block outputs 0"),
        ("alpha on x", _rezero(_ALPHA, "self.alpha * x + self.fc2(F.gelu(self.fc1(x)))"), "alpha multiplies x"),
        ("no gate", _rezero(_ALPHA, "x + self.fc2(F.gelu(self.fc1(x)))"), "the gate is missing"),
        ("ReLU", _rezero(_ALPHA, "x + self.alpha * self.fc2(torch.relu(self.fc1(x)))"), "the branch uses ReLU"),
        ("no activation", _rezero(_ALPHA, "x + self.alpha * self.fc2(self.fc1(x))"), "no activation between fc1"),
        ("not a module", "class ReZeroBlock:\n    def __init__(self, d):\n        self.d = d\n", "must subclass nn.Module"),
        ("other names", "class ReZeroBlock(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
         "        self.up = nn.Linear(d, 4 * d)\n", "has no nn.Linear called `fc1`"),
        ("an instance", _rezero(_ALPHA, _RIGHT) + "\nReZeroBlock = ReZeroBlock(8)\n",
         "pass the class `ReZeroBlock`, not `ReZeroBlock(d)`"),
        ("tanh GELU", _rezero(_ALPHA, "x + self.alpha * self.fc2(F.gelu(self.fc1(x), approximate='tanh'))"),
         "tanh approximation of GELU"),
        ("alpha.item()", _rezero(_ALPHA, "x + self.alpha.item() * self.fc2(F.gelu(self.fc1(x)))"),
         "no gradient reaches `self.alpha`"),
        ("branch through .data", _rezero(_ALPHA, "x + self.alpha * self.fc2(F.gelu(self.fc1(x))).data"),
         "no gradient reaches `self.fc1.weight`"),
        ("forward misspelled", _rezero(_ALPHA, _RIGHT).replace("def forward", "def foward"),
         "has no method called `forward`"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)


def test_a_gate_reached_through_a_property_is_accepted():
    answer = _rezero("self.gate = nn.Parameter(torch.zeros(()))", _RIGHT) + (
        "\n    @property\n    def alpha(self):\n        return self.gate\n")
    assert ex.rezero_block.check(recorded_answer(answer, "ReZeroBlock"))
