"""The "which side is loose" rows and table (:mod:`dmlopt.benchmarks.tables.loose`) on
hand-made stores: every gap below is computed by hand from the runs' values."""

from __future__ import annotations

import math

import pytest

from dmlopt.benchmarks.tables import loose, rows
from tests.bench.test_tables_bounds import bound, heur


def exact(problem, instance, method, objective, *, status="optimal", best_bound=None,
          seconds=30.0):
    return {"problem": problem, "instance": instance, "instance_hash": instance,
            "kind": "exact", "method": method, "options": "{}", "seed": 0, "status": status,
            "objective": objective, "bound": best_bound, "seconds": seconds,
            "wall_seconds": seconds, "metrics": {}}


A = "cpn38(requests=20,scheme=MaxR)#0"
B = "cpn38(requests=20,scheme=MaxR)#1"


def test_split_of_the_gap_min_problem_with_units():
    df = rows([exact("rar", A, "highs:config", 10.0), heur("rar", A, "rdda", 14.0),
               heur("rar", A, "rdda-pack", 13.0), bound("rar", A, "energy", 8.0),
               # seed 1: bound and heuristic both at the optimum
               exact("rar", B, "highs:config", 4.0), heur("rar", B, "rdda", 4.0),
               bound("rar", B, "energy", 4.0)])
    fr = loose.loose(df, ("rdda", "rdda-pack"), ("energy",),
                     unit=lambda inst, params: 0.5 * int(params["requests"]) / 20)
    a = fr[fr["instance"] == A].iloc[0]
    assert a["proven"] and a["optimum"] == 10.0 and a["heuristic"] == "rdda-pack"
    assert a["bound_gap_pct"] == pytest.approx(20.0)  # (10 - 8) / 10
    assert a["heur_gap_pct"] == pytest.approx(30.0)  # (13 - 10) / 10
    assert a["bound_gap_units"] == pytest.approx(4.0)  # 2 / 0.5
    assert a["heur_gap_units"] == pytest.approx(6.0)  # 3 / 0.5
    assert a["loose_side"] == "heuristic"  # 3 > 1.25 x 2
    assert a["contradiction"] == ""
    b = fr[fr["instance"] == B].iloc[0]
    assert b["bound_gap_pct"] == 0.0 and b["heur_gap_pct"] == 0.0
    assert b["loose_side"] == "neither"
    fr["setting"] = "20 requests, MaxR"
    text = loose.loose_table(fr, unit_name="blocked requests")
    head, _, first = text.splitlines()[:3]
    assert "blocked requests" in head
    cells = [c.strip() for c in first.strip("|").split("|")]
    # proven, mean optimum 7, bound's gap mean 10 % / max 20 %, heuristic's 15 % / 30 %,
    # in units 2 / 4 and 3 / 6
    assert cells[2:4] == ["2 of 2", "7"]
    assert cells[5:9] == ["10.0 % / 20.0 %", "15.0 % / 30.0 %", "2.0 / 4.0", "3.0 / 6.0"]
    assert cells[9] == "heuristic (1), neither (1)" and cells[10] == "0"
    assert "0: 10 / 8 (20.0 %) / `rdda-pack` 13 (30.0 %)" in text


def test_maximisation_unproven_and_contradictions():
    c, d, e = "alpha(n=16)#0", "alpha(n=16)#1", "alpha(n=16)#2"
    df = rows([
        # max: optimum 0.8, bound 1.0 (25 % above), heuristic 0.7 (12.5 % below)
        exact("nara", c, "highs:offline", 0.8), heur("nara", c, "tetris", 0.7),
        bound("nara", c, "cover", 1.0),
        # not proven: the exact run's incumbent and bound are kept, no gaps
        exact("nara", d, "highs:offline", 0.6, status="time_limit", best_bound=0.9),
        heur("nara", d, "tetris", 0.5), bound("nara", d, "cover", 0.95),
        # a bound below a proven maximum and a heuristic above it: both are contradictions
        exact("nara", e, "highs:offline", 0.5), heur("nara", e, "tetris", 0.6),
        bound("nara", e, "cover", 0.4)])
    fr = loose.loose(df, ("tetris",), ("cover",)).set_index("instance")
    assert fr.at[c, "bound_gap_pct"] == pytest.approx(25.0)
    assert fr.at[c, "heur_gap_pct"] == pytest.approx(12.5)
    assert fr.at[c, "loose_side"] == "bound"
    assert not fr.at[d, "proven"] and math.isnan(fr.at[d, "bound_gap_pct"])
    assert fr.at[d, "exact_bound"] == 0.9 and fr.at[d, "exact_incumbent"] == 0.6
    assert "bound 0.4 beyond the optimum 0.5" in fr.at[e, "contradiction"]
    assert "`tetris` 0.6 better than the optimum 0.5" in fr.at[e, "contradiction"]
    text = loose.loose_table(fr.reset_index().assign(setting="16 requests"))
    assert "1 of 3" not in text and "2 of 3" in text  # two proven of three
    assert "Contradictions:" in text and "not proven (highs:offline: 0.6 / 0.9)" in text
    assert loose.loose_table(loose.loose(rows([]), (), ())) == "_no runs_"


def test_loose_side_rule():
    assert loose._side(2.0, 3.0, 10.0) == "heuristic"
    assert loose._side(3.0, 2.0, 10.0) == "bound"
    assert loose._side(2.0, 2.4, 10.0) == "both"
    assert loose._side(0.0, 0.0, 10.0) == "neither"
    assert loose._side(math.nan, 1.0, 1.0) == "-"
