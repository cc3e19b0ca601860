"""Smoke tests of the TABGP studies (benchmarks/studies/tabgp/, paper 004): the exact study's
optimum is the one another formulation proves; the planted study repairs the planted groups
into a feasible solution (only vertices of over-full groups move) and prints it beside the
heuristics."""

from __future__ import annotations

import csv

import pytest

import dmlopt
from benchmarks.studies.tabgp import exact, planted
from dmlopt.models.tabgp.generators import planted_groups


def test_exact_compare_proves_the_optimum(tmp_path):
    exact.main(["-o", str(tmp_path), "compare", "--formulations", "pairs", "--taus", "1",
                "--seeds", "0", "--ps", "0.5", "--time-limit", "30"])
    with open(tmp_path / "tabgp_exact_compare_highs.csv", newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    inst = exact.instance(12, 0.5, 1, 0)
    ref = dmlopt.solve(inst, formulation="clusters", threads=1, time_limit=60)
    assert row["status"] == "optimal" and ref.status == "optimal"
    assert float(row["objective"]) == pytest.approx(ref.objective)


def test_planted_repair_fits_and_only_moves_over_full_groups():
    spec = {"n": 64, "tau": 3, "l": 4, "m": 200, "drift": 0.3}
    inst = dmlopt.generate("tabgp", {"generator": "drift", **spec}, seed=1)
    groups = planted_groups(seed=1, **spec)
    assert max(max(g.count(x) for x in range(4)) for g in groups) > inst.k  # needs a repair
    labels = planted.repaired(inst, groups)
    for t, lab in enumerate(labels):
        assert max(lab.count(x) for x in range(4)) <= inst.k
        moved = [v for v in range(64) if lab[v] != groups[t][v]]
        assert all(groups[t].count(groups[t][v]) > inst.k for v in moved)
    assert dmlopt.evaluate(inst, {"assignment": labels}).feasible


def test_planted_script(tmp_path, capsys):
    planted.main(["-o", str(tmp_path), "--seeds", "0", "--n", "32"])
    row = (tmp_path / "tabgp_planted.md").read_text().strip().splitlines()[-1]
    cells = [c.strip() for c in row.strip("|").split("|")]
    inst = dmlopt.generate("tabgp", {**planted.SPEC, "n": 32, "m": 160}, seed=0)
    assert cells[0] == "0"
    assert float(cells[2]) == dmlopt.heuristic(inst, "best", seed=0).objective
    for argv in (["--seeds", "a-b"], ["--n", "8"], ["--n", "1000000000"]):
        with pytest.raises(SystemExit) as err:
            planted.main(["-o", str(tmp_path / "out"), *argv])
        assert err.value.code == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
        assert not (tmp_path / "out").exists()
