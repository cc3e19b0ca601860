"""The default ``dmlopt.solve`` of INC/OXC runs the exact ``bisection``
(``Bound.exact``) before the MIP: its optimum equals the ``strong`` MIP's, it never calls a
result optimal that no bound proves, a time-limited run still returns an evaluated incumbent,
and Ctrl-C during the bisection raises ``Interrupted`` with the evaluated incumbent."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time

import pytest

import dmlopt
from dmlopt import api, registry
from dmlopt.contract import BoundValue
from dmlopt.errors import ObjectiveMismatchError
from dmlopt.result import Result


def _small(racks: int, seed: int):
    return dmlopt.generate("inc_oxc", {"generator": "small", "racks": racks}, seed=seed)


def test_every_exact_bound_names_formulations_of_its_problem():
    # catches a misspelt Bound.exact entry (the default solve would silently skip the method)
    for name in registry.names():
        problem = registry.get(name)
        for method, entry in problem.bound_entries.items():
            assert set(entry.exact) <= set(problem.formulations), (name, method, entry.exact)
    inc = registry.get("inc_oxc")
    assert "strong" in inc.bound("bisection").exact


@pytest.mark.parametrize(("racks", "seed"), [(2, 0), (2, 1), (3, 0), (3, 2), (4, 0), (4, 3)])
def test_default_solve_equals_the_strong_mip(racks, seed):
    # catches a default solve whose exact pass returns a non-optimal solution as optimal (e.g.
    # one that trusts the bisection's lower end, or a bound that is too tight): the strong MIP
    # alone, run without the pass, proves the optimum independently
    inst = _small(racks, seed)
    ref = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=300)
    res = dmlopt.solve(inst, threads=1, time_limit=300)
    assert ref.status == "optimal" and ref.method == "highs:strong"
    assert res.status == "optimal", res.message
    assert res.method == "highs:strong" and "bisection" in res.message
    assert res.metrics["milps_bisection"] >= 1
    assert res.objective == pytest.approx(ref.objective, rel=2e-4)
    assert dmlopt.evaluate(inst, res.solution).objective == res.objective
    assert res.bound >= res.objective * (1 - 1e-9)  # a maximisation: bound above
    assert api.proven(res.objective, res.bound)


def _mutant_bound(monkeypatch, factor: float) -> None:
    """Replace bisection by the same method with its bound times ``factor``."""
    problem = registry.get("inc_oxc")
    entry = problem.bound("bisection")

    def shifted(instance, **kw):
        value = entry.function(instance, **kw)
        return BoundValue(value.bound * factor, value.solution, value.metrics)

    monkeypatch.setitem(problem.model.BOUNDS, "bisection",
                        dataclasses.replace(entry, function=shifted))


def _mip_that_proves_nothing(monkeypatch) -> None:
    """The MIP stage stops at its time limit with its warm start and no bound of its own."""
    def stub(problem, instance, *, start, **_kw):
        res = Result(problem=problem.name, method="highs:strong", status="time_limit")
        if start is not None:
            api._fill(res, start, problem.model.evaluate(instance, start))
        return res

    monkeypatch.setattr(api, "_solve_mip", stub)


def test_a_loose_bound_never_makes_a_result_optimal(monkeypatch):
    # catches a pass that calls the bisection's solution optimal because the method is declared
    # exact (or compares with its reached f) instead of meeting the bound it returned
    inst = _small(3, 0)
    _mutant_bound(monkeypatch, 1.01)  # a valid but loose bound (maximisation: 1 % above)
    _mip_that_proves_nothing(monkeypatch)
    res = dmlopt.solve(inst, threads=1, time_limit=60)
    assert res.status != "optimal"
    assert res.solution is not None and res.gap == pytest.approx(0.01, rel=0.05)
    assert dmlopt.evaluate(inst, res.solution).objective == res.objective


def test_a_bound_beaten_by_its_own_solution_is_an_error(monkeypatch):
    # catches a pass that does not check the evaluated solution against the bound
    inst = _small(3, 0)
    _mutant_bound(monkeypatch, 0.99)  # invalid: below what the solution reaches
    _mip_that_proves_nothing(monkeypatch)
    with pytest.raises(ObjectiveMismatchError, match="beats"):
        dmlopt.solve(inst, threads=1, time_limit=60)


def test_the_mip_stage_is_graded_against_the_tighter_bound(monkeypatch):
    # the MIP's own result stays the judge when the bisection's bound is loose: a mutant +1 %
    # bound with the real MIP is optimal only through the MIP's proof, with the MIP's bound
    inst = _small(2, 0)
    _mutant_bound(monkeypatch, 1.01)
    res = dmlopt.solve(inst, threads=1, time_limit=120)
    ref = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=120)
    assert res.status == "optimal" and ref.status == "optimal"
    assert res.bound < res.metrics["bound_bisection"]  # the MIP's, not the mutant's
    assert api.proven(res.objective, res.bound)


def test_a_time_limited_default_solve_returns_an_evaluated_incumbent():
    # 8 racks, seed 1: neither stage proves it in 2 s (nor in 4 s: the bisection alone needs
    # tens of seconds); the result is an evaluated incumbent whose bound holds, never optimal
    # unless they meet
    inst = dmlopt.load("inc_oxc/fig4-r8-s1")
    res = dmlopt.solve(inst, threads=1, time_limit=2, warm_start="wcg")
    assert res.solution is not None
    ev = dmlopt.evaluate(inst, res.solution)
    assert ev.feasible and ev.objective == res.objective
    assert res.bound is not None and res.bound >= res.objective * (1 - 1e-9)
    assert (res.status == "optimal") == api.proven(res.objective, res.bound)
    assert res.seconds < 60


def test_ctrl_c_during_the_exact_bound_raises_interrupted_with_the_incumbent(tmp_path):
    # 8 racks, seed 1: the bisection runs for tens of seconds; Ctrl-C in it must raise
    # Interrupted carrying the evaluated incumbent (here at least the warm start), at once.
    # The child says BISECTING when the bisection's first MILP starts (a wrapper that only
    # prints), so the interrupt lands 2 s inside the bisection without a fixed long wait
    code = (
        "import sys, time, dmlopt\n"
        "from dmlopt.errors import Interrupted\n"
        "from dmlopt.models.inc_oxc import exact as X\n"
        "real, said = X._decide, []\n"
        "def decide(*a, **k):\n"
        "    if not said:\n"
        "        said.append(1)\n"
        "        print('BISECTING', flush=True)\n"
        "    return real(*a, **k)\n"
        "X._decide = decide\n"
        "inst = dmlopt.load('inc_oxc/fig4-r8-s1')\n"
        "start = dmlopt.heuristic(inst, 'wcg').solution\n"
        "print('READY', flush=True)\n"
        "try:\n"
        "    dmlopt.solve(inst, time_limit=600, threads=1, warm_start=start)\n"
        "except Interrupted as exc:\n"
        "    r = exc.result\n"
        "    ev = dmlopt.evaluate(inst, exc.solution)\n"
        "    print('CAUGHT', r.status, r.objective == ev.objective, r.bound >= r.objective,\n"
        "          'bisection' in r.message, flush=True)\n"
        "    sys.exit(7)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout.readline().strip() == "READY"
    assert proc.stdout.readline().strip() == "BISECTING"
    time.sleep(2.0)
    assert proc.poll() is None, "the solve ended before the interrupt"
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    rest, err = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 15, "the bisection did not stop within seconds"
    assert proc.returncode == 7, err
    assert "CAUGHT interrupted True True True" in rest


def test_the_bisection_from_a_start_meets_the_strong_optimum():
    # catches a start that moves the bound (its f taken as the upper end, or a bracket that
    # closes on the start without an infeasibility proof above it) and a start whose value is
    # lost: the strong MIP proves the optimum independently
    from dmlopt.models.inc_oxc.exact import bisect_placements

    inst = _small(4, 1)
    opt = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=300)
    assert opt.status == "optimal"
    start = dmlopt.heuristic(inst, "wcg")
    assert start.objective < opt.objective * (1 - 1e-3)  # the start is not already optimal
    hi, metrics, sol = bisect_placements(inst, time_limit=300, start=start.solution)
    assert opt.objective <= hi <= opt.objective * (1 + 2e-5)
    assert dmlopt.evaluate(inst, sol).objective == pytest.approx(opt.objective, rel=1e-6)
    # a start that is not a solution of the instance (its bandwidths ten times over the ports)
    # is ignored: the same bound, nothing taken from it
    bad = start.solution.model_copy(update={"bandwidth": [[10 * b for b in row] for row in
                                                          start.solution.bandwidth]})
    assert not dmlopt.evaluate(inst, bad).feasible
    hi2, _, sol2 = bisect_placements(inst, time_limit=300, start=bad)
    assert opt.objective <= hi2 <= opt.objective * (1 + 2e-5) and sol2 is not bad


def test_an_instance_the_bisection_refuses_is_solved_by_the_mip_alone():
    # workers of two kinds in one job: the fixed-f model refuses the instance; the default
    # solve must still prove it with the MIP (catches a pass that lets the refusal escape or
    # reports the instance as unsolved), and say why the bound did not run
    from dmlopt.models import inc_oxc as M

    one = {"cpu": 1.0, "gpu": 1.0, "mem": 1.0}
    two = {"cpu": 2.0, "gpu": 1.0, "mem": 1.0}
    inst = M.Instance(racks=[{"cpu": 9.0, "gpu": 9.0, "mem": 9.0, "ps_slots": 1}] * 2,
                      n_tor=2, port_bw=100.0,
                      jobs=[{"data": 100.0, "ps_cpu": 1.0, "ps_mem": 1.0,
                             "workers": [one, two]}])
    res = dmlopt.solve(inst, threads=1, time_limit=60)
    ref = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=60)
    assert res.status == ref.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, rel=1e-9)
    assert "bisection not run" in res.message and "identical workers" in res.message
