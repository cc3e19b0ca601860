"""The Nara loose-side table (:mod:`dmlopt.benchmarks.tables.nara_loose`) on a hand-made store:
every gap below is computed by hand from the runs' values."""

from __future__ import annotations

import pytest

from dmlopt.benchmarks.tables import nara_loose, rows
from tests.bench.test_tables_bounds import bound, heur
from tests.bench.test_tables_loose import exact

A = "uniform(topology=alpha,n_requests=32)#0"
B = "uniform(topology=alpha,n_requests=32)#1"
C = "uniform(topology=alpha,n_requests=24)#3"
Z = "azure(topology=alpha,n_requests=32)#0"


def store():
    return rows([
        exact("nara", A, "highs:offline", 28), heur("nara", A, "tetris", 25),
        heur("nara", A, "netfit-probe", 26), heur("nara", A, "offline-search", 27),
        bound("nara", A, "aggregate", 29), bound("nara", A, "cover", 28),
        exact("nara", B, "highs:offline", 27, status="time_limit", best_bound=29),
        heur("nara", B, "netfit", 25), bound("nara", B, "aggregate", 30),
        exact("nara", C, "highs:offline", 20), heur("nara", C, "nara", 20),
        heur("nara", C, "offline-search", 20), bound("nara", C, "aggregate", 20),
        exact("nara", Z, "highs:offline", 30), heur("nara", Z, "tetris", 30),
        bound("nara", Z, "aggregate", 30)])


def test_frame_splits_the_gap_in_requests_and_keeps_uniform_only():
    f = nara_loose.frame(store())
    assert list(f["instance"].unique()) == [C, A, B]  # by requests, then seed; no azure
    a = f[(f["instance"] == A) & (f["bound_method"] == "aggregate")].iloc[0]
    # optimum 28: aggregate 29 is 1 request (100/28 %) above, netfit-probe 26 two below
    assert a["bound_gap_units"] == 1.0 and a["heur_gap_units"] == 2.0
    assert a["bound_gap_pct"] == pytest.approx(100 / 28)
    assert a["heuristic"] == "netfit-probe" and a["loose_side"] == "heuristic"
    c = f[(f["instance"] == A) & (f["bound_method"] == "cover")].iloc[0]
    assert c["bound_gap_units"] == 0.0
    z = f[(f["instance"] == C) & (f["bound_method"] == "aggregate")].iloc[0]
    assert str(z["bound_gap_pct"]) == "0.0" and z["loose_side"] == "neither"
    assert not f[f["instance"] == B].iloc[0]["proven"]
    assert f["setting"].tolist()[0] == "alpha, 24 requests, uniform"


def test_offline_allocator_is_graded_apart(tmp_path):
    off = nara_loose.frame(store(), nara_loose.OFFLINE)
    a = off[(off["instance"] == A) & (off["bound_method"] == "aggregate")].iloc[0]
    assert a["objective"] == 27 and a["heur_gap_units"] == 1.0 and a["loose_side"] == "both"
    text = nara_loose.loose_side(store(), tmp_path)
    assert "**Offline: `offline-search`**" in text
    # online, 32 requests, aggregate: one of two proven; bound 1 request (3.6 %) above,
    # best online 2 below (7.1 %)
    assert ("| alpha, 32 requests, uniform | `aggregate` | 1 of 2 | 28 | 30 / 30 | "
            "3.6 % / 3.6 % | 7.1 % / 7.1 % | 1.0 / 1.0 | 2.0 / 2.0 | heuristic (1) | 0 |") in text
    assert "1: not proven (highs:offline: 27 / 29)" in text
    assert nara_loose.loose_side(rows([]), tmp_path) == "_no runs_"
