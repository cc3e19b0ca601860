"""Limits that hold at every size (issue 51, item 3), TAP's ``glb``: the cost matrices and the
assignment problems look at the clock as they go; stopped, the assignment problem gives the
dual value of its potentials (a valid lower bound), and the bound is never above the optimum.
The clock is a counter here (the mechanism, not a wall-clock figure)."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import dmlopt
from dmlopt.models.tap import bounds as B


class _Clock:
    """A ``time`` stand-in whose ``perf_counter`` advances one unit per look."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(B, "time", SimpleNamespace(perf_counter=c.perf_counter))
    monkeypatch.setattr(B, "_SMALL_LAP", 0)  # every problem through the resumable kernel
    return c


@pytest.mark.parametrize(("m", "n", "kc", "seed"), [(12, 12, 1, 0), (9, 4, 3, 1), (7, 5, 2, 2),
                                                    (30, 30, 1, 3)])
def test_resumable_lap_is_exact_and_its_stops_are_bounds(clock, m, n, kc, seed):
    rng = np.random.default_rng(seed)
    costs = rng.integers(0, 50, size=(m, n)).astype(float)
    wide = np.repeat(costs, kc, axis=1)
    r, c = linear_sum_assignment(wide)
    optimum = float(wide[r, c].sum())
    value, vm = B._lap(costs, kc, deadline=math.inf)
    assert value == optimum and vm is not None
    assert np.bincount(vm, minlength=n).max() <= kc
    for stop in range(1, m + 1):  # the deadline passes before row ``stop``
        clock.now = 0.0
        value, vm = B._lap(costs, kc, deadline=stop - 0.5)
        assert vm is None and value <= optimum + 1e-9, (stop, value, optimum)
    assert value >= float(costs.min(axis=1).sum()) - 1e-9  # at least the row minima


def test_glb_stopped_is_still_a_bound(clock):
    inst = dmlopt.generate("tap", {"generator": "random", "m": 9, "n": 5, "K": 2}, seed=4)
    full, _, _ = B.gilmore_lawler(inst)
    assert full > 0
    seen = set()
    for stop in itertools.chain(range(1, 40), [10**6]):
        clock.now = 0.0
        bound, vm, metrics = B.gilmore_lawler(inst, deadline=stop + 0.5)
        assert 0.0 <= bound <= full, (stop, bound, full)
        seen.add(metrics["stopped_by_time"])
        if vm is not None:
            ev = dmlopt.evaluate(inst, dmlopt.load_solution(inst, {"problem": "tap",
                                                               "assignment": vm.tolist()}))
            assert ev.feasible
    assert seen == {0.0, 1.0}
    assert B.gilmore_lawler(inst, deadline=10**9 + 0.5)[0] == full
    clock.now = 0.0
    assert B.gilmore_lawler(inst, deadline=0.5) == (0.0, None, {"stopped_by_time": 1.0})
