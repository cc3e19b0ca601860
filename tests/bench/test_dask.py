"""The Dask path (a LocalCluster) gives the same rows as the local process pool, with the same
per-run hard limits."""

from __future__ import annotations

import textwrap

import pytest

from dmlopt.benchmarks import store as store_mod
from dmlopt.cli import main

pytest.importorskip("distributed")

SUITE = """\
name = "d"
description = "dask test"
[[groups]]
problem = "tabgp"
instances = [
  { generator = "er", params = { n = 7, p = 0.4, tau = 2, l = 2 }, seeds = [0, 1] },
]
methods = [
  { solver = "highs", formulation = "paper", time_limit = 20 },
  { heuristic = "random", seeds = [0, 1] },
  { heuristic = "bench_dask_fakes:slow", kill_limit = 0.3, grace = 0.2 },
]
"""

FAKES = """
import time


def slow(instance, *, seed=0):
    time.sleep(60)
"""


def comparable(rows):
    return sorted((r["instance_hash"], r["method"], r["options"], r["seed"], r["status"],
                   r["objective"], r["feasible"], r["instance"]) for r in rows)


def test_dask_local_cluster_gives_the_same_rows(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("DMLOPT_BENCH_ALLOW_IMPORT", "1")
    (tmp_path / "bench_dask_fakes.py").write_text(FAKES)
    suite = tmp_path / "d.toml"
    suite.write_text(textwrap.dedent(SUITE))
    local, dask = tmp_path / "local.sqlite", tmp_path / "dask.sqlite"
    assert main(["bench", str(suite), "-o", str(local), "--workers", "2"]) == 0
    assert main(["bench", str(suite), "-o", str(dask), "--workers", "2", "--dask", "local"]) == 0
    assert "on dask local" in capsys.readouterr().err
    a, b = store_mod.read(local), store_mod.read(dask)
    assert len(a) == len(b) == 2 * (1 + 2 + 1)
    assert comparable(a) == comparable(b)
    assert {r["status"] for r in b} == {"optimal", "feasible", "killed"}
    assert all(r["solver_version"].startswith("highs") for r in b if r["kind"] == "exact")
    # resuming on Dask skips what is stored
    assert main(["bench", str(suite), "-o", str(dask), "--dask", "local"]) == 0
    assert "8 already in" in capsys.readouterr().err
