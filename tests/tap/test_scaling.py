"""TAP local search: the incremental swap gains take the same swaps as the full recomputation.

golden/scaling.json holds the outputs of the previous descent (all N^2 gains by an N^3 product
after every swap), computed once by that code on the inputs below: the descent from each start,
the local searches' solutions (the old descent swapped in), and the inexact-data descent's cost.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import tap as H
from dmlopt.heuristics.tap import search as ts


def _golden() -> dict:
    return json.loads((Path(__file__).parent / "golden" / "scaling.json").read_text())


def _dc(m, seed, overlay, K=1, k=8, vms=None):
    return dmlopt.generate("tap", {"generator": "dc", "topology": "fat-tree", "k": k,
                                   "modules": m, "vms": vms or 2 * m, "overlay": overlay,
                                   "K": K}, seed=seed)


def _instances():
    yield _dc(12, 0, "random")
    yield _dc(16, 1, "ps")
    yield _dc(20, 2, "allreduce", K=2, vms=14)
    yield _dc(24, 3, "ring", K=3, vms=10)
    yield _dc(40, 4, "random", k=16, vms=80)
    yield dmlopt.generate("tap", {"generator": "random", "m": 9, "n": 5, "K": 2}, seed=5)
    yield dmlopt.generate("tap", {"generator": "qaplib", "name": "nug12"}, seed=0)


@pytest.mark.parametrize("seed", range(3))
def test_descent_identical_to_the_full_recomputation(seed):
    want = _golden()["descent"]
    for i, inst in enumerate(_instances()):
        qap = ts.padded(inst.traffic, inst.distance, inst.K)
        assert ts._exact(qap)
        perm = np.random.default_rng(seed).permutation(qap.size)
        cost = ts.total(qap, perm)
        new = ts.descent(qap, perm, cost)
        old = want[f"{seed}/{i}"]
        assert new[0].tolist() == old["perm"] and new[1] == old["cost"], (seed, i)


@pytest.mark.parametrize("method", ["local-search", "cle-ls", "abm-ls"])
def test_local_search_same_solution(method):
    want = _golden()["local_search"]
    for k, inst in enumerate(_instances()):
        new = dmlopt.heuristic(inst, method, seed=k, restarts=5)
        old = want[f"{method}/{k}"]
        assert new.solution.model_dump(mode="json") == old["solution"], (method, k)
        assert new.objective == old["objective"], (method, k)


def test_inexact_data_take_the_full_recomputation(monkeypatch):
    """Traffic 0.3 per link: gains are rounded, so the descent keeps the full product."""
    inst = dmlopt.generate("tap", {"generator": "dc", "topology": "fat-tree", "k": 4,
                                   "modules": 6, "overlay": "ring", "weight": 0.3}, seed=0)
    qap = ts.padded(inst.traffic, inst.distance, inst.K)
    assert not ts._exact(qap)
    monkeypatch.setattr(ts, "_descent_incremental", None)    # would raise if called
    perm = np.arange(qap.size)
    assert ts.descent(qap, perm, ts.total(qap, perm))[1] == _golden()["inexact"]


def test_estimate_charges_the_path_taken():
    exact = _dc(40, 0, "random", k=16, vms=80)
    inexact = dmlopt.generate("tap", {"generator": "dc", "topology": "fat-tree", "k": 16,
                                      "modules": 40, "vms": 80, "overlay": "ring",
                                      "weight": 0.3}, seed=0)
    opts = H.LocalSearchOptions()
    assert H.estimate_local_search(exact, opts).work < H.estimate_local_search(
        inexact, opts).work / 4
