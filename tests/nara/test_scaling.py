"""netfit-probe's probe statistics give the same allocations as before their speed-up.

``_OldProbes`` is :class:`dmlopt.heuristics.nara.probe.Probes` as it was when it summed per rack
by dense (probes x servers) x (servers x racks) one-hot products and rebuilt the widest table and
a dense (probes x racks x racks) compatibility at every request, kept verbatim (renamed): a slow
reference. The per-rack segment sums over the servers that can count, the widest table and the
compatibility matrices kept across requests (:class:`~dmlopt.heuristics.nara.probe.Cache`) must
give the same statistics, and the allocator the same episode, for the same seed.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.nara import probe as P
from dmlopt.heuristics.nara import probe_cache
from dmlopt.models.nara.sim import TOL, State


class _OldProbes(P.Probes):
    """The reference (verbatim ``__init__`` of the dense version)."""

    def __init__(self, state: State, onehot: np.ndarray, pc: np.ndarray, pm: np.ndarray,
                 pb: np.ndarray, cache=None) -> None:
        del cache   # the reference recomputes everything
        net = state.net
        if onehot is None:  # the allocators no longer build it: the reference does
            onehot = P._one_hot(net)
        self.net, self.pc, self.pm, self.pb = net, pc, pm, pb
        self.acc0 = state.bw[net.access]
        W = P.widest(state)
        self.comp = (W[None, :, :] >= pb[:, None, None] - TOL).astype(float)  # (K, R, R)
        cf, mf = state.cpu_free, state.mem_free
        fit_s = (cf[None, :] >= pc[:, None]) & (mf[None, :] >= pm[:, None])
        self.fit = (fit_s.astype(float) @ onehot) > 0  # (K, R)
        elig = self.acc0[None, :] >= pb[:, None] - TOL
        # float matrices: the products go to BLAS (an integer matmul is ~50x slower)
        self.tc = np.where(elig, np.minimum(cf[None, :], pc[:, None]), 0).astype(float) @ onehot
        self.tm = np.where(elig, np.minimum(mf[None, :], pm[:, None]), 0).astype(float) @ onehot
        self.cc = np.einsum("krq,kq->kr", self.comp, self.tc)
        self.cm = np.einsum("krq,kq->kr", self.comp, self.tm)

    def after(self, cf, mf, acc, racks):
        """The reference's update (verbatim, from its dense (K, R, R) compatibility)."""
        fit, tc, tm = self.fit.copy(), self.tc.copy(), self.tm.copy()
        cc, cm = self.cc.copy(), self.cm.copy()
        pc, pm, pb = self.pc[:, None], self.pm[:, None], self.pb[:, None]
        for r in racks:
            sv = self.net.rack_servers[r]
            fit[:, r] = ((cf[sv][None, :] >= pc) & (mf[sv][None, :] >= pm)).any(axis=1)
            elig = acc[sv][None, :] >= pb - TOL
            nc = np.where(elig, np.minimum(cf[sv][None, :], pc), 0).sum(axis=1)
            nm = np.where(elig, np.minimum(mf[sv][None, :], pm), 0).sum(axis=1)
            cc += self.comp[:, :, r] * (nc - tc[:, r])[:, None]
            cm += self.comp[:, :, r] * (nm - tm[:, r])[:, None]
            tc[:, r] = nc
            tm[:, r] = nm
        return self._verdict(fit, tc, tm, cc, cm)


def _episode(instance, seed, probes_cls, monkeypatch):
    from dmlopt.heuristics.nara import allocate_netfit_probe

    with monkeypatch.context() as m:
        m.setattr(P, "Probes", probes_cls)
        return allocate_netfit_probe(instance, seed=seed)


@pytest.mark.parametrize("gen,topology,n", [("uniform", "alpha", 128), ("azure", "beta", 128),
                                            ("alibaba", "gamma", 96), ("uniform", "gamma", 400)])
def test_same_allocation_as_reference(gen, topology, n, monkeypatch):
    inst = dmlopt.generate("nara", {"generator": gen, "topology": topology, "n_requests": n},
                           seed=2)
    for seed in (0, 1):
        want = _episode(inst, seed, _OldProbes, monkeypatch)
        got = _episode(inst, seed, P.Probes, monkeypatch)
        assert got.model_dump() == want.model_dump()


def test_same_statistics_as_reference():
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "gamma",
                                    "n_requests": 64}, seed=0)
    state = State(inst)
    rng = np.random.default_rng(0)
    net = inst.net
    onehot = P._one_hot(net)
    # a used state: take random amounts from random servers
    take = rng.integers(0, 2, net.n_servers).astype(bool)
    state.cpu_free = np.where(take, state.cpu_free // 2, state.cpu_free)
    state.mem_free = np.where(take, state.mem_free // 3, state.mem_free)
    pc, pm = rng.integers(1, 60, 32), rng.integers(1, 60, 32)
    pb = rng.uniform(0, float(state.bw[net.access].max()), 32)
    old, new = _OldProbes(state, onehot, pc, pm, pb), P.Probes(state, None, pc, pm, pb)
    for name in ("fit", "tc", "tm", "cc", "cm"):
        assert np.array_equal(getattr(new, name), getattr(old, name)), name


@pytest.mark.parametrize("rows", [P.TABLE_ROWS, 3])
def test_cache_follows_the_path_links_across_requests(rows, monkeypatch):
    """One cache over a sequence of states: the statistics equal the reference's at every state,
    also after path links lose bandwidth (a cache that kept its widest table, or its
    compatibility rows, across that change gives other cc/cm) and with probes demanding 0;
    with room for 3 bandwidths the table forgets its rows on most calls (a cache that kept the
    old rows' indices, or made only the new bandwidths' rows after forgetting, fails) and
    never holds more rows than one call asks for."""
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
        old, new = _OldProbes(state, None, pc, pm, pb), P.Probes(state, None, pc, pm, pb, cache)
        changed += not np.array_equal(old.cc, P.Probes(State(inst), None, pc, pm, pb).cc)
        for name in ("fit", "tc", "tm", "cc", "cm"):
            assert np.array_equal(getattr(new, name), getattr(old, name)), (step, name)
        racks = sorted(set(rng.choice(net.n_racks, 2).tolist()))
        cf, mf = state.cpu_free // 2, state.mem_free // 2
        acc = state.bw[net.access] * 0.5
        for a, b in zip(new.after(cf, mf, acc, racks), old.after(cf, mf, acc, racks),
                        strict=True):
            assert np.array_equal(a, b), step
        assert cache.table.shape[0] <= max(rows, 16)
    assert changed > 0
