"""INC/OXC ``bisection`` (models/inc_oxc/exact.py), the exact method the default
``dmlopt.solve`` runs first: its optimum against a brute force over every placement and circuit
matrix of tiny instances (tests/inc_oxc/test_lns.py, written without the package's scoring) and
against the ``strong`` MIP's proven optimum on generated instances; MILPs stopped by their
share of the time never move the bracket, and nothing is called optimal unless both ends of it
are proven."""

from __future__ import annotations

import time

import pytest

import dmlopt
from dmlopt import api, references, registry
from dmlopt.models import inc_oxc as M
from dmlopt.models.inc_oxc import exact
from dmlopt.models.inc_oxc.bounds import fixed_f_model
from dmlopt.result import Result
from tests.inc_oxc.test_lns import SPECS, _brute_force, _instance


def test_registered_exact_before_placements_static():
    # catches a registration the default solve would skip (not exact for its default
    # formulation, or after the older placements-static, which the solve would then run)
    problem = registry.get("inc_oxc")
    names = list(problem.bound_entries)
    assert names.index("bisection") < names.index("placements-static")
    assert M.DEFAULT_FORMULATION in problem.bound("bisection").exact
    assert names[0] == "jobs-timeshared"        # dmlopt.bound's default is unchanged


@pytest.mark.parametrize("spec, seed", [(SPECS[0], 0), (SPECS[1], 1), (SPECS[2], 2),
                                        ("tight", 0)])
def test_bisection_meets_the_brute_force_optimum(spec, seed):
    # catches a bracket closed on a lower end that is not optimal (the bound would fall below
    # the brute force) or a bound too loose to prove it
    inst = _instance(spec, seed)
    f_star, _ = _brute_force(inst)
    assert f_star > 0
    value = dmlopt.bound(inst, "bisection", time_limit=60)
    assert f_star * (1 - 1e-9) <= value.bound <= f_star * (1 + 2e-5)
    assert value.objective == pytest.approx(f_star, rel=1e-6)
    assert M.evaluate(inst, value.solution).feasible


@pytest.mark.parametrize(("racks", "jobs", "seed"), [(2, 3, 5), (3, 3, 6), (4, 4, 7),
                                                     (4, None, 8)])
def test_default_solve_equals_the_strong_mip(racks, jobs, seed):
    # the default solve (bisection first) against the strong MIP run alone: equal optima
    params = {"generator": "small", "racks": racks} | ({"jobs": jobs} if jobs else {})
    inst = dmlopt.generate("inc_oxc", params, seed=seed)
    ref = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=300)
    res = dmlopt.solve(inst, threads=1, time_limit=300)
    assert ref.status == "optimal" and res.status == "optimal", res.message
    assert "bisection" in res.message and res.metrics["milps_bisection"] >= 1
    assert res.objective == pytest.approx(ref.objective, rel=2e-4)
    assert dmlopt.evaluate(inst, res.solution).objective == res.objective


def _undecided_between(monkeypatch, low: float, high: float,
                       solvers: tuple[str, ...] = ("highs", "scip")) -> list[tuple[float, str]]:
    """Every fixed-f MILP with low < f <= high run by one of ``solvers`` stops undecided, as at
    a time limit; the others run. Returns the (f, solver) pairs asked."""
    asked: list[tuple[float, str]] = []
    run = exact._run

    def fake(instance, f, budget, solver="highs"):
        asked.append((f, solver))
        if low < f <= high and solver in solvers:
            h, layout = fixed_f_model(instance, f, static=True)
            h.setOptionValue("time_limit", 0.0)
            h.run()
            return exact.classify(h), h, layout
        return run(instance, f, budget, solver)

    monkeypatch.setattr(exact, "_run", fake)
    return asked


def test_an_undecided_feasible_step_is_not_taken_as_infeasible(monkeypatch):
    # the MILPs just below the optimum (feasible) stop undecided: a program that takes an
    # undecided MILP as infeasible puts the upper end below the optimum, i.e. a bound the
    # brute-force optimum beats
    inst = _instance("tight", 0)
    f_star, _ = _brute_force(inst)
    asked = _undecided_between(monkeypatch, 0.5 * f_star, f_star * (1 - 1e-3))
    hi, metrics, sol = exact.bisect_placements(inst, time_limit=60)
    assert any(0.5 * f_star < f <= f_star * (1 - 1e-3) for f, _ in asked)  # the case happened
    assert metrics["undecided"] >= 1
    assert hi >= f_star * (1 - 1e-9)
    if sol is not None:
        assert M.evaluate(inst, sol).objective <= hi * (1 + 1e-9)


def test_an_unproven_upper_side_is_never_optimal(monkeypatch):
    # every MILP above the optimum stops undecided: the optimum is found but not proven, so
    # the default solve must not call it optimal (the MIP stage is a stub proving nothing)
    inst = _instance("tight", 0)
    f_star, _ = _brute_force(inst)
    _undecided_between(monkeypatch, f_star * (1 + 1e-9), float("inf"))

    def mip(problem, instance, *, start, **_kw):
        res = Result(problem=problem.name, method="highs:strong", status="time_limit")
        if start is not None:
            api._fill(res, start, problem.model.evaluate(instance, start))
        return res

    monkeypatch.setattr(api, "_solve_mip", mip)
    res = dmlopt.solve(inst, threads=1, time_limit=60)
    assert res.status != "optimal"
    assert res.bound >= f_star * (1 - 1e-9)
    assert res.solution is None or dmlopt.evaluate(inst, res.solution).objective <= f_star


def test_classify_takes_only_a_proof_as_infeasible():
    # catches "anything not feasible is infeasible": a MILP stopped by its time limit before
    # deciding is undecided
    inst = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 4}, seed=2)
    opt = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=120).objective
    outcomes = []
    for f, limit in ((opt * 0.999, None), (opt * 1.001, None), (opt * 1.001, 0.0)):
        h, _ = fixed_f_model(inst, f, static=True)
        if limit is not None:
            h.setOptionValue("time_limit", limit)
        h.run()
        outcomes.append(exact.classify(h))
    assert outcomes == [exact.FEASIBLE, exact.INFEASIBLE, exact.UNDECIDED]


def test_time_limit_is_honoured_and_the_bound_holds():
    # 8 racks, seed 1 (proven optimal in the reference library): 5 s are usually not enough
    # (2.5 s here: the bisection needs tens of seconds, so the limit still stops it after its
    # first MILPs); the run stops near its limit with a valid bound and an evaluated solution
    # (on a fast machine it may reach the optimum itself, never more)
    (rec,) = [r for r in references.records("inc_oxc") if r.id == "fig4-r8-s1"]
    assert rec.status == "optimal"
    opt = rec.objective
    inst = dmlopt.load("inc_oxc/fig4-r8-s1")
    t0 = time.perf_counter()
    hi, metrics, sol = exact.bisect_placements(inst, time_limit=2.5)
    assert time.perf_counter() - t0 < 2.5 + 3
    assert metrics["stopped_by_time_limit"] == 1.0 or hi <= opt * (1 + 2e-5)  # or finished
    assert hi >= opt * (1 - 1e-9)
    assert metrics["milps"] >= 1
    if sol is not None:
        assert M.evaluate(inst, sol).feasible
        assert M.evaluate(inst, sol).objective <= opt * (1 + 1e-9)


def test_the_default_solve_gives_the_bisection_its_share(monkeypatch):
    # catches a core that ignores Bound.share (the bisection would get half of the limit)
    problem = registry.get("inc_oxc")
    entry = problem.bound("bisection")
    seen: list[float | None] = []

    def spy(instance, **kw):
        seen.append(kw.get("time_limit"))
        return entry.function(instance, **kw)

    import dataclasses

    monkeypatch.setitem(problem.model.BOUNDS, "bisection",
                        dataclasses.replace(entry, function=spy))
    inst = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 2}, seed=0)
    res = dmlopt.solve(inst, threads=1, time_limit=100)
    assert res.status == "optimal"
    assert seen == [pytest.approx(exact.SHARE * 100)] and exact.SHARE == 0.9


def test_scip_copy_decides_as_highs_and_only_a_proof_is_infeasible():
    # the SCIP copy of the fixed-f MILP: feasible just below the optimum (and its point is a
    # placement the evaluator accepts), infeasible just above, undecided with no time; catches
    # a copy that drops rows (feasible above), flips bounds (infeasible below) or a run that
    # calls a time-out infeasible
    inst = _instance("tight", 0)
    f_star, _ = _brute_force(inst)
    below = exact._run(inst, f_star * 0.999, None, "scip")
    above = exact._run(inst, f_star * 1.001, None, "scip")
    assert below[0] == exact.FEASIBLE and above[0] == exact.INFEASIBLE
    from dmlopt.models.inc_oxc.bounds import _reached

    reached, sol = _reached(inst, below[1], below[2], True)
    assert f_star * 0.999 * (1 - 1e-6) <= reached <= f_star * (1 + 1e-9)
    assert sol is not None and M.evaluate(inst, sol).feasible
    # an 8-rack MILP just above its optimum's neighbourhood needs far more than 1 ms
    big = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 8}, seed=14)
    h, _ = fixed_f_model(big, 2.0886, static=True)
    assert exact._run_scip(h, 0.0)[0] == exact.UNDECIDED


@pytest.mark.parametrize("fallback", ["scip", "none"])
def test_the_fallback_proves_what_highs_leaves_undecided(monkeypatch, fallback):
    # the proof above the optimum is left to SCIP: with the fallback the bracket closes on the
    # brute-force optimum, without it the upper end stays unproven; catches a fallback that is
    # never called and one whose undecided result would still be taken as a proof
    inst = _instance("tight", 0)
    f_star, _ = _brute_force(inst)
    asked = _undecided_between(monkeypatch, f_star * (1 + 1e-9), float("inf"), ("highs",))
    hi, metrics, sol = exact.bisect_placements(inst, time_limit=30, probe=0.05,
                                               fallback=fallback)
    used = [solver for _, solver in asked]
    assert hi >= f_star * (1 - 1e-9)
    assert M.evaluate(inst, sol).objective == pytest.approx(f_star, rel=1e-6)
    if fallback == "scip":
        assert "scip" in used and metrics["fallback_milps"] >= 1
        assert hi <= f_star * (1 + 2e-5)
    else:
        assert "scip" not in used and metrics.get("fallback_milps", 0) == 0
        assert hi > f_star * (1 + 2e-5)
