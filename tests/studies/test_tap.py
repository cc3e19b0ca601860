"""Smoke test of the TAP bound study (benchmarks/studies/tap/bounds.py, paper 000): on scr12
the bound is below QAPLIB's published optimum (31410) and the gap is taken against it."""

from __future__ import annotations

import csv

import pytest

from benchmarks.studies.tap import bounds


def test_bounds_script_on_scr12(tmp_path):
    assert bounds.main(["-o", str(tmp_path), "--only", "scr12", "--no-dc", "--time-limit", "2",
                        "--methods", "glb"]) in (0, None)
    with open(tmp_path / "runs.csv", newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["instance"], row["method"], float(row["best_known"])) == ("scr12", "glb", 31410)
    bound = float(row["bound"])
    assert 0 < bound <= 31410
    assert float(row["gap"]) == pytest.approx(100 * (31410 - bound) / 31410)
    assert "scr" in (tmp_path / "table.md").read_text()
