"""netfit's per-rack totals and one-server step, written for speed, against loops.

:func:`dmlopt.heuristics.nara.netfit.rack_totals` sums per rack as row sums when the racks are
runs of consecutive servers of one size (:func:`~dmlopt.heuristics.nara.netfit.rack_block`),
else by weighted counts; :func:`~dmlopt.heuristics.nara.netfit.plan` takes the best-fitting
server by one ``argmin``. Both are compared here with loops over the servers written without
the package's helpers; the allocations of whole episodes are pinned by
``tests/nara/test_probe_speed.py``.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.nara import netfit as nf
from dmlopt.models.nara.sim import TOL


def _brute_totals(cpu, mem, acc_ok, rack, R, c, m):
    """(elig, tc, tm) by a loop over the servers."""
    elig = np.zeros(len(cpu), dtype=bool)
    tc, tm = np.zeros(R), np.zeros(R)
    for s in range(len(cpu)):
        useful = (cpu[s] > 0 and c > 0) or (mem[s] > 0 and m > 0)
        if useful and acc_ok[s]:
            elig[s] = True
            tc[rack[s]] += min(int(cpu[s]), c)
            tm[rack[s]] += min(int(mem[s]), m)
    return elig, tc, tm


def _fake_state(net, rng, c, m):
    S = net.n_servers
    cpu = rng.integers(0, int(net.cpu.max()) + 1, S) * (rng.random(S) < 0.6)
    mem = rng.integers(0, int(net.mem.max()) + 1, S) * (rng.random(S) < 0.6)
    acc = rng.uniform(0, 100, S)
    b = float(rng.uniform(0, 100))
    return SimpleNamespace(net=net, req=SimpleNamespace(c=c, m=m, b=b), cpu_free=cpu,
                           mem_free=mem, access_now=acc >= b - TOL)


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_rack_totals_equal_loops(seed, shuffled) -> None:
    """Catches row sums over the wrong axis or a wrong block size, the access eligibility not
    applied, and the shortcut for requests asking for both resources used when one demand is
    0 (a server with free memory only then counts for a CPU-only request). ``shuffled``: racks
    that are not runs of consecutive servers take the weighted-count path."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "beta",
                                    "n_requests": 8}, seed=seed)
    net = inst.net
    rng = np.random.default_rng(seed)
    if shuffled:
        net = dataclasses.replace(net, rack=rng.permutation(net.rack))
    assert (nf.rack_block(net) == 0) == shuffled
    for c, m in [(int(rng.integers(1, 30)), int(rng.integers(1, 30))), (0, 7), (5, 0),
                 (1, 1)]:
        state = _fake_state(net, rng, c, m)
        got = nf.rack_totals(state)
        want = _brute_totals(state.cpu_free, state.mem_free, state.access_now, net.rack,
                             net.n_racks, c, m)
        for name, a, b in zip(("elig", "tc", "tm"), got, want, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b), (name, c, m)


def test_rack_block_of_shipped_and_other_layouts() -> None:
    """Catches a block size reported for racks of unequal size or for interleaved racks."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "gamma",
                                    "n_requests": 8}, seed=0)
    net = inst.net
    assert nf.rack_block(net) == net.n_servers // net.n_racks == 40
    assert nf.rack_block(net) == 40   # cached answer, same value
    swapped = net.rack.copy()
    swapped[[39, 40]] = swapped[[40, 39]]   # same sizes, not consecutive runs
    assert nf.rack_block(dataclasses.replace(net, rack=swapped)) == 0
    uneven = np.sort(np.concatenate([net.rack[:-1], [0]]))   # rack 0 41 servers, last 39
    assert nf.rack_block(dataclasses.replace(net, rack=uneven)) == 0


@pytest.mark.parametrize("seed", range(6))
def test_one_server_step_is_the_best_fit(seed) -> None:
    """netfit's step 1 (one ``argmin``) against the best fit found by a loop (least free CPU +
    memory left as fractions of the capacity, ties to the lowest index): catches ties broken
    to a higher index and the worst fit taken instead of the best."""
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 64}, seed=seed)
    state = dmlopt.models.nara.sim.State(inst)
    net = inst.net
    rng = np.random.default_rng(seed)
    hits = 0
    for j in range(64):
        state.begin(j)
        # free amounts above a request's (a fit) and many equal fits (ties)
        state.cpu_free = rng.integers(0, 6, net.n_servers) * 10
        state.mem_free = rng.integers(0, 6, net.n_servers) * 10
        c, m = state.req.c, state.req.m
        best = None
        for s in range(net.n_servers):
            if state.cpu_free[s] >= c and state.mem_free[s] >= m:
                left = ((state.cpu_free[s] - c) / max(int(net.cpu[s]), 1)
                        + (state.mem_free[s] - m) / max(int(net.mem[s]), 1))
                if best is None or left < best[0]:
                    best = (left, s)
        got = nf.plan(state)
        if best is not None:
            hits += 1
            assert got == [best[1]], j
        else:
            assert got is None or len(got) > 1, j
    assert hits >= 3


@pytest.mark.parametrize("cols", [1, 7, 63, 64, 65, 130])
def test_bit_rows_equal_a_loop(cols) -> None:
    """The rows of a bool matrix as ints (netfit's several-rack step) against a loop setting
    bit j for column j: catches bits read in the wrong byte or word order (65 and more columns
    take two or more 64-bit words) and a padding bit set."""
    rng = np.random.default_rng(cols)
    a = rng.random((5, cols)) < 0.5
    a[0] = True
    a[1] = False
    want = [sum(1 << j for j in range(cols) if row[j]) for row in a]
    assert nf._bit_rows(a) == want
