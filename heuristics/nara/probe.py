"""``netfit`` with probe look-ahead: netfit's candidates scored by the placeability of probe
requests (Nara, paper 001; our design, an online allocator).

:mod:`.netfit` never drops a request it could place at that moment: what it still loses
is lost to earlier placements (fragmentation). This allocator keeps netfit's locality order
(one server, else one rack, else several racks) but, when several one-server or one-rack
allocations exist, it builds a few candidates and keeps the one after which the most *probe
requests* would still be placeable.

Candidates (at most ``max_cand``, netfit's own plan first):

* one server: the ``max_cand`` best-fitting servers that hold the whole request (least free
  CPU + memory left over) plus the fitting server with the least free access bandwidth (a
  request on one server charges no link, so it is the natural user of a server whose access
  link is nearly full);
* one rack: for the best-fitting racks, netfit's in-rack order (servers the request empties
  first) and a bandwidth-aware order (servers with the least free access bandwidth >= b first,
  so links already partly charged are charged again and fresh ones stay whole);
* several racks: netfit's plan only (no choice is made).

Probes: ``n_probe`` requests drawn (seeded, with replacement) from the requests *seen so far*
in the episode (the current one included): the allocator learns the request distribution online
and never looks at future requests. A probe <c, m, b> is counted placeable after a candidate
when one server holds it, or the servers with >= b free on their access link of a set of racks
hold it, where the set is a rack and every rack reachable from it by a candidate path whose
bottleneck has >= b free (a relaxation of constraint 3: pairwise compatibility of the other
racks is not checked). Candidates that charge only access links leave the rack-to-rack
bottlenecks unchanged, so those are computed once per request. Score = placeable probes +
``w_local`` x probes placeable on one server or one rack; ties to netfit's order.

Admission control: a request whose volume (mean share of the DC's CPU and memory, times its
holding period) exceeds ``admit_k`` times the mean volume of the requests seen so far is
rejected when placing it (best candidate) would make at least ``admit_loss`` x ``n_probe``
of the probes unplaceable that are placeable now: it would hold resources that several
average requests could use. For several-rack candidates the rack-to-rack bottlenecks are
not updated (only access links): an optimistic estimate. Defaults tuned on seeds 100-119
of alpha/uniform, alpha/Azure-like and alpha/Alibaba-like (grid admit_k in {1.5, 1.8, 2.1, 3}
x admit_loss in {0.03, 0.1, 0.2, 0.3}; the best uniform value without loss on the two
trace-like sets); ``admit_k=inf`` switches it off. A utilisation threshold instead of the
probe loss (reject big requests when the DC is over half full) was as good on uniform but cost
4 points on Azure-like, where big requests are rare and usually fit.

Ablation (``select=False`` keeps netfit's own plan and uses the probes only for admission;
``admit_k=inf`` switches admission off): on the tuning seeds 100-119 ``select`` changes
acceptance by at most 0.3 points either way on alpha/beta x the three request sets; on seeds
0-19 of alpha/uniform admission off gives 0.770 against netfit's 0.777 and 0.790 with it: the
gain over netfit is the admission control, the probe-scored candidate choice is neutral.
The default keeps ``select=True`` (the tuned configuration).

Cost: O(max_cand x n_probe x servers) numpy work per request with a choice;
``budget_servers`` switches the look-ahead off (plain netfit) above that many servers. The
probe test is incremental (:class:`Probes`): the per-rack statistics are built once per request
from small tables where the free values are few (the one-server fit from the most free memory
per rack and free CPU value; the sums of a probe demanding at least any server's free amount
from per-rack free totals by eligibility rank), else by segment sums over the servers sorted by
rack, restricted to the servers that can count for some probe; only the racks a candidate
touches are recounted, and the sums over compatible racks (R x R per probe) are made only for
the probes no single rack holds. The widest rack-to-rack bottlenecks are kept across
requests (:class:`Cache`) until a link of a candidate path changes (an allocation on one
server or one rack charges access links only), and then only the rack pairs with a candidate
path over a changed link are recomputed; a probe's compatibility matrix is one comparison of
that table with its bandwidth (the cache's rows per bandwidth serve candidates over several
racks). All
candidates of a request are scored in one batched update (:meth:`Probes.after_all`: the taken
servers' differences, no copy of the free capacities per candidate), the one-server fits of a
rack counted from one (rack, free value) table. A delta episode (2560 servers, 4096 requests)
takes about 3 s of CPU.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dmlopt.heuristics.nara import netfit as nf
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


class Probes:
    """The probe test of :func:`placeable`, incremental: per-rack statistics of the current
    state computed once, then a candidate that changes servers of a few racks only updates
    those racks (same verdicts as :func:`placeable`, tested)."""

    def __init__(self, state: State, onehot: np.ndarray | None, pc: np.ndarray,
                 pm: np.ndarray, pb: np.ndarray, cache: Cache | None = None) -> None:
        """Per-rack statistics of the probes (pc, pm, pb: (K,) demands) on ``state``.

        Parameters
        ----------
        state : the simulator state before the waiting request is placed.
        onehot : the (servers, racks) membership matrix of :func:`placeable`, or None; not
            needed (the per-rack sums are segment sums over the servers sorted by rack).
        pc, pm, pb : the probes' CPU, memory and bandwidth demands.
        cache : the episode's :class:`Cache` (the widest table, and compatibility matrices
            for candidates over several racks, kept across requests), or None to compute
            them here.
        """
        del onehot
        net = state.net
        self.net, self.pc, self.pm, self.pb = net, pc, pm, pb
        self.acc0 = state.bw[net.access]
        if cache is None:
            cache = Cache(net)
        # the compatibility matrices are looked up only for the probes that need them
        self._cache, self._state, self._checked = cache, state, False
        if cache.order is None:
            cache.order = _rack_order(net)
            # None: the servers are in rack order already (every shipped topology)
            cache.sorted_order = (None if np.array_equal(cache.order[0], np.arange(net.n_servers))
                                  else cache.order[0])
        # servers per rack holding each probe alone (None: values not small integers)
        self.counts = _rack_counts(state.cpu_free, state.mem_free, net.rack, net.n_racks, pc,
                                   pm)
        self.fit, self.tc, self.tm = _rack_stats(state.cpu_free, state.mem_free, self.acc0,
                                                 net.rack, net.n_racks, cache.sorted_order, pc,
                                                 pm, pb, self.counts)
        # the sums over compatible racks are needed only for probes no rack holds alone:
        # :meth:`_verdict` makes them for those probes; :attr:`cc`, :attr:`cm` on demand
        self._cc: np.ndarray | None = None
        self._cm: np.ndarray | None = None
        self._base: tuple[np.ndarray, np.ndarray] | None = None
        self._holds: np.ndarray | None = None
        self._n_holds: np.ndarray | None = None
        self._done: np.ndarray | None = None   # probes whose base sums are made

    @property
    def cc(self) -> np.ndarray:
        """(K, R): per probe k and rack r, the CPU the racks compatible with r at the probe's
        bandwidth can give it (made on first use)."""
        if self._cc is None:
            self._cc, self._cm = self._spread(self.tc, self.tm)
        return self._cc

    @cc.setter
    def cc(self, value: np.ndarray) -> None:
        self._cc = value

    @property
    def cm(self) -> np.ndarray:
        """(K, R): as :attr:`cc`, for memory."""
        if self._cm is None:
            self._cc, self._cm = self._spread(self.tc, self.tm)
        return self._cm

    @cm.setter
    def cm(self, value: np.ndarray) -> None:
        self._cm = value

    def _widest(self) -> np.ndarray:
        """The episode cache's widest table (:meth:`Cache.widest`) on this state, checked
        against the links once per request (the state does not change while the candidates
        are scored)."""
        if not self._checked or self._cache.W is None:
            self._cache.widest(self._state)
            self._checked = True
        return self._cache.W

    def _compat(self, idx: np.ndarray) -> np.ndarray:
        """(len(idx), R, R): the compatibility (1.0 where the widest bottleneck of the rack pair
        is >= b - TOL) at the bandwidth of each probe of ``idx``: one comparison of the cached
        widest table with the probes' thresholds (the rows of :meth:`Cache.rows`, without its
        look-up per bandwidth)."""
        W = self._widest()
        return (W[None, :, :] >= (self.pb[idx] - TOL)[:, None, None]).astype(float)

    def _spread(self, tc: np.ndarray, tm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(K, R) twice: per probe k and rack r, the sum of ``tc[k, q]`` (``tm[k, q]``) over
        the racks q compatible with r at the probe's bandwidth (sums of integers: exact in
        any order)."""
        sums = np.matmul(self._compat(np.arange(self.pc.size)), np.stack([tc, tm], axis=2))
        return sums[:, :, 0], sums[:, :, 1]

    def _verdict(self, fit, tc, tm, cc=None, cm=None) -> tuple[np.ndarray, np.ndarray]:
        """(placeable, local) from the per-rack statistics; without ``cc``, ``cm`` the sums
        over compatible racks are made only for the probes no single rack holds (a probe
        placeable locally is placeable whatever they are): one batched product of their
        compatibility matrices with their rack sums, integers in floats, exact in any order,
        so the same verdicts as from the full (K, R) sums."""
        pc, pm = self.pc[:, None], self.pm[:, None]
        local = fit.any(axis=1) | ((tc >= pc) & (tm >= pm)).any(axis=1)
        if cc is not None:
            multi = ((cc >= pc - 1e-9) & (cm >= pm - 1e-9)).any(axis=1)
            return local | multi, local
        placeable = local.copy()
        far = np.flatnonzero(~local)
        if far.size:
            sums = np.matmul(self._compat(far),                       # (n, R, R)
                             np.stack([tc[far], tm[far]], axis=2))   # (n, R, 2)
            placeable[far] = ((sums[:, :, 0] >= pc[far] - 1e-9)
                              & (sums[:, :, 1] >= pm[far] - 1e-9)).any(axis=1)
        return placeable, local

    def base(self) -> tuple[np.ndarray, np.ndarray]:
        """Verdicts on the current state (made once)."""
        if getattr(self, "_base", None) is not None:
            return self._base
        if self._cc is not None:  # given (a subclass) or made by :attr:`cc`
            self._base = self._verdict(self.fit, self.tc, self.tm, self._cc, self._cm)
            return self._base
        pc, pm = self.pc[:, None], self.pm[:, None]
        local = self.fit.any(axis=1) | ((self.tc >= pc) & (self.tm >= pm)).any(axis=1)
        placeable = local.copy()
        far = np.flatnonzero(~local)
        if far.size:
            cc, cm = self._base_sums(far)
            placeable[far] = ((cc >= pc[far] - 1e-9) & (cm >= pm[far] - 1e-9)).any(axis=1)
        self._base = placeable, local
        return self._base

    def _base_sums(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(len(idx), R) twice: :attr:`cc` and :attr:`cm` of the probes ``idx`` on the current
        state, each probe's made once (one batched product for those not made yet)."""
        if self._done is None:
            K, R = self.tc.shape
            self._done = np.zeros(K, dtype=bool)
            self._ccb, self._cmb = np.empty((K, R)), np.empty((K, R))
        need = idx[~self._done[idx]]
        if need.size:
            sums = np.matmul(self._compat(need), np.stack([self.tc[need], self.tm[need]], axis=2))
            self._ccb[need], self._cmb[need] = sums[:, :, 0], sums[:, :, 1]
            self._done[need] = True
        return self._ccb[idx], self._cmb[idx]

    def after(self, cf: np.ndarray, mf: np.ndarray, acc: np.ndarray, racks
              ) -> tuple[np.ndarray, np.ndarray]:
        """Verdicts after a change of free capacities confined to the servers of ``racks``.

        Only the changed racks are recounted: a probe is local when some rack holds it, so
        the count of such racks per probe is updated by the changed racks alone. The sums
        over compatible racks are made for the probes that are not local, as their sums on
        the current state (made once per probe) plus the changed racks' differences; when no
        changed rack gained anything (a candidate only takes), a probe not placeable before
        is not placeable after (every sum can only have dropped) and is skipped.
        """
        racks = list(dict.fromkeys(int(r) for r in racks))
        pc, pm, pb = self.pc[:, None], self.pm[:, None], self.pb[:, None]
        K = self.pc.size
        fit_r, tc_r, tm_r = (np.empty((K, len(racks)), dtype=bool), np.empty((K, len(racks))),
                             np.empty((K, len(racks))))
        for i, r in enumerate(racks):
            sv = self.net.rack_servers[r]
            fit_r[:, i] = ((cf[sv][None, :] >= pc) & (mf[sv][None, :] >= pm)).any(axis=1)
            elig = acc[sv][None, :] >= pb - TOL
            tc_r[:, i] = np.where(elig, np.minimum(cf[sv][None, :], pc), 0).sum(axis=1)
            tm_r[:, i] = np.where(elig, np.minimum(mf[sv][None, :], pm), 0).sum(axis=1)
        if self._holds is None:   # racks holding each probe alone, on the current state
            self._holds = self.fit | ((self.tc >= pc) & (self.tm >= pm))
            self._n_holds = self._holds.sum(axis=1)
        holds_r = fit_r | ((tc_r >= pc) & (tm_r >= pm))
        local = (self._n_holds - self._holds[:, racks].sum(axis=1) + holds_r.sum(axis=1)) > 0
        placeable = local.copy()
        todo = ~local
        if ((tc_r <= self.tc[:, racks]).all() and (tm_r <= self.tm[:, racks]).all()
                and not (fit_r & ~self.fit[:, racks]).any()):
            todo &= self.base()[0]
        far = np.flatnonzero(todo)
        if far.size:
            # the sums on the current state plus the changed racks' differences, through
            # the compatibility columns of those racks (integers in floats: exact)
            cc, cm = self._base_sums(far)
            rows = self._cache.rows(self._state, self.pb[far], True)
            col = self._cache.table[rows[:, None], :, np.array(racks)[None, :]]  # (n, S, R)
            cc += np.einsum("ksr,ks->kr", col, tc_r[far] - self.tc[far][:, racks])
            cm += np.einsum("ksr,ks->kr", col, tm_r[far] - self.tm[far][:, racks])
            placeable[far] = ((cc >= pc[far] - 1e-9) & (cm >= pm[far] - 1e-9)).any(axis=1)
        return placeable, local

    def after_all(self, state: State, cands: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`after` of every candidate at once (ours): (C, K) placeable and local.

        Parameters
        ----------
        state : State
            The simulator with the pending request, the state these statistics describe.
        cands : list of list of int
            Candidate plans, servers in pick order (:func:`after_taking`'s rule: each takes
            min(free, remaining) CPU and memory; a plan of several servers charges the
            request's bandwidth on each of their access links).

        Returns
        -------
        placeable, local : numpy.ndarray of bool, shape (len(cands), n_probe)
            Row i: ``after(*after_taking(state, self, cands[i]), racks of cands[i])``.

        Only the servers a candidate takes change, so its rack's statistics after it are the
        statistics now plus the taken servers' differences (integer sums: exact), and the
        count of the rack's servers holding a probe alone is the count now
        (:func:`_rack_counts`) minus and plus theirs; the sums over compatible racks are
        updated as in :meth:`after`, for every candidate in one product. A candidate only takes
        (the request's bandwidth is >= 0), so the probes not placeable now are skipped. Work:
        O(probes x (servers taken + candidates x racks)) in a fixed number of numpy calls per
        request, against one set of calls and a copy of the free capacities of every server
        per candidate. Candidates over several racks, and free values that are not small
        integers, go through :meth:`after`.

        References
        ----------
        Ours: the batched form of :meth:`after`, same verdicts (tested).
        """
        req, net = state.req, self.net
        srv, starts, ncf, nmf = [], [], [], []
        for cand in cands:
            starts.append(len(srv))
            rc, rm = req.c, req.m
            for s in cand:
                fc, fm = int(state.cpu_free[s]), int(state.mem_free[s])
                tc, tm = min(fc, rc), min(fm, rm)
                rc, rm = rc - tc, rm - tm
                srv.append(int(s))
                ncf.append(fc - tc)
                nmf.append(fm - tm)
        srv_a = np.array(srv, dtype=np.int64)
        rack = net.rack[srv_a]
        one_rack = all((rack[a:b] == rack[a]).all()
                       for a, b in zip(starts, [*starts[1:], len(srv)], strict=True))
        if getattr(self, "counts", None) is None or not one_rack:   # (a subclass without)
            rows = [self.after(*after_taking(state, self, c),
                               sorted({int(net.rack[s]) for s in c})) for c in cands]
            return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
        sizes = np.diff([*starts, len(srv)])
        crack = rack[starts]                                              # (C,)
        oacc = self.acc0[srv_a]
        nacc = np.where(np.repeat(sizes > 1, sizes), oacc - req.b, oacc)
        ocf, omf = state.cpu_free[srv_a], state.mem_free[srv_a]
        ncf_a, nmf_a = np.array(ncf, dtype=np.int64), np.array(nmf, dtype=np.int64)
        pc, pm, thr = self.pc[:, None], self.pm[:, None], self.pb[:, None] - TOL
        ok_new, ok_old = nacc[None, :] >= thr, oacc[None, :] >= thr
        d = np.concatenate([                                               # (3K, servers)
            np.where(ok_new, np.minimum(ncf_a[None, :], pc), 0)
            - np.where(ok_old, np.minimum(ocf[None, :], pc), 0),
            np.where(ok_new, np.minimum(nmf_a[None, :], pm), 0)
            - np.where(ok_old, np.minimum(omf[None, :], pm), 0),
            ((ncf_a[None, :] >= pc) & (nmf_a[None, :] >= pm)).astype(np.int64)
            - ((ocf[None, :] >= pc) & (omf[None, :] >= pm))])
        if len(srv) > len(cands):
            d = np.add.reduceat(d, starts, axis=1)                         # (3K, C)
        K = self.pc.size
        dtc, dtm = d[:K], d[K:2 * K]
        tc_r, tm_r = self.tc[:, crack] + dtc, self.tm[:, crack] + dtm
        fit_r = (self.counts[:, crack] + d[2 * K:]) > 0
        if self._holds is None:   # racks holding each probe alone, on the current state
            self._holds = self.fit | ((self.tc >= pc) & (self.tm >= pm))
            self._n_holds = self._holds.sum(axis=1)
        holds_r = fit_r | ((tc_r >= pc) & (tm_r >= pm))
        local = (self._n_holds[:, None] - self._holds[:, crack] + holds_r) > 0   # (K, C)
        # a candidate only takes (b >= 0): a probe not placeable now is not placeable after it
        todo = ~local & self.base()[0][:, None]
        placeable = local.copy()
        far = np.flatnonzero(todo.any(axis=1))
        if far.size:
            cc, cm = self._base_sums(far)                                  # (n, R)
            # compatibility of every rack with each candidate's rack: (n, C, R), 0/1
            col = self._widest()[:, crack].T[None, :, :] >= (self.pb[far] - TOL)[:, None, None]
            cc = cc[:, None, :] + col * dtc[far][:, :, None]
            cm = cm[:, None, :] + col * dtm[far][:, :, None]
            ok = ((cc >= self.pc[far, None, None] - 1e-9)
                  & (cm >= self.pm[far, None, None] - 1e-9)).any(axis=2)  # (n, C)
            placeable[far] |= todo[far] & ok
        return placeable.T, local.T


def after_taking(state: State, probes: Probes, cand: list[int]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Free CPU, free memory and free access bandwidth once the waiting request takes the
    servers ``cand`` in order (each as much CPU and memory as it has, until the request is
    covered; a multi-server allocation charges b on every access link)."""
    cf, mf, acc = state.cpu_free.copy(), state.mem_free.copy(), probes.acc0.copy()
    cf[cand], mf[cand], acc[cand] = taken(state, probes.acc0, cand)
    return cf, mf, acc


def taken(state: State, acc0: np.ndarray, cand: list[int]
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`after_taking` on the servers ``cand`` only (in its order), without a copy of
    every server's values.

    Parameters
    ----------
    state : State
        The simulator with the pending request.
    acc0 : numpy.ndarray
        Free access bandwidth of every server now.
    cand : list of int
        The servers, in pick order.

    Returns
    -------
    cpu, mem, acc : numpy.ndarray
        Per entry of ``cand``: its free CPU, memory and access bandwidth once the request has
        taken them.

    References
    ----------
    Ours, on paper 001's simulator (section 3.2: min(free, remaining) from each pick; b on
    every access link of a several-server allocation).
    """
    req = state.req
    cf = {s: state.cpu_free[s] for s in cand}
    mf = {s: state.mem_free[s] for s in cand}
    rc, rm = req.c, req.m
    for s in cand:
        tc, tm = min(cf[s], rc), min(mf[s], rm)
        cf[s] -= tc
        mf[s] -= tm
        rc -= tc
        rm -= tm
    acc = acc0[cand] - req.b if len(cand) > 1 else acc0[cand]
    return np.array([cf[s] for s in cand]), np.array([mf[s] for s in cand]), acc


def _candidates(state: State, max_cand: int) -> tuple[list[list[int]], bool]:
    """Candidate plans (netfit's first) and whether they charge only access links."""
    net, req = state.net, state.req
    c, m = req.c, req.m
    cf, mf = state.cpu_free, state.mem_free
    fits = np.flatnonzero((cf >= c) & (mf >= m))
    if fits.size:
        # single_fits' first max_cand (least left, then lowest index) without sorting every
        # fitting server: only those with left up to the max_cand-th smallest are sorted
        left = ((cf[fits] - c) / np.maximum(net.cpu, 1)[fits]
                + (mf[fits] - m) / np.maximum(net.mem, 1)[fits])
        if fits.size > max_cand:
            near = np.flatnonzero(left <= np.partition(left, max_cand - 1)[max_cand - 1])
        else:
            near = np.arange(fits.size)
        top = near[np.lexsort((fits[near], left[near]))][:max_cand]
        out = [[int(s)] for s in fits[top]]
        # the fitting server with the least free access bandwidth, then least left, then
        # lowest index
        accbw = state.bw[net.access[fits]]
        low_bw = np.flatnonzero(accbw == accbw.min())
        low_left = low_bw[left[low_bw] == left[low_bw].min()]
        low = int(fits[low_left[0]])
        if [low] not in out:
            out.append([low])
        return out, True
    elig, tc, tm = nf.rack_totals(state)
    ok = np.flatnonzero((tc >= c) & (tm >= m))
    if not ok.size:   # netfit's plan: no server and no rack holds the request
        multi = nf.multi_rack_plans(state, elig, tc, tm)
        return ([min(multi, key=lambda x: x[0])[1]] if multi else []), False
    left = (tc[ok] - c) + (tm[ok] - m)
    out: list[list[int]] = []
    accbw = state.bw[net.access]
    for r in ok[np.lexsort((ok, left))][:max_cand]:
        servers = net.rack_servers[r]
        servers = servers[elig[servers]]
        for order in (nf._contrib_order(servers, cf, mf, c, m),
                      servers[np.lexsort((servers, accbw[servers]))]):
            got = nf._take(order, cf, mf, c, m)
            if got is not None and got not in out:
                out.append(got)
    return out, True


def _add_exact(parts: list[float], x: float) -> None:
    """Add ``x`` to the non-overlapping partials ``parts`` of an exact float sum, in place
    (Shewchuk's algorithm, as in the recipe behind :func:`math.fsum`; few partials)."""
    i = 0
    for y in parts:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo:
            parts[i] = lo
            i += 1
        x = hi
    parts[i:] = [x]


def chooser(instance: Any, *, n_probe: int = 32, max_cand: int = 4, w_local: float = 0.5,
            admit_k: float = 1.8, admit_loss: float = 0.1, select: bool = True,
            budget_servers: int = 100_000, seed: int = 0):
    """The per-request choice function for :func:`~dmlopt.models.nara.sim.run_episode`."""
    net = instance.net
    look = net.n_servers <= budget_servers
    rng = np.random.default_rng(seed)
    # the requests seen so far (c, m, b, volume), filled in arrival order: O(1) per request
    n_req = len(instance.requests)
    seen_c = np.zeros(n_req, dtype=np.int64)
    seen_m = np.zeros(n_req, dtype=np.int64)
    seen_b = np.zeros(n_req)
    count = 0
    # the volumes' sum as exact partials (Shewchuk; math.fsum rounds them once): the mean of
    # the volumes seen so far in O(1) per request instead of a pass over all of them
    vol_parts: list[float] = []
    C, M = max(int(net.cpu.sum()), 1), max(int(net.mem.sum()), 1)
    cache = Cache(net)

    def choose(state: State, _rng: np.random.Generator) -> bool:
        del _rng
        req = state.req
        nonlocal count
        seen_c[count], seen_m[count], seen_b[count] = req.c, req.m, req.b
        vol = (req.c / C + req.m / M) / 2 * req.t
        _add_exact(vol_parts, vol)
        count += 1
        if not look:
            got = nf.plan(state)
            return got is not None and all(state.add(s) for s in got) and state.covered
        cands, _ = _candidates(state, max_cand)
        if not cands:
            return False
        if not select:
            cands = cands[:1]
        big = vol > admit_k * (math.fsum(vol_parts) / count)
        got = cands[0]
        if len(cands) > 1 or big:
            idx = rng.integers(0, count, n_probe)
            pc, pm, pb = seen_c[idx], seen_m[idx], seen_b[idx]
            probes = Probes(state, None, pc, pm, pb, cache)
            best = None
            pls, locs = probes.after_all(state, cands)
            for i, cand in enumerate(cands):
                pl, loc = pls[i], locs[i]
                key = (-(pl.sum() + w_local * loc.sum()), i, int(pl.sum()))
                if best is None or key < best[0]:
                    best = (key, cand)
            got = best[1]
            if big:
                before, _ = probes.base()
                if int(before.sum()) - best[0][2] >= admit_loss * n_probe:
                    return False  # admission control (module docstring)
        for s in got:
            if not state.add(s):  # never happens: plans are checked against constraint 3
                return False
        return state.covered

    return choose
