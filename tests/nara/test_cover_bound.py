"""The cover bound of Nara (models/nara/fitcuts.py): fit proofs and cover cuts never cut off an
allocation, checked against exact optima of formulation ``offline-plain``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dmlopt
from dmlopt.models import nara
from dmlopt.models.nara import fitcuts
from dmlopt.models.nara import topology as topo


def tiny(requests: list[tuple[int, int, float, int]]) -> nara.Instance:
    """2 racks x 2 servers (10 CPU, 10 memory, access links 1.0)."""
    top = topo.fabric(racks=2, servers_per_rack=2, pods=2, fabrics_per_pod=1,
                      spines_per_plane=1, name="tiny")
    return nara.Instance(name="tiny", topology=top,
                         requests=[nara.Request(c=c, m=m, b=b, t=t) for c, m, b, t in requests])


def random_set(seed: int, k: int) -> nara.Instance:
    rng = np.random.default_rng(seed)
    return tiny([(int(rng.integers(3, 22)), int(rng.integers(3, 22)),
                  float(rng.integers(20, 101)) / 100, 1) for _ in range(k)])


def binding(seed: int) -> nara.Instance:
    rng = np.random.default_rng(seed)
    return tiny([(int(rng.integers(8, 26)), int(rng.integers(8, 26)),
                  float(rng.integers(30, 101)) / 100, int(rng.integers(2, 5)))
                 for _ in range(7)])


def exact(inst: nara.Instance) -> int:
    res = dmlopt.solve(inst, "highs", formulation="offline-plain", threads=1, time_limit=120)
    assert res.status == "optimal"
    return int(round(res.objective))


def exact_fit(inst: nara.Instance, members: list[int]) -> int:
    """Most requests of ``members`` held at once: the exact optimum of the one-step episode."""
    return exact(fitcuts.fit_episode(inst, members))


def test_fit_episode_holds_every_member_at_the_last_step():
    inst = random_set(0, 5)
    sub = fitcuts.fit_episode(inst, [4, 1, 3])
    assert [(r.c, r.m, r.b) for r in sub.requests] == [
        (inst.requests[i].c, inst.requests[i].m, inst.requests[i].b) for i in (4, 1, 3)]
    assert sub.active_sets()[-1] == [0, 1, 2]


def test_fit_proof_against_the_exact_optimum():
    # a fit proof that says "does not fit" for a set that fits (a relaxation too strong, the
    # safety margin the wrong way) gives a value below the exact optimum and fails here; the
    # proof must fire where the optimum is below the set's size on some sets, so a proof that
    # never fires (or one 1 % too strong) is caught by the equality count as well
    fired = equal = 0
    for seed in range(14):
        inst = random_set(seed, 3 + seed % 3)
        members = list(range(len(inst.requests)))
        opt = exact_fit(inst, members)
        b = fitcuts.fit_bound(inst, members, time_limit=30)
        assert b >= opt, (seed, b, opt)
        if b < len(members):
            fired += 1
            assert opt < len(members)
        if b == opt < len(members):
            equal += 1
            assert math.floor(0.99 * b) < opt
    assert fired >= 2 and equal >= 2, (fired, equal)


def test_minimal_cover_does_not_fit_and_is_minimal():
    found = 0
    for seed in range(14):
        inst = random_set(seed, 3 + seed % 3)
        members = list(range(len(inst.requests)))
        if fitcuts.fit_bound(inst, members, time_limit=30) >= len(members):
            continue
        cover = fitcuts.minimal_cover(inst, members, time_limit=30)
        assert set(cover) <= set(members)
        assert exact_fit(inst, cover) < len(cover)  # truly does not fit
        for i in cover:
            rest = [q for q in cover if q != i]
            assert fitcuts.fit_bound(inst, rest, time_limit=30) >= len(rest)
        found += 1
    assert found >= 2


@pytest.mark.parametrize("seed", range(6))
def test_cover_bound_between_the_optimum_and_aggregate(seed):
    inst = binding(seed)
    opt = exact(inst)
    b = dmlopt.bound(inst, "cover", time_limit=60, primal=False)
    agg = dmlopt.bound(inst, "aggregate", primal=False).bound
    assert opt <= b.bound <= agg == b.metrics["aggregate"]


def test_cover_bound_meets_the_optimum_below_aggregate():
    # on these episodes the cuts close the gap to the proven optimum: a bound 1 % too small
    # would fall below it, and a loop that adds no cut would stay at aggregate
    closed = 0
    for seed in range(6, 30):
        inst = binding(seed)
        b = dmlopt.bound(inst, "cover", time_limit=60, primal=False)
        if b.bound < b.metrics["aggregate"]:
            opt = exact(inst)
            assert b.bound >= opt
            closed += b.bound == opt
            if closed >= 2:
                break
    assert closed >= 2


def test_a_cut_generator_that_cuts_a_feasible_set_is_caught(monkeypatch):
    # the wrong program: a fit proof one request too strong (every set "proven" one short)
    real = fitcuts.fit_bound
    monkeypatch.setattr(fitcuts, "fit_bound",
                        lambda inst, members, **kw: real(inst, members, **kw) - 1)
    below = 0
    for seed in range(6):
        inst = binding(seed)
        b = fitcuts.cover_bound(inst, time_limit=60, primal=False).bound
        below += b < exact(inst)
        if below:  # the claim is "on some instance": the later ones cannot change it
            break
    assert below >= 1


def test_cuts_hold_for_every_allocator_on_alpha():
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha"}, seed=0)
    # the cut loop runs out any limit on this episode; 8 s find several cuts (30 s: a few more)
    bound, cuts, metrics = fitcuts.cover_cuts(inst, time_limit=8)
    assert cuts and bound <= metrics["aggregate"]
    for name in ("tetris", "nalb", "netfit", "netfit-probe"):
        res = dmlopt.heuristic(inst, name, seed=0)
        assert res.feasible and res.objective <= bound
        acc = {i for i, a in enumerate(res.solution.allocations) if a is not None}
        for cut in cuts:
            assert len(acc & set(cut)) <= len(cut) - 1, (name, cut)
    stopped = dmlopt.bound(inst, "cover", time_limit=1e-3, primal=False)
    assert math.isfinite(stopped.bound) and stopped.bound >= bound
