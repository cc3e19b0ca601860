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
               heur(w1, "rdda-pack", 0.20), bound(w1, 0.15),
               heur(r0, "rdda-pack", 12.0), bound(r0, 1.9)])
    text = rar_bounds.bounds(df, tmp_path)
    # MinW: (0.25 - 0.10) / 0.025 = 6.0 and (0.20 - 0.15) / 0.025 = 2.0: mean 4.0, max 6.0;
    # MaxR: (12.0 - 1.9) / 2.525 = 4.0
    assert "| 40 requests, MinW | 0.025 | 4.0 | 6.0 |" in text
    assert "| 40 requests, MaxR | 2.525 | 4.0 | 4.0 |" in text
    assert "- 40 requests, MinW: 0: 6.0; 1: 2.0" in text
