#!/usr/bin/env python
"""Mutation testing of the exercise checkers: does each checker reject every small wrong
change of its own reference solution, and name it?

    python -m scripts.exercise_mutants [--verbose] [--all]   # also run by `make exercises-report`

For every exercise listed in tests/test_exercises_*.py, the code between ``# BEGIN
SOLUTION`` and ``# END SOLUTION`` of the reference (the lines a learner writes) is mutated
with the ``ast`` module, one change at a time: flip a sign, drop a term or a factor, swap
operands or arguments, change a constant, ``>`` to ``>=``, transpose a matrix operand,
reduce over another axis, a sum for a mean, and (for torch exercises) detach a tensor.

A mutant the checker rejects changed something it observes. Whether a mutant it accepts
changes the result is decided apart from the checker: the mutant and the reference are run
on the inputs the checker gave the reference, on those inputs slightly scaled and on
all-zero inputs, and compared by value and (for torch) by the gradients of a fixed random
projection. Where one check takes long, fewer mutants are tried, spread evenly over the
sites (about 3 CPU seconds of checking per exercise, so a loaded machine tries the same
mutants as a quiet one; ``--all`` tries every one, at most 40). Per
exercise the report prints the mutants tried, those that change
the result or gradients, how many the checker rejected, and how many of those got a
specific message rather than the fallback ("Work through one entry by hand", or a
checker that could not finish; ``--verbose`` lists those). It exits non-zero if a checker
accepts a mutant that changes the result, or if fewer than 80 % of all rejected mutants get
a specific message.
"""
from __future__ import annotations

import ast
import copy
import functools
import re
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

from scripts.exercises_report import load_cases
from tests.exercise_support import _namespace, solution_sources

MOST_MUTANTS = 40  # per exercise, spread evenly over the sites found
SECONDS_PER_EXERCISE = 3.0  # CPU seconds: fewer mutants (spread evenly) where one check takes long; --all tries every one
SPECIFIC_SHARE = 0.8
FALLBACKS = ("Work through one entry by hand", "the checker could not finish")
PROBE_TIME_LIMIT = 60.0  # only a mutant the checker accepted runs here, and those run as fast as the reference
_REDUCTIONS = {"mean": "sum", "sum": "mean"}


@dataclass(frozen=True)
class Mutant:
    label: str
    source: str  # the whole solution cell, mutated


# ----- making mutants ----------------------------------------------------------------------

def solution_lines(source: str) -> set[int]:
    """The line numbers (1-based) between each ``# BEGIN SOLUTION`` and ``# END SOLUTION``."""
    lines, inside = set(), False
    for number, line in enumerate(source.splitlines(), start=1):
        marker = line.strip()
        if marker == "# BEGIN SOLUTION":
            inside = True
        elif marker == "# END SOLUTION":
            inside = False
        elif inside:
            lines.add(number)
    return lines


def _preorder(node: ast.AST):
    """Every node in the order ast.NodeTransformer visits them."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _preorder(child)


def _attribute(value: ast.expr, name: str) -> ast.expr:
    return ast.Attribute(value=value, attr=name, ctx=ast.Load())


def _detach(node: ast.expr) -> ast.expr:
    return ast.Call(func=_attribute(node, "detach"), args=[], keywords=[])


def _changes(node: ast.AST, torch: bool) -> list[tuple[str, callable]]:
    """(label, make) for each mutation of ``node``; ``make(copy_of_node)`` returns the new node."""
    text = ast.unparse(node)[:50]
    found = []
    if isinstance(node, ast.BinOp):
        swap_op = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}.get(type(node.op))
        if swap_op is not None:
            found.append((f"flip the operator in `{text}`", lambda n, op=swap_op: ast.BinOp(n.left, op(), n.right)))
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            found.append((f"drop `{ast.unparse(node.right)[:40]}` from `{text}`", lambda n: n.left))
            found.append((f"drop `{ast.unparse(node.left)[:40]}` from `{text}`", lambda n: n.right))
        if isinstance(node.op, ast.Div):
            found.append((f"drop the divisor in `{text}`", lambda n: n.left))
        if isinstance(node.op, (ast.Sub, ast.Div, ast.MatMult, ast.Pow)):
            found.append((f"swap the operands of `{text}`", lambda n: ast.BinOp(n.right, n.op, n.left)))
        if isinstance(node.op, ast.MatMult):
            found.append((f"transpose the left operand of `{text}`",
                          lambda n: ast.BinOp(_attribute(n.left, "T"), n.op, n.right)))
        if torch:
            found.append((f"detach `{text}`", _detach))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        found.append((f"drop the minus of `{text}`", lambda n: n.operand))
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        other = {ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Eq: ast.NotEq,
                 ast.NotEq: ast.Eq}.get(type(node.ops[0]))
        if other is not None:
            found.append((f"change the comparison in `{text}`",
                          lambda n, op=other: ast.Compare(n.left, [op()], n.comparators)))
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        value = node.value
        new = value + 1 if isinstance(value, int) else (value * 2 if value else 1.0)
        found.append((f"change the constant {value!r} to {new!r}", lambda n, v=new: ast.Constant(v)))
    elif isinstance(node, ast.Call):
        if len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
            found.append((f"swap the first two arguments of `{text}`",
                          lambda n: ast.Call(n.func, [n.args[1], n.args[0], *n.args[2:]], n.keywords)))
        for position, keyword in enumerate(node.keywords):
            if keyword.arg in ("dim", "axis") and isinstance(keyword.value, (ast.Constant, ast.UnaryOp)):
                found.append((f"reduce over another axis in `{text}`",
                              lambda n, i=position: _other_axis(n, i)))
        if isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCTIONS:
            found.append((f"{_REDUCTIONS[node.func.attr]} instead of {node.func.attr} in `{text}`",
                          lambda n: ast.Call(_attribute(n.func.value, _REDUCTIONS[n.func.attr]), n.args,
                                             n.keywords)))
        if torch and not (isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "backward")):
            found.append((f"detach `{text}`", _detach))
    return found


def _other_axis(node: ast.Call, position: int) -> ast.Call:
    keyword = node.keywords[position]
    value = ast.literal_eval(keyword.value)
    keywords = list(node.keywords)
    keywords[position] = ast.keyword(keyword.arg, ast.Constant(0 if value != 0 else -1))
    return ast.Call(node.func, node.args, keywords)


class _Replace(ast.NodeTransformer):
    def __init__(self, target: int, make):
        self.target, self.make, self.count = target, make, -1

    def visit(self, node):
        self.count += 1
        if self.count == self.target:
            return ast.copy_location(self.make(node), node)
        return self.generic_visit(node)


def mutants(source: str, torch: bool, most: int = MOST_MUTANTS) -> list[Mutant]:
    """One-change mutants of the solution lines of ``source`` (a solution cell): all of
    them, or ``most`` spread evenly over them."""
    lines = solution_lines(source)
    tree = ast.parse(source)
    made, seen = [], set()
    for index, node in enumerate(_preorder(tree)):
        if getattr(node, "lineno", None) not in lines or isinstance(getattr(node, "ctx", None), ast.Store):
            continue
        for label, make in _changes(node, torch):
            changed = _Replace(index, make).visit(copy.deepcopy(tree))
            text = ast.unparse(ast.fix_missing_locations(changed))
            if text not in seen:
                seen.add(text)
                made.append(Mutant(f"line {node.lineno}: {label}", text))
    if len(made) > most:
        step = len(made) / most
        made = [made[int(i * step)] for i in range(most)]
    return made


# ----- deciding whether a mutant changes the result ------------------------------------------

def _torch():
    import torch
    return torch


def _flat(value) -> list:
    """A result as a list of float arrays (and text for what is not numbers), to compare."""
    torch = _torch()
    if isinstance(value, torch.nn.Module):
        return [f"module {type(value).__name__}"] + [(k, v.detach().double().numpy()) for k, v in
                                                      value.state_dict().items() if v.is_floating_point()]
    if isinstance(value, torch.Tensor):
        return [value.detach().double().numpy()]
    if isinstance(value, (list, tuple)):
        return [f"{type(value).__name__} of {len(value)}"] + [item for v in value for item in _flat(v)]
    try:
        return [np.asarray(value, dtype=np.float64)]
    except (TypeError, ValueError):
        return [repr(value)]


def _same(first: list, second: list) -> bool:
    if len(first) != len(second):
        return False
    for a, b in zip(first, second):
        if isinstance(a, tuple):
            if not isinstance(b, tuple) or a[0] != b[0]:
                return False
            a, b = a[1], b[1]
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            if a.shape != b.shape or not np.allclose(a, b, rtol=1e-7, atol=1e-10, equal_nan=True):
                return False
        elif a != b if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray) else True:
            return False
    return True


def _probes(args: tuple) -> list[tuple]:
    """The recorded inputs, the same slightly scaled (so ties and special values move), and
    with every float input set to zero (the boundary a `>` against `>=` differs at)."""
    torch = _torch()
    rng = np.random.default_rng(0)

    def scaled(value):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            noise = torch.as_tensor(rng.normal(size=tuple(value.shape)), dtype=value.dtype)
            return (value.detach() * (1 + 0.01 * noise)).requires_grad_(value.requires_grad)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return value * (1 + 0.01 * rng.normal(size=value.shape))
        return copy.deepcopy(value)

    def zeroed(value):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return torch.zeros_like(value.detach()).requires_grad_(value.requires_grad)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return np.zeros_like(value)
        return copy.deepcopy(value)
    return [args, tuple(scaled(a) for a in args), tuple(zeroed(a) for a in args)]


def _outcome(function, args: tuple) -> list:
    """What ``function`` gives for ``args``: its result, and the gradients of a fixed random
    projection of it with respect to every float tensor argument and module parameter."""
    from utils.exercises import core
    torch = _torch()
    args = copy.deepcopy(args)
    leaves = []
    for position, value in enumerate(args):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            leaf = value.detach().clone().requires_grad_()
            args = args[:position] + (leaf,) + args[position + 1:]
            leaves.append(leaf)
        elif isinstance(value, torch.nn.Module):
            leaves += [p for p in value.parameters() if p.requires_grad]
    try:
        with core._state_kept(), core._time_limit(PROBE_TIME_LIMIT), torch.enable_grad():
            result = function(*args)
            flat = _flat(result)
            tensors = [t for t in _tensors(result) if t.requires_grad]
            if tensors and leaves:
                generator = torch.Generator().manual_seed(1)
                total = sum((t * torch.randn(tuple(t.shape), generator=generator, dtype=t.dtype)).sum()
                            for t in tensors)
                grads = torch.autograd.grad(total, leaves, allow_unused=True)
                flat += ["gradients"] + [(torch.zeros_like(l) if g is None else g).detach().double().numpy()
                                         for l, g in zip(leaves, grads)]
        return flat
    except (Exception, core._TimeUp) as error:
        return [f"raised {type(error).__name__}"]


def _tensors(value) -> list:
    torch = _torch()
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _class_outcome(cls, init_args: tuple, inputs: list, state: dict | None) -> list:
    """For a module class: its fresh parameters, then its outputs and gradients on the
    recorded inputs with the reference's parameters moved off their starting values."""
    from utils.exercises import core
    torch = _torch()
    try:
        with core._state_kept(), core._time_limit(PROBE_TIME_LIMIT):
            torch.manual_seed(0)
            block = cls(*init_args).double()
            flat = _flat(block)
            if state is not None:
                block.load_state_dict(state)
            for x in inputs:
                flat += _outcome(block, (x.double(),))
                flat += _outcome(block, (torch.zeros_like(x).double(),))
        return flat
    except (Exception, core._TimeUp) as error:
        return [f"raised {type(error).__name__}"]


class Oracle:
    """Runs the checker on the reference once, recording its calls, and then tells whether
    a mutant behaves differently from the reference on those calls' inputs."""

    def __init__(self, exercise, reference):
        self.reference, self.calls, self.forwards = reference, [], []
        torch = _torch()
        if isinstance(reference, type):
            oracle = self

            class Recorded(reference):
                def __init__(self, *args):
                    oracle.calls.append(args)
                    super().__init__(*args)

                def forward(self, x):
                    oracle.forwards.append(x.detach().clone())
                    return super().forward(x)
            Recorded.__name__ = reference.__name__
            exercise.check(Recorded)
            self.calls, self.forwards = self.calls[:2], self.forwards[:3]
            self.states = []
            for args in self.calls:
                torch.manual_seed(0)
                block = reference(*args).double()
                generator = torch.Generator().manual_seed(2)
                with torch.no_grad():
                    for parameter in block.parameters():
                        parameter.add_(0.3 * torch.randn(parameter.shape, generator=generator, dtype=parameter.dtype))
                self.states.append(block.state_dict())
        else:
            @functools.wraps(reference)
            def recorded(*args):
                self.calls.append(copy.deepcopy(args))
                return reference(*args)
            exercise.check(recorded)
            self.calls = self.calls[:4]
        self.expected = self._outcomes(reference)

    def _outcomes(self, answer) -> list:
        if isinstance(self.reference, type):
            if not isinstance(answer, type):
                return ["not a class"]
            found = []
            for args, state in zip(self.calls, self.states):
                inputs = [x for x in self.forwards if x.shape[-1] == args[0]] if args and isinstance(args[0], int) \
                    else self.forwards
                found.append(_class_outcome(answer, args, inputs, state))
            return found
        return [_outcome(answer, probe) for args in self.calls for probe in _probes(args)]

    def uses_torch(self) -> bool:
        """Whether the exercise works on torch objects (then detaching is a mutation)."""
        torch = _torch()
        return isinstance(self.reference, type) or any(
            isinstance(value, (torch.Tensor, torch.nn.Module)) for args in self.calls for value in args)

    def changes(self, mutant) -> bool:
        return any(not _same(a, b) for a, b in zip(self.expected, self._outcomes(mutant)))


# ----- the report ---------------------------------------------------------------------------

def _solution_cell(notebook: str, name: str) -> tuple[list[str], int]:
    """The notebook's solution cells and the index of the one that defines ``name``."""
    sources = solution_sources(notebook)
    for index, source in enumerate(sources):
        if re.search(rf"^(def|class) {re.escape(name)}\b", source, re.M):
            return sources, index
    raise LookupError(f"no solution cell of {notebook} defines {name}")


def _define(sources: list[str], name: str):
    namespace = _namespace()
    for source in sources:
        exec(compile(source, "<mutant>", "exec"), namespace)
    return namespace[name]


def run_case(case, budget: float | None = None, clock=time.process_time) -> dict:
    """Mutants of one exercise and what its checker did with each. A mutant the checker
    rejects changed something the checker observes; one it accepts is run against the
    reference by the oracle, which tells whether it changes the result after all. With a
    ``budget``, one check's cost on ``clock`` sets how many mutants are tried: CPU seconds by
    default, which other work on the machine does not inflate as it does wall time."""
    sources, index = _solution_cell(case.notebook, case.name)
    start = clock()
    oracle = Oracle(case.exercise, _define(sources, case.name))  # one check, and the reference on its inputs
    most = MOST_MUTANTS if budget is None else max(6, min(MOST_MUTANTS, int(budget / max(clock() - start, 1e-9))))
    row = {"made": 0, "changed": 0, "rejected": 0, "specific": 0, "accepted": [], "fallback": []}
    for mutant in mutants(sources[index], oracle.uses_torch(), most):
        row["made"] += 1
        try:
            answer = _define(sources[:index] + [mutant.source] + sources[index + 1:], case.name)
        except Exception:  # noqa: BLE001 - a mutant that cannot even be defined is no test of the checker
            continue
        feedback = case.exercise.check(answer)
        if feedback.passed:
            if oracle.changes(answer):
                row["changed"] += 1
                row["accepted"].append(mutant.label)
            continue
        row["changed"] += 1
        row["rejected"] += 1
        if any(text in feedback.message for text in FALLBACKS):
            row["fallback"].append(f"{mutant.label}: {feedback.message[:100]}")
        else:
            row["specific"] += 1
    return row


def report(cases, verbose: bool = False, budget: float | None = SECONDS_PER_EXERCISE) -> tuple[list[str], int]:
    """The table's lines and the number of failures (an accepted mutant that changes the
    result; an exercise below the specific-message share)."""
    lines = [f"{'exercise':<58} {'tried':>5} {'changed':>7} {'rejected':>8} {'specific':>8}"]
    failures, totals = 0, np.zeros(4, dtype=int)
    for case in cases:
        row = run_case(case, budget)
        counts = np.array([row["made"], row["changed"], row["rejected"], row["specific"]])
        totals += counts
        failures += len(row["accepted"])
        lines.append(f"{'✗' if row['accepted'] else '✓'} {case.exercise.title[:56]:<56} {counts[0]:>5} "
                     f"{counts[1]:>7} {counts[2]:>8} {counts[3]:>8}")
        lines += [f"    ACCEPTED although it changes the result: {label}" for label in row["accepted"]]
        lines += [f"    fallback message: {text}" for text in row["fallback"]] if verbose else []
    share = totals[3] / totals[2] if totals[2] else 1.0
    lines.append(f"{'all exercises':<58} {totals[0]:>5} {totals[1]:>7} {totals[2]:>8} {totals[3]:>8}")
    lines.append(f"{share:.0%} of the rejected mutants got a specific message (at least {SPECIFIC_SHARE:.0%} wanted).")
    if share < SPECIFIC_SHARE:
        failures += 1
    return lines, failures


def main() -> int:
    warnings.simplefilter("ignore")  # the mutants' own overflow and autograd warnings
    np.seterr(all="ignore")
    start = time.perf_counter()
    lines, failures = report(load_cases(), verbose="--verbose" in sys.argv,
                             budget=None if "--all" in sys.argv else SECONDS_PER_EXERCISE)
    print("\n".join(lines))
    print(f"\nMutation testing took {time.perf_counter() - start:.0f} s: "
          + ("every mutant that changes a result was rejected." if not failures else f"{failures} FAILURE(S)."))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
