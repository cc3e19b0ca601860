"""INC/OXC: the sparse time-shared schedule and port wiring give the old dense results exactly.

The functions prefixed ``_old_`` are the previous implementations, kept verbatim as slow
references (O(R^2) per Birkhoff-von Neumann term).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.inc_oxc import search
from dmlopt.heuristics.inc_oxc.bvn import bvn_decompose, stuff
from dmlopt.models import inc_oxc as m
from dmlopt.models.inc_oxc import evaluation as ev

# ------------------------------------------------------------------------------------------
# slow references: the previous code


def _old_ports_from_circuits(instance, c):
    P = instance.n_tor
    nxt = [k * P for k in range(instance.n_racks)]
    pairs = []
    R = instance.n_racks
    for s in range(R):
        for t in range(s + 1, R):
            for _ in range(int(round(c[s, t]))):
                pairs.append((nxt[s], nxt[t]))
                nxt[s] += 1
                nxt[t] += 1
    return pairs


def _old_time_shared(instance, wrack, ps_rack, server):
    R, P = instance.n_racks, instance.n_tor
    d = instance.arrays["data"][instance.arrays["job_of"]]
    _, _, D = m.link_loads(instance, wrack, ps_rack, server, d)
    Dp, sigma = stuff(D)
    out = []
    for theta, perm in bvn_decompose(Dp):
        ck = np.zeros((R, R), np.int64)
        for s_ in range(R):
            t_ = int(perm[s_])
            if t_ != s_:
                ck[s_, t_] += P // 2
                ck[t_, s_] += P // 2
        out.append((float(theta / sigma), ck, _old_ports_from_circuits(instance, ck)))
    return out


def _old_add_circuits(c, racks, weight=1):
    counts = {}
    for s, t in racks:
        counts[(s, t)] = counts.get((s, t), 0) + 1
        counts[(t, s)] = counts.get((t, s), 0) + 1
    for key, n in counts.items():
        c[key] += weight * n


def _old_circuits(instance, sol):
    R = instance.n_racks
    if not sol.oxc_schedule:
        c = np.zeros((R, R), np.int64)
        racks, bad = ev._rack_pairs(instance, list(sol.oxc))
        _old_add_circuits(c, racks)
        return c, bad
    c = np.zeros((R, R))
    bad = []
    if sol.oxc:
        bad.append("oxc: a solution has either oxc or oxc_schedule, not both")
    total = 0.0
    for q, (share, pairs) in enumerate(sol.oxc_schedule):
        if not (math.isfinite(share) and share >= 0):
            bad.append(f"oxc_schedule[{q}]: share {share} must be finite and >= 0")
            continue
        racks, bk = ev._rack_pairs(instance, list(pairs))
        bad += [f"oxc_schedule[{q}]." + b for b in bk]
        _old_add_circuits(c, racks, share)
        total += share
    if total > 1 + m.TOL:
        bad.append(f"oxc_schedule: time shares add up to {total:g} > 1")
    return c, bad


def _old_schedule_adapter(instance, wrack, ps_rack, server):
    """The old ``_time_shared`` in the new return shape (dense sum, as the old _schedule)."""
    sched = _old_time_shared(instance, wrack, ps_rack, server)
    return sum(share * cs for share, cs, _ in sched), [(share, p) for share, _, p in sched]


# ------------------------------------------------------------------------------------------


def _instances():
    for racks, seed in ((16, 0), (24, 1), (32, 2)):
        yield dmlopt.generate("inc_oxc", {"generator": "large", "racks": racks}, seed=seed)
    yield m.generate_dcn(seed=0, racks=10, jobs=3, workers=(8, 12), ports=2, ps_per_switch=2,
                         gpu=(60, 60), cpu=(30, 30), mem=(4, 4))


@pytest.mark.parametrize("seed", range(6))
def test_ports_from_circuits_equals_the_dense_loop(seed):
    rng = np.random.default_rng(seed)
    R = int(rng.integers(2, 30))
    inst = dmlopt.generate("inc_oxc", {"generator": "dcn", "racks": R, "ports": 12}, seed=0)
    up = np.triu(rng.integers(0, 3, (R, R)) * (rng.random((R, R)) < 0.3), 1)
    c = up + up.T
    assert ev.ports_from_circuits(inst, c) == _old_ports_from_circuits(inst, c)
    cf = c + rng.choice([0.0, 0.4, 0.5, -0.4], (R, R))        # rounding, half to even
    cf = np.triu(cf, 1) + np.triu(cf, 1).T
    assert ev.ports_from_circuits(inst, cf) == _old_ports_from_circuits(inst, cf)


@pytest.mark.parametrize("method", ["swg", "rwp", "wcg"])
def test_schedules_identical_to_the_dense_code(method, monkeypatch):
    """Same seed, same solution: the whole heuristic with the new sparse schedule against the
    same heuristic with the old dense schedule and wiring."""
    for k, inst in enumerate(_instances()):
        new = dmlopt.heuristic(inst, method, seed=k)
        with monkeypatch.context() as mp:
            mp.setattr(search, "_time_shared", _old_schedule_adapter)
            mp.setattr(search, "ports_from_circuits", _old_ports_from_circuits)
            old = dmlopt.heuristic(inst, method, seed=k)
        assert new.solution == old.solution
        assert new.objective == old.objective
        assert new.metrics == old.metrics
        if method != "wcg":
            assert new.metrics["time_shared_oxc"] == 1.0


def test_evaluator_circuits_identical_to_the_dense_code():
    for k, inst in enumerate(_instances()):
        sol = dmlopt.heuristic(inst, "rwp", seed=k).solution
        c_new, bad_new = m.circuits(inst, sol)
        c_old, bad_old = _old_circuits(inst, sol)
        assert np.array_equal(c_new, c_old) and c_new.dtype == c_old.dtype
        assert bad_new == bad_old == []
        static = dmlopt.heuristic(inst, "wcg-opt", seed=k).solution
        c_new, bad_new = m.circuits(inst, static)
        c_old, bad_old = _old_circuits(inst, static)
        assert np.array_equal(c_new, c_old) and c_new.dtype == c_old.dtype
        assert bad_new == bad_old == []


def test_evaluator_messages_identical_on_broken_pairings():
    inst = dmlopt.generate("inc_oxc", {"generator": "dcn", "racks": 4, "ports": 3}, seed=0)
    broken = [[(0, 3), (3, 6)], [(0, 0)], [(-1, 4)], [(0, 12), (1, 2)], [(0, 4), (5, 4)],
              [(0, 1)], []]
    for pairs in broken:
        sol = m.Solution(workers=[[0] * len(j.workers) for j in inst.jobs],
                         ps=[(0, "server")] * len(inst.jobs),
                         bandwidth=[[0.0] * len(j.workers) for j in inst.jobs], oxc=pairs)
        assert m.circuits(inst, sol)[1] == _old_circuits(inst, sol)[1]
        sched = sol.model_copy(update={"oxc": [], "oxc_schedule": [(0.5, pairs), (0.25, pairs)]})
        new, old = m.circuits(inst, sched), _old_circuits(inst, sched)
        assert new[1] == old[1] and np.array_equal(new[0], old[0])


def _old_bottleneck_matching(mat, eps):
    from scipy.optimize import linear_sum_assignment

    vals = np.unique(mat[mat > eps])
    if vals.size == 0:
        return None
    lo, hi, best = 0, vals.size - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        cost = (mat < vals[mid]).astype(float)
        r, c = linear_sum_assignment(cost)
        if cost[r, c].sum() == 0:
            best, lo = c, mid + 1
        else:
            hi = mid - 1
    if best is None:
        return None
    n = mat.shape[0]
    return best, float(mat[np.arange(n), best].min())


def _same_terms(a, b):
    return len(a) == len(b) and all(x[0] == y[0] and np.array_equal(x[1], y[1])
                                    for x, y in zip(a, b, strict=True))


def test_bvn_decomposition_identical_to_the_bisection_per_term(monkeypatch):
    """The bottleneck matching tries the smallest line maximum first: same terms, same order
    as the bisection with one assignment per step, on random and on generated matrices."""
    from dmlopt.heuristics.inc_oxc import bvn

    rng = np.random.default_rng(5)
    mats = []
    for _ in range(30):
        n = int(rng.integers(2, 25))
        M = rng.integers(0, 5, (n, n)) * (rng.random((n, n)) < 0.4).astype(float)
        np.fill_diagonal(M, 0)
        mats += [stuff(M)[0], M + np.eye(n)]
    for inst in _instances():
        sol = dmlopt.heuristic(inst, "swg").solution
        wrack = np.array([k for row in sol.workers for k in row])
        ps_rack = np.array([k for k, _ in sol.ps])
        server = np.array([kind == "server" for _, kind in sol.ps], float)
        d = inst.arrays["data"][inst.arrays["job_of"]]
        mats.append(stuff(m.link_loads(inst, wrack, ps_rack, server, d)[2])[0])
    new = [bvn.bvn_decompose(M) for M in mats]
    monkeypatch.setattr(bvn, "_bottleneck_matching", _old_bottleneck_matching)
    old = [bvn.bvn_decompose(M) for M in mats]
    assert all(_same_terms(a, b) for a, b in zip(new, old, strict=True))


def _prev_bottleneck_matching(mat, eps):
    """The previous matching: smallest line maximum first, then a bisection with one
    assignment per step (kept verbatim)."""
    from scipy.optimize import linear_sum_assignment

    n = mat.shape[0]
    rows = np.arange(n)
    top = min(float(mat.max(axis=1).min()), float(mat.max(axis=0).min()))
    if not top > eps:
        return None
    _, c = linear_sum_assignment((mat < top).astype(float))
    if mat[rows, c].min() >= top:
        return c, float(mat[rows, c].min())
    vals = np.unique(mat[(mat > eps) & (mat < top)])
    lo, hi = 0, vals.size - 1
    best, at = None, -1
    while lo <= hi:
        mid = (lo + hi) // 2
        cost = (mat < vals[mid]).astype(float)
        r, c = linear_sum_assignment(cost)
        if cost[r, c].sum() == 0:
            best, at = c, mid
            lo = max(mid, int(np.searchsorted(vals, mat[rows, c].min(), side="right")) - 1) + 1
        else:
            hi = mid - 1
    if best is None:
        return None
    if at != hi:
        _, best = linear_sum_assignment((mat < vals[hi]).astype(float))
    return best, float(mat[rows, best].min())


def test_bisection_by_matching_existence_gives_the_assignment_terms(monkeypatch):
    """The bisection steps decide existence by Hopcroft-Karp and one assignment is made at the
    bottleneck: the same terms as an assignment at every step (a program returning the
    Hopcroft-Karp matching, or stopping the bisection one value early, differs), and the
    Hopcroft-Karp steps are taken (the matrices reach the bisection)."""
    from dmlopt.heuristics.inc_oxc import bvn

    rng = np.random.default_rng(11)
    mats = []
    for _ in range(40):
        n = int(rng.integers(3, 30))
        M = rng.integers(0, 4, (n, n)) * (rng.random((n, n)) < 0.5).astype(float)
        np.fill_diagonal(M, 0)
        mats.append(stuff(M)[0])
    calls = []
    perfect = bvn._perfect
    monkeypatch.setattr(bvn, "_perfect", lambda mat, v: calls.append(v) or perfect(mat, v))
    new = [bvn.bvn_decompose(M) for M in mats]
    assert len(calls) > 20
    monkeypatch.setattr(bvn, "_bottleneck_matching", _prev_bottleneck_matching)
    old = [bvn.bvn_decompose(M) for M in mats]
    assert all(_same_terms(a, b) for a, b in zip(new, old, strict=True))


@pytest.mark.parametrize("n_ports", [10, 2000, 10**7])
def test_a_port_used_twice_is_found_either_way(n_ports):
    """Both ways of finding a repeated port (a count per port when the ports listed are many
    against all, a sort when they are few) agree with a set; the count never makes an array
    of all 10**7 ports for 40 listed."""
    rng = np.random.default_rng(n_ports)
    for size in (1, 2, 5, 40):
        for _ in range(20):
            ports = rng.integers(0, n_ports, size)
            assert ev._repeats(ports, n_ports) == (len(set(ports.tolist())) < size)
