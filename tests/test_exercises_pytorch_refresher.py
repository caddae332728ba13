"""Notebook 04's exercises: the reference passes, and each recorded wrong answer is caught
with its own message."""
import torch

from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import pytorch_refresher as ex

NOTEBOOK = "04_pytorch_refresher.ipynb"

_LN = "def layer_norm(x, gamma, beta, eps):\n    mean = x.mean(dim=-1, keepdim=True)\n"
_GC = ("def gradient_check(f, x, h):\n"
       "    leaf = x.detach().clone().requires_grad_(True)\n"
       "    f(leaf).backward()\n"
       "    flat = x.detach().flatten()\n"
       "    out = torch.zeros_like(flat)\n"
       "    for i in range(flat.numel()):\n"
       "        step = torch.zeros_like(flat)\n"
       "        step[i] = h\n")

CASES = [
    ExerciseCases(ex.layer_norm, NOTEBOOK, "layer_norm", wrong=[
        ("unbiased variance", _LN + "    return gamma * (x - mean) / torch.sqrt(x.var(dim=-1, keepdim=True) + eps) + beta\n",
         "unbiased variance"),
        ("eps outside the root", _LN + "    return gamma * (x - mean) / (x.std(dim=-1, unbiased=False, keepdim=True) + eps) + beta\n",
         "eps is added to the standard deviation"),
        ("no gamma, beta", _LN + "    return (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)\n",
         "gamma and shift beta are missing"),
        ("whole tensor", "def layer_norm(x, gamma, beta, eps):\n"
         "    return gamma * (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + eps) + beta\n",
         "mean and variance of the whole tensor"),
        ("across tokens", "def layer_norm(x, gamma, beta, eps):\n    m = x.mean(dim=0, keepdim=True)\n"
         "    return gamma * (x - m) / torch.sqrt(x.var(dim=0, unbiased=False, keepdim=True) + eps) + beta\n",
         "across the first dimension"),
        ("swapped", _LN + "    return beta * (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps) + gamma\n",
         "gamma and beta are swapped"),
        ("NumPy result", _LN + "    y = (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)\n"
         "    return (gamma * y + beta).numpy()\n", "return a torch tensor"),
        ("float32 result", _LN + "    y = (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)\n"
         "    return (gamma * y + beta).float()\n", "float32 keeps only about 7 digits of each entry"),
        ("no keepdim", "def layer_norm(x, gamma, beta, eps):\n    mean = x.mean(dim=-1)\n"
         "    return gamma * (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False) + eps) + beta\n",
         "lost its last dimension"),
        ("gamma through .data", _LN + "    y = (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)\n"
         "    return gamma.data * y + beta\n", "no gradient reaches gamma"),
        ("x rebuilt with torch.tensor", "def layer_norm(x, gamma, beta, eps):\n    x = torch.tensor(x.tolist(), dtype=x.dtype)\n"
         "    mean = x.mean(dim=-1, keepdim=True)\n"
         "    return gamma * (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps) + beta\n",
         "no gradient reaches x through them"),
        ("NumPy detour", _LN + "    y = (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)\n"
         "    return torch.from_numpy((gamma * y + beta).numpy())\n", "Autograd cannot follow a detour through NumPy"),
        ("torch's own LayerNorm", "def layer_norm(x, gamma, beta, eps):\n"
         "    return F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)\n", "calls one of torch's own normalisations"),
        ("group_norm", "def layer_norm(x, gamma, beta, eps):\n    d = x.shape[-1]\n"
         "    return F.group_norm(x.reshape(-1, d, 1), 1, eps=eps).reshape(x.shape) * gamma + beta\n",
         "group_norm, instance_norm"),
        ("one token cut off", _LN.replace("def layer_norm(x, gamma, beta, eps):\n",
                                          "def layer_norm(x, gamma, beta, eps):\n    x = x.detach() if x.dim() == 1 else x\n")
         + "    return gamma * (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps) + beta\n",
         "one token x = [1, -2, 0.5, 4, 0], backward pass"),
        ("eps ignored", _LN + "    return gamma * (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + 1e-5) + beta\n",
         "does not use the eps it was given"),
        ("eps squared", _LN + "    return gamma * (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps ** 2) + beta\n",
         "eps is squared"),
        ("native_layer_norm", "def layer_norm(x, gamma, beta, eps):\n"
         "    return torch.native_layer_norm(x, x.shape[-1:], gamma, beta, eps)[0]\n", "native_layer_norm, rms_norm"),
        ("aten's layer_norm", "def layer_norm(x, gamma, beta, eps):\n"
         "    return torch.ops.aten.layer_norm(x, list(x.shape[-1:]), gamma, beta, eps)\n", "by any route"),
        ("rounded", _LN + "    y = gamma * (x - mean) / torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps) + beta\n"
         "    return torch.round(y, decimals=3)\n", "rounded to 3 decimals"),
    ]),
    ExerciseCases(ex.gradient_check, NOTEBOOK, "gradient_check", wrong=[
        ("one-sided", _GC + "        out[i] = (f((flat + step).reshape(x.shape)) - f(x.detach())) / h\n"
         "    return leaf.grad, out.reshape(x.shape)\n", "one-sided, (f(x + h e_i) - f(x)) / h"),
        ("divided by h", _GC + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / h\n"
         "    return leaf.grad, out.reshape(x.shape)\n", "divide by 2h"),
        ("float32", _GC + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n"
         "    return leaf.grad.float(), out.reshape(x.shape).float()\n", "is float32: keep it in float64. In float32 a difference"),
        ("value not gradient", _GC + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n"
         "    return torch.full_like(x, float(f(x))), out.reshape(x.shape)\n", "holds f(x) itself"),
        ("all entries at once", "def gradient_check(f, x, h):\n"
         "    leaf = x.detach().clone().requires_grad_(True)\n    f(leaf).backward()\n"
         "    slope = (f(x + h) - f(x - h)) / (2 * h)\n    return leaf.grad, torch.full_like(x, float(slope))\n",
         "moved all entries of x at once"),
        ("one result", "def gradient_check(f, x, h):\n    leaf = x.detach().clone().requires_grad_(True)\n"
         "    f(leaf).backward()\n    return leaf.grad\n", "should return two tensors"),
        ("cast to float32 inside", _GC.replace("flat = x.detach().flatten()", "flat = x.detach().flatten().float()")
         .replace("out = torch.zeros_like(flat)", "out = torch.zeros_like(flat, dtype=torch.float64)")
         + "        out[i] = float(f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n"
         "    return leaf.grad, out.reshape(x.shape)\n", "rounding"),
        ("requires_grad on the caller's x", "def gradient_check(f, x, h):\n    x.requires_grad_(True)\n"
         "    f(x).backward()\n    flat = x.detach().flatten()\n    out = torch.zeros_like(flat)\n"
         "    for i in range(flat.numel()):\n        step = torch.zeros_like(flat)\n        step[i] = h\n"
         "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n"
         "    return x.grad, out.reshape(x.shape)\n", "switched on requires_grad"),
        ("three results", _GC + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n"
         "    return leaf.grad, out.reshape(x.shape), h\n", "it returned a tuple of 3 items"),
        ("a fixed step", _GC.replace("step[i] = h", "step[i] = 1e-6")
         + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / 2e-6\n"
         "    return leaf.grad, out.reshape(x.shape)\n", "does not use the step h it was given"),
        ("autograd's gradient twice", _GC + "        pass\n    return leaf.grad, leaf.grad.clone()\n",
         "autograd's gradient returned twice"),
        ("the pair swapped", _GC + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n"
         "    return out.reshape(x.shape), leaf.grad\n", "you returned the pair in the wrong order"),
        ("a finite difference for both", _GC.replace("    f(leaf).backward()\n", "") + "        out[i] = (f((flat + step)"
         ".reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n    return out.reshape(x.shape).clone(), "
         "out.reshape(x.shape)\n", "your autograd gradient matches the central difference"),
        ("a finite difference with its own step for autograd", _GC.replace("    f(leaf).backward()\n", "")
         + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n"
         "    fine = torch.stack([(f(x + 1e-5 * e) - f(x - 1e-5 * e)) / 2e-5 for e in torch.eye(x.numel(), "
         "dtype=x.dtype)])\n    return fine, out.reshape(x.shape)\n", "your autograd gradient is near the exact one"),
        ("rounded to 6 decimals", _GC + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step)"
         ".reshape(x.shape))) / (2 * h)\n    return leaf.grad, torch.round(out.reshape(x.shape), decimals=6)\n",
         "rounded to 6 decimals"),
        ("the graph cut by .item()", _GC.replace("    f(leaf).backward()\n",
         "    torch.tensor(f(leaf).item(), requires_grad=True).backward()\n")
         + "        out[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * h)\n"
         "    return leaf.grad, out.reshape(x.shape)\n", "leaf.grad stays None"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)


def test_the_gradients_written_by_hand_agree_with_autograd():
    for f, x, _h, _shown in ex._gradient_cases():
        leaf = x.clone().requires_grad_(True)
        f(leaf).backward()
        assert torch.allclose(leaf.grad, ex._GRADIENTS[f](x), rtol=1e-12, atol=1e-12)
