"""RAR (paper 003): the packer of RDDA (:class:`_Packer`): CU use per node and slot, node peaks,
wavelength loads and deployments, and the window-maximum tables it scores placements with.

The algorithm and the batching of window lengths are described in :mod:`dmlopt.heuristics.rar`
(module docstring), which builds the heuristics on it and re-exports these names.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np

from dmlopt.models.rar import (
    Assignment,
    Instance,
    Solution,
    assign_cu_ids,
    duration,
    fewest_cus_table,
    modes,
)

#: windows one batch of window lengths holds at most (unless one length alone has more):
#: :meth:`_Packer.place` scores the lengths of smallest lower bound first and, after each
#: batch, drops the lengths that can no longer beat the best found (module docstring)
BATCH_WINDOWS = 1024


#: a node's term in a placement's node sum when it lacks the CUs (above any sum of new CUs)
_NO_ROOM = 1 << 32


def fewest_cu_slots(instance: Instance, j: int) -> int:
    """The fewest CU-slots request ``j`` can run on: min N k d over its modes (N, k, d).

    Parameters
    ----------
    instance : the RAR instance.
    j : the request's index.

    Returns
    -------
    int
        N k d minimised over the allowed node counts N and the windows d that fit in
        [t_a, t_d] (k the fewest CUs for d, capped by the largest node); a request with no mode
        gets 2**62.
    """
    k_max = max(nd.cus for nd in instance.nodes)
    return min((nn * k * d for nn, k, d in modes(instance, j, k_max)), default=1 << 62)


def _sparse_levels(rows: np.ndarray) -> list[np.ndarray]:
    """The sparse table of ``rows``: level j holds the maxima of the windows of length 2^j
    (level j has ``w - 2^j + 1`` columns); O(w log w) per row."""
    levels = [rows]
    span = 1
    while 2 * span <= rows.shape[1]:
        prev = levels[-1]
        levels.append(np.maximum(prev[:, :-span], prev[:, span:]))
        span *= 2
    return levels


def _window_max(rows: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """max(rows[:, s..e]) for the pairs (s, e), s <= e: shape (len(rows), len(s)).

    A sparse table (maxima of the windows of length 2^j): O(w log w) per row to build, two
    look-ups per pair, so only the pairs asked for cost anything (no w x w grid).
    """
    levels = _sparse_levels(rows)
    length = e - s + 1
    j = np.floor(np.log2(length)).astype(np.int64) if length.size else length
    out = np.empty((rows.shape[0], s.size), dtype=rows.dtype)
    for lv in np.unique(j):
        sel = np.flatnonzero(j == lv)
        table = levels[int(lv)]
        out[:, sel] = np.maximum(table[:, s[sel]], table[:, e[sel] - (1 << int(lv)) + 1])
    return out


def _length_max(levels: list[np.ndarray], d: int) -> np.ndarray:
    """max(rows[:, s..s + d - 1]) for every start s = 0..w - d: two slices of one level."""
    lv = d.bit_length() - 1
    table = levels[lv]
    n = levels[0].shape[1] - d + 1
    off = d - (1 << lv)
    return np.maximum(table[:, :n], table[:, off:off + n])


def _min_window_max(levels: list[np.ndarray]) -> np.ndarray:
    """m[:, d] = the least window maximum over the windows of length d of each row (d = 1..w).

    Each element is the maximum of the windows inside the widest run around it holding no
    larger element (found by binary lifting over the sparse table, O(w log w) per row), so the
    least maximum over length d is the least element whose run is at least d long (a suffix
    minimum over run lengths). Column 0 is unused.
    """
    rows = levels[0]
    n_rows, w = rows.shape
    start = np.broadcast_to(np.arange(w), rows.shape).copy()
    end = start.copy()
    for lv in range(len(levels) - 1, -1, -1):
        size = 1 << lv
        table = levels[lv].ravel()  # row r starts at r (w - size + 1)
        base = (np.arange(n_rows) * (w - size + 1))[:, None]
        # the block end + 1 .. end + size, if it lies in the row and holds nothing larger
        grow = (end < w - size) & (table[base + np.minimum(end + 1, w - size)] <= rows)
        end += grow * size
        # the block start - size .. start - 1
        grow = (start >= size) & (table[base + np.maximum(start - size, 0)] <= rows)
        start -= grow * size
    least = np.full((n_rows, w + 1), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(least, (np.broadcast_to(np.arange(n_rows)[:, None], rows.shape),
                          end - start + 1), rows)
    return np.minimum.accumulate(least[:, ::-1], axis=1)[:, ::-1]


class _Windows:
    """One request's windows: the offset ``lo`` of its first slot, its ``width``, the sparse
    table of its rings' nodes' CU use (``levels``, rows in the order of ``pos``/``loc``), per
    row and window length the least window maximum (``least``, MinCU keys only) and the window
    maxima per length computed so far."""

    def __init__(self, lo: int, width: int, levels: list[np.ndarray], pos: dict[int, int],
                 loc: np.ndarray, least: np.ndarray | None) -> None:
        self.lo, self.width, self.levels, self.pos, self.loc = lo, width, levels, pos, loc
        self.least = least
        self._max: dict[int, np.ndarray] = {}

    def max_of(self, d: int) -> np.ndarray:
        """Window maxima of CU use over the windows of length ``d``, by start: (R, w - d + 1)."""
        got = self._max.get(d)
        if got is None:
            got = self._max[d] = _length_max(self.levels, d)
        return got


class _Packer:
    """RDDA's state: CU use per node and slot, node peaks, wavelength loads, deployments."""

    def __init__(self, instance: Instance, scheme: str) -> None:
        inst = self.inst = instance
        self.scheme = scheme
        T = inst.slots
        self.caps = np.array([nd.cus for nd in inst.nodes], dtype=np.int64)
        self.k_top = int(self.caps.max())
        self.used = np.zeros((len(inst.nodes), T), dtype=np.int64)
        self.peak = np.zeros(len(inst.nodes), dtype=np.int64)
        w_max = self.w_max = max(lk.wavelengths for lk in inst.links)
        self.exists = np.arange(w_max)[None, :] < np.array(
            [lk.wavelengths for lk in inst.links])[:, None]
        self.load = np.zeros((len(inst.links), w_max, T), dtype=np.int64)
        self.w_act = np.zeros((len(inst.links), w_max), dtype=bool)
        self.order = sorted(range(len(inst.requests)),
                            key=lambda j: (inst.requests[j].arrival, inst.requests[j].deadline,
                                           j))
        self.plans: list[tuple[list[int], list[int], int, int] | None] = \
            [None] * len(inst.requests)
        self.chosen: dict[int, tuple[tuple[int, ...], int]] = {}
        self.placed: dict[int, tuple] = {}
        #: per request and node count N, its usable window lengths and their fewest CUs
        self._lengths: dict[int, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        #: peaks a node keeps however little it uses (rdda-fill's targets); zero in RDDA
        self.floor = np.zeros(len(inst.nodes), dtype=np.int64)
        #: MinCU key: None (new CUs, N, N k, end); "early" (new CUs, end, N k, N); "late"
        #: (new CUs, -start, N k, N); "valley" (new CUs, sum of window maxima, N k, N, end)
        self.prefer: str | None = None

    def place(self, j: int) -> tuple | None:
        """RDDA's best placement of request j (the scheme's key), None if none fits.

        Node counts N run in increasing order and, for each, the rings in the instance's order:
        every key holds N, so placements with different N never tie and the first of equal
        keys is the one the ring-by-ring loop of Algorithm 1 finds first. With RDDA's MinCU
        key, N is the key's second entry, so once a placement activating no CU is found no
        larger N can beat it and the search stops.
        """
        inst, k_top = self.inst, self.k_top
        r = inst.requests[j]
        rings = inst.candidate_rings(j)
        if not rings:
            return None
        lo, hi = r.arrival - 1, r.deadline - 1
        width = hi - lo + 1
        lens = self._lengths.get(j)
        if lens is None:  # per N: the usable window lengths and their fewest CUs
            lens = self._lengths[j] = {}
            for nn in r.node_counts:
                table = fewest_cus_table(inst, j, nn, width, k_top)  # per window length d
                # only windows exactly as long as the fewest CUs need (never hold idle slots)
                exact = duration(inst, j, nn, np.minimum(table, k_top)) == np.arange(width + 1)
                d = np.flatnonzero(exact & (table <= k_top))
                lens[nn] = (d, table[d])
        d_min = min((int(d[0]) for d, _ in lens.values() if d.size), default=0)
        if not d_min:
            return None
        tables = self._ring_tables(rings, lo, hi, d_min)
        if not tables:
            return None
        local = sorted({v for k in tables for v in inst.rings[k].nodes})
        levels = _sparse_levels(self.used[local, lo:hi + 1])
        win = _Windows(lo, width, levels, {v: i for i, v in enumerate(local)}, np.array(local),
                       _min_window_max(levels) if self.scheme == "MinCU" else None)
        best_key: tuple | None = None
        best: tuple | None = None
        for nn in sorted(r.node_counts):
            if (best_key is not None and best_key[0] == 0 and self.scheme == "MinCU"
                    and self.prefer is None):
                break  # (0, N', ...) with N' < nn beats every key (new, nn, ...)
            d, kk = lens[nn]
            ring_list = [k for k in tables if inst.rings[k].size >= nn]
            if d.size and ring_list:
                best_key, best = self._best_of_count(r.source, nn, d, kk, ring_list, tables,
                                                     win, best_key, best)
        return best

    def _ring_tables(self, rings: list[int], lo: int, hi: int, d_min: int) -> dict[int, tuple]:
        """Per candidate ring with a wavelength free over some window of a usable length (at
        least ``d_min`` slots): (first blocked slot per wavelength and slot (W, w), the latest
        of them per slot (w,), the longest free run of one wavelength (slots), the wavelengths
        each would newly activate on the ring (MinW only))."""
        inst = self.inst
        width = hi - lo + 1
        slots = np.arange(width)
        out = {}
        for k in rings:
            lk = list(inst.rings[k].links)
            # a wavelength is blocked at a slot on the ring when some link of it is full then
            # or lacks the wavelength
            rb = ((self.load[lk, :, lo:hi + 1] >= inst.rho).any(axis=0)
                  | ~self.exists[lk].all(axis=0)[:, None])  # (W, width)
            # first blocked slot at or after each slot: wavelength b is free over [s, e]
            # exactly when it lies after e
            nxt = np.minimum.accumulate(np.where(rb, slots, width)[:, ::-1], axis=1)[:, ::-1]
            top = nxt.max(axis=0)
            run = int((top - slots).max())
            if run < d_min:
                continue
            new_w = (~self.w_act[lk]).sum(axis=0) if self.scheme == "MinW" else None
            out[k] = (nxt, top, run, new_w)
        return out

    def _best_of_count(self, source: int, nn: int, d: np.ndarray, kk: np.ndarray,
                       ring_list: list[int], tables: dict[int, tuple], win: _Windows,
                       best_key: tuple | None, best: tuple | None) -> tuple:
        """The best placement on ``nn`` nodes over the rings, against the best so far.

        ``d`` are the usable window lengths of N nodes and ``kk`` their fewest CUs. With a
        MinCU key (new CUs first), each length gets a lower bound on the CUs any of its
        placements activates (:meth:`_length_bounds`); lengths are scored in batches, smallest
        bound first, and a length whose bound cannot beat the best found so far is never
        scored. The other schemes score every length in one batch.
        """
        rows: dict[tuple[int, ...], int] = {}
        ring_rows = []
        for k in ring_list:
            subs = _subsets(self.inst.rings[k].nodes, source, nn)
            ring_rows.append([rows.setdefault(tuple(sorted(s)), len(rows)) for s in subs])
        sel = np.zeros((len(rows), len(win.pos)))
        for nodes, i in rows.items():
            sel[i, [win.pos[v] for v in nodes]] = 1.0
        sets = (ring_list, ring_rows, sel)
        if win.least is None:
            return self._score(source, nn, d, kk, sets, tables, win, best_key, best)
        bound = self._length_bounds(d, kk, sets, tables, win)
        order = np.lexsort((kk, bound))
        order = order[bound[order] < _NO_ROOM]  # lengths no node set can hold are dropped
        bound = np.minimum(bound, (1 << 20) - 1)  # new CUs as the packed keys cap them
        counts = win.width - d + 1  # windows per length
        while order.size:
            if best_key is not None:
                b = bound[order]
                if self.prefer is None:  # (new, N, N k, ...) must beat the best
                    keep = (b < best_key[0]) | ((b == best_key[0]) & (nn == best_key[1])
                                                & (nn * kk[order] < best_key[2]))
                else:  # (new, ...): a length with a larger bound cannot win
                    keep = b <= best_key[0]
                order = order[keep]
                if not order.size:
                    break
            take = max(1, int(np.searchsorted(np.cumsum(counts[order]), BATCH_WINDOWS,
                                              side="right")))
            batch, order = order[:take], order[take:]
            best_key, best = self._score(source, nn, d[batch], kk[batch], sets, tables, win,
                                         best_key, best)
        return best_key, best

    def _length_bounds(self, d: np.ndarray, kk: np.ndarray, sets: tuple,
                       tables: dict[int, tuple], win: _Windows) -> np.ndarray:
        """Per window length, at most the CUs any placement of that length newly activates
        (``>= _NO_ROOM``: none fits): a node set's new CUs over a window are its nodes' sum,
        each node's at least its value at the window of that length with the least maximum
        use; a ring counts only for lengths up to its longest free wavelength run."""
        ring_list, ring_rows, sel = sets
        least = win.least[:, d]  # (R, L)
        need = least + kk[None, :]
        node = np.where(need <= self.caps[win.loc][:, None],
                        np.maximum(need - self.peak[win.loc][:, None], 0), _NO_ROOM)
        tot = (sel @ node.astype(np.float64)).astype(np.int64)  # (U, L)
        bound = np.full(d.size, 1 << 62, dtype=np.int64)
        for k, rr in zip(ring_list, ring_rows, strict=True):
            low = np.where(d <= tables[k][2], tot[rr].min(axis=0), 1 << 62)
            bound = np.minimum(bound, low)
        return bound

    def _score(self, source: int, nn: int, d: np.ndarray, kk: np.ndarray, sets: tuple,
               tables: dict[int, tuple], win: _Windows, best_key: tuple | None,
               best: tuple | None) -> tuple:
        """Score every window of the lengths ``d`` (fewest CUs ``kk``) on ``nn`` nodes of every
        ring; the best placement against the best so far.

        The node part of a placement (CUs newly activated, or a sentinel when a node lacks the
        CUs) is a sum over the subset's nodes: one 0/1 matrix over the distinct node sets of
        every ring times the per-node values (exact integers in float64) gives it for all
        subsets and windows at once. Windows run by length, then start: two windows of a ring
        with equal packed keys have the same length, so the first is the earliest, as in the
        (start, end) order of Algorithm 1's scan.
        """
        inst, scheme, k_top, w_max = self.inst, self.scheme, self.k_top, self.w_max
        ring_list, ring_rows, sel = sets
        lo, loc = win.lo, win.loc
        counts = win.width - d + 1
        first = np.cumsum(counts) - counts
        s_idx = np.arange(int(counts.sum())) - np.repeat(first, counts)
        e_idx = s_idx + np.repeat(d - 1, counts)
        kk = np.repeat(kk, counts)
        mu = np.concatenate([win.max_of(int(x)) for x in d], axis=1)  # (R, P) peak use
        free = self.caps[loc][:, None] - mu
        room = mu - self.peak[loc][:, None]  # <= 0: activated CUs left unused in the window
        node = np.where(free >= kk[None, :], np.maximum(room + kk[None, :], 0), _NO_ROOM)
        tot = (sel @ node.astype(np.float64)).astype(np.int64)  # (U, P): new CUs or >= _NO_ROOM
        end = lo + e_idx  # (P,) < 2^14
        nk = nn * np.minimum(kk, k_top + 1)  # (P,) < 2^20
        top = np.iinfo(np.int64).max
        packed_all = None
        if scheme == "MinCU":
            new = np.minimum(tot, (1 << 20) - 1)
            if self.prefer == "early":  # earliest end before fewest CUs
                packed_all = (new << 34) | (end << 20) | nk
            elif self.prefer == "late":  # latest start before fewest CUs
                packed_all = (new << 34) | (((1 << 14) - 1 - lo - s_idx) << 20) | nk
            elif self.prefer == "valley":
                # the emptiest window: the sum of the nodes' window maxima
                val = (sel @ mu.astype(np.float64)).astype(np.int64)
                packed_all = (new << 42) | (np.minimum(val, (1 << 21) - 1) << 21) | nk
            else:
                packed_all = (new << 34) | (nk << 14) | end
        elif scheme != "MinW":  # MinT, MaxR: earliest end, then fewest CUs
            packed_all = np.broadcast_to((end << 20) | nk, tot.shape)
        for k, rr in zip(ring_list, ring_rows, strict=True):
            ring = inst.rings[k]
            nxt, latest, _, new_w = tables[k]
            ok = latest[s_idx] > e_idx
            if not ok.any():
                continue
            if scheme == "MinW":
                wl_ok = nxt[:, s_idx] > e_idx[None, :]  # (W, P)
                cost = np.where(wl_ok, (new_w * w_max + np.arange(w_max))[:, None], 1 << 40)
                wl_cost = cost.min(axis=0)  # new * w_max + b
                packed = np.broadcast_to(
                    (np.minimum(wl_cost // w_max, (1 << 20) - 1) << 34) | (end << 20) | nk,
                    (len(rr), s_idx.size))
            else:
                packed = packed_all[rr]
            packed = np.where((tot[rr] < _NO_ROOM) & ok[None, :], packed, top)
            flat = int(np.argmin(packed))
            cell = int(packed.flat[flat])
            if cell == top:
                continue  # no subset of this ring holds the request in any window
            sub_i, p = divmod(flat, s_idx.size)
            e_p, nk_p = int(end[p]), int(nn * kk[p])
            if scheme == "MinCU":
                if self.prefer == "early":
                    key = (cell >> 34, e_p, nk_p, nn)
                elif self.prefer == "late":
                    key = (cell >> 34, -int(lo + s_idx[p]), nk_p, nn)
                elif self.prefer == "valley":
                    key = (cell >> 21, nk_p, nn, e_p)
                else:
                    key = (cell >> 34, nn, nk_p, e_p)
            elif scheme == "MinW":
                key = (int(wl_cost[p] // w_max), ring.size, nn, e_p, nk_p)
            elif scheme == "MinT":
                key = (e_p, nk_p, nn)
            else:
                key = (-ring.reliability, nn, e_p, nk_p)
            if best_key is None or key < best_key:
                best_key = key
                # MinW: the wavelength activating the fewest; otherwise first fit
                b = int(wl_cost[p] % w_max) if scheme == "MinW" else int(
                    np.argmax(nxt[:, s_idx[p]] > e_idx[p]))
                subs = _subsets(ring.nodes, source, nn)
                best = (k, subs[sub_i], int(kk[p]), lo + int(s_idx[p]), e_p, b)
        return best_key, best

    def new_cus(self, best: tuple) -> int:
        """CUs the placement newly activates (the rise of its nodes' peaks)."""
        inst, used, peak = self.inst, self.used, self.peak
        k, sub, kk_, s, e, _ = best
        nodes = [v for v in inst.rings[k].nodes if v in sub]
        return int(np.maximum(used[nodes, s:e + 1].max(axis=1) + kk_ - peak[nodes], 0).sum())

    def commit(self, j: int, best: tuple) -> None:
        """Deploy request j at placement ``best`` (a tuple from :meth:`place`)."""
        inst, used, peak, load, w_act = self.inst, self.used, self.peak, self.load, self.w_act
        plans, chosen, placed = self.plans, self.chosen, self.placed
        k, sub, kk_, s, e, b = best
        ring = inst.rings[k]
        nodes = [v for v in ring.nodes if v in sub]
        used[nodes, s:e + 1] += kk_
        peak[nodes] = np.maximum(peak[nodes], used[nodes, s:e + 1].max(axis=1))
        load[list(ring.links), b, s:e + 1] += 1
        w_act[list(ring.links), b] = True
        plans[j] = (nodes, [kk_] * len(nodes), s + 1, e + 1)
        chosen[j] = (ring.nodes, b)
        placed[j] = best

    def release(self, j: int) -> int:
        """Undo request j's deployment; returns the CUs its nodes' peaks drop by."""
        inst, used, peak, load, w_act = self.inst, self.used, self.peak, self.load, self.w_act
        plans, chosen, placed = self.plans, self.chosen, self.placed
        k, sub, kk_, s, e, b = placed.pop(j)
        ring = inst.rings[k]
        nodes = [v for v in ring.nodes if v in sub]
        before = int(peak[nodes].sum())
        used[nodes, s:e + 1] -= kk_
        peak[nodes] = np.maximum(used[nodes].max(axis=1), self.floor[nodes])
        load[list(ring.links), b, s:e + 1] -= 1
        w_act[list(ring.links), b] = load[list(ring.links), b].any(axis=1)
        plans[j] = None
        del chosen[j]
        return before - int(peak[nodes].sum())

    def solution(self) -> Solution:
        """The deployments as a Solution, CU ids per node in order of start."""
        inst, plans, chosen = self.inst, self.plans, self.chosen
        ids = assign_cu_ids(inst, plans)
        out: list[Assignment | None] = []
        for j, plan in enumerate(plans):
            if plan is None:
                out.append(None)
                continue
            ring_nodes, b = chosen[j]
            out.append(Assignment(ring=list(ring_nodes), nodes=plan[0], cus=ids[j],
                                  wavelength=b, start=plan[2], end=plan[3]))
        return Solution(requests=out)
@cache
def _subsets(ring: tuple[int, ...], source: int, size: int) -> list[tuple[int, ...]]:
    """Node sets of ``size`` on ``ring`` containing ``source`` (Algorithm 1, line 10)."""
    others = [v for v in ring if v != source]
    return [(source, *c) for c in itertools.combinations(others, size - 1)]
