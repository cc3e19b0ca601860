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
by segment sums over the servers sorted by rack, restricted to the servers that can count for
some probe (O(n_probe x such servers), no probes x servers x racks product), and only the racks
a candidate touches are recounted. The widest rack-to-rack bottlenecks and the compatibility
matrix of each probe bandwidth are kept across requests (:class:`Cache`) until a link of a
candidate path changes (an allocation on one server or one rack charges access links only).
A delta episode (2560 servers, 4096 requests) takes under 10 s of CPU.
"""

from __future__ import annotations

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


class Cache:
    """What :class:`Probes` can keep from one request to the next in an episode (ours): the
    widest table (:func:`widest`), recomputed only when the free bandwidth of a link on some
    candidate path has changed (an allocation on one server or one rack charges access links
    only), and per probe bandwidth b the (R, R) compatibility ``W >= b - TOL`` as floats, kept
    while the table is (rows of one growing (B, R, R) array). Same values as computing them at
    every request.
    """

    def __init__(self, net: Any) -> None:
        valid = np.arange(net.paths.shape[2])[None, None, :] < net.n_cand[:, :, None]
        self.links = np.unique(net.paths[valid])   # the links of every candidate path
        self.seen: np.ndarray | None = None       # their free bandwidth when W was made
        self.W: np.ndarray | None = None
        self.index: dict[float, int] = {}          # bandwidth -> row of ``table``
        self.table = np.empty((0, net.n_racks, net.n_racks))
        self.order: tuple[np.ndarray, np.ndarray] | None = None

    def widest(self, state: State) -> np.ndarray:
        """:func:`widest` of ``state``, from the cache when no path link changed."""
        now = state.bw[self.links]
        if self.W is None or not np.array_equal(now, self.seen):
            self.W, self.seen, self.index = widest(state), now, {}
        return self.W

    def rows(self, state: State, bws: np.ndarray) -> np.ndarray:
        """Rows of :attr:`table` holding the compatibility at each bandwidth of ``bws`` on
        ``state`` (1.0 where the widest bottleneck of the rack pair is >= b - TOL)."""
        W = self.widest(state)
        new = [float(b) for b in bws if float(b) not in self.index]
        if new:
            n = len(self.index)
            if n + len(new) > self.table.shape[0]:
                grown = np.empty((max(2 * self.table.shape[0], n + len(new)), *W.shape))
                grown[:n] = self.table[:n]
                self.table = grown
            for i, b in enumerate(new):
                self.table[n + i] = np.greater_equal(W, b - TOL)
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
        cache : the episode's :class:`Cache` (the widest table and the compatibility matrices
            kept across requests), or None to compute them here.
        """
        del onehot
        net = state.net
        self.net, self.pc, self.pm, self.pb = net, pc, pm, pb
        self.acc0 = state.bw[net.access]
        if cache is None:
            cache = Cache(net)
        # the (R, R) compatibility of each distinct probe bandwidth, shared by its probes
        ub, which = np.unique(pb, return_inverse=True)
        rows = cache.rows(state, ub)
        self._table, self._rows = cache.table, rows[which]
        self._perm = np.argsort(which, kind="stable")          # the probes grouped by row
        self._bounds = np.searchsorted(which[self._perm], np.arange(ub.size + 1)).tolist()
        self._urows = rows.tolist()
        if cache.order is None:
            cache.order = _rack_order(net)
        order, _ = cache.order
        R = net.n_racks
        cf, mf, acc = state.cpu_free[order], state.mem_free[order], self.acc0[order]
        rk = net.rack[order]
        # only servers that can count for some probe enter the (K, servers) arrays: one that
        # holds a probe has at least the smallest demands; one that adds to a rack sum has free
        # CPU (memory) and an access link eligible for the smallest bandwidth
        keep = (cf >= pc.min()) & (mf >= pm.min())
        self.fit = _segments(((cf[keep][None, :] >= pc[:, None])
                              & (mf[keep][None, :] >= pm[:, None])), rk[keep], R) > 0
        reach = acc >= pb.min() - TOL
        # integer segment sums, then floats: exactly the one-hot products of placeable()
        for name, free, demand in (("tc", cf, pc), ("tm", mf, pm)):
            keep = reach & (free > 0)
            elig = acc[keep][None, :] >= pb[:, None] - TOL
            take = np.where(elig, np.minimum(free[keep][None, :], demand[:, None]), 0)
            setattr(self, name, _segments(take, rk[keep], R).astype(float))
        self.cc, self.cm = self._spread(self.tc, self.tm)

    def _spread(self, tc: np.ndarray, tm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(K, R) twice: per probe k and rack r, the sum of ``tc[k, q]`` (``tm[k, q]``) over
        the racks q compatible with r at the probe's bandwidth (sums of integers: exact in
        any order); one product per distinct bandwidth."""
        p = self._perm
        both = np.stack([tc[p], tm[p]], axis=1)              # (K, 2, R), grouped
        out = np.empty_like(both)
        for row, lo, hi in zip(self._urows, self._bounds[:-1], self._bounds[1:], strict=True):
            out[lo:hi] = both[lo:hi] @ self._table[row].T
        back = np.empty_like(out)
        back[p] = out
        return back[:, 0], back[:, 1]

    def _column(self, r: int) -> np.ndarray:
        """(K, R): the compatibility of every rack with rack ``r`` at each probe's bandwidth."""
        return self._table[self._rows, :, r]

    def _verdict(self, fit, tc, tm, cc, cm) -> tuple[np.ndarray, np.ndarray]:
        pc, pm = self.pc[:, None], self.pm[:, None]
        local = fit.any(axis=1) | ((tc >= pc) & (tm >= pm)).any(axis=1)
        multi = ((cc >= pc - 1e-9) & (cm >= pm - 1e-9)).any(axis=1)
        return local | multi, local

    def base(self) -> tuple[np.ndarray, np.ndarray]:
        """Verdicts on the current state."""
        return self._verdict(self.fit, self.tc, self.tm, self.cc, self.cm)

    def after(self, cf: np.ndarray, mf: np.ndarray, acc: np.ndarray, racks
              ) -> tuple[np.ndarray, np.ndarray]:
        """Verdicts after a change of free capacities confined to the servers of ``racks``."""
        fit, tc, tm = self.fit.copy(), self.tc.copy(), self.tm.copy()
        cc, cm = self.cc.copy(), self.cm.copy()
        pc, pm, pb = self.pc[:, None], self.pm[:, None], self.pb[:, None]
        for r in racks:
            sv = self.net.rack_servers[r]
            fit[:, r] = ((cf[sv][None, :] >= pc) & (mf[sv][None, :] >= pm)).any(axis=1)
            elig = acc[sv][None, :] >= pb - TOL
            nc = np.where(elig, np.minimum(cf[sv][None, :], pc), 0).sum(axis=1)
            nm = np.where(elig, np.minimum(mf[sv][None, :], pm), 0).sum(axis=1)
            col = self._column(r)
            cc += col * (nc - tc[:, r])[:, None]
            cm += col * (nm - tm[:, r])[:, None]
            tc[:, r] = nc
            tm[:, r] = nm
        return self._verdict(fit, tc, tm, cc, cm)


def after_taking(state: State, probes: Probes, cand: list[int]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Free CPU, free memory and free access bandwidth once the waiting request takes the
    servers ``cand`` in order (each as much CPU and memory as it has, until the request is
    covered; a multi-server allocation charges b on every access link)."""
    req = state.req
    cf, mf, acc = state.cpu_free.copy(), state.mem_free.copy(), probes.acc0.copy()
    rc, rm = req.c, req.m
    for s in cand:
        tc, tm = min(cf[s], rc), min(mf[s], rm)
        cf[s] -= tc
        mf[s] -= tm
        rc -= tc
        rm -= tm
    if len(cand) > 1:
        acc[cand] -= req.b
    return cf, mf, acc


def _candidates(state: State, max_cand: int) -> tuple[list[list[int]], bool]:
    """Candidate plans (netfit's first) and whether they charge only access links."""
    net, req = state.net, state.req
    c, m = req.c, req.m
    cf, mf = state.cpu_free, state.mem_free
    fits, left = nf.single_fits(state)
    if fits.size:
        out = [[int(s)] for s in fits[:max_cand]]
        accbw = state.bw[net.access[fits]]
        low = int(fits[np.lexsort((left, accbw))[0]])
        if [low] not in out:
            out.append([low])
        return out, True
    useful = ((cf > 0) & (c > 0)) | ((mf > 0) & (m > 0))
    elig = useful & state.access_now
    gc = np.where(elig, np.minimum(cf, c), 0)
    gm = np.where(elig, np.minimum(mf, m), 0)
    tc = np.bincount(net.rack, weights=gc, minlength=net.n_racks)
    tm = np.bincount(net.rack, weights=gm, minlength=net.n_racks)
    ok = np.flatnonzero((tc >= c) & (tm >= m))
    if not ok.size:
        got = nf.plan(state)
        return ([got] if got is not None else []), False
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
    seen_v = np.zeros(n_req)
    count = 0
    C, M = max(int(net.cpu.sum()), 1), max(int(net.mem.sum()), 1)
    cache = Cache(net)

    def choose(state: State, _rng: np.random.Generator) -> bool:
        del _rng
        req = state.req
        nonlocal count
        seen_c[count], seen_m[count], seen_b[count] = req.c, req.m, req.b
        vol = (req.c / C + req.m / M) / 2 * req.t
        seen_v[count] = vol
        count += 1
        if not look:
            got = nf.plan(state)
            return got is not None and all(state.add(s) for s in got) and state.covered
        cands, _ = _candidates(state, max_cand)
        if not cands:
            return False
        if not select:
            cands = cands[:1]
        big = vol > admit_k * np.mean(seen_v[:count])
        got = cands[0]
        if len(cands) > 1 or big:
            idx = rng.integers(0, count, n_probe)
            pc, pm, pb = seen_c[idx], seen_m[idx], seen_b[idx]
            probes = Probes(state, None, pc, pm, pb, cache)
            best = None
            for i, cand in enumerate(cands):
                cf, mf, acc = after_taking(state, probes, cand)
                pl, loc = probes.after(cf, mf, acc, sorted({int(net.rack[s]) for s in cand}))
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
