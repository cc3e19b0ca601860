"""Graph helpers of the TABGP heuristics (paper 004, section 3): CSR graphs, compressed
(summed) steps, Algorithm 3.1 Dense, the METIS baseline and the capacity repair.

Private module of :mod:`dmlopt.heuristics.tabgp`; no Pyomo.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy is imported where it is used: `dmlopt list` stays light
    import scipy.sparse as sp

from dmlopt.models.tabgp import Instance


@dataclass(frozen=True)
class Graph:
    """A symmetric weighted graph on vertices 0..n-1 in CSR form (sorted, no duplicates).

    ``rows`` is the row of every stored entry, ``keys = rows * n + indices`` (sorted, so an edge
    weight is found by binary search), ``degree`` the weighted degree.
    """

    n: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    rows: np.ndarray
    keys: np.ndarray
    degree: np.ndarray

    @property
    def max_weight(self) -> float:
        return float(self.data.max()) if self.data.size else 0.0

    def neighbours(self, v: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.indptr[v], self.indptr[v + 1]
        return self.indices[lo:hi], self.data[lo:hi]

    def weight_between(self, vs: np.ndarray, us: np.ndarray) -> np.ndarray:
        """Weights of the pairs (vs[i], us[i]); 0 where there is no edge."""
        q = np.asarray(vs, dtype=np.int64) * self.n + np.asarray(us, dtype=np.int64)
        if not self.keys.size:
            return np.zeros(q.shape)
        pos = np.minimum(np.searchsorted(self.keys, q), self.keys.size - 1)
        return np.where(self.keys[pos] == q, self.data[pos], 0.0)

    def to_clusters(self, labels: np.ndarray, l: int) -> np.ndarray:
        """The n x l matrix W[v, c] = total weight of the edges from v into cluster c."""
        idx = self.rows * l + labels[self.indices]
        W = np.bincount(idx, weights=self.data, minlength=self.n * l)
        return W.astype(float, copy=False).reshape(self.n, l)

    def cut(self, labels: np.ndarray) -> float:
        """Total weight of the edges whose endpoints lie in different clusters."""
        return float(self.data[labels[self.rows] != labels[self.indices]].sum()) / 2


def _from_matrix(mat: sp.csr_matrix) -> Graph:
    mat = mat.tocsr()
    mat.sum_duplicates()
    mat.sort_indices()
    n = mat.shape[0]
    indptr = mat.indptr.astype(np.int64)
    indices = mat.indices.astype(np.int64)
    data = mat.data.astype(float)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    degree = np.bincount(rows, weights=data, minlength=n)
    return Graph(n, indptr, indices, data, rows, rows * n + indices, degree)


def step_matrices(instance: Instance) -> list[sp.csr_matrix]:
    """One symmetric weighted adjacency matrix (scipy CSR) per step."""
    import scipy.sparse as sp

    n = instance.n
    out = []
    for u, v, w in instance.arrays:
        mat = sp.coo_matrix((np.concatenate([w, w]), (np.concatenate([u, v]),
                                                      np.concatenate([v, u]))), shape=(n, n))
        out.append(mat.tocsr())
    return out


def compress(mats: list[sp.csr_matrix]) -> Graph:
    """Compress steps into one graph: an edge weighs the sum of its weights over the steps
    (its number of occurrences on unweighted instances), section 3, variants 1 and 2."""
    total = mats[0].copy()
    for m in mats[1:]:
        total = total + m
    return _from_matrix(total)


# --------------------------------------------------------------------------------------------
# Algorithm 3.1


def dense(graph: Graph, l: int, k: int) -> np.ndarray:
    """Algorithm 3.1 (Dense): l rounds, each filling a cluster X greedily up to k vertices.

    The next vertex is the unused one with the lexicographically largest score
    ``(w(N(v) n X), -deg(v))`` where ``w`` sums edge weights (counts on unweighted graphs) and
    ``deg`` is the weighted degree in the whole graph; remaining ties go to the smallest vertex
    index. Scores of unused neighbours are kept in a heap with lazy deletion; vertices with score
    0 come from a list presorted by (deg, index), so the run time is O(n log n + m log n).

    Returns the cluster of every vertex (all vertices are placed since k*l >= n).
    """
    n = graph.n
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    data = graph.data.tolist()
    deg = graph.degree.tolist()
    base = np.lexsort((np.arange(n), graph.degree)).tolist()
    used = [False] * n
    labels = [-1] * n
    ptr = 0
    left = n
    for c in range(l):
        if not left:
            break
        conn: dict[int, float] = {}
        heap: list[tuple[float, float, int]] = []
        size = 0
        while size < k and left:
            v = -1
            while heap:
                negc, _, u = heapq.heappop(heap)
                if not used[u] and -negc == conn[u]:
                    v = u
                    break
            if v < 0:
                while used[base[ptr]]:
                    ptr += 1
                v = base[ptr]
            used[v] = True
            labels[v] = c
            size += 1
            left -= 1
            for j in range(indptr[v], indptr[v + 1]):
                u = indices[j]
                if not used[u]:
                    cu = conn.get(u, 0.0) + data[j]
                    conn[u] = cu
                    heapq.heappush(heap, (-cu, deg[u], u))
    return np.asarray(labels, dtype=np.int64)


# --------------------------------------------------------------------------------------------
# METIS baseline


def _metis_weights(data: np.ndarray) -> np.ndarray:
    """Positive integer edge weights for METIS (32-bit sums): integral weights are kept when
    their total fits, otherwise weights are scaled to a total of 2**30 and rounded (at least 1);
    ``data`` holds both directions of every edge, as METIS wants."""
    total = float(data.sum())
    if np.all(data == np.round(data)) and total < 2**30:
        return data.astype(np.int64)
    return np.maximum(1, np.round(data * (2**30 / max(total, 1.0)))).astype(np.int64)


def metis(graph: Graph, l: int, k: int, seed: int = 0) -> np.ndarray:
    """METIS (pymetis, default parameters, edge weights) into l parts, repaired to capacity k."""
    if l == 1 or graph.n == 1:
        return np.zeros(graph.n, dtype=np.int64)
    import pymetis

    if graph.indices.size:
        part = pymetis.part_graph(
            l, pymetis.CSRAdjacency(graph.indptr, graph.indices),
            eweights=_metis_weights(graph.data),
            options=pymetis.Options(seed=seed),
        ).vertex_part
        labels = np.asarray(part, dtype=np.int64)
    else:  # METIS needs edges; an empty graph is any balanced split
        labels = np.arange(graph.n, dtype=np.int64) % l
    return repair(graph, labels, l, k)


def repair(graph: Graph, labels: np.ndarray, l: int, k: int) -> np.ndarray:
    """Move vertices out of clusters above capacity k, cheapest first.

    For every overfull cluster (largest first) the members are ranked by the cut increase of
    their best move into a cluster with free capacity; they are moved in that order (each move
    re-checked against the current state) until the cluster holds k vertices.
    """
    labels = np.asarray(labels, dtype=np.int64).copy()
    sizes = np.bincount(labels, minlength=l)
    if sizes.max() <= k:
        return labels
    W = graph.to_clusters(labels, l)
    for a in np.argsort(-sizes, kind="stable"):
        if sizes[a] <= k:
            break
        members = np.flatnonzero(labels == a)
        free = sizes < k
        free[a] = False
        loss = W[members, a][:, None] - np.where(free[None, :], W[members], -np.inf)
        order = np.argsort(loss.min(axis=1), kind="stable")
        for v in members[order]:
            if sizes[a] <= k:
                break
            gain = np.where(sizes < k, W[v], -np.inf)
            gain[a] = -np.inf
            c = int(np.argmax(gain))
            nb, w = graph.neighbours(v)
            W[nb, a] -= w
            W[nb, c] += w
            sizes[a] -= 1
            sizes[c] += 1
            labels[v] = c
    return labels
