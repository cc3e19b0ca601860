"""Measurement model of paper 000 (An, Wu, Huang), sections II-B, III-A and V-A.

An underlay is an undirected networkx graph whose edges carry a success probability ``alpha``
and the additive weight ``u = -log(alpha)`` (section II-B). A measurement is a source server, a
list of destination servers and one measurement path (a walk: a node sequence) per destination,
produced by one of the four routing strategies of section V-A:

``random-walk``
    a random walk from the source that stops when it reaches the destination; it may repeat
    nodes and edges (non-simple paths). It never steps into a dead end (a degree-1 node, i.e. a
    fat-tree server) other than its destination, since such a node does not forward traffic.
``random-simple``
    a random simple path: depth-first search from the source with neighbours visited in a
    uniformly shuffled order, stopped at the destination. Every simple path has a positive
    probability (the paper does not say how it draws among "multiple simple paths"; enumerating
    all of them is exponential, so we draw this way).
``random-shortest``
    a uniformly random shortest path in hops (drawn exactly by the path counts of a breadth-first
    search, ECMP-like).
``dijkstra``
    the shortest path returned by Dijkstra's algorithm (networkx ``single_source_dijkstra_path``,
    unit weights by default or ``u`` with ``dijkstra_weight="u"``): one deterministic shortest
    path per destination; the paths of one source form a tree.

Category weights (eqs. 2-7). Category ``A`` (a non-empty set of path indices) holds the edges
traversed by exactly the paths in ``A`` (eq. 2); its weight is the sum of their ``u`` (eq. 3) plus,
when ``|A| = 1``, the amendment ``delta_A`` of eq. 5, the weight of every repeated traversal of
that path (eq. 6). :func:`category_weights` computes them exactly from the ground truth.

k-cast measurements. :func:`cast_weights` simulates the cast weight ``phi_C`` of every non-empty
subset ``C`` of paths *edge by edge* from the walks: a k-cast probe over the paths in ``C`` crosses
every distinct edge of their union once (eq. 1) plus every repeated traversal of each path
separately (the measurement semantics the amendment of section III-A encodes: the paper's Fig. 2
gives ``phi_1 = u1 + 2 u2 + u3 + u4`` for a path that crosses ``e2`` twice). Optional Gaussian
noise is added. :func:`solve_category_weights` recovers the category weights from the ``phi_C``
by the linear system of eq. 7: ``mobius`` (exact inversion of the square system by a fast Moebius
transform, O(n 2^n), usable up to n = 20 paths), ``lstsq`` or ``nnls`` (dense matrix
``[C, A] = 1 iff A and C intersect``, up to n = 11 paths). Above those sizes a
:class:`TooManyPathsError` says so; the exact category weights from the ground truth have no such
limit (they only enumerate the edges of the paths).

Edges are undirected: a path crossing an edge in both directions traverses it twice (the paper
counts traversals ``k_e`` per edge, eq. 5). Path indices are 0-based in code; the paper and the
printed labels are 1-based.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from dmlopt.models.infer.errors import InferenceError, TooManyPathsError

Node = Hashable
Path = tuple[Node, ...]
Category = frozenset[int]

ROUTINGS = ("random-walk", "random-simple", "random-shortest", "dijkstra")

#: largest n for the Moebius inversion (2^n floats) and for the dense least-squares systems
MAX_PATHS_MOBIUS = 20
MAX_PATHS_DENSE = 11


@dataclass(frozen=True)
class Measurement:
    """A ground-truth measurement set: underlay, endpoints and one walk per destination.

    ``paths[i]`` starts at ``source`` and ends at ``destinations[i]``.
    """

    graph: nx.Graph
    source: Node
    destinations: tuple[Node, ...]
    paths: tuple[Path, ...]
    routing: str = "given"
    meta: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.paths)

    def categories(self, *, amended: bool = True) -> dict[Category, float]:
        """Exact category weights (eqs. 2-6) of these paths."""
        return category_weights(self.graph, self.paths, amended=amended)


# --------------------------------------------------------------------------- underlay weights

def with_weights(g: nx.Graph, *, seed: int = 0, alpha: tuple[float, float] = (0.9, 0.999),
                 overwrite: bool = False) -> nx.Graph:
    """A copy of ``g`` whose edges carry ``alpha`` (probe success probability) and ``u``.

    ``alpha`` is drawn uniformly from the interval ``alpha`` for every edge that has none (or for
    every edge when ``overwrite``); ``u = -log(alpha)`` (section II-B) is always recomputed.
    """
    lo, hi = alpha
    if not (0 < lo <= hi < 1):
        raise InferenceError(f"alpha: {alpha!r} must satisfy 0 < low <= high < 1 "
                             "(u = -log alpha must be positive and finite)")
    if g.is_directed() or g.is_multigraph():
        raise InferenceError("graph: directed or multi-graphs are not supported (give an "
                             "undirected simple networkx.Graph)")
    out = g.copy()
    rng = np.random.default_rng(seed)
    for u, v, data in out.edges(data=True):
        a = data.get("alpha")
        if overwrite or a is None:
            a = float(rng.uniform(lo, hi))
        a = float(a)
        if not (0 < a < 1):
            raise InferenceError(f"graph.edges[{u!r}, {v!r}].alpha: {a!r} must lie in (0, 1)")
        data["alpha"] = a
        data["u"] = -math.log(a)
    return out


def _edge(u: Node, v: Node) -> frozenset:
    return frozenset((u, v))


# --------------------------------------------------------------------------- validation

def check_paths(g: nx.Graph, paths: Sequence[Sequence[Node]], *,
                source: Node | None = None) -> tuple[Path, ...]:
    """Check that every path is a walk of ``g`` (consecutive nodes adjacent) and return tuples.

    Raises
    ------
    InferenceError
        no paths; a path with fewer than two nodes; a node not in the graph; two consecutive
        nodes that are not adjacent; a path not starting at ``source`` (when given).
    """
    if paths is None or len(paths) == 0:
        raise InferenceError("paths: [] is empty (at least one measurement path is needed)")
    out = []
    for i, p in enumerate(paths):
        if isinstance(p, str | bytes) or not isinstance(p, Sequence):
            raise InferenceError(f"paths[{i}]: {p!r} must be a list of nodes")
        p = tuple(p)
        if len(p) < 2:
            raise InferenceError(f"paths[{i}]: {list(p)!r} has fewer than two nodes "
                                 "(a measurement path crosses at least one edge)")
        for v in p:
            if v not in g:
                raise InferenceError(f"paths[{i}]: node {v!r} is not in the graph")
        for a, b in zip(p, p[1:], strict=False):
            if a == b or not g.has_edge(a, b):
                raise InferenceError(f"paths[{i}]: ({a!r}, {b!r}) is not an edge of the graph "
                                     "(a measurement path must be a walk)")
        if source is not None and p[0] != source:
            raise InferenceError(f"paths[{i}]: starts at {p[0]!r}, not at the source "
                                 f"{source!r}")
        out.append(p)
    return tuple(out)


def _check_u(g: nx.Graph, paths: Iterable[Path], weight: str) -> None:
    for p in paths:
        for a, b in zip(p, p[1:], strict=False):
            w = g.edges[a, b].get(weight)
            if w is None or not math.isfinite(w) or w < 0:
                raise InferenceError(f"graph.edges[{a!r}, {b!r}].{weight}: {w!r} must be a "
                                     "finite non-negative additive weight (see with_weights)")


# --------------------------------------------------------------------------- routing (V-A)

def _random_walk(g: nx.Graph, s: Node, d: Node, rng: np.random.Generator,
                 max_steps: int) -> Path:
    path = [s]
    v = s
    for _ in range(max_steps):
        nbrs = [w for w in g.neighbors(v) if w == d or g.degree(w) > 1]
        if not nbrs:
            break
        v = nbrs[int(rng.integers(len(nbrs)))]
        path.append(v)
        if v == d:
            return tuple(path)
    raise InferenceError(f"routing: the random walk from {s!r} did not reach {d!r} within "
                         f"{max_steps} steps (raise max_steps)")


def _random_simple(g: nx.Graph, s: Node, d: Node, rng: np.random.Generator) -> Path:
    order = {v: list(g.neighbors(v)) for v in g}
    stack = [(s, iter(rng.permutation(len(order[s])).tolist()))]
    on_path = {s}
    path = [s]
    while stack:
        v, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            on_path.discard(path.pop())
            continue
        w = order[v][nxt]
        if w in on_path:
            continue
        if w == d:
            return (*path, d)
        if g.degree(w) <= 1:
            continue
        path.append(w)
        on_path.add(w)
        stack.append((w, iter(rng.permutation(len(order[w])).tolist())))
    raise InferenceError(f"routing: no path from {s!r} to {d!r}")


def _random_shortest(g: nx.Graph, s: Node, d: Node, rng: np.random.Generator,
                     bfs: tuple[dict, dict]) -> Path:
    dist, sigma = bfs
    if d not in dist:
        raise InferenceError(f"routing: no path from {s!r} to {d!r}")
    path = [d]
    v = d
    while v != s:
        preds = [w for w in g.neighbors(v) if dist.get(w) == dist[v] - 1]
        p = np.array([sigma[w] for w in preds], dtype=float)
        v = preds[int(rng.choice(len(preds), p=p / p.sum()))]
        path.append(v)
    return tuple(reversed(path))


def _bfs_counts(g: nx.Graph, s: Node) -> tuple[dict, dict]:
    dist = {s: 0}
    sigma = {s: 1}
    frontier = [s]
    while frontier:
        nxt = []
        for v in frontier:
            for w in g.neighbors(v):
                if w not in dist:
                    dist[w] = dist[v] + 1
                    sigma[w] = 0
                    nxt.append(w)
                if dist[w] == dist[v] + 1:
                    sigma[w] += sigma[v]
        frontier = nxt
    return dist, sigma


def route(g: nx.Graph, source: Node, destinations: Sequence[Node], routing: str, *,
          seed: int = 0, max_steps: int | None = None,
          dijkstra_weight: str | None = None) -> tuple[Path, ...]:
    """One measurement path from ``source`` to each destination by a strategy of section V-A.

    Parameters
    ----------
    routing : ``"random-walk"``, ``"random-simple"``, ``"random-shortest"`` or ``"dijkstra"``.
    max_steps : random-walk step limit (default ``50 * |V|``).
    dijkstra_weight : ``None`` (hops, default) or an edge attribute such as ``"u"``.

    Raises
    ------
    InferenceError : unknown strategy, unknown node, a destination equal to the source or
        unreachable.
    """
    if routing not in ROUTINGS:
        raise InferenceError(f"routing: {routing!r} is not one of {', '.join(ROUTINGS)}")
    if source not in g:
        raise InferenceError(f"source: {source!r} is not a node of the graph")
    for d in destinations:
        if d not in g:
            raise InferenceError(f"destinations: {d!r} is not a node of the graph")
        if d == source:
            raise InferenceError(f"destinations: {d!r} is the source")
    if not destinations:
        raise InferenceError("destinations: [] is empty (at least one measurement path is "
                             "needed)")
    rng = np.random.default_rng(seed)
    steps = max_steps or 50 * g.number_of_nodes()
    if routing == "dijkstra":
        tree = nx.single_source_dijkstra_path(g, source, weight=dijkstra_weight or
                                              (lambda u, v, d: 1))
        missing = [d for d in destinations if d not in tree]
        if missing:
            raise InferenceError(f"routing: no path from {source!r} to {missing[0]!r}")
        return tuple(tuple(tree[d]) for d in destinations)
    if routing == "random-shortest":
        bfs = _bfs_counts(g, source)
        return tuple(_random_shortest(g, source, d, rng, bfs) for d in destinations)
    if routing == "random-simple":
        return tuple(_random_simple(g, source, d, rng) for d in destinations)
    if any(not nx.has_path(g, source, d) for d in destinations):
        raise InferenceError("routing: a destination is unreachable from the source")
    return tuple(_random_walk(g, source, d, rng, steps) for d in destinations)


def measure(g: nx.Graph, routing: str, *, n_paths: int | None = None,
            source: Node | None = None, destinations: Sequence[Node] | None = None,
            candidates: Sequence[Node] | None = None, seed: int = 0,
            alpha: tuple[float, float] = (0.9, 0.999), **route_options) -> Measurement:
    """Draw a measurement: weights, a source, destinations and their paths.

    ``candidates`` (default: the nodes with ``kind == "server"``, else every node) are the
    servers; the source (if not given) and ``n_paths`` distinct destinations (if not given, all
    other candidates when ``n_paths`` is None) are drawn from them with ``seed``.
    """
    rng = np.random.default_rng(seed)
    gw = with_weights(g, seed=int(rng.integers(2**31)), alpha=alpha)
    if candidates is None:
        candidates = [v for v, k in g.nodes(data="kind") if k == "server"] or list(g.nodes)
    candidates = list(candidates)
    if source is None:
        source = candidates[int(rng.integers(len(candidates)))]
    if destinations is None:
        others = [v for v in candidates if v != source]
        if n_paths is None:
            n_paths = len(others)
        if not 1 <= n_paths <= len(others):
            raise InferenceError(f"n_paths: {n_paths!r} must lie in 1..{len(others)} (distinct "
                                 "destinations other than the source)")
        idx = rng.choice(len(others), size=n_paths, replace=False)
        destinations = [others[i] for i in sorted(idx.tolist())]
    paths = route(gw, source, list(destinations), routing, seed=int(rng.integers(2**31)),
                  **route_options)
    return Measurement(gw, source, tuple(destinations), paths, routing)


# --------------------------------------------------------------------------- categories (2-7)

def traversals(paths: Sequence[Path]) -> list[Counter]:
    """``k[i][e]``: how many times path ``i`` traverses undirected edge ``e``."""
    return [Counter(_edge(a, b) for a, b in zip(p, p[1:], strict=False)) for p in paths]


def category_weights(g: nx.Graph, paths: Sequence[Sequence[Node]], *, amended: bool = True,
                     weight: str = "u", tol: float = 0.0) -> dict[Category, float]:
    """Exact category weights of the measurement paths (paper 000, eqs. 2, 3, 5, 6).

    Parameters
    ----------
    g : the underlay; every edge crossed carries ``weight`` (``u = -log alpha``).
    paths : walks (validated by :func:`check_paths`).
    amended : add ``delta_A`` (eq. 5) to the categories of size one (eq. 6); ``False`` gives the
        original definition (eq. 3) of Lin et al., which breaks eq. 4 for non-simple paths.
    tol : categories whose weight is at most ``tol`` are left out (non-zero categories only).

    Returns
    -------
    dict ``frozenset(path indices) -> w_A`` of the non-zero categories.
    """
    paths = check_paths(g, paths)
    _check_u(g, paths, weight)
    counts = traversals(paths)
    members: dict[frozenset, set[int]] = {}
    for i, k in enumerate(counts):
        for e in k:
            members.setdefault(e, set()).add(i)
    out: dict[Category, float] = {}
    for e, who in members.items():  # eq. 2: e is in Gamma_A iff A is exactly the paths over e
        a, b = tuple(e)
        key = frozenset(who)
        out[key] = out.get(key, 0.0) + g.edges[a, b][weight]  # eq. 3
    if amended:
        for i, k in enumerate(counts):  # eq. 5: repeated traversals of path i
            delta = sum((c - 1) * g.edges[tuple(e)][weight] for e, c in k.items() if c > 1)
            if delta:
                key = frozenset((i,))
                out[key] = out.get(key, 0.0) + delta  # eq. 6
    return {a: w for a, w in out.items() if w > tol}


def cast_weight(g: nx.Graph, paths: Sequence[Path], subset: Iterable[int], *,
                weight: str = "u") -> float:
    """Simulated cast weight ``phi_C`` of a k-cast probe over the paths in ``subset``.

    Computed edge by edge from the walks: each distinct edge of the union once (eq. 1) plus each
    path's repeated traversals (section III-A, Fig. 2).
    """
    counts = traversals([paths[i] for i in subset])
    union: set[frozenset] = set()
    repeats = 0.0
    for k in counts:
        union.update(k)
        repeats += sum((c - 1) * g.edges[tuple(e)][weight] for e, c in k.items() if c > 1)
    return sum(g.edges[tuple(e)][weight] for e in union) + repeats


def _mask(subset: Iterable[int]) -> int:
    m = 0
    for i in subset:
        m |= 1 << i
    return m


def cast_weights(g: nx.Graph, paths: Sequence[Sequence[Node]], *, noise: float = 0.0,
                 seed: int = 0, weight: str = "u") -> np.ndarray:
    """``phi[mask]`` for every subset ``C`` of paths (bit ``i`` of ``mask`` = path ``i``).

    ``phi[0] = 0``. With ``noise > 0`` every ``phi_C`` (C non-empty) gets independent Gaussian
    noise of standard deviation ``noise``. Built from the per-edge path masks, O(2^n * edges).

    Raises
    ------
    TooManyPathsError : more than ``MAX_PATHS_MOBIUS`` paths.
    """
    paths = check_paths(g, paths)
    n = len(paths)
    if n > MAX_PATHS_MOBIUS:
        raise TooManyPathsError(f"paths: {n} paths give 2^{n} - 1 cast weights, above the "
                                f"tractable {MAX_PATHS_MOBIUS} paths (use the exact category "
                                "weights from the ground truth instead)")
    _check_u(g, paths, weight)
    counts = traversals(paths)
    edge_mask: dict[frozenset, int] = {}
    rep = np.zeros(n)
    for i, k in enumerate(counts):
        for e, c in k.items():
            edge_mask[e] = edge_mask.get(e, 0) | (1 << i)
            if c > 1:
                rep[i] += (c - 1) * g.edges[tuple(e)][weight]
    masks = np.arange(1 << n)
    phi = np.zeros(1 << n)
    for e, em in edge_mask.items():
        phi += g.edges[tuple(e)][weight] * ((masks & em) != 0)
    for i in range(n):
        phi += rep[i] * ((masks >> i) & 1)
    if noise > 0:
        rng = np.random.default_rng(seed)
        phi[1:] += rng.normal(0.0, noise, size=phi.size - 1)
    return phi


def phi_from_categories(categories: Mapping[Category, float], n: int) -> np.ndarray:
    """``phi[mask] = sum of w_A over A intersecting C`` (eq. 7; eq. 4 for simple paths)."""
    if n > MAX_PATHS_MOBIUS:
        raise TooManyPathsError(f"n: {n} paths give 2^{n} - 1 cast weights, above the "
                                f"tractable {MAX_PATHS_MOBIUS}")
    masks = np.arange(1 << n)
    phi = np.zeros(1 << n)
    for a, w in categories.items():
        phi += w * ((masks & _mask(a)) != 0)
    return phi


def _dense_matrix(n: int) -> np.ndarray:
    m = np.arange(1, 1 << n)
    return ((m[:, None] & m[None, :]) != 0).astype(float)


def solve_category_weights(phi: np.ndarray | Mapping[Category, float], n: int, *,
                           method: str = "mobius",
                           threshold: float | None = None) -> dict[Category, float]:
    """Category weights from cast weights by the linear system of eq. 7.

    Parameters
    ----------
    phi : array indexed by subset mask (length 2^n, ``phi[0]`` ignored) or a mapping
        ``frozenset(C) -> phi_C`` covering every non-empty subset.
    method : ``"mobius"`` exact inversion (the system is square and invertible, so this is also
        its least-squares solution); ``"lstsq"`` numpy least squares; ``"nnls"`` non-negative
        least squares (scipy).
    threshold : categories with weight at most this are dropped (default ``1e-9 * max(1,
        phi_[n])``; raise it with noisy measurements).

    Returns
    -------
    dict of the non-zero categories.
    """
    if n < 1:
        raise InferenceError(f"n: {n!r} must be at least 1 (no paths)")
    limit = MAX_PATHS_MOBIUS if method == "mobius" else MAX_PATHS_DENSE
    if method not in ("mobius", "lstsq", "nnls"):
        raise InferenceError(f"method: {method!r} is not one of mobius, lstsq, nnls")
    if n > limit:
        raise TooManyPathsError(f"n: {n} paths give 2^{n} - 1 unknown category weights, above "
                                f"the {limit} paths the {method!r} method handles")
    if isinstance(phi, Mapping):
        arr = np.zeros(1 << n)
        for c, v in phi.items():
            arr[_mask(c)] = v
        if len(phi) < (1 << n) - 1:
            raise InferenceError(f"phi: {len(phi)} cast weights given, {2**n - 1} needed for "
                                 f"{n} paths (every non-empty subset)")
        phi = arr
    phi = np.asarray(phi, dtype=float)
    if phi.shape != (1 << n,):
        raise InferenceError(f"phi: shape {phi.shape} must be ({1 << n},) for {n} paths")
    if not np.all(np.isfinite(phi[1:])):
        raise InferenceError("phi: cast weights must be finite")
    full = (1 << n) - 1
    if method == "mobius":
        # g(S) = sum_{A subset of S} w_A = phi_[n] - phi_{complement of S}; invert on the lattice
        g = phi[full] - phi[full ^ np.arange(1 << n)]
        g[0] = 0.0
        for i in range(n):
            v = g.reshape(-1, 2, 1 << i)
            v[:, 1, :] -= v[:, 0, :]
        w = g
    else:
        a = _dense_matrix(n)
        if method == "lstsq":
            sol = np.linalg.lstsq(a, phi[1:], rcond=None)[0]
        else:
            from scipy.optimize import nnls
            sol = nnls(a, phi[1:], maxiter=50 * a.shape[1])[0]
        w = np.concatenate([[0.0], sol])
    if threshold is None:
        threshold = 1e-9 * max(1.0, abs(phi[full]))
    out = {}
    for mask in np.nonzero(w > threshold)[0].tolist():
        out[frozenset(i for i in range(n) if mask >> i & 1)] = float(w[mask])
    return out


def label(category: Iterable[int]) -> str:
    """``{0, 2} -> "1,3"`` (1-based, as in the paper)."""
    return ",".join(str(i + 1) for i in sorted(category))


def parse_label(text: str) -> Category:
    """``"1,3" -> frozenset({0, 2})``."""
    try:
        out = frozenset(int(x) - 1 for x in str(text).replace(" ", "").split(",") if x)
    except ValueError:
        raise InferenceError(f"category: {text!r} must be 1-based path numbers such as "
                             "'1,3'") from None
    if not out or min(out) < 0:
        raise InferenceError(f"category: {text!r} must list path numbers >= 1")
    return out
