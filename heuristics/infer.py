"""Inference methods of paper 000 (sections III-B, V-B) as heuristics of the ``infer`` problem.

Thin wrappers over :mod:`dmlopt.models.infer`: each takes an :class:`dmlopt.models.infer.Instance`
(whose category weights were computed when it was validated) and returns the inferred topology
as a :class:`~dmlopt.models.infer.Solution`. ``ft``: Flow Tracking (Algorithm 1); ``ft-transfer``:
FT with the weights transfer of lines 10-13 (same graph, edge weights set); ``rnj``: Rooted
Neighbor-Joining (ref. [16]); ``ce``: Clique Embedding (ref. [11], random edge choice by
``seed``). Assumptions are documented in :mod:`dmlopt.models.infer.ft` and
:mod:`dmlopt.models.infer.baselines`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pydantic

from dmlopt.contract import Heuristic, NoOptions, Options, Size
from dmlopt.models.infer import Instance, Solution, solution_from_inference
from dmlopt.models.infer.baselines import clique_embedding, rooted_neighbor_joining
from dmlopt.models.infer.ft import flow_tracking


def ft(instance: Instance, *, seed: int = 0) -> Solution:
    """Flow Tracking (Algorithm 1): each path rebuilt along the categories it hits.

    Each non-zero category is one node; a path's categories, ordered by size, give its route
    from the source to its last hop, and edges are added where the route needs them.
    O(n c log c) time for n paths and c non-zero categories.

    Parameters
    ----------
    instance : Instance
        A measurement of :mod:`dmlopt.models.infer` (its category weights were computed when it
        was validated).
    seed : int, optional
        Unused (the method is deterministic); default 0.

    Returns
    -------
    Solution
        The inferred topology: directed edges, the source, one endpoint and one route per
        measurement path (:func:`~dmlopt.models.infer.solution_from_inference`).

    References
    ----------
    Paper 000 (An, Wu, Huang), section III-B, Algorithm 1; our reading of its open points is
    documented in :mod:`dmlopt.models.infer.ft`.
    """
    return solution_from_inference(flow_tracking(instance.categories, instance.n))


def ft_transfer(instance: Instance, *, seed: int = 0) -> Solution:
    """Flow Tracking with the weights transfer: the graph of :func:`ft`, edge weights set.

    Parameters
    ----------
    instance : Instance
        A measurement of :mod:`dmlopt.models.infer` (its category weights were computed when it
        was validated).
    seed : int, optional
        Unused (the method is deterministic); default 0.

    Returns
    -------
    Solution
        The inferred topology: directed edges, the source, one endpoint and one route per
        measurement path (:func:`~dmlopt.models.infer.solution_from_inference`); edge
        ``weights`` from the category weights.

    References
    ----------
    Paper 000, section III-B, Algorithm 1 with its lines 10-13 (weights transfer).
    """
    return solution_from_inference(flow_tracking(instance.categories, instance.n,
                                                 weights_transfer=True))


def rnj(instance: Instance, *, seed: int = 0, delta: float | None = None) -> Solution:
    """Rooted Neighbor-Joining: a tree from the shared path lengths of every pair of paths.

    Parameters
    ----------
    instance : Instance
        A measurement of :mod:`dmlopt.models.infer` (its category weights were computed when it
        was validated).
    seed : int, optional
        Unused (the method is deterministic); default 0.
    delta : float or None, optional
        Lower bound on inferred link lengths (the metric's units): shared lengths closer than
        ``delta / 2`` are merged; None (default): 1e-9 times the largest.

    Returns
    -------
    Solution
        The inferred topology: directed edges, the source, one endpoint and one route per
        measurement path (:func:`~dmlopt.models.infer.solution_from_inference`).

    References
    ----------
    J. Ni, H. Xie, S. Tatikonda and Y. R. Yang, Efficient and dynamic routing topology inference
    from end-to-end measurements, IEEE/ACM Transactions on Networking 18 (2010) 123-135 (paper
    000's ref. [16], its baseline in section V-B); assumptions in
    :mod:`dmlopt.models.infer.baselines`.
    """
    return solution_from_inference(rooted_neighbor_joining(instance.categories, instance.n,
                                                           delta=delta))


def ce(instance: Instance, *, seed: int = 0) -> Solution:
    """Clique Embedding: each category's weight on a random edge of the smallest clique.

    Parameters
    ----------
    instance : Instance
        A measurement of :mod:`dmlopt.models.infer` (its category weights were computed when it
        was validated).
    seed : int, optional
        Seed of the clique edge drawn for every category (default 0).

    Returns
    -------
    Solution
        The inferred topology: directed edges, the source, one endpoint and one route per
        measurement path (:func:`~dmlopt.models.infer.solution_from_inference`).

    References
    ----------
    Y. Lin, T. He, S. Wang, K. Chan and S. Pasteris, Looking glass of NFV: inferring the
    structure and state of NFV network from external observations, IEEE/ACM Transactions on
    Networking 28 (2020) 1477-1490 (paper 000's ref. [11], described in its section III-B and
    used as a baseline in V-B); assumptions in :mod:`dmlopt.models.infer.baselines`.
    """
    return solution_from_inference(clique_embedding(instance.categories, instance.n, seed=seed))


class RnjOptions(Options):
    """Options of ``rnj``."""

    delta: float | None = pydantic.Field(
        default=None, ge=0, description="lower bound on inferred link lengths: shared lengths "
        "closer than delta / 2 are merged (None: 1e-9 times the largest)")


# --------------------------------------------------------------------------------------------
# estimates, from the measurement drawn at validation: n paths, C categories of total size S

#: operations charged for one step of an interpreted (Python) loop: about a microsecond
PY_STEP = 1000.0


def _dims(instance: Instance) -> tuple[float, float, float]:
    cats = instance.categories
    return float(instance.n), float(len(cats)), float(sum(len(a) for a in cats))


def estimate_ft(instance: Instance, options: Options) -> Size:
    """Flow Tracking: per path the categories containing it, sorted (Algorithm 1, lines 4-9)."""
    n, c, s = _dims(instance)
    return Size(300 * (c + s + n), PY_STEP * (n * c + s * math.log2(c + 2) + c))


def estimate_ft_transfer(instance: Instance, options: Options) -> Size:
    """Flow Tracking and the weights transfer (one more pass over the graph)."""
    size = estimate_ft(instance, options)
    return Size(size.memory, 2 * size.work)


def estimate_rnj(instance: Instance, options: Options) -> Size:
    """RNJ: an n x n shared-length matrix, then up to n merges each scanning all pairs."""
    n, c, s = _dims(instance)
    return Size(8 * n * n + 200 * n * n, PY_STEP * (n**3 + c) + c * n * n)


def estimate_ce(instance: Instance, options: Options) -> Size:
    """Clique Embedding: one clique edge per category, per path its categories in order."""
    n, c, s = _dims(instance)
    return Size(300 * (3 * c + s + n), PY_STEP * (n * c + 3 * c + s * math.log2(c + 2)))


def _entry(fn: Callable[..., Solution], options: type[Options],
           estimate: Callable[[Instance, Options], Size], description: str) -> Heuristic:
    return Heuristic(function=fn, Options=options, estimate=estimate, description=description)


HEURISTICS: dict[str, Heuristic] = {
    "ft": _entry(ft, NoOptions, estimate_ft, "Flow Tracking (Algorithm 1)"),
    "ft-transfer": _entry(ft_transfer, NoOptions, estimate_ft_transfer,
                          "Flow Tracking with the weights transfer (lines 10-13)"),
    "rnj": _entry(rnj, RnjOptions, estimate_rnj, "Rooted Neighbor-Joining (ref. [16])"),
    "ce": _entry(ce, NoOptions, estimate_ce, "Clique Embedding (ref. [11]), random clique "
                 "edges by the seed"),
}

#: the heuristic to use (docs/infer.md: the paper's method, the most accurate)
RECOMMENDED = "ft"
