"""Inference methods of paper 000 (sections III-B, V-B) as heuristics of the ``infer`` problem.

Thin wrappers over :mod:`dmlopt.infer`: each takes an :class:`dmlopt.models.infer.Instance`
(whose category weights were computed when it was validated) and returns the inferred topology
as a :class:`~dmlopt.models.infer.Solution`. ``ft``: Flow Tracking (Algorithm 1); ``ft-transfer``:
FT with the weights transfer of lines 10-13 (same graph, edge weights set); ``rnj``: Rooted
Neighbor-Joining (ref. [16]); ``ce``: Clique Embedding (ref. [11], random edge choice by
``seed``). Assumptions are documented in :mod:`dmlopt.infer.ft` and :mod:`dmlopt.infer.baselines`.
"""

from __future__ import annotations

from dmlopt.models.infer import Instance, Solution, solution_from_inference

from dmlopt.infer.baselines import clique_embedding, rooted_neighbor_joining
from dmlopt.infer.ft import flow_tracking


def ft(instance: Instance, *, seed: int = 0) -> Solution:
    """Flow Tracking, Algorithm 1 (deterministic; ``seed`` unused)."""
    return solution_from_inference(flow_tracking(instance.categories, instance.n))


def ft_transfer(instance: Instance, *, seed: int = 0) -> Solution:
    """Flow Tracking with the weights transfer (lines 10-13)."""
    return solution_from_inference(flow_tracking(instance.categories, instance.n,
                                                 weights_transfer=True))


def rnj(instance: Instance, *, seed: int = 0, delta: float | None = None) -> Solution:
    """Rooted Neighbor-Joining; ``delta`` the lower bound on link lengths (default: tiny)."""
    return solution_from_inference(rooted_neighbor_joining(instance.categories, instance.n,
                                                           delta=delta))


def ce(instance: Instance, *, seed: int = 0) -> Solution:
    """Clique Embedding; ``seed`` draws the clique edge of every category."""
    return solution_from_inference(clique_embedding(instance.categories, instance.n, seed=seed))


HEURISTICS = {"ft": ft, "ft-transfer": ft_transfer, "rnj": rnj, "ce": ce}
