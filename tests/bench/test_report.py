"""Benchmark report on a hand-made store: gaps, bounds, speed-ups and summaries computed by hand."""

from __future__ import annotations

import csv
import json
import math

import pytest

from dmlopt.benchmarks import report
from dmlopt.benchmarks.store import Store
from dmlopt.cli import main

EXACT_OPTS = json.dumps({"formulation": "paper", "solver": "highs", "threads": 1,
                         "time_limit": 60.0}, sort_keys=True)


def row(problem, inst, method, status, obj, secs, *, bound=None, kind=None, seed=0,
        options=None):
    kind = kind or ("exact" if ":" in method else "heuristic")
    opts = options if options is not None else (EXACT_OPTS if kind == "exact" else "{}")
    return {"suite": "hand", "problem": problem, "instance": inst, "instance_hash": f"h-{inst}",
            "kind": kind, "method": method, "options": opts, "seed": seed, "status": status,
            "objective": obj, "bound": bound, "seconds": secs, "wall_seconds": secs + 0.05,
            "host": "h", "dmlopt_version": "0.1.0", "metrics": {"cut_cost": 1.0}}


ROWS = [
    # tabgp (min). A: optimum 10 (highs); scip stopped at the limit with 12 / bound 9
    row("tabgp", "A", "highs:paper", "optimal", 10.0, 2.0, bound=10.0),
    row("tabgp", "A", "scip:paper", "time_limit", 12.0, 4.0, bound=9.0),
    row("tabgp", "A", "h1", "feasible", 12.0, 0.02, seed=0),  # gap 20 %, speed-up 100
    row("tabgp", "A", "h1", "feasible", 11.0, 0.05, seed=1),  # gap 10 %, speed-up 40
    row("tabgp", "A", "h2", "feasible", 15.0, 0.5),  # gap 50 %
    row("tabgp", "A", "h3", "killed", None, 9.0),
    # B: optimum 4, proved by both solvers; scip faster (0.5 s) is the reference time
    row("tabgp", "B", "highs:paper", "optimal", 4.0, 1.0, bound=4.0),
    row("tabgp", "B", "scip:paper", "optimal", 4.0, 0.5, bound=4.0),
    row("tabgp", "B", "h1", "feasible", 5.0, 0.01),  # gap 25 %, speed-up 50
    row("tabgp", "B", "h2", "feasible", 4.0, 0.25),  # gap 0 %, speed-up 2
    # C: no optimum; best lower bound 16 (max of 16 and 15): gap of h1 <= (18-16)/16 = 12.5 %
    row("tabgp", "C", "highs:paper", "time_limit", 20.0, 60.0, bound=16.0),
    row("tabgp", "C", "scip:paper", "time_limit", 19.0, 60.0, bound=15.0),
    row("tabgp", "C", "h1", "feasible", 18.0, 0.1),
    # D: exact methods disagree on the optimum -> warning; reference is the better, 7
    row("tabgp", "D", "highs:paper", "optimal", 7.0, 1.0, bound=7.0),
    row("tabgp", "D", "scip:paper", "optimal", 8.0, 1.0, bound=8.0),
    # E: no exact run at all: no reference, no gap
    row("tabgp", "E", "h1", "feasible", 3.0, 0.01),
    # F: no exact run; bound runs 15 and 16 (an errored bound run's 17 is not valid): h1's
    # certified gap is (18 - 16) / 16 = 12.5 %, its gap to optimum unknown
    row("tabgp", "F", "bound:lp", "bound", None, 1.0, bound=15.0, kind="bound"),
    row("tabgp", "F", "bound:mip", "bound", 17.5, 5.0, bound=16.0, kind="bound"),
    row("tabgp", "F", "bound:bad", "error", None, 5.0, bound=17.0, kind="bound"),
    row("tabgp", "F", "h1", "feasible", 18.0, 0.1),
    # a maximisation problem: optimum 50, heuristic 40 -> gap (50 - 40) / 50 = 20 %
    row("maxp", "M", "highs:paper", "optimal", 50.0, 3.0, bound=50.0),
    row("maxp", "M", "g", "feasible", 40.0, 0.3),
    row("maxp", "M", "g", "error", 55.0, 0.3, seed=1),  # infeasible solution: no gap
]


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "hand.sqlite"
    with Store(path) as s:
        for r in ROWS:
            s.put(r)
    return path


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def num(x):
    return float(x) if x not in ("", None) else math.nan


def test_gaps_and_speedups(store):
    df = report.frame(Store(store).rows(), senses={"maxp": "max"})
    gap = {(r.instance, r.method, r.seed): r.gap_pct for r in df.itertuples()}
    sp = {(r.instance, r.method, r.seed): r.speedup for r in df.itertuples()}
    assert gap[("A", "h1", 0)] == pytest.approx(20.0)
    assert gap[("A", "h1", 1)] == pytest.approx(10.0)
    assert gap[("A", "h2", 0)] == pytest.approx(50.0)
    assert gap[("A", "scip:paper", 0)] == pytest.approx(20.0)
    assert math.isnan(gap[("A", "h3", 0)])
    assert gap[("B", "h1", 0)] == pytest.approx(25.0)
    assert gap[("B", "h2", 0)] == pytest.approx(0.0)
    cert = {(r.instance, r.method, r.seed): r.cert_gap_pct for r in df.itertuples()}
    # no optimum on C: no gap to optimum; the certified gap is to the best bound, 16
    assert math.isnan(gap[("C", "h1", 0)]) and cert[("C", "h1", 0)] == pytest.approx(12.5)
    assert math.isnan(gap[("C", "highs:paper", 0)])
    assert cert[("C", "highs:paper", 0)] == pytest.approx(25.0)
    # A: the best bound is the optimum's, 10 (scip's 9 is weaker)
    assert cert[("A", "h1", 0)] == pytest.approx(20.0)
    assert cert[("A", "h2", 0)] == pytest.approx(50.0)
    # F: bound runs only
    assert math.isnan(gap[("F", "h1", 0)]) and cert[("F", "h1", 0)] == pytest.approx(12.5)
    assert math.isnan(cert[("F", "bound:lp", 0)])  # a bound run has no solution to grade
    assert cert[("M", "g", 0)] == pytest.approx(20.0)
    assert gap[("D", "scip:paper", 0)] == pytest.approx(100 / 7)
    assert math.isnan(gap[("E", "h1", 0)]) and math.isnan(sp[("E", "h1", 0)])
    assert gap[("M", "g", 0)] == pytest.approx(20.0)
    assert math.isnan(gap[("M", "g", 1)])
    assert sp[("A", "h1", 0)] == pytest.approx(100.0)
    assert sp[("A", "h1", 1)] == pytest.approx(40.0)
    assert sp[("B", "h1", 0)] == pytest.approx(50.0)
    assert sp[("B", "highs:paper", 0)] == pytest.approx(0.5)
    assert math.isnan(sp[("C", "h1", 0)])


def test_report_files(store, tmp_path):
    out = tmp_path / "rep"
    files = report.write(store, out, senses={"maxp": "max"})
    names = {p.name for p in files}
    assert {"report.md", "runs.csv", "summary.csv", "instances.csv", "per_instance.csv",
            "gap-tabgp.png", "runtime-tabgp.png", "profile-tabgp.png", "gap-maxp.png"} <= names
    for p in files:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    summ = {(r["problem"], r["method"]): r for r in read_csv(out / "summary.csv")}
    h1 = summ[("tabgp", "h1")]
    # gaps to optimum of h1: 20, 10, 25; certified: also 12.5 on C and F (to their bounds)
    assert num(h1["mean_gap_pct"]) == pytest.approx((20 + 10 + 25) / 3)
    assert num(h1["max_gap_pct"]) == pytest.approx(25.0)
    assert num(h1["mean_cert_gap_pct"]) == pytest.approx((20 + 10 + 25 + 12.5 + 12.5) / 5)
    assert num(h1["max_cert_gap_pct"]) == pytest.approx(25.0)
    # time ratios against the fastest optimal exact run: 0.02/2, 0.05/2, 0.01/0.5 (C: none)
    assert num(h1["geomean_time_ratio"]) == pytest.approx((0.01 * 0.025 * 0.02) ** (1 / 3))
    h2 = summ[("tabgp", "h2")]
    assert num(h2["mean_gap_pct"]) == pytest.approx(25.0)
    assert num(h2["max_gap_pct"]) == pytest.approx(50.0)
    h3 = summ[("tabgp", "h3")]
    assert h3["failed"] == "1" and h3["solved"] == "0"
    assert summ[("tabgp", "highs:paper")]["optimal"] == "3"
    assert num(summ[("maxp", "g")]["mean_gap_pct"]) == pytest.approx(20.0)

    inst = {r["instance"]: r for r in read_csv(out / "instances.csv")}
    assert num(inst["A"]["optimum"]) == 10 and inst["A"]["ref_kind"] == "optimum"
    assert math.isnan(num(inst["C"]["optimum"])) and num(inst["C"]["bound"]) == 16
    assert inst["C"]["ref_kind"] == "bound" and num(inst["C"]["best_known"]) == 18
    assert inst["D"]["optima_disagree"] == "True" and num(inst["D"]["optimum"]) == 7
    assert num(inst["M"]["optimum"]) == 50 and num(inst["M"]["best_known"]) == 50

    md = (out / "report.md").read_text()
    assert "## tabgp (minimise)" in md and "## maxp (maximise)" in md
    # counted apart (time limit, failed), every mean with its n, plain / shifted geo-mean
    assert "| h2 | 2 | 2 | 0 | 0 | 25.00 (n=2) | 50.00 | 25.00 (n=2) | 50.00 | " in md
    # h1: gap to optimum over 3 runs (A twice, B), certified gap over 5 (and C, F)
    assert "| h1 | 6 | 6 | 0 | 0 | 18.33 (n=3) | 25.00 | 16.00 (n=5) | 25.00 | " in md
    # no optimum on C: no gap to optimum, the certified gap to its best bound 16
    assert "| `C` | - | >= 16 | h1 | 1 | feasible | 18 | - | 12.50 |  |" in md
    assert "| `F` | - | >= 16 | bound:lp | 1 | bound | - | - | - | 15 |" in md
    assert "| `F` | - | >= 16 | bound:bad | 1 | error | - | - | - |  |" in md
    # two runs: the mean is labelled as a mean, with its range (not a bare 17.3333)
    assert "| `A` | 10 (opt) | >= 10 | h1 | 2 | 2 feasible | mean 11.5 of 2 [11, 12] | 15.00 | "\
        "15.00 |" in md
    # a speed-up only beside the gap it buys: h2 runs 4x and 2x faster at a mean gap of 25 %
    assert "| h2 | 2 | 2 | 0 | 0 | 25.00 (n=2) | 50.00 | 25.00 (n=2) | 50.00 | 0.354 / 0.374 "\
        "(n=2) | 2.83 at 25.00 % |" in md
    # an exact run's own bound is shown beside it
    assert "| `A` | 10 (opt) | >= 10 | scip:paper | 1 | time_limit | 12 | 20.00 | 20.00 | 9 |" in md
    assert "| `E` | - | - | h1 | 1 | feasible | 3 | - | - |  | - |" in md  # no reference
    # a performance profile needs two exact methods: maxp has one
    assert "profile-maxp.png" not in names and "profile-maxp" not in md
    assert "exact methods report different optima on `D`" in md
    assert "![gap-tabgp](gap-tabgp.png)" in md
    assert "| `A` | h3 | 0 | killed |" in md
    assert "| `E` | - | - | h1 | 1 | feasible | 3 | - |" in md


def test_profile_ratios(store):
    df = report.frame(Store(store).rows())
    labels, ratios = report.profile(df, "tabgp")
    assert labels == ["highs:paper", "scip:paper"]
    by = dict(zip(labels, ratios.T, strict=True))
    # instances in store order A, B, C, D
    assert list(by["highs:paper"]) == [1.0, 2.0, math.inf, 1.0]
    assert list(by["scip:paper"]) == [math.inf, 1.0, math.inf, 1.0]


def test_report_cli(store, tmp_path, capsys):
    assert main(["report", str(store), "-o", str(tmp_path / "r2")]) == 0
    assert "report.md" in capsys.readouterr().out


def test_gap_against_a_zero_reference_and_a_negative_one():
    """The module docstring: gap = 100 (obj - ref) / |ref| (min), 100 (ref - obj) / |ref| (max),
    undefined when ref is 0 and the objective is not (0 when both are)."""
    assert report._gap(0.0, 0.0, "min") == 0.0
    assert report._gap(0.0, 0.0, "max") == 0.0
    assert math.isnan(report._gap(2.0, 0.0, "min"))
    assert math.isnan(report._gap(-2.0, 0.0, "max"))
    assert math.isnan(report._gap(0.5, 0.0, "max"))
    assert report._gap(-8.0, -10.0, "min") == pytest.approx(100 * 2 / 10)
    assert report._gap(-12.0, -10.0, "max") == pytest.approx(100 * 2 / 10)
    assert math.isnan(report._gap(float("inf"), 10.0, "min"))
    # no objective or no reference: no gap (not an exception)
    assert math.isnan(report._gap(None, 10.0, "min"))
    assert math.isnan(report._gap(5.0, None, "min"))
    # the tolerance 1e-6 is a strict bound: |ref| = 1e-6 is a reference, |obj - 0| = 1e-6 a gap
    assert report._gap(2e-6, 1e-6, "min") == pytest.approx(100.0)
    assert math.isnan(report._gap(1e-6, 0.0, "min"))


def test_library_reference_when_the_store_proves_no_optimum(store, tmp_path, monkeypatch):
    """Instance E has no exact run: with a certified optimum of 2 in the reference library the
    heuristic's 3 is 50 % above it, marked as coming from the library; instance C (a bound only)
    takes the library's optimum 17 over its bound 16; A keeps its own proven optimum."""
    from types import SimpleNamespace

    lib = {"h-E": SimpleNamespace(status="optimal", objective=2.0),
           "h-C": SimpleNamespace(status="optimal", objective=17.0),
           "h-A": SimpleNamespace(status="optimal", objective=99.0)}
    monkeypatch.setattr(report, "_library", lambda h: lib.get(h))
    df = report.frame(Store(store).rows())
    by = {(r.instance, r.method): r for r in df.itertuples()}
    assert by[("E", "h1")].ref_kind == "library" and by[("E", "h1")].gap_pct == 50.0
    assert by[("C", "h1")].ref_kind == "library"
    assert by[("C", "h1")].gap_pct == pytest.approx(100 * (18 - 17) / 17)
    assert by[("A", "h2")].ref_kind == "optimum" and by[("A", "h2")].gap_pct == 50.0
    files = report.write(store, tmp_path / "r", senses={"maxp": "max"})
    md = (tmp_path / "r" / "report.md").read_text()
    assert "| `E` | 2 (library opt) | - | h1 |" in md and files
