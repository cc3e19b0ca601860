"""Nara (paper 001): ``netfit-probe`` (heuristics/nara/probe.py).

Independent checks: the evaluator's replay, path-by-path bottlenecks, netfit's exact plan
search (a request netfit can place is counted placeable by the relaxed probe test), a
hand-built episode whose acceptances are known.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import nara as H
from dmlopt.heuristics.nara import netfit as nf
from dmlopt.heuristics.nara import probe as P
from dmlopt.models import nara
from dmlopt.models.nara import topology as topo
from dmlopt.models.nara.sim import State, run_episode


def episode(reqs: list[tuple[int, int, float, float]]) -> nara.Instance:
    t = topo.fabric(racks=4, servers_per_rack=2, pods=2, fabrics_per_pod=1, spines_per_plane=1,
                    name="tiny")
    return nara.Instance(topology=t, requests=[{"c": c, "m": m, "b": b, "t": t_}
                                               for c, m, b, t_ in reqs])


@pytest.mark.parametrize(("topology", "dist", "seed"),
                         [("alpha", "uniform", 0), ("alpha", "alibaba", 1),
                          ("beta", "uniform", 2), ("beta", "azure", 3)])
def test_replay_feasible(topology, dist, seed):
    inst = dmlopt.generate("nara", {"generator": dist, "topology": topology,
                                    "n_requests": 60}, seed=seed)
    sol = H.HEURISTICS["netfit-probe"].function(inst)
    ev = nara.evaluate(inst, sol)
    assert ev.feasible, ev.message
    res = dmlopt.heuristic(inst, "netfit-probe")
    assert res.feasible and res.metrics["acceptance_ratio"] > 0


def test_deterministic_for_a_seed():
    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 60}, seed=7)
    a = H.HEURISTICS["netfit-probe"].function(inst, seed=3)
    b = H.HEURISTICS["netfit-probe"].function(inst, seed=3)
    assert a == b


def test_widest_matches_path_by_path():
    inst = nara.generate_uniform(topology="beta", n_requests=1)
    net = inst.net
    st = State(inst)
    rng = np.random.default_rng(4)
    for _ in range(4):
        st.bw[:-1] = rng.choice([0.0, 0.2, 0.5, 1.0], net.n_links)
        wid = P.widest(st)
        for ra, rb in itertools.product(range(net.n_racks), repeat=2):
            if ra == rb:
                assert wid[ra, rb] == np.inf
                continue
            want = max(min(st.bw[e] for e in p) for p in net.candidates(ra, rb))
            assert wid[ra, rb] == pytest.approx(want)
        for b in (0.1, 0.4, 0.9):
            assert (st.compat(b) == (wid >= b - 1e-9)).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_probe_test_relaxes_netfit_plan(seed):
    # along a netfit episode: whenever netfit finds an allocation for the pending request, the
    # relaxed probe test on the same state says placeable; a one-server fit is exact
    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 80}, seed=seed)
    net = inst.net
    onehot = P._one_hot(net)
    base = nf.chooser(inst)
    seen = []

    def choose(state, rng):
        req = state.req
        pl, loc = P.placeable(state.cpu_free, state.mem_free, state.bw[net.access], onehot,
                              P.widest(state), np.array([req.c]), np.array([req.m]),
                              np.array([req.b]))
        got = nf.plan(state)
        one = bool(((state.cpu_free >= req.c) & (state.mem_free >= req.m)).any())
        seen.append((got is not None, bool(pl[0]), bool(loc[0]), one))
        return base(state, rng)

    run_episode(inst, choose)
    assert any(not g for g, *_ in seen) and any(g for g, *_ in seen)
    for got, pl, loc, one in seen:
        assert pl or not got
        assert loc or not one
        assert pl or not loc


def test_hand_checked_episode():
    # each request fills the whole DC (80 CPU); holding periods 2, 1, 3, 1, 1, 1: requests 1, 3
    # and 4 find the DC full, the others fit (same volume class: no admission rejection)
    inst = episode([(80, 8, 0.1, 2), (80, 8, 0.1, 1), (80, 8, 0.1, 3), (80, 8, 0.1, 1),
                    (80, 8, 0.1, 1), (80, 8, 0.1, 1)])
    sol = H.HEURISTICS["netfit-probe"].function(inst)
    assert [a is not None for a in sol.allocations] == [True, False, True, False, False, True]
    assert nara.evaluate(inst, sol).feasible
    # small requests: one server each, all accepted, on distinct best-fitting servers
    inst = episode([(6, 6, 0.5, 20)] * 8 + [(4, 4, 0.5, 20)] * 8)
    sol = H.HEURISTICS["netfit-probe"].function(inst)
    assert all(a is not None and len(a.servers) == 1 for a in sol.allocations)


def test_admission_rejects_only_big_requests_and_off_switch():
    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 128}, seed=11)
    net = inst.net
    C, M = int(net.cpu.sum()), int(net.mem.sum())
    for k in (1.8, float("inf")):
        base = P.chooser(inst, admit_k=k)
        vols, rejected = [], []

        def choose(state, rng, base=base, vols=vols, rejected=rejected):
            req = state.req
            vols.append((req.c / C + req.m / M) / 2 * req.t)
            placeable = nf.plan(state) is not None
            ok = base(state, rng)
            if placeable and not ok:
                rejected.append(vols[-1] / np.mean(vols))
            return ok

        sol = run_episode(inst, choose)
        assert nara.evaluate(inst, sol).feasible
        if k == float("inf"):
            assert rejected == []  # a placeable request is always placed
        else:
            assert rejected and min(rejected) > k  # only big requests are turned away


def test_incremental_probes_equal_full_test():
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "beta",
                                    "n_requests": 60}, seed=5)
    net = inst.net
    onehot = P._one_hot(net)
    rng = np.random.default_rng(0)
    checked = 0

    def choose(state, _rng):
        nonlocal checked
        pc, pm = rng.integers(1, 51, 16), rng.integers(1, 51, 16)
        pb = rng.integers(10, 101, 16) / 100
        probes = P.Probes(state, onehot, pc, pm, pb)
        full = P.placeable(state.cpu_free, state.mem_free, state.bw[net.access], onehot,
                           P.widest(state), pc, pm, pb)
        assert all((x == y).all() for x, y in zip(probes.base(), full, strict=True))
        for r in rng.choice(net.n_racks, 2, replace=False):
            cf, mf, acc = state.cpu_free.copy(), state.mem_free.copy(), probes.acc0.copy()
            sv = net.rack_servers[r][:3]
            cf[sv] = rng.integers(0, cf[sv] + 1)
            mf[sv] = rng.integers(0, mf[sv] + 1)
            acc[sv] -= rng.uniform(0, 1, sv.size)
            want = P.placeable(cf, mf, acc, onehot, P.widest(state), pc, pm, pb)
            got = probes.after(cf, mf, acc, [r])
            assert all((x == y).all() for x, y in zip(got, want, strict=True))
            checked += 1
        return nf.chooser(inst)(state, _rng)

    run_episode(inst, choose)
    assert checked == 120
