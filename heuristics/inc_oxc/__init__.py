"""Heuristics for INC/OXC job scheduling (paper 002): WCG (Algorithm 1), SWG and RWP (IV-A).

All share Algorithm 1's PS placement (lines 7-24), OXC configuration (lines 25-28, BvN, see
:mod:`dmlopt.heuristics.inc_oxc.bvn`) and bandwidth allocation (line 29); they differ in the
worker placement (lines 1-6):

* ``wcg``: Algorithm 1 with our definition of the rack choice of line 5, which balances the pool
  links and OXC ports of the racks for a target f (:mod:`dmlopt.heuristics.inc_oxc.place`, where
  every rule and deviation is listed); the PS step takes the rack the rack choice reserved for the
  PS (the "anchor") first, then line 9's order.
* ``wcg-literal``: the strictly literal Algorithm 1 of the previous version: the workers of a job
  form one cluster; clusters sorted by |W_i| d_i (descending) are cut into groups of |R_s| and
  each group is spread over distinct racks: a cluster goes to the rack, not yet used by its group,
  that can hold the whole cluster and has the smallest data transfer size placed so far (ties: the
  largest smallest free-resource fraction). A cluster that fits no rack is split: as many workers
  as fit go to the rack that can hold the most of them (same tie-breaks), and so on. Its circuits
  use the literal rounding ("terms", below).
* ``swg`` (single worker grouping): the literal rule with single workers instead of clusters
  (workers sorted by data size, groups of |R_s| workers, one per rack).
* ``rwp`` (random worker placement): every worker goes to a uniformly random rack with room (a
  draw that strands a worker is redrawn).

PS placement (lines 7-24): jobs by data size (descending); the racks holding the job's workers
by worker count (descending): first a free PDP switch slot among them, then a server with room
among them. Deviation: if neither exists the paper says nothing; we take any free PDP slot, then
any server with room (the rack with the most free resources). If no rack has room left (or a
worker placement rule stranded a worker), the rack where it overflows least takes it, and a
repair moves workers and PS servers off over-full racks, or swaps them with items on other
racks, alone or as a chain of two such changes, while the total overflow drops
(``placement._repair``). On tightly packed small instances the placement rules otherwise
return a rack over its capacity (1 run in 1,000 of the validity sweep's generators); on every
other instance nothing changes.

Bandwidth (line 29): each link (worker-side pool link, PS-side pool link, circuit direction)
shares its capacity among its flows in proportion to their data size; a flow gets the smallest
share along its path. (We keep the paper's data-size weights: on the benchmark instances the
longest JCT equals the one of the best bandwidth for the same circuits, ``bandwidth="optimal"``,
once the placement is balanced.)

OXC (lines 25-28): D[s, t] = data of the workers in s whose PS is in t; stuffed to a perfect
matrix D' (sigma its line sum) and decomposed, D' = sum_k theta_k P_k. A permutation copy uses 2
ports per ToR, so floor(N_ToR / 2) copies fit. Rounding (free in the paper, which only says "in
proportion to the coefficients"):

* ``"pairs"`` (wcg, swg, rwp): the proportional allocation per rack pair,
  floor(N_ToR / 2) sum_k theta_k / sigma (P_k + P_k^T)_st = floor(N_ToR / 2) (D' + D'^T)_st /
  sigma, rounded down; then the repair below, then *rebalancing*: while a port can be moved to
  the bottleneck pair (smallest circuits / demand) from pairs at its two racks that keep a larger
  ratio with one circuit less, it is moved.
* ``"terms"`` (wcg-literal): whole permutation copies go to the terms in proportion to theta_k
  (largest remainder), then the repair.

Repair (needed because the selected circuits need not cover every pair that has traffic and so
would leave flows at zero bandwidth): circuits on pairs without traffic are released, every pair
with traffic and no circuit gets one (largest demand first; a port is taken from the
least-loaded multi-circuit pair at a full rack if needed), and leftover ports go one by one to the
pair with the largest demand per circuit (demand / c; "terms": demand / (c + 1)).

Time-shared OXC (ours, section III's BvN read as a schedule): if a rack pair with traffic is left
without a circuit anyway (at 64 racks SWG and RWP spread a job over more racks than a ToR has 12
OXC ports, so no static single-hop configuration can serve them and the longest JCT would be
infinite, while the paper's Fig. 5 reports finite values), the heuristic returns a time-shared
configuration instead (``Solution.oxc_schedule``): the OXC cycles through the configurations
"floor(N_ToR / 2) copies of P_k" for the time share theta_k / sigma of the full decomposition
(reconfiguration time neglected), so pair (s, t) gets on average floor(N_ToR / 2) (D' + D'^T)_st
/ sigma circuits, positive wherever there is traffic; the bandwidth rule uses these averages.
This favours the baselines (a static configuration is a special case); WCG keeps static circuits
on every benchmark instance.

Options (every heuristic): ``circuits="bvn"`` (the paper) or ``"optimal"`` (the best circuit
counts for the placement: bisection on f over the candidate values B c / load), and
``bandwidth="proportional"`` (the paper) or ``"optimal"`` (the closed form b_ij = a_ij f*).
``wcg-opt`` is ``wcg-literal``'s placement with both set to ``"optimal"`` (ours: it isolates what
the literal placement costs). ``wcg-ls`` (ours) starts from ``wcg``'s placement and
runs an iterated local search for ``time_limit`` seconds over placements, each scored exactly by
the best f over all circuit configurations (:func:`placement_f`): moves relocate a worker, swap
two workers of different jobs, relocate a PS (switch slot or server), swap two PS locations, and
"gather" (a PS to rack k plus as many of its workers as fit there); kicks move 3 random workers.
The result carries the optimal circuits and bandwidth of the best placement found.
``wcg-lns`` (ours) runs ``wcg-ls`` briefly, then large neighbourhood search: a few jobs at a
time are re-placed by a restricted fixed-f MILP (:mod:`dmlopt.heuristics.inc_oxc.lns`).
"""

from __future__ import annotations

import math
import time
from typing import Literal

import numpy as np
import pydantic

from dmlopt.contract import Heuristic, NoOptions, Options, Size
from dmlopt.errors import Interrupted, interrupt_of
from dmlopt.heuristics.inc_oxc.circuits import optimal_circuits, placement_f
from dmlopt.heuristics.inc_oxc.placement import (
    _place_ps,
    _State,
    _workers_balanced,
    _workers_rwp,
    _workers_swg,
    _workers_wcg,
)
from dmlopt.heuristics.inc_oxc.search import _iterated_search, _schedule, _solution
from dmlopt.models.inc_oxc import (
    Instance,
    Solution,
)
from dmlopt.models.inc_oxc.hosting import check_hostable
from dmlopt.validation import time_limit_field


def wcg(instance: Instance, *, seed: int = 0, circuits: str = "bvn",
        bandwidth: str = "proportional") -> Solution:
    """Algorithm 1 with the load-balancing rack choice (``place``); deterministic.

    Workers are placed for a target f balancing the racks' pool links and OXC ports
    (:mod:`dmlopt.heuristics.inc_oxc.place`), the PS takes the rack reserved for it, then
    Algorithm 1's PS step, BvN circuits and bandwidth.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    seed : int, optional
        Seed of the random generator (default 0): unused, the placement is deterministic.
    circuits : {"bvn", "optimal"}, optional
        OXC circuits: ``"bvn"`` (default; Algorithm 1, lines 25-28: BvN decomposition of the
        stuffed demand matrix, pair-wise rounding, module docstring) or ``"optimal"`` (the
        circuit counts maximising f for the placement, :func:`optimal_circuits`).
    bandwidth : {"proportional", "optimal"}, optional
        Bandwidth of the worker-PS flows in MB/s: ``"proportional"`` (default; line 29, each
        link shared in proportion to the data sizes) or ``"optimal"`` (closed form b_ij =
        a_ij f*, the largest f for the placement and circuits).

    Returns
    -------
    Solution
        Worker racks, PS places (rack, ``"switch"`` or ``"server"``), static OXC port pairs
        (``oxc``) or, when the static circuits leave a rack pair with traffic unserved, a
        time-shared BvN schedule (``oxc_schedule``), and every flow's bandwidth (MB/s).

    References
    ----------
    Paper 002 (Dong et al.), section III, Algorithm 1 (WCG). Ours: the rack choice of line
    5 (the paper leaves it open), the pair-wise circuit rounding with repair and rebalancing,
    and the time-shared fallback (module docstring).
    """
    check_hostable(instance)
    return _schedule(instance, _workers_balanced, seed, circuits, bandwidth)


def wcg_literal(instance: Instance, *, seed: int = 0, circuits: str = "bvn",
                bandwidth: str = "proportional") -> Solution:
    """Algorithm 1 with the literal rack choice (least placed data); deterministic.

    Job clusters by |W_i| d_i (descending) in groups of |R_s|, each cluster to the unused rack
    of its group that holds it and has the least data placed; circuits rounded term by term.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    seed : int, optional
        Seed of the random generator (default 0): unused, the placement is deterministic.
    circuits : {"bvn", "optimal"}, optional
        OXC circuits: ``"bvn"`` (default; Algorithm 1, lines 25-28: BvN decomposition of the
        stuffed demand matrix, term-wise rounding: whole permutation copies per BvN term,
        module docstring) or ``"optimal"`` (the circuit counts maximising f for the
        placement, :func:`optimal_circuits`).
    bandwidth : {"proportional", "optimal"}, optional
        Bandwidth of the worker-PS flows in MB/s: ``"proportional"`` (default; line 29, each
        link shared in proportion to the data sizes) or ``"optimal"`` (closed form b_ij =
        a_ij f*, the largest f for the placement and circuits).

    Returns
    -------
    Solution
        Worker racks, PS places (rack, ``"switch"`` or ``"server"``), static OXC port pairs
        (``oxc``) or, when the static circuits leave a rack pair with traffic unserved, a
        time-shared BvN schedule (``oxc_schedule``), and every flow's bandwidth (MB/s).

    References
    ----------
    Paper 002 (Dong et al.), section III, Algorithm 1 (WCG), read literally; the split of a
    cluster that fits no rack and the tie-breaks are ours (module docstring).
    """
    check_hostable(instance)
    return _schedule(instance, _workers_wcg, seed, circuits, bandwidth, rounding="terms")


def swg(instance: Instance, *, seed: int = 0, circuits: str = "bvn",
        bandwidth: str = "proportional") -> Solution:
    """Single worker grouping (section IV-A baseline); deterministic.

    Algorithm 1's rule applied to single workers instead of job clusters: workers sorted by
    data size, groups of |R_s| workers, one per rack.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    seed : int, optional
        Seed of the random generator (default 0): unused, the placement is deterministic.
    circuits : {"bvn", "optimal"}, optional
        OXC circuits: ``"bvn"`` (default; Algorithm 1, lines 25-28: BvN decomposition of the
        stuffed demand matrix, pair-wise rounding, module docstring) or ``"optimal"`` (the
        circuit counts maximising f for the placement, :func:`optimal_circuits`).
    bandwidth : {"proportional", "optimal"}, optional
        Bandwidth of the worker-PS flows in MB/s: ``"proportional"`` (default; line 29, each
        link shared in proportion to the data sizes) or ``"optimal"`` (closed form b_ij =
        a_ij f*, the largest f for the placement and circuits).

    Returns
    -------
    Solution
        Worker racks, PS places (rack, ``"switch"`` or ``"server"``), static OXC port pairs
        (``oxc``) or, when the static circuits leave a rack pair with traffic unserved, a
        time-shared BvN schedule (``oxc_schedule``), and every flow's bandwidth (MB/s).

    References
    ----------
    Paper 002 (Dong et al.), section IV-A (the SWG baseline); PS step, circuits and bandwidth
    of Algorithm 1, section III.
    """
    check_hostable(instance)
    return _schedule(instance, _workers_swg, seed, circuits, bandwidth)


def rwp(instance: Instance, *, seed: int = 0, circuits: str = "bvn",
        bandwidth: str = "proportional") -> Solution:
    """Random worker placement (section IV-A baseline), seeded.

    Every worker goes to a uniformly random rack with room (a draw that strands a worker is
    redrawn); then Algorithm 1's PS step, circuits and bandwidth.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    seed : int, optional
        Seed of the random generator (default 0): drives the rack draws.
    circuits : {"bvn", "optimal"}, optional
        OXC circuits: ``"bvn"`` (default; Algorithm 1, lines 25-28: BvN decomposition of the
        stuffed demand matrix, pair-wise rounding, module docstring) or ``"optimal"`` (the
        circuit counts maximising f for the placement, :func:`optimal_circuits`).
    bandwidth : {"proportional", "optimal"}, optional
        Bandwidth of the worker-PS flows in MB/s: ``"proportional"`` (default; line 29, each
        link shared in proportion to the data sizes) or ``"optimal"`` (closed form b_ij =
        a_ij f*, the largest f for the placement and circuits).

    Returns
    -------
    Solution
        Worker racks, PS places (rack, ``"switch"`` or ``"server"``), static OXC port pairs
        (``oxc``) or, when the static circuits leave a rack pair with traffic unserved, a
        time-shared BvN schedule (``oxc_schedule``), and every flow's bandwidth (MB/s).

    References
    ----------
    Paper 002 (Dong et al.), section IV-A (the RWP baseline); PS step, circuits and bandwidth
    of Algorithm 1, section III.
    """
    check_hostable(instance)
    return _schedule(instance, _workers_rwp, seed, circuits, bandwidth)


def wcg_opt(instance: Instance, *, seed: int = 0) -> Solution:
    """The literal WCG placement (``wcg-literal``) with optimal circuits and bandwidth (ours):
    isolates what the placement costs.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    seed : int, optional
        Seed (default 0); unused, the result is deterministic.

    Returns
    -------
    Solution
        ``wcg-literal``'s workers and PS places with the circuit counts maximising f for them
        (static ``oxc``, or a time-shared ``oxc_schedule`` if a pair with traffic stays
        without a circuit) and the bandwidth b_ij = a_ij f* (MB/s).

    References
    ----------
    Paper 002 (Dong et al.), section III, Algorithm 1 (placement). Ours: the exact best
    circuits (:func:`optimal_circuits`) and bandwidth for that placement.
    """
    check_hostable(instance)
    return _schedule(instance, _workers_wcg, seed, "optimal", "optimal")


def wcg_ls(instance: Instance, *, seed: int = 0, time_limit: float = 2.0,
           max_rounds: int = 50) -> Solution:
    """``wcg``'s placement, then iterated local search on the placement, optimal circuits and
    bandwidth (ours).

    Every placement is scored exactly by the best f over all circuit configurations
    (:func:`placement_f`); moves relocate or swap workers and PS and gather a job at a rack;
    kicks move 3 random workers (module docstring).

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    seed : int, optional
        Seed of the move order and the kicks (default 0).
    time_limit : float, optional
        Seconds of local search after ``wcg`` (default 2.0, wall clock).
    max_rounds : int, optional
        Improvement rounds of one descent (default 50).

    Returns
    -------
    Solution
        The best placement found with its optimal circuits (static ``oxc``) and bandwidth
        b_ij = a_ij f* (MB/s).

    References
    ----------
    Ours: iterated local search (Lourenco, Martin and Stuetzle, "Iterated local search",
    Handbook of Metaheuristics, 2003) started from paper 002's Algorithm 1 (section III);
    it adds the exact scoring of a placement over all circuit configurations.
    """
    check_hostable(instance)
    return _schedule(instance, _workers_balanced, seed, "optimal", "optimal",
                     search=(time_limit, max_rounds))


def wcg_lns(instance: Instance, *, seed: int = 0, time_limit: float = 30.0,
            ls_time: float = 2.0, jobs: int = 4, racks: int = 4,
            milp_time: float = 10.0) -> Solution:
    """``wcg-ls`` for ``ls_time`` seconds, then large neighbourhood search with a restricted
    fixed-f MILP until ``time_limit`` (ours).

    Each step frees ``jobs`` jobs (those on links a target f above the best overloads first),
    lets them move among their racks and ``racks`` more, with every OXC circuit between these
    racks free, and asks HiGHS (one thread) for a placement reaching the target
    (:mod:`dmlopt.heuristics.inc_oxc.lns`). Stops early when f reaches the ``jobs`` bound
    (then the solution is optimal among static port pairings). Ctrl-C raises
    :class:`~dmlopt.errors.Interrupted` carrying the best solution so far.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance (jobs with non-identical workers stay where ``wcg-ls`` put
        them).
    seed : int, optional
        Seed of the local search, the freed jobs and the extra racks (default 0).
    time_limit : float, optional
        Seconds in all, wall clock (default 30.0).
    ls_time : float, optional
        Seconds of ``wcg-ls``'s local search first (default 2.0; at most ``time_limit``).
    jobs : int, optional
        Jobs freed per neighbourhood (default 4).
    racks : int, optional
        Racks added to the freed jobs' own racks per neighbourhood, drawn in proportion to
        the GPUs the other jobs leave free (default 4).
    milp_time : float, optional
        Seconds per restricted MILP (default 10.0).

    Returns
    -------
    Solution
        The best placement found with its optimal circuits (static ``oxc``) and bandwidth
        b_ij = a_ij f* (MB/s).

    References
    ----------
    Ours: large neighbourhood search (Shaw, "Using constraint programming and local search
    methods to solve vehicle routing problems", CP 1998; Pisinger and Ropke, "Large
    neighborhood search", Handbook of Metaheuristics, 2010) over paper 002's placement
    (section II-B, eqs. (1)-(13) at fixed f), started from Algorithm 1 (section III).
    """
    check_hostable(instance)
    from dmlopt.heuristics.inc_oxc.lns import large_neighbourhood_search
    from dmlopt.models.inc_oxc.bounds import jobs_bound

    t_end = time.perf_counter() + time_limit
    rng = np.random.default_rng(seed)
    st = _State(instance)
    wrack = _workers_balanced(instance, st, rng)
    ps_rack, server = _place_ps(instance, st, wrack)
    _iterated_search(instance, wrack, ps_rack, server, rng, min(ls_time, time_limit), 50)
    keep: list = []
    try:
        left = max(t_end - time.perf_counter(), 0.0)
        ceiling = jobs_bound(instance, static=True, time_limit=left)[0]
        large_neighbourhood_search(instance, wrack, ps_rack, server, rng,
                                   t_end - time.perf_counter(), jobs, racks, milp_time,
                                   ceiling, keep)
    except (KeyboardInterrupt, SystemError) as exc:  # Ctrl-C: the best so far is the answer
        if not interrupt_of(exc) or not keep:
            raise
        raise Interrupted(_solution(instance, *keep, "optimal", "optimal")) from None
    return _solution(instance, wrack, ps_rack, server, "optimal", "optimal")


# --------------------------------------------------------------------------------------------
# options and size estimates (dmlopt.contract)


class ScheduleOptions(Options):
    """Options of wcg, wcg-literal, swg and rwp (module docstring, "Options")."""

    circuits: Literal["bvn", "optimal"] = pydantic.Field(
        default="bvn", description="OXC circuits: bvn (Algorithm 1, lines 25-28) or optimal "
        "(the best circuit counts for the placement)")
    bandwidth: Literal["proportional", "optimal"] = pydantic.Field(
        default="proportional", description="bandwidth: proportional to the data size (line "
        "29) or optimal (closed form b = a f*)")


class SearchOptions(Options):
    """Options of wcg-ls (iterated local search over placements, ours)."""

    time_limit: float = time_limit_field(
        2.0, "seconds of local search after wcg (at most a day)")
    max_rounds: int = pydantic.Field(default=50, ge=1, le=1_000_000,
                                     description="improvement rounds of one descent")


class LnsOptions(Options):
    """Options of wcg-lns (large neighbourhood search with a restricted MILP, ours)."""

    time_limit: float = time_limit_field(
        30.0, "seconds in all, wall clock (at most a day)")
    ls_time: float = pydantic.Field(default=2.0, ge=0, le=86_400,
                                    description="seconds of wcg-ls's local search first")
    jobs: int = pydantic.Field(default=4, ge=1, le=64, description="jobs freed per "
                               "neighbourhood")
    racks: int = pydantic.Field(default=4, ge=0, le=64, description="racks added to the "
                                "freed jobs' own racks per neighbourhood")
    milp_time: float = pydantic.Field(default=10.0, gt=0, le=86_400,
                                      description="seconds per restricted MILP")


#: operations charged per worker (or PS) and rack-choice try of wcg's target scan (up to 16
#: racks: 18 variants x up to 48 targets, Python loops over the candidate racks): measured 5.8
#: us + 0.23 us per rack per worker and try at 8-16 racks (growth series, seeds 0 and 1)
_TRY_OPS = (12_000.0, 500.0)
#: operations charged per worker (or PS) of wcg's one-pass balancing rule (Python loops over
#: racks and anchors): measured 0.15 ms + 1.6 us per rack per worker at 64-256 racks
_BALANCED_OPS = (250_000.0, 3_500.0)
#: operations charged per worker (or PS) of the literal and single-worker rules, the random
#: rule: measured 10 us + 0.47 us per rack per worker at 64-256 racks
_LITERAL_OPS = (20_000.0, 1_000.0)
#: operations charged per BvN term of the time-shared schedule: the bottleneck matching
#: (scipy's assignment on an (R, R) matrix, Hopcroft-Karp steps on the sparse support, their
#: setup) and the term's port pairs; measured 0.95 ms per term at 128 racks and 2.9 ms at 256
#: (about 0.3 ms + 40 ns R^2)
_TERM_OPS = (350_000.0, 60.0)


def _dims(instance: Instance) -> tuple[float, float, float]:
    """(R, N_ToR, W + J): racks, ports per ToR, workers and parameter servers."""
    W = float(sum(len(j.workers) for j in instance.jobs))
    return float(instance.n_racks), float(instance.n_tor), W + len(instance.jobs)


def _per_item(items: float, R: float, ops: tuple[float, float]) -> float:
    return items * (ops[0] + ops[1] * R)


def _static_size(instance: Instance) -> Size:
    """Memory of a run with static circuits: about a dozen (R, R) float matrices at once
    (measured 80-100 bytes per rack pair at 64-256 racks; 20 matrices charged), the
    N_ToR R^2 / 2 candidate values of the optimal circuits and the per-worker arrays. Work:
    the PS step (a few microseconds per worker and PS: 2000 operations charged) and the static
    circuits, a few dozen numpy passes over (R, R) matrices per bisection step or kept BvN
    term (20 R^2 log2 R^2 charged)."""
    R, P, items = _dims(instance)
    memory = 8.0 * (20 * R * R + P * R * R / 2 + 8 * items)
    work = 2000.0 * items + 20 * R * R * math.log2(R * R + 1)
    return Size(memory, work)


def _time_shared(instance: Instance) -> Size:
    """The time-shared schedule (module docstring): at most min(R^2, W + 2R) BvN terms (each
    term clears an entry of the stuffed matrix, whose support is the <= W rack pairs with
    traffic plus at most 2R stuffed entries), :data:`_TERM_OPS` each; R N_ToR / 2 port pairs
    per term, as Python tuples and again in the validated Solution (~128 bytes per port)."""
    R, P, items = _dims(instance)
    terms = min(R * R, items + 2 * R)
    return Size(128.0 * terms * R * P, terms * (_TERM_OPS[0] + _TERM_OPS[1] * R * R))


def _add(*sizes: Size) -> Size:
    return Size(sum(s.memory for s in sizes), sum(s.work for s in sizes))


def _balanced_placement(instance: Instance) -> float:
    """Work of wcg's placement: the target scan up to 16 racks (then the one-pass rule as its
    fallback), the one-pass balancing rule above."""
    R, _, items = _dims(instance)
    work = _per_item(items, R, _BALANCED_OPS)
    if instance.n_racks <= 16:
        work += 18 * 48 * _per_item(items, R, _TRY_OPS)
    return work


def estimate_wcg(instance: Instance, options: Options) -> Size:
    """Size of ``wcg``: its placement (:func:`_balanced_placement`) and static circuits
    (:func:`_static_size`). The time-shared fallback is not charged: wcg's placement keeps a
    rack's partners within its ports on every instance of the benchmark families."""
    del options
    return _add(_static_size(instance), Size(0.0, _balanced_placement(instance)))


def estimate_literal(instance: Instance, options: Options) -> Size:
    """Size of ``wcg-literal`` and ``wcg-opt``: the literal placement (one pass over the
    clusters and racks) and static circuits (:func:`_static_size`)."""
    del options
    R, _, items = _dims(instance)
    return _add(_static_size(instance), Size(0.0, _per_item(items, R, _LITERAL_OPS)))


def estimate_spread(instance: Instance, options: Options) -> Size:
    """Size of ``swg`` and ``rwp``: a one-pass placement, then the time-shared schedule
    (:func:`_time_shared`), which these placements need from 64 racks on (a job spread over
    more racks than a ToR has ports)."""
    del options
    R, _, items = _dims(instance)
    return _add(_static_size(instance), _time_shared(instance),
                Size(0.0, _per_item(items, R, _LITERAL_OPS)))


def estimate_search(instance: Instance, options: SearchOptions) -> Size:
    """Size of ``wcg-ls``: ``wcg``, then ``time_limit`` seconds of search (one thread: at most
    1e9 operations a second, the unit of the work estimates); memory: the move table and the
    search's (R, R) arrays, measured 146 R^2 float64 values at 64-256 racks (300 charged)."""
    R, _, _ = _dims(instance)
    base = estimate_wcg(instance, options)
    return Size(base.memory + 8.0 * 300 * R * R, base.work + 1e9 * options.time_limit)


def lns_estimate(instance: Instance, options: LnsOptions) -> Size:
    """Size of ``wcg-lns``: ``wcg``, then ``time_limit`` seconds of local search and large
    neighbourhood search (one thread: at most 1e9 operations a second, as
    :func:`estimate_search`); memory: the local search's (R, R) arrays (as ``wcg-ls``) and one
    restricted MILP, per freed job 2 m^2 worker-count columns over its m racks (its own, at
    most 17, plus ``racks``) with ~ 8 entries each, 512 bytes per column charged."""
    R, _, _ = _dims(instance)
    base = estimate_wcg(instance, options)
    m = min(R, 17.0 * options.jobs + options.racks)
    cols = options.jobs * 2 * m * m + m * m / 2
    return Size(base.memory + 8.0 * 300 * R * R + 512.0 * cols,
                base.work + 1e9 * options.time_limit)


HEURISTICS: dict[str, Heuristic] = {
    "wcg": Heuristic(wcg, ScheduleOptions, estimate_wcg,
                     "Algorithm 1 with the load-balancing rack choice (deterministic)"),
    "wcg-literal": Heuristic(wcg_literal, ScheduleOptions, estimate_literal,
                             "Algorithm 1 with the literal rack choice (least placed data)"),
    "swg": Heuristic(swg, ScheduleOptions, estimate_spread,
                     "single worker grouping (section IV-A baseline)"),
    "rwp": Heuristic(rwp, ScheduleOptions, estimate_spread,
                     "random worker placement (section IV-A baseline), seeded"),
    "wcg-opt": Heuristic(wcg_opt, NoOptions, estimate_literal,
                         "ours: wcg-literal's placement, optimal circuits and bandwidth"),
    "wcg-ls": Heuristic(wcg_ls, SearchOptions, estimate_search,
                        "ours: wcg, then iterated local search for time_limit seconds"),
    "wcg-lns": Heuristic(wcg_lns, LnsOptions, lns_estimate,
                         "ours: wcg-ls, then large neighbourhood search with a restricted "
                         "fixed-f MILP for time_limit seconds"),
}

#: the heuristic to use (docs/inc_oxc.md: the best quality for its time at 64 racks)
RECOMMENDED = "wcg-lns"


__all__ = [
    'optimal_circuits', 'placement_f', 'wcg', 'wcg_literal', 'swg', 'rwp', 'wcg_opt', 'wcg_ls',
    'wcg_lns', 'ScheduleOptions', 'SearchOptions', 'LnsOptions', 'estimate_wcg',
    'estimate_literal', 'estimate_spread', 'estimate_search', 'lns_estimate', 'HEURISTICS',
]
