"""The validity sweep (benchmarks/studies/harness/validity.py): zero violations on tiny instances of
every problem, and a bound made wrong on purpose is reported by name with exit code 1."""

from __future__ import annotations

import csv
import os
import signal
from dataclasses import replace

import pytest

import dmlopt
from benchmarks.studies.harness import validity
from dmlopt import registry
from dmlopt.contract import BoundValue

#: two cheap cases per problem (each problem has two of these names)
CASES = ["single", "ties", "uniform", "azure", "small", "dcn", "tiny", "random", "drift"]


def _rows(out):
    with open(out / "checks.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_two_tiny_instances_per_problem_pass_every_check(tmp_path):
    """Catches a sweep that checks nothing (every kind of check must appear for every problem)
    and any wrong bound, false optimum or heuristic beating the optimum on these instances."""
    code = validity.main(["-o", str(tmp_path), "--seeds", "7100-7100", "--time-limit", "5",
                          "--cases", *CASES])
    rows = _rows(tmp_path)
    bad = [r for r in rows if r["violation"] == "1"]
    assert code == 0 and not bad, bad
    for problem in validity.PROBLEMS:
        mine = [r for r in rows if r["problem"] == problem]
        assert len({r["instance"] for r in mine}) == 2, problem
        kinds = {r["check"] for r in mine}
        assert {"solve", "agree", "bound", "bound-run", "heuristic"} <= kinds, (problem, kinds)
        # every registered bound method and heuristic was run
        prob = registry.get(problem)
        assert {f"bound:{b}@5" for b in prob.bound_entries} <= {r["method"] for r in mine}
        assert {f"heuristic:{h}" for h in prob.heuristics} <= {r["method"] for r in mine}
    assert any(r["check"] == "brute" and r["status"] == "optimal" for r in rows)


def test_a_bound_past_the_optimum_is_reported_by_name(tmp_path, monkeypatch, capsys):
    """Catches a sweep blind to a wrong bound: 'lp' of tabgp returns the optimum + 1 (the
    optimum by the sweep's own enumeration); the sweep must exit 1 and name bound:lp."""
    prob = registry.get("tabgp")
    entries = dict(prob.bound_entries)
    entries["lp"] = replace(entries["lp"], function=lambda inst, **kw: BoundValue(
        validity.brute_tabgp(inst, cap=10 ** 6) + 1.0))
    monkeypatch.setattr(type(prob), "bound_entries", property(lambda self: entries))
    code = validity.main(["-o", str(tmp_path), "--problems", "tabgp", "--seeds", "7100-7100",
                          "--time-limit", "5", "--cases", "tiny"])
    assert code == 1
    bad = [r for r in _rows(tmp_path) if r["violation"] == "1"]
    assert bad and {r["method"] for r in bad} == {"bound:lp@5", "bound:lp@0.001"}
    assert "VIOLATION tabgp tiny-s7100" in capsys.readouterr().out


def test_a_false_optimum_is_reported_by_the_solve_and_heuristic_checks(tmp_path, monkeypatch):
    """Catches a sweep that trusts a solver's 'optimal': every optimal result of dmlopt.solve
    is patched one unit worse, so its objective is not the evaluator's (solve check) and the
    heuristics that reach the true optimum beat it (heuristic check)."""
    real = dmlopt.solve

    def worse(inst, *args, **kwargs):
        res = real(inst, *args, **kwargs)
        if res.status == "optimal" and res.objective is not None:
            res.objective += 1.0  # a false optimum (and an objective the evaluator refutes)
        return res

    monkeypatch.setattr(dmlopt, "solve", worse)
    code = validity.main(["-o", str(tmp_path), "--problems", "tap", "--seeds", "7100-7100",
                          "--time-limit", "5", "--cases", "ties"])
    bad = [r for r in _rows(tmp_path) if r["violation"] == "1"]
    assert code == 1
    assert {r["check"] for r in bad} >= {"solve", "heuristic"}
    assert any("evaluator" in r["detail"] for r in bad if r["check"] == "solve")
    assert any("better than the proven optimum" in r["detail"] for r in bad)


@pytest.mark.parametrize("text", ["x", "9-3", "-1-2"])
def test_bad_seed_ranges_exit_2(tmp_path, text):
    with pytest.raises(SystemExit) as exc:
        validity.main(["-o", str(tmp_path), "--seeds", text])
    assert exc.value.code == 2


def test_a_generator_that_never_returns_is_reported_as_a_hang(tmp_path, monkeypatch):
    """Catches a sweep that waits for ever on a loop ignoring every time limit (the drift
    generator's once): the watchdog ends the instance and the sweep exits 1 naming it."""
    real = dmlopt.generate

    def forever(problem, spec=None, seed=0):
        if spec and spec.get("generator") == "drift":
            while True:
                pass
        return real(problem, spec, seed=seed)

    monkeypatch.setattr(dmlopt, "generate", forever)
    code = validity.main(["-o", str(tmp_path), "--problems", "tabgp", "--seeds", "7100-7100",
                          "--time-limit", "5", "--cases", "drift", "--watchdog", "1"])
    bad = [r for r in _rows(tmp_path) if r["violation"] == "1"]
    assert code == 1 and [(r["instance"], r["check"]) for r in bad] == [("drift-s7100", "hang")]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="crash isolation needs os.fork")
def test_a_solver_crash_is_a_violation_and_the_sweep_goes_on(tmp_path, monkeypatch):
    """Catches a sweep that dies with a solver's segmentation fault (SCIP 10's once): the
    first instance's checks end their process by a signal (SIGKILL here, which unlike SIGSEGV
    prints no fault handler's traceback into the test log); the sweep reports it as a crash
    naming the signal and still checks the next instance."""
    real = dmlopt.generate

    def crashing(problem, spec=None, seed=0):
        if seed == 7100:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(problem, spec, seed=seed)

    monkeypatch.setattr(dmlopt, "generate", crashing)
    code = validity.main(["-o", str(tmp_path), "--problems", "tabgp", "--seeds", "7100-7101",
                          "--time-limit", "5", "--cases", "tiny"])
    rows = _rows(tmp_path)
    bad = [r for r in rows if r["violation"] == "1"]
    assert code == 1
    assert [(r["instance"], r["check"]) for r in bad] == [("tiny-s7100", "crash")]
    assert "SIGKILL" in bad[0]["detail"]
    assert any(r["instance"] == "tiny-s7101" and r["check"] == "brute" for r in rows)
