"""Flow Tracking (FT), Algorithm 1 of paper 000 (An, Wu, Huang), section III-B.

Every non-zero category ``Gamma_A`` becomes a node of weight ``w_A``; for every path ``i`` the
categories containing ``i`` are sorted by size, largest first, the source ``s`` is prepended, and
consecutive nodes are joined by a directed edge unless it exists (lines 4-9). The optional
weights transfer (lines 10-13) gives every edge the weight of the node it flows into, so the sum
of the edge weights along route ``L_i`` equals the path's measured length ``phi_i``.

Choices where Algorithm 1 is silent (documented and tested):

* Ties in size among the categories of one path are broken by the sorted tuple of their path
  indices (lexicographic); the paper's "sort by size" leaves the order open.
* Each route ``L_i`` ends at its last (smallest) category node; that node stands for the
  destination server of path ``i`` in the metrics and in the VM hop matrix (the paper calls it
  the "last-hop node, i.e. Gamma_i for path p_i"; when ``Gamma_i`` is zero because every edge of
  path ``i`` is shared, the smallest category containing ``i`` plays its role).
* A path that hits no non-zero category (all its edges have zero weight) is an error: FT has
  no node to route it through.

Node names: ``"s"`` for the source and ``"c" + label`` for a category (``"c1,2"`` is
``Gamma_{1,2}``, 1-based like the paper); nodes carry ``weight`` (``w_A``) and ``category``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import networkx as nx
import numpy as np

from dmlopt.models.infer.errors import InferenceError
from dmlopt.models.infer.measurement import Category, label

SOURCE = "s"


@dataclass(frozen=True)
class Inference:
    """An inferred topology: the graph, and where each measured server and path sits in it.

    ``routes[i]`` is the node sequence of path ``i`` from ``source`` to ``endpoints[i]`` (the
    node standing for destination ``i``). Every inference method returns this type.
    """

    graph: nx.DiGraph
    source: Hashable
    endpoints: tuple[Hashable, ...]
    routes: tuple[tuple[Hashable, ...], ...]
    method: str

    @property
    def n(self) -> int:
        return len(self.routes)

    def undirected(self) -> nx.Graph:
        """The inferred topology as a simple undirected graph (what the metrics compare)."""
        g = nx.Graph(self.graph.to_undirected(as_view=False))
        g.remove_edges_from(nx.selfloop_edges(g))
        return g

    def hop_matrix(self) -> np.ndarray:
        """Shortest hop counts among ``[source, *endpoints]`` in the undirected inferred graph."""
        g = self.undirected()
        pts = [self.source, *self.endpoints]
        d = np.full((len(pts), len(pts)), np.inf)
        for a, v in enumerate(pts):
            lengths = nx.single_source_shortest_path_length(g, v)
            for b, w in enumerate(pts):
                if w in lengths:
                    d[a, b] = lengths[w]
        return d


def check_categories(categories: Mapping[Category, float], n: int) -> dict[Category, float]:
    """Validate category weights: keys non-empty subsets of ``range(n)``, finite values >= 0.

    Zero weights are dropped (only non-zero categories are nodes).
    """
    if not isinstance(n, int | np.integer) or n < 1:
        raise InferenceError(f"n: {n!r} must be a positive number of paths")
    if not categories:
        raise InferenceError("categories: {} is empty (no non-zero category: no measurement)")
    out = {}
    for a, w in categories.items():
        key = frozenset(a)
        if not key or any(not isinstance(i, int | np.integer) or not 0 <= i < n for i in key):
            raise InferenceError(f"categories: {sorted(key)!r} must be a non-empty subset of "
                                 f"the path indices 0..{n - 1}")
        w = float(w)
        if not np.isfinite(w) or w < 0:
            raise InferenceError(f"categories[{label(key)}]: {w!r} must be finite and >= 0")
        if w > 0:
            out[key] = w
    return out


def _order(categories: Mapping[Category, float], i: int) -> list[Category]:
    """Line 5: the categories containing path ``i``, largest first (ties: sorted indices)."""
    return sorted((a for a in categories if i in a), key=lambda a: (-len(a), sorted(a)))


def flow_tracking(categories: Mapping[Category, float], n: int, *,
                  weights_transfer: bool = False) -> Inference:
    """Algorithm 1 (Flow Tracking): a directed graph and one route per path.

    Parameters
    ----------
    categories : ``frozenset(path indices) -> w_A`` (non-zero categories; zeros are ignored),
        e.g. from :func:`~dmlopt.models.infer.measurement.category_weights` or
        :func:`~dmlopt.models.infer.measurement.solve_category_weights`.
    n : number of paths.
    weights_transfer : lines 10-13: each edge gets the weight of the node it flows into.

    Returns
    -------
    Inference with ``graph`` (nodes ``"s"`` and ``"c<label>"``), ``routes`` ``L_i`` and
    ``endpoints`` (the last node of each route).

    Raises
    ------
    InferenceError : empty or malformed categories; a path that hits no non-zero category.

    References
    ----------
    Paper 000, section III-B, Algorithm 1; complexity O(n c_1 log c_1).
    """
    cats = check_categories(categories, n)
    g = nx.DiGraph(method="FT")
    g.add_node(SOURCE, weight=0.0, category="")  # line 1
    name = {a: "c" + label(a) for a in cats}
    for a, w in cats.items():  # lines 2-3
        g.add_node(name[a], weight=w, category=label(a))
    routes = []
    for i in range(n):  # lines 4-9
        order = _order(cats, i)
        if not order:
            raise InferenceError(f"paths[{i}]: path {i + 1} hits no non-zero category (all its "
                                 "edges have zero weight); FT cannot route it")
        route = [SOURCE] + [name[a] for a in order]  # line 6
        for u, v in zip(route, route[1:], strict=False):
            if not g.has_edge(u, v):  # line 8
                g.add_edge(u, v)  # line 9
        routes.append(tuple(route))
    if weights_transfer:  # lines 10-13
        for v in g:
            for u in g.predecessors(v):
                g.edges[u, v]["weight"] = g.nodes[v]["weight"]
    return Inference(g, SOURCE, tuple(r[-1] for r in routes), tuple(routes), "FT")
