"""RDDA, the RAR-based DMT deployment algorithm (paper 003, section 5, Algorithm 1).

Requests are served one by one, earlier arrival first, then earlier deadline (section 5). For a
request, the rings through its source whose reliability (eq. 3) reaches r_j are the candidate
rings (lines 2-8); every set of computing nodes on a candidate ring that contains the source and
has an allowed size N_j is a combination (lines 9-11; the node count is flexible). Each
combination is scored by the scheme (line 12) and the best one that can hold the request is
deployed (lines 13-21); with none the request is blocked (lines 22-24).

Placement inside a combination (the paper leaves it open; our reading)
-------------------------------------------------------------------
A placement is a CU count k (the same on every computing node, as section 6 states), a start and
the window of length :func:`~dmlopt.models.rar.duration` (eqs. 1, 2, 5), all nodes holding k
free CUs over the whole window, and one wavelength with room (load < rho) on every ring link
over that window. Only k = the fewest CUs for each window length is tried (more CUs in the same
window never help). Scores, compared lexicographically, smaller first:

* MinCU: (CUs newly activated, N, N k, end): "the number of CUs to be activated", ties by
  the number of nodes (section 5).
* MinW: (wavelengths newly activated on the ring, ring links, N, end, N k): "the number of
  wavelengths required to be activated", ties by the number of links; the wavelength reusing the
  most activated ones (lowest index on ties).
* MinT: (end, N k, N): the combination providing the CUs fastest.
* MaxR: (-ring reliability, N, end, N k).

Blocking by choice (option ``block="break-even"``, MinCU objective only)
-----------------------------------------------------------------------
Eq. (4) charges 1 / |R| per blocked request and alpha per activated CU, so deploying a request
pays only if it activates at most 1 / (alpha |R|) CUs (``sum |C_n| / |R|`` with the paper's
alpha). A node's activated CUs are at least its mean use over the |T| slots, so a request whose
fewest CU-slots (:func:`fewest_cu_slots`) exceed |T| / (alpha |R|) costs more, spread over the
horizon, than blocking it. With the option RDDA first serves the other requests (in its order,
exactly as without the option) and then tries the large ones in the same order, deploying one
only where its best placement raises the nodes' peaks by at most 1 / (alpha |R|) CUs: each
such deployment lowers eq. (4) or leaves it equal. Then, for at most ``PRUNE_ROUNDS`` rounds
and while something changes, every deployed request, largest fewest CU-slots first, is taken
out and put back at RDDA's best placement for it if that raises the peaks less than where it
was, or blocked if taking it out lowers the peaks by more than 1 / (alpha |R|) CUs and no
placement costs less than that; then every blocked request, in RDDA's order, is placed again if
it now activates fewer than 1 / (alpha |R|) CUs. Each change strictly lowers eq. (4),
so the result is never worse than RDDA run on the requests within the break-even alone (tested),
although it can be worse than RDDA without the option. The default ``"never"`` is Algorithm 1.

Several starts and moves (``rdda-ls``, ours; MinCU objective)
------------------------------------------------------------
:func:`rdda_ls` runs ``block="break-even"`` from several starts and keeps the lowest eq. (4):
the request order (:data:`ORDERS`: RDDA's arrival order, largest fewest CU-slots first,
shortest window first, largest fewest CU-slots per window slot first) times the placement key
(:data:`KEYS`: RDDA's MinCU key, or "valley": fewest new CUs, then the window whose CU use,
summed over the chosen nodes' window maxima, is lowest, then N k, N and end). The start in
arrival order with RDDA's key is ``rdda(block="break-even")`` itself, so the result is never
worse than it. On the best start, rounds of moves follow while they lower eq. (4): each deployed
request in arrival order is taken out and put back where it ends earliest under the nodes'
current peaks (no peak rises), then the pruning of "Blocking by choice", then the same in
reverse order where it starts latest, then the pruning again. Why it helps: every request's
fewest CU-slots hardly depend on its CU count (the duration of eqs. 1, 2, 5 is about a / k +
b), so the schedule is a packing of malleable rectangles, and RDDA's arrival order with its
smallest-k key leaves the first and last slots of every node half empty while the middle slots
sit at the peak; larger requests first and emptier windows first fill the ends better.

MinW and MaxR place a request at its earliest possible end, like MinT, since the paper gives
them no time preference; every scheme except MinW takes the first-fit wavelength (section 6).

Activated CUs are counted, as in the evaluator, by the ids the final schedule uses. RDDA tracks
CU counts per node and slot and, at the end, gives each node's requests CU ids in order of
start (:func:`~dmlopt.models.rar.assign_cu_ids`), which needs exactly the node's peak usage; so
"newly activated" CUs are the increase of a node's peak usage. The inner loop works on numpy
arrays over (start, end) windows, only those whose length is the exact duration for some
allowed node count (the others cannot be chosen); window maxima of CU usage come from a sparse
table (O(w log w) per node, two slices per window length). Node counts run in increasing order
(every key holds N, so the order changes no choice); for each, a node set's new CUs over a
batch of windows is one row of a matrix product (the distinct node sets of all candidate rings
times the per-node values). With a MinCU key (new CUs first) each window length first gets a
lower bound on the CUs any of its placements activates: per node, its value at the window of
that length with the least maximum use (all lengths at once from the runs in which each slot
holds the maximum, O(w log w) per node), summed over each node set, over the rings with a free
wavelength run that long. Lengths are scored in batches of about :data:`BATCH_WINDOWS`
windows, smallest bound first, and a length whose bound cannot beat the best found so far is
never scored: with RDDA's key (new CUs, N, N k, end), when (bound, N, N k) is not below the
best's (new CUs, N, N k); with the other MinCU keys, when the bound exceeds the best's new
CUs. Two windows of a ring with equal keys have the same length, so they
sit in the same batch and the earlier start wins, as in Algorithm 1's scan: the deployments are
those of scoring every window. A wavelength is free over a window when its first blocked slot
lies after the window's end.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import cache
from typing import Literal

import numpy as np
import pydantic

from dmlopt.contract import ByInstance, Heuristic, Options, Size
from dmlopt.models.rar import (
    Assignment,
    Instance,
    Solution,
    assign_cu_ids,
    duration,
    fewest_cus_table,
    modes,
)

SCHEMES = ("MinCU", "MinW", "MinT", "MaxR")
BLOCKS = ("never", "break-even")
#: rounds of removals, moves and re-insertions of ``block="break-even"`` (each lowers eq. 4)
PRUNE_ROUNDS = 10
#: plain RDDA passes a ``block="break-even"`` run costs: its rounds of pruning end once one
#: changes nothing (measured on ``cpn38`` with 125-500 requests: 4.7-5.1 passes)
BREAK_EVEN_PASSES = 5.5
#: numpy element operations per slot of a request's window and allowed node count to find
#: its usable window lengths (the fewest-CU table corrected three times by the duration)
LENGTH_OPS = 100
#: numpy calls to find one node count's usable window lengths (the fewest-CU table and the
#: seven durations that correct and check it)
LENGTH_CALLS = 70
#: interpreter operations per numpy call (the Python around the arrays: 1-3 microseconds)
CALL_OPS = 2e3
#: the work estimate's margin over the operations counted, so that a machine slower than the
#: one it was measured on still finds the estimate above what it spends (ratios 1.8-3.2 over
#: 125-1000 requests on cpn38, one thread, load average 5 on 2 cores)
WORK_MARGIN = 1.2
#: windows one batch of window lengths holds at most (unless one length alone has more):
#: :meth:`_Packer.place` scores the lengths of smallest lower bound first and, after each
#: batch, drops the lengths that can no longer beat the best found (module docstring)
BATCH_WINDOWS = 1024
#: bytes of the Solution per request (its assignments and CU id lists; measured 1.6-2.5 kB
#: on ``cpn38`` with 125 and 500 requests)
SOLUTION_BYTES = 3072
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


def rdda(instance: Instance, *, seed: int = 0, scheme: str | None = None,
         block: str = "never") -> Solution:
    """Algorithm 1 with the scheme's ordering (the instance's scheme unless ``scheme`` is given).

    Parameters
    ----------
    instance : the RAR instance.
    seed : unused (RDDA is deterministic); kept for the heuristic contract.
    scheme : "MinCU", "MinW", "MinT" or "MaxR" to override the instance's scheme ordering.
    block : "never" (Algorithm 1: a request is blocked only when nothing can hold it) or
        "break-even" (instances whose objective is MinCU only): first RDDA on the requests
        whose fewest CU-slots stay within the break-even ``|T| / (alpha |R|)``, then each other
        request, in RDDA's order, deployed only if its placement activates at most
        ``1 / (alpha |R|)`` new CUs, then rounds of removals, moves and re-insertions that each
        lower eq. (4) (module docstring, "Blocking by choice").

    Returns
    -------
    Solution
        Every request deployed or blocked; CU ids assigned per node in order of start.

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003): Algorithm 1 and eq. (4).
    """
    from dmlopt.errors import InstanceError

    scheme = scheme or instance.scheme
    if scheme not in SCHEMES:
        raise InstanceError("scheme", scheme, f"is not one of {', '.join(SCHEMES)}")
    if block not in BLOCKS:
        raise InstanceError("block", block, f"is not one of {', '.join(BLOCKS)}")
    if block == "break-even" and instance.scheme != "MinCU":
        raise InstanceError("block", block, "needs an instance whose scheme (objective) is "
                            "MinCU")
    pk = _Packer(instance, scheme)
    if block == "never":
        for j in pk.order:
            best = pk.place(j)
            if best is not None:
                pk.commit(j, best)
    else:
        _break_even(pk)
    return pk.solution()


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


def _break_even(pk: _Packer) -> None:
    """``block="break-even"`` (module docstring, "Blocking by choice")."""
    inst, order = pk.inst, pk.order
    per_request = 1.0 / (inst.alpha_of() * len(inst.requests))  # blocking cost, in CUs
    fewest = [fewest_cu_slots(inst, j) for j in range(len(inst.requests))]
    big = [j for j in order if fewest[j] > inst.slots * per_request]
    for j in order:
        if j not in big and (best := pk.place(j)) is not None:
            pk.commit(j, best)
    for j in big:
        best = pk.place(j)
        if best is not None and pk.new_cus(best) <= per_request:
            pk.commit(j, best)
    _prune(pk, per_request, fewest)


def _prune(pk: _Packer, per_request: float, fewest: list[int]) -> None:
    """Rounds of moves, removals and re-insertions, each lowering eq. (4)."""
    placed = pk.placed
    for _ in range(PRUNE_ROUNDS):
        # largest first: take each request out and put it back where it raises the peaks
        # least, or block it if that saves more than blocking costs; then deploy blocked
        # ones that now activate fewer new CUs than blocking costs
        changed = False
        for j in sorted(placed, key=lambda j: -fewest[j]):
            saved_best = placed[j]
            drop = pk.release(j)
            moved = pk.place(j)
            cost = pk.new_cus(moved) if moved is not None else drop + 1
            if min(cost, per_request) >= drop:
                pk.commit(j, saved_best)
            elif cost < per_request:
                pk.commit(j, moved)  # a placement raising the peaks by less
                changed = True
            else:
                changed = True  # blocked: removing it saves more than blocking costs
        for j in pk.order:
            if j not in placed:
                best = pk.place(j)
                if best is not None and pk.new_cus(best) < per_request:
                    pk.commit(j, best)
                    changed = True
        if not changed:
            break


def _shift(pk: _Packer, prefer: str, order: list[int]) -> None:
    """Take each deployed request (in ``order``) out and put it back at RDDA's best placement
    under the current peaks with the key ``prefer`` ("early" or "late"): no peak rises."""
    caps = pk.caps
    pk.prefer = prefer
    try:
        for j in order:
            if j not in pk.placed:
                continue
            limit = np.minimum(caps, pk.peak)
            saved = pk.placed[j]
            pk.release(j)
            pk.caps = limit
            best = pk.place(j)
            pk.caps = caps
            pk.commit(j, best if best is not None else saved)
    finally:
        pk.caps = caps
        pk.prefer = None


#: request orders of :func:`rdda_ls` (module docstring, "Several starts and moves")
ORDERS = ("arrival", "fewest", "window", "density")
#: placement keys of :func:`rdda_ls`: RDDA's MinCU key, or new CUs then the emptiest window
KEYS = ("rdda", "valley")


def _request_order(inst: Instance, name: str, fewest: list[int]) -> list[int]:
    """Requests in the order ``name`` (:data:`ORDERS`); ties by index."""
    reqs = inst.requests
    if name == "arrival":  # RDDA's (section 5)
        return sorted(range(len(reqs)), key=lambda j: (reqs[j].arrival, reqs[j].deadline, j))
    if name == "fewest":  # largest fewest CU-slots first
        return sorted(range(len(reqs)), key=lambda j: (-fewest[j], j))
    if name == "window":  # shortest window [t_a, t_d] first
        return sorted(range(len(reqs)), key=lambda j: (reqs[j].deadline - reqs[j].arrival, j))
    # density: largest fewest CU-slots per slot of the window first
    return sorted(range(len(reqs)),
                  key=lambda j: (-fewest[j] / (reqs[j].deadline - reqs[j].arrival + 1), j))


def rdda_ls(instance: Instance, *, seed: int = 0, orders: Sequence[str] = ORDERS,
            keys: Sequence[str] = KEYS, passes: int = 2) -> Solution:
    """RDDA with blocking by choice from several starts, then moves (ours; MinCU objective).

    Parameters
    ----------
    instance : Instance
        A RAR instance whose scheme (objective) is MinCU.
    seed : int
        Unused (deterministic); kept for the heuristic contract.
    orders : sequence of str
        Request orders (:data:`ORDERS`) of the starts; default all four.
    keys : sequence of str
        Placement keys (:data:`KEYS`) of the starts; default both.
    passes : int
        At most this many rounds of moves on the best start (0: none); a round stops the
        search when it lowers nothing.

    Returns
    -------
    Solution
        The best start after the moves: eq. (4) at most that of ``rdda(block="break-even")``
        when ``("arrival", "rdda")`` is among the starts (it is that run).

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003): Algorithm 1 and eq. (4); ours: the starts,
    the "valley" key and the moves (module docstring, "Several starts and moves").
    """
    from dmlopt.errors import InstanceError

    if instance.scheme != "MinCU":
        raise InstanceError("scheme", instance.scheme, "rdda-ls needs an instance whose scheme "
                            "(objective) is MinCU")
    for name, value, allowed in (("orders", orders, ORDERS), ("keys", keys, KEYS)):
        if not value or any(v not in allowed for v in value):
            raise InstanceError(name, list(value), f"must be a non-empty list of "
                                f"{', '.join(allowed)}")
    inst = instance
    nr = len(inst.requests)
    per_request = 1.0 / (inst.alpha_of() * nr)
    fewest = [fewest_cu_slots(inst, j) for j in range(nr)]

    def cost(pk: _Packer) -> float:  # eq. (4) divided by alpha, in CUs
        return float(pk.peak.sum()) + per_request * (nr - len(pk.placed))

    best: _Packer | None = None
    for name in orders:
        for key in keys:
            pk = _Packer(inst, "MinCU")
            pk.order = _request_order(inst, name, fewest)
            pk.prefer = None if key == "rdda" else key
            _break_even(pk)
            pk.prefer = None
            if best is None or cost(pk) < cost(best) - 1e-9:
                best = pk
    assert best is not None
    arrival = _request_order(inst, "arrival", fewest)
    for _ in range(passes):
        before = cost(best)
        for prefer, seq in (("early", arrival), ("late", arrival[::-1])):
            _shift(best, prefer, seq)
            _prune(best, per_request, fewest)
        if cost(best) >= before - 1e-9:
            break
    return best.solution()


@cache
def _subsets(ring: tuple[int, ...], source: int, size: int) -> list[tuple[int, ...]]:
    """Node sets of ``size`` on ``ring`` containing ``source`` (Algorithm 1, line 10)."""
    others = [v for v in ring if v != source]
    return [(source, *c) for c in itertools.combinations(others, size - 1)]


# --------------------------------------------------------------------------------------------
# options and size estimate (dmlopt.contract)


class RddaOptions(Options):
    """Options of RDDA (Algorithm 1)."""

    scheme: Literal["MinCU", "MinW", "MinT", "MaxR"] | None = pydantic.Field(
        default=None, description="ordering scheme of section 4.C (MinCU, MinW, MinT, MaxR); "
        "default: the instance's")
    block: Literal["never", "break-even"] = pydantic.Field(
        default="never", description="never: block a request only when nothing can hold it "
        "(Algorithm 1); break-even (MinCU objective): block requests whose CU-slots cost more "
        "than blocking them (module docstring)")


def _usable_windows(inst: Instance, j: int, w: int, k_top: int) -> dict[int, tuple[int, int]]:
    """Per allowed node count N of request ``j`` (window width ``w``): the window lengths that
    are the exact duration of N nodes and the windows of those lengths (w - d + 1 per length
    d), the windows :func:`rdda` can score."""
    out = {}
    for nn in inst.requests[j].node_counts:
        table = fewest_cus_table(inst, j, nn, w, k_top)
        exact = duration(inst, j, nn, np.minimum(table, k_top)) == np.arange(w + 1)
        d = np.flatnonzero(exact & (table <= k_top))
        out[nn] = (int(d.size), int((w - d + 1).sum()))
    return out


@cache
def _node_set_count(rings: tuple[tuple[int, ...], ...], source: int, size: int) -> int:
    """Distinct node sets of ``size`` containing ``source`` over the ``rings`` (node tuples)."""
    return len({tuple(sorted(s)) for ring in rings for s in _subsets(ring, source, size)})


def _node_sets(rings: tuple[int, ...], inst: Instance, source: int, size: int) -> int:
    """Distinct node sets :meth:`_Packer._best_of_count` builds for ring indexes ``rings``."""
    return _node_set_count(tuple(inst.rings[k].nodes for k in rings), source, size)


def rdda_estimate(instance: Instance, options: RddaOptions) -> Size:
    """What :func:`rdda` allocates and computes, from the instance fields alone.

    Parameters
    ----------
    instance : Instance
        The RAR instance.
    options : RddaOptions
        The options of the run (``scheme`` and ``block`` change the work).

    Returns
    -------
    Size
        Bytes allocated and operations, the figures ``--size-limit`` refuses by.

    Notes
    -----
    Per request with window width w, over its candidate rings (eq. 13), R = the nodes of those
    rings and, per allowed node count N, U = their distinct node subsets of Algorithm 1, line
    10: the usable lengths (:data:`LENGTH_OPS` per slot and N, :data:`LENGTH_CALLS` calls),
    the wavelength tables (ring links x W x w), the sparse table and the least window maxima
    (R x w log w), per N the length bounds (U x R x lengths) and the windows scored, each
    costing R (window maxima, node values), U x R (the node-set sums) and U (the ring keys)
    operations. With a MinCU key the lengths that cannot win are skipped: one batch of at most
    :data:`BATCH_WINDOWS` plus one length's windows per N is charged (measured on ``cpn38``,
    seed 0: 0.55 and 0.85 batches per N searched at 500 and 1,000 requests); the other keys
    score every usable window.
    Each numpy call costs :data:`CALL_OPS`. All of it times :data:`WORK_MARGIN`;
    ``block="break-even"``: :data:`BREAK_EVEN_PASSES` passes. Memory: the largest request's
    arrays over its scored windows and tables, the usable lengths kept per request, the
    (links x W x slots) wavelength loads and :data:`SOLUTION_BYTES` per request.

    References
    ----------
    .. [1] RAR paper, section 5 (Algorithm 1, RDDA).
    """
    inst = instance
    n_nodes, T = len(inst.nodes), inst.slots
    w_max = max(lk.wavelengths for lk in inst.links)
    k_top = max(nd.cus for nd in inst.nodes)
    pruned = (options.scheme or inst.scheme) == "MinCU"
    work = 0.0
    peak = 0.0
    kept = 0.0
    for j, r in enumerate(inst.requests):
        w = r.deadline - r.arrival + 1
        rings = inst.candidate_rings(j)
        if not rings:
            continue
        local = len({v for k in rings for v in inst.rings[k].nodes})
        links = sum(len(inst.rings[k].links) for k in rings)
        logw = math.log2(w) + 1
        calls = 20 + 12 * len(rings) + 14 * logw
        ops = (links * w_max * w * 3 + len(rings) * w_max * w * 10   # wavelength tables
               + local * w * logw * 30)                               # least window maxima
        big = 0.0
        for nn, (lengths, windows) in _usable_windows(inst, j, w, k_top).items():
            kept += 16.0 * lengths + 250.0  # the usable lengths and CUs kept per request
            subs = _node_sets(tuple(rings), inst, r.source, nn)
            scored = min(windows, BATCH_WINDOWS + w) if pruned else windows
            calls += LENGTH_CALLS + 25 + 12 * len(rings) + subs / 4
            ops += (LENGTH_OPS * w + subs * local * lengths * 2
                    + scored * (local * 12 + subs * local * 2 + subs * 8))
            big = max(big, scored * (local * 4 + subs * 4) + subs * lengths * 2)
        work += ops + CALL_OPS * calls
        peak = max(peak, 8.0 * (big + local * w * (logw + 8) + len(rings) * w_max * w * 3))
    work *= WORK_MARGIN
    if options.block == "break-even":
        work *= BREAK_EVEN_PASSES
    memory = peak + kept + 8.0 * (2 * len(inst.links) * w_max * T + 2 * n_nodes * T) \
        + SOLUTION_BYTES * len(inst.requests)
    return Size(memory, work)


class RddaLsOptions(Options):
    """Options of :func:`rdda_ls`."""

    orders: tuple[Literal["arrival", "fewest", "window", "density"], ...] = pydantic.Field(
        default=ORDERS, min_length=1, max_length=len(ORDERS),
        description="request orders of the starts: arrival (RDDA's), fewest (largest fewest "
        "CU-slots first), window (shortest window first), density (largest fewest CU-slots "
        "per window slot first)")
    keys: tuple[Literal["rdda", "valley"], ...] = pydantic.Field(
        default=KEYS, min_length=1, max_length=len(KEYS),
        description="placement keys of the starts: rdda (RDDA's MinCU key), valley (new CUs, "
        "then the emptiest window)")
    passes: int = pydantic.Field(default=2, ge=0, le=20,
                                 description="rounds of moves on the best start (0: none)")


def rdda_ls_estimate(instance: Instance, options: RddaLsOptions) -> Size:
    """What :func:`rdda_ls` allocates and computes.

    Parameters
    ----------
    instance : Instance
        The RAR instance.
    options : RddaLsOptions
        The options of the run (the starts and the rounds of moves change the work).

    Returns
    -------
    Size
        Bytes allocated and operations, the figures ``--size-limit`` refuses by.

    Notes
    -----
    One ``block="break-even"`` run per start (:func:`rdda_estimate`), plus per round of moves
    two shifts and their pruning, about four plain passes (measured on ``cpn38``: 8 starts and
    2 rounds take 42-47 plain RDDA runs). Memory: two runs' state (the starts run one after
    another; the best start's packer, with its wavelength loads, is kept beside the current).

    References
    ----------
    .. [1] RAR paper, section 5 (Algorithm 1, RDDA), run from several starts.
    """
    one = rdda_estimate(instance, RddaOptions(block="break-even"))
    base = one.work / BREAK_EVEN_PASSES  # one pass over the requests
    starts = len(options.orders) * len(options.keys)
    work = starts * one.work + options.passes * 4 * base
    return Size(2.0 * one.memory, work)


from dmlopt.heuristics.rar_lns import (  # noqa: E402 (rdda_lns calls rdda_pack)
    RddaLnsOptions,
    rdda_lns,
    rdda_lns_estimate,
)
from dmlopt.heuristics.rar_schemes import (  # noqa: E402 (uses the names above)
    RddaPackOptions,
    rdda_pack,
    rdda_pack_estimate,
)

HEURISTICS: dict[str, Heuristic] = {
    "rdda": Heuristic(rdda, RddaOptions, rdda_estimate,
                      "RDDA (Algorithm 1): ring, nodes, CUs, window and wavelength per request "
                      "in the scheme's order"),
    "rdda-ls": Heuristic(
        rdda_ls, RddaLsOptions, rdda_ls_estimate,
        "RDDA with blocking by choice (MinCU objective) from several request orders and "
        "placement keys, the best then moved earlier and later while eq. (4) drops"),
    "rdda-pack": Heuristic(
        rdda_pack, RddaPackOptions, rdda_pack_estimate,
        "RDDA from several starts (MinCU keys leave room for later requests), then insertion "
        "of blocked requests with one ejection and the scheme's moves while eq. (4) drops"),
    "rdda-lns": Heuristic(
        rdda_lns, RddaLnsOptions, rdda_lns_estimate,
        "rdda-pack, then a large neighbourhood search: a few requests at a time re-placed by "
        "an exact sub-model in HiGHS (the others fixed), kept while eq. (4) drops"),
}

#: the heuristic to use, by scheme (docs/rar.md): rdda-ls takes MinCU instances only
RECOMMENDED = ByInstance(lambda inst: "rdda-ls" if inst.scheme == "MinCU" else "rdda-pack",
                         ("rdda-ls", "rdda-pack"),
                         "rdda-ls for MinCU, rdda-pack for MinW, MinT, MaxR")
