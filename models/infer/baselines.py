"""Baselines of paper 000, section V-B: Rooted Neighbor-Joining (RNJ) and Clique Embedding (CE).

Both take the same input as Flow Tracking (the non-zero category weights of ``n`` paths from one
source) and return an :class:`~dmlopt.models.infer.ft.Inference`.

RNJ (Ni, Xie, Tatikonda, Yang, IEEE/ACM ToN 18(1), 2010, "Algorithm 1: Rooted Neighbor-Joining")
infers a rooted *tree* from the shared path lengths ``rho(i, j)`` between the paths from the
root to destinations ``i`` and ``j`` (an additive metric). With category weights, ``rho(i, j)``
is the total weight of the categories containing both ``i`` and ``j`` (``= phi_i + phi_j -
phi_{i,j}`` by eq. 7) and ``rho(i, i) = phi_i``. Repeatedly the pair with the largest shared
length is joined under a new parent ``f`` (``rho(s, f) = rho(i, j)``); every other current node
``k`` with ``rho(i, j) - rho(i, k) <= delta / 2`` becomes a sibling under the same ``f``; for the
remaining nodes ``rho(k, f) = (rho(k, i) + rho(k, j)) / 2``. Assumptions we had to make:

* ``delta`` (the paper's lower bound on link lengths) defaults to ``1e-9 * max(phi)`` for exact
  data (any positive lower bound on ``u_e`` works; pass it for noisy data).
* A child whose link to its new parent has length at most ``delta / 2`` *is* that parent (a
  destination that is also a branching point, e.g. a DCell server relaying to another cell);
  they are merged. Likewise a parent at distance at most ``delta / 2`` from the root is the root.
* When no two current nodes share a positive length, every current node hangs off the source.

CE (Lin, He, Wang, Chan, Pasteris, IEEE/ACM ToN 28(4), 2020, "Looking glass of NFV") is
implemented from the description in paper 000, section III-B, since the figure-level details of
the original are not in our copy: CE "identif[ies] the smallest or simplest topological structure
that reflects the measurement results", "assign[s] a category weight by randomly selecting an
edge within the smallest clique until all non-zero categories have been allocated" and
"incorporates a dummy node r, and uses edges with 0 weights to connect r with other nodes to form
valid paths". Hence: the smallest clique ``K_m`` with ``m (m - 1) / 2 >= c_1`` edges; each
non-zero category is put on a distinct clique edge drawn uniformly at random (orientation random);
path ``i`` is routed ``r -> a_1 - b_1 -> r -> a_2 - b_2 -> ... -> a_k - b_k`` over the edges of its
categories (in FT's order, largest first), joined through ``r`` by zero-weight edges. Our
assumptions: the dummy node ``r`` is also the measurement source, and the far end ``b_k`` of the
last (smallest) category edge of path ``i`` stands for destination ``i``; clique edges that get no
category are not part of the inferred graph.
"""

from __future__ import annotations

from collections.abc import Mapping

import networkx as nx
import numpy as np

from dmlopt.models.infer.errors import InferenceError
from dmlopt.models.infer.ft import SOURCE, Inference, _order, check_categories, flow_tracking
from dmlopt.models.infer.measurement import Category


def shared_lengths(categories: Mapping[Category, float], n: int) -> np.ndarray:
    """``rho[i, j]``: total weight of the categories containing both paths (``rho[i, i] =
    phi_i``), the additive shared-path metric RNJ works on."""
    cats = check_categories(categories, n)
    rho = np.zeros((n, n))
    for a, w in cats.items():
        idx = np.fromiter(a, dtype=int)
        rho[np.ix_(idx, idx)] += w
    return rho


def rooted_neighbor_joining(categories: Mapping[Category, float], n: int, *,
                            delta: float | None = None) -> Inference:
    """RNJ (Ni et al. 2010, Algorithm 1) on the shared path lengths of the categories.

    Returns
    -------
    Inference whose graph is a tree rooted at ``"s"``; destination ``i`` is node ``"d<i+1>"``
    (or the internal node it was merged with), internal nodes are ``"r1"``, ``"r2"``, ...; edges
    carry their inferred ``weight`` (link length).
    """
    rho_m = shared_lengths(categories, n)
    if delta is None:
        delta = 1e-9 * max(1.0, float(rho_m.max()))
    half = delta / 2
    g = nx.DiGraph(method="RNJ")
    g.add_node(SOURCE)
    alias: dict[str, str] = {}  # merged node -> node it became
    rho: dict[tuple[str, str], float] = {}
    current = [f"d{i + 1}" for i in range(n)]
    for i, a in enumerate(current):
        g.add_node(a)
        for j, b in enumerate(current):
            rho[a, b] = rho_m[i, j]
    count = 0
    while len(current) >= 2:
        best, pair = -np.inf, None
        for x in range(len(current)):
            for y in range(x + 1, len(current)):
                v = rho[current[x], current[y]]
                if v > best:
                    best, pair = v, (current[x], current[y])
        if best <= half:
            break
        i, j = pair
        count += 1
        f = f"r{count}"
        g.add_node(f)
        kids = [i, j] + [k for k in current if k not in (i, j) and best - rho[i, k] <= half]
        rest = [k for k in current if k not in kids]
        rho[f, f] = best
        for k in rest:
            rho[k, f] = rho[f, k] = (rho[k, i] + rho[k, j]) / 2
        merged = None
        for k in kids:
            length = rho[k, k] - best
            if length <= half and merged is None and not k.startswith("r"):
                merged = k  # destination k is the branching point itself
            else:
                g.add_edge(f, k, weight=max(length, 0.0))
        if merged is not None:
            nx.relabel_nodes(g, {f: merged}, copy=False)
            for k in rest:
                rho[k, merged] = rho[merged, k] = rho[k, f]
            rho[merged, merged] = best
            alias[f] = merged
            f = merged
        current = [*rest, f]
    for k in current:
        length = rho[k, k]
        if length <= half and k.startswith("r"):
            # a branching node at the root: its children hang off the source directly
            for c in list(g.successors(k)):
                g.add_edge(SOURCE, c, weight=g.edges[k, c]["weight"])
            g.remove_node(k)
        else:
            # a destination is never merged into the source: even at the root (a delta above
            # its length) it keeps its link, so that every destination has a route
            g.add_edge(SOURCE, k, weight=max(length, 0.0))
    endpoints = tuple(f"d{i + 1}" for i in range(n))
    routes = tuple(tuple(nx.shortest_path(g, SOURCE, e)) if e in g else (SOURCE,)
                   for e in endpoints)
    return Inference(g, SOURCE, endpoints, routes, "RNJ")


def clique_embedding(categories: Mapping[Category, float], n: int, *,
                     seed: int = 0) -> Inference:
    """CE as described in paper 000, section III-B (see the module docstring for assumptions).

    Returns
    -------
    Inference with clique nodes ``"k0"``, ... and the dummy node ``"s"`` (= ``r``, the source);
    category edges carry ``weight`` = ``w_A`` and ``category``, dummy edges weight 0.
    """
    cats = check_categories(categories, n)
    c1 = len(cats)
    m = 2
    while m * (m - 1) // 2 < c1:
        m += 1
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for a in range(m) for b in range(a + 1, m)]
    chosen = rng.permutation(len(pairs))[:c1]
    keys = sorted(cats, key=lambda a: (-len(a), sorted(a)))
    where: dict[Category, tuple[str, str]] = {}
    g = nx.DiGraph(method="CE")
    g.add_node(SOURCE)
    for key, p in zip(keys, chosen.tolist(), strict=True):
        a, b = pairs[p]
        if rng.random() < 0.5:
            a, b = b, a
        where[key] = (f"k{a}", f"k{b}")
        g.add_edge(f"k{a}", f"k{b}", weight=cats[key])
    routes = []
    for i in range(n):
        route = [SOURCE]
        order = _order(cats, i)
        for key in order:
            a, b = where[key]
            if route[-1] != SOURCE:
                g.add_edge(route[-1], SOURCE, weight=0.0)
                route.append(SOURCE)
            g.add_edge(SOURCE, a, weight=0.0)
            route += [a, b]
        routes.append(tuple(route))
    return Inference(g, SOURCE, tuple(r[-1] for r in routes), tuple(routes), "CE")


#: method name -> function(categories, n, **options) -> Inference
METHODS = {"ft": flow_tracking, "rnj": rooted_neighbor_joining, "ce": clique_embedding}


def infer(categories: Mapping[Category, float], n: int, method: str = "ft",
          **options) -> Inference:
    """One entry point for FT, RNJ and CE (``method`` in ``"ft"``, ``"rnj"``, ``"ce"``)."""
    try:
        fn = METHODS[method.lower()]
    except KeyError:
        raise InferenceError(f"method: {method!r} is not one of ft, rnj, ce") from None
    return fn(categories, n, **options)
