"""``offline-search``: an *offline* allocator for Nara (paper 001; ours). It knows the whole
episode in advance, so it is no online allocator: it measures how many requests an allocation
that sees the future can accept, i.e. which part of an online allocator's distance to an upper
bound is the price of being online.

The allocation is netfit's (:mod:`.netfit`: locality-first best fit, every plan checked against
constraint 3), replayed in arrival order, except that the requests of a *refusal set* F are
dropped on arrival and the requests of a *placement map* V are placed by their V[i]-th
candidate plan (:func:`plans`: netfit's alternatives, in netfit's order) instead of netfit's
first. A local search over (F, V) (seeded, deterministic for a fixed number of iterations):

* start: the better of F = {} (netfit itself) and F = the requests netfit-probe drops (its
  admission control's choices, replayed with netfit's placements);
* moves "refuse" and "place": take a request j that the current replay drops without being in
  F (the first one with probability 1/2, else a random one) and one accepted request i < j
  still held at step j, drawn with probability proportional to its volume (CPU and memory
  shares of the data centre times its holding period); with probability ``p_place`` give i a
  random other candidate plan (V[i] = 1 ... :data:`PLAN_VARIANTS`, modulo the number of
  plans), else add i to F: freeing or moving what i holds may let j and later requests in;
* move "admit" (probability ``p_admit``): remove a random request from F, or from V (back to
  netfit's plan);
* a move is kept when the replay accepts at least as many requests as before (plateau moves
  are allowed, so the search drifts among equally good refusal sets).

Every replay restarts from a snapshot of the simulator at the first step the move changes
(snapshots every ``stride`` steps, so long episodes stay within memory). The best replay found
and netfit-probe's own allocation are compared and the better is returned, so the result is
never below netfit-probe's. Stops after ``iterations`` moves, after ``time_limit`` CPU seconds,
or as soon as it accepts as many requests as the ``aggregate`` upper bound
(:mod:`dmlopt.models.nara.bounds`, computed first with :data:`BOUND_SECONDS` seconds): then the
allocation is optimal.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import pydantic

from dmlopt.contract import Options, Size
from dmlopt.heuristics.nara import netfit as _netfit
from dmlopt.models import nara
from dmlopt.models.nara.bounds import aggregate_bound
from dmlopt.models.nara.sim import State
from dmlopt.validation import time_limit_field

#: seconds of the aggregate upper bound computed first (the search stops when it meets it)
BOUND_SECONDS = 10.0

#: a "place" move gives a request its k-th candidate plan, k drawn from 1 to this
PLAN_VARIANTS = 6

#: bytes of simulator snapshots kept at most (a larger episode snapshots every k-th step)
SNAPSHOT_BYTES = 64 * 2**20


class OfflineSearchOptions(Options):
    """Options of ``offline-search`` (module docstring)."""

    iterations: int = pydantic.Field(
        default=2000, ge=0, le=10**7, description="local-search moves (each replays the "
        "episode from the first step it changes)")
    time_limit: float = time_limit_field(
        240.0, "CPU seconds (at most a day); the search stops earlier after `iterations` "
        "moves")
    p_admit: float = pydantic.Field(
        default=0.25, ge=0, le=1, description="probability that a move admits a refused "
        "request again instead of refusing one more")
    restarts: int = pydantic.Field(
        default=3, ge=1, le=1000, description="searches from the best distinct starting "
        "refusal sets, sharing the iterations")
    p_place: float = pydantic.Field(
        default=0.8, ge=0, le=1, description="probability that a move on a held request "
        "gives it another candidate plan (\"place\") instead of refusing it (0: the "
        "refusal-only search)")


def _snapshot(state: State) -> State:
    """A copy of the simulator's mutable state (the topology tables are shared)."""
    snap = copy.copy(state)
    snap.cpu_free = state.cpu_free.copy()
    snap.mem_free = state.mem_free.copy()
    snap.bw = state.bw.copy()
    snap.heap = list(state.heap)
    snap.held = dict(state.held)
    snap.allocations = list(state.allocations)
    return snap


class _Replay:
    """netfit's allocation of an episode in arrival order with a refusal set, restartable from
    snapshots of the current replay."""

    def __init__(self, instance: nara.Instance) -> None:
        self.instance = instance
        self.n = n = len(instance.requests)
        self.choose = _netfit.chooser(instance)
        self.rng = np.random.default_rng(0)  # netfit does not draw; run_episode's convention
        net = instance.net
        per = 8 * (3 * net.n_servers + net.n_links) + 64 * n
        self.stride = max(1, -(-per * n // SNAPSHOT_BYTES))
        self.root = State(instance)

    def run(self, refuse: set[int], snaps: dict[int, State] | None = None, start: int = 0,
            variants: dict[int, int] | None = None
            ) -> tuple[list[nara.Allocation | None], dict[int, State]]:
        """Replay from the latest snapshot at or before ``start`` (the start if none), request
        i placed by its ``variants[i]``-th candidate plan (:func:`plans`; netfit's own plan
        when absent); (allocations, snapshots of this replay)."""
        variants = variants or {}
        snaps = dict(snaps or {})
        k = (min(start, self.n) // self.stride) * self.stride
        while k > 0 and k not in snaps:
            k -= self.stride
        state = _snapshot(snaps[k] if k > 0 else self.root)
        snaps = {q: s for q, s in snaps.items() if q <= k}
        for j in range(k, self.n):
            if j % self.stride == 0 and j not in snaps:
                snaps[j] = _snapshot(state)
            state.begin(j)
            if j in refuse:
                state.drop()
                continue
            v = variants.get(j, 0)
            result = self.choose(state, self.rng) if v == 0 else _place(state, v)
            if state.req is None:
                continue
            if result is False:
                state.drop()
            else:
                state.finish()
        return state.solution().allocations, snaps


def plans(state: State, singles: int = 3) -> list[list[int]]:
    """Candidate plans (servers in pick order) for the pending request, netfit's order: up to
    ``singles`` single servers (best fit first), then one plan per rack that holds the request
    (best-fitting rack first), then the multi-rack plans of every seed rack (fewest racks,
    then fewest servers, then best fit); duplicates removed.

    Parameters
    ----------
    state : State
        The simulator with a pending request.
    singles : int
        Single-server plans kept at most (default 3).

    Returns
    -------
    list of list of int
        The plans; each is checked against constraint 3 only when it is picked (a plan that
        fails then drops the request).

    References
    ----------
    Ours: the alternatives netfit's steps 1-3 (:mod:`.netfit`) rank, all of them instead of
    the first; paper 001 (Shabka, Zervas), section 3.1 (constraints 1-3).
    """
    fits, _ = _netfit.single_fits(state)
    out: list[list[int]] = [[int(s)] for s in fits[:singles]]
    elig, tc, tm = _netfit.rack_totals(state)
    out += list(_netfit.rack_plans(state, elig, tc, tm))
    multi = _netfit.multi_rack_plans(state, elig, tc, tm)
    out += [got for _, got in sorted(multi, key=lambda x: x[0])]
    seen: set[tuple[int, ...]] = set()
    uniq = []
    for got in out:
        if tuple(sorted(got)) not in seen:
            seen.add(tuple(sorted(got)))
            uniq.append(got)
    return uniq


def _place(state: State, v: int) -> bool:
    """Pick the servers of plan ``v`` (modulo the number of plans) of :func:`plans`; False
    (drop) when there is none or constraint 3 fails."""
    cands = plans(state)
    if not cands:
        return False
    for s in cands[v % len(cands)]:
        if not state.add(s):
            return False
    return state.covered


def _volumes(instance: nara.Instance) -> np.ndarray:
    net = instance.net
    c_tot, m_tot = max(float(net.cpu.sum()), 1.0), max(float(net.mem.sum()), 1.0)
    return np.array([(r.c / c_tot + r.m / m_tot) * r.t for r in instance.requests]) + 1e-9


def allocate_offline_search(instance: nara.Instance, *, seed: int = 0, iterations: int = 2000,
                            time_limit: float = 240.0, p_admit: float = 0.25,
                            restarts: int = 3, p_place: float = 0.8) -> nara.Solution:
    """Offline local search over netfit's refusals (module docstring).

    Parameters
    ----------
    instance : Instance
        A Nara episode; all of its requests are read before the first is allocated.
    seed : int
        Seed of the moves.
    iterations : int
        Moves at most (default 2000).
    time_limit : float
        CPU seconds at most (default 240).
    p_admit : float
        Probability of an "admit" move (default 0.25).
    restarts : int
        Searches, one from each of the best distinct starts, sharing the iterations
        (default 3).
    p_place : float
        Probability that a move on a held request is "place" rather than "refuse"
        (default 0.8).

    Returns
    -------
    Solution
        The best replay found, or netfit-probe's allocation when that accepts more.

    References
    ----------
    Ours (not the paper's): paper 001 (Shabka, Zervas), sections 3.1-3.2 define the episode;
    the search knows every request in advance, as the offline optimum of formulation
    ``offline`` does, and is a lower estimate of that optimum.
    """
    from dmlopt.heuristics.nara import allocate_netfit_probe

    t0 = time.process_time()
    rng = np.random.default_rng(seed)
    reqs = instance.requests
    probe = allocate_netfit_probe(instance)
    replay = _Replay(instance)
    vol = _volumes(instance)
    ends = np.array([i + r.t for i, r in enumerate(reqs)])
    cap = int(aggregate_bound(instance, time_limit=BOUND_SECONDS, primal=False).bound)
    starts = _starts(instance, replay, probe)
    best: list[nara.Allocation | None] = list(starts[0][1])
    per = iterations // len(starts[:restarts])
    for cur_f, cur in starts[:restarts]:
        if _count(best) >= cap:
            break  # proven optimal: nothing left to find
        cur, snaps = replay.run(cur_f)
        got = _search(replay, cur_f, cur, snaps, rng, vol, ends, per, p_admit,
                      t0 + time_limit, cap, p_place)
        if _count(got) > _count(best):
            best = got
    if _count(probe.allocations) > _count(best):
        return probe
    return nara.Solution(allocations=best)


def _starts(instance: nara.Instance, replay: _Replay, probe: nara.Solution
            ) -> list[tuple[set[int], list[Any]]]:
    """Refusal sets to start from, best first: {}, netfit-probe's drops, and "refuse every
    request whose volume exceeds the q-quantile" for q = 0.50, 0.52, ..., 1 and three volume
    measures: CPU + memory share, that plus the access-link share, and the largest of the
    three; (refusals, replay), at most one per accepted count."""
    reqs = instance.requests
    net = instance.net
    n = len(reqs)
    c_tot, m_tot = max(float(net.cpu.sum()), 1.0), max(float(net.mem.sum()), 1.0)
    max_c, max_m = max(int(net.cpu.max()), 1), max(int(net.mem.max()), 1)
    n_srv = max(net.n_servers, 1)
    need = np.array([max(-(-r.c // max_c), -(-r.m // max_m), 1) for r in reqs])
    cm = np.array([(r.c / c_tot + r.m / m_tot) * r.t for r in reqs])
    bw = np.array([(need[i] > 1) * need[i] * r.b / n_srv * r.t for i, r in enumerate(reqs)])
    big = np.array([max(r.c / c_tot, r.m / m_tot) * r.t for r in reqs])
    sets: list[set[int]] = [set(), {i for i, al in enumerate(probe.allocations) if al is None}]
    for v in (cm, cm + bw, np.maximum(big, bw)):
        for q in np.linspace(0.5, 1.0, 26):
            th = float(np.quantile(v, q))
            sets.append({i for i in range(n) if v[i] > th})
    out: dict[int, tuple[set[int], list[Any]]] = {}
    seen: set[frozenset[int]] = set()
    for f in sets:
        if frozenset(f) in seen:
            continue
        seen.add(frozenset(f))
        allocs, _ = replay.run(f)
        out.setdefault(_count(allocs), (f, allocs))
    return [out[k] for k in sorted(out, reverse=True)]


def _search(replay: _Replay, cur_f: set[int], cur: list[Any], snaps: dict[int, State],
            rng: np.random.Generator, vol: np.ndarray, ends: np.ndarray, iterations: int,
            p_admit: float, deadline: float, cap: int, p_place: float = 0.0) -> list[Any]:
    """The local search of the module docstring from refusals ``cur_f`` (replay ``cur``);
    the best allocations found."""
    n = replay.n
    best = list(cur)
    cur_v: dict[int, int] = {}
    for _ in range(iterations):
        if time.process_time() > deadline or _count(best) >= cap:
            break
        acc = np.array([al is not None for al in cur])
        new_f, new_v = set(cur_f), dict(cur_v)
        drops = [j for j in range(n) if not acc[j] and j not in cur_f]
        if not drops and not cur_f:
            break  # everything accepted
        if not drops or ((cur_f or cur_v) and rng.random() < p_admit):
            # undo: a refused request back, or a request back to netfit's plan
            undo = sorted(cur_f) + [n + i for i in sorted(cur_v)]
            change = int(rng.choice(undo))
            if change < n:
                new_f.discard(change)
            else:
                change -= n
                del new_v[change]
        else:
            j = drops[0] if rng.random() < 0.5 else int(rng.choice(drops))
            held = np.flatnonzero(acc[:j] & (ends[:j] > j))
            if not held.size:
                continue
            w = vol[held]
            change = int(rng.choice(held, p=w / w.sum()))
            if rng.random() < p_place:
                new_v[change] = int(rng.integers(1, PLAN_VARIANTS + 1))
            else:
                new_f.add(change)
        got, got_snaps = replay.run(new_f, snaps, change, new_v)
        if _count(got) >= _count(cur):
            cur, snaps, cur_f, cur_v = got, got_snaps, new_f, new_v
            if _count(cur) > _count(best):
                best = list(cur)
    return best


def _count(allocs: list[Any]) -> int:
    return sum(al is not None for al in allocs)


def offline_search_estimate(instance: nara.Instance, options: OfflineSearchOptions) -> Size:
    """Memory: the snapshots (at most :data:`SNAPSHOT_BYTES`), an episode and the aggregate
    bound; work: the aggregate bound, a netfit-probe episode and one netfit replay per start
    and per iteration."""
    from dmlopt.heuristics.nara import ProbeOptions, episode_estimate, probe_estimate
    from dmlopt.models.nara.bounds import BOUNDS, AggregateOptions

    one = episode_estimate(instance, options)
    probe = probe_estimate(instance, ProbeOptions())
    agg = BOUNDS["aggregate"].estimate(instance, AggregateOptions())
    return Size(one.memory + probe.memory + agg.memory + SNAPSHOT_BYTES,
                agg.work + probe.work + one.work * (80 + options.iterations))

