"""A toy problem registered only by the core tests: minimum-cost cover.

Choose items (cost c_i, weight w_i) with total weight >= W at minimum cost. Small enough to
brute-force, with deliberately wrong formulations to prove that dmlopt.solve catches a model
that disagrees with the evaluator.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

import pydantic

from dmlopt.evaluation import Evaluation
from dmlopt.validation import Frozen, rule

NAME = "toy"
TITLE = "Minimum-cost cover (test only)"
PAPER = "none"
SENSE = "min"


class Instance(Frozen):
    problem: Literal["toy"] = "toy"
    name: str = ""
    cost: list[float]
    weight: list[float]
    need: float

    @pydantic.model_validator(mode="after")
    def _same_length(self) -> Instance:
        if len(self.cost) != len(self.weight):
            raise rule("weight", len(self.weight), f"must have {len(self.cost)} entries")
        return self


class Solution(Frozen):
    problem: Literal["toy"] = "toy"
    chosen: list[int]


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    bad = [i for i in solution.chosen if not 0 <= i < len(instance.cost)]
    if bad:
        return Evaluation(float("inf"), False, (f"chosen: {bad[0]} is not an item",))
    weight = sum(instance.weight[i] for i in solution.chosen)
    cost = sum(instance.cost[i] for i in solution.chosen)
    violations = () if weight >= instance.need - 1e-9 else (f"weight {weight} < {instance.need}",)
    return Evaluation(cost, not violations, violations, {"weight": weight})


def brute_force(instance: Instance) -> float:
    best = float("inf")
    n = len(instance.cost)
    for bits in itertools.product((0, 1), repeat=n):
        chosen = [i for i in range(n) if bits[i]]
        ev = evaluate(instance, Solution(chosen=chosen))
        if ev.feasible:
            best = min(best, ev.objective)
    return best


def _build(instance: Instance, factor: float = 1.0, shift: float = 0.0) -> Any:
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, len(instance.cost) - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.obj = pyo.Objective(expr=factor * sum(instance.cost[i] * m.x[i] for i in m.I) + shift)
    m.cover = pyo.Constraint(expr=sum(instance.weight[i] * m.x[i] for i in m.I) >= instance.need)
    return m


def _size(instance: Instance) -> tuple[int, int]:
    return len(instance.cost), 1


FORMULATIONS = {
    "paper": (lambda inst: _build(inst), _size),
    "underprice": (lambda inst: _build(inst, factor=0.5), _size),
    "overprice": (lambda inst: _build(inst, shift=-100.0), _size),
}


def build(instance: Instance, formulation: str = "paper") -> Any:
    return FORMULATIONS[formulation][0](instance)


def estimate_size(instance: Instance, formulation: str = "paper") -> tuple[int, int]:
    return FORMULATIONS[formulation][1](instance)


def decode(model: Any, instance: Instance) -> Solution:
    return Solution(chosen=[i for i in model.I if (model.x[i].value or 0) > 0.5])


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    for i in model.I:
        model.x[i].set_value(1.0 if i in solution.chosen else 0.0)


def generate_random(*, seed: int = 0, n: int = 8) -> Instance:
    import numpy as np

    rng = np.random.default_rng(seed)
    cost = rng.integers(1, 20, n).astype(float).tolist()
    weight = rng.integers(1, 20, n).astype(float).tolist()
    return Instance(name=f"toy-{n}-{seed}", cost=cost, weight=weight, need=sum(weight) / 2)


GENERATORS = {"random": generate_random}


def all_items(instance: Instance, *, seed: int = 0) -> Solution:
    return Solution(chosen=list(range(len(instance.cost))))


def nothing(instance: Instance, *, seed: int = 0) -> Solution:
    return Solution(chosen=[])


def greedy(instance: Instance, *, seed: int = 0, reverse: bool = False) -> Solution:
    order = sorted(range(len(instance.cost)),
                   key=lambda i: instance.cost[i] / instance.weight[i], reverse=reverse)
    chosen, weight = [], 0.0
    for i in order:
        if weight >= instance.need:
            break
        chosen.append(i)
        weight += instance.weight[i]
    return Solution(chosen=chosen)


HEURISTICS = {"all": all_items, "nothing": nothing, "greedy": greedy}
