"""RAR (paper 003): ``rdda-ls``, RDDA with blocking by choice from several starts, then moves."""

from __future__ import annotations

import pytest

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.heuristics.rar import ORDERS, rdda, rdda_ls
from dmlopt.models import rar
from tests.helpers.rar import TINY, _brute_force


def _mincu(spec: dict) -> rar.Instance:
    return rar.generate_random(scheme="MinCU", **spec)


@pytest.mark.parametrize("seed", range(8))
def test_feasible_and_never_worse_than_break_even_random(seed):
    """Every solution is feasible by the evaluator, and eq. (4) is at most that of
    ``rdda(block="break-even")`` (the first start); catches a move that raises eq. (4) or
    breaks a capacity, and a start list that loses the break-even run."""
    inst = dmlopt.generate("rar", {"generator": "random", "scheme": "MinCU", "requests": 8,
                                   "slots": 6}, seed=seed)
    res = dmlopt.heuristic(inst, "rdda-ls")
    assert res.status == "feasible"
    ev = rar.evaluate(inst, res.solution)
    assert ev.feasible and ev.objective == pytest.approx(res.objective)
    ref = rar.evaluate(inst, rdda(inst, block="break-even")).objective
    assert res.objective <= ref + 1e-12


@pytest.mark.parametrize(("generator", "requests", "seed"), [
    ("cpn6", 10, 0), ("cpn6", 12, 1), ("cpn38", 50, 0),
])
def test_never_worse_than_break_even_networks(generator, requests, seed):
    # cpn38 with 50 requests, seed 3, is checked by the next test, which asserts more; 50
    # requests here (was 100: 5.3 CPU s against 2.0): rdda-ls still moves on it (0.11718
    # against break-even's 0.11751), so a worse-than-start move is still seen
    inst = dmlopt.generate("rar", {"generator": generator, "requests": requests,
                                   "scheme": "MinCU"}, seed=seed)
    res = dmlopt.heuristic(inst, "rdda-ls")
    assert res.status == "feasible"
    ref = dmlopt.heuristic(inst, "rdda", block="break-even").objective
    assert res.objective <= ref + 1e-12


def test_strictly_better_than_break_even_on_cpn38():
    """The starts and moves are not idle: on 50 requests of the 38-node network (seed 3: 0.1234
    against 0.1272; was 150 requests, 0.3347 against 0.3401, 6.1 CPU s against 1.4) rdda-ls is
    feasible and lowers eq. (4) below break-even RDDA (catches starts or moves that never
    change anything)."""
    inst = dmlopt.generate("rar", {"generator": "cpn38", "requests": 50, "scheme": "MinCU"},
                           seed=3)
    res = dmlopt.heuristic(inst, "rdda-ls")
    assert res.status == "feasible"
    ref = dmlopt.heuristic(inst, "rdda", block="break-even").objective
    assert res.objective < ref - 1e-6


def test_single_start_without_moves_is_break_even():
    """orders=arrival, keys=rdda, passes=0 is exactly RDDA with block="break-even"."""
    for seed in range(3):
        inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 10, "scheme": "MinCU"},
                               seed=seed)
        assert rdda_ls(inst, orders=["arrival"], keys=["rdda"], passes=0) == \
            rdda(inst, block="break-even")


@pytest.mark.parametrize("spec", TINY)
def test_never_below_brute_force_optimum(spec):
    """On the tiny instances of helpers_rar the brute force (own bookkeeping, no evaluator)
    is the optimum: rdda-ls, scored by the evaluator, never beats it (catches an evaluator or
    CU bookkeeping that undercounts the peaks of moved requests)."""
    inst = _mincu(spec)
    best = _brute_force(inst)["MinCU"]
    res = dmlopt.heuristic(inst, "rdda-ls")
    assert res.status == "feasible"
    assert res.objective >= best - 1e-9


def test_bad_input():
    inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 4, "scheme": "MinT"},
                           seed=0)
    with pytest.raises(InstanceError, match="scheme"):
        rdda_ls(inst)
    mincu = dmlopt.generate("rar", {"generator": "cpn6", "requests": 4, "scheme": "MinCU"},
                            seed=0)
    with pytest.raises(InstanceError, match="orders"):
        rdda_ls(mincu, orders=[])
    with pytest.raises(InstanceError, match="keys"):
        rdda_ls(mincu, keys=["fastest"])
    with pytest.raises(dmlopt.errors.DmloptError, match="orders"):
        dmlopt.heuristic(mincu, "rdda-ls", orders=["sideways"])
    assert set(ORDERS) == {"arrival", "fewest", "window", "density"}
