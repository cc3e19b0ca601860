"""TAP (paper 000): the instance (traffic, VM distances or an underlay), the solution and the
evaluator (objective (8), constraints (11)-(12))."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pydantic
from pydantic import PrivateAttr

from dmlopt.evaluation import Evaluation
from dmlopt.models.tap.constants import (
    MAX_HOP_WORK,
    MAX_MODULES,
    MAX_OBJECTIVE,
    MAX_UNDERLAY_NODES,
    MAX_VMS,
    Node,
)
from dmlopt.validation import Frozen, rule


class Underlay(Frozen):
    """An underlay network: undirected edges between named nodes."""

    edges: list[tuple[Node, Node]] = pydantic.Field(min_length=1)
    servers: list[Node] | None = pydantic.Field(
        default=None, description="server nodes (the others are switches); default: the VMs")


class Instance(Frozen):
    """A TAP instance: traffic M, VM distances D (or an underlay and VMs), capacity K."""

    problem: Literal["tap"] = "tap"
    name: str = ""
    M: list[list[float]] = pydantic.Field(description="m x m traffic, non-negative")
    D: list[list[float]] | None = pydantic.Field(
        default=None, description="n x n VM distances (symmetric, zero diagonal); or underlay")
    underlay: Underlay | None = None
    vms: list[Node] | None = pydantic.Field(
        default=None, description="the VM nodes of the underlay (VM j = vms[j])")
    K: int = pydantic.Field(default=1, ge=1, description="modules per VM at most")
    clusters: list[int] | None = pydantic.Field(
        default=None, description="cluster label per VM (Cluster Embedding); default: derived")

    _M: np.ndarray = PrivateAttr(default=None)
    _D: np.ndarray = PrivateAttr(default=None)
    _labels: np.ndarray = PrivateAttr(default=None)

    @pydantic.model_validator(mode="after")
    def _rules(self) -> Instance:
        self._M = _check_m(self.M)
        if self.underlay is not None:
            if self.D is not None:
                raise rule("D", "given", "must be omitted when an underlay is given (D is "
                           "derived from it)")
            self._D, labels = _from_underlay(self.underlay, self.vms)
        elif self.D is not None:
            self._D = _check_d(self.D)
            labels = None
            if self.vms is not None and len(self.vms) != len(self.D):
                raise rule("vms", f"{len(self.vms)} names", f"must name the {len(self.D)} VMs "
                           "of D")
        else:
            raise rule("D", None, "is missing: give D or an underlay with vms")
        m, n = self._M.shape[0], self._D.shape[0]
        # every objective (8) is at most sum(M) max(D); above 2^53 neither it nor a bound is
        # exact in a 64-bit float (integral bounds are rounded up) and products may overflow
        with np.errstate(over="ignore"):  # a sum beyond the float range is inf, refused
            total = float(self._M.sum())
            reach = total * float(self._D.max(initial=0.0))
        if not reach <= MAX_OBJECTIVE:
            raise rule("M", f"total {total:.6g}", f"times the largest distance "
                       f"{float(self._D.max(initial=0.0)):.6g} is {reach:.6g}, above 2^53 = "
                       f"{MAX_OBJECTIVE:.6g}: objectives and bounds would not be exact in a "
                       "64-bit float (scale M or D down)")
        if m > n * self.K:
            raise rule("K", self.K, f"is too small: m = {m} modules > n*K = {n * self.K} "
                       f"(n = {n} VMs); TAP has no solution (paper 000, condition 10)")
        if self.clusters is not None:
            if len(self.clusters) != n:
                raise rule("clusters", f"{len(self.clusters)} labels", f"must give one label "
                           f"per VM ({n})")
            if min(self.clusters) < 0:
                raise rule("clusters", min(self.clusters), "is negative")
            labels = np.asarray(self.clusters, dtype=np.int64)
        elif labels is None:
            labels = _clusters_from_d(self._D)
        self._labels = np.asarray(labels, dtype=np.int64)
        return self

    def __eq__(self, other: object) -> bool:  # the private numpy caches are not compared
        if not isinstance(other, Instance):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  # mutable-looking lists: not hashable

    @property
    def m(self) -> int:
        """Number of modules."""
        return int(self._M.shape[0])

    @property
    def n(self) -> int:
        """Number of VMs."""
        return int(self._D.shape[0])

    @property
    def traffic(self) -> np.ndarray:
        """M as a float array (read-only)."""
        return self._M

    @property
    def distance(self) -> np.ndarray:
        """D as a float array (read-only; derived from the underlay when given)."""
        return self._D

    @property
    def pair_weight(self) -> np.ndarray:
        """``W = M + M^T`` with a zero diagonal: the cost weight of each unordered pair."""
        w = self._M + self._M.T
        np.fill_diagonal(w, 0.0)
        return w

    @property
    def cluster_labels(self) -> np.ndarray:
        """Cluster label of each VM (section IV-B)."""
        return self._labels


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _square(data: list[list[float]], field: str, limit: int) -> np.ndarray:
    size = len(data)
    if size == 0:
        raise rule(field, data, "must not be empty")
    if size > limit:
        raise rule(field, f"{size} rows", f"is above the limit {limit}")
    for r, row in enumerate(data):
        if len(row) != size:
            raise rule(f"{field}[{r}]", f"{len(row)} entries", f"must have {size} (square "
                       "matrix)")
    a = np.asarray(data, dtype=float)
    bad = np.argwhere(~np.isfinite(a) | (a < 0))
    if bad.size:
        r, c = (int(x) for x in bad[0])
        raise rule(f"{field}[{r}][{c}]", data[r][c], "must be finite and non-negative")
    return a


def _check_m(data: list[list[float]]) -> np.ndarray:
    return _readonly(_square(data, "M", MAX_MODULES))


def _check_d(data: list[list[float]]) -> np.ndarray:
    d = _square(data, "D", MAX_VMS)
    diag = np.flatnonzero(np.diag(d) != 0)
    if diag.size:
        j = int(diag[0])
        raise rule(f"D[{j}][{j}]", data[j][j], "must be 0 (a VM is 0 hops from itself)")
    asym = np.argwhere(d != d.T)
    if asym.size:
        r, c = (int(x) for x in asym[0])
        raise rule(f"D[{r}][{c}]", data[r][c], f"must equal D[{c}][{r}] = {data[c][r]} "
                   "(D is symmetric)")
    return _readonly(d)


def _from_underlay(underlay: Underlay, vms: list[Node] | None) -> tuple[np.ndarray, list[int]]:
    import networkx as nx

    from dmlopt import topology

    if not vms:
        raise rule("vms", vms, "must list the VM nodes of the underlay")
    if len(vms) > MAX_VMS:
        raise rule("vms", f"{len(vms)} VMs", f"is above the limit {MAX_VMS}")
    g = nx.Graph()
    for e, (u, v) in enumerate(underlay.edges):
        if u == v:
            raise rule(f"underlay.edges[{e}]", [u, v], "is a self loop")
        g.add_edge(u, v)
        if g.number_of_nodes() > MAX_UNDERLAY_NODES:
            raise rule("underlay.edges", f"{len(underlay.edges)} edges",
                       f"name more than {MAX_UNDERLAY_NODES} nodes")
    seen: dict[Node, int] = {}
    for j, v in enumerate(vms):
        if v not in g:
            raise rule(f"vms[{j}]", v, "is not a node of the underlay")
        if v in seen:
            raise rule(f"vms[{j}]", v, f"repeats vms[{seen[v]}]")
        seen[v] = j
    servers = set(vms if underlay.servers is None else underlay.servers)
    for s, v in enumerate(underlay.servers or ()):
        if v not in g:
            raise rule(f"underlay.servers[{s}]", v, "is not a node of the underlay")
    work = len(vms) * (g.number_of_nodes() + g.number_of_edges())
    if work > MAX_HOP_WORK:
        raise rule("vms", f"{len(vms)} VMs", f"on an underlay of {g.number_of_nodes()} nodes "
                   f"and {g.number_of_edges()} edges need {work} breadth-first steps to derive "
                   f"D, above the limit {MAX_HOP_WORK} (give D directly, or fewer VMs)")
    reach = nx.node_connected_component(g, vms[0])
    cut = [v for v in vms if v not in reach]
    if cut:
        raise rule("vms", cut[:10], f"cannot reach VM {vms[0]!r} in the underlay (disconnected "
                   "VMs; every pair of VMs needs a path)")
    d = topology.hop_matrix(g, vms)
    labels = topology.clusters(g, vms, is_switch=set(g.nodes) - servers)
    return _readonly(d), labels


def _clusters_from_d(d: np.ndarray) -> np.ndarray:
    """Single linkage of the VMs at the smallest positive distance (connected components)."""
    n = d.shape[0]
    pos = d[d > 0]
    labels = np.arange(n)
    if pos.size == 0:
        return np.zeros(n, dtype=np.int64)
    close = d == pos.min()
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in np.argwhere(np.triu(close, 1)):
        ra, rb = find(int(a)), find(int(b))
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = [find(a) for a in range(n)]
    order: dict[int, int] = {}
    labels = np.array([order.setdefault(r, len(order)) for r in roots], dtype=np.int64)
    return labels


class Solution(Frozen):
    """VM of every module: ``assignment[i]`` in 0..n-1 (the column j with X_ij = 1)."""

    problem: Literal["tap"] = "tap"
    assignment: list[int]


def cost(instance: Instance, assignment: np.ndarray) -> float:
    """Objective (8) of an assignment array: sum over ordered module pairs of M_ii' D_p(i)p(i')."""
    d = instance.distance
    return float((instance.traffic * d[np.ix_(assignment, assignment)]).sum())


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    """Objective (8) over ordered pairs; feasibility: one VM per module (12), capacity (11)."""
    m, n = instance.m, instance.n
    a = solution.assignment
    if len(a) != m:
        return Evaluation(math.inf, False, (f"assignment: {len(a)} modules, the instance has "
                                            f"{m} (12)",))
    arr = np.asarray(a, dtype=np.int64)
    bad = np.flatnonzero((arr < 0) | (arr >= n))
    if bad.size:
        viol = tuple(f"assignment[{int(i)}]: {int(arr[i])} is not a VM 0..{n - 1} (12)"
                     for i in bad[:10])
        return Evaluation(math.inf, False, viol)
    loads = np.bincount(arr, minlength=n)
    violations = tuple(f"VM {int(j)} holds {int(loads[j])} modules, above K = {instance.K} (11)"
                       for j in np.flatnonzero(loads > instance.K)[:10])
    objective = cost(instance, arr)
    total = float(instance.traffic.sum() - np.trace(instance.traffic))
    return Evaluation(
        objective=objective,
        feasible=not violations,
        violations=violations,
        metrics={
            "mean_hops": objective / total if total > 0 else 0.0,
            "max_load": float(loads.max()),
            "vms_used": float((loads > 0).sum()),
        },
    )
