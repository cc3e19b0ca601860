"""The semi-active restriction of ``aggregated`` (models/rar/dominance.py): the same optimum as
a brute force and as ``aggregated`` for every scheme, a family of instances on which wrong rows
(starts at the arrival only, an off-by-one in the end slot) change the optimum, and
``left_shift`` giving semi-active, no worse, warm-startable solutions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyomo.environ as pyo
import pytest

import dmlopt
from dmlopt import solvers
from dmlopt.io import instance_hash
from dmlopt.models import rar
from dmlopt.models.rar.dominance import build_semiactive, left_shift, warm_start_semiactive
from tests.helpers.rar import TINY, _brute_force

#: random instances where start slots matter: 4 requests on 5 slots, 3 CUs per node; one
#: wavelength per link (wavelengths can bind) or four (they cannot)
FAMILY = [dict(seed=s, nodes=4, extra_links=1, requests=4, slots=5, cus=3, wavelengths=wl,
               rho=1) for s in range(4) for wl in (1, 4)]


def _optimum(m) -> float:
    run = solvers.run(m, "highs", threads=1, time_limit=60, mip_gap=0.0)
    assert run.status == "optimal", run
    return pyo.value(m.obj)


#: aggregated's optima of FAMILY (HiGHS, mip_gap 0, optimal) by instance hash, written by
#: ``python -m tests.rar.test_dominance --write`` (the aggregated model only, no semiactive
#: code); an instance missing from it (a changed generator) is solved here instead
GOLDEN = Path(__file__).parent / "golden" / "dominance_family_optima.json"
_FAMILY_OPTIMA: dict[str, float] = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


def _family_optimum(i: int, scheme: str) -> float:
    """The optimum of ``aggregated`` on ``FAMILY[i]`` under ``scheme``."""
    inst = rar.generate_random(scheme=scheme, **FAMILY[i])
    key = instance_hash(inst)
    if key not in _FAMILY_OPTIMA:
        _FAMILY_OPTIMA[key] = _optimum(rar.build_aggregated(inst))
    return _FAMILY_OPTIMA[key]


def _rows_by_hand(inst, lag: int, arrival_only: bool = False):
    """``aggregated`` with left-shift rows written here: any other request ending at t - lag
    on any node or (always) anywhere; ``arrival_only`` forbids every later start."""
    m = rar.build_aggregated(inst)
    ms = m._rar_modes
    starts: dict = {}
    ends: dict = {}
    for (j, q), var in m.q.items():
        _, _, d, s = ms[j][q]
        ends.setdefault(s + d - 1, []).append((j, var))
        if s > inst.requests[j].arrival:
            starts.setdefault((j, s), []).append(var)
    m.wrong = pyo.ConstraintList()
    for (j, t), lhs in starts.items():
        rhs = [] if arrival_only else [v for i, v in ends.get(t - lag, []) if i != j]
        m.wrong.add(sum(lhs) <= sum(rhs))
    return m


@pytest.mark.parametrize("spec", TINY)
def test_semiactive_equals_the_brute_force(spec):
    # catches rows that cut off every optimum (the start-at-arrival-only version is 0.5 or
    # more above the brute force on FAMILY, below) or a model that drops schedules elsewhere
    for scheme in rar.SCHEMES:
        inst = rar.generate_random(scheme=scheme, **spec)
        best = _brute_force(inst)[scheme]
        res = dmlopt.solve(inst, formulation="semiactive", threads=1, time_limit=60,
                           mip_gap=0.0)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(best, rel=1e-9, abs=1e-9), (scheme, spec)


def test_semiactive_equals_aggregated_on_the_family():
    # catches rows with the end slot off by one (t or t - 2 instead of t - 1) or starts at the
    # arrival only; these wrong versions are shown to differ on this family in the next test
    for i, spec in enumerate(FAMILY):
        for scheme in rar.SCHEMES:
            inst = rar.generate_random(scheme=scheme, **spec)
            want = _family_optimum(i, scheme)
            got = _optimum(build_semiactive(inst))
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9), (spec, scheme)


@pytest.mark.parametrize("wrong", ["arrival only", "end at t", "end at t - 2"])
def test_the_family_catches_wrong_rows(wrong):
    # the family of the previous test is strong enough: each wrong restriction changes the
    # optimum (or empties the model) on at least one of its instances (the search stops at
    # the first such instance: the claim is "at least one", the later solves cannot change it)
    lag = {"arrival only": 1, "end at t": 0, "end at t - 2": 2}[wrong]
    caught = 0
    cases = ((i, spec, scheme) for i, spec in enumerate(FAMILY[:4])
             for scheme in ("MinCU", "MinT"))
    for i, spec, scheme in cases:
        inst = rar.generate_random(scheme=scheme, **spec)
        want = _family_optimum(i, scheme)
        m = _rows_by_hand(inst, lag, arrival_only=wrong == "arrival only")
        run = solvers.run(m, "highs", threads=1, time_limit=60, mip_gap=0.0)
        caught += run.status != "optimal" or abs(pyo.value(m.obj) - want) > 1e-7
        if caught:
            break
    assert caught > 0, wrong


def _semi_active(inst, sol) -> bool:
    """Every deployed request starts at its arrival or right after another deployed request
    that computes on one of its computing nodes (or, when wavelengths can bind, uses its
    wavelength on one of its links) ends."""
    from dmlopt.models.rar.formulations import _wavelengths_never_bind

    bind = not _wavelengths_never_bind(inst)
    for j, a in enumerate(sol.requests):
        if a is None or a.start == inst.requests[j].arrival:
            continue
        links = set(rar.ring_links(inst, a.ring))
        ok = False
        for i, b in enumerate(sol.requests):
            if i == j or b is None or b.end != a.start - 1:
                continue
            ok |= bool(set(a.nodes) & set(b.nodes))
            ok |= bind and b.wavelength == a.wavelength and bool(
                links & set(rar.ring_links(inst, b.ring)))
        if not ok:
            return False
    return True


def _rows_hold(m) -> bool:
    for con in m.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        if con.has_ub() and body > pyo.value(con.upper) + 1e-9:
            return False
        if con.has_lb() and body < pyo.value(con.lower) - 1e-9:
            return False
    return True


def _late(inst, sol):
    """Move every deployed request as late as the evaluator allows (last request first)."""
    reqs = list(sol.requests)
    for j in reversed(range(len(reqs))):
        while reqs[j] is not None and reqs[j].end < inst.requests[j].deadline:
            a = reqs[j]
            trial = list(reqs)
            trial[j] = a.model_copy(update={"start": a.start + 1, "end": a.end + 1})
            if not dmlopt.evaluate(inst, rar.Solution(requests=trial)).feasible:
                break
            reqs = trial
    return rar.Solution(requests=reqs)


def test_left_shift_gives_semi_active_no_worse_starts():
    # catches a shift that stops before the fixed point (one slot per request and pass: 5 of
    # these 20 inputs end not semi-active) and one that checks the node's CUs but not its peak
    # (MinCU worse); the inputs are RDDA's solutions moved as late as they can go
    cases = [rar.generate_cpn6(seed=s, requests=8, scheme="MinCU") for s in range(10)]
    cases += [rar.generate_random(seed=s, nodes=4, extra_links=1, requests=5, slots=6, cus=3,
                                  wavelengths=1, rho=1, scheme="MinCU") for s in range(10)]
    moved = 0
    for inst in cases:
        sol = _late(inst, dmlopt.heuristic(inst, "rdda").solution)
        moved += not _semi_active(inst, sol)
        before = dmlopt.evaluate(inst, sol)
        shifted = left_shift(inst, sol)
        after = dmlopt.evaluate(inst, shifted)
        assert after.feasible, after.violations
        assert after.objective <= before.objective + 1e-12
        assert _semi_active(inst, shifted), inst.name
        m = build_semiactive(inst)
        warm_start_semiactive(m, inst, sol)
        assert _rows_hold(m), inst.name
    assert moved >= 10


def test_a_later_start_breaks_a_row():
    # catches rows that are never built (the model is then just `aggregated`): a deployed
    # request moved one slot right with nothing ending just before it violates its row,
    # while every row of `aggregated` still holds
    inst = rar.generate_cpn6(seed=0, requests=4, scheme="MinCU")
    sol = left_shift(inst, dmlopt.heuristic(inst, "rdda").solution)
    for j, a in enumerate(sol.requests):
        if a is None or a.end == inst.requests[j].deadline:
            continue
        moved = list(sol.requests)
        moved[j] = a.model_copy(update={"start": a.start + 1, "end": a.end + 1})
        later = rar.Solution(requests=moved)
        if not dmlopt.evaluate(inst, later).feasible or _semi_active(inst, later):
            continue
        base = rar.build_aggregated(inst)
        rar.warm_start(base, inst, later)
        assert _rows_hold(base)
        m = build_semiactive(inst)
        rar.warm_start(m, inst, later)
        assert not _rows_hold(m)
        return
    pytest.fail("no request of the RDDA solution can move right")


def test_semiactive_with_highs_runs_without_presolve(monkeypatch):
    """HiGHS 1.16's presolve cut off the optimum of this semiactive model ("optimal" 0.0728
    against 0.0663): the formulation's default ``presolve = off`` must reach the solver and
    give the optimum every other formulation proves; a user's own option still wins. Catches a
    formulation whose solver defaults are dropped, or that override the user's."""
    inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 2, "scheme": "MaxR",
                                   "slots": 7}, seed=7006)
    ref = dmlopt.solve(inst, formulation="aggregated", solver="scip", time_limit=120)
    semi = dmlopt.solve(inst, formulation="semiactive", threads=1, time_limit=120)
    assert ref.status == semi.status == "optimal"
    assert semi.objective == pytest.approx(ref.objective, rel=1e-9)
    seen: list = []
    run = solvers.run
    monkeypatch.setattr(solvers, "run", lambda *a, **k: seen.append(k["options"]) or run(*a, **k))
    dmlopt.solve(inst, formulation="semiactive", threads=1, time_limit=120,
                 solver_options={"presolve": "on", "random_seed": 3})
    dmlopt.solve(inst, formulation="aggregated", threads=1, time_limit=120)
    assert seen == [{"presolve": "on", "random_seed": 3}, None]


if __name__ == "__main__" and "--write" in sys.argv:
    _FAMILY_OPTIMA.clear()
    for _i in range(len(FAMILY)):
        for _scheme in rar.SCHEMES:
            _family_optimum(_i, _scheme)
    GOLDEN.write_text(json.dumps(_FAMILY_OPTIMA, indent=0, sort_keys=True) + "\n")
