"""Nara (paper 001): the per-rack statistics of ``netfit-probe`` and their cache: the probe test
(:func:`placeable`), the rack segment sums and counts, and :class:`Cache` (the compatibility
matrices and the widest-bandwidth table kept across requests).

The algorithm is described in :mod:`dmlopt.heuristics.nara.probe`, which re-exports these names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dmlopt.models.nara.sim import TOL, State


def _one_hot(net: Any) -> np.ndarray:
    out = np.zeros((net.n_servers, net.n_racks))
    out[np.arange(net.n_servers), net.rack] = 1.0
    return out


def widest(state: State) -> np.ndarray:
    """(R, R) widest bottleneck free bandwidth over the candidate paths of each rack pair
    (+inf on the diagonal)."""
    net = state.net
    bott = state.bw[net.paths].min(axis=-1)  # (R, R, k)
    valid = np.arange(bott.shape[-1])[None, None, :] < net.n_cand[:, :, None]
    w = np.where(valid, bott, -np.inf).max(axis=-1)
    np.fill_diagonal(w, np.inf)
    return w


def placeable(cf: np.ndarray, mf: np.ndarray, acc: np.ndarray, onehot: np.ndarray,
              W: np.ndarray, pc: np.ndarray, pm: np.ndarray, pb: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """(K,) bool twice: probe placeable (relaxed, module docstring) and placeable locally
    (one server or one rack)."""
    one = ((cf[None, :] >= pc[:, None]) & (mf[None, :] >= pm[:, None])).any(axis=1)
    elig = acc[None, :] >= pb[:, None] - TOL
    gc = np.where(elig, np.minimum(cf[None, :], pc[:, None]), 0)
    gm = np.where(elig, np.minimum(mf[None, :], pm[:, None]), 0)
    tc = gc @ onehot  # (K, R)
    tm = gm @ onehot
    local = one | ((tc >= pc[:, None]) & (tm >= pm[:, None])).any(axis=1)
    comp = W[None, :, :] >= pb[:, None, None] - TOL  # (K, R, R)
    cc = np.einsum("krq,kq->kr", comp, tc)
    cm = np.einsum("krq,kq->kr", comp, tm)
    multi = ((cc >= pc[:, None]) & (cm >= pm[:, None])).any(axis=1)
    return local | multi, local


def _rack_order(net: Any) -> tuple[np.ndarray, np.ndarray]:
    """Servers sorted by rack (stable) and the start of each rack's run (every rack of a
    topology has servers)."""
    order = np.argsort(net.rack, kind="stable")
    return order, np.searchsorted(net.rack[order], np.arange(net.n_racks))


def _segments(vals: np.ndarray, rk: np.ndarray, R: int) -> np.ndarray:
    """(K, R) integer sums of the columns of ``vals`` (K, n) per rack, ``rk`` (n,) the racks of
    the columns in non-decreasing order (a rack without columns sums to 0)."""
    csum = np.zeros((vals.shape[0], vals.shape[1] + 1), dtype=np.int64)
    np.cumsum(vals, axis=1, out=csum[:, 1:])
    bounds = np.searchsorted(rk, np.arange(R + 1))
    return csum[:, bounds[1:]] - csum[:, bounds[:-1]]


def _rack_counts(cpu: np.ndarray, mem: np.ndarray, rack: np.ndarray, R: int, pc: np.ndarray,
                 pm: np.ndarray) -> np.ndarray | None:
    """(K, R) float: the number of servers of rack r with free CPU >= pc_k and free memory
    >= pm_k (ours): the count of servers per rack and (free CPU, free memory) value times the
    (values x probes) 0/1 matrix of the values that hold each probe (one product, integer
    counts in floats: exact). None when a value is negative or not an integer, or the
    (racks x CPU values x memory values) table is over four times the (probes x servers)
    array it replaces."""
    K, n = pc.size, cpu.size
    ints = all(x.dtype.kind in "iu" for x in (cpu, mem, pc, pm))
    if not ints or min(cpu.min(), mem.min(), pc.min(), pm.min()) < 0:
        return None
    vc, vm = int(cpu.max()) + 1, int(mem.max()) + 1
    if R * vc * vm > 4 * K * n:
        return None
    out = np.zeros((K, R))
    # a probe demanding more CPU or memory than any server has free is held by none: only
    # the others' columns of the product are made (the rest are 0, as in the full product)
    small = np.flatnonzero((pc < vc) & (pm < vm))
    if small.size:
        cnt = np.bincount(rack * (vc * vm) + cpu * vm + mem, minlength=R * vc * vm)
        holds = ((np.arange(vc)[:, None, None] >= pc[small][None, None, :])
                 & (np.arange(vm)[None, :, None] >= pm[small][None, None, :])
                 ).reshape(vc * vm, small.size)
        out[small] = (cnt.reshape(R, vc * vm).astype(float) @ holds).T
    return out


def _pick(order: np.ndarray | None, mask: np.ndarray) -> np.ndarray:
    """The servers of ``mask`` in the order ``order`` (None: the servers are already sorted
    by rack, the identity order)."""
    return np.flatnonzero(mask) if order is None else order[mask[order]]


def _rack_stats(cpu: np.ndarray, mem: np.ndarray, acc: np.ndarray, rack: np.ndarray, R: int,
                order: np.ndarray, pc: np.ndarray, pm: np.ndarray, pb: np.ndarray,
                counts: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K, R) per probe and rack: a server holds the probe alone (bool), and the CPU and memory
    the servers with an access link eligible for the probe's bandwidth give it (floats of
    integer sums): the first from :func:`_rack_counts` (or ``counts``, its value), else
    segment sums; the sums as segment sums of (probes x servers) arrays over the servers sorted
    by rack (``order``), those of the probes that take whole servers from (racks x probes)
    tables of free totals."""
    K = pc.size
    if counts is None:
        counts = _rack_counts(cpu, mem, rack, R, pc, pm)
    if counts is not None:
        fit = counts > 0
    else:
        # only servers with at least the smallest demands can hold a probe
        srt = _pick(order, (cpu >= pc.min()) & (mem >= pm.min()))
        fit = _segments(((cpu[srt][None, :] >= pc[:, None])
                         & (mem[srt][None, :] >= pm[:, None])), rack[srt], R) > 0
    # only servers with free CPU or memory and an access link eligible for the smallest
    # bandwidth add to a rack sum (in rack order); integer sums, then floats: exactly the
    # one-hot products of placeable()
    srt = _pick(order, (acc >= pb.min() - TOL) & ((cpu > 0) | (mem > 0)))
    cf, mf, ac, rk = cpu[srt], mem[srt], acc[srt], rack[srt]
    # with the thresholds pb - TOL sorted, server s is eligible for probe k exactly when more
    # than j_k (the thresholds below probe k's) lie at or under its access bandwidth
    thr = pb - TOL
    ordered = np.sort(thr)
    e = np.searchsorted(ordered, ac, side="right")
    j = np.searchsorted(ordered, thr, side="left")
    sums = (np.empty((K, R)), np.empty((K, R)))
    parts, takes = [], []
    cell = None
    for out, free, demand in zip(sums, (cf, mf), (pc, pm), strict=True):
        # a probe demanding at least the most free CPU (memory) of any server takes all of
        # each eligible server's: a suffix sum over the ranks of the rack's free totals, as
        # the rack's total minus a prefix sum (integers in floats: exact in any order), in
        # (rank, rack) rows so that the running sum adds whole rows
        whole = demand >= (free.max() if free.size else 0)
        if whole.any():
            if cell is None:
                cell = e * R + rk
            tot = np.bincount(cell, weights=free, minlength=(K + 1) * R)
            tot = tot.reshape(K + 1, R).cumsum(axis=0)                 # eligible: e > j
            out[whole] = tot[K] - tot[j[whole]]
        part = np.flatnonzero(~whole)
        if part.size:   # min(free, demand) of the eligible servers (free is never negative)
            take = np.minimum(free[None, :], demand[part, None])
            take *= e[None, :] > j[part, None]
            parts.append((out, part))
            takes.append(take)
    if takes:   # the CPU and memory rows of every such probe in one segment sum
        seg = _segments(takes[0] if len(takes) == 1 else np.concatenate(takes), rk, R)
        at = 0
        for out, part in parts:
            out[part] = seg[at:at + part.size]
            at += part.size
    return fit, sums[0], sums[1]


#: most bandwidths whose (R, R) compatibility :class:`Cache` keeps at once (rows of its table;
#: more only when one call asks for more): on delta an episode asks for up to 72 between two
#: changes of the widest table, and a forgotten row costs one comparison of R x R values
TABLE_ROWS = 64


def cache_memory(net: Any, n_probe: int) -> float:
    """Bytes a :class:`Cache` holds at most on ``net`` with ``n_probe`` probes per call: its
    table of compatibility rows (at most max(:data:`TABLE_ROWS`, ``n_probe``) of R x R
    floats), the widest table, the (links, R x R) map of the rack pairs over each link of a
    candidate path (bool, at most 16e6 entries; the links of paths between racks are at most
    the links that are not access links) and its sorted (rack pair, link) lists (three 8-byte
    entries per path-link entry).

    Parameters
    ----------
    net : Net
        The instance's topology.
    n_probe : int
        Probes per request.

    Returns
    -------
    float
        The bytes.

    References
    ----------
    Ours, on the probe test of :func:`placeable` (paper 001's allocators, section 3.2).
    """
    R, S = net.n_racks, net.n_servers
    links = max(net.n_links - S, 1)
    nnz = sum(len(p) for v in net.cand.values() for p in v)
    return 8.0 * (max(TABLE_ROWS, n_probe) + 2) * R * R + min(links * R * R, 16e6) \
        + 24.0 * nnz


class Cache:
    """What :class:`Probes` can keep from one request to the next in an episode (ours): the
    widest table (:func:`widest`), recomputed only when the free bandwidth of a link on some
    candidate path has changed (an allocation on one server or one rack charges access links
    only), and then only for the rack pairs with a candidate path over a changed link; per
    probe bandwidth b the (R, R) compatibility ``W >= b - TOL`` as floats, kept
    while the table is (rows of one (B, R, R) array, B at most :data:`TABLE_ROWS` or the
    bandwidths of one call). Same values as computing them at every request.
    """

    def __init__(self, net: Any) -> None:
        R = net.n_racks
        valid = np.arange(net.paths.shape[2])[None, None, :] < net.n_cand[:, :, None]
        self.links = np.unique(net.paths[valid])   # the links of every candidate path
        self.seen: np.ndarray | None = None       # their free bandwidth when W was made
        self.W: np.ndarray | None = None
        self.index: dict[float, int] = {}          # bandwidth -> row of ``table``
        self.table = np.empty((0, R, R))
        self.order: tuple[np.ndarray, np.ndarray] | None = None
        self.sorted_order: np.ndarray | None = None   # order[0], or None for the identity
        # per link of ``links``, the rack pairs (ra * R + rb) with a candidate path over it
        ra, rb, _ = np.nonzero(valid)
        hops = net.paths[valid]                   # (paths, max length), padded
        pos = np.searchsorted(self.links, hops.ravel())
        pair = np.repeat(ra * R + rb, hops.shape[1])
        by = np.argsort(pos, kind="stable")
        self._pairs_of, self._start = pair[by], np.searchsorted(pos[by], np.arange(pos.max(
            initial=-1) + 2))
        # the same as a dense (links, R * R) 0/1 table when small enough: the pairs over the
        # changed links are one ``any`` over its rows instead of a concatenation and a sort
        self._over: np.ndarray | None = None
        if self.links.size * R * R <= 16_000_000:
            self._over = np.zeros((self.links.size, R * R), dtype=bool)
            self._over[pos, pair] = True
        # per rack pair (last axis) its candidates' validity (k, R * R) and links (length, k,
        # R * R): the minima and maxima of an update are elementwise over contiguous rows
        self._valid = np.ascontiguousarray(valid.reshape(R * R, -1).T)
        self._paths = np.ascontiguousarray(
            net.paths.reshape(R * R, *net.paths.shape[2:]).transpose(2, 1, 0))

    def widest(self, state: State) -> np.ndarray:
        """:func:`widest` of ``state``, from the cache when no path link changed; else only
        the rack pairs with a candidate path over a changed link are recomputed (the same
        minima and maxima of the same values: equal to :func:`widest`)."""
        now = state.bw[self.links]
        if self.W is None:
            self.W, self.seen, self.index = widest(state), now, {}
        elif not np.array_equal(now, self.seen):
            changed = np.flatnonzero(now != self.seen)
            if self._over is not None:   # sorted, distinct: as np.unique below
                pairs = np.flatnonzero(self._over[changed].any(axis=0))
            else:
                st = self._start
                pairs = np.unique(np.concatenate([self._pairs_of[st[i]:st[i + 1]]
                                                  for i in changed]))
            hops = state.bw[self._paths[:, :, pairs]]     # (length, k, pairs)
            bott = hops[0].copy()   # bottleneck of each candidate path, one link at a time
            for hop in hops[1:]:
                np.minimum(bott, hop, out=bott)
            bott[~self._valid[:, pairs]] = -np.inf
            best = bott[0]          # widest candidate of each pair
            for row in bott[1:]:
                np.maximum(best, row, out=best)
            W = self.W.copy()
            W.reshape(-1)[pairs] = best
            self.W, self.seen, self.index = W, now, {}
        return self.W

    def rows(self, state: State, bws: np.ndarray, checked: bool = False) -> np.ndarray:
        """Rows of :attr:`table` holding the compatibility at each bandwidth of ``bws`` on
        ``state`` (1.0 where the widest bottleneck of the rack pair is >= b - TOL);
        ``checked``: the widest table was made or checked on this very state already."""
        W = self.W if checked and self.W is not None else self.widest(state)
        new = list(dict.fromkeys(float(b) for b in bws if float(b) not in self.index))
        if new and len(self.index) + len(new) > max(TABLE_ROWS, len(new)):
            # full: forget every row (the caller uses the returned rows at once, so none is
            # still needed) and make this call's rows anew
            self.index = {}
            new = list(dict.fromkeys(float(b) for b in bws))
        if new:
            n = len(self.index)
            if n + len(new) > self.table.shape[0]:
                rows = min(max(2 * self.table.shape[0], n + len(new)),
                           max(TABLE_ROWS, n + len(new)))
                grown = np.empty((rows, *W.shape))
                grown[:n] = self.table[:n]
                self.table = grown
            np.greater_equal(W[None, :, :], np.array(new)[:, None, None] - TOL,
                             out=self.table[n:n + len(new)], casting="unsafe")
            for i, b in enumerate(new):
                self.index[b] = n + i
        return np.array([self.index[float(b)] for b in bws], dtype=np.int64)
