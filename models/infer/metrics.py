"""Topology-inference metrics of paper 000, section V-B.

All metrics compare undirected simple graphs: the inferred topology (``Inference.undirected()``)
and a reference graph. The reference is by default the *measured* ground truth, the subgraph of
the underlay made of the edges the measurement paths cross (:func:`measured_subgraph`): nothing
else can be inferred ("we have no information to infer the existence of an edge if no
measurement covers it", section III-A), and it is the reference under which the paper's
statement "FT reconstructs the ground truth exactly under Dijkstra routing with all paths" holds
(from one source, Dijkstra paths form a tree, so the unmeasured links of a fat-tree can never be
seen). :func:`evaluate_inference` takes ``reference="underlay"`` to compare with the whole
underlay instead.

The measured servers are the source and the destinations; in the inferred graph they are
``Inference.source`` and ``Inference.endpoints``. Definitions (where the paper's one-line
definitions leave a choice, ours is stated):

hops error
    over all pairs of distinct measured servers, ``|h_inf / h_true - 1|`` averaged, with ``h``
    the shortest hop count (the paper: "the mean ratio of the hop counts on the shortest paths in
    the inferred topology to those in the ground truth"; we report the mean ratio as
    ``hops_ratio`` and its mean absolute deviation from 1 as the error, so that 0 is exact and a
    too-small topology is not rewarded).
GDE
    ``|mean degree(inferred) - mean degree(reference)|``.
PDE
    per path, the mean degree of the nodes along the measured walk in the reference versus along
    its route in the inferred graph; the absolute differences averaged over paths.
NGED
    graph edit distance (unit costs for node and edge insertion and deletion, node substitution
    free: the graphs are unlabelled) divided by ``|V| + |E|`` of the reference. Exact GED is
    NP-hard: :func:`ged` returns ``(value, exact)``: exact when the graphs are isomorphic, when a
    lower bound meets the upper bound, or when networkx's exact search finishes within the node
    limit and time budget; otherwise the upper bound (the best node mapping found by a
    quadratic-assignment heuristic seeded with the known server correspondence).
H2 index
    among pairs of distinct measured servers within 2 hops in the reference, the fraction also
    within 2 hops in the inferred graph (``nan`` when there is no such pair). This is a recall:
    a topology that puts every server within 2 hops of every other scores 100 %. We therefore
    also report ``h2_precision`` (our addition, not in the paper): among pairs within 2 hops in
    the inferred graph, the fraction within 2 hops in the reference.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Sequence

import networkx as nx
import numpy as np

from dmlopt.models.infer.ft import Inference
from dmlopt.models.infer.measurement import Measurement, check_paths


def measured_subgraph(g: nx.Graph, paths: Sequence[Sequence[Hashable]]) -> nx.Graph:
    """The undirected subgraph of ``g`` made of the edges the paths cross."""
    paths = check_paths(g, paths)
    sub = nx.Graph()
    for p in paths:
        sub.add_edges_from(zip(p, p[1:], strict=False))
    return sub


def _dist(g: nx.Graph, pts: Sequence[Hashable]) -> np.ndarray:
    d = np.full((len(pts), len(pts)), np.inf)
    for a, v in enumerate(pts):
        if v not in g:
            continue
        lengths = nx.single_source_shortest_path_length(g, v)
        for b, w in enumerate(pts):
            d[a, b] = lengths.get(w, np.inf)
    return d


def _pairs(true_pts: Sequence[Hashable]) -> list[tuple[int, int]]:
    return [(a, b) for a in range(len(true_pts)) for b in range(a + 1, len(true_pts))
            if true_pts[a] != true_pts[b]]


def hops_error(d_inf: np.ndarray, d_true: np.ndarray,
               pairs: Sequence[tuple[int, int]]) -> tuple[float, float]:
    """``(mean |h_inf / h_true - 1|, mean h_inf / h_true)`` over ``pairs`` (indices)."""
    if not pairs:
        return math.nan, math.nan
    r = np.array([d_inf[a, b] / d_true[a, b] for a, b in pairs])
    return float(np.mean(np.abs(r - 1))), float(np.mean(r))


def mean_degree(g: nx.Graph) -> float:
    return 2 * g.number_of_edges() / g.number_of_nodes() if g.number_of_nodes() else 0.0


def path_degree_error(inf_graph: nx.Graph, routes: Sequence[Sequence[Hashable]],
                      ref: nx.Graph, paths: Sequence[Sequence[Hashable]]) -> float:
    """Mean over paths of ``|avg degree along route (inferred) - along walk (reference)|``."""
    diffs = []
    for route, p in zip(routes, paths, strict=True):
        a = np.mean([inf_graph.degree(v) for v in route])
        b = np.mean([ref.degree(v) for v in p])
        diffs.append(abs(a - b))
    return float(np.mean(diffs))


def h2_index(d_inf: np.ndarray, d_ref: np.ndarray, pairs: Sequence[tuple[int, int]]) -> float:
    """Fraction of the pairs within 2 hops in the reference that are within 2 hops inferred."""
    close = [(a, b) for a, b in pairs if d_ref[a, b] <= 2]
    if not close:
        return math.nan
    return float(np.mean([d_inf[a, b] <= 2 for a, b in close]))


# --------------------------------------------------------------------------- graph edit distance

def ged_lower_bound(g1: nx.Graph, g2: nx.Graph) -> int:
    """``|n1 - n2| + max(|m1 - m2|, ceil(sum |sorted degree difference| / 2))``.

    Node edits are at least ``|n1 - n2|``; under any node mapping the degrees of matched nodes
    differ by at least the sorted-sequence L1 distance, and one edge edit changes two degrees by
    one.
    """
    n = max(g1.number_of_nodes(), g2.number_of_nodes())
    d1 = sorted((d for _, d in g1.degree()), reverse=True) + [0] * (n - g1.number_of_nodes())
    d2 = sorted((d for _, d in g2.degree()), reverse=True) + [0] * (n - g2.number_of_nodes())
    deg = math.ceil(sum(abs(a - b) for a, b in zip(d1, d2, strict=True)) / 2)
    edges = abs(g1.number_of_edges() - g2.number_of_edges())
    return abs(g1.number_of_nodes() - g2.number_of_nodes()) + max(edges, deg)


def _mapping_cost(a1: np.ndarray, a2: np.ndarray, perm: np.ndarray, n_diff: int) -> int:
    overlap = int((a1 * a2[np.ix_(perm, perm)]).sum()) // 2
    return n_diff + int(a1.sum()) // 2 + int(a2.sum()) // 2 - 2 * overlap


def ged_upper_bound(g1: nx.Graph, g2: nx.Graph,
                    anchors: Sequence[tuple[Hashable, Hashable]] = (), *,
                    seed: int = 0, restarts: int = 4) -> int:
    """Cost of the best node mapping found by scipy's quadratic assignment (FAQ, then 2-opt),
    graphs padded with isolated nodes to equal size; ``anchors`` (node of g1, node of g2) seed
    one start as a partial match (the known server correspondence)."""
    from scipy.optimize import quadratic_assignment

    n = max(g1.number_of_nodes(), g2.number_of_nodes())
    if n == 0:
        return 0
    nodes1, nodes2 = list(g1), list(g2)
    a1 = np.zeros((n, n), dtype=np.int64)
    a2 = np.zeros((n, n), dtype=np.int64)
    a1[: len(nodes1), : len(nodes1)] = nx.to_numpy_array(g1, nodelist=nodes1, weight=None)
    a2[: len(nodes2), : len(nodes2)] = nx.to_numpy_array(g2, nodelist=nodes2, weight=None)
    n_diff = abs(len(nodes1) - len(nodes2))
    i1 = {v: k for k, v in enumerate(nodes1)}
    i2 = {v: k for k, v in enumerate(nodes2)}
    seen1, seen2, pm = set(), set(), []
    for u, v in anchors:
        if u in i1 and v in i2 and u not in seen1 and v not in seen2:
            seen1.add(u)
            seen2.add(v)
            pm.append((i1[u], i2[v]))
    best = _mapping_cost(a1, a2, np.arange(n), n_diff)
    starts = [np.array(pm, dtype=int).reshape(-1, 2)] if pm else []
    starts += [np.zeros((0, 2), dtype=int)] * restarts
    for k, partial in enumerate(starts):
        res = quadratic_assignment(a1, a2, method="faq", options={
            "maximize": True, "partial_match": partial, "rng": np.random.default_rng(seed + k)})
        res = quadratic_assignment(a1, a2, method="2opt", options={
            "maximize": True, "partial_guess": np.column_stack([np.arange(n), res.col_ind]),
            "rng": np.random.default_rng(seed + k)})
        best = min(best, _mapping_cost(a1, a2, res.col_ind, n_diff))
    return best


def ged(g1: nx.Graph, g2: nx.Graph, anchors: Sequence[tuple[Hashable, Hashable]] = (), *,
        exact_node_limit: int = 9, timeout: float = 2.0, seed: int = 0) -> tuple[int, bool]:
    """Graph edit distance with unit costs: ``(value, exact)``.

    Exact when the graphs are isomorphic (0), when the lower and upper bounds meet, or when the
    larger graph has at most ``exact_node_limit`` nodes and networkx's exhaustive search
    (``optimize_edit_paths``) ends within ``timeout`` seconds; otherwise the upper bound with
    ``exact = False``.
    """
    g1, g2 = nx.Graph(g1), nx.Graph(g2)
    if (g1.number_of_nodes() == g2.number_of_nodes()
            and g1.number_of_edges() == g2.number_of_edges()
            and nx.faster_could_be_isomorphic(g1, g2) and nx.is_isomorphic(g1, g2)):
        return 0, True
    lb = ged_lower_bound(g1, g2)
    ub = ged_upper_bound(g1, g2, anchors, seed=seed)
    if lb == ub:
        return ub, True
    if max(g1.number_of_nodes(), g2.number_of_nodes()) <= exact_node_limit:
        best = ub
        start = time.perf_counter()
        for _, _, cost in nx.optimize_edit_paths(g1, g2, upper_bound=ub, timeout=timeout,
                                                 strictly_decreasing=True):
            best = min(best, int(round(cost)))
        if time.perf_counter() - start < 0.95 * timeout:  # search exhausted, not timed out
            return best, True
        return best, best == lb
    return ub, False


# --------------------------------------------------------------------------- all metrics

def evaluate_inference(inference: Inference, measurement: Measurement, *,
                       reference: str = "measured", ged_options: dict | None = None,
                       with_ged: bool = True) -> dict:
    """Every metric of section V-B for one inferred topology.

    Parameters
    ----------
    reference : ``"measured"`` (the subgraph the paths cross, default) or ``"underlay"``.
    ged_options : passed to :func:`ged`; ``with_ged=False`` skips it (``ged``/``nged`` nan).

    Returns
    -------
    dict with ``hops_error``, ``hops_ratio``, ``gde``, ``pde``, ``ged``, ``ged_exact``, ``nged``,
    ``h2``, ``h2_precision``, and the sizes ``nodes``, ``edges``, ``ref_nodes``, ``ref_edges``.
    """
    if reference == "measured":
        ref = measured_subgraph(measurement.graph, measurement.paths)
    elif reference == "underlay":
        ref = nx.Graph(measurement.graph)
    else:
        from dmlopt.models.infer.errors import InferenceError
        raise InferenceError(f"reference: {reference!r} is not 'measured' or 'underlay'")
    if inference.n != measurement.n:
        from dmlopt.models.infer.errors import InferenceError
        raise InferenceError(f"inference: {inference.n} routes for {measurement.n} paths")
    inf = inference.undirected()
    true_pts = [measurement.source, *measurement.destinations]
    inf_pts = [inference.source, *inference.endpoints]
    pairs = _pairs(true_pts)
    d_ref = _dist(ref, true_pts)
    d_inf = _dist(inf, inf_pts)
    err, ratio = hops_error(d_inf, d_ref, pairs)
    anchors = list(zip(inf_pts, true_pts, strict=True))
    value, exact = (ged(inf, ref, anchors, **(ged_options or {})) if with_ged
                    else (math.nan, False))
    return {
        "hops_error": err,
        "hops_ratio": ratio,
        "gde": abs(mean_degree(inf) - mean_degree(ref)),
        "pde": path_degree_error(inf, inference.routes, ref, measurement.paths),
        "ged": value,
        "ged_exact": exact,
        "nged": value / (ref.number_of_nodes() + ref.number_of_edges()),
        "h2": h2_index(d_inf, d_ref, pairs),
        "h2_precision": h2_index(d_ref, d_inf, pairs),
        "nodes": inf.number_of_nodes(),
        "edges": inf.number_of_edges(),
        "ref_nodes": ref.number_of_nodes(),
        "ref_edges": ref.number_of_edges(),
    }
