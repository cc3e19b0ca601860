"""Heuristics for TABGP (paper 004, Figiel, Nichterlein, Schmid, sections 3 and 4.5).

:data:`HEURISTICS` maps each registry name to its function (the function's docstring gives the
paper's name, section and our choices), its options model (``dmlopt list tabgp`` prints them)
and its size estimate (:mod:`dmlopt.heuristics.tabgp.estimates`), so the core refuses e.g. Dense
on 10^7 vertices before it starts.

Every heuristic is ``fn(instance, *, seed=0, **options) -> Solution`` and deterministic for a
seed. Dense and the local search use no randomness (ties go to the smallest vertex index, then
the smallest cluster); ``seed`` drives METIS, the random start and the ILS perturbations.

Choices common to the heuristics (where the paper is open):

* Weighted graphs (section 4.5: "replace counting of edges with summing of edge-weights"): Dense
  scores ``(w(N(v) n X), -wdeg(v))`` with summed weights; compressed steps weigh an edge by the
  sum of its weights over the merged steps (its number of occurrences when unweighted).
* The local search is the paper's neighbourhood (single-vertex moves into clusters with free
  capacity, swaps, one step at a time, migration-aware); its search order is ours, see
  :mod:`dmlopt.heuristics.tabgp.ls`. "+ local search" in a name is the final local search over
  all steps combined (section 3).
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import numpy as np
import pydantic

from dmlopt.contract import Heuristic, NoOptions, Options
from dmlopt.errors import InstanceError, Interrupted
from dmlopt.heuristics.tabgp.construct import (  # noqa: F401 (re-exported)
    _CONSTRUCTIONS,
    _check_static,
    _final,
    _graphs,
    _random_labels,
    _replicate,
    _solution,
    _static,
    dense_ls,
    dense_online,
    dense_refine,
    dense_roll,
    dense_roll10,
    dense_static,
    metis_ls,
    metis_refine,
    metis_static,
    random_ls,
    random_partition,
    refine,
    roll,
)
from dmlopt.heuristics.tabgp.estimates import (
    _ESTIMATES,
    _no_options,
    estimate_best,
    estimate_ils,
    estimate_local_search,
    estimate_memetic,
    estimate_roll,
)
from dmlopt.heuristics.tabgp.evolve import crossover, ils_rounds, match_labels
from dmlopt.heuristics.tabgp.graph import (  # noqa: F401 (re-exported)
    Graph,
    compress,
    dense,
    metis,
    repair,
    step_matrices,
)
from dmlopt.heuristics.tabgp.ls import local_search
from dmlopt.heuristics.tabgp.ls import work as ls_work
from dmlopt.models.tabgp import Instance, Solution, cost_parts
from dmlopt.validation import one_of, time_limit_field

# --------------------------------------------------------------------------------------------
# improvers (the constructions are in dmlopt.heuristics.tabgp.construct)


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
    """The local search of section 3 over all steps from ``start`` (``local-search``).

    An over-capacity start is repaired first (the cheapest moves out of overfull clusters).

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Seed of the start when it is a heuristic name (default 0).
    start : Solution, dict or str, optional
        A Solution, its dict, or a construction heuristic's name run with ``seed`` (default
        ``"dense"``).
    temporal : bool, optional
        Add our path neighbourhoods (default False): a vertex re-routed through all steps at
        once and two vertices swapped at any subset of steps, each an exact DP over the steps.

    Returns
    -------
    Solution
        The local optimum reached from the start.

    References
    ----------
    Paper 004, section 3 (the local search: single-vertex moves and swaps, one step at a time,
    migration-aware). Ours: its search order, the repair of the start and the path moves of
    ``temporal`` (moves the one-step neighbourhood cannot make, since the migrations of a
    vertex must change together).
    """
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
    Only the perturbed steps and their neighbours are searched again.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Seed of the start (when a heuristic name) and of the perturbations (default 0).
    start : Solution, dict or str, optional
        The start: a Solution, its dict, or a construction heuristic's name (default
        ``"dense-refine"``).
    iterations : int, optional
        Perturb-and-improve rounds (default 100, >= 0).
    strength : float, optional
        Fraction of the vertices a perturbation shuffles, at least 2 (default 0.25, in (0, 1]).

    Returns
    -------
    Solution
        The best assignment found (never worse than the local optimum of the start).

    References
    ----------
    Ours: iterated local search (H. R. Lourenco, O. C. Martin, T. Stuetzle, Iterated local
    search, in Handbook of Metaheuristics, Springer 2003) around paper 004's local search
    (section 3), with our path moves and block perturbations.
    """
    return _ils(instance, seed, start, iterations, strength)


def _ils(instance: Instance, seed: int, start: Solution | str | dict, iterations: int,
         strength: float, budget: float | None = None) -> Solution:
    """:func:`ils`; with ``budget``, the rounds stop once their local searches have done that
    much work (:func:`dmlopt.heuristics.tabgp.ls.work`): the round that reaches it is cut
    there (``stop_at``) and kept, like any round, only when not worse."""
    if iterations < 0:
        raise InstanceError("iterations", iterations, "must be >= 0")
    if not 0 < strength <= 1:
        raise InstanceError("strength", strength, "must be in (0, 1]")
    rng = np.random.default_rng(seed)
    graphs = _graphs(instance)[1]
    start_opt = _final(instance, _start(instance, start, seed), graphs, temporal=True)
    stop_at = math.inf if budget is None else ls_work() + budget
    best, _ = ils_rounds(graphs, start_opt, lambda a: _total(instance, a), instance.l,
                         instance.k, instance.alpha, rng, iterations, strength, stop_at)
    return _solution(best)


#: the work budget of ``best``'s ILS rounds (ours), in the units of
#: :func:`dmlopt.heuristics.tabgp.ls.work` (about a microsecond of CPU time each, a count, so
#: the same seed gives the same solution): BEST_MIN_WORK plus BEST_ENTRY_WORK per entry of the
#: tau x n x l assignment space. A round's search grows faster with n than the constructions
#: (drift, m = 5n, tau 10, l 16: about n^1.7), so a fixed number of rounds would dominate at
#: large n; a budget linear in the instance keeps ``best`` growing like its constructions and
#: gives small instances their ``iterations`` rounds
BEST_MIN_WORK = 500_000.0
BEST_ENTRY_WORK = 8.0


def best_budget(instance: Instance) -> float:
    """The work budget of :func:`best_of`'s ILS rounds on ``instance``.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters).

    Returns
    -------
    float
        ``BEST_MIN_WORK + BEST_ENTRY_WORK * tau * n * l``, in the units of
        :func:`dmlopt.heuristics.tabgp.ls.work`.

    References
    ----------
    Ours: the budget of the iterated local search :func:`best_of` runs after paper 004's
    heuristics.
    """
    return BEST_MIN_WORK + BEST_ENTRY_WORK * float(instance.tau) * instance.n * instance.l


#: the paper's heuristics :func:`best_of` runs before its ILS
_BEST_OF = ("dense-refine", "metis-refine", "dense-roll", "dense-roll10", "dense-ls", "metis-ls",
            "random-ls")


def best_of(instance: Instance, *, seed: int = 0, iterations: int = 100) -> Solution:
    """The best of the paper's heuristics (Refine, Roll_1, Roll_10, METIS, random + local
    search), then :func:`ils` from it (ours, not in the paper).

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Drives METIS, the random start and the ILS perturbations (default 0).
    iterations : int, optional
        At most this many ILS rounds (default 100, >= 0); they also stop at the work budget
        :func:`best_budget` (linear in the instance size). The result is never worse than the
        best construction, Dense-Refine included.

    Returns
    -------
    Solution
        The ILS's best assignment.

    References
    ----------
    Ours: paper 004's heuristics (section 3, Figure 4.2) run one after the other, then our
    :func:`ils` from the best of them under a work budget, so the result is never worse than
    Dense-Refine.
    """
    best, best_cost = None, np.inf
    for name in _BEST_OF:
        assign = np.asarray(_CONSTRUCTIONS[name](instance, seed=seed).assignment)
        cost = _total(instance, assign)
        if cost < best_cost - 1e-9:
            best, best_cost = assign, cost
    return _ils(instance, seed, _solution(best), iterations, 0.25, best_budget(instance))


#: the constructions the population of :func:`memetic` starts from, in turn
_MEMETIC_STARTS = _BEST_OF


def memetic(instance: Instance, *, seed: int = 0, population: int = 8, generations: int = 150,
            rounds: int = 30, strength: float = 0.1, time_limit: float | None = None
            ) -> Solution:
    """Memetic search: a population of ILS results bred by partition crossover (ours, not in
    the paper).

    The population starts from the constructions of :func:`best_of` in turn (Dense-Refine
    first; member i with seed ``seed + i``), each improved by the local search with the path
    moves and ``rounds`` ILS rounds (:func:`dmlopt.heuristics.tabgp.evolve.ils_rounds`). Each
    generation crosses two random members (:func:`dmlopt.heuristics.tabgp.evolve.crossover`:
    the entries they share are kept, the others re-drawn within the cluster sizes), improves
    the child the same way, and lets it replace the worst member when it is better than that
    member and not already in the population.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Seed of the constructions, the ILS perturbations and the crossovers (default 0).
    population : int, optional
        Members (default 8, >= 2).
    generations : int, optional
        Children made (default 150, >= 0).
    rounds : int, optional
        ILS rounds per member and per child (default 30, >= 0). For the same number of ILS
        rounds in all, more generations of fewer rounds found better solutions on er graphs
        (benchmarks/studies/tabgp/NOTES.md, "A stronger heuristic for er").
    strength : float, optional
        Fraction of the vertices an ILS perturbation shuffles, at least 2 (default 0.1).
    time_limit : float, optional
        Seconds after which no further ILS round, member or generation starts (default:
        none). The first member (construction and local search) always runs; with a limit
        the result depends on the machine's speed. Ctrl-C (:class:`KeyboardInterrupt`) once a
        member exists raises :class:`dmlopt.errors.Interrupted` with the best member so far.

    Returns
    -------
    Solution
        The best member; never worse than Dense-Refine (the first member starts from it and
        only improves).

    References
    ----------
    Ours: P. Moscato, "On evolution, search, optimization, genetic algorithms and martial
    arts: towards memetic algorithms", Caltech C3P report 826, 1989 (the scheme); U. Benlic and
    J.-K. Hao, IEEE Trans. Evol. Comput. 15(5), 2011 (memetic graph partitioning); paper 004,
    section 3 (the constructions and the local search inside).
    """
    import time

    if population < 2:
        raise InstanceError("population", population, "must be >= 2")
    if generations < 0 or rounds < 0:
        bad = ("generations", generations) if generations < 0 else ("rounds", rounds)
        raise InstanceError(bad[0], bad[1], "must be >= 0")
    if not 0 < strength <= 1:
        raise InstanceError("strength", strength, "must be in (0, 1]")
    if time_limit is not None and not time_limit > 0:
        raise InstanceError("time_limit", time_limit, "must be > 0 seconds")
    deadline = math.inf if time_limit is None else time.perf_counter() + float(time_limit)
    graphs = _graphs(instance)[1]
    l, k, alpha = instance.l, instance.k, instance.alpha

    def cost(assign: np.ndarray) -> float:
        return _total(instance, assign)

    def improved(assign: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        opt = local_search(graphs, assign, l, k, alpha, temporal=True)
        return ils_rounds(graphs, opt, cost, l, k, alpha, rng, rounds, strength,
                          deadline=deadline)

    members: list[tuple[np.ndarray, float]] = []
    try:
        for i in range(population):
            if members and time.perf_counter() >= deadline:
                break  # out of time: the members so far (no generation starts either)
            name = _MEMETIC_STARTS[i % len(_MEMETIC_STARTS)]
            start = np.asarray(_CONSTRUCTIONS[name](instance, seed=seed + i).assignment)
            members.append(improved(start, np.random.default_rng([seed, i])))
        rng = np.random.default_rng([seed, population])
        for _ in range(generations):
            if time.perf_counter() >= deadline:
                break
            i, j = rng.choice(population, size=2, replace=False)
            child, value = improved(crossover(members[i][0], members[j][0], l, rng), rng)
            worst = max(range(population), key=lambda q: members[q][1])
            if value < members[worst][1] - 1e-9 and not any(
                    np.array_equal(match_labels(child, m, l), child) for m, _ in members):
                members[worst] = (child, value)
    except KeyboardInterrupt:  # Ctrl-C: the best member so far is the answer
        if not members:
            raise
        raise Interrupted(_solution(min(members, key=lambda m: m[1])[0])) from None
    return _solution(min(members, key=lambda m: m[1])[0])



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
        "work budget linear in tau x n x l, best_budget)")


class MemeticOptions(Options):
    """Options of ``memetic`` (a population of ILS results bred by crossover, ours)."""

    population: int = pydantic.Field(default=8, ge=2, le=1000, description="members")
    generations: int = pydantic.Field(
        default=150, ge=0, description="children made by crossover, each improved like a member")
    rounds: int = pydantic.Field(
        default=30, ge=0, description="ILS rounds per member and per child")
    strength: float = pydantic.Field(
        default=0.1, gt=0, le=1, description="fraction of the vertices an ILS perturbation "
        "shuffles (at least 2)")
    time_limit: float | None = time_limit_field(
        None, "seconds after which no ILS round, member or generation starts (the first "
        "member's construction and local search always run); default none")


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
    "memetic": Heuristic(memetic, MemeticOptions, estimate_memetic,
                         "a population of ILS results bred by partition crossover (ours, "
                         "slower than best, better solutions)"),
}

#: the heuristic to use (docs/tabgp.md; memetic is above the default limits at drift n = 1,000)
RECOMMENDED = "best"
