"""TAP lower bounds (models/tap/bounds.py) against brute force written here."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlopt
from dmlopt.models.tap import Instance
from dmlopt.models.tap.bounds import BOUNDS, gilmore_lawler, hahn_grant


def _instance(rng: np.random.Generator, m: int, n: int, K: int, *, symmetric: bool = False,
              integral: bool = True, sparse: float = 0.0) -> Instance:
    if integral:
        mm = rng.integers(0, 10, size=(m, m)).astype(float)
        d = rng.integers(1, 6, size=(n, n)).astype(float)
    else:
        mm = rng.random((m, m)) * 7.3
        d = rng.random((n, n)) * 3.1 + 0.1
    mm[rng.random((m, m)) < sparse] = 0.0
    if symmetric:
        mm = np.triu(mm, 1) + np.triu(mm, 1).T
    d = np.triu(d, 1) + np.triu(d, 1).T
    return Instance(M=mm.tolist(), D=d.tolist(), K=K)


def _brute_force(inst: Instance) -> float:
    """Optimum of (8) over every map of modules to VMs with at most K per VM, by loops."""
    mm, d = inst.M, inst.D
    m, n, K = len(mm), len(d), inst.K
    best = math.inf
    for vms in itertools.product(range(n), repeat=m):
        if max(vms.count(j) for j in range(n)) > K:
            continue
        total = 0.0
        for i in range(m):
            for k in range(m):
                total += mm[i][k] * d[vms[i]][vms[k]]
        best = min(best, total)
    return best


def _slow_glb_sym(inst: Instance) -> float:
    """Gilmore-Lawler on W = M + M^T by enumeration: the row minimum for module i on slot s over
    every injective map of the other modules into the other slots, then the best injective map
    of modules to slots by enumeration; halved."""
    mm, d, K = inst.M, inst.D, inst.K
    m, n = len(mm), len(d)
    kc = min(K, m)
    slots = [j for j in range(n) for _ in range(kc)]
    w = [[(mm[i][k] + mm[k][i]) if i != k else 0.0 for k in range(m)] for i in range(m)]
    row = [[0.0] * len(slots) for _ in range(m)]
    for i in range(m):
        others = [k for k in range(m) if k != i]
        for s in range(len(slots)):
            free = [t for t in range(len(slots)) if t != s]
            row[i][s] = min(sum(w[i][k] * d[slots[s]][slots[t]]
                                for k, t in zip(others, ts, strict=True))
                            for ts in itertools.permutations(free, len(others)))
    lap = min(sum(row[i][s] for i, s in enumerate(ss))
              for ss in itertools.permutations(range(len(slots)), m))
    return lap / 2.0


CASES = [  # m, n, K, symmetric M
    (4, 4, 1, True), (5, 5, 1, False), (4, 6, 1, False), (3, 5, 1, True), (5, 3, 2, False),
    (6, 3, 2, True), (4, 2, 3, False), (6, 6, 1, False),
]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("method", sorted(BOUNDS))
def test_bound_below_brute_force(method, case, seed):
    m, n, K, sym = case
    rng = np.random.default_rng(1000 * seed + 17 * m + n + K)
    inst = _instance(rng, m, n, K, symmetric=sym, integral=seed % 2 == 0,
                     sparse=0.4 if seed == 3 else 0.0)
    opt = _brute_force(inst)
    res = dmlopt.bound(inst, method)
    assert res.status == "bound"
    assert res.bound <= opt + 1e-9 * max(1.0, opt)
    if res.objective is not None:
        assert res.objective >= opt - 1e-9 * max(1.0, opt)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("case", [(3, 3, 1), (4, 4, 1), (3, 4, 1), (4, 2, 2), (3, 2, 2)])
def test_glb_matches_slow_reference(case, seed):
    m, n, K = case
    rng = np.random.default_rng(seed)
    inst = _instance(rng, m, n, K)
    bound, _, metrics = gilmore_lawler(inst)
    ref = _slow_glb_sym(inst)
    assert metrics["glb_sym"] == pytest.approx(ref, abs=1e-9)
    assert bound >= math.ceil(ref - 1e-9)          # the largest of three, rounded up
    assert bound <= _brute_force(inst)


def test_glb_of_nug12_is_the_published_value():
    from dmlopt.models.tap import qaplib

    # Gilmore-Lawler bound of nug12 in QAPLIB's bound tables: 493 (optimum 578)
    assert dmlopt.bound(qaplib.load("nug12"), "glb").bound == 493.0


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("case", [(5, 5, 1, False), (4, 6, 1, True), (5, 3, 2, False)])
def test_hahn_grant_at_least_glb(case, seed):
    m, n, K, sym = case
    inst = _instance(np.random.default_rng(50 + seed), m, n, K, symmetric=sym)
    _, _, glb = gilmore_lawler(inst)
    bound, vm, metrics = hahn_grant(inst, time_limit=30)
    assert bound >= math.ceil(glb["glb_sym"] - 1e-9)    # round 1 is the GLB on W / 2
    assert metrics["glb"] == math.ceil(glb["glb_sym"] - 1e-9)
    assert bound <= _brute_force(inst)
    loads = np.bincount(vm, minlength=n)
    assert len(vm) == m and loads.max() <= K                # the solution found on the way


def test_time_limited_runs_stay_valid():
    from dmlopt.models.tap import qaplib

    inst = qaplib.load("nug20")
    opt = qaplib.best_known("nug20")      # 2570, proven optimal (QAPLIB)
    bound, _, metrics = hahn_grant(inst, time_limit=0.0)
    assert bound == -math.inf and metrics["rounds"] == 0    # nothing finished: no bound
    res = dmlopt.bound(inst, "hahn-grant", time_limit=1e-6)
    assert res.bound == dmlopt.bound(inst, "glb").bound      # falls back to the GLB
    part, _, metrics = hahn_grant(inst, time_limit=0.3, stall=10**6)
    assert metrics["stopped_by"] == 1 and 1 <= metrics["rounds"] < 10_000
    full, _, _ = hahn_grant(inst, time_limit=60)
    assert dmlopt.bound(inst, "glb").bound <= part <= full <= opt


@given(m=st.integers(2, 5), extra=st.integers(0, 2), K=st.integers(1, 2),
       seed=st.integers(0, 2**32 - 1), sym=st.booleans(), integral=st.booleans())
@settings(max_examples=25, deadline=None, derandomize=True)
def test_drawn_instances(m, extra, K, seed, sym, integral):
    n = max(1, -(-m // K)) + extra
    if n > 5:
        n = 5
    inst = _instance(np.random.default_rng(seed), m, n, K, symmetric=sym, integral=integral,
                     sparse=0.3)
    opt = _brute_force(inst)
    for method in BOUNDS:
        assert dmlopt.bound(inst, method, time_limit=10).bound <= opt + 1e-9 * max(1.0, opt)
