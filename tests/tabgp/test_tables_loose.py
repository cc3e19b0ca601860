"""The TABGP "which side is loose" table (:mod:`dmlopt.benchmarks.tables.tabgp_loose`) on a
hand-made store: each spectral variant is kept apart and its gaps are computed by hand."""

from __future__ import annotations

import pytest

from dmlopt.benchmarks.tables import rows, tabgp_loose
from tests.bench.test_tables_bounds import bound, heur
from tests.bench.test_tables_loose import exact

D0 = "drift(n=30,tau=4,l=2,m=150)#0"
D1 = "drift(n=30,tau=4,l=2,m=150)#1"
ER = "er(n=300,p=0.05,tau=3,l=6)#0"


def _store():
    return rows([
        exact("tabgp", D0, "highs:pairs", 100.0), heur("tabgp", D0, "dense-refine", 104.0),
        heur("tabgp", D0, "best", 102.0), heur("tabgp", D0, "memetic", 103.0),
        bound("tabgp", D0, "spectral", 90.0, options='{"window":3}'),
        bound("tabgp", D0, "spectral", 80.0, options='{"window":3,"pairs":0}'),
        bound("tabgp", D0, "spectral", 96.0),
        # seed 1 not proven: its gaps are left out of the summary
        exact("tabgp", D1, "highs:pairs", 120.0, status="time_limit", best_bound=110.0),
        heur("tabgp", D1, "best", 120.0),
        bound("tabgp", D1, "spectral", 100.0, options='{"window":3}'),
        # another family: not in this table
        heur("tabgp", ER, "best", 4704.0),
        bound("tabgp", ER, "spectral", 3900.0, options='{"window":3}'),
    ])


def test_variants_kept_apart_and_gaps():
    fr = tabgp_loose.frame(_store())
    assert set(fr["instance"]) == {D0, D1}
    d0 = fr[fr["instance"] == D0].set_index("bound_method")
    assert d0.loc["spectral-w3", "bound"] == 90.0
    assert d0.loc["spectral-w3-nopairs", "bound"] == 80.0
    assert d0.loc["spectral-default", "bound"] == 96.0
    assert d0.loc["spectral-w3", "bound_gap_pct"] == pytest.approx(10.0)
    assert d0.loc["spectral-w3-nopairs", "bound_gap_pct"] == pytest.approx(20.0)
    assert d0.loc["spectral-default", "bound_gap_pct"] == pytest.approx(4.0)
    assert list(d0["heur_gap_pct"]) == pytest.approx([2.0] * 3)  # best 102 against 100
    assert (d0["heuristic"] == "best").all()
    assert d0.loc["spectral-w3", "loose_side"] == "bound"  # 10 > 1.25 x 2
    assert d0.loc["spectral-default", "loose_side"] == "bound"  # 4 > 1.25 x 2
    d1 = fr[(fr["instance"] == D1) & (fr["bound_method"] == "spectral-w3")].iloc[0]
    assert not d1["proven"] and d1["bound"] == 100.0


def test_table_text(tmp_path):
    text = tabgp_loose.loose_drift(_store(), tmp_path)
    lines = [ln for ln in text.splitlines() if ln.startswith("| drift")]
    assert len(lines) == 3
    cells = [c.strip() for c in lines[1].strip("|").split("|")]
    assert cells[1].startswith("`spectral`, window 3, no same-label pairs")
    assert cells[2] == "1 of 2"
    assert cells[5] == "20.0 % / 20.0 %" and cells[6] == "2.0 % / 2.0 %"
    assert "0: 100 / 96 (4.0 %) / `best` 102 (2.0 %)" in text
    assert "1: not proven (highs:pairs: 120 / 110)" in text
    title = tabgp_loose.TABLES[0].title_of(_store())
    assert title.endswith("(n = 30, seeds 0 and 1)")


def test_no_runs(tmp_path):
    assert tabgp_loose.loose_drift(rows([]), tmp_path) == "_no runs_"
