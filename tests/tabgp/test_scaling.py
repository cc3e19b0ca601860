"""The TABGP local search and ILS give the same results as before their speed-ups.

golden/scaling.json holds the assignments of the local search (heuristics/tabgp/ls.py) and
``ils`` as they were before candidates were drawn lazily and clean steps skipped, computed once
by that code on the inputs below: the new code must produce identical assignments for the same
start and seed.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.tabgp import _graphs, _random_labels, _replicate, ils
from dmlopt.heuristics.tabgp import ls as new_ls


@cache
def _golden() -> dict:
    return json.loads((Path(__file__).parent / "golden" / "scaling.json").read_text())


# (n, m, tau, l, weighted, alpha): small clusters (the full enumeration) and large ones (the
# lazy candidates of a cluster pair), unit and integer weights, with and without migration cost
CASES = [(60, 200, 3, 4, False, 3.0), (200, 1000, 4, 4, True, 3.0), (300, 1500, 3, 8, False, 1.0),
         (400, 2000, 2, 2, True, 0.0)]


def _drift(n, m, tau, l, weighted, alpha, seed=1):
    return dmlopt.generate("tabgp", {"generator": "drift", "n": n, "m": m, "tau": tau, "l": l,
                                     "weighted": weighted, "alpha": alpha}, seed=seed)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("temporal", [False, True])
def test_local_search_same_as_reference(case, temporal):
    inst = _drift(*case)
    graphs = _graphs(inst)[1]
    for seed in range(2):
        start = _replicate(inst, _random_labels(inst, seed))
        want = _golden()["local_search"][f"{CASES.index(case)}/{int(temporal)}/{seed}"]
        got = new_ls.local_search(graphs, start, inst.l, inst.k, inst.alpha, temporal=temporal)
        assert got.tolist() == want, seed


def test_lazy_pairs_are_exercised(monkeypatch):
    calls = []
    orig = new_ls._Sequence._lazy_pair
    monkeypatch.setattr(new_ls._Sequence, "_lazy_pair",
                        lambda self, *a: calls.append(1) or orig(self, *a))
    inst = _drift(*CASES[1])
    graphs = _graphs(inst)[1]
    new_ls.local_search(graphs, _replicate(inst, _random_labels(inst, 0)), inst.l, inst.k,
                        inst.alpha)
    assert calls


@pytest.mark.parametrize("case", CASES[:3])
def test_ils_same_as_reference(case):
    inst = _drift(*case)
    for seed in (0, 3):
        got = np.asarray(ils(inst, seed=seed, start="dense", iterations=6).assignment)
        assert got.tolist() == _golden()["ils"][f"{CASES.index(case)}/{seed}"], seed


def test_clean_steps_change_nothing():
    """A local optimum changed at step 0 only: steps 2 and 3 marked clean, same result."""
    inst = _drift(*CASES[1])
    graphs = _graphs(inst)[1]
    opt = new_ls.local_search(graphs, _replicate(inst, _random_labels(inst, 0)), inst.l,
                              inst.k, inst.alpha)
    trial = opt.copy()
    trial[0] = np.roll(trial[0], 7)
    got = new_ls.local_search(graphs, trial, inst.l, inst.k, inst.alpha,
                              clean=np.array([False, False, True, True]))
    assert got.tolist() == _golden()["clean"]
