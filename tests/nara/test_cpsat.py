"""The CP-SAT model of Nara's offline problem (models/nara/cpsat.py): its optimum against
formulation ``offline-plain`` solved by HiGHS, the set check against the restricted episode's
optimum, time-outs never taken for proofs, the first-use rows against a wrong symmetry row,
the integer bandwidths, the time limit and the hook in ``acceptance-sets``."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

pytest.importorskip("ortools")

import dmlopt  # noqa: E402
from dmlopt.models.nara import cpsat, exact  # noqa: E402
from dmlopt.models.nara.constants import BW_TOL  # noqa: E402
from tests.nara.test_exact import (  # noqa: E402
    SEEDS,
    empty_start,
    episode,
    optimum,
    tiny,
    weak_first_bound,
)


def sub_optimum(inst, members: list[int]) -> int:
    """``offline-plain``'s proven optimum of the episode restricted to ``members`` (HiGHS)."""
    res = dmlopt.solve(exact.sub_episode(inst, members), "highs", formulation="offline-plain",
                       threads=1, time_limit=120)
    assert res.status == "optimal"
    return int(round(res.objective))


@pytest.mark.parametrize("seed", SEEDS)
def test_optimum_equals_offline_plain(seed):
    # the model maximised by CP-SAT reaches the proven optimum of offline-plain with an
    # allocation the evaluator accepts: a capacity row too strong (or a wrong path or clique
    # row) gives less, a missing row an allocation the evaluator refuses or a count above it
    inst = episode(seed)
    res = cpsat.solve(inst, time_limit=60)
    assert res.status == "optimal"
    ev = dmlopt.evaluate(inst, res.solution)
    assert ev.feasible, ev.violations
    assert res.bound == ev.objective == res.objective == optimum(seed)


def test_target_question_both_ways():
    # "accept at least opt" is feasible, "at least opt + 1" proven infeasible (bound opt)
    for seed in SEEDS[:5]:
        inst, opt = episode(seed), optimum(seed)
        yes = cpsat.solve(inst, time_limit=60, target=opt)
        assert yes.status in ("feasible", "optimal")
        assert dmlopt.evaluate(inst, yes.solution).objective >= opt
        no = cpsat.solve(inst, time_limit=60, target=opt + 1)
        assert no.status == "infeasible"
        assert no.bound == opt


def test_set_check_against_restricted_optimum():
    # on random sets of the tiny episodes the set check answers "fits" (with an allocation of
    # exactly the set that the evaluator accepts) exactly when offline-plain of the restricted
    # episode accepts all of it, and "cut" otherwise: both answers occur
    rng = np.random.default_rng(7)
    seen = set()
    for seed, size in itertools.product(SEEDS, (2, 3, 5)):
        inst = episode(seed)
        members = sorted(int(i) for i in rng.choice(7, size=size, replace=False))
        outcome, sol = cpsat.allocate_set(inst, members, time_limit=60)
        fits = sub_optimum(inst, members) == len(members)
        assert outcome == (cpsat.FITS if fits else cpsat.CUT)
        if fits:
            ev = dmlopt.evaluate(inst, sol)
            assert ev.feasible and ev.objective == len(members)
            assert [i for i, al in enumerate(sol.allocations) if al is not None] == members
        seen.add(outcome)
    assert seen == {cpsat.FITS, cpsat.CUT}


def alpha_fitting_set():
    """A 32-request alpha episode and the requests netfit accepts on it (a set that fits)."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 32}, seed=4)
    sol = dmlopt.heuristic(inst, "netfit").solution
    return inst, [i for i, al in enumerate(sol.allocations) if al is not None]


def test_time_out_is_no_proof(monkeypatch):
    # a set that fits (netfit allocates it), checked with 1 ms: CP-SAT stops UNKNOWN and the
    # check answers "undecided", never "cut"; the wrong program that maps UNKNOWN to
    # "infeasible" answers "cut" there, so this test catches it
    inst, members = alpha_fitting_set()
    outcome, _ = cpsat.allocate_set(inst, members, time_limit=1e-3)
    assert outcome == cpsat.UNDECIDED
    real = cpsat.solve

    def wrong(instance, **kw):
        res = real(instance, **kw)
        if res.status == "unknown":
            res.status = "infeasible"
        return res

    monkeypatch.setattr(cpsat, "solve", wrong)
    assert cpsat.allocate_set(inst, members, time_limit=1e-3)[0] == cpsat.CUT


def wrong_symmetry(md, instance, x):
    """A wrong symmetry row: within a group of identical servers, a request using server k+1
    uses server k too (it forbids, e.g., two overlapping requests on two different servers of a
    rack, which no relabelling makes compliant)."""
    count = 0
    for grp in cpsat.first_use_groups(instance):
        for s0, s1 in zip(grp[:-1], grp[1:], strict=True):
            for i in range(len(instance.requests)):
                if (i, s1) in x and (i, s0) in x:
                    md.AddImplication(x[i, s1], x[i, s0])
                    count += 1
    return count


def test_wrong_symmetry_row_is_caught(monkeypatch):
    # the first-use rows keep the optimum (the random episodes above, and four requests that
    # each fill one server, held together: optimum 4 by offline-plain); a wrong symmetry row
    # forbids the feasible relabelling "each request on its own server" and falls to 2 there
    full = tiny([(10, 10, 0.6, 4)] * 4)
    opt = dmlopt.solve(full, "highs", formulation="offline-plain", threads=1, time_limit=60)
    assert opt.status == "optimal" and opt.objective == 4
    assert cpsat.solve(full, time_limit=60).bound == 4
    for seed in SEEDS[:3]:
        assert cpsat.solve(episode(seed), time_limit=60, symmetry=False).bound == optimum(seed)
    monkeypatch.setattr(cpsat, "_first_use", wrong_symmetry)
    assert cpsat.solve(full, time_limit=60).bound < 4


def test_relabel_keeps_the_allocation_and_meets_first_use():
    # relabelling identical servers by first use keeps the evaluation, and the relabelled
    # allocation satisfies the first-use order (server k+1 of a group first used no earlier
    # than server k)
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 32}, seed=1)
    sol = dmlopt.heuristic(inst, "netfit").solution
    new = cpsat.relabel(inst, sol)
    assert dmlopt.evaluate(inst, new).objective == dmlopt.evaluate(inst, sol).objective
    assert dmlopt.evaluate(inst, new).feasible
    first: dict[int, int] = {}
    for i, al in enumerate(new.allocations):
        for s in al.servers if al is not None else []:
            first.setdefault(s, i)
    for grp in cpsat.first_use_groups(inst):
        keys = [first.get(s, 10**9) for s in grp]
        assert keys == sorted(keys)


def test_scaled_bandwidths_are_a_relaxation():
    # every set of bandwidths whose float sum is within a capacity plus the evaluator's
    # tolerance has an integer sum within the integer capacity (exact denominators and
    # arbitrary floats); with multiples of 0.01 the scale is exact (100)
    rng = np.random.default_rng(0)
    for floats in (False, True):
        bs = (rng.integers(1, 100, size=9) / 100).tolist() if not floats else \
            rng.uniform(0.01, 1.0, size=9).tolist()
        caps = [1.0, float(sum(bs[:3])), 0.7]
        den, b_int, cap_int = cpsat.scale_bandwidth(bs, caps)
        if not floats:
            assert den == 100 and cap_int[0] == 100
        for k in range(1, 5):
            for sub in itertools.combinations(range(9), k):
                tot = sum(bs[i] for i in sub)
                for c, ci in zip(caps, cap_int, strict=True):
                    if tot <= c + BW_TOL:
                        assert sum(b_int[i] for i in sub) <= ci


def test_maximal_sets_imply_every_step():
    # every active set is contained in a kept one, and no kept one is inside another
    rng = np.random.default_rng(2)
    for _ in range(20):
        sets = [sorted(set(rng.integers(0, 8, size=int(rng.integers(0, 5))).tolist()))
                for _ in range(10)]
        kept = cpsat.maximal_sets(sets)
        assert all(any(set(a) <= set(k) for k in kept) for a in sets if a)
        assert not any(set(a) < set(b) for a in kept for b in kept)


def test_time_limit_honoured():
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 32}, seed=0)
    # limits halved (1 s, 1.5 s; the slack kept): neither is decided in them either
    t = time.monotonic()
    res = cpsat.solve(inst, time_limit=1.0, target=28)
    assert time.monotonic() - t < 9.0
    assert res.status != "infeasible" or res.bound == 27
    t = time.monotonic()
    exact.acceptance_sets(inst, time_limit=1.5, set_check="cpsat")
    assert time.monotonic() - t < 10.5


def test_acceptance_sets_with_cpsat_reaches_the_optimum(monkeypatch):
    # from the empty allocation and the weak first bound, with the search of a set disabled,
    # the loop with the CP-SAT set check reaches and proves the optimum of offline-plain: the
    # sets it reaches are allocated by CP-SAT (a check that decoded a wrong allocation fails
    # the evaluation, one that cut a fitting set gives a bound below the optimum)
    empty_start(monkeypatch)
    monkeypatch.setattr(exact, "search_set", lambda instance, members, **kw: None)
    fits = 0.0
    for seed in SEEDS[:6]:
        inst = episode(seed)
        weak_first_bound(monkeypatch, inst)
        res = exact.acceptance_sets(inst, time_limit=120, set_check="cpsat")
        ev = dmlopt.evaluate(inst, res.solution)
        assert ev.feasible
        assert res.bound == optimum(seed) == ev.objective
        assert res.metrics["proven"] == 1.0
        fits += res.metrics["cpsat_fits"]
    assert fits > 0


def test_auto_uses_cpsat_when_installed():
    assert exact.resolve_set_check("auto") == "cpsat"
    assert exact.resolve_set_check("milp") == "milp"


def test_bad_arguments_are_refused_naming_the_field():
    """A nan time limit ran as an undecided check, 0 workers as every core, a request index out
    of range failed with an IndexError: each is now refused naming its field."""
    from dmlopt.errors import InstanceError

    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 8}, seed=1)
    for kw, field in [({"time_limit": float("nan")}, "time_limit"),
                      ({"time_limit": 0}, "time_limit"), ({"time_limit": math.inf}, "time_limit"),
                      ({"time_limit": 1.0, "workers": 0}, "workers")]:
        with pytest.raises(InstanceError, match=field):
            cpsat.solve(inst, **kw)
        with pytest.raises(InstanceError, match=field):
            cpsat.allocate_set(inst, [0], **kw)
    for members in ([], [0, 99], [-1]):
        with pytest.raises(InstanceError, match="members"):
            cpsat.allocate_set(inst, members, time_limit=1.0)
