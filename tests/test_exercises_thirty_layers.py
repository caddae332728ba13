from tests.exercise_support import (ExerciseCases, enough_wrong_answers, recorded_answer, reference_passes,
                                    wrong_answers_are_caught)
from utils.exercises import thirty_layers as ex

NOTEBOOK = "06_thirty_layers.ipynb"
NAME = "activation_gradient_norms"

# Right answers, and the wrong ones made from them by changing one thing.
GAINS = '''
def layernorm_gains(x, g, scales):
    gains = []
    for c in scales:
        u = (c * x).detach().requires_grad_(True)
        (grad,) = torch.autograd.grad((F.layer_norm(u, (u.shape[-1],)) * g).sum(), u)
        gains.append(grad.norm().item() / g.norm().item())
    return gains
'''
GAINS_WITH_RESPECT_TO_X = GAINS.replace(
    "u = (c * x).detach().requires_grad_(True)",
    "x0 = x.detach().clone().requires_grad_(True)\n        u = c * x0").replace(", u)", ", x0)")
GAINS_OF_THE_SUM = GAINS.replace("(F.layer_norm(u, (u.shape[-1],)) * g).sum()", "F.layer_norm(u, (u.shape[-1],)).sum()")
GAINS_NOT_DIVIDED = GAINS.replace("grad.norm().item() / g.norm().item()", "grad.norm().item()")

NORMS = '''
def activation_gradient_norms(stack, x, g):
    xs = [x.detach().clone().requires_grad_(True)]
    for block in stack:
        xs.append(block(xs[-1]))
        xs[-1].retain_grad()
    (xs[-1] * g).sum().backward()
    return [x_l.grad.norm().item() for x_l in xs]
'''
NORMS_OF_THE_SUM = NORMS.replace("(xs[-1] * g).sum()", "xs[-1].sum()")
NORMS_OF_THE_ACTIVATIONS = NORMS.replace("x_l.grad.norm()", "x_l.norm()")
NO_RETAIN_GRAD = NORMS.replace("        xs[-1].retain_grad()\n", "")
GRADIENTS_NOT_ZEROED = NORMS.replace("xs = [x.detach().clone().requires_grad_(True)]",
                                     "x.requires_grad_(True)\n    xs = [x]")
CLONE_OF_A_LEAF = NORMS.replace("x.detach().clone()", "x.clone()")
INPUT_WITHOUT_GRAD = NORMS.replace("x.detach().clone().requires_grad_(True)", "x.detach().clone()")
GRADIENT_TENSORS = NORMS.replace("x_l.grad.norm().item()", "x_l.grad")
REVERSED = NORMS.replace("for x_l in xs]", "for x_l in reversed(xs)]")
WITHOUT_THE_INPUT = NORMS.replace("for x_l in xs]", "for x_l in xs[1:]]")

CASES = [
    ExerciseCases(ex.layernorm_gains, NOTEBOOK, "layernorm_gains", wrong=[
        ("differentiated with respect to x", GAINS_WITH_RESPECT_TO_X, "not with respect to the LayerNorm's input"),
        ("loss output.sum()", GAINS_OF_THE_SUM, "or the loss is constant (output.sum()"),
        ("not divided by |g|", GAINS_NOT_DIVIDED, "divide by the norm of g"),
        ("eps 1e-6", GAINS.replace("F.layer_norm(u, (u.shape[-1],))", "F.layer_norm(u, (u.shape[-1],), eps=1e-6)"),
         "your LayerNorm's eps is 1e-06"),
        ("float32 detour", GAINS.replace("(F.layer_norm(u, (u.shape[-1],)) * g).sum()",
                                         "(F.layer_norm(u.float(), (u.shape[-1],)) * g.float()).sum()"),
         "differs from the right one only at the level of rounding"),
        ("three of four", GAINS.replace("    return gains", "    return gains[:-1]"), "returned a list of"),
        ("LayerNorm without eps", GAINS.replace("F.layer_norm(u, (u.shape[-1],))", "F.layer_norm(u, (u.shape[-1],), eps=0.0)"),
         "your LayerNorm has no eps"),
        ("u detached before the LayerNorm", GAINS.replace("F.layer_norm(u,", "F.layer_norm(u.detach(),")
         .replace("(grad,) = torch.autograd.grad(", "(grad,) = torch.autograd.grad(u.sum() * 0 + ")
         , "every gain is 0: no gradient reached u"),
        ("gains as text", GAINS.replace("gains.append(grad.norm().item() / g.norm().item())",
                                        "gains.append(f'{grad.norm().item() / g.norm().item():.8f}')"), "is a str, not a number"),
    ]),
    ExerciseCases(ex.activation_gradient_norms, NOTEBOOK, "activation_gradient_norms", wrong=[
        ("loss output.sum()", NORMS_OF_THE_SUM, "gradients of output.sum()"),
        ("norms of the activations", NORMS_OF_THE_ACTIVATIONS, "norms of the activations x_l themselves"),
        ("forgot retain_grad", NO_RETAIN_GRAD, "retain_grad()"),
        ("requires_grad switched on the caller's x (its .grad would pile up)", GRADIENTS_NOT_ZEROED, "switched on requires_grad"),
        ("x.clone() of an input that already requires grad", CLONE_OF_A_LEAF, "Your x_0 is not a leaf"),
        ("x_0 does not require grad", INPUT_WITHOUT_GRAD, "make x_0 a copy that requires grad"),
        ("returned the gradient tensors", GRADIENT_TENSORS, "take `.norm().item()` of each"),
        ("reverse order", REVERSED, "in reverse order"),
        ("input left out", WITHOUT_THE_INPUT, "include the input x_0"),
        ("the caller's stack frozen", NORMS.replace("    xs = [", "    stack.requires_grad_(False)\n    xs = ["),
         "switched off requires_grad"),
        ("the caller's stack switched to eval mode", NORMS.replace("    xs = [", "    stack.eval()\n    xs = ["),
         "its train/eval mode"),
        ("the graph cut between blocks", NORMS.replace("xs.append(block(xs[-1]))", "xs.append(block(xs[-1].detach()))"),
         "The input of block 1 does not require grad"),
        ("a generator", NORMS.replace("return [x_l.grad.norm().item() for x_l in xs]",
                                      "return (x_l.grad.norm().item() for x_l in xs)"), "a generator expression"),
        ("0-d tensors", NORMS.replace("x_l.grad.norm().item()", "x_l.grad.norm()"), "is a tensor of shape ()"),
        ("a block appended to the caller's stack", NORMS.replace("    xs = [", "    stack.append(nn.Identity())\n    xs = ["),
         "changed the model you were given in place"),
        ("a dict by layer", NORMS.replace("return [x_l.grad.norm().item() for x_l in xs]",
                                          "return {l: x_l.grad.norm().item() for l, x_l in enumerate(xs)}"),
         "returned a dict (keys 0, 1, 2, 3, ...)"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)


def test_a_right_answer_that_leaves_gradients_on_the_stacks_weights_passes_with_a_note():
    autograd_grad = NORMS.replace("(xs[-1] * g).sum().backward()\n    return [x_l.grad.norm().item() for x_l in xs]",
                                  "grads = torch.autograd.grad((xs[-1] * g).sum(), xs)\n"
                                  "    return [grad.norm().item() for grad in grads]")
    with_backward, with_autograd_grad = (ex.activation_gradient_norms.check(recorded_answer(source, NAME))
                                         for source in (NORMS, autograd_grad))
    assert with_backward and with_autograd_grad
    assert "left gradients in the `.grad` of the weights of the model it was given" in with_backward.message
    assert ".grad" not in with_autograd_grad.message
