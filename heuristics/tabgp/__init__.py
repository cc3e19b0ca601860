"""Heuristics for TABGP (paper 004, Figiel, Nichterlein, Schmid, section 3 and 4.5).

Registry names and the paper's names
------------------------------------
=================  =========================================================================
name               paper (section 3 / Figure 4.2)
=================  =========================================================================
``dense``          Dense (Algorithm 3.1) on the compressed graph of all steps, the same
                   clustering at every step (a static clustering, no migration)
``dense-ls``       Dense + the final local search over all steps
``dense-online``   Dense-Online = Roll_0 (no knowledge of the future, no final local search)
``dense-roll``     Dense-Roll_x, option ``x`` (default 1), + final local search
``dense-roll10``   Dense-Roll_10
``dense-refine``   Dense-Refine, + final local search
``random``         random balanced partition, the same at every step
``random-ls``      random + the final local search (Figure 4.2, static case)
``metis``          METIS (pymetis, default parameters, edge weights) on the compressed graph,
                   repaired to capacity k, the same at every step
``metis-ls``       METIS + the final local search
``metis-refine``   Refine started from METIS
``local-search``   the local search on any start (option ``start``: a Solution or a heuristic
                   name); the improver behind every "+ local search" above. Option
                   ``temporal=True`` (ours) adds path moves: one vertex re-routed through all
                   steps at once, two vertices swapped at any subset of steps (exact DPs)
``ils``            ours, not in the paper: iterated local search (perturb, local search with
                   the path moves, keep if not worse) from a start, ``iterations`` rounds
``best``           ours: the best of the paper's heuristics, then ``ils`` from it
=================  =========================================================================

Every heuristic is ``fn(instance, *, seed=0, **options) -> Solution`` and deterministic for a
seed. Dense and the local search use no randomness (ties go to the smallest vertex index, then
the smallest cluster); ``seed`` drives METIS, the random start and the ILS perturbations.
:data:`HEURISTICS` declares each as a :class:`~dmlopt.contract.Heuristic`: its options model
(``dmlopt list tabgp`` prints them) and an estimate of its memory and work from n, l, tau and the
edge count (Python-level loops charged :data:`PY_STEP` operations a step, the local search
:data:`LS_SWEEPS` sweeps), so the core refuses e.g. Dense on 10^7 vertices before it starts.

Choices where the paper is open (documented deviations)
-------------------------------------------------------
* Weighted graphs (section 4.5: "replace counting of edges with summing of edge-weights"): Dense
  scores ``(w(N(v) n X), -wdeg(v))`` with summed weights; compressed steps weigh an edge by the
  sum of its weights over the merged steps (its number of occurrences when unweighted).
* Dense on a temporal instance (``dense``): the paper applies Dense to one static graph; we use
  the compression of all steps and keep the clustering at every step (zero migration cost).
* Roll_x (variant 1): the first static clustering is Dense on the compression of the first
  max(x, 1) steps (x = 0 would compress nothing; Online clusters the first step). Every step t
  (the first included) is then improved by the local search whose graph is the compression of the
  steps t-x .. t+x ("the compressed x previous and next timesteps", clipped to the horizon) plus
  alpha per vertex that changes cluster relative to the already fixed step t-1; step t starts
  from the clustering of step t-1.
* Refine (variant 2): the compression of all steps is clustered (Dense), improved by the local
  search, then every block of more than one step is split into halves (the first half gets the
  smaller part, floor), both halves start from the block's clustering, and the local search runs
  over the whole sequence of blocks (migration counted between consecutive blocks), level by
  level until every block is a single step; that last level is the final local search.
* METIS: edge weights must be integers for METIS: integral weights are kept, others scaled to a
  total of 2**30 and rounded (the paper took square roots or logarithms of the huge LLM weights);
  METIS' balance tolerance can exceed k, so the result is repaired greedily to capacity k (the
  cheapest moves out of overfull clusters first).
* The local search is the paper's neighbourhood (single-vertex moves into clusters with free
  capacity, swaps, one step at a time, migration-aware); its search order is ours, see
  :mod:`dmlopt.heuristics.tabgp.ls`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, get_args

import numpy as np
import pydantic

from dmlopt.contract import Heuristic, NoOptions, Options, Size
from dmlopt.errors import InstanceError
from dmlopt.heuristics.tabgp.graph import Graph, compress, dense, metis, repair, step_matrices
from dmlopt.heuristics.tabgp.ls import local_search
from dmlopt.heuristics.tabgp.ls import work as ls_work
from dmlopt.models.tabgp import Instance, Solution, cost_parts
from dmlopt.validation import one_of

# --------------------------------------------------------------------------------------------
# building blocks


def _static(name: str, graph: Graph, instance: Instance, seed: int) -> np.ndarray:
    """A static clustering of one (compressed) graph by ``name``."""
    if name == "dense":
        return dense(graph, instance.l, instance.k)
    if name == "metis":
        return metis(graph, instance.l, instance.k, seed=seed)
    if name == "random":
        return _random_labels(instance, seed)
    raise InstanceError("static", name, "must be one of dense, metis, random")


def _random_labels(instance: Instance, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    labels = np.arange(instance.n, dtype=np.int64) % instance.l
    rng.shuffle(labels)
    return labels


def _solution(assign: np.ndarray) -> Solution:
    return Solution(assignment=np.asarray(assign, dtype=np.int64).tolist())


def _graphs(instance: Instance) -> tuple[list, list[Graph]]:
    mats = step_matrices(instance)
    return mats, [compress([m]) for m in mats]


def _final(instance: Instance, assign: np.ndarray, graphs: list[Graph] | None = None,
           temporal: bool = False) -> np.ndarray:
    """The final local search over all steps combined (section 3); ``temporal`` adds our path
    neighbourhoods (see :func:`dmlopt.heuristics.tabgp.ls.local_search`)."""
    if graphs is None:
        graphs = _graphs(instance)[1]
    return local_search(graphs, assign, instance.l, instance.k, instance.alpha,
                        temporal=temporal)


def _replicate(instance: Instance, labels: np.ndarray) -> np.ndarray:
    return np.tile(np.asarray(labels, dtype=np.int64), (instance.tau, 1))


def _check_static(static: str) -> None:
    if static not in ("dense", "metis", "random"):
        raise InstanceError("static", static, "must be one of dense, metis, random")


# --------------------------------------------------------------------------------------------
# static clusterings (+ final local search)


def dense_static(instance: Instance, *, seed: int = 0) -> Solution:
    """Dense (Algorithm 3.1) on the compression of all steps, kept at every step."""
    mats = step_matrices(instance)
    return _solution(_replicate(instance, dense(compress(mats), instance.l, instance.k)))


def dense_ls(instance: Instance, *, seed: int = 0) -> Solution:
    """Dense on the compressed graph, then the final local search over all steps."""
    mats, graphs = _graphs(instance)
    start = _replicate(instance, dense(compress(mats), instance.l, instance.k))
    return _solution(_final(instance, start, graphs))


def metis_static(instance: Instance, *, seed: int = 0) -> Solution:
    """METIS on the compression of all steps, repaired to capacity k, kept at every step."""
    mats = step_matrices(instance)
    labels = metis(compress(mats), instance.l, instance.k, seed=seed)
    return _solution(_replicate(instance, labels))


def metis_ls(instance: Instance, *, seed: int = 0) -> Solution:
    """METIS (repaired) on the compressed graph, then the final local search."""
    mats, graphs = _graphs(instance)
    start = _replicate(instance, metis(compress(mats), instance.l, instance.k, seed=seed))
    return _solution(_final(instance, start, graphs))


def random_partition(instance: Instance, *, seed: int = 0) -> Solution:
    """A uniformly random balanced partition, the same at every step (no migration)."""
    return _solution(_replicate(instance, _random_labels(instance, seed)))


def random_ls(instance: Instance, *, seed: int = 0) -> Solution:
    """A random balanced partition, then the final local search."""
    start = _replicate(instance, _random_labels(instance, seed))
    return _solution(_final(instance, start))


# --------------------------------------------------------------------------------------------
# Roll_x / Online and Refine (section 3, variants 1 and 2)


def roll(instance: Instance, *, seed: int = 0, x: int = 1, static: str = "dense",
         final: bool = True) -> Solution:
    """Roll_x (section 3, variant 1); ``x = 0`` with ``final=False`` is Online.

    Parameters
    ----------
    x : how many previous and next steps the local search of step t sees (compressed with t).
    static : the static clustering of the first max(x, 1) steps: dense, metis or random.
    final : run the final local search over all steps (the paper: all variants but Online).
    """
    if x < 0:
        raise InstanceError("x", x, "must be >= 0")
    _check_static(static)
    mats, graphs = _graphs(instance)
    tau, l, k, alpha = instance.tau, instance.l, instance.k, instance.alpha
    assign = np.empty((tau, instance.n), dtype=np.int64)
    labels = _static(static, compress(mats[:max(x, 1)]), instance, seed)
    prev = None
    for t in range(tau):
        window = compress(mats[max(0, t - x):t + x + 1]) if x else graphs[t]
        labels = local_search([window], labels[None, :], l, k, alpha, before=prev)[0]
        assign[t] = labels
        prev = labels
    if final:
        assign = _final(instance, assign, graphs)
    return _solution(assign)


def dense_online(instance: Instance, *, seed: int = 0) -> Solution:
    """Dense-Online = Roll_0 without the final local search (the paper's online heuristic)."""
    return roll(instance, seed=seed, x=0, static="dense", final=False)


def dense_roll(instance: Instance, *, seed: int = 0, x: int = 1) -> Solution:
    """Dense-Roll_x (default x = 1) with the final local search."""
    return roll(instance, seed=seed, x=x, static="dense", final=True)


def dense_roll10(instance: Instance, *, seed: int = 0) -> Solution:
    """Dense-Roll_10 with the final local search."""
    return roll(instance, seed=seed, x=10, static="dense", final=True)


def refine(instance: Instance, *, seed: int = 0, static: str = "dense") -> Solution:
    """Refine (section 3, variant 2): compress all steps, cluster, split in halves recursively,
    local search over the sequence of blocks at every level (the last level is the final one)."""
    _check_static(static)
    mats = step_matrices(instance)
    l, k, alpha = instance.l, instance.k, instance.alpha
    blocks = [(0, instance.tau)]
    graphs = [compress(mats)]
    assign = _static(static, graphs[0], instance, seed)[None, :]
    assign = local_search(graphs, assign, l, k, alpha)
    while any(e - s > 1 for s, e in blocks):
        new_blocks, rows, graphs = [], [], []
        for (s, e), row in zip(blocks, assign, strict=True):
            parts = [(s, e)] if e - s == 1 else [(s, (s + e) // 2), ((s + e) // 2, e)]
            for part in parts:
                new_blocks.append(part)
                rows.append(row)
                graphs.append(compress(mats[part[0]:part[1]]))
        blocks = new_blocks
        assign = local_search(graphs, np.stack(rows), l, k, alpha)
    return _solution(assign)


def dense_refine(instance: Instance, *, seed: int = 0) -> Solution:
    """Dense-Refine, the paper's best heuristic (Figure 4.2)."""
    return refine(instance, seed=seed, static="dense")


def metis_refine(instance: Instance, *, seed: int = 0) -> Solution:
    """Refine started from METIS (repaired to capacity k)."""
    return refine(instance, seed=seed, static="metis")


# --------------------------------------------------------------------------------------------
# improvers


def _start(instance: Instance, start: Solution | str | dict, seed: int) -> np.ndarray:
    """The tau x n assignment of a start: a Solution (or its dict) or a heuristic name."""
    if isinstance(start, str):
        if start not in _CONSTRUCTIONS:
            raise InstanceError("start", start, "must be a Solution or a construction "
                                "heuristic name: " + ", ".join(_CONSTRUCTIONS))
        start = _CONSTRUCTIONS[start](instance, seed=seed)
    if isinstance(start, dict):
        start = Solution.model_validate(start)
    assign = np.asarray(start.assignment, dtype=np.int64)
    if assign.shape != (instance.tau, instance.n) or assign.min() < 0 or assign.max() >= instance.l:
        raise InstanceError("start", f"shape {assign.shape}",
                            f"must assign each of {instance.n} vertices to a cluster "
                            f"0..{instance.l - 1} at each of {instance.tau} steps")
    mats, graphs = _graphs(instance)
    for t in range(instance.tau):  # an over-capacity start is repaired first
        assign[t] = repair(graphs[t], assign[t], instance.l, instance.k)
    return assign


def improve(instance: Instance, *, seed: int = 0, start: Solution | str | dict = "dense",
            temporal: bool = False) -> Solution:
    """The local search of section 3 over all steps from ``start`` (a Solution, its dict, or a
    heuristic name run with ``seed``); an over-capacity start is repaired first. ``temporal``
    adds our path neighbourhoods: a vertex re-routed through all steps at once and two vertices
    swapped at any subset of steps (each an exact DP over the steps)."""
    return _solution(_final(instance, _start(instance, start, seed), temporal=temporal))


def _total(instance: Instance, assign: np.ndarray) -> float:
    cut, mig = cost_parts(instance, assign)
    return cut + instance.alpha * mig


def ils(instance: Instance, *, seed: int = 0, start: Solution | str | dict = "dense-refine",
        iterations: int = 100, strength: float = 0.25) -> Solution:
    """Iterated local search (ours, not in the paper).

    From a local optimum, each round perturbs a copy - either one random step (a random subset of
    vertices, about ``strength * n`` but at least 2, is shuffled among its clusters) or a whole
    vertex block moved in every step (the same shuffle applied to all steps, which the one-step
    neighbourhood cannot do because migrations must change together) - then runs the local
    search with the path moves (``temporal=True``) and keeps the result when it is not worse.
    ``iterations`` rounds, deterministic for ``seed``.
    """
    return _ils(instance, seed, start, iterations, strength)


def _ils(instance: Instance, seed: int, start: Solution | str | dict, iterations: int,
         strength: float, budget: float | None = None) -> Solution:
    """:func:`ils`; with ``budget``, the rounds also stop once their local searches have done
    that much work (:func:`dmlopt.heuristics.tabgp.ls.work`), checked after each round."""
    if iterations < 0:
        raise InstanceError("iterations", iterations, "must be >= 0")
    if not 0 < strength <= 1:
        raise InstanceError("strength", strength, "must be in (0, 1]")
    rng = np.random.default_rng(seed)
    graphs = _graphs(instance)[1]
    l, k, alpha, n, tau = instance.l, instance.k, instance.alpha, instance.n, instance.tau
    best = _final(instance, _start(instance, start, seed), graphs, temporal=True)
    best_cost = _total(instance, best)
    cur, cur_cost = best, best_cost
    size = max(2, int(round(strength * n)))
    spent = ls_work()
    for _ in range(iterations):
        if budget is not None and ls_work() - spent > budget:
            break
        trial = cur.copy()
        verts = rng.choice(n, size=min(size, n), replace=False)
        perm = rng.permutation(verts)
        if tau > 1 and rng.random() < 0.5:
            trial[:, verts] = cur[:, perm]  # a block of vertices changes places in every step
        else:
            t = int(rng.integers(tau))
            trial[t, verts] = cur[t, perm]
        # cur is a local optimum: only the changed steps and their neighbours are searched
        changed = (trial != cur).any(axis=1)
        near = changed.copy()
        near[1:] |= changed[:-1]
        near[:-1] |= changed[1:]
        trial = local_search(graphs, trial, l, k, alpha, temporal=True, clean=~near)
        cost = _total(instance, trial)
        if cost <= cur_cost + 1e-9:
            cur, cur_cost = trial, cost
            if cost < best_cost - 1e-9:
                best, best_cost = trial, cost
    return _solution(best)


#: the work budget of ``best``'s ILS rounds, relative to the local-search work of its
#: constructions (ours): the rounds stop once they have done BEST_BUDGET times that work
#: (:func:`dmlopt.heuristics.tabgp.ls.work`, deterministic), or after ``iterations`` rounds.
#: A round's search grows faster with n than a construction's (drift, m = 5n, tau 10, l 16:
#: about n^1.7 against n^1.2), so a fixed number of rounds would dominate at large n; the budget
#: keeps ``best`` growing like its constructions
BEST_BUDGET = 0.5

#: the paper's heuristics :func:`best_of` runs before its ILS
_BEST_OF = ("dense-refine", "metis-refine", "dense-roll", "dense-roll10", "dense-ls", "metis-ls",
            "random-ls")


def best_of(instance: Instance, *, seed: int = 0, iterations: int = 100) -> Solution:
    """The best of the paper's heuristics (Refine, Roll_1, Roll_10, METIS, random + local
    search), then :func:`ils` from it (ours, not in the paper).

    Parameters
    ----------
    instance : the TABGP instance.
    seed : drives METIS, the random start and the ILS perturbations (default 0).
    iterations : at most this many ILS rounds (default 100); they also stop at the work budget
        :data:`BEST_BUDGET` relative to the constructions. The result is never worse than the
        best construction, Dense-Refine included.

    Returns
    -------
    Solution
        The ILS's best assignment.
    """
    best, best_cost = None, np.inf
    spent = ls_work()
    for name in _BEST_OF:
        assign = np.asarray(_CONSTRUCTIONS[name](instance, seed=seed).assignment)
        cost = _total(instance, assign)
        if cost < best_cost - 1e-9:
            best, best_cost = assign, cost
    budget = BEST_BUDGET * (ls_work() - spent)
    return _ils(instance, seed, _solution(best), iterations, 0.25, budget)


_CONSTRUCTIONS: dict[str, Callable[..., Solution]] = {
    "dense": dense_static,
    "dense-ls": dense_ls,
    "dense-online": dense_online,
    "dense-roll": dense_roll,
    "dense-roll10": dense_roll10,
    "dense-refine": dense_refine,
    "random": random_partition,
    "random-ls": random_ls,
    "metis": metis_static,
    "metis-ls": metis_ls,
    "metis-refine": metis_refine,
}


# --------------------------------------------------------------------------------------------
# options (the contract: dmlopt list tabgp prints them)

#: the names a ``start`` option accepts: the construction heuristics
StartName = Literal["dense", "dense-ls", "dense-online", "dense-roll", "dense-roll10",
                    "dense-refine", "random", "random-ls", "metis", "metis-ls", "metis-refine"]


def _check_start(value: object) -> object:
    """A ``start`` given by name must name a construction heuristic (one clear message)."""
    return one_of(value, get_args(StartName), "a starting heuristic")


class RollOptions(Options):
    """Options of ``dense-roll`` (Roll_x, section 3, variant 1)."""

    x: int = pydantic.Field(
        default=1, ge=0, description="previous and next steps the local search of step t sees "
        "(compressed with t); 0 is Online with the final local search")


class LocalSearchOptions(Options):
    """Options of ``local-search`` (section 3's local search, and our path moves)."""

    start: StartName | Solution = pydantic.Field(
        default="dense", description="the start: a construction heuristic name (run with the "
        "same seed) or a Solution (over-capacity starts are repaired first)")
    temporal: bool = pydantic.Field(
        default=False, description="add our path moves (one vertex re-routed through all "
        "steps, two vertices swapped at any subset of steps; exact DPs)")

    @pydantic.field_validator("start", mode="before")
    @classmethod
    def _start_name(cls, value: object) -> object:
        return _check_start(value)


class IlsOptions(Options):
    """Options of ``ils`` (iterated local search, ours)."""

    start: StartName | Solution = pydantic.Field(
        default="dense-refine", description="the start: a construction heuristic name (run with "
        "the same seed) or a Solution")
    iterations: int = pydantic.Field(
        default=100, ge=0, description="perturb-and-improve rounds")
    strength: float = pydantic.Field(
        default=0.25, gt=0, le=1, description="fraction of the vertices shuffled by a "
        "perturbation (at least 2)")

    @pydantic.field_validator("start", mode="before")
    @classmethod
    def _start_name(cls, value: object) -> object:
        return _check_start(value)



class BestOptions(Options):
    """Options of ``best`` (the paper's heuristics, then ILS from the best)."""

    iterations: int = pydantic.Field(
        default=100, ge=0,
        description="rounds of the final iterated local search at most (they also stop at a "
        "work budget of half the constructions' local-search work)")


# --------------------------------------------------------------------------------------------
# estimates: what a heuristic allocates and computes, from the instance fields alone

#: operations charged for one step of an interpreted (Python) loop over vertices or edges: such a
#: step costs about a microsecond, a numpy element operation about a nanosecond
PY_STEP = 1000.0
#: sweeps of the local search charged: its number of improving rounds depends on the data (a
#: few on the paper's instances); each sweep visits every step, vertex and cluster
LS_SWEEPS = 8.0


def _dims(instance: Instance) -> tuple[float, float, float, float, float]:
    """(n, l, tau, total edges, largest step's edges) as floats (l capped: an estimate only)."""
    counts = [len(e) for e in instance.edges]
    return (float(instance.n), float(min(instance.l, 2**62)), float(instance.tau),
            float(sum(counts)), float(max(counts)))


def _add(*sizes: Size) -> Size:
    """Phases of one run: memory and work both summed (a conservative peak)."""
    return Size(sum(s.memory for s in sizes), sum(s.work for s in sizes))


#: operations charged per entry of the tau x n Solution (Python ints validated, evaluated:
#: measured about 2.5 microseconds per entry for ``random`` at n = 10^6)
_OUTPUT_OPS = 2500.0
#: operations charged per step for its scipy matrix and graph (tens of microseconds each)
_STEP_OPS = 50_000.0


def _base(instance: Instance) -> Size:
    """Step matrices and graphs (CSR per step, compressed), and the tau x n Solution."""
    n, _, tau, e, _ = _dims(instance)
    return Size(8 * (4 * n * tau + 24 * e) + 64 * n * tau + 2000 * tau,
                20 * (n * tau + 2 * e) + _OUTPUT_OPS * n * tau + _STEP_OPS * tau)


def _dense(instance: Instance) -> Size:
    """Algorithm 3.1 in Python: O((n + m) log n) heap steps, lists of n and 2m entries."""
    n, _, _, e, _ = _dims(instance)
    return Size(40 * (5 * n + 4 * e), PY_STEP * (n + 2 * e) * math.log2(n + 2))


def _metis(instance: Instance) -> Size:
    """METIS on the compressed graph (via pymetis: about 4 microseconds per vertex measured at
    n = 10^6) and the capacity repair (n x l)."""
    n, l, _, e, _ = _dims(instance)
    return Size(80 * (n + 2 * e) + 16 * n * l,
                50 * (n + 2 * e) * math.log2(l + 2) + 10 * n * l + 3 * PY_STEP * (n + 2 * e))


def _random(instance: Instance) -> Size:
    n = float(instance.n)
    return Size(8 * n, 10 * n)


def _ls(instance: Instance, steps: float, temporal: bool = False) -> Size:
    """The local search over ``steps`` graphs on n vertices (:mod:`.ls`): an n x l
    matrix per step, LS_SWEEPS sweeps of delta matrices, moves and swaps."""
    n, l, _, e, _ = _dims(instance)
    memory = 8 * n * l * (steps + 6) + 16 * l * l
    sweep = steps * (12 * n * l + 2 * l * l) + 4 * e \
        + PY_STEP * steps * n
    if temporal:
        memory += 8 * n * l * (steps + 4)
        sweep += 10 * steps * n * l + PY_STEP * n
        if instance.n <= 400:  # the pair paths (instances up to 400 vertices)
            pairs = n * (n - 1) / 2
            memory += 64 * pairs * steps
            sweep += 30 * pairs * steps + PY_STEP * n
    return Size(memory, LS_SWEEPS * sweep)


def _repair(instance: Instance) -> Size:
    n, l, tau, _, _ = _dims(instance)
    return Size(16 * n * l, tau * (10 * n * l + PY_STEP * n))


def _roll(instance: Instance, x: int) -> Size:
    """Roll_x: compressed windows of 2x + 1 steps, a local search per step, the final one."""
    n, _, tau, e, e_max = _dims(instance)
    width = 2 * min(float(x), tau) + 1
    window = Size(8 * 6 * (n + 2 * min(e, width * e_max)), 10 * tau * width * (n + 2 * e_max))
    return _add(_base(instance), _dense(instance), window, _ls(instance, tau),
                _ls(instance, tau))


def _refine(instance: Instance) -> Size:
    """Refine: one local search over the blocks per level, ceil(log2 tau) + 1 levels."""
    n, _, tau, e, _ = _dims(instance)
    levels = math.ceil(math.log2(tau)) + 1
    ls = _ls(instance, tau)
    return _add(_base(instance), Size(ls.memory, levels * ls.work),
                Size(0.0, 10 * levels * (n * tau + 2 * e)))


def _estimate_start(instance: Instance, start: str | Solution) -> Size:
    if isinstance(start, str):
        return _ESTIMATES[start](instance)
    return _repair(instance)


def _no_options(fn: Callable[[Instance], Size]) -> Callable[[Instance, Options], Size]:
    """An estimate of a heuristic without options, as the contract calls it."""
    def estimate(instance: Instance, options: Options) -> Size:
        return fn(instance)
    return estimate


_ESTIMATES: dict[str, Callable[[Instance], Size]] = {
    "dense": lambda i: _add(_base(i), _dense(i)),
    "dense-ls": lambda i: _add(_base(i), _dense(i), _ls(i, float(i.tau))),
    "dense-online": lambda i: _roll(i, 0),
    "dense-roll": lambda i: _roll(i, 1),
    "dense-roll10": lambda i: _roll(i, 10),
    "dense-refine": lambda i: _add(_refine(i), _dense(i)),
    "random": lambda i: _add(_base(i), _random(i)),
    "random-ls": lambda i: _add(_base(i), _random(i), _ls(i, float(i.tau))),
    "metis": lambda i: _add(_base(i), _metis(i)),
    "metis-ls": lambda i: _add(_base(i), _metis(i), _ls(i, float(i.tau))),
    "metis-refine": lambda i: _add(_refine(i), _metis(i)),
}


def estimate_roll(instance: Instance, options: RollOptions) -> Size:
    """Size of ``dense-roll`` with window ``x``."""
    return _roll(instance, options.x)


def estimate_local_search(instance: Instance, options: LocalSearchOptions) -> Size:
    """Size of ``local-search``: its start, then the search over all steps."""
    return _add(_base(instance), _estimate_start(instance, options.start),
                _ls(instance, float(instance.tau), temporal=options.temporal))


def estimate_ils(instance: Instance, options: IlsOptions) -> Size:
    """Size of ``ils``: its start, then ``iterations + 1`` searches with the path moves."""
    ls = _ls(instance, float(instance.tau), temporal=True)
    return _add(_base(instance), _estimate_start(instance, options.start),
                Size(ls.memory, (options.iterations + 1) * ls.work))


def estimate_best(instance: Instance, options: BestOptions) -> Size:
    """Size of ``best``: every heuristic of :data:`_BEST_OF`, then ``ils``: its first search
    and its rounds, which stop at :data:`BEST_BUDGET` times the constructions' work (one round
    may overrun it) or after ``iterations``. Memory: the largest construction's, then the ILS's
    beside the best construction's result."""
    parts = [_ESTIMATES[name](instance) for name in _BEST_OF]
    ls = _ls(instance, float(instance.tau), temporal=True)
    built = sum(p.work for p in parts)
    rounds = min(options.iterations * ls.work, BEST_BUDGET * built + ls.work)
    return Size(max(p.memory for p in parts) + ls.memory + _base(instance).memory,
                built + ls.work + rounds)


def _entry(name: str, description: str) -> Heuristic:
    return Heuristic(function=_CONSTRUCTIONS[name], Options=NoOptions,
                     estimate=_no_options(_ESTIMATES[name]), description=description)


HEURISTICS: dict[str, Heuristic] = {
    "dense": _entry("dense", "Dense (Algorithm 3.1) on the compression of all steps, the same "
                    "clustering at every step"),
    "dense-ls": _entry("dense-ls", "Dense, then the final local search over all steps"),
    "dense-online": _entry("dense-online", "Dense-Online = Roll_0 without the final local "
                           "search"),
    "dense-roll": Heuristic(dense_roll, RollOptions, estimate_roll,
                            "Dense-Roll_x (section 3, variant 1) with the final local search"),
    "dense-roll10": _entry("dense-roll10", "Dense-Roll_10 with the final local search"),
    "dense-refine": _entry("dense-refine", "Dense-Refine (section 3, variant 2), the paper's "
                           "best heuristic"),
    "random": _entry("random", "a random balanced partition, the same at every step"),
    "random-ls": _entry("random-ls", "a random balanced partition, then the final local "
                        "search"),
    "metis": _entry("metis", "METIS on the compression of all steps, repaired to capacity k"),
    "metis-ls": _entry("metis-ls", "METIS (repaired), then the final local search"),
    "metis-refine": _entry("metis-refine", "Refine started from METIS"),
    "local-search": Heuristic(improve, LocalSearchOptions, estimate_local_search,
                              "the local search of section 3 over all steps from a start"),
    "ils": Heuristic(ils, IlsOptions, estimate_ils,
                     "iterated local search with path moves (ours, not in the paper)"),
    "best": Heuristic(best_of, BestOptions, estimate_best,
                      "the best of the paper's heuristics, then ILS from it (ours)"),
}
