from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import thousand_layers as ex

NOTEBOOK = "07_a_thousand_layers.ipynb"

NAIVE_PRODUCT = '''
def log10_gain(jacobians, g):
    v = g
    for jacobian in reversed(list(jacobians)):
        v = jacobian.T @ v
    return math.log10(v.norm().item() / g.norm().item())
'''

# A right answer, and the wrong ones made from it by changing one thing.
RENORMALISED = '''
def log10_gain(jacobians, g):
    v, total = g / g.norm(), 0.0
    for jacobian in reversed(list(jacobians)):
        v = jacobian.T @ v
        total += math.log10(v.norm().item())
        v = v / v.norm()
    return total
'''
NATURAL_LOG = RENORMALISED.replace("math.log10", "math.log")
WRONG_ORDER = RENORMALISED.replace("reversed(list(jacobians))", "jacobians")
NO_TRANSPOSE = RENORMALISED.replace("jacobian.T @ v", "jacobian @ v")
FORWARD_NO_TRANSPOSE = WRONG_ORDER.replace("jacobian.T @ v", "jacobian @ v")
FROM_G = RENORMALISED.replace("v, total = g / g.norm(), 0.0", "v, total = g, 0.0")
IN_FLOAT32 = RENORMALISED.replace("v, total = g / g.norm(), 0.0", "v, total = (g / g.norm()).float(), 0.0").replace(
    "jacobian.T @ v", "jacobian.T.float() @ v")

SCALED = '''
def scaled_stack_gain(blocks, x, g, shortcut, branch):
    x0 = x.detach().clone().requires_grad_(True)
    h = x0
    for block in blocks:
        h = shortcut * h + branch * block.branch(block.norm(h))
    (grad,) = torch.autograd.grad((h * g).sum(), x0)
    return grad.norm().item() / g.norm().item()
'''
SWAPPED = SCALED.replace("shortcut * h + branch *", "branch * h + shortcut *")
WHOLE_BLOCK_SCALED = SCALED.replace("shortcut * h + branch * block.branch(block.norm(h))",
                                    "shortcut * (h + branch * block.branch(block.norm(h)))")
NO_NORM = SCALED.replace("block.branch(block.norm(h))", "block.branch(h)")
WHOLE_BLOCK_AS_BRANCH = SCALED.replace("block.branch(block.norm(h))", "block(h)")
SUM_LOSS = SCALED.replace("(h * g).sum()", "h.sum()")
NO_SKIP = SCALED.replace("shortcut * h + branch *", "branch *")
SCALED_IN_FLOAT32 = SCALED.replace("x0 = x.detach().clone().requires_grad_(True)",
                                   "import copy\n    blocks = copy.deepcopy(blocks).float()\n    x0 = x.detach().float().requires_grad_(True)").replace(
    "(h * g).sum()", "(h * g.float()).sum()")
NOT_DIVIDED = SCALED.replace("grad.norm().item() / g.norm().item()", "grad.norm().item()")

CASES = [
    ExerciseCases(ex.log10_gain, NOTEBOOK, "log10_gain", wrong=[
        ("product without renormalising", NAIVE_PRODUCT, "left float64's range"),
        ("log of the sum, not the norm", RENORMALISED.replace("math.log10(v.norm().item())", "torch.log10(v.sum()).item()"),
         "so it is not an overflow"),
        ("natural logarithm", NATURAL_LOG, "natural logarithm"),
        ("first Jacobian first", WRONG_ORDER, "wrong order"),
        ("no transpose", NO_TRANSPOSE, "instead of its transpose"),
        ("forward order and no transpose", FORWARD_NO_TRANSPOSE, "you pushed g forwards through the stack"),
        ("started from g, not g/|g|", FROM_G, "you started from g, not g / |g|"),
        ("float32", IN_FLOAT32, "the size of float32 rounding"),
    ]),
    ExerciseCases(ex.scaled_stack_gain, NOTEBOOK, "scaled_stack_gain", wrong=[
        ("shortcut and branch swapped", SWAPPED, "are swapped"),
        ("whole block scaled", WHOLE_BLOCK_SCALED, "whole block output"),
        ("LayerNorm left out", NO_NORM, "normalised input"),
        ("whole block as the branch", WHOLE_BLOCK_AS_BRANCH, "which already adds its own skip path"),
        ("skip path left out", NO_SKIP, "the skip path is missing"),
        ("branch detached", SCALED.replace("block.branch(block.norm(h))", "block.branch(block.norm(h)).detach()"),
         "the branches' part is missing"),
        ("branch subtracted", SCALED.replace("shortcut * h + branch *", "shortcut * h - branch *"), "the branch is subtracted"),
        ("a tensor, not a float", SCALED.replace("grad.norm().item() / g.norm().item()", "grad.norm() / g.norm()"),
         "return a Python float"),
        ("float32", SCALED_IN_FLOAT32, "the size of float32 rounding"),
        ("loss output.sum()", SUM_LOSS, "you differentiated output.sum()"),
        ("not divided by |g|", NOT_DIVIDED, "divides it by the norm of g"),
        ("formatted as text", SCALED.replace("return grad.norm().item() / g.norm().item()",
                                             "return f'{grad.norm().item() / g.norm().item():.4f}'"), "returned text"),
        ("a 0-d array", SCALED.replace("grad.norm().item() / g.norm().item()", "(grad.norm() / g.norm()).numpy()"),
         "returned an array of shape ()"),
        ("rounded", SCALED.replace("return grad.norm().item() / g.norm().item()",
                                   "return round(grad.norm().item() / g.norm().item(), 6)"), "rounded to 6 decimals"),
        ("shortcut ignored", SCALED.replace("shortcut * h", "h"), "does not change with `shortcut`"),
        ("branch ignored", SCALED.replace("branch * block", "block"), "does not change with `branch`"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)
