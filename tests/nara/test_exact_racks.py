"""Rack patterns for the exact method ``acceptance-sets`` (models/nara/racks.py): the
decision of a set against formulation ``offline-plain`` solved on its own, pattern checks
stopped by their limit never taken for proofs, and the time limit."""

from __future__ import annotations

import time

import numpy as np

import dmlopt
from dmlopt import solvers
from dmlopt.models.nara import exact, racks
from tests.nara.test_exact import SEEDS, episode


def random_sets(count: int, seed: int) -> list[tuple[int, list[int]]]:
    """(episode seed, members): random subsets of 3 or more requests of the tiny episodes."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(count):
        s = SEEDS[q % len(SEEDS)]
        n = len(episode(s).requests)
        k = int(rng.integers(3, n + 1))
        out.append((s, sorted(int(i) for i in rng.choice(n, size=k, replace=False))))
    return out


def fits_plain(seed: int, members: list[int]) -> bool:
    """Whether ``offline-plain`` (no cut, no symmetry row), solved by HiGHS on the restricted
    episode, accepts every member (the brute-force reference of test_exact.py's sets)."""
    sub = exact.sub_episode(episode(seed), members)
    best = dmlopt.solve(sub, "highs", formulation="offline-plain", threads=1, time_limit=120)
    assert best.status == "optimal"
    return best.objective == len(members)


_SETS = random_sets(16, 7)
_FITS = {q: fits_plain(s, m) for q, (s, m) in enumerate(_SETS)}


def test_rack_patterns_decide_like_offline_plain():
    # "fits" (with an allocation of exactly the members that the evaluator accepts) exactly
    # when offline-plain accepts every member, "cut" otherwise: a rack relaxation row that
    # removes a feasible rack aggregate, a pattern fixed on the wrong racks or a no-good that
    # removes more than its pattern answers "cut" for a set that fits; a missing row of the
    # pattern check decodes an allocation the evaluator refuses
    assert set(_FITS.values()) == {True, False}
    for q, (s, members) in enumerate(_SETS):
        inst = episode(s)
        outcome, sol, m = racks.decide_by_racks(inst, members, deadline=time.monotonic() + 120)
        assert outcome == (exact.FITS if _FITS[q] else exact.CUT), (s, members)
        assert m["unproven"] == 0
        if sol is not None:
            ev = dmlopt.evaluate(inst, sol)
            assert ev.feasible
            assert [i for i, al in enumerate(sol.allocations) if al is not None] == members


def test_timed_out_patterns_are_no_proof(monkeypatch):
    # every pattern check stopped by its limit: the loop excludes every pattern and ends with
    # the relaxation infeasible, which is no proof (a set the relaxation alone refutes is);
    # on the sets that fit, a program that took a time-out for an infeasible pattern would
    # answer "cut" there (an allocation exists)
    real = solvers.run

    def timeout(model, solver="highs", **kw):
        if model.name.startswith("nara_pattern"):
            return solvers.SolverRun("time_limit", False, None, None)
        return real(model, solver, **kw)

    monkeypatch.setattr(solvers, "run", timeout)
    exhausted = 0
    for q, (s, members) in enumerate(_SETS):
        outcome, sol, m = racks.decide_by_racks(episode(s), members,
                                                deadline=time.monotonic() + 120)
        assert sol is None
        # "cut" only from the rack relaxation alone, before any pattern was checked
        assert outcome == exact.UNDECIDED or (outcome == exact.CUT and m["patterns"] == 0)
        assert not (_FITS[q] and outcome == exact.CUT)
        if _FITS[q] and m["patterns"] > 0 and m["unproven"] == m["patterns"]:
            exhausted += 1
    assert exhausted > 0


def test_rack_patterns_time_limit():
    # a 28-request set of a 32-request alpha episode that neither the relaxation nor the first
    # pattern decides at once: a 1.5 s deadline (was 3 s, the slack kept) returns within it
    # plus one model build
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 32}, seed=0)
    members = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 17, 18, 20, 21, 23, 24, 25,
               26, 27, 28, 29, 30, 31]
    t = time.perf_counter()
    outcome, sol, _ = racks.decide_by_racks(inst, members, deadline=time.monotonic() + 1.5)
    assert time.perf_counter() - t < 1.5 + 6.0
    assert outcome == exact.UNDECIDED or (outcome == exact.FITS
                                          and dmlopt.evaluate(inst, sol).feasible)


def test_acceptance_sets_with_rack_patterns(monkeypatch):
    # the exact method deciding its open sets by rack patterns, with offline-search never
    # finding anything (every allocation then comes from a pattern check) from the empty
    # start: bound and evaluated count equal offline-plain's optimum on every episode; a
    # set_check that is not passed down (the MILP runs instead) leaves "patterns" unused and
    # fails the spy below
    from tests.nara.test_exact import empty_start, optimum

    empty_start(monkeypatch)
    monkeypatch.setattr(exact, "search_set", lambda *a, **k: None)
    calls = []
    real = racks.decide_by_racks

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(racks, "decide_by_racks", spy)
    for seed in SEEDS[:6]:
        inst = episode(seed)
        res = exact.acceptance_sets(inst, time_limit=120, set_check="racks")
        ev = dmlopt.evaluate(inst, res.solution)
        assert ev.feasible
        assert res.bound == optimum(seed) == ev.objective
        assert res.metrics["proven"] == 1.0
    assert calls


def test_set_check_option_is_validated():
    # an unknown way of deciding sets is refused by the options, naming the field
    import pydantic
    import pytest

    assert exact.ExactOptions().set_check == exact.SET_CHECK
    with pytest.raises(pydantic.ValidationError, match="set_check"):
        exact.ExactOptions(set_check="lp")
