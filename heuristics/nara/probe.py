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
from dmlopt.heuristics.nara.probe_cache import (  # noqa: F401 (re-exported)
    TABLE_ROWS,
    Cache,
    _one_hot,
    _pick,
    _rack_counts,
    _rack_order,
    _rack_stats,
    _segments,
    cache_memory,
    placeable,
    widest,
)
from dmlopt.models.nara.sim import TOL, State


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
        ok_all = local.copy()
        far = np.flatnonzero(~local)
        if far.size:
            sums = np.matmul(self._compat(far),                       # (n, R, R)
                             np.stack([tc[far], tm[far]], axis=2))   # (n, R, 2)
            ok_all[far] = ((sums[:, :, 0] >= pc[far] - 1e-9)
                              & (sums[:, :, 1] >= pm[far] - 1e-9)).any(axis=1)
        return ok_all, local

    def base(self) -> tuple[np.ndarray, np.ndarray]:
        """Verdicts on the current state (made once)."""
        if getattr(self, "_base", None) is not None:
            return self._base
        if self._cc is not None:  # given (a subclass) or made by :attr:`cc`
            self._base = self._verdict(self.fit, self.tc, self.tm, self._cc, self._cm)
            return self._base
        pc, pm = self.pc[:, None], self.pm[:, None]
        local = self.fit.any(axis=1) | ((self.tc >= pc) & (self.tm >= pm)).any(axis=1)
        ok_all = local.copy()
        far = np.flatnonzero(~local)
        if far.size:
            cc, cm = self._base_sums(far)
            ok_all[far] = ((cc >= pc[far] - 1e-9) & (cm >= pm[far] - 1e-9)).any(axis=1)
        self._base = ok_all, local
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
        ok_all = local.copy()
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
            ok_all[far] = ((cc >= pc[far] - 1e-9) & (cm >= pm[far] - 1e-9)).any(axis=1)
        return ok_all, local

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
        ok_all = local.copy()
        far = np.flatnonzero(todo.any(axis=1))
        if far.size:
            cc, cm = self._base_sums(far)                                  # (n, R)
            # compatibility of every rack with each candidate's rack: (n, C, R), 0/1
            col = self._widest()[:, crack].T[None, :, :] >= (self.pb[far] - TOL)[:, None, None]
            cc = cc[:, None, :] + col * dtc[far][:, :, None]
            cm = cm[:, None, :] + col * dtm[far][:, :, None]
            ok = ((cc >= self.pc[far, None, None] - 1e-9)
                  & (cm >= self.pm[far, None, None] - 1e-9)).any(axis=2)  # (n, C)
            ok_all[far] |= todo[far] & ok
        return ok_all.T, local.T


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
