"""Heuristics for TAP (paper 000, sections IV-B and IV-C) and improvers.

The paper's two heuristics, Cluster Embedding (:func:`cle`, IV-B) and Average-Based Matching
(:func:`abm`, IV-C), a random assignment, and searches that improve a start: an iterated
move/swap descent (:func:`local_search`; ``cle-ls``, ``abm-ls``, ``random-ls`` are it with that
start), iterated robust tabu search (:func:`tabu`), our QAPLIB-scale portfolio
(:func:`~dmlopt.heuristics.tap.robust_tabu.rts`) and scipy's FAQ + 2-opt as a peer baseline
(:func:`~dmlopt.heuristics.tap.faq.faq_2opt`). The searches work on the padded QAP of
:mod:`dmlopt.heuristics.tap.search` (N = n min(K, m) slots, dummy modules in the free slots).

All return a :class:`~dmlopt.models.tap.Solution`; none imports Pyomo. :data:`HEURISTICS`
declares each as a :class:`~dmlopt.contract.Heuristic` with its options model and an estimate
from m, n and K: the searches work on dense N x N matrices, a descent step is one N x N matrix
product, a compiled tabu move O(N^2); with a ``time_limit`` only the runs before the first
check are charged.
"""

from __future__ import annotations

import time
from typing import Any, Literal, get_args

import numpy as np
import pydantic

from dmlopt.contract import Heuristic, NoOptions, Options, Size
from dmlopt.errors import InstanceError, Interrupted, interrupt_of
from dmlopt.heuristics.tap import faq as _tap_faq
from dmlopt.heuristics.tap import robust_tabu as _tap_rts
from dmlopt.heuristics.tap import search as ts
from dmlopt.heuristics.tap.faq import faq_2opt
from dmlopt.heuristics.tap.robust_tabu import rts
from dmlopt.models.tap import Instance, Solution
from dmlopt.validation import one_of, time_limit_field

#: compiled kernels the searches load on first use (:func:`search._tap_kernel`); the benchmark
#: harness imports them before a timed run
PRELOAD = ("dmlopt.heuristics.tap.kernel", "dmlopt.heuristics.tap.robust_tabu_kernel")


def random_assignment(instance: Instance, *, seed: int = 0) -> Solution:
    """A uniformly random feasible assignment: m distinct slots out of the n min(K, m) slots.

    Parameters
    ----------
    instance : Instance
        The TAP instance (m modules, n VMs, capacity K).
    seed : int, optional
        Seed of the draw (default 0).

    Returns
    -------
    Solution
        Module i on VM ``assignment[i]``; every VM holds at most K modules.

    References
    ----------
    Ours: the random baseline of the benchmarks and a start of :func:`local_search`.
    """
    rng = np.random.default_rng(seed)
    kc = min(instance.K, instance.m)
    slots = rng.choice(instance.n * kc, size=instance.m, replace=False)
    return Solution(assignment=(slots // kc).tolist())


def abm(instance: Instance, *, seed: int = 0) -> Solution:
    """Average-Based Matching: the heaviest-talking modules on the most central VMs.

    Modules are sorted by average traffic ``sum_i' (M_ii' + M_i'i) / (m - 1)`` (largest first),
    VMs by average hop count ``sum_j' D_jj' / (n - 1)`` (smallest first); the k-th module goes
    to the k-th slot of the VM order, each VM offering K slots. Ties by index. O(m^2 + n^2).

    Parameters
    ----------
    instance : Instance
        The TAP instance.
    seed : int, optional
        Unused (the method is deterministic); default 0.

    Returns
    -------
    Solution
        A feasible assignment (at most K modules per VM).

    References
    ----------
    Paper 000 (An, Wu, Huang), section IV-C "Average-Based Matching".

    Examples
    --------
    Two modules that talk (1 -> 0) and two idle ones, on a path of three VMs (K = 2): the
    talkers go to the middle VM, the one closest to the others on average.

    >>> from dmlopt.models.tap import Instance
    >>> inst = Instance(M=[[0, 0, 0, 0], [5, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
    ...                 D=[[0, 1, 2], [1, 0, 1], [2, 1, 0]], K=2)
    >>> abm(inst).assignment
    [1, 1, 0, 0]
    """
    m, n, kc = instance.m, instance.n, min(instance.K, instance.m)
    module_avg = instance.pair_weight.sum(axis=1) / max(m - 1, 1)
    vm_avg = instance.distance.sum(axis=1) / max(n - 1, 1)
    modules = np.argsort(-module_avg, kind="stable")
    slots = np.repeat(np.argsort(vm_avg, kind="stable"), kc)
    out = np.empty(m, dtype=np.int64)
    out[modules] = slots[:m]
    return Solution(assignment=out.tolist())


def cle(instance: Instance, *, seed: int = 0) -> Solution:
    """Cluster Embedding: heavy overlay links inside one cluster of VMs.

    The paper gives the idea, not pseudocode; this is our reading. A cluster is the set of VMs
    attached to one switch (``Instance.cluster_labels``), its capacity K times its VM count.
    Clusters are ordered by capacity (largest first), overlay links by weight ``M_ii' + M_i'i``
    (heaviest first). For each link with an unplaced end: both ends unplaced go to the first
    cluster (in that order) with room for both, else each to the first cluster with room; one
    end unplaced joins its partner's cluster if it has room, else the first cluster with room.
    Modules without links fill the remaining room last. Inside a cluster the cost is ignored
    (as the paper says): modules fill its VMs in order, K per VM. O(links log links + clusters
    log clusters + links * clusters), the paper's complexity.

    Parameters
    ----------
    instance : Instance
        The TAP instance (its ``cluster_labels`` give the clusters).
    seed : int, optional
        Unused (the method is deterministic); default 0.

    Returns
    -------
    Solution
        A feasible assignment (at most K modules per VM).

    References
    ----------
    Paper 000 (An, Wu, Huang), section IV-B "Cluster Embedding"; the order of links and
    clusters and the fill inside a cluster are ours.
    """
    m, K = instance.m, min(instance.K, instance.m)  # no VM ever holds more than the m modules
    labels = instance.cluster_labels
    # the labels in use, in increasing order (not 0..max: a label may be any large integer)
    members = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    order = sorted(range(len(members)), key=lambda c: (-members[c].size, c))
    room = [members[c].size * K for c in order]
    where = np.full(m, -1, dtype=np.int64)  # position in `order` of each module's cluster

    def first_with(space: int) -> int:
        return next((t for t, r in enumerate(room) if r >= space), -1)

    def put(i: int, t: int) -> None:
        where[i] = t
        room[t] -= 1

    w = np.triu(instance.pair_weight, 1)
    links = np.argwhere(w > 0)
    links = links[np.lexsort((links[:, 1], links[:, 0], -w[links[:, 0], links[:, 1]]))]
    for i, k in links.tolist():
        free = [x for x in (i, k) if where[x] < 0]
        if len(free) == 2:
            t = first_with(2)
            if t >= 0:
                put(i, t)
                put(k, t)
            else:
                put(i, first_with(1))
                put(k, first_with(1))
        elif len(free) == 1:
            x, partner = free[0], (k if free[0] == i else i)
            t = int(where[partner])
            put(x, t if room[t] >= 1 else first_with(1))
    for i in np.flatnonzero(where < 0).tolist():
        put(i, first_with(1))
    out = np.empty(m, dtype=np.int64)
    for t, c in enumerate(order):
        placed = np.flatnonzero(where == t)
        out[placed] = np.repeat(members[c], K)[: placed.size]
    return Solution(assignment=out.tolist())


def _start(instance: Instance, start: Any, seed: int) -> np.ndarray:
    """The starting assignment: a heuristic name, a Solution, or a list of VMs."""
    if isinstance(start, str):
        if start not in _CONSTRUCTIVE:
            raise InstanceError("start", start, "is not a starting heuristic (one of "
                                f"{', '.join(_CONSTRUCTIVE)})")
        sol = _CONSTRUCTIVE[start](instance, seed=seed)
    elif isinstance(start, Solution):
        sol = start
    else:
        assignment = start.get("assignment") if isinstance(start, dict) else start
        sol = Solution(assignment=list(assignment))
    from dmlopt.models.tap import evaluate

    ev = evaluate(instance, sol)
    if not ev.feasible:
        raise InstanceError("start", "solution", f"is infeasible ({ev.violations[0]})")
    return np.asarray(sol.assignment, dtype=np.int64)


def local_search(instance: Instance, *, seed: int = 0, start: Any = "random",
                 restarts: int = 30, time_limit: float | None = None) -> Solution:
    """Iterated best-improvement descent over moves and swaps, from ``start``.

    A move puts a module on a VM with free capacity, a swap exchanges two modules' VMs (on the
    padded QAP both are swaps of N slots). With integer data the gains are updated in O(m N) per
    swap, otherwise recomputed by one N x N matrix product (:mod:`dmlopt.heuristics.tap.search`).
    After the first descent, ``restarts`` rounds perturb the best solution and descend again.

    Parameters
    ----------
    instance : Instance
        The TAP instance.
    seed : int, optional
        Seed of the start (when named) and of the perturbations (default 0).
    start : {"random", "cle", "abm"} or Solution or list of int, optional
        The start: a construction heuristic run with the same seed (default ``"random"``), a
        Solution, or one VM per module. An infeasible start is an
        :class:`~dmlopt.errors.InstanceError`.
    restarts : int, optional
        Perturb-and-descend rounds after the first descent (default 30, >= 0).
    time_limit : float or None, optional
        Seconds (wall clock) of the whole run, the start's construction included, checked
        between rounds and before each swap of a descent; None (default): no limit.

    Returns
    -------
    Solution
        The best assignment found, feasible and at least as good as the start. Ctrl-C raises
        :class:`~dmlopt.errors.Interrupted` carrying the best so far.

    References
    ----------
    Ours: the classic pairwise-exchange descent for the QAP (R. Burkard, M. Dell'Amico and S.
    Martello, *Assignment Problems*, SIAM 2009, chapter 8) with perturbation restarts (iterated
    local search: H. R. Lourenco, O. C. Martin and T. Stuetzle, in *Handbook of Metaheuristics*,
    2003), on the padded QAP so that K > 1 and m < n need no special moves.
    """
    if restarts < 0:
        raise InstanceError("restarts", restarts, "must be >= 0")
    t0 = time.perf_counter()  # the limit covers the start's construction too
    rng = np.random.default_rng(seed)
    a = _start(instance, start, seed)
    qap = ts.padded(instance.traffic, instance.distance, instance.K)
    if time_limit is not None:
        time_limit = max(time_limit - (time.perf_counter() - t0), 1e-9)
    keep: list = []
    try:
        best = ts.iterated_descent(qap, ts.to_perm(qap, a), rng, restarts, time_limit, keep)
    except (KeyboardInterrupt, SystemError) as exc:  # Ctrl-C: the best so far is the answer
        if not interrupt_of(exc) or not keep:
            raise
        raise Interrupted(Solution(assignment=ts.to_assignment(qap, keep[0]))) from None
    return Solution(assignment=ts.to_assignment(qap, best))


def tabu(instance: Instance, *, seed: int = 0, start: Any = "random", rounds: int = 6,
         iterations: int | None = None, kick: float = 1.0, time_limit: float | None = None,
         engine: str = "auto") -> Solution:
    """Iterated robust tabu search (Taillard 1991 inside Misevicius' iterated tabu search).

    ``rounds`` tabu runs of ``iterations`` moves each, the first from ``start``, the others from
    the best solution perturbed by ``kick * N`` random swaps (N = n min(K, m) slots).

    Parameters
    ----------
    instance : Instance
        The TAP instance.
    seed : int, optional
        Seed of the start (when named), the tenures and the perturbations (default 0).
    start : {"random", "cle", "abm"} or Solution or list of int, optional
        As in :func:`local_search` (default ``"random"``).
    rounds : int, optional
        Tabu runs (default 6, >= 1).
    iterations : int or None, optional
        Moves per run; None (default): ``25 N^2`` capped at 20 000.
    kick : float, optional
        Random swaps between runs as a fraction of N, in (0, 1] (default 1.0: close to a random
        restart, which measured best on QAPLIB's chr instances; smaller values intensify).
    time_limit : float or None, optional
        Seconds (wall clock) of the whole run, the start's construction included, checked
        between runs and between chunks of a run's iterations; None (default): no limit.
    engine : {"auto", "numba", "numpy"}, optional
        The move kernel: compiled (numba), numpy, or numba when installed (default).

    Returns
    -------
    Solution
        The best assignment found. Ctrl-C raises :class:`~dmlopt.errors.Interrupted` carrying
        the best so far.

    References
    ----------
    E. Taillard, Robust taboo search for the quadratic assignment problem, Parallel Computing
    17 (1991) 443-455; A. Misevicius, A tabu search algorithm for the quadratic assignment
    problem, Computational Optimization and Applications 30 (2005) 95-111. Not in paper 000.
    """
    qap = ts.padded(instance.traffic, instance.distance, instance.K)
    if iterations is None:
        iterations = min(20_000, 25 * qap.size * qap.size)
    for field, value in (("iterations", iterations), ("rounds", rounds)):
        if value < 1:
            raise InstanceError(field, value, "must be >= 1")
    if not 0 < kick <= 1:
        raise InstanceError("kick", kick, "must be in (0, 1]")
    if engine not in ("auto", "numba", "numpy"):
        raise InstanceError("engine", engine, "must be auto, numba or numpy")
    t0 = time.perf_counter()  # the limit covers the start's construction too
    rng = np.random.default_rng(seed)
    a = _start(instance, start, seed)
    if time_limit is not None:
        time_limit = max(time_limit - (time.perf_counter() - t0), 1e-9)
    keep: list = []
    try:
        best = ts.iterated_tabu(qap, ts.to_perm(qap, a), rng, rounds, iterations, kick,
                                time_limit, engine, keep)
    except (KeyboardInterrupt, SystemError) as exc:  # Ctrl-C: the best so far is the answer
        if not interrupt_of(exc) or not keep:
            raise
        raise Interrupted(Solution(assignment=ts.to_assignment(qap, keep[0]))) from None
    return Solution(assignment=ts.to_assignment(qap, best))


_CONSTRUCTIVE = {"cle": cle, "abm": abm, "random": random_assignment}

# --------------------------------------------------------------------------------------------
# options (the contract: dmlopt list tap prints them)

#: the names a ``start`` option accepts
StartName = Literal["cle", "abm", "random"]


def _check_start(value: object) -> object:
    """A ``start`` given by name must name a construction heuristic (one clear message)."""
    return one_of(value, get_args(StartName), "a starting heuristic")


class _TimeLimit(Options):
    """The time limit shared by the searches."""

    time_limit: float | None = time_limit_field(
        None, "seconds (at most a day) of the whole run, the start included, checked between "
        "restarts and inside each descent or tabu run (None: no limit)")


class LocalSearchOptions(_TimeLimit):
    """Options of ``local-search``."""

    start: StartName | Solution | list[int] = pydantic.Field(
        default="random", description="the start: cle, abm or random (run with the same seed), "
        "a Solution or a list of VMs (one per module)")
    restarts: int = pydantic.Field(default=30, ge=0, description="perturb-and-descend rounds "
                                   "from the best solution after the first descent")

    @pydantic.field_validator("start", mode="before")
    @classmethod
    def _start_name(cls, value: object) -> object:
        return _check_start(value)


class StartedSearchOptions(_TimeLimit):
    """Options of ``cle-ls``, ``abm-ls``, ``random-ls`` (the start is in the name)."""

    restarts: int = pydantic.Field(default=30, ge=0, description="perturb-and-descend rounds "
                                   "from the best solution after the first descent")


class TabuOptions(_TimeLimit):
    """Options of ``tabu`` (iterated robust tabu search)."""

    start: StartName | Solution | list[int] = pydantic.Field(
        default="random", description="the start: cle, abm or random (run with the same seed), "
        "a Solution or a list of VMs (one per module)")
    rounds: int = pydantic.Field(default=6, ge=1, description="tabu runs, each after the first "
                                 "from the perturbed best solution")
    iterations: int | None = pydantic.Field(
        default=None, ge=1, description="moves per tabu run (None: 25 N^2 capped at 20 000, N "
        "= n min(K, m) slots)")
    kick: float = pydantic.Field(default=1.0, gt=0, le=1, description="random swaps between "
                                 "rounds, as a fraction of the N slots")
    engine: Literal["auto", "numba", "numpy"] = pydantic.Field(
        default="auto", description="numba (compiled kernel), numpy, or auto (numba when "
        "installed)")

    @pydantic.field_validator("start", mode="before")
    @classmethod
    def _start_name(cls, value: object) -> object:
        return _check_start(value)


# --------------------------------------------------------------------------------------------
# estimates: what a heuristic allocates and computes, from the instance alone

#: operations charged for one step of an interpreted (Python) loop: about a microsecond
PY_STEP = 1000.0


def _slots(instance: Instance) -> float:
    """N = n min(K, m): the size of the padded QAP the searches work on."""
    return float(instance.n) * min(instance.K, instance.m)


def _base(instance: Instance) -> Size:
    """The Solution (m entries), its evaluation (M and D gathered: m x m)."""
    m = float(instance.m)
    return Size(40 * m * m + 8 * instance.n, 20 * m * m + PY_STEP * m + instance.n)


def _links(instance: Instance) -> float:
    return float(np.count_nonzero(np.triu(instance.pair_weight, 1)))


def estimate_cle(instance: Instance, options: Options | None = None) -> Size:
    """Cluster Embedding: per link a scan of the cluster list (Python), per cluster its VMs."""
    links = _links(instance)
    clusters = float(np.unique(instance.cluster_labels).size)
    n, m = float(instance.n), float(instance.m)
    return _add(_base(instance), Size(40 * m * m + 16 * n + 24 * links,
                                      PY_STEP * (links + m) + 100 * links * clusters
                                      + 2 * clusters * n))


def estimate_abm(instance: Instance, options: Options | None = None) -> Size:
    """Average-Based Matching: row sums of W (m x m) and D (n x n), two sorts."""
    n, m = float(instance.n), float(instance.m)
    return _add(_base(instance), Size(16 * (m * m + n * n), 4 * (m * m + n * n)))


def estimate_random(instance: Instance, options: Options | None = None) -> Size:
    """m of the N slots drawn without replacement."""
    slots = _slots(instance)
    return _add(_base(instance), Size(8 * slots, 10 * slots))


_START_ESTIMATES = {"cle": estimate_cle, "abm": estimate_abm, "random": estimate_random}


def _add(*sizes: Size) -> Size:
    return Size(sum(s.memory for s in sizes), sum(s.work for s in sizes))


def _padded(instance: Instance, temporaries: bool = True) -> Size:
    """The padded QAP (F, B: N x N), its masks and, with ``temporaries``, the N x N delta
    temporaries (the incremental descent keeps m x N gains instead: the peak of random-ls was
    about 30 N^2 bytes at N = 256, 48 charged)."""
    slots = _slots(instance)
    return Size(8 * (6 + 6 * temporaries) * slots * slots, 30 * slots * slots)


def _start_size(instance: Instance, start: Any) -> Size:
    if isinstance(start, str) and start in _START_ESTIMATES:
        return _START_ESTIMATES[start](instance)
    return _base(instance)


def _rounds(count: int, time_limit: float | None) -> float:
    """Runs done before the search can stop itself: all, or with a time limit (checked
    between runs) the first and the one under way."""
    return float(count if time_limit is None else min(count, 2))


#: operations charged per element of the m x N gain matrix for one swap of the incremental
#: descent (about ten numpy passes over it: copy, the transposed add, the masks, argmin, the
#: rank-one update); measured 9.7 ns per element per swap at m = 128, N = 256, 12 ns at m = 256
SWAP_PASSES = 14.0


#: operations charged per descent for its fixed Python cost (the kick, the gain table's set-up
#: calls, the bookkeeping): measured 123-128 us per restart at m = 6, where it is all the time
DESCENT_OVERHEAD = 2e5


def _swaps(m: float, descents: float) -> float:
    """Swaps of ``descents`` descents: at most m + 1 from the start (one per improving swap; a
    random start of the growth series needs about 0.9 m), about m / 2 after each kick of m / 4
    swaps (measured: 0.37 m on average at m = 128, random-ls with 30 restarts)."""
    return (m + 1) + max(descents - 1, 0.0) * (m / 2 + 1)


def estimate_local_search(instance: Instance, options: Options) -> Size:
    """Descents from the start and ``restarts`` kicks (:func:`_swaps` swaps in all). With exact
    data (integer traffic and distances, :func:`~dmlopt.heuristics.tap.search.exact_gains`)
    the gains of the m real rows are kept incrementally: m^2 N to start a descent,
    :data:`SWAP_PASSES` m N per swap; otherwise each swap recomputes all N^2 gains by one
    N x N product (N^3, BLAS); plus :data:`DESCENT_OVERHEAD` per descent (what many restarts
    on a small instance cost)."""
    slots, m = _slots(instance), float(instance.m)
    descents = _rounds(options.restarts + 1, options.time_limit)
    swaps = _swaps(m, descents)
    exact = ts.exact_gains(instance.traffic, instance.distance)
    if exact:
        work = descents * m * m * slots + swaps * SWAP_PASSES * m * slots
    else:
        work = swaps * (slots**3 + 30 * slots * slots)
    work += descents * DESCENT_OVERHEAD
    start = getattr(options, "start", None)  # cle-ls ...: the start is added by _started
    return _add(_start_size(instance, start), _padded(instance, not exact), Size(0.0, work))


def _started(start: str):
    def estimate(instance: Instance, options: Options) -> Size:
        return _add(estimate_local_search(instance, options), _START_ESTIMATES[start](instance))
    estimate.__doc__ = f"Size of ``{start}-ls``: {start}, then the local search."
    return estimate


def estimate_tabu(instance: Instance, options: TabuOptions) -> Size:
    """``rounds`` robust tabu runs of ``iterations`` moves: O(N^2) per move compiled (numba),
    an N x N matrix product per move in numpy."""
    slots = _slots(instance)
    iterations = float(options.iterations if options.iterations is not None
                       else min(20_000, 25 * slots * slots))
    runs = _rounds(options.rounds, options.time_limit)
    numba = options.engine == "numba" or (options.engine == "auto" and ts.has_numba())
    move = 10 * slots * slots if numba else slots**3 + 40 * slots * slots
    return _add(_start_size(instance, options.start), _padded(instance),
                Size(16 * slots * slots, runs * iterations * move + slots**3))


def cle_ls(instance: Instance, *, seed: int = 0, restarts: int = 30,
           time_limit: float | None = None) -> Solution:
    """Cluster Embedding (:func:`cle`), then the local search
    (:func:`local_search` with ``start="cle"``).

    Parameters
    ----------
    instance : Instance
        The TAP instance.
    seed : int, optional
        Seed of the start and of the perturbations (default 0).
    restarts : int, optional
        Perturb-and-descend rounds after the first descent (default 30, >= 0).
    time_limit : float or None, optional
        Seconds (wall clock), checked between rounds; None (default): no limit.

    Returns
    -------
    Solution
        The best assignment found, feasible and at least as good as ``cle``'s. Ctrl-C
        raises :class:`~dmlopt.errors.Interrupted` carrying the best so far.

    References
    ----------
    Paper 000, section IV-B (our reading); the local search's
    references are in :func:`local_search`.
    """
    return local_search(instance, seed=seed, start="cle", restarts=restarts,
                        time_limit=time_limit)


def abm_ls(instance: Instance, *, seed: int = 0, restarts: int = 30,
           time_limit: float | None = None) -> Solution:
    """Average-Based Matching (:func:`abm`), then the local search
    (:func:`local_search` with ``start="abm"``).

    Parameters
    ----------
    instance : Instance
        The TAP instance.
    seed : int, optional
        Seed of the start and of the perturbations (default 0).
    restarts : int, optional
        Perturb-and-descend rounds after the first descent (default 30, >= 0).
    time_limit : float or None, optional
        Seconds (wall clock), checked between rounds; None (default): no limit.

    Returns
    -------
    Solution
        The best assignment found, feasible and at least as good as ``abm``'s. Ctrl-C
        raises :class:`~dmlopt.errors.Interrupted` carrying the best so far.

    References
    ----------
    Paper 000, section IV-C; the local search's
    references are in :func:`local_search`.
    """
    return local_search(instance, seed=seed, start="abm", restarts=restarts,
                        time_limit=time_limit)


def random_ls(instance: Instance, *, seed: int = 0, restarts: int = 30,
              time_limit: float | None = None) -> Solution:
    """A uniformly random feasible assignment (:func:`random_assignment`), then the local search
    (:func:`local_search` with ``start="random"``).

    Parameters
    ----------
    instance : Instance
        The TAP instance.
    seed : int, optional
        Seed of the start and of the perturbations (default 0).
    restarts : int, optional
        Perturb-and-descend rounds after the first descent (default 30, >= 0).
    time_limit : float or None, optional
        Seconds (wall clock), checked between rounds; None (default): no limit.

    Returns
    -------
    Solution
        The best assignment found, feasible and at least as good as ``random``'s. Ctrl-C
        raises :class:`~dmlopt.errors.Interrupted` carrying the best so far.

    References
    ----------
    Ours: the random start; the local search's
    references are in :func:`local_search`.
    """
    return local_search(instance, seed=seed, start="random", restarts=restarts,
                        time_limit=time_limit)


def _no_options(fn):
    def estimate(instance: Instance, options: Options) -> Size:
        return fn(instance)
    estimate.__doc__ = fn.__doc__
    return estimate


HEURISTICS: dict[str, Heuristic] = {
    "cle": Heuristic(cle, NoOptions, _no_options(estimate_cle),
                     "Cluster Embedding (section IV-B, our reading)"),
    "abm": Heuristic(abm, NoOptions, _no_options(estimate_abm),
                     "Average-Based Matching (section IV-C)"),
    "random": Heuristic(random_assignment, NoOptions, _no_options(estimate_random),
                        "a uniformly random feasible assignment"),
    "local-search": Heuristic(local_search, LocalSearchOptions, estimate_local_search,
                              "iterated best-improvement move/swap descent from a start"),
    "cle-ls": Heuristic(cle_ls, StartedSearchOptions,
                        _started("cle"), "Cluster Embedding, then the local search"),
    "abm-ls": Heuristic(abm_ls, StartedSearchOptions,
                        _started("abm"), "Average-Based Matching, then the local search"),
    "random-ls": Heuristic(random_ls, StartedSearchOptions,
                           _started("random"), "a random assignment, then the local search"),
    "tabu": Heuristic(tabu, TabuOptions, estimate_tabu,
                      "iterated robust tabu search (Taillard, Misevicius) from a start"),
    "rts": Heuristic(rts, _tap_rts.Options, _tap_rts.estimate,
                     "ours: iterated robust tabu search with breakout perturbation, restarts and "
                     "an elite pool, until a time budget, an iteration budget or a target"),
    "faq-2opt": Heuristic(faq_2opt, _tap_faq.Options, _tap_faq.estimate,
                          "peer baseline: scipy's FAQ from a random start, then 2-opt, best of "
                          "restarts"),
}

#: the heuristic to use (docs/tap.md: the best quality for its time at the papers' sizes)
RECOMMENDED = "rts"
