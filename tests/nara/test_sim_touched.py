"""The simulator's report of changed servers (``State.touched``) and netfit's per-episode
:class:`~dmlopt.heuristics.nara.netfit.Tracker` built on it, against full comparisons and loops
over the servers written without the package's helpers."""

from __future__ import annotations

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import nara as H
from dmlopt.heuristics.nara import netfit as nf
from dmlopt.heuristics.nara import probe as P
from dmlopt.models.nara import sim
from dmlopt.models.nara.sim import State


def _drive(inst, look, seed=0):
    """Run netfit-probe's chooser over ``inst``, calling ``look(state, j)`` at every request
    after ``begin`` (releases done) and before the choice."""
    state = State(inst)
    choose = P.chooser(inst, seed=seed)
    for j in range(len(inst.requests)):
        state.begin(j)
        look(state, j)
        if choose(state, None) is False:
            state.drop()
        elif state.req is not None:
            state.finish()
    return state.solution()


@pytest.mark.parametrize("topology", ["alpha", "gamma"])
def test_touched_covers_every_changed_server(topology) -> None:
    """Every server whose free CPU, free memory or access bandwidth differs from the previous
    look is in the new part of ``State.touched``, and every reported server is one of a
    committed or released allocation's: catches a release (or a commit) that is not reported
    and a report of other servers."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": topology,
                                    "n_requests": 160}, seed=3)
    net = inst.net
    prev = {"cf": None, "pos": 0, "log": None, "changes": 0}

    def look(state, j):
        now = (state.cpu_free.copy(), state.mem_free.copy(), state.bw[net.access].copy())
        if prev["cf"] is not None:
            assert state.touched is prev["log"]
            new = set(state.touched[prev["pos"]:])
            changed = {s for s in range(net.n_servers)
                       if now[0][s] != prev["cf"][0][s] or now[1][s] != prev["cf"][1][s]
                       or now[2][s] != prev["cf"][2][s]}
            assert changed <= new, j
            # reported servers belong to allocations committed at j - 1 or released at j
            ends = set()
            for i, al in enumerate(state.allocations):
                if al is not None and (i == j - 1 or i + inst.requests[i].t == j):
                    ends.update(al.servers)
            assert new <= ends, j
            prev["changes"] += len(changed)
        prev["cf"], prev["pos"], prev["log"] = now, len(state.touched), state.touched

    _drive(inst, look)
    assert prev["changes"] > 50


def test_touched_changes_no_result(monkeypatch) -> None:
    """The report is bounded (the list is replaced past its cap) and changes no allocation:
    catches a cap that truncates the list a reader holds in place (it must be replaced) and a
    tracker that keeps stale counts across the replacement."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "beta",
                                    "n_requests": 200}, seed=1)
    base = _drive(inst, lambda state, j: None)
    assert base.model_dump() == H.HEURISTICS["netfit-probe"].function(inst, seed=0).model_dump()
    monkeypatch.setattr(sim, "_TOUCHED_CAP", 0)
    lists: list[list[int]] = []   # held, so no two are the same object by a reused id

    def look(state, j):
        if not lists or state.touched is not lists[-1]:
            lists.append(state.touched)

    small = _drive(inst, look)
    assert small.model_dump() == base.model_dump()
    assert len(lists) > 3   # the list was replaced several times

def _brute(state, net, vc, vm):
    cnt = np.zeros((net.n_racks, vc, vm), dtype=np.int64)
    for s in range(net.n_servers):
        cnt[net.rack[s], state.cpu_free[s], state.mem_free[s]] += 1
    return cnt


@pytest.mark.parametrize("topology", ["beta", "gamma"])
def test_tracker_equals_loops_over_an_episode(topology) -> None:
    """After ``sync`` at every request of an episode: the access bandwidths, the per-(rack,
    CPU, memory) counts, ``any_fit`` for demands at, below and above the free values, and the
    per-rack fit counts of random probes equal loops over the servers; then a state whose
    arrays are replaced (a copy, as the offline search's snapshots) is read again. Catches a
    release not applied, an access bandwidth left stale, ``any_fit`` off by one value, and a
    tracker that follows a replaced array by the old report."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": topology,
                                    "n_requests": 200}, seed=4)
    net = inst.net
    tr = nf.Tracker(net)
    rng = np.random.default_rng(0)
    vc, vm = int(net.cpu.max()) + 1, int(net.mem.max()) + 1
    checked = {"fit": 0, "nofit": 0}

    def look(state, j):
        tr.sync(state)
        assert np.array_equal(tr.acc, state.bw[net.access])
        cnt = _brute(state, net, vc, vm)
        assert np.array_equal(tr.cnt.reshape(cnt.shape), cnt), j
        for c, m in [(state.req.c, state.req.m), *rng.integers(0, 13, (6, 2)).tolist()]:
            want = any(state.cpu_free[s] >= c and state.mem_free[s] >= m
                       for s in range(net.n_servers))
            assert tr.any_fit(int(c), int(m)) == want, (j, c, m)
            checked["fit" if want else "nofit"] += 1
        pc, pm = rng.integers(0, 14, 8), rng.integers(0, 14, 8)
        want = np.zeros((8, net.n_racks))
        for k in range(8):
            for s in range(net.n_servers):
                want[k, net.rack[s]] += (state.cpu_free[s] >= pc[k]
                                         and state.mem_free[s] >= pm[k])
        assert np.array_equal(tr.counts(pc, pm), want), j

    _drive(inst, look)
    assert checked["fit"] > 20 and checked["nofit"] > 20
    # a replaced array (no report of the change) is read again in full
    state = State(inst)
    state.begin(0)
    tr.sync(state)
    state.cpu_free = np.zeros_like(state.cpu_free)
    tr.sync(state)
    assert not tr.any_fit(1, 0)
    assert np.array_equal(tr.cnt.reshape(-1, vc, vm), _brute(state, net, vc, vm))
