"""``rts``: our TAP heuristic for QAPLIB-scale instances (iterated robust tabu search, BLS-style,
with adaptive restarts).

Ours, not the paper's (paper 000 has CLE and ABM, section IV). It searches the padded QAP of
:mod:`dmlopt.heuristics.tap.search` (N = n min(K, m) slots, dummy modules in the free slots),
so capacities K > 1 and m < n modules are handled by the same swap move: a swap of a module with a
dummy moves it to a VM with free capacity. The search, following the literature:

* Tabu phases: Taillard's robust tabu search (randomised tenure in [0.9 T, 1.1 T] redrawn every
  2N iterations, aspiration by objective and by age), with Taillard's O(N^2)-per-iteration
  delta-matrix update (numba kernel :mod:`dmlopt.heuristics.tap.robust_tabu_kernel`). A phase ends
  after ``stall * N`` iterations without improving its own best. Taillard's T is N; here T is
  ``tenure * N`` times a level of :data:`TENURES` (0.25, 0.5, 1) drawn for each phase that
  follows a kick by the levels' records of improving the chain's reference (class :class:`Arms`,
  ours): on chr-like instances (tree-shaped flows, n = 30-40) the shorter tenures cut the spread
  over seeds from 2-10 % to 0-5 %, while tai*a keeps choosing T = N often.
* Iterated tabu search (Misevicius 2005), with an adaptive perturbation strength in the spirit of
  breakout local search (Benlic and Hao 2013): a chain of phases; the next phase starts from the
  chain's reference solution (its best phase result) after L random swaps, L one of 5 levels
  geometric from ``max(2, jump_min * N)`` to ``jump_max * N``, drawn by each level's record of
  improving the reference during the run (class :class:`Jumps`, ours; BLS instead grows L after
  each failure). Small kicks win on narrow valleys (tree-shaped or sparse flows: with BLS's
  growing kicks, chr-like instances ended 2-8 % above what other seeds found), larger ones on
  rugged random instances.
* Chains and a small memetic layer: after ``restart`` phases without improving its reference, a
  chain ends, its result enters an elite pool of ``population`` distinct solutions (replacing the
  worst when better), and a new chain starts (class :class:`Starts`, chosen adaptively during the
  run): from a uniformly random solution, from a crossover of two pool members (the assignments
  both share are kept, the rest placed at random: the spirit of Merz and Freisleben's memetic QAP
  algorithm, which suits structured instances such as tai*b), or from a pool member after
  ``jump_max * N`` random swaps. Random starts until the pool holds 3 members; then each kind is
  drawn in proportion to its record on this run (a chain wins when its result beats the pool's
  median at its start), with a prior that keeps every kind in play. Nothing depends on the
  instance's name or family; the defaults (``stall`` = 5, ``restart`` = 50, ...) were measured on
  the 76 shipped QAPLIB instances, one set for all.

Stopping: a time budget ``time_limit`` (default ``max(1, 10 (N/100)^2)`` seconds: about 10 s at
N = 100), an iteration budget ``iterations`` (total tabu iterations; when neither is given, a cap of
``2000 N^2`` that ends runs on tiny instances in milliseconds), and ``target`` (stop as soon as the
objective is <= target), whichever comes first. ``clock="cpu"`` measures the budget in CPU seconds
of this process (one core's worth of work when the machine is shared). Deterministic for a seed
when only ``iterations`` bounds the run (``time_limit=0`` disables the clock); with a time budget,
where it stops depends on the machine's speed and load, so the result is reproducible only on a
best-effort basis.

References
----------
* E. Taillard: Robust taboo search for the quadratic assignment problem. Parallel Computing 17
  (1991) 443-455.
* A. Misevicius: A tabu search algorithm for the quadratic assignment problem. Computational
  Optimization and Applications 30 (2005) 95-111 (iterated tabu search).
* U. Benlic, J.-K. Hao: Breakout local search for the quadratic assignment problem. Applied
  Mathematics and Computation 219 (2013) 4800-4815.
* P. Merz, B. Freisleben: Fitness landscape analysis and memetic algorithms for the quadratic
  assignment problem. IEEE Transactions on Evolutionary Computation 4 (2000) 337-352.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pydantic

from dmlopt.contract import Options as ContractOptions
from dmlopt.contract import Size
from dmlopt.errors import InstanceError, Interrupted
from dmlopt.heuristics.tap import search as ts
from dmlopt.models.tap import Instance, Solution

#: imported lazily by :func:`_kern`; the benchmark harness imports it before a timed run
PRELOAD = ("dmlopt.heuristics.tap.robust_tabu_kernel",)


def _kern():
    """The compiled kernel (:mod:`dmlopt.heuristics.tap.robust_tabu_kernel`), imported on the
    first search, not with this module (numba and the cached kernels take about a second)."""
    from dmlopt.heuristics.tap import robust_tabu_kernel

    return robust_tabu_kernel


def __getattr__(name: str):
    """``robust_tabu.kern``: the kernel module, loaded on first access (PEP 562)."""
    if name == "kern":
        return _kern()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Options(ContractOptions):
    """Options of ``rts`` (validated; a bad value raises :class:`InstanceError`)."""

    time_limit: float | None = pydantic.Field(
        default=None, ge=0, le=86_400,
        description="seconds (at most a day); default max(1, 10 (N/100)^2) with N slots; "
        "0: no time limit (then give iterations)")
    iterations: int | None = pydantic.Field(
        default=None, ge=1, description="total tabu iterations (deterministic budget); default "
        "2000 N^2 if time_limit is not given either, else none")
    target: float | None = pydantic.Field(
        default=None, description="stop as soon as the objective is <= target")
    stall: float = pydantic.Field(
        default=5.0, gt=0, description="a tabu phase ends after stall * N iterations without "
        "improving its best")
    jump_min: float = pydantic.Field(
        default=0.0, ge=0, le=1, description="smallest perturbation, in random swaps per slot "
        "(at least 2 swaps)")
    jump_max: float = pydantic.Field(
        default=0.5, gt=0, le=1, description="largest perturbation, in random swaps per slot; "
        "the levels in between are geometric and chosen adaptively")
    restart: int = pydantic.Field(
        default=50, ge=1, description="phases without improving the chain's reference "
        "solution before the chain ends and a new one starts")
    tenure: float = pydantic.Field(
        default=1.0, gt=0, le=2, description="tabu tenure, in multiples of N slots: each "
        "phase draws a level 0.25, 0.5 or 1 (adaptively) and redraws its tenure in [0.9, 1.1] "
        "* level * tenure * N (Taillard: 1)")
    population: int = pydantic.Field(
        default=10, ge=1, description="elite pool of chain results; a new chain starts from "
        "a random solution until the pool holds min(3, population) members, then from a random "
        "solution, a crossover of two members or a kicked member (chosen adaptively)")
    progress: float = pydantic.Field(
        default=0.0, ge=0, le=3600, description="seconds between progress lines on stderr "
        "(elapsed and budget, best objective, iterations, chains); 0: none (the command line "
        "sets 10 when stderr is a terminal)")
    clock: Literal["wall", "cpu"] = pydantic.Field(
        default="wall", description="what time_limit measures: wall-clock seconds, or this "
        "process's CPU seconds (one core's worth of work on a shared machine)")


def options(**values: object) -> Options:
    """Validate options; the first broken rule raises ``InstanceError(field, value, rule)``."""
    try:
        return Options(**values)
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "options"
        raise InstanceError(field, err.get("input"), err["msg"]) from None


def default_time_limit(size: int) -> float:
    """``max(1, 10 (N/100)^2)`` seconds for N slots."""
    return max(1.0, 10.0 * (size / 100.0) ** 2)


def default_iterations(size: int) -> int:
    """``2000 N^2``: the iteration cap when neither time_limit nor iterations is given (tiny
    instances stop there in milliseconds; from N = 20 on the time budget ends the run first)."""
    return 2000 * size * size


#: operations one CPU second is charged (a numpy element operation costs about a nanosecond;
#: the unit of every work estimate)
OPS_PER_SECOND = 1e9


def estimate(instance: Instance, opts: Options | None = None) -> Size:
    """(memory bytes, work operations) of a run: O(N^2) memory; O(N^2) work per iteration
    (3 N^2 charged).

    A run bounded by a time budget of T seconds (the default, wall clock or CPU) computes at
    most T CPU seconds on its one thread, :data:`OPS_PER_SECOND` T operations (charged 1.1 T
    for the reading of the clock between kernel calls and the final bookkeeping), plus the
    kernel call under way when the clock runs out (:func:`_chunk` iterations) and the start's
    O(N^2) setup; a run bounded by an iteration budget, 3 N^2 per iteration: the smaller of the two
    when both apply. On a loaded machine a wall-clock run gets less CPU than its budget, so
    the estimate is then above the CPU time measured.
    """
    opts = opts or Options()
    size = instance.n * min(instance.K, instance.m)
    memory = 8 * 8 * size * size  # F, B, P, delta, tabu (and transpose), t2, caller copies
    per_iter = 3.0 * size * size
    setup = 20.0 * size * size
    if opts.iterations is not None:
        iters = float(opts.iterations)
    elif opts.time_limit is None:  # the default budget also stops at the iteration cap
        iters = float(default_iterations(size))
    else:
        iters = math.inf
    by_iters = per_iter * iters
    if opts.time_limit == 0:  # no clock: the iteration budget (inf without one: refused)
        return Size(float(memory), setup + by_iters)
    seconds = opts.time_limit if opts.time_limit else default_time_limit(size)
    # 10 % over the budget: the clock is read between kernel calls, and the run ends with its
    # own bookkeeping (measured: 1.0-1.06 times the budget in CPU seconds, m = 16 and 32)
    by_clock = 1.1 * OPS_PER_SECOND * seconds + per_iter * _chunk(size)
    return Size(float(memory), setup + min(by_clock, by_iters))


@dataclass
class Outcome:
    """Result of :func:`search`: the best permutation, its cost, and counters."""

    perm: np.ndarray
    cost: float
    iterations: int
    phases: int
    restarts: int
    reached_target: bool
    seconds: float
    starts: dict[str, list[int]] | None = None  # chain starts: kind -> [chains, wins]
    interrupted: bool = False  # stopped by Ctrl-C (perm, cost: the best so far)


def _perturb(qap: ts.Padded, perm: np.ndarray, rng: np.random.Generator, swaps: int) -> None:
    """``swaps`` random useful swaps (a real module with a slot on another VM), in place."""
    size, m, kc = qap.size, qap.m, qap.kc
    if m == 0 or size < 2:
        return
    for _ in range(swaps):
        for _try in range(8):
            r = int(rng.integers(m))
            s = int(rng.integers(size))
            if perm[r] // kc != perm[s] // kc:
                perm[r], perm[s] = perm[s], perm[r]
                break


def _better(a: float, b: float) -> bool:
    """``a`` improves on ``b`` by more than a relative 1e-9 (any finite a improves on b = inf;
    the tolerance of an infinite b would be NaN)."""
    if not math.isfinite(b):
        return a < b
    return a < b - 1e-9 * max(1.0, abs(b))


def _offer(pool: list[tuple[float, np.ndarray]], perm: np.ndarray, cost: float,
           capacity: int) -> None:
    """Add a chain's result to the elite pool: if not a duplicate (same cost) and either the
    pool has room or it beats the worst member, which it then replaces."""
    if any(abs(c - cost) <= 1e-9 * max(1.0, abs(cost)) for c, _ in pool):
        return
    if len(pool) < capacity:
        pool.append((cost, perm.copy()))
    else:
        worst = max(range(len(pool)), key=lambda k: pool[k][0])
        if cost < pool[worst][0]:
            pool[worst] = (cost, perm.copy())


def _crossover(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Uniform-like crossover for permutations: keep the assignments both parents share, place
    the other facilities in the remaining slots at random (Merz and Freisleben 2000, UX/DPX
    spirit: the child keeps the parents' common structure)."""
    child = np.where(a == b, a, -1)
    free_fac = np.flatnonzero(child < 0)
    used = np.zeros(a.size, dtype=bool)
    used[child[child >= 0]] = True
    free_slots = np.flatnonzero(~used)
    child[free_fac] = rng.permutation(free_slots)
    return child.astype(np.int64)


class Arms:
    """Probability matching over a few settings (ours): each draw picks a level with probability
    proportional to ``(wins + 1) / (draws + 2)`` (a prior that starves no level); :meth:`score`
    credits the last draw. Used for the kick strength and the tabu tenure of a phase, a win being
    a phase that improves the chain's reference."""

    def __init__(self, levels: list) -> None:
        self.levels = list(levels)
        self.trials = np.zeros((len(self.levels), 2), dtype=np.int64)
        self._last = -1

    def draw(self, rng: np.random.Generator):
        """The level of the next phase."""
        w = (self.trials[:, 1] + 1) / (self.trials[:, 0] + 2)
        self._last = int(rng.choice(len(w), p=w / w.sum()))
        self.trials[self._last, 0] += 1
        return self.levels[self._last]

    def score(self, improved: bool) -> None:
        """Credit the last draw with the phase's outcome (no draw pending: nothing)."""
        if self._last >= 0:
            self.trials[self._last, 1] += int(improved)
            self._last = -1


class Jumps(Arms):
    """Adaptive perturbation strength (ours): the number of random swaps before a phase is one of
    5 levels, geometric from ``jmin`` to ``jmax``, drawn by :class:`Arms`. Small kicks win on
    instances with narrow valleys (tree or sparse flows), larger ones when small kicks fall back
    into the same local optimum."""

    def __init__(self, jmin: int, jmax: int) -> None:
        super().__init__(sorted({int(round(x)) for x in np.geomspace(jmin, jmax, 5)}))


#: tabu tenure levels of a phase, as multiples of the ``tenure`` option (Taillard's 1: rugged
#: random instances; shorter tenures suit sparse, tree-like flows)
TENURES = (0.25, 0.5, 1.0)


class Starts:
    """Adaptive choice of how a new chain starts (ours): ``random`` (a uniformly random
    solution), ``crossover`` (of two elite members, :func:`_crossover`) or ``kick`` (an elite
    member after ``jump_max * N`` random swaps).

    Random starts until the pool holds ``warm`` members; then each kind is drawn with probability
    proportional to ``(wins + 1) / (chains + 2)``, where a chain wins when its result beats the
    median cost of the pool at its start. So the run shifts its restarts to what has worked on
    this instance (crossover on structured ones, kicks on rugged ones), never to zero for any
    kind.
    """

    KINDS = ("random", "crossover", "kick")

    def __init__(self, warm: int) -> None:
        self.warm = max(2, warm)
        self.trials: dict[str, list[int]] = {k: [0, 0] for k in self.KINDS}
        self._pending: tuple[str, float] | None = None

    def score(self, result: float) -> None:
        """Credit the chain that just ended with ``result`` to the kind that started it."""
        if self._pending is not None:
            kind, median = self._pending
            self.trials[kind][1] += int(_better(result, median))
            self._pending = None

    def start(self, qap: ts.Padded, pool: list[tuple[float, np.ndarray]],
              rng: np.random.Generator, jump: int) -> np.ndarray:
        """The start of the next chain (and remember its kind for :meth:`score`)."""
        size = qap.size
        if len(pool) < self.warm:
            kind = "random"
        else:
            w = np.array([(self.trials[k][1] + 1) / (self.trials[k][0] + 2) for k in self.KINDS])
            kind = self.KINDS[int(rng.choice(len(w), p=w / w.sum()))]
        self.trials[kind][0] += 1
        if len(pool) >= 2:
            self._pending = (kind, float(np.median([c for c, _ in pool])))
        if kind == "random":
            return rng.permutation(size).astype(np.int64)
        if kind == "crossover":
            i, j = rng.choice(len(pool), 2, replace=False)
            return _crossover(pool[i][1], pool[j][1], rng)
        child = pool[int(rng.integers(len(pool)))][1].copy()
        _perturb(qap, child, rng, jump)
        return child


def _chunk(size: int) -> int:
    """Iterations per kernel call: a few tens of milliseconds, so the clock is checked often."""
    return int(min(1 << 16, max(64, 20_000_000 // (size * size))))


class _Progress:
    """One line on stderr every ``every`` seconds of the run's clock (0: never): elapsed and
    budget, best objective so far (of the padded QAP, which is the TAP objective), iterations,
    chains. For long runs (hundreds of modules: the default budget grows with N^2)."""

    def __init__(self, every: float, limit: float, t0: float, now) -> None:
        self.every, self.limit, self.t0, self.now = every, limit, t0, now
        self.next = t0 + every

    def maybe(self, best: float, out: Outcome) -> None:
        if self.every <= 0:
            return
        t = self.now()
        if t < self.next:
            return
        self.next = t + self.every
        budget = f" of {self.limit:g}" if self.limit > 0 else ""
        print(f"rts: {t - self.t0:.0f}{budget} s, best {best:.12g}, {out.iterations} "
              f"iterations, {out.restarts + 1} chains", file=sys.stderr, flush=True)


def _clock(opts: Options):
    """The clock ``time_limit`` is measured on: wall (default) or this process's CPU time."""
    return time.perf_counter if opts.clock == "wall" else time.process_time


def search(qap: ts.Padded, perm: np.ndarray, rng: np.random.Generator, opts: Options,
           started: float | None = None) -> Outcome:
    """Iterated robust tabu search with adaptive perturbation from ``perm`` (module docstring);
    the time limit runs from ``started`` (a reading of the options' clock), default now."""
    now = _clock(opts)
    t0 = now() if started is None else started
    kern = _kern()
    size = qap.size
    limit = default_time_limit(size) if opts.time_limit is None else opts.time_limit
    deadline = t0 + limit if limit > 0 else math.inf
    if opts.iterations is not None:
        budget = opts.iterations
    elif opts.time_limit is None:  # both defaults: the iteration cap only small N reach
        budget = default_iterations(size)
    else:
        budget = np.iinfo(np.int64).max
    target = -math.inf if opts.target is None else float(opts.target)
    f, b = np.ascontiguousarray(qap.F), np.ascontiguousarray(qap.B)
    p = np.asarray(perm, dtype=np.int64).copy()
    best = p.copy()
    best_cost = kern.cost(f, b, p)
    out = Outcome(best.copy(), best_cost, 0, 0, 0, best_cost <= target, 0.0)
    if size < 2 or out.reached_target or best_cost <= 0:
        out.seconds = now() - t0
        return out
    st = kern.state(size)
    si = np.zeros(3, dtype=np.int64)
    sf = np.zeros(2)
    report = _Progress(opts.progress, limit, t0, now)
    try:
        _loop(qap, f, b, rng, opts, out, st, si, sf, now, deadline, budget, target, report)
    except KeyboardInterrupt:  # Ctrl-C: keep the best so far (the caller raises Interrupted)
        out.interrupted = True
    out.perm, out.cost = out.perm.copy(), float(kern.cost(f, b, out.perm))
    out.reached_target = out.cost <= target
    out.seconds = now() - t0
    return out


def _loop(qap: ts.Padded, f: np.ndarray, b: np.ndarray, rng: np.random.Generator, opts: Options,
          out: Outcome, st: Any, si: np.ndarray, sf: np.ndarray, now, deadline: float,
          budget: int, target: float, report: _Progress) -> None:
    """The chains of :func:`search` until a budget or the target ends the run; ``out.perm`` and
    ``out.cost`` always hold the best solution so far (an interrupt loses nothing)."""
    kern = _kern()
    size = qap.size
    p = out.perm.copy()
    best, best_cost = p.copy(), out.cost
    tenures = Arms(list(TENURES))
    kicked = False  # the phase starts from a kick (only those phases credit the arms)
    aspiration = 5 * size * size
    stall = max(1, int(opts.stall * size))
    jmin = max(2, int(round(opts.jump_min * size)))
    jmax = max(jmin, int(round(opts.jump_max * size)))
    jumps = Jumps(jmin, jmax)
    ref, ref_cost = p.copy(), best_cost
    since_ref = 0
    pool: list[tuple[float, np.ndarray]] = []  # elite chain results (memetic layer)
    starts = Starts(min(3, opts.population))
    out.starts = starts.trials
    chunk = _chunk(size)
    while True:
        scale = tenures.draw(rng) if kicked else TENURES[int(rng.integers(len(TENURES)))]
        lo = max(1, int(0.9 * scale * opts.tenure * size))
        hi = max(lo + 1, int(1.1 * scale * opts.tenure * size) + 1)
        si[1] = int(rng.integers(lo, hi))
        st.p[:] = p
        c = kern.reset(f, b, qap.m, qap.kc, st.p, st.bp, st.q, st.delta, st.tabu, st.t2,
                       st.iwork)
        sf[0] = sf[1] = c
        si[2] = si[0]
        phase_best = p.copy()
        code = kern.BUDGET
        while code == kern.BUDGET:
            if out.iterations >= budget or now() >= deadline:
                break
            n_it = int(min(chunk, budget - out.iterations))
            before = int(si[0])
            code = kern.run(f, b, qap.m, qap.kc, st.p, st.bp, st.q, st.delta, st.tabu, st.tabu_t,
                            st.t2, st.work, st.iwork, phase_best, si, sf, n_it, stall, target,
                            aspiration, lo, hi, int(rng.integers(2**31 - 1)))
            out.iterations += int(si[0]) - before
            report.maybe(min(best_cost, float(sf[1])), out)
        out.phases += 1
        pc = float(kern.cost(f, b, phase_best))  # exact (sf[1] sums deltas)
        if _better(pc, best_cost):
            best, best_cost = phase_best.copy(), pc
            out.perm, out.cost = best, best_cost
        if kicked:
            jumps.score(_better(pc, ref_cost))
            tenures.score(_better(pc, ref_cost))
        if _better(pc, ref_cost):
            ref, ref_cost = phase_best.copy(), pc
            since_ref = 0
        else:
            since_ref += 1
        if code in (kern.TARGET, kern.STUCK) or best_cost <= target or best_cost <= 0:
            break
        if out.iterations >= budget or now() >= deadline:
            break
        if since_ref >= opts.restart:  # the chain is spent: keep its result, start another
            starts.score(ref_cost)
            _offer(pool, ref, ref_cost, opts.population)
            ref = starts.start(qap, pool, rng, jmax)
            ref_cost = math.inf
            since_ref = 0
            out.restarts += 1
            p = ref.copy()
            kicked = False
        else:
            p = ref.copy()
            _perturb(qap, p, rng, jumps.draw(rng))
            kicked = True


def rts(instance: Instance, *, seed: int = 0, time_limit: float | None = None,
        iterations: int | None = None, target: float | None = None, stall: float = 5.0,
        jump_min: float = 0.0, jump_max: float = 0.5, restart: int = 50, population: int = 10,
        tenure: float = 1.0, progress: float = 0.0,
        clock: str = "wall") -> Solution:
    """Iterated robust tabu search with BLS-style perturbation and restarts (ours).

    Starts from a uniformly random feasible assignment; the algorithm (tabu phases, adaptive
    kicks, chains and the elite pool) is described in :mod:`dmlopt.heuristics.tap.robust_tabu`.
    Stops at the first of ``time_limit``, ``iterations`` and ``target``.

    Parameters
    ----------
    instance : Instance
        The TAP instance.
    seed : int, optional
        Seed of the start and of every random choice (default 0).
    time_limit : float or None, optional
        Seconds (see ``clock``); None (default): ``max(1, 10 (N/100)^2)`` with N = n min(K, m)
        slots; 0: none (then ``iterations`` or ``target`` must bound the run).
    iterations : int or None, optional
        Total tabu iterations, a deterministic budget; None (default): ``2000 N^2`` when no
        time limit is given.
    target : float or None, optional
        Stop as soon as the objective is <= target (default None).
    stall : float, optional
        A tabu phase ends after ``stall * N`` iterations without improving its best (default 5).
    jump_min, jump_max : float, optional
        Smallest and largest kick, in random swaps per slot (defaults 0 and 0.5; the smallest
        is at least 2 swaps).
    restart : int, optional
        Phases without improving the chain's reference before a new chain starts (default 50).
    population : int, optional
        Size of the elite pool of chain results (default 10).
    tenure : float, optional
        Tabu tenure in multiples of N (default 1.0, Taillard's choice), in (0, 2].
    progress : float, optional
        Seconds between progress lines on stderr; 0 (default): none.
    clock : {"wall", "cpu"}, optional
        What ``time_limit`` measures: wall-clock seconds (default) or this process's CPU time.

    Returns
    -------
    Solution
        The best assignment found. Ctrl-C raises :class:`~dmlopt.errors.Interrupted` carrying it.

    References
    ----------
    Ours, on: E. Taillard, Robust taboo search for the QAP, Parallel Computing 17 (1991)
    (tabu phases and the O(N^2) delta matrix); A. Misevicius, Computational Optimization and
    Applications 30 (2005) (iterated tabu search); U. Benlic and J.-K. Hao, Breakout local
    search for the QAP, Applied Mathematics and Computation 219 (2013) (adaptive kicks); P. Merz
    and B. Freisleben, IEEE Trans. Evolutionary Computation 4 (2000) (the crossover). What it
    adds: kick sizes and tenures chosen by their record on the run, and chains restarted from
    an elite pool.
    """
    opts = options(time_limit=time_limit, iterations=iterations, target=target, stall=stall,
                   jump_min=jump_min, jump_max=jump_max, restart=restart, population=population,
                   tenure=tenure, progress=progress, clock=clock)
    if opts.jump_max < opts.jump_min:
        raise InstanceError("jump_max", jump_max, f"must be >= jump_min = {jump_min}")
    if opts.time_limit == 0 and opts.iterations is None and opts.target is None:
        raise InstanceError("time_limit", 0, "must be positive unless iterations or target "
                            "bounds the run")
    return solve(instance, seed, opts)[0]


def solve(instance: Instance, seed: int, opts: Options) -> tuple[Solution, Outcome]:
    """Run :func:`search` on the padded QAP of ``instance`` from a random start; the time limit
    covers the padding and the kernels' loading too."""
    started = _clock(opts)()
    qap = ts.padded(instance.traffic, instance.distance, instance.K)
    rng = np.random.default_rng(seed)
    start = rng.permutation(qap.size).astype(np.int64)
    out = search(qap, start, rng, opts, started=started)
    sol = Solution(assignment=ts.to_assignment(qap, out.perm))
    if out.interrupted:
        raise Interrupted(sol)
    return sol, out
