"""Limits that hold at every size (issue 51, item 3), RAR's ``rdda-lns``: its start
(``rdda-pack``, :func:`pack_until`) looks at the clock before each request it places and
returns a feasible solution at the deadline (the mechanism on small sizes, not a wall-clock
figure)."""

from __future__ import annotations

import time

import dmlopt
from dmlopt.heuristics import rar_lns
from dmlopt.heuristics.rar_schemes import pack_until, rdda_pack


def _inst(seed: int = 1):
    return dmlopt.generate("rar", {"generator": "random", "scheme": "MaxR", "requests": 12,
                                   "slots": 10}, seed=seed)


def test_pack_without_deadline_is_rdda_pack():
    """No deadline (or one far away): the same solution as rdda-pack."""
    inst = _inst()
    ref = rdda_pack(inst)
    assert pack_until(inst, None) == ref
    assert pack_until(inst, time.perf_counter() + 3600.0) == ref


def test_pack_past_its_deadline_is_feasible_and_places_nothing():
    """A deadline already passed: the first start stops before its first request, and the
    result (every request blocked) is feasible by the evaluator, where rdda-pack deploys some."""
    inst = _inst()
    cut = pack_until(inst, time.perf_counter() - 1.0)
    assert len(cut.requests) == len(inst.requests)
    assert all(a is None for a in cut.requests)
    assert dmlopt.evaluate(inst, cut).feasible
    assert any(a is not None for a in rdda_pack(inst).requests)


def test_lns_with_a_limit_shorter_than_its_start_returns_a_feasible_solution():
    """rdda-lns's clock includes its start: a limit shorter than one placement still ends
    with a feasible solution, no sub-model solved."""
    inst = _inst(2)
    sol, stats = rar_lns.rdda_lns_search(inst, time_limit=1e-9)
    assert dmlopt.evaluate(inst, sol).feasible
    assert stats.rounds == 0
