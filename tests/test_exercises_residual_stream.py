"""Exercises of notebook 10: the reference passes, recorded wrong answers get their own message."""
from tests.exercise_support import ExerciseCases, enough_wrong_answers, reference_passes, wrong_answers_are_caught
from utils.exercises import residual_stream as ex

NOTEBOOK = "10_residual_stream.ipynb"

_LN = '''
def _ln(h, dim=-1, unbiased=False, eps=1e-5):
    mean = h.mean(dim=dim, keepdim=True)
    var = h.var(dim=dim, unbiased=unbiased, keepdim=True)
    return (h - mean) / torch.sqrt(var + eps)
'''


_LN_STD = """
def _ln_std(h):
    return (h - h.mean(dim=-1, keepdim=True)) / (h.std(dim=-1, unbiased=False, keepdim=True) + 1e-5)
"""

_LN_NO_KEEPDIM = """
def _ln(h):
    return (h - h.mean(dim=-1)) / torch.sqrt(h.var(dim=-1, unbiased=False) + 1e-5)
"""


def _sublayer(pre: str, post: str, ln: str = _LN) -> str:
    return ln + f'''
def sublayer_step(x, sublayer, norm):
    if norm == "pre":
        return {pre}
    return {post}
'''


def _variances(measure: str, *, step: str = "block(h)", keep_input: bool = True) -> str:
    """A stream_variances that records ``measure`` of the stream h (``before``: the previous h)."""
    return f'''
def stream_variances(x, blocks):
    h = x
    out = [{measure if keep_input else ""}][:{1 if keep_input else 0}]
    for block in blocks:
        before, h = h, {step}
        out.append({measure})
    return out
'''


CASES = [
    ExerciseCases(ex.sublayer_step, NOTEBOOK, "sublayer_step", wrong=[
        ("norm-swapped", _sublayer("_ln(x + sublayer(x))", "x + sublayer(_ln(x))"), "you placed LayerNorm as the"),
        ("no-residual", _sublayer("sublayer(_ln(x))", "_ln(sublayer(x))"), "without the residual connection"),
        ("normalised-skip", _sublayer("_ln(x) + sublayer(_ln(x))", "_ln(x + sublayer(x))"),
         "not its normalised copy"),
        ("normalised-write", _sublayer("x + sublayer(_ln(x))", "x + _ln(sublayer(x))"), "Post-LN normalises the sum"),
        ("batch-axis", _sublayer("x + sublayer(_ln(x, dim=0))", "_ln(x + sublayer(x), dim=0)"), "batch axis"),
        ("token-axis", _sublayer("x + sublayer(_ln(x, dim=1))", "_ln(x + sublayer(x), dim=1)"), "tokens axis"),
        ("unbiased", _sublayer("x + sublayer(_ln(x, unbiased=True))", "_ln(x + sublayer(x), unbiased=True)"),
         "divides by d - 1"),
        ("no-eps", _sublayer("x + sublayer(_ln(x, eps=0.0))", "_ln(x + sublayer(x), eps=0.0)"), "inside the square root"),
        ("eps-outside", _sublayer("x + sublayer(_ln_std(x))", "_ln_std(x + sublayer(x))", _LN_STD), "added eps to the standard deviation"),
        ("no-keepdim", _sublayer("x + sublayer(_ln(x))", "_ln(x + sublayer(x))", _LN_NO_KEEPDIM), "keepdim=True"),
        ("torch-layer-norm", 'def sublayer_step(x, sublayer, norm):\n    ln = nn.LayerNorm(x.shape[-1])\n'
         '    return x + sublayer(ln(x)) if norm == "pre" else ln(x + sublayer(x))\n', "are float64"),
        ("in-place", _sublayer("x.add_(sublayer(_ln(x)))", "_ln(x + sublayer(x))"), "in place"),
        ("stub", 'def sublayer_step(x, sublayer, norm):\n    raise NotImplementedError("Exercise 10.1: write your code here")\n',
         "Replace the `raise NotImplementedError`"),
        ("eps = 1e-12", _sublayer("x + sublayer(_ln(x, eps=1e-12))", "_ln(x + sublayer(x), eps=1e-12)"),
         "your eps is not 1e-5"),
        ("eps = 1e-4", _sublayer("x + sublayer(_ln(x, eps=1e-4))", "_ln(x + sublayer(x), eps=1e-4)"),
         "your eps is 0.0001, not 1e-5"),
        ("float32 detour", _sublayer("x + sublayer(F.layer_norm(x.float(), x.shape[-1:]).double())",
                                      "F.layer_norm((x + sublayer(x)).float(), x.shape[-1:]).double()"),
         "differs only at the level of rounding"),
        ("sublayer's write detached", _sublayer("x + sublayer(_ln(x)).detach()", "_ln(x + sublayer(x).detach())"),
         "no gradient reaches the sublayer's weight"),
    ]),
    ExerciseCases(ex.stream_variances, NOTEBOOK, "stream_variances", wrong=[
        ("rms", _variances("float(h.pow(2).mean().sqrt())"), "root mean square"),
        ("float32 detour", _variances("h.float().pow(2).mean().item()"), "differs from the right one only at the level of rounding"),
        ("no-input", _variances("float(h.pow(2).mean())", keep_input=False), "left out the stream before the first block"),
        ("writes", _variances("float((h - before).pow(2).mean())", keep_input=False), "each block's write"),
        ("torch-var", _variances("float(h.var())"), "you used .var()"),
        ("per-token", _variances("float(h.var(dim=-1, unbiased=False).mean())"), "about its own mean"),
        ("added-twice", _variances("float(h.pow(2).mean())", step="h + block(h)"), "you added h again"),
        ("never-updated", _variances("float(h.pow(2).mean())", step="block(x)"), "you passed x to every block"),
        ("whole-var", _variances("float(h.var(unbiased=False))"), "the variance about the stream's mean"),
        ("dict", "def stream_variances(x, blocks):\n    h, out = x, {0: float(x.pow(2).mean())}\n"
         "    for i, block in enumerate(blocks):\n        h = block(h)\n        out[i + 1] = float(h.pow(2).mean())\n"
         "    return out\n", "returned a dict"),
        ("generator", "def stream_variances(x, blocks):\n    def states(h):\n        yield h\n"
         "        for block in blocks:\n            h = block(h)\n            yield h\n"
         "    return (float(h.pow(2).mean()) for h in states(x))\n", "generator expression"),
        ("tensors", _variances("h.pow(2).mean()"), "not a number"),
    ]),
]

test_reference_passes = reference_passes(CASES)
test_wrong_answers = wrong_answers_are_caught(CASES)
test_enough = enough_wrong_answers(CASES)
