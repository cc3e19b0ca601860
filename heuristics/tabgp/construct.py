"""TABGP (paper 004): the construction heuristics (Dense, METIS, random, Roll_x, refine, each
with and without the final local search) and their building blocks.

Registered, with their options and size estimates, in :data:`dmlopt.heuristics.tabgp.HEURISTICS`
(whose module docstring gives the choices common to all of them); the package re-exports every
name defined here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dmlopt.errors import InstanceError
from dmlopt.heuristics.tabgp.graph import Graph, compress, dense, metis, step_matrices
from dmlopt.heuristics.tabgp.ls import local_search
from dmlopt.models.tabgp import Instance, Solution


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
    """Dense (Algorithm 3.1) on the compression of all steps, kept at every step.

    The paper applies Dense to one static graph; on a temporal instance we cluster the
    compression of all steps (an edge weighs the sum of its weights over the steps) and keep
    the clustering at every step, so no vertex migrates.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Unused: Dense is deterministic (default 0).

    Returns
    -------
    Solution
        The same clustering at every step (``assignment[t][v]``, tau rows).

    References
    ----------
    Paper 004, section 3 (Algorithm 3.1, Dense) and section 4.5 (weighted graphs); its use
    on the compression of all steps is ours.
    """
    mats = step_matrices(instance)
    return _solution(_replicate(instance, dense(compress(mats), instance.l, instance.k)))


def dense_ls(instance: Instance, *, seed: int = 0) -> Solution:
    """Dense on the compression of all steps (:func:`dense_static`), then the final local
    search over all steps.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Unused: Dense and the local search are deterministic (default 0).

    Returns
    -------
    Solution
        The local optimum reached from the static Dense clustering.

    References
    ----------
    Paper 004, section 3 (Dense, Algorithm 3.1; the local search) and Figure 4.2 ("Dense +
    local search").
    """
    mats, graphs = _graphs(instance)
    start = _replicate(instance, dense(compress(mats), instance.l, instance.k))
    return _solution(_final(instance, start, graphs))


def metis_static(instance: Instance, *, seed: int = 0) -> Solution:
    """METIS on the compression of all steps, repaired to capacity k, kept at every step.

    METIS (pymetis, default parameters) needs integer edge weights: integral weights are
    kept, others scaled to a total of 2**30 and rounded (the paper took square roots or
    logarithms of the huge LLM weights). METIS' balance tolerance can exceed k, so the result
    is repaired greedily to capacity k (the cheapest moves out of overfull clusters first).

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        METIS' random seed (default 0).

    Returns
    -------
    Solution
        The same (repaired) clustering at every step.

    References
    ----------
    Paper 004, section 4 (METIS as a baseline, Figure 4.2); G. Karypis, V. Kumar, A fast and
    high quality multilevel scheme for partitioning irregular graphs, SIAM J. Sci. Comput. 20
    (1998) 359-392. The weight scaling and the capacity repair are ours.
    """
    mats = step_matrices(instance)
    labels = metis(compress(mats), instance.l, instance.k, seed=seed)
    return _solution(_replicate(instance, labels))


def metis_ls(instance: Instance, *, seed: int = 0) -> Solution:
    """METIS (repaired, :func:`metis_static`) on the compression of all steps, then the final
    local search over all steps.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        METIS' random seed (default 0).

    Returns
    -------
    Solution
        The local optimum reached from the METIS clustering.

    References
    ----------
    Paper 004, section 4 and Figure 4.2 ("METIS + local search"); Karypis and Kumar 1998 (see
    :func:`metis_static`).
    """
    mats, graphs = _graphs(instance)
    start = _replicate(instance, metis(compress(mats), instance.l, instance.k, seed=seed))
    return _solution(_final(instance, start, graphs))


def random_partition(instance: Instance, *, seed: int = 0) -> Solution:
    """A uniformly random balanced partition, the same at every step (no migration).

    Vertex v gets cluster v mod l before the labels are shuffled, so every cluster holds
    floor(n / l) or ceil(n / l) vertices.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Seed of the shuffle (default 0).

    Returns
    -------
    Solution
        The same random clustering at every step.

    References
    ----------
    Paper 004, Figure 4.2 (the random baseline, static case).
    """
    return _solution(_replicate(instance, _random_labels(instance, seed)))


def random_ls(instance: Instance, *, seed: int = 0) -> Solution:
    """A random balanced partition (:func:`random_partition`), then the final local search over
    all steps.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Seed of the random start (default 0).

    Returns
    -------
    Solution
        The local optimum reached from the random partition.

    References
    ----------
    Paper 004, Figure 4.2 ("random + local search", static case).
    """
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
    """Dense-Online: Roll_0 without the final local search (the paper's online heuristic).

    Dense clusters the first step; every step t then starts from the clustering of step t - 1
    and is improved by the local search on its own graph plus alpha per vertex that changes
    cluster relative to step t - 1 (no knowledge of the future).

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Unused: Dense and the local search are deterministic (default 0).

    Returns
    -------
    Solution
        One clustering per step, each fixed before the next step is seen.

    References
    ----------
    Paper 004, section 3 (variant 1, Roll_x with x = 0: Online) and Figure 4.2.
    """
    return roll(instance, seed=seed, x=0, static="dense", final=False)


def dense_roll(instance: Instance, *, seed: int = 0, x: int = 1) -> Solution:
    """Dense-Roll_x (section 3, variant 1) with the final local search.

    The first static clustering is Dense on the compression of the first max(x, 1) steps
    (x = 0 would compress nothing; Online clusters the first step). Every step t (the first
    included) is then improved by the local search whose graph is the compression of the steps
    t - x .. t + x ("the compressed x previous and next timesteps", clipped to the horizon)
    plus alpha per vertex that changes cluster relative to the already fixed step t - 1; step
    t starts from the clustering of step t - 1. The final local search over all steps follows.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Unused: Dense and the local search are deterministic (default 0).
    x : int, optional
        Previous and next steps (each side) the local search of step t sees, compressed with
        t (default 1, >= 0; 0 is Online with the final local search).

    Returns
    -------
    Solution
        One clustering per step after the final local search.

    References
    ----------
    Paper 004, section 3 (variant 1, Roll_x) and Figure 4.2 (Dense-Roll_1). The first window
    of max(x, 1) steps is our reading.
    """
    return roll(instance, seed=seed, x=x, static="dense", final=True)


def dense_roll10(instance: Instance, *, seed: int = 0) -> Solution:
    """Dense-Roll_10: :func:`dense_roll` with x = 10, then the final local search.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Unused: Dense and the local search are deterministic (default 0).

    Returns
    -------
    Solution
        One clustering per step after the final local search.

    References
    ----------
    Paper 004, section 3 (variant 1, Roll_x) and Figure 4.2 (Dense-Roll_10).
    """
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
    """Dense-Refine (section 3, variant 2), the paper's best heuristic (Figure 4.2).

    The compression of all steps is clustered (Dense) and improved by the local search; then
    every block of more than one step is split into halves (the first half gets the smaller
    part, floor), both halves start from the block's clustering, and the local search runs over
    the whole sequence of blocks (migration counted between consecutive blocks), level by level
    until every block is a single step; that last level is the final local search.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        Unused: Dense and the local search are deterministic (default 0).

    Returns
    -------
    Solution
        One clustering per step after the last level's local search.

    References
    ----------
    Paper 004, section 3 (variant 2, Refine) and Figure 4.2 (Dense-Refine). The split rule
    (floor for the first half) is our reading.
    """
    return refine(instance, seed=seed, static="dense")


def metis_refine(instance: Instance, *, seed: int = 0) -> Solution:
    """Refine (:func:`dense_refine`) started from METIS (repaired to capacity k,
    :func:`metis_static`) instead of Dense.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (n vertices, tau steps, l clusters of capacity k, migration cost
        alpha).
    seed : int, optional
        METIS' random seed (default 0).

    Returns
    -------
    Solution
        One clustering per step after the last level's local search.

    References
    ----------
    Paper 004, section 3 (variant 2, Refine); METIS as its start is ours (the paper starts
    Refine from Dense).
    """
    return refine(instance, seed=seed, static="metis")


#: the construction heuristics by registry name (a ``start`` names one of them)
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
