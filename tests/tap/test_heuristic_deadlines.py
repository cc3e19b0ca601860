"""Limits that hold at every size (issue 51, item 3), TAP's local search: the descent looks at
the clock before every swap, so a deadline that has passed stops even the first descent, with a
feasible assignment (the mechanism on small sizes, not a wall-clock figure)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import tap as H
from dmlopt.heuristics.tap import search as ts


def _inst(m: int, n: int, seed: int):
    return dmlopt.generate("tap", {"generator": "random", "m": m, "n": n}, seed=seed)


@pytest.mark.parametrize("exact", [True, False])
def test_descent_past_its_deadline_returns_its_start(exact):
    """With the deadline passed the descent takes no swap; without one it improves the same
    start (so the stop is the deadline's doing). Both integer data (incremental gains) and
    inexact data (full recomputation) are covered."""
    inst = _inst(12, 12, 4)
    traffic = inst.traffic if exact else np.asarray(inst.traffic, float) * (1 + 1e-3 * np.pi)
    qap = ts.padded(traffic, inst.distance, inst.K)
    perm = np.random.default_rng(1).permutation(qap.size)
    cost = ts.total(qap, perm)
    got, got_cost = ts.descent(qap, perm, cost, time.perf_counter() - 1.0)
    assert np.array_equal(got, perm) and got_cost == cost
    free, free_cost = ts.descent(qap, perm, cost)
    assert free_cost < cost - 1e-9
    later, later_cost = ts.descent(qap, perm, cost, time.perf_counter() + 3600.0)
    assert np.array_equal(later, free) and later_cost == free_cost


def test_local_search_stopped_in_its_first_descent_keeps_the_start():
    """A limit shorter than one swap: the search returns its start, which the evaluator finds
    feasible; with no limit the same start is improved."""
    inst = _inst(20, 20, 2)
    start = H.random_assignment(inst, seed=3)
    cut = H.local_search(inst, seed=3, start=start, time_limit=1e-9)
    assert list(cut.assignment) == list(start.assignment)
    assert dmlopt.evaluate(inst, cut).feasible
    full = H.local_search(inst, seed=3, start=start, restarts=0)
    assert dmlopt.evaluate(inst, full).objective < dmlopt.evaluate(inst, start).objective


def _tabu_case(m: int = 14, seed: int = 6):
    inst = _inst(m, m, seed)
    qap = ts.padded(inst.traffic, inst.distance, inst.K)
    return inst, qap, np.random.default_rng(2).permutation(qap.size)


@pytest.mark.skipif(not ts.has_numba(), reason="the compiled kernel needs numba")
def test_tabu_in_chunks_is_the_one_run_when_the_deadline_does_not_bind(monkeypatch):
    """Chunks of 7 iterations with a far deadline: the same best permutation and cost as one
    kernel run (numba's generator carries over between chunks)."""
    _, qap, perm = _tabu_case()
    one = ts.robust_tabu(qap, perm, np.random.default_rng(0), 500)
    monkeypatch.setattr(ts, "tabu_chunk", lambda size: 7)
    chunked = ts.robust_tabu(qap, perm, np.random.default_rng(0), 500,
                             deadline=time.perf_counter() + 3600.0)
    assert np.array_equal(one[0], chunked[0]) and one[1] == chunked[1]


@pytest.mark.skipif(not ts.has_numba(), reason="the compiled kernel needs numba")
def test_tabu_stops_after_the_chunk_in_which_the_deadline_passes(monkeypatch):
    """A clock that runs out after the first look: one chunk runs, then the search stops with
    its best; a deadline already passed runs no chunk and returns the start."""
    inst, qap, perm = _tabu_case()
    kernel = ts._tap_kernel()
    calls = []
    run = kernel.rots_run
    monkeypatch.setattr(kernel, "rots_run", lambda *a: calls.append(a[-3:]) or run(*a))
    monkeypatch.setattr(ts, "tabu_chunk", lambda size: 5)
    looks = iter([False] + [True] * 10)
    monkeypatch.setattr(ts, "_past", lambda deadline: next(looks))
    best, cost = ts.robust_tabu(qap, perm, np.random.default_rng(0), 500, deadline=0.0)
    assert [c[:2] for c in calls] == [(1, 5)]
    assert cost == ts.total(qap, best) <= ts.total(qap, perm)
    monkeypatch.undo()
    best, cost = ts.robust_tabu(qap, perm, np.random.default_rng(0), 500,
                                deadline=time.perf_counter() - 1.0)
    assert np.array_equal(best, perm) and cost == ts.total(qap, perm)
    sol = H.tabu(inst, seed=1, time_limit=1e-9)
    assert dmlopt.evaluate(inst, sol).feasible


class _Jumps:
    """A ``time`` stand-in whose ``perf_counter`` advances 100 s per look: the start's
    construction seems to take the whole limit."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 100.0
        return self.now


@pytest.mark.parametrize("name", ["local_search", "tabu"])
def test_a_start_that_takes_the_whole_limit_leaves_no_search(monkeypatch, name):
    """The limit covers the start's construction: when it has used the limit up, the search
    returns the start (CLE's, feasible); without a limit the same start is improved."""
    inst = _inst(20, 20, 2)
    cle = H.cle(inst, seed=3)
    free = getattr(H, name)(inst, seed=3, start="cle")
    monkeypatch.setattr(H, "time", _Jumps())
    cut = getattr(H, name)(inst, seed=3, start="cle", time_limit=5.0)
    assert list(cut.assignment) == list(cle.assignment)
    assert dmlopt.evaluate(inst, cut).feasible
    assert dmlopt.evaluate(inst, free).objective < dmlopt.evaluate(inst, cle).objective


def test_rts_limit_covers_its_padding_and_kernels(monkeypatch):
    """``rts``'s clock starts before the padded QAP is built and its kernels are loaded: when
    the padding seems to take the whole limit, it returns its random start unimproved (a TAP
    instance with m = n = 600 spent 1.7 s there on a 2 s limit on a loaded machine)."""
    from dmlopt.heuristics.tap import robust_tabu as rt

    inst = _inst(20, 20, 2)
    qap = ts.padded(inst.traffic, inst.distance, inst.K)
    start = np.random.default_rng(3).permutation(qap.size)
    start_cost = ts.total(qap, start)
    free = rt.rts(inst, seed=3, iterations=2000)
    assert dmlopt.evaluate(inst, free).objective < start_cost

    class Clock:  # the real clock, 100 s ahead once the padding has been built
        offset = 0.0

        def perf_counter(self) -> float:
            return time.perf_counter() + self.offset

    clock, padded = Clock(), ts.padded

    def slow_padded(*args, **kwargs):
        clock.offset = 100.0
        return padded(*args, **kwargs)

    monkeypatch.setattr(rt, "time", clock)
    monkeypatch.setattr(ts, "padded", slow_padded)
    cut = rt.rts(inst, seed=3, time_limit=5.0)
    assert dmlopt.evaluate(inst, cut).objective == pytest.approx(start_cost)
