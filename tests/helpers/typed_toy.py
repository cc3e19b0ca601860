"""The toy problem (tests/helpers/toy_problem.py, minimum-cost cover) declared through the typed
contract, as a new problem is: one module holding what a problem's model and heuristics modules
declare (:mod:`dmlopt.contract`). tests/core/test_new_problem.py registers it by an entry point
alone and checks that the contract tests, ``dmlopt list``, solve, heuristic and bound serve it.
"""

from __future__ import annotations

import pydantic

from dmlopt.bounds import lp_relaxation
from dmlopt.contract import Formulation, Generator, Heuristic, NoOptions, Options, Size
from tests.helpers import toy_problem as _toy
from tests.helpers.toy_problem import Instance, Solution, decode, evaluate, warm_start

__all__ = ["Instance", "Solution", "decode", "evaluate", "warm_start"]

TITLE = "Minimum-cost cover (test only, typed)"
PAPER = "none"
SENSE = "min"

FORMULATIONS = {
    "paper": Formulation(_toy._build, _toy._size, "choose items of total weight at least the "
                         "need at least cost"),
}


class RandomParams(Options):
    n: int = pydantic.Field(8, ge=1, le=16, description="items")


def _generate(*, seed: int = 0, n: int = 8) -> Instance:
    return _toy.generate_random(seed=seed, n=n)


GENERATORS = {
    "random": Generator(_generate, RandomParams, lambda p: Size(64.0 * p.n, 10.0 * p.n),
                        "random costs and weights in 1..19, need half the total weight"),
}

EXAMPLE = {"generator": "random", "n": 6}


def _linear(inst: Instance, options: Options) -> Size:
    n = len(inst.cost)
    return Size(64.0 * n, 10.0 * n * max(n, 1).bit_length())


HEURISTICS = {
    "all": Heuristic(_toy.all_items, NoOptions, _linear, "every item"),
    "greedy": Heuristic(_toy.greedy, NoOptions, _linear,
                        "items by cost per weight until the need is met"),
}
RECOMMENDED = "greedy"

BOUNDS = {"lp": lp_relaxation("paper")}
RECOMMENDED_BOUND = "lp"
