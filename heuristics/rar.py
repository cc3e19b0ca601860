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

import math
from collections.abc import Sequence
from functools import cache
from typing import Literal

import numpy as np
import pydantic

from dmlopt.contract import ByInstance, Heuristic, Options, Size
from dmlopt.heuristics.rar_pack import (  # noqa: F401 (re-exported: tests and rar_schemes)
    _NO_ROOM,
    BATCH_WINDOWS,
    _length_max,
    _min_window_max,
    _Packer,
    _sparse_levels,
    _subsets,
    _window_max,
    _Windows,
    fewest_cu_slots,
)
from dmlopt.models.rar import (
    Instance,
    Solution,
    duration,
    fewest_cus_table,
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
#: bytes of the Solution per request (its assignments and CU id lists; measured 1.6-2.5 kB
#: on ``cpn38`` with 125 and 500 requests)
SOLUTION_BYTES = 3072


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
