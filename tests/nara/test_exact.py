"""The exact method ``acceptance-sets`` of Nara (models/nara/exact.py): its optimum against
formulation ``offline-plain`` solved by HiGHS, undecided checks never taken for proofs, the
restricted episode against a brute force of the active sets, and the time limit."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dmlopt
from dmlopt.contract import Bound
from dmlopt.models import nara
from dmlopt.models.nara import exact
from dmlopt.models.nara import topology as topo


def tiny(requests: list[tuple[int, int, float, int]]) -> nara.Instance:
    """2 racks x 2 servers (10 CPU, 10 memory, access links 1.0)."""
    top = topo.fabric(racks=2, servers_per_rack=2, pods=2, fabrics_per_pod=1,
                      spines_per_plane=1, name="tiny")
    return nara.Instance(name="tiny", topology=top,
                         requests=[nara.Request(c=c, m=m, b=b, t=t) for c, m, b, t in requests])


def episode(seed: int, n: int = 7) -> nara.Instance:
    """Random tiny episodes where not every request fits (requests of 1-3 servers held 1-4
    steps on 4 servers)."""
    rng = np.random.default_rng(seed)
    return tiny([(int(rng.integers(4, 26)), int(rng.integers(4, 26)),
                  float(rng.integers(20, 101)) / 100, int(rng.integers(1, 5)))
                 for _ in range(n)])


SEEDS = range(10)

_OPT: dict[int, int] = {}


def optimum(seed: int) -> int:
    """The proven optimum of formulation ``offline-plain`` (no cut, no symmetry constraint),
    solved by HiGHS without the exact method (a formulation is named)."""
    if seed not in _OPT:
        res = dmlopt.solve(episode(seed), "highs", formulation="offline-plain", threads=1,
                           time_limit=120)
        assert res.status == "optimal"
        _OPT[seed] = int(round(res.objective))
    return _OPT[seed]


def empty_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """The method starts from the allocation that drops everything: every accepted request is
    then found by the loop itself, every target below the bound asked."""
    def start(instance, start, search_seconds):
        return nara.Solution(allocations=[None] * len(instance.requests)), 0.0

    monkeypatch.setattr(exact, "_start", start)


def weak_first_bound(monkeypatch: pytest.MonkeyPatch, inst: nara.Instance) -> None:
    """The first bound of ``inst`` is its number of requests (valid, and above the optimum on
    every episode here), so the loop must refute every target down to the optimum; the schedule
    bounds of other episodes (fit proofs, restricted episodes) are left as they are."""
    from dmlopt.models.nara import bounds as nb

    real = nb.schedule_bound

    def first(instance, **kw):
        res = real(instance, **kw)
        if instance is inst:
            return type(res)(float(len(inst.requests)), res.solution, res.metrics)
        return res

    monkeypatch.setattr(nb, "schedule_bound", first)


def active_brute(reqs: list[tuple[int, float]], j: int) -> set[int]:
    """Requests (arrival step, holding period) holding resources at step j."""
    return {q for q, (i, t) in enumerate(reqs) if i <= j < i + t}


def test_sub_episode_keeps_every_step():
    # at every step of the episode, the members active then are a subset of the members active
    # at some step of the restricted episode, and every step of the restricted episode holds
    # exactly the members active at that member's arrival: a restricted episode that kept the
    # original holding periods (or cut them at the next member) fails here
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(3, 12))
        inst = tiny([(5, 5, 0.5, int(rng.integers(1, 8))) for _ in range(n)])
        members = sorted(int(i) for i in rng.choice(n, size=int(rng.integers(1, n + 1)),
                                                    replace=False))
        sub = exact.sub_episode(inst, members)
        orig = [(i, inst.requests[i].t) for i in members]
        sub_sets = [{members[q] for q in act} for act in sub.active_sets()]
        for q, i in enumerate(members):
            assert sub_sets[q] == {members[p] for p in active_brute(orig, i)}
        for j in range(n):
            here = {members[p] for p in active_brute(orig, j)}
            assert any(here <= s for s in sub_sets) or not here


@pytest.mark.parametrize("weak", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_optimum_equals_offline_plain(seed, weak, monkeypatch):
    # from the empty allocation the loop must reach the optimum through the feasibility MILPs
    # and (from the weak first bound) refute every count above it: a cut that removes an
    # allocatable set gives a bound below the optimum, a set decoded wrongly an allocation the
    # evaluator refuses or one that accepts fewer
    empty_start(monkeypatch)
    inst = episode(seed)
    if weak:
        weak_first_bound(monkeypatch, inst)
    opt = optimum(seed)
    res = exact.acceptance_sets(inst, time_limit=120)
    ev = dmlopt.evaluate(inst, res.solution)
    assert ev.feasible
    assert res.bound == opt == ev.objective
    assert res.metrics["proven"] == 1.0


def test_the_loop_decides_sets_both_ways(monkeypatch):
    # from the weak first bound the loop refutes targets (the aggregate program with the cuts
    # proven infeasible) and reaches the optimum through the MILP: the optimum test above then
    # checks both sides, not only a start that happened to meet the bound
    empty_start(monkeypatch)
    seen = {"fit": 0.0, "schedule_cuts": 0.0, "milp": 0.0, "targets": 0.0}
    for seed in SEEDS:
        inst = episode(seed)
        weak_first_bound(monkeypatch, inst)
        m = exact.acceptance_sets(inst, time_limit=120).metrics
        for key in seen:
            seen[key] += m[key]
    assert seen["targets"] > 2 * len(SEEDS)
    assert seen["fit"] + seen["schedule_cuts"] + seen["milp"] > 0


def test_default_solve_is_proven_optimal():
    # dmlopt.solve with no formulation runs the method first: optimal, at the proven optimum
    for seed in SEEDS[:4]:
        res = dmlopt.solve(episode(seed), threads=1, time_limit=120)
        assert res.status == "optimal"
        assert res.objective == optimum(seed)
        assert "acceptance-sets" in res.message
        assert res.metrics["proven_acceptance-sets"] == 1.0


def undecided_milp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every feasibility MILP (and CP-SAT check) stops undecided (as at a time-out), the
    search of a set finds nothing and no schedule bound proves anything (so no fit proof
    either): only the aggregate rows remain proofs."""
    monkeypatch.setattr(exact, "allocate_set",
                        lambda instance, members, **kw: (exact.UNDECIDED, None))
    monkeypatch.setattr(exact, "search_set", lambda instance, members, **kw: None)
    from dmlopt.models.nara import bounds as nb
    from dmlopt.models.nara import cpsat

    # the CP-SAT set check (set_check "auto" with ortools installed) stops undecided too
    monkeypatch.setattr(cpsat, "allocate_set",
                        lambda instance, members, **kw: (exact.UNDECIDED, None))

    real = nb.schedule_bound

    def weak(instance, **kw):
        res = real(instance, **kw)
        return type(res)(float(len(instance.requests)), res.solution, res.metrics)

    monkeypatch.setattr(nb, "schedule_bound", weak)


def test_undecided_sets_are_no_proof(monkeypatch):
    # the bound must stay at or above the true optimum when the MILPs time out; the same loop
    # treating an undecided set as infeasible (the wrong program below) falls below it on some
    # episode, so this check would catch it
    empty_start(monkeypatch)
    undecided_milp(monkeypatch)
    for seed in SEEDS:
        res = exact.acceptance_sets(episode(seed), time_limit=60)
        assert res.bound >= optimum(seed)
        if res.metrics["proven"]:
            assert dmlopt.evaluate(episode(seed), res.solution).objective == res.bound
    real = exact.decide_set

    def wrong(instance, members, **kw):
        outcome, cut, sol, how = real(instance, members, **kw)
        if outcome == exact.UNDECIDED:
            return exact.CUT, sorted(members), None, "milp"
        return outcome, cut, sol, how

    monkeypatch.setattr(exact, "decide_set", wrong)
    # some episode falls below (any() stops at the first: the claim is "on some episode")
    assert any(exact.acceptance_sets(episode(seed), time_limit=60).bound < optimum(seed)
               for seed in SEEDS)


def test_optimal_only_with_both_sides_proven(monkeypatch):
    # with nothing decided by the checks, dmlopt.solve may call a result optimal only
    # when its objective is the proven optimum; a method that reports the incumbent's count
    # as its bound (an unproven side) is called optimal below the optimum on some episode
    # (netfit's count is below it on some)
    undecided_milp(monkeypatch)
    for seed in SEEDS[:5]:
        res = dmlopt.solve(episode(seed), threads=1, time_limit=60)
        assert res.bound >= optimum(seed)
        if res.status == "optimal":
            assert res.objective == optimum(seed)

    def unproven(instance, **kw):
        got = exact.acceptance_sets(instance, **kw, search_seconds=0)  # netfit's start
        count = dmlopt.evaluate(instance, got.solution).objective
        return type(got)(float(count), got.solution, got.metrics)

    monkeypatch.setitem(nara.BOUNDS, "acceptance-sets", Bound(
        unproven, exact.ExactOptions, exact._estimate, "wrong", exact=("offline",)))
    # called optimal below the optimum on some episode (any() stops at the first)
    assert any((r := dmlopt.solve(episode(seed), threads=1, time_limit=60)).status == "optimal"
               and r.objective < optimum(seed) for seed in SEEDS)


def test_time_limit_is_honoured():
    # a 32-request alpha episode is not decided in 1.5 s (nor in 3 s): the method returns
    # within the limit (plus the build of one model) with a valid bound (>= the best
    # allocation it found)
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 32}, seed=0)
    t = time.perf_counter()
    res = exact.acceptance_sets(inst, time_limit=1.5)
    assert res.metrics["proven"] == 0.0      # the limit, not a proof, ended the search
    assert time.perf_counter() - t < 1.5 + 5.0
    assert res.bound >= dmlopt.evaluate(inst, res.solution).objective


def test_feasibility_milp_of_a_set():
    # allocate_set says "fits" exactly for the sets whose restricted episode has the optimum
    # |S| (offline-plain, solved on its own), with an allocation accepting just those requests,
    # and "cut" for the others: an acceptance left free, a wrong restriction or a lost request
    # in the lifting fails here
    rng = np.random.default_rng(5)
    outcomes = set()
    for seed in SEEDS[:6]:
        inst = episode(seed)
        for _ in range(2):
            k = int(rng.integers(3, len(inst.requests) + 1))
            members = sorted(int(i) for i in rng.choice(len(inst.requests), size=k,
                                                        replace=False))
            sub = exact.sub_episode(inst, members)
            best = dmlopt.solve(sub, "highs", formulation="offline-plain", threads=1,
                                time_limit=120)
            assert best.status == "optimal"
            outcome, sol = exact.allocate_set(inst, members, time_limit=120)
            outcomes.add(outcome)
            assert outcome == (exact.FITS if best.objective == k else exact.CUT)
            if sol is not None:
                ev = dmlopt.evaluate(inst, sol)
                assert ev.feasible
                assert [i for i, al in enumerate(sol.allocations) if al is not None] == members
    assert outcomes == {exact.FITS, exact.CUT}
