"""``netfit``: our network-aware online allocator for Nara (paper 001).

Built from section 5.3's reading of the learned policy (locality first; spread bandwidth-light
requests over neighbouring racks; keep the dense intra-rack network for the rest) plus one rule
the baselines lack: every plan is checked against constraint 3 before a server is picked, so a
request is dropped only when this allocator finds no allocation at all.

Per request <c, m, b>:

1. one server: the best-fitting server that holds the whole request (least free CPU + memory
   left over): no bandwidth at all;
2. one rack: among racks whose servers with >= b free on their access link hold the request,
   the best-fitting rack; inside it the servers the request empties completely first (no
   stranded fragments), largest contributions first, so few access links are charged;
3. several racks: for every seed rack, racks are added greedily (neighbouring racks first, then
   by free resources) while every pair of chosen racks keeps a candidate path with >= b free;
   the plan with the fewest racks, then the fewest servers, then the best fit wins.

Tried and not kept (suite paper-nara-netfit on alpha/beta, 6 seeds): admission control
(dropping large requests when the DC is busy) lowered acceptance on 128-request episodes; the
worst-fit rack and the rack with the most free access bandwidth were below best fit.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from dmlopt.models.nara.sim import State


def _take(order: np.ndarray, cf: np.ndarray, mf: np.ndarray, c: int, m: int) -> list[int] | None:
    """Servers of ``order`` taken in turn (min(free, remaining)) until c and m are covered."""
    out: list[int] = []
    for s in order:
        if c <= 0 and m <= 0:
            break
        gc = min(int(cf[s]), c)
        gm = min(int(mf[s]), m)
        if gc + gm == 0:
            continue
        out.append(int(s))
        c -= gc
        m -= gm
    return out if c <= 0 and m <= 0 else None


def _contrib_order(servers: np.ndarray, cf: np.ndarray, mf: np.ndarray, c: int, m: int
                   ) -> np.ndarray:
    """Servers the request would empty first (free <= the whole request in both resources),
    then by their contribution to <c, m>, largest first; ties to the lower index."""
    full = (cf[servers] <= c) & (mf[servers] <= m)
    score = np.minimum(cf[servers], c) / max(c, 1) + np.minimum(mf[servers], m) / max(m, 1)
    return servers[np.lexsort((servers, -score, ~full))]


def single_fits(state: State) -> tuple[np.ndarray, np.ndarray]:
    """Servers that hold the whole pending request alone, best fit first (least CPU + memory
    left, as fractions of the server's capacity; ties by index), and those fractions."""
    net, req = state.net, state.req
    cf, mf = state.cpu_free, state.mem_free
    fits = np.flatnonzero((cf >= req.c) & (mf >= req.m))
    left = ((cf[fits] - req.c) / np.maximum(net.cpu, 1)[fits]
            + (mf[fits] - req.m) / np.maximum(net.mem, 1)[fits])
    order = np.lexsort((fits, left))
    return fits[order], left[order]


def rack_totals(state: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The servers that can contribute to the pending request (some free resource it asks
    for, and an access link that allows it), and per rack the CPU and memory they can give.

    Parameters
    ----------
    state : State
        The simulator with a pending request.

    Returns
    -------
    elig : numpy.ndarray of bool
        Per server: can contribute.
    tc, tm : numpy.ndarray
        Per rack: CPU and memory the eligible servers can give (each capped at the request's).

    References
    ----------
    Ours (this module, steps 2 and 3), built from paper 001 (Shabka, Zervas), section 5.3.
    """
    net, req = state.net, state.req
    c, m = req.c, req.m
    cf, mf = state.cpu_free, state.mem_free
    useful = ((cf > 0) | (mf > 0) if c > 0 and m > 0
              else ((cf > 0) & (c > 0)) | ((mf > 0) & (m > 0)))
    elig = useful & state.access_now
    per_rack = rack_block(net)
    if per_rack:   # racks are consecutive runs of equal size: integer row sums (exact)
        gc = np.minimum(cf, c)
        gc *= elig
        gm = np.minimum(mf, m)
        gm *= elig
        return (elig, gc.reshape(-1, per_rack).sum(axis=1).astype(float),
                gm.reshape(-1, per_rack).sum(axis=1).astype(float))
    gc = np.where(elig, np.minimum(cf, c), 0)
    gm = np.where(elig, np.minimum(mf, m), 0)
    tc = np.bincount(net.rack, weights=gc, minlength=net.n_racks)
    tm = np.bincount(net.rack, weights=gm, minlength=net.n_racks)
    return elig, tc, tm


_BLOCKS: dict[int, tuple[Any, int]] = {}


def rack_block(net: Any) -> int:
    """Servers per rack when the servers of every rack are one run of consecutive indices and
    all racks have the same number of servers (every shipped topology), else 0.

    Parameters
    ----------
    net : dmlopt.models.nara.topology.Net
        The topology (``rack``: the rack of each server; ``n_racks``).

    Returns
    -------
    int
        S such that server s is in rack s // S, or 0. Computed once per topology object.

    References
    ----------
    Ours: lets per-rack sums be row sums of an (R, S) view instead of weighted bincounts.
    """
    got = _BLOCKS.get(id(net))
    if got is not None and got[0]() is net:
        return got[1]
    n, R = len(net.rack), int(net.n_racks)
    size = n // R if R and n % R == 0 else 0
    if size and not np.array_equal(net.rack, np.repeat(np.arange(R), size)):
        size = 0
    _BLOCKS[id(net)] = (weakref.ref(net), size)
    return size


def rack_plans(state: State, elig: np.ndarray, tc: np.ndarray,
               tm: np.ndarray) -> Iterator[list[int]]:
    """NetFit's step 2: the plans inside one rack, best-fitting rack first (ties by index).

    Parameters
    ----------
    state : State
        The simulator with a pending request.
    elig, tc, tm : numpy.ndarray
        :func:`rack_totals` of ``state``.

    Yields
    ------
    list of int
        Servers in pick order, one plan per rack that holds the request.

    References
    ----------
    Ours (this module, step 2), built from paper 001 (Shabka, Zervas), section 5.3.
    """
    net, req = state.net, state.req
    c, m = req.c, req.m
    cf, mf = state.cpu_free, state.mem_free
    ok = np.flatnonzero((tc >= c) & (tm >= m))
    if not ok.size:
        return
    left = (tc[ok] - c) + (tm[ok] - m)
    for r in ok[np.lexsort((ok, left))]:
        servers = net.rack_servers[r]
        servers = servers[elig[servers]]
        got = _take(_contrib_order(servers, cf, mf, c, m), cf, mf, c, m)
        if got is not None:
            yield got


def _bit_rows(a: np.ndarray) -> list[int]:
    """The rows of a bool matrix as Python ints (bit j: column j): the rows packed into
    little-endian 64-bit words (one ``tolist`` for up to 64 columns)."""
    rows, n = a.shape
    words = max(-(-n // 64), 1)
    padded = np.zeros((rows, 64 * words), dtype=bool)
    padded[:, :n] = a
    w = np.packbits(padded, axis=1, bitorder="little").view("<u8")   # (rows, words)
    if words == 1:
        return w[:, 0].tolist()
    return [sum(x << (64 * k) for k, x in enumerate(row)) for row in w.tolist()]


def multi_rack_plans(state: State, elig: np.ndarray, tc: np.ndarray,
                     tm: np.ndarray) -> list[tuple[tuple[int, int, float], list[int]]]:
    """NetFit's step 3: one plan per seed rack over several mutually compatible racks, with
    its key (racks used, servers used, capacity left); NetFit takes the smallest key.

    Parameters
    ----------
    state : State
        The simulator with a pending request.
    elig, tc, tm : numpy.ndarray
        :func:`rack_totals` of ``state``.

    Returns
    -------
    list of (key, plan)
        In seed-rack order; plans are servers in pick order.

    References
    ----------
    Ours (this module, step 3), built from paper 001 (Shabka, Zervas), section 5.3.
    """
    net, req = state.net, state.req
    c, m = req.c, req.m
    cf, mf = state.cpu_free, state.mem_free
    compat = state.compat_now
    neigh = net.neighbour
    size = tc / max(c, 1) + tm / max(m, 1)
    racks = np.flatnonzero(size > 0)
    out: list[tuple[tuple[int, int, float], list[int]]] = []
    if not racks.size:
        return out
    # the preference order of every seed rack: neighbours of r0 first, each part by most free
    # then index (a stable split of one sorted order, ``order``); compatibility and
    # neighbourhood rows as bit masks over positions in that order (bit i: rack order[i]);
    # rack totals as Python floats (the same doubles, added in the same order)
    by_size = racks[np.lexsort((racks, -size[racks]))]
    order = by_size.tolist()
    masks = _bit_rows(compat[:, by_size])
    near = _bit_rows(neigh[:, by_size])
    every = (1 << len(order)) - 1
    rank = dict(zip(order, range(len(order)), strict=True))
    tcl, tml = tc.tolist(), tm.tolist()
    plans: dict[frozenset, tuple[list[int], int] | None] = {}
    for r0 in racks.tolist():
        # greedy: walk the racks by preference (neighbours of r0 first, then most free) and
        # add each one still compatible with all chosen racks. Compatibility only shrinks, so
        # the next rack the walk adds is the first position not yet passed of the current part
        # that is still compatible: the lowest set bit of (compatible & not passed), and the
        # racks the walk would skip are never looked at
        chosen = [r0]
        ok = masks[r0] & ~(1 << rank[r0])
        have_c, have_m = tcl[r0], tml[r0]
        for part in (near[r0], every & ~near[r0]):
            while have_c < c or have_m < m:
                free = ok & part
                if not free:
                    break
                i = (free & -free).bit_length() - 1
                part &= ~((2 << i) - 1)   # positions up to i are passed
                r = order[i]
                chosen.append(r)
                ok &= masks[r]
                have_c += tcl[r]
                have_m += tml[r]
        if have_c < c or have_m < m:
            continue
        # the plan depends on the set of chosen racks only (the order below is total)
        key = frozenset(chosen)
        if key not in plans:
            servers = np.concatenate([net.rack_servers[r] for r in chosen])
            servers = servers[elig[servers]]
            got = _take(_contrib_order(servers, cf, mf, c, m), cf, mf, c, m)
            plans[key] = None if got is None else (got, len({int(net.rack[s]) for s in got}))
        if plans[key] is None:
            continue
        got, racks_used = plans[key]
        out.append(((racks_used, len(got), float(have_c - c + have_m - m)), list(got)))
    return out


def plan(state: State) -> list[int] | None:
    """Servers in pick order for the pending request, or None (drop)."""
    # 1. one server, best fit: the first of single_fits' order (least left, then lowest index)
    net, req = state.net, state.req
    cf, mf = state.cpu_free, state.mem_free
    fits = np.flatnonzero((cf >= req.c) & (mf >= req.m))
    if fits.size:
        left = ((cf[fits] - req.c) / np.maximum(net.cpu, 1)[fits]
                + (mf[fits] - req.m) / np.maximum(net.mem, 1)[fits])
        return [int(fits[np.argmin(left)])]
    elig, tc, tm = rack_totals(state)
    # 2. one rack, best fit
    for got in rack_plans(state, elig, tc, tm):
        return got
    # 3. several racks: the smallest key, the first seed rack among equal keys
    multi = multi_rack_plans(state, elig, tc, tm)
    return min(multi, key=lambda x: x[0])[1] if multi else None


def chooser(instance: Any):
    """The per-request choice function for :func:`~dmlopt.models.nara.sim.run_episode`."""
    del instance

    def choose(state: State, rng: np.random.Generator) -> bool:
        del rng
        got = plan(state)
        if got is None:
            return False
        for s in got:
            if not state.add(s):  # never happens: plans are checked against constraint 3
                return False
        return state.covered

    return choose
