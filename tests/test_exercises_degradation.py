"""Notebook 08's exercises: the reference passes, and each recorded wrong answer is caught
with its own message."""
from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import degradation as ex

NOTEBOOK = "08_degradation.ipynb"

_BLOCK = ("class ResidualMLPBlock(nn.Module):\n"
          "    def __init__(self, width):\n"
          "        super().__init__()\n"
          "        self.linear1 = nn.Linear(width, width, bias=False)\n"
          "        self.norm1 = nn.BatchNorm1d(width)\n"
          "        self.linear2 = nn.Linear(width, width, bias=False)\n"
          "        self.norm2 = nn.BatchNorm1d(width)\n\n"
          "    def forward(self, x):\n"
          "        branch = self.norm2(self.linear2(torch.relu(self.norm1(self.linear1(x)))))\n")
_RATIOS = ("def branch_to_skip_ratios(model, x):\n"
           "    import copy\n"
           "    probe = copy.deepcopy(model).train()\n"
           "    h, ratios = probe.stem(x), []\n"
           "    for block in probe.blocks:\n")

CASES = [
    ExerciseCases(ex.residual_mlp_block, NOTEBOOK, "ResidualMLPBlock", wrong=[
        ("eval mode forced", _BLOCK.replace("    def forward(self, x):\n", "    def forward(self, x):\n        self.eval()\n")
         + "        return torch.relu(x + branch)\n", "switched the block to eval mode"),
        ("branch ends in a ReLU", _BLOCK + "        return torch.relu(x + torch.relu(branch))\n",
         "applies a ReLU twice"),
        ("ReLU before the sum", _BLOCK + "        return x + torch.relu(branch)\n", "before the sum"),
        ("no ReLU after the sum", _BLOCK + "        return x + branch\n", "ReLU after the sum is missing"),
        ("returned F only", _BLOCK + "        return branch\n", "branch F(x) alone"),
        ("skip missing", _BLOCK + "        return torch.relu(branch)\n", "the skip is missing"),
        ("forgot BatchNorm", _BLOCK + "        return torch.relu(x + self.linear2(torch.relu(self.linear1(x))))\n",
         "BatchNorm layers are not used"),
        ("wrong shape", _BLOCK + "        return torch.relu(x + branch).sum(dim=1)\n", "expected shape"),
        ("in place", _BLOCK + "        x += branch\n        return torch.relu(x)\n", "changed its argument `x` in place"),
        ("an instance, not the class", _BLOCK + "        return torch.relu(x + branch)\n\n\n"
         "ResidualMLPBlock = ResidualMLPBlock(8)\n", "Pass the class itself"),
        ("branch detached", _BLOCK + "        return torch.relu(x + branch.detach())\n", "no gradient reaches `self.linear1.weight`"),
        ("skip rebuilt with torch.tensor", _BLOCK + "        return torch.relu(torch.tensor(x.tolist(), dtype=x.dtype) + branch)\n",
         "the gradient with respect to x is off"),
        ("training mode forced", _BLOCK.replace("    def forward(self, x):\n", "    def forward(self, x):\n        self.train()\n")
         + "        return torch.relu(x + branch)\n", "switched the block back to training mode"),
        ("BatchNorm with batch statistics only", _BLOCK.replace(
            "        branch = self.norm2(self.linear2(torch.relu(self.norm1(self.linear1(x)))))\n",
            "        bn = lambda n, h: F.batch_norm(h, None, None, n.weight, n.bias, training=True)\n"
            "        branch = bn(self.norm2, self.linear2(torch.relu(bn(self.norm1, self.linear1(x)))))\n")
         + "        return torch.relu(x + branch)\n", "still normalises with each batch's own mean"),
        ("a frozen weight", _BLOCK.replace("        self.norm2 = nn.BatchNorm1d(width)\n",
                                           "        self.norm2 = nn.BatchNorm1d(width)\n        self.linear2.weight.requires_grad_(False)\n")
         + "        return torch.relu(x + branch)\n", "`self.linear2.weight` does not require a gradient"),
    ]),
    ExerciseCases(ex.branch_to_skip_ratios, NOTEBOOK, "branch_to_skip_ratios", wrong=[
        ("std instead of variance", _RATIOS + "        ratios.append(float(block.branch(h).std() / h.std()))\n"
         "        h = block(h)\n    return ratios\n", "standard deviations"),
        ("inverted", _RATIOS + "        ratios.append(float(h.var() / block.branch(h).var()))\n"
         "        h = block(h)\n    return ratios\n", "upside down"),
        ("block output", _RATIOS + "        ratios.append(float(block(h).var() / h.var()))\n"
         "        h = block(h)\n    return ratios\n", "whole block's output"),
        ("never moved on", _RATIOS + "        ratios.append(float(block.branch(h).var() / h.var()))\n"
         "    return ratios\n", "every block got the stem's output"),
        ("moved on with the branch", _RATIOS + "        ratios.append(float(block.branch(h).var() / h.var()))\n"
         "        h = block.branch(h)\n    return ratios\n", "drops the skip"),
        ("moved on without the final ReLU", _RATIOS + "        ratios.append(float(block.branch(h).var() / h.var()))\n"
         "        h = h + block.branch(h)\n    return ratios\n", "without the block's final ReLU"),
        ("ratio after the sum", _RATIOS + "        branch = block.branch(h)\n        h = h + branch\n"
         "        ratios.append(float(branch.var() / h.var()))\n    return ratios\n", "after adding the branch"),
        ("ratio after the block", _RATIOS + "        branch = block.branch(h)\n        h = block(h)\n"
         "        ratios.append(float(branch.var() / h.var()))\n    return ratios\n", "after moving h on"),
        ("detached tensors", _RATIOS + "        ratios.append((block.branch(h).var() / h.var()).detach())\n"
         "        h = block(h)\n    return ratios\n", "not a number"),
        ("changed the model", "def branch_to_skip_ratios(model, x):\n    model.train()\n"
         "    h, ratios = model.stem(x), []\n    for block in model.blocks:\n"
         "        ratios.append(float(block.branch(h).var() / h.var()))\n        h = block(h)\n    return ratios\n",
         "work on `copy.deepcopy(model)`"),
        ("tensors, not floats", _RATIOS + "        ratios.append(block.branch(h).var() / h.var())\n"
         "        h = block(h)\n    return ratios\n", "Return floats: `float(...)`"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)
