"""netfit-probe's probe statistics give the same allocations as before their speed-up.

``_OldProbes`` is :class:`dmlopt.heuristics.nara.probe.Probes` as it was when it summed per rack
by dense (probes x servers) x (servers x racks) one-hot products, kept verbatim (renamed): a
slow reference. The new per-rack segment sums must give the same statistics, and the
allocator the same episode, for the same seed.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.nara import probe as P
from dmlopt.models.nara.sim import TOL, State


class _OldProbes(P.Probes):
    """The reference (verbatim ``__init__`` of the dense version)."""

    def __init__(self, state: State, onehot: np.ndarray, pc: np.ndarray, pm: np.ndarray,
                 pb: np.ndarray) -> None:
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


def _episode(instance, seed, probes_cls, monkeypatch):
    from dmlopt.heuristics.nara import allocate_netfit_probe

    with monkeypatch.context() as m:
        m.setattr(P, "Probes", probes_cls)
        return allocate_netfit_probe(instance, seed=seed)


@pytest.mark.parametrize("gen,topology,n", [("uniform", "alpha", 128), ("azure", "beta", 128),
                                            ("alibaba", "gamma", 96)])
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
