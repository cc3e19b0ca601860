"""Size estimates of the TABGP heuristics (:data:`dmlopt.heuristics.tabgp.HEURISTICS`): what a
run allocates and computes, from n, l, tau and the edge counts alone (ours).

Python-level loops are charged :data:`PY_STEP` operations a step, numpy element operations one
each, the local search :data:`LS_SWEEPS` sweeps; ``dmlopt reproduce tabgp growth`` compares the
estimates with measured peaks and CPU times.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from dmlopt.contract import Options, Size
from dmlopt.models.tabgp import Instance, Solution

if TYPE_CHECKING:
    from dmlopt.heuristics.tabgp import (
        BestOptions,
        IlsOptions,
        LocalSearchOptions,
        MemeticOptions,
        RollOptions,
    )


#: operations charged for one step of an interpreted (Python) loop over vertices or edges: such a
#: step costs about a microsecond, a numpy element operation about a nanosecond
PY_STEP = 1000.0
#: sweeps of the local search charged (each visits every step, vertex and cluster): their
#: number depends on the data and on how good the start is. Measured on the growth series
#: (drift, m = 5n, tau 10, l 16, n = 1,000-4,000, seeds 0 and 1; ILS at n = 125-250), in CPU
#: time against one sweep's charge: about 6-8 from a static construction (Dense, METIS), 8-12
#: from a random partition, 2 from a start the search already improved (Roll_x's previous
#: step and its final search, Refine's finer levels), 6-8 per ILS round (its path moves
#: included); we charge about twice that
LS_SWEEPS = 15.0
LS_SWEEPS_RANDOM = 25.0
LS_SWEEPS_WARM = 4.0
LS_SWEEPS_ILS = 15.0
#: operations charged per edge of the searched graph and sweep (swap candidates look up
#: their edge weights in Python): Roll_x's windows compress 2x + 1 steps
PY_EDGE = 125.0
#: operations charged per heap step of Dense (Python): measured 60 ns per step of
#: (n + 2 e) log2 n at n = 4,000 (e all edges of the compressed steps)
DENSE_STEP = 80.0


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


def _dense(instance: Instance, edges: float | None = None) -> Size:
    """Algorithm 3.1 in Python: O((n + m) log n) heap steps (:data:`DENSE_STEP` each), lists
    of n and 2m entries; m the edges of the compressed graph (at most ``edges``, default all
    steps' edges)."""
    n, _, _, e, _ = _dims(instance)
    e = e if edges is None else min(e, edges)
    return Size(40 * (5 * n + 4 * e), DENSE_STEP * (n + 2 * e) * math.log2(n + 2))


def _metis(instance: Instance) -> Size:
    """METIS on the compressed graph (via pymetis: about 4 microseconds per vertex measured at
    n = 10^6; its adjacency lists built per vertex and edge) and the capacity repair (n x l)."""
    n, l, _, e, _ = _dims(instance)
    return Size(80 * (n + 2 * e) + 16 * n * l,
                50 * (n + 2 * e) * math.log2(l + 2) + 10 * n * l + 100 * (n + 2 * e))


def _random(instance: Instance) -> Size:
    n = float(instance.n)
    return Size(8 * n, 10 * n)


def _ls(instance: Instance, steps: float, temporal: bool = False,
        sweeps: float = LS_SWEEPS, edges: float | None = None) -> Size:
    """The local search over ``steps`` graphs on n vertices (:mod:`.ls`): an n x l
    matrix per step, ``sweeps`` sweeps of delta matrices, moves and swaps over the graphs'
    ``edges`` (default all steps' edges)."""
    n, l, _, e, _ = _dims(instance)
    e = e if edges is None else edges
    memory = 8 * n * l * (steps + 6) + 16 * l * l
    sweep = steps * (12 * n * l + 2 * l * l) + 4 * e \
        + PY_STEP * steps * n + PY_EDGE * e
    if temporal:
        memory += 8 * n * l * (steps + 4)
        sweep += 10 * steps * n * l + PY_STEP * n
        if instance.n <= 400:  # the pair paths (instances up to 400 vertices)
            pairs = n * (n - 1) / 2
            memory += 96 * pairs * steps  # measured 78-86 bytes per pair and step
            sweep += 30 * pairs * steps + PY_STEP * n
    return Size(memory, sweeps * sweep)


def _repair(instance: Instance) -> Size:
    n, l, tau, _, _ = _dims(instance)
    return Size(16 * n * l, tau * (10 * n * l + PY_STEP * n))


def _roll(instance: Instance, x: int, final: bool = True) -> Size:
    """Roll_x: Dense on the first max(x, 1) steps, compressed windows of 2x + 1 steps, a
    local search per step (warm: from the previous step), the final one (warm)."""
    n, _, tau, e, e_max = _dims(instance)
    width = 2 * min(float(x), tau) + 1
    edges = min(e, width * e_max)
    window = Size(8 * 6 * (n + 2 * edges), 10 * tau * width * (n + 2 * e_max))
    per_step = _ls(instance, 1.0, sweeps=LS_SWEEPS_WARM, edges=edges)
    steps = Size(per_step.memory, tau * per_step.work)
    last = _ls(instance, tau, sweeps=LS_SWEEPS_WARM) if final else Size(0.0, 0.0)
    return _add(_base(instance), _dense(instance, max(x, 1) * e_max), window, steps, last)


def _refine(instance: Instance) -> Size:
    """Refine: one local search over the blocks per level, ceil(log2 tau) + 1 levels: the
    first on the one compressed graph from the construction, the finer ones warm over
    min(2^j, tau) blocks."""
    n, _, tau, e, _ = _dims(instance)
    levels = math.ceil(math.log2(tau)) + 1
    first = _ls(instance, 1.0)
    finer = [_ls(instance, min(2.0 ** j, tau), sweeps=LS_SWEEPS_WARM) for j in range(1, levels)]
    searches = Size(max(x.memory for x in [first, *finer]), sum(x.work for x in [first, *finer]))
    return _add(_base(instance), searches, Size(0.0, 10 * levels * (n * tau + 2 * e)))


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
    "dense-online": lambda i: _roll(i, 0, final=False),
    "dense-roll": lambda i: _roll(i, 1),
    "dense-roll10": lambda i: _roll(i, 10),
    "dense-refine": lambda i: _add(_refine(i), _dense(i)),
    "random": lambda i: _add(_base(i), _random(i)),
    "random-ls": lambda i: _add(_base(i), _random(i),
                                _ls(i, float(i.tau), sweeps=LS_SWEEPS_RANDOM)),
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
    """Size of ``ils``: its start, its first search with the path moves, then ``iterations``
    rounds (:data:`LS_SWEEPS_ILS` sweeps each)."""
    ls = _ls(instance, float(instance.tau), temporal=True)
    rounds = options.iterations * _ls(instance, float(instance.tau), temporal=True,
                                      sweeps=LS_SWEEPS_ILS).work
    return _add(_base(instance), _estimate_start(instance, options.start),
                Size(ls.memory, ls.work + rounds))


def estimate_best(instance: Instance, options: BestOptions) -> Size:
    """Size of ``best``: every heuristic of ``_BEST_OF``
    (:func:`dmlopt.heuristics.tabgp.best_of`), then ``ils``: its first search and its rounds,
    which stop at the work budget :func:`dmlopt.heuristics.tabgp.best_budget` (about a
    microsecond, :data:`PY_STEP` operations, per unit) or after ``iterations``. Memory: the
    larger of the largest construction's and the ILS's beside the instance's graphs and the
    best construction's result (the constructions' arrays are freed before the ILS)."""
    from dmlopt.heuristics.tabgp import _BEST_OF, best_budget

    parts = [_ESTIMATES[name](instance) for name in _BEST_OF]
    ls = _ls(instance, float(instance.tau), temporal=True)
    one = _ls(instance, float(instance.tau), temporal=True, sweeps=LS_SWEEPS_ILS).work
    built = sum(p.work for p in parts)
    rounds = min(options.iterations * one, PY_STEP * best_budget(instance))
    return Size(max(max(p.memory for p in parts), ls.memory + _base(instance).memory),
                built + ls.work + rounds)


def estimate_memetic(instance: Instance, options: MemeticOptions) -> Size:
    """Size of ``memetic``: ``population`` constructions (those of ``_BEST_OF`` in turn), then
    one search with the path moves and ``rounds`` ILS rounds for each member and each of the
    ``generations`` children (with a ``time_limit``, at most the population's searches and the
    limit's worth of work). Memory: the largest construction's or the searches' beside the
    population's assignments."""
    from dmlopt.heuristics.tabgp import _MEMETIC_STARTS

    names = [_MEMETIC_STARTS[i % len(_MEMETIC_STARTS)] for i in range(options.population)]
    parts = [_ESTIMATES[name](instance) for name in names]
    ls = _ls(instance, float(instance.tau), temporal=True)
    one = _ls(instance, float(instance.tau), temporal=True, sweeps=LS_SWEEPS_ILS).work
    searches = (options.population + options.generations) * (ls.work + options.rounds * one)
    if options.time_limit is not None:
        # the population's constructions and searches always run; the rest stops at the limit
        # (an operation is about a nanosecond)
        searches = min(searches, options.population * ls.work + 1e9 * options.time_limit)
    kept = 8.0 * (options.population + 2) * instance.tau * instance.n
    # the searches' peak: 1.0-1.1 x the measured on er (n = 100, 300; the pair path moves),
    # hence the margin
    peak = max(max(p.memory for p in parts), 1.5 * (ls.memory + _base(instance).memory))
    return Size(peak + kept, sum(p.work for p in parts) + searches)
