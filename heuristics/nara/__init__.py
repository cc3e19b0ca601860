"""Online allocators for Nara (paper 001): the paper's baselines, ours, and the per-request MILP.

Every allocator runs the episode through the simulator (:mod:`dmlopt.models.nara.sim`), which
applies the paper's state transitions: servers are picked one at a time, min(free, remaining)
CPU and memory is taken from each, and a pick that breaks constraint 3 drops the request.

The paper's baselines (section 4.1, Appendix D): :func:`allocate_random`,
:func:`allocate_tetris`, :func:`allocate_nalb`, :func:`allocate_nulb`; Nara itself
(:func:`~dmlopt.heuristics.nara.agent.allocate_nara`); ours: :func:`allocate_netfit`,
:func:`allocate_netfit_probe`, :func:`~dmlopt.heuristics.nara.nara_netfit.allocate`
(``nara-netfit``); the per-request MILP (:func:`allocate_milp`); and one allocator that is not
online, ``offline-search`` (:mod:`.offline`: it knows the whole episode; a local search over the
requests netfit's replay refuses, the price of being online). Where the paper is open,
each function's docstring says what we chose.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pydantic

from dmlopt.contract import Heuristic, NoOptions, Options, Size
from dmlopt.heuristics.nara import agent as _nara_agent
from dmlopt.heuristics.nara import nara_netfit as _nara_netfit_learned
from dmlopt.heuristics.nara import netfit as _nara_netfit
from dmlopt.heuristics.nara import offline as _nara_offline
from dmlopt.heuristics.nara import probe as _nara_probe
from dmlopt.models import nara
from dmlopt.models.nara.sim import State, episode_memory, run_episode
from dmlopt.validation import time_limit_field


def _random(state: State, rng: np.random.Generator) -> bool:
    while not state.covered:
        idx = np.flatnonzero(state.useful())
        if not idx.size:
            return False
        if not state.add(int(rng.choice(idx))):
            return False
    return True


def allocate_random(instance: nara.Instance, *, seed: int = 0) -> nara.Solution:
    """Random baseline: uniformly random servers until the request is covered or a pick fails.

    Only servers that can still give some of the remaining CPU or memory are drawn.

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`): topology and requests.
    seed : int, optional
        Seed of the draws (default 0).

    Returns
    -------
    Solution
        One allocation per request (None when dropped), as the simulator committed them.

    References
    ----------
    Paper 001 (Shabka and Zervas), section 4.1 "Random".
    """
    return run_episode(instance, _random, rng=np.random.default_rng(seed))


def _tetris_choose(penalty: float, check_paths: bool):
    def choose(state: State, rng: np.random.Generator) -> bool:
        del rng
        net = state.net
        while not state.covered:
            if check_paths:
                ok = state.feasible()
                if not state.selected:
                    # the first pick too: a server that cannot hold the rest alone will be
                    # joined by others, so its access link must carry b (constraint 3)
                    ok &= ((state.cpu_free >= state.rem_c) & (state.mem_free >= state.rem_m)) \
                        | state.access_now
            else:
                ok = state.useful()
            idx = np.flatnonzero(ok)
            if not idx.size:
                return False
            f = state.cpu_free[idx].astype(float)
            g = state.mem_free[idx].astype(float)
            rc, rm = float(state.rem_c), float(state.rem_m)
            norm = np.sqrt(f * f + g * g) * np.hypot(rc, rm)
            score = (rc * f + rm * g) / np.where(norm > 0, norm, 1.0)
            if state.selected:
                first_rack = net.rack[state.selected[0]]
                score = np.where(net.rack[idx] == first_rack, score, score * (1 - penalty))
            # largest score, then more free resources, then lower index
            order = np.lexsort((idx, -(f + g), -np.round(score, 12)))
            if not state.add(int(idx[order[0]])):
                return False
        return True

    return choose


def allocate_tetris(instance: nara.Instance, *, seed: int = 0, penalty: float = 0.9,
                    check_paths: bool = True) -> nara.Solution:
    """Tetris baseline: the server whose free <CPU, memory> best aligns with the remaining demand.

    Score: the cosine similarity of the server's free <CPU, memory> with the remaining <c, m>
    (bandwidth enters only through the locality penalty), cut by ``penalty`` for servers outside
    the first pick's rack; ties to the server with more free resources, then the lower index.
    With ``check_paths`` only servers where the request still fits are scored (Tetris places a
    task only on a machine whose free resources, network included, cover it): a pick must keep
    constraint 3 with the servers already picked, and the first pick, unless it holds the whole
    request, must have >= b free on its access link (it will be joined by others; unchecked,
    the first pick stranded 183 of 384 requests on alpha/uniform seeds 0-2).

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`): topology and requests.
    seed : int, optional
        Unused (deterministic); default 0.
    penalty : float, optional
        Score cut of servers outside the first pick's rack, in [0, 1] (default 0.9, Appendix
        D.1's 90 %).
    check_paths : bool, optional
        Score only servers where the request still fits, constraint 3 included (default True);
        False: score every server with some free resource and drop the request when a pick
        breaks constraint 3.

    Returns
    -------
    Solution
        One allocation per request (None when dropped), as the simulator committed them.

    References
    ----------
    Paper 001, section 4.1 "Tetris" and Appendix D.1; R. Grandl et al., Multi-resource packing
    for cluster schedulers, SIGCOMM CCR 44 (2014) 455-466 (paper 001's ref. [19]). The feasibility
    check of ``check_paths`` is our reading of [19].
    """
    del seed
    return run_episode(instance, _tetris_choose(penalty, check_paths))


def _first_server(state: State) -> int:
    net = state.net
    idx = np.flatnonzero(state.useful())
    if not idx.size:
        return -1
    score = state.cpu_free[idx] / np.maximum(net.cpu[idx], 1) \
        + state.mem_free[idx] / np.maximum(net.mem[idx], 1)
    return int(idx[np.argmax(score)])


def _rack_hops(net) -> np.ndarray:
    """(R, R) hop distance between rack switches (shortest candidate path length)."""
    R = net.n_racks
    hops = np.zeros((R, R), dtype=np.int64)
    for (a, b), plist in net.cand.items():
        hops[a, b] = hops[b, a] = len(plist[0]) if plist else 10**6
    return hops


def _bfs_choose(weighted: bool, hops: np.ndarray):
    def choose(state: State, rng: np.random.Generator) -> bool:
        del rng
        net = state.net
        s0 = _first_server(state)
        if s0 < 0:
            return False
        state.add(s0)
        if state.covered:
            return True
        r0 = int(net.rack[s0])
        R = net.n_racks
        if weighted:
            b = state.req.b
            bott = state.bw[net.paths[r0]].min(axis=-1)  # (R, k)
            valid = np.arange(bott.shape[1])[None, :] < net.n_cand[r0][:, None]
            best = np.where(valid, bott, -np.inf).max(axis=1)
            best[r0] = np.inf
            racks = [r for r in np.lexsort((-best, hops[r0])) if best[r] >= b - nara.BW_TOL]
        else:
            racks = list(np.lexsort((np.arange(R), hops[r0])))
        for r in racks:
            servers = net.rack_servers[int(r)]
            if weighted:
                acc = state.bw[net.access[servers]]
                keep = acc >= state.req.b - nara.BW_TOL
                servers = servers[keep][np.argsort(-acc[keep], kind="stable")]
            for s in servers:
                if state.covered:
                    return True
                if not state.is_useful(int(s)):
                    continue
                if not state.add(int(s)):
                    return False
        return state.covered

    return choose


def allocate_nalb(instance: nara.Instance, *, seed: int = 0) -> nara.Solution:
    """NALB baseline: a bandwidth-weighted breadth-first search from a first server.

    The first server is the one with the most free resources (free CPU plus free memory, each
    normalised by the server's capacity; ties to the lower index): [18] is locality-based and
    starts from the best-provisioned node (ours, the paper is open here).

    The search visits the racks reachable from the first rack through a candidate path with
    >= b free, by hop distance and then by the bottleneck free bandwidth (largest first), and
    inside a rack the servers whose access link has >= b free, the one with the most free
    bandwidth first. Paths are checked only to the first rack, so a later pick can still fail
    between two other racks. Routes: the widest of the k shortest candidates. The paper does not
    say whether the weighting filters (ours) or only orders; filtering loses few requests to
    failed picks (24 of 640 on alpha/uniform, ``python -m
    benchmarks.studies.nara.drops``), which keeps NALB close to Tetris (the paper has
    0.52 against 0.61 on alpha/uniform).

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`): topology and requests.
    seed : int, optional
        Unused (deterministic); default 0.

    Returns
    -------
    Solution
        One allocation per request (None when dropped), as the simulator committed them.

    References
    ----------
    Paper 001, section 4.1 "NALB" and Appendix D.2; G. Zervas et al., Optically disaggregated
    data centers with minimal remote memory latency, J. Opt. Commun. Netw. 10 (2018) A270-A285
    (paper 001's ref. [18]).
    """
    del seed
    return run_episode(instance, _bfs_choose(True, _rack_hops(instance.net)), route="widest")


def allocate_nulb(instance: nara.Instance, *, seed: int = 0) -> nara.Solution:
    """NULB baseline: an unweighted breadth-first search from a first server.

    The first server is the one with the most free resources (free CPU plus free memory, each
    normalised by the server's capacity; ties to the lower index): [18] is locality-based and
    starts from the best-provisioned node (ours, the paper is open here).

    The search runs over the switch graph from the first server's rack: racks by hop
    distance (ties in index order), servers inside a rack in index order. Bandwidth is ignored,
    so it may pick a server without a path and drop the request (section 5.1's explanation of
    NULB's weakness on topology alpha). Routes: the widest of the k shortest candidates.

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`): topology and requests.
    seed : int, optional
        Unused (deterministic); default 0.

    Returns
    -------
    Solution
        One allocation per request (None when dropped), as the simulator committed them.

    References
    ----------
    Paper 001, section 4.1 "NULB" and Appendix D.2; Zervas et al. (2018), paper 001's ref.
    [18].
    """
    del seed
    return run_episode(instance, _bfs_choose(False, _rack_hops(instance.net)), route="widest")


def allocate_netfit(instance: nara.Instance, *, seed: int = 0, **options: Any) -> nara.Solution:
    """Feasibility-checked, locality-first best fit (ours): never picks a failing server.

    A bandwidth-aware choice among single-server, single-rack and multi-rack allocations; the
    algorithm is described in :mod:`dmlopt.heuristics.nara.netfit`.

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`): topology and requests.
    seed : int, optional
        Unused (deterministic); default 0.
    **options
        Passed to :func:`dmlopt.heuristics.nara.netfit.chooser` (none through the registry).

    Returns
    -------
    Solution
        One allocation per request (None when dropped), as the simulator committed them.

    References
    ----------
    Ours, on paper 001's model (section 3.1, constraint 3): what it adds over the baselines is
    the exact feasibility check of every pick and the locality-first plan.
    """
    del seed
    return run_episode(instance, _nara_netfit.chooser(instance, **options))


def allocate_netfit_probe(instance: nara.Instance, *, seed: int = 0,
                          **options: Any) -> nara.Solution:
    """netfit with probe look-ahead and admission control (ours).

    netfit's candidate allocations are scored by how many probe requests (drawn from the
    requests seen so far) stay placeable after each; a big request whose placement would
    strand many probes is rejected. The algorithm is in :mod:`dmlopt.heuristics.nara.probe`.

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`): topology and requests.
    seed : int, optional
        Seed of the probe draws (default 0).
    **options
        :class:`ProbeOptions`: ``n_probe`` (probe requests per candidate, default 32),
        ``max_cand`` (candidates per request, default 4), ``w_local`` (weight of probes
        placeable on one server or rack, default 0.5), ``admit_k`` (size, in mean volumes seen,
        above which admission control applies, default 1.8), ``admit_loss`` (share of n_probe
        placeable probes lost that rejects, default 0.1), ``select`` (choose among candidates
        by the probes, default True), ``budget_servers`` (above this many servers the
        look-ahead is off, default 100 000).

    Returns
    -------
    Solution
        One allocation per request (None when dropped), as the simulator committed them.

    References
    ----------
    Ours, on paper 001's model (section 3.1): it adds a look-ahead over the future demand,
    which the online baselines of section 4.1 lack.
    """
    return run_episode(instance, _nara_probe.chooser(instance, seed=seed, **options))


def allocate_milp(instance: nara.Instance, *, seed: int = 0,
                  time_limit: float = 10.0) -> nara.Solution:
    """The per-request MILP as an allocator: HiGHS at every arrival (small topologies only).

    Formulation "request" of :mod:`dmlopt.models.nara` with the current free capacities:
    accept whenever any allocation exists, fewest charged links, then fewest servers.

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`): topology and requests.
    seed : int, optional
        Unused; default 0.
    time_limit : float, optional
        HiGHS time limit per request, seconds (default 10); a request without a solution in
        time is dropped.

    Returns
    -------
    Solution
        One allocation per request (None when dropped), as the simulator committed them.

    References
    ----------
    Ours: paper 001's constraints (section 3.1) as a MILP per request; an exact one-step
    allocator, not a bound on the episode (the offline formulations are).
    """
    del seed
    from dmlopt import solvers

    net = instance.net

    def choose(state: State, rng: np.random.Generator) -> bool:
        del rng
        req = state.req
        if req.c > state.cpu_free.sum() or req.m > state.mem_free.sum():
            return False
        model = nara.build_request_model(instance, state.step, state.cpu_free, state.mem_free,
                                         state.bw[:-1], objective="cost")
        run = solvers.run(model, "highs", time_limit=time_limit, threads=1)
        if not run.has_solution:
            return False
        al = nara.decode_allocations(model, net)[0]
        if al is None:
            return False
        state.commit(al)
        return True

    return run_episode(instance, choose)


# --------------------------------------------------------------------------------------------
# options and size estimates (dmlopt.contract)


class TetrisOptions(Options):
    """Options of the Tetris baseline (Appendix D.1)."""

    penalty: float = pydantic.Field(
        default=0.9, ge=0, le=1, description="score cut of servers outside the first pick's "
        "rack (Appendix D.1: 90 %)")
    check_paths: bool = pydantic.Field(
        default=True, description="score only servers where the request still fits, "
        "constraint 3 included (Tetris [19]); false: drop the request when a pick breaks it")


class ProbeOptions(Options):
    """Options of ``netfit-probe`` (:mod:`dmlopt.heuristics.nara.probe`)."""

    n_probe: int = pydantic.Field(
        default=32, ge=1, le=100_000, description="probe requests drawn from the requests "
        "seen so far to score a candidate")
    max_cand: int = pydantic.Field(
        default=4, ge=1, le=1000, description="candidate allocations scored per request")
    w_local: float = pydantic.Field(
        default=0.5, ge=0, description="weight of the probes placeable on one server or one "
        "rack in a candidate's score")
    admit_k: float = pydantic.Field(
        default=1.8, gt=0, description="a request larger than admit_k x the mean volume seen "
        "is subject to admission control (a huge value, e.g. 1e300, switches it off)")
    admit_loss: float = pydantic.Field(
        default=0.1, ge=0, description="such a request is rejected when placing it makes at "
        "least admit_loss x n_probe placeable probes unplaceable")
    select: bool = pydantic.Field(
        default=True, description="choose among the candidates by the probes (false: "
        "netfit's plan, probes for admission only)")
    budget_servers: int = pydantic.Field(
        default=100_000, ge=0, description="above this many servers the look-ahead is off "
        "(plain netfit)")


class MilpOptions(Options):
    """Options of the per-request MILP allocator."""

    time_limit: float = time_limit_field(
        10.0, "HiGHS time limit per request (seconds, at most a day)")


def _episode_size(instance: nara.Instance) -> tuple[float, float, float, float, float]:
    """(requests, server picks, cost of one request, cost of one pick, fixed memory) of a
    simulated episode (:mod:`dmlopt.models.nara.sim`).

    A request begins with the path-compatibility table of its bandwidth (the path-link
    incidence times the short links, then an (R, R) table, ``State.compat``, once per
    request); a pick (``State.feasible`` and a choice among the servers) is numpy work over the
    servers, sorted; a request takes at most min(servers, c + m) picks, since every pick gives
    at least one unit. The topology's :attr:`~dmlopt.models.nara.Instance.net` is built first
    (guarded by :func:`dmlopt.models.nara.net_size`).
    """
    net = instance.net
    S, R = net.n_servers, net.n_racks
    nnz = float(sum(len(p) for v in net.cand.values() for p in v))
    n = len(instance.requests)
    picks = float(sum(min(S, r.c + r.m) for r in instance.requests))
    request = S + nnz + R * R
    pick = S * (math.log2(S) + 2) + R
    memory = episode_memory(net) + 1024.0 * n
    return n, picks, request, pick, memory


#: interpreted (Python and numpy call) overhead charged per pick of :func:`_episode_size`'s
#: bound, in operations (a nanosecond each), per allocator: about twice the measured CPU time
#: per request over that bound (growth series, alpha topology, 1,024-4,096 requests: random
#: 93, tetris 230, nalb 105, nulb 50, netfit 120-145 microseconds per request, about 36 picks
#: per request in the bound)
PICK_OVERHEAD = {"random": 5_000.0, "tetris": 12_000.0, "nalb": 6_000.0, "nulb": 3_000.0,
                 "netfit": 8_000.0}
#: interpreted overhead charged per request of a probed choice (netfit-probe: candidates,
#: probe sets, verdicts; measured 0.51-0.69 ms per request on the growth series), operations
PROBE_OVERHEAD = 1.0e6


def _picking(allocator: str) -> Callable[[nara.Instance, Options], Size]:
    """The estimate of an allocator that picks servers one at a time: :func:`_episode_size`
    with its :data:`PICK_OVERHEAD`."""
    def estimate(instance: nara.Instance, options: Options) -> Size:
        del options
        n, picks, request, pick, memory = _episode_size(instance)
        return Size(memory, n * request + picks * (pick + PICK_OVERHEAD[allocator]))
    estimate.__doc__ = f"Size of ``{allocator}``: :func:`_episode_size`, " \
        f"{PICK_OVERHEAD[allocator]:g} operations of overhead per pick."
    return estimate


def episode_estimate(instance: nara.Instance, options: Options) -> Size:
    """Size of netfit (and of any allocator picking servers one at a time as netfit does):
    :func:`_episode_size` with netfit's :data:`PICK_OVERHEAD`."""
    return _picking("netfit")(instance, options)


def probe_estimate(instance: nara.Instance, options: ProbeOptions) -> Size:
    """:func:`_episode_size` plus, per request, the probe statistics of ``n_probe`` probes
    over the (R, R) rack table and the servers, every candidate scored in one batched update
    (:mod:`.probe`, "Cost"). A pick costs one pass over the servers (the candidate plans come
    from a partition of the fitting servers and rack bit masks, not from netfit's sorted
    choice per pick) and netfit's :data:`PICK_OVERHEAD`."""
    n, picks, request, _, memory = _episode_size(instance)
    net = instance.net
    S, R = net.n_servers, net.n_racks
    K = options.n_probe
    probe = (R * R + S) * K + PROBE_OVERHEAD
    # the episode's Cache, and 1 KiB more per request: its plans span several servers
    memory += 8.0 * (3 * K * R * R + S * R + 2 * K * S) + _nara_probe.cache_memory(net, K) \
        + 1024.0 * n
    return Size(memory, n * (request + probe) + picks * (S + R + PICK_OVERHEAD["netfit"]))


def milp_estimate(instance: nara.Instance, options: MilpOptions) -> Size:
    """:func:`episode_estimate` plus one per-request MILP per arrival (formulation
    "request": about 1 KiB and 50 operations of Pyomo per variable and constraint to build;
    the solve itself is bounded by ``time_limit``)."""
    del options
    n, picks, request, pick, memory = _episode_size(instance)
    n_vars, n_cons = nara.FORMULATIONS["request"].estimate_size(instance)
    model = float(n_vars + n_cons)
    return Size(memory + 1024.0 * model, n * (request + 50.0 * model) + picks * pick)


HEURISTICS: dict[str, Heuristic] = {
    "random": Heuristic(allocate_random, NoOptions, _picking("random"),
                        "Random baseline (section 4.1): random useful servers, seeded"),
    "tetris": Heuristic(allocate_tetris, TetrisOptions, _picking("tetris"),
                        "Tetris baseline (Appendix D.1): cosine similarity, rack penalty"),
    "nalb": Heuristic(allocate_nalb, NoOptions, _picking("nalb"),
                      "NALB baseline (Appendix D.2): bandwidth-weighted BFS, widest routes"),
    "nulb": Heuristic(allocate_nulb, NoOptions, _picking("nulb"),
                      "NULB baseline (Appendix D.2): unweighted BFS, widest routes"),
    "netfit": Heuristic(allocate_netfit, NoOptions, episode_estimate,
                        "ours: feasibility-checked, locality-first best fit"),
    "netfit-probe": Heuristic(allocate_netfit_probe, ProbeOptions, probe_estimate,
                              "ours: netfit with probe look-ahead and admission control"),
    "nara": Heuristic(_nara_agent.allocate_nara, _nara_agent.Options, _nara_agent.estimate,
                      "Nara (paper 001): the learned GNN policy (PPO), greedy; numpy rollout"),
    "nara-netfit": Heuristic(_nara_netfit_learned.allocate, _nara_netfit_learned.Options,
                             _nara_netfit_learned.estimate,
                             "ours: learned policy (GNN + PPO) over netfit-probe's candidates "
                             "and reject, netfit features; numpy rollout"),
    "offline-search": Heuristic(_nara_offline.allocate_offline_search,
                                _nara_offline.OfflineSearchOptions,
                                _nara_offline.offline_search_estimate,
                                "OFFLINE (knows the whole episode): local search over netfit's "
                                "refusals; a lower estimate of the offline optimum"),
    "milp": Heuristic(allocate_milp, MilpOptions, milp_estimate,
                      "per-request MILP (HiGHS at every arrival; small topologies only)"),
}

#: the heuristic to use (docs/nara.md: the best acceptance of the online allocators)
RECOMMENDED = "netfit-probe"
