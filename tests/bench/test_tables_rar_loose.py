"""RAR's gap in blocked requests (``dmlopt reproduce rar bounds``) and its ``loose`` table
(scaled-down settings with proven optima) on hand-made stores: every value below is computed
by hand from the runs' objectives and the paper's constants (1 / |R| per blocked request,
plus alpha = 100 / |R| under MaxR)."""

from __future__ import annotations

import json

import pytest

from dmlopt.benchmarks.tables import rar_bounds, rows


def heur(instance, method, objective):
    return {"problem": "rar", "instance": instance, "instance_hash": instance,
            "kind": "heuristic", "method": method, "options": "{}", "seed": 0,
            "status": "feasible", "objective": objective, "bound": None, "seconds": 1.0,
            "wall_seconds": 1.0, "metrics": {}}


def bound(instance, value, name="energy"):
    payload = json.dumps({"bound": name, "options": {}, "time_limit": 300.0})
    return {"problem": "rar", "instance": instance, "instance_hash": instance, "kind": "bound",
            "method": f"bound:{name}", "options": payload, "seed": 0, "status": "bound",
            "objective": None, "bound": value, "seconds": 2.0, "wall_seconds": 2.0,
            "metrics": {}}


def test_unit_is_one_blocked_request_of_eq4():
    # |R| = 40: 1/40 = 0.025; MaxR adds alpha = 100/40 = 2.5
    assert rar_bounds.unit("cpn38(requests=40,scheme=MinW)#0") == pytest.approx(0.025)
    assert rar_bounds.unit("cpn38(requests=40,scheme=MaxR)#1") == pytest.approx(2.525)
    assert rar_bounds.unit("cpn38(requests=40,scheme=MaxR,slots=12,cu_scale=0.1)#1") == \
        pytest.approx(2.525)
    assert rar_bounds.unit("fig2.json") != rar_bounds.unit("fig2.json")  # NaN: no generator


def test_bounds_table_gives_the_gap_in_blocked_requests(tmp_path):
    w0, w1 = "cpn38(requests=40,scheme=MinW)#0", "cpn38(requests=40,scheme=MinW)#1"
    r0 = "cpn38(requests=40,scheme=MaxR)#0"
    df = rows([heur(w0, "rdda", 0.30), heur(w0, "rdda-pack", 0.25), bound(w0, 0.10),
               bound(w0, 0.20, "columns"), heur(w1, "rdda-pack", 0.20), bound(w1, 0.15),
               bound(w1, 0.175, "columns"), heur(r0, "rdda-pack", 12.0), bound(r0, 1.9)])
    text = rar_bounds.bounds(df, tmp_path)
    # MinW, energy: (0.25 - 0.10) / 0.025 = 6.0 and (0.20 - 0.15) / 0.025 = 2.0: mean 4.0,
    # max 6.0; columns: (0.25 - 0.20) / 0.025 = 2.0 and (0.20 - 0.175) / 0.025 = 1.0;
    # MaxR: (12.0 - 1.9) / 2.525 = 4.0
    assert "| 40 requests, MinW | `energy` | 0.025 | 4.0 | 6.0 |" in text
    assert "| 40 requests, MinW | `columns` | 0.025 | 1.5 | 2.0 |" in text
    assert "| 40 requests, MaxR | `energy` | 2.525 | 4.0 | 4.0 |" in text
    assert "- 40 requests, MinW, `energy`: 0: 6.0; 1: 2.0" in text
    assert "- 40 requests, MinW, `columns`: 0: 2.0; 1: 1.0" in text
    # columns was not run on MaxR: no row for it there (not a row of "0 of 1 with a bound")
    assert "MaxR | `columns`" not in text and "MaxR, `columns`" not in text


def exact(instance, objective, bound_value, status="optimal", seconds=100.0):
    return {"problem": "rar", "instance": instance, "instance_hash": instance, "kind": "exact",
            "method": "highs:config", "options": json.dumps({"time_limit": 300.0}), "seed": 0,
            "status": status, "objective": objective, "bound": bound_value,
            "seconds": seconds, "wall_seconds": seconds, "metrics": {}}


def test_loose_table_splits_the_gap_in_blocked_requests(tmp_path):
    from dmlopt.benchmarks.tables import rar_loose

    a = "cpn38(requests=16,scheme=MaxR,slots=12,cu_scale=0.12)#0"
    b = "cpn38(requests=16,scheme=MaxR,slots=12,cu_scale=0.12)#1"
    u = 1 / 16 + 100 / 16  # 6.3125: one blocked request under MaxR
    df = rows(recs := [heur(a, "rdda", 7 * u), heur(a, "rdda-pack", 5 * u),
                       heur(a, "rdda-lns", 5 * u),
                       bound(a, 2 * u), exact(a, 4 * u, 4 * u),
                       heur(b, "rdda-pack", 3 * u), bound(b, 1 * u),
                       exact(b, 3 * u, 2 * u, status="time_limit", seconds=300.0),
                       # a full-size instance (no cu_scale) is not in this table
                       heur("cpn38(requests=500,scheme=MaxR)#0", "rdda", 9.0)])
    fr = rar_loose.frame(df)
    assert list(fr["instance"]) == [a, b]
    text = rar_loose.render(df, tmp_path)
    # seed 0: optimum 4 units, bound 2 (50 % of the optimum, 2.0 requests), best heuristic 5
    # (rdda-pack, listed before rdda-lns: 25 %, 1.0 request): the bound is the loose side
    assert ("| 16 requests, 12 slots, CUs x 0.12, MaxR | `energy` | 1 of 2 | 25.25 | 100 / 100 "
            "| 50.0 % / 50.0 % | 25.0 % / 25.0 % | 2.0 / 2.0 | 1.0 / 1.0 | bound (1) | 0 |"
            ) in text
    assert "`rdda-pack` 31.56 (25.0 %)" in text and "1: not proven" in text
    # seed 1, not proven: optimum in [2, 3] units; energy 1 unit: at least 1.0 below it;
    # rdda-pack 3 units: at most 1.0 above it; the exact run's own gap 1.00
    assert ("| 16 requests, 12 slots, CUs x 0.12, MaxR, `energy` | 1 | 1.0 / 1.0 | 1.0 / 1.0 "
            "| 1.00 / 1.00 |") in text
    assert "| `columns` |" not in text  # a bound with no runs has no rows
    # a second bound: its own rows, its gap to the optimum (seed 0: 3 units, 25 %, 1.0 request)
    text = rar_loose.render(rows([*recs, bound(a, 3 * u, "columns")]), tmp_path)
    assert ("| 16 requests, 12 slots, CUs x 0.12, MaxR | `columns` | 1 of 2 | 25.25 | 100 / 100 "
            "| 25.0 % / 25.0 % | 25.0 % / 25.0 % | 1.0 / 1.0 | 1.0 / 1.0 |") in text
    assert rar_loose.TABLES[0].title_of(df).startswith(
        "Which side is loose: proven optima of scaled-down 38-node settings (16 requests, "
        "12 slots, CUs x 0.12; seeds 0 and 1)")
