"""Nara ``netfit-probe``'s faster probe statistics and candidates allocate exactly as before.

``probe_speed_reference.json`` holds the allocations the previous implementation of
:mod:`dmlopt.heuristics.nara.probe` and :mod:`dmlopt.heuristics.nara.netfit` (dmlopt main at
commit a52f627) made on a few seeded episodes (alpha and beta with the three request sets,
gamma with uniform requests; default options and two variants). It was written by
``python -m tests.nara.test_probe_speed --write`` at that commit; an allocation that differs in
any server of any request fails here. The per-rack statistics and the incremental verdicts
are also compared with loops over the servers and with the dense :func:`placeable`.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import nara as H
from dmlopt.heuristics.nara import probe as P
from dmlopt.models.nara.sim import TOL, State

REFERENCE = Path(__file__).with_name("probe_speed_reference.json")

#: (generator spec, seed, heuristic, options)
CASES = [
    ({"generator": "uniform", "topology": "alpha", "n_requests": 256}, 1, "netfit-probe", {}),
    ({"generator": "azure", "topology": "alpha", "n_requests": 200}, 2, "netfit-probe", {}),
    ({"generator": "alibaba", "topology": "beta", "n_requests": 200}, 3, "netfit-probe", {}),
    ({"generator": "uniform", "topology": "beta", "n_requests": 200}, 4, "netfit-probe",
     {"n_probe": 8, "max_cand": 2, "select": False}),
    ({"generator": "uniform", "topology": "gamma", "n_requests": 896}, 5, "netfit-probe", {}),
    ({"generator": "uniform", "topology": "gamma", "n_requests": 896}, 7, "netfit", {}),
    ({"generator": "azure", "topology": "alpha", "n_requests": 200}, 6, "netfit", {}),
]


def _name(case: tuple) -> str:
    spec, seed, heur, opts = case
    return "-".join([spec["generator"], spec["topology"], str(spec["n_requests"]), str(seed),
                     heur, *(f"{k}={v}" for k, v in sorted(opts.items()))])


def _run(case: tuple) -> dict:
    spec, seed, heur, opts = case
    inst = dmlopt.generate("nara", spec, seed=seed)
    sol = H.HEURISTICS[heur].function(inst, seed=seed, **opts)
    full = json.dumps(sol.model_dump(mode="json"), separators=(",", ":"), sort_keys=True)
    return {"accepted": sum(a is not None for a in sol.allocations),
            "sha256": hashlib.sha256(full.encode()).hexdigest()}


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text())


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_same_allocations_as_before(case, reference) -> None:
    """Catches a fast path that changes any allocation (a probe statistic off by a server or
    a rack, a stale cached table, a candidate order changed)."""
    got, want = _run(case), reference[_name(case)]
    assert got["accepted"] == want["accepted"]
    assert got["sha256"] == want["sha256"]
    assert want["accepted"] > 0


if __name__ == "__main__" and "--write" in sys.argv:
    REFERENCE.write_text(json.dumps({_name(c): _run(c) for c in CASES}, indent=1,
                                    sort_keys=True) + "\n")


def _brute_stats(cpu, mem, acc, rack, R, pc, pm, pb):
    """(K, R) fit, tc, tm by loops over probes and servers (no package helper)."""
    K = len(pc)
    fit = np.zeros((K, R), dtype=bool)
    tc, tm = np.zeros((K, R)), np.zeros((K, R))
    for k in range(K):
        for s in range(len(cpu)):
            r = int(rack[s])
            if cpu[s] >= pc[k] and mem[s] >= pm[k]:
                fit[k, r] = True
            if acc[s] >= pb[k] - TOL:
                tc[k, r] += min(int(cpu[s]), int(pc[k])) if cpu[s] > 0 else 0
                tm[k, r] += min(int(mem[s]), int(pm[k])) if mem[s] > 0 else 0
    return fit, tc, tm


@pytest.mark.parametrize("seed", range(6))
def test_rack_statistics_equal_brute_force(seed) -> None:
    """Catches a wrong eligibility rank (servers at exactly a probe's threshold left out or
    counted for a larger bandwidth), a suffix sum run the wrong way, and a probe with a demand
    below some server's free CPU given that server's whole free CPU."""
    rng = np.random.default_rng(seed)
    R, n, K = 5, 60, 12
    rack = np.sort(rng.integers(0, R, n))
    rack[:R] = np.arange(R)                       # every rack has servers
    top = int(rng.choice([3, 10, 500]))           # 500: the (probes x servers) fallback
    cpu = rng.integers(0, top + 1, n) * (rng.random(n) < 0.7)
    mem = rng.integers(0, top + 1, n) * (rng.random(n) < 0.7)
    levels = rng.uniform(0, 100, 6)
    acc = rng.choice(levels, n)
    pb = np.where(rng.random(K) < 0.5, rng.choice(levels, K) + TOL, rng.uniform(0, 100, K))
    pc = rng.integers(0, top + 3, K)
    pm = rng.integers(0, top + 3, K)
    order = np.argsort(rack, kind="stable")
    want = _brute_stats(cpu, mem, acc, rack, R, pc, pm, pb)
    got = P._rack_stats(cpu, mem, acc, rack, R, order, pc, pm, pb)
    for name, a, b in zip(("fit", "tc", "tm"), got, want, strict=True):
        assert np.array_equal(a, b), name
    # the same servers renumbered in rack order, passed with order None (the identity):
    # the same per-rack statistics
    got = P._rack_stats(cpu[order], mem[order], acc[order], rack[order], R, None, pc, pm, pb)
    for name, a, b in zip(("fit", "tc", "tm"), got, want, strict=True):
        assert np.array_equal(a, b), name
    counts = P._rack_counts(cpu, mem, rack, R, pc, pm)
    assert (counts is None) == (top == 500)
    if counts is not None:
        brute = np.zeros((K, R))
        for k in range(K):
            for s in range(n):
                brute[k, rack[s]] += cpu[s] >= pc[k] and mem[s] >= pm[k]
        assert np.array_equal(counts, brute)
        assert np.array_equal(counts > 0, want[0])


def test_after_a_rack_gains_capacity() -> None:
    """``after`` with more free capacity than the state (a release, not a taking candidate):
    catches skipping the probes that were not placeable before, which holds only when every
    changed rack lost capacity. Compared with the dense :func:`placeable` on the new state."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "gamma",
                                    "n_requests": 64}, seed=3)
    state = State(inst)
    net = inst.net
    rng = np.random.default_rng(5)
    state.cpu_free = np.where(rng.random(net.n_servers) < 0.99, 0, state.cpu_free)
    state.mem_free = np.where(rng.random(net.n_servers) < 0.99, 0, state.mem_free)
    pc, pm = rng.integers(401, 440, 32), rng.integers(401, 440, 32)
    acc0 = state.bw[net.access]
    pb = rng.uniform(0, float(acc0.max()), 32)
    probes = P.Probes(state, None, pc, pm, pb)
    before, _ = probes.base()
    gained = 0
    for r in range(net.n_racks):
        sv = net.rack_servers[r]
        cf, mf = state.cpu_free.copy(), state.mem_free.copy()
        cf[sv], mf[sv] = net.cpu[sv], net.mem[sv]   # rack r emptied
        got = probes.after(cf, mf, acc0, [r])
        want = P.placeable(cf, mf, acc0, P._one_hot(net), P.widest(state), pc, pm, pb)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), r
        gained += int((got[0] & ~before).sum())
    assert gained > 0   # some probe placeable only after a gain: the case is exercised


@pytest.mark.parametrize("seed", range(6))
def test_batched_candidates_equal_one_at_a_time(seed) -> None:
    """:meth:`Probes.after_all` against :meth:`Probes.after` of each candidate on a used state
    (only racks 0 and 1 have free capacity, probes at the edges): catches a taken server's
    difference added to the wrong rack or candidate or from the wrong resource, a plan of one
    server charged on its access link, the per-rack count of one-server fits not lowered when
    a fitting server is taken."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "gamma",
                                    "n_requests": 64}, seed=seed)
    net = inst.net
    rng = np.random.default_rng(seed)
    state = State(inst)
    # a small request with a bandwidth: taken servers keep some free, links are charged
    state.begin(min(range(64), key=lambda j: (inst.requests[j].b == 0,
                                              inst.requests[j].c + inst.requests[j].m)))
    S, req = net.n_servers, state.req
    two = np.isin(net.rack, [0, 1])
    state.cpu_free = np.where(two, rng.integers(0, 10, S), 0)
    state.mem_free = np.where(two, rng.integers(0, 10, S), 0)
    acc = state.bw[net.access]
    state.bw[net.access] = np.where(rng.random(S) < 0.5, acc * rng.random(), acc)
    cands = []
    for _ in range(8):   # one server, several servers of one rack (in pick order)
        r = int(rng.integers(2))
        sv = rng.permutation(net.rack_servers[r])[: int(rng.integers(1, 6))]
        cands.append([int(s) for s in sv])
    top = cands[0][0]   # the one server with 10 free CPU and memory
    state.cpu_free[top], state.mem_free[top] = 10, 10
    acc, K = state.bw[net.access], 32

    def taken(cand):   # free CPU, memory, access bandwidth after a candidate, by hand
        cf, mf, ac = state.cpu_free.copy(), state.mem_free.copy(), acc.copy()
        rc, rm = req.c, req.m
        for s in cand:
            tc, tm = min(cf[s], rc), min(mf[s], rm)
            cf[s], mf[s], rc, rm = cf[s] - tc, mf[s] - tm, rc - tc, rm - tm
            ac[s] -= req.b if len(cand) > 1 else 0.0
        return cf, mf, ac

    # probes: (a) random; (b) eligible exactly at a taken server's access link, demanding
    # about what the eligible servers of its rack give after the candidate; (c) no link
    # eligible, demanding 10 and 10 (only ``top`` holds it) or a taken server's free amounts
    pc, pm = rng.integers(0, 500, K), rng.integers(0, 500, K)
    pb = rng.uniform(0, float(acc.max()), K)
    for k in range(8, K):
        cand = cands[int(rng.integers(len(cands)))]
        s = int(rng.choice(cand))
        if k < 24:
            cf, mf, ac = taken(cand)
            pb[k] = acc[s] + TOL
            el = (ac >= acc[s]) & (net.rack == net.rack[s])
            pc[k] = cf[el].sum() - rng.integers(0, 2)
            pm[k] = mf[el].sum() - rng.integers(0, 2)
        else:
            pb[k] = float(acc.max()) + 1.0
            pc[k], pm[k] = (10, 10) if k % 2 else (state.cpu_free[s], state.mem_free[s])
    probes = P.Probes(state, None, pc, pm, pb)
    pl, loc = probes.after_all(state, cands)
    for i, cand in enumerate(cands):
        racks = sorted({int(net.rack[s]) for s in cand})
        want = probes.after(*P.after_taking(state, probes, cand), racks)
        assert np.array_equal(pl[i], want[0]) and np.array_equal(loc[i], want[1]), i
    # a plan over two racks goes through after() candidate by candidate: same verdicts
    pair = [int(net.rack_servers[0][0]), int(net.rack_servers[1][0])]
    got = probes.after_all(state, [pair, cands[0]])
    want = probes.after(*P.after_taking(state, probes, pair), [0, 1])
    assert np.array_equal(got[0][0], want[0]) and np.array_equal(got[1][0], want[1])
    base = probes.base()   # some candidate changes a verdict
    assert (pl != base[0]).any() or (loc != base[1]).any()


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("topology", ["beta", "gamma"])
def test_cache_widest_follows_link_changes(topology, dense) -> None:
    """The cache's widest table, updated for the rack pairs over changed links only, equals
    :func:`widest` recomputed from scratch after each change (a few links, a whole tier, a
    release): catches a pair left out of a changed link's list (a path's last link, a pair in
    one direction only) and an update that touches the diagonal. ``dense``: the pairs from the
    (links x pairs) table, else from the per-link lists (topologies too large for the table)."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": topology,
                                    "n_requests": 16}, seed=0)
    net = inst.net
    state = State(inst)
    cache = P.Cache(net)
    assert cache._over is not None
    if not dense:
        cache._over = None
    rng = np.random.default_rng(1)
    core = np.setdiff1d(np.arange(net.n_links), net.access)
    assert np.array_equal(cache.widest(state), P.widest(state))
    for step in range(30):
        full = state.bw[: net.n_links].copy()
        n = int(rng.choice([1, 2, 5, core.size]))
        hit = rng.choice(core, size=n, replace=False)
        if step % 5 == 4:   # a release: bandwidth comes back
            state.bw[: net.n_links] = np.maximum(full, net.cap)
        else:
            state.bw[hit] = np.round(rng.uniform(0, 1, n) * state.bw[hit], 2)
        got, want = cache.widest(state), P.widest(state)
        assert np.array_equal(got, want), step


def _old_multi_rack_plans(state, elig, tc, tm):
    """netfit's step 3 as it was (dmlopt main at commit eaf040e), kept verbatim as the
    reference: numpy scalars, one lexsort per seed rack, no reuse of equal rack sets."""
    from dmlopt.heuristics.nara.netfit import _contrib_order, _take
    net, req = state.net, state.req
    c, m = req.c, req.m
    cf, mf = state.cpu_free, state.mem_free
    compat = state.compat_now
    neigh = net.neighbour
    size = tc / max(c, 1) + tm / max(m, 1)
    racks = np.flatnonzero(size > 0)
    out = []
    for r0 in racks:
        chosen = [int(r0)]
        ok = compat[r0].copy()
        have_c, have_m = tc[r0], tm[r0]
        for r in racks[np.lexsort((racks, -size[racks], ~neigh[r0, racks]))].tolist():
            if have_c >= c and have_m >= m:
                break
            if r == r0 or not ok[r]:
                continue
            chosen.append(r)
            ok &= compat[r]
            have_c += tc[r]
            have_m += tm[r]
        if have_c < c or have_m < m:
            continue
        servers = np.concatenate([net.rack_servers[r][elig[net.rack_servers[r]]]
                                  for r in chosen])
        got = _take(_contrib_order(servers, cf, mf, c, m), cf, mf, c, m)
        if got is None:
            continue
        racks_used = len({int(net.rack[s]) for s in got})
        out.append(((racks_used, len(got), float(have_c - c + have_m - m)), got))
    return out


@pytest.mark.parametrize("topology", ["beta", "gamma", "delta"])
def test_multi_rack_plans_equal_the_previous_code(topology) -> None:
    """netfit's step 3 (bit-mask compatibility, one sorted order split per seed rack, plans
    reused for equal rack sets) against the previous code on scarce states with path links
    partly charged: catches a preference order that is not neighbours first then most free,
    a bit mask off by one rack (racks 63/64 on delta), and a reused plan for a different set."""
    from dmlopt.heuristics.nara import netfit as nf
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": topology,
                                    "n_requests": 64}, seed=4)
    net = inst.net
    rng = np.random.default_rng(7)
    core = np.setdiff1d(np.arange(net.n_links), net.access)
    plans = 0
    for j in range(40):
        state = State(inst)
        S = net.n_servers
        scarce = rng.random(S) < rng.choice([0.8, 0.97])
        state.cpu_free = np.where(scarce, rng.integers(0, 2, S), state.cpu_free)
        state.mem_free = np.where(scarce, rng.integers(0, 2, S), state.mem_free)
        hit = rng.choice(core, size=core.size * int(rng.integers(1, 4)) // 4, replace=False)
        state.bw[hit] *= rng.uniform(0, 1, hit.size) ** 3
        state.begin(j)
        elig, tc, tm = nf.rack_totals(state)
        got = nf.multi_rack_plans(state, elig, tc, tm)
        assert got == _old_multi_rack_plans(state, elig, tc, tm), j
        plans += len(got)
    assert plans > 0


@pytest.mark.parametrize("max_cand", [1, 2, 4, 9])
def test_one_server_candidates_equal_the_sorted_order(max_cand) -> None:
    """The one-server candidates (partial selection of the best fits, the least-bandwidth fit
    by minima) against the full sort of the previous code: :func:`single_fits`' first
    ``max_cand`` and the first fit by (free access bandwidth, left) in that order. Many equal
    fits and equal bandwidths: catches ties at the ``max_cand``-th fit cut off or broken to a
    higher index, and the least-bandwidth fit taken by bandwidth alone (not then least left)."""
    from dmlopt.heuristics.nara import netfit as nf
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "gamma",
                                    "n_requests": 64}, seed=2)
    net = inst.net
    rng = np.random.default_rng(max_cand)
    state = State(inst)
    checked = 0
    for j in range(64):
        state.begin(j)
        S = net.n_servers
        state.cpu_free = rng.integers(0, 6, S) * 10 * (rng.random(S) < rng.choice([0.02, 0.5]))
        state.mem_free = rng.integers(0, 6, S) * 10
        state.bw[net.access] = rng.choice([5.0, 20.0, 80.0], S)
        fits, left = nf.single_fits(state)
        if not fits.size:
            continue
        want = [[int(s)] for s in fits[:max_cand]]
        low = int(fits[np.lexsort((left, state.bw[net.access[fits]]))[0]])
        if [low] not in want:
            want.append([low])
        got, only_access = P._candidates(state, max_cand)
        assert got == want and only_access, j
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("seed", range(4))
def test_compatibility_and_verdicts_equal_plain_across_link_changes(seed) -> None:
    """The compatibility :class:`Probes` compares from the episode cache's widest table, and
    the verdicts made with it, against :func:`placeable` on the whole state, over states whose
    core links change between requests (one cache throughout): catches a comparison with the
    wrong threshold or a stale widest table, and a verdict of a probe that only several racks
    hold made from the wrong racks."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "gamma",
                                    "n_requests": 16}, seed=seed)
    net = inst.net
    rng = np.random.default_rng(seed)
    state = State(inst)
    state.begin(0)
    cache = P.Cache(net)
    core = np.setdiff1d(np.arange(net.n_links), net.access)
    onehot = P._one_hot(net)
    multi = 0
    for step in range(12):
        hit = rng.choice(core, size=int(rng.integers(1, 40)), replace=False)
        state.bw[hit] = np.round(rng.uniform(0, 1, hit.size) * net.cap[hit], 2)
        S = net.n_servers
        state.cpu_free = rng.integers(0, 4, S) * (rng.random(S) < 0.6)
        state.mem_free = rng.integers(0, 4, S) * (rng.random(S) < 0.6)
        K = 32   # probes larger than a rack mostly: the sums over compatible racks decide
        pc, pm = rng.integers(1, 200, K), rng.integers(1, 200, K)
        pb = np.round(rng.uniform(0, 1, K), 2)
        pb[::4] = state.bw[rng.choice(core, K // 4)] + TOL * (step % 2)  # at a link's value
        probes = P.Probes(state, None, pc, pm, pb, cache)
        W = P.widest(state)
        idx = rng.permutation(K)[:5]
        assert np.array_equal(probes._compat(idx), (W[None] >= pb[idx, None, None] - TOL))
        want = P.placeable(state.cpu_free, state.mem_free, state.bw[net.access], onehot, W,
                           pc, pm, pb)
        got = probes.base()
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), step
        multi += int((want[0] & ~want[1]).sum())
    assert multi > 0   # some probe placeable over several racks only: the case is exercised


@pytest.mark.parametrize("seed", range(5))
def test_running_volume_sum_is_exact(seed) -> None:
    """The admission rule's mean volume is kept as exact partials: their fsum equals the
    fsum of every volume seen (catches a plain running float sum on spread-out values)."""
    from dmlopt.heuristics.nara.probe import _add_exact

    rng = np.random.default_rng(seed)
    vals = (rng.random(400) * 10.0 ** rng.integers(-12, 12, 400)).tolist()
    parts: list[float] = []
    for i, v in enumerate(vals, 1):
        _add_exact(parts, v)
        assert math.fsum(parts) == math.fsum(vals[:i])
