"""netfit-probe's probe statistics give the same allocations as before their speed-up.

golden/scaling.json holds the outputs of :class:`dmlopt.heuristics.nara.probe.Probes` as it was
when it summed per rack by dense (probes x servers) x (servers x racks) one-hot products and
rebuilt the widest table and a dense (probes x racks x racks) compatibility at every request,
computed once by that code on the inputs below (the episodes, the statistics and their updates
``after``). The per-rack segment sums over the servers that can count, the widest table and the
compatibility matrices kept across requests (:class:`~dmlopt.heuristics.nara.probe.Cache`) must
give the same statistics, and the allocator the same episode, for the same seed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.nara import probe as P
from dmlopt.heuristics.nara import probe_cache
from dmlopt.models.nara.sim import State

NAMES = ("fit", "tc", "tm", "cc", "cm")


def _golden() -> dict:
    return json.loads((Path(__file__).parent / "golden" / "scaling.json").read_text())


def _same(new, old: dict, where) -> None:
    for name in NAMES:
        assert getattr(new, name).tolist() == old[name], (where, name)


@pytest.mark.parametrize("gen,topology,n", [("uniform", "alpha", 128), ("azure", "beta", 128),
                                            ("alibaba", "gamma", 96), ("uniform", "gamma", 400)])
def test_same_allocation_as_reference(gen, topology, n):
    from dmlopt.heuristics.nara import allocate_netfit_probe

    want = _golden()["episodes"]
    inst = dmlopt.generate("nara", {"generator": gen, "topology": topology, "n_requests": n},
                           seed=2)
    for seed in (0, 1):
        got = allocate_netfit_probe(inst, seed=seed)
        assert got.model_dump(mode="json") == want[f"{gen}/{topology}/{n}/{seed}"], seed


def test_same_statistics_as_reference():
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "gamma",
                                    "n_requests": 64}, seed=0)
    state = State(inst)
    rng = np.random.default_rng(0)
    net = inst.net
    # a used state: take random amounts from random servers
    take = rng.integers(0, 2, net.n_servers).astype(bool)
    state.cpu_free = np.where(take, state.cpu_free // 2, state.cpu_free)
    state.mem_free = np.where(take, state.mem_free // 3, state.mem_free)
    pc, pm = rng.integers(1, 60, 32), rng.integers(1, 60, 32)
    pb = rng.uniform(0, float(state.bw[net.access].max()), 32)
    _same(P.Probes(state, None, pc, pm, pb), _golden()["statistics"], "state")


@pytest.mark.parametrize("rows", [P.TABLE_ROWS, 3])
def test_cache_follows_the_path_links_across_requests(rows, monkeypatch):
    """One cache over a sequence of states: the statistics equal the reference's at every state,
    also after path links lose bandwidth (a cache that kept its widest table, or its
    compatibility rows, across that change gives other cc/cm) and with probes demanding 0;
    with room for 3 bandwidths the table forgets its rows on most calls (a cache that kept the
    old rows' indices, or made only the new bandwidths' rows after forgetting, fails) and
    never holds more rows than one call asks for."""
    want = _golden()["cache"][str(rows)]
    monkeypatch.setattr(probe_cache, "TABLE_ROWS", rows)  # Cache reads it there
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "beta",
                                    "n_requests": 64}, seed=1)
    state = State(inst)
    net = inst.net
    rng = np.random.default_rng(3)
    cache = P.Cache(net)
    core = np.setdiff1d(np.arange(net.n_links), net.access)
    bws = np.unique(state.bw[net.access])
    changed = 0
    for step in range(12):
        if step % 3 == 2:   # path links lose bandwidth: the widest table must change
            hit = rng.choice(core, size=max(1, core.size // 3), replace=False)
            state.bw[hit] = rng.uniform(0, 1, hit.size) * state.bw[hit]
        take = rng.random(net.n_servers) < 0.3
        state.cpu_free = np.where(take, 0, state.cpu_free)
        state.mem_free = np.where(rng.random(net.n_servers) < 0.2, 0, state.mem_free)
        pc, pm = rng.integers(0, 40, 16), rng.integers(0, 40, 16)
        pb = rng.choice(np.concatenate([bws, bws / 2, [0.0], rng.uniform(0, bws.max(), 8)]), 16)
        old, new = want[step], P.Probes(state, None, pc, pm, pb, cache)
        changed += old["cc"] != P.Probes(State(inst), None, pc, pm, pb).cc.tolist()
        _same(new, old, step)
        racks = sorted(set(rng.choice(net.n_racks, 2).tolist()))
        cf, mf = state.cpu_free // 2, state.mem_free // 2
        acc = state.bw[net.access] * 0.5
        for a, b in zip(new.after(cf, mf, acc, racks), old["after"], strict=True):
            assert np.asarray(a).tolist() == b, step
        assert cache.table.shape[0] <= max(rows, 16)
    assert changed > 0
