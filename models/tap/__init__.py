"""Task allocation problem, TAP (paper 000: An, Wu, Huang, section IV, equations 8-12).

Problem. m ML modules with traffic matrix M (``M[i][i']`` data from module i to module i'), n VMs
with hop-distance matrix D, at most K modules per VM. Find a binary X (``X[i][j] = 1``: module i
on VM j) minimising

    (8)  sum_{i,i'=1..m} sum_{j,j'=1..n} X_ij X_i'j' M_ii' D_jj'
    (9)  X_ij in {0, 1}
    (10) m <= n K                   (a condition on the data: checked when the instance is read)
    (11) sum_i X_ij <= K  for all j (capacity)
    (12) sum_j X_ij = 1   for all i (every module on exactly one VM)

Instances
---------
``M`` is any non-negative m x m matrix (asymmetric allowed; its diagonal never costs anything,
since ``D_jj = 0``). ``D`` is given directly (non-negative, symmetric, zero diagonal) or derived
from an ``underlay`` graph and its ``vms`` by shortest hop counts (paper: "l is the shortest hop
distance between u and v in the underlay network"). In JSON::

    {"problem": "tap", "M": [[0, 1], [0, 0]], "K": 1,
     "underlay": {"edges": [["h0", "e0"], ["h1", "e0"]], "servers": ["h0", "h1"]},
     "vms": ["h0", "h1"]}

``D`` is computed at validation (breadth-first search) and never stored, so a file stays compact;
a VM that cannot reach the others is an error naming it. ``clusters`` (one label per VM) feeds
Cluster Embedding (IV-B); by default the VMs attached to the same switch form a cluster (with an
underlay: the non-server neighbour; with a bare D: VMs linked through the smallest positive
distance, single linkage).

Choices and deviations
----------------------
* Overlay weights. The paper's TAP cost counts every overlay link once (``c_w = w_o * l``) while
  (8) sums over ordered pairs. The overlay generators put a link's weight in one direction only
  (``M[i][i'] = w`` for ``i < i'``), so (8) equals the paper's total link cost; since D is
  symmetric the objective depends only on ``M + M^T``.
* Parameter-server overlay: module 0 is the server, modules 1..m-1 the workers, one link each;
  all-reduce "as the paper models it" (section V-C): every worker with every other (all m
  modules), ``ring``: module i with i+1 (mod m); ``random``: each pair with probability p, integer
  weights 1..max_weight.

Exact formulations (:data:`FORMULATIONS`)
-----------------------------------------
``"paper"``
    (8)-(12) as written, quadratic objective over all ordered pairs (terms with ``M_ii' D_jj' =
    0`` omitted). A nonconvex MIQP: SCIP solves it; HiGHS cannot, and ``solve(..., "highs",
    formulation="paper")`` is refused up front (its :class:`~dmlopt.contract.Formulation`
    names SCIP as its only solver).
``"rlt"``
    The first-level reformulation-linearization (Adams and Johnson 1994), the standard QAP
    linearisation with the strongest LP bound among the classic ones (it dominates Lawler,
    Kaufman-Broeckx and Frieze-Yadegar): ``y[p, j, j'] = X_ij X_i'j'`` for every module pair
    ``p = {i, i'}`` that exchanges traffic, linked by multiplying (12) for i' by X_ij (and (12) for
    i by X_i'j'). Pairs without traffic get no variables. With K = 1 the same-VM products are 0
    by (11) and omitted; with K > 1 they stay, and (11) multiplied by X_ij is added.
``"class"``
    RLT after removing module symmetry. Modules with identical traffic (e.g. all workers of an
    all-reduce, the workers of a parameter server) are interchangeable; with K = 1 they are
    aggregated into classes c of size s_c with one binary ``u[c, j]`` per VM (VM j holds a
    module of class c), and RLT products ``u[c, j] u[c', j']`` are linearized the same way
    (``sum_j' y = s_c' u[c, j]``, plus ``y <= u`` where a class has more than one module, and
    the McCormick cuts ``y >= u + u' - 1``). With
    no identical modules it is ``"rlt"``; the 8-module paper instances shrink from 8 x n binaries
    to 1-2 x n. With K > 1 it is ``"rlt"`` plus lexicographic symmetry breaking among identical
    modules (``VM index of i <= VM index of i'`` for consecutive members).

All formulations reach the same optimum (tests, against brute force).

Generators (:data:`GENERATORS`)
-------------------------------
``"dc"``: an underlay from :mod:`dmlopt.topology` (fat-tree, DCell, leaf-spine), VMs chosen or a
random subset of servers, an overlay (ps, allreduce, ring, random): section V-C's setting is
``{"topology": "fat-tree" | "dcell", "overlay": "ps" | "allreduce", "modules": 8, "K": 1}``.
``"qaplib"``: a shipped QAPLIB instance by ``name``, or any ``.dat`` file by ``path`` (K = 1).
``"random"``: random M and a random symmetric integer D, for tests.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pydantic
from pydantic import PrivateAttr

from dmlopt.contract import Formulation, Generator, Options, Size
from dmlopt.errors import DmloptError
from dmlopt.evaluation import Evaluation
from dmlopt.validation import Frozen, parse, rule

NAME = "tap"
TITLE = "Task allocation of ML modules to VMs"
PAPER = "000 (An, Wu, Huang)"
SENSE = "min"

#: largest number of modules, of VMs, and of underlay nodes accepted
MAX_MODULES = 2000
MAX_VMS = 5000
MAX_UNDERLAY_NODES = 200_000
#: largest breadth-first work accepted to derive D from an underlay: VMs x (nodes + edges)
#: (one search per VM; about 20 s of networkx at the limit)
MAX_HOP_WORK = 50_000_000

Node = int | str


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


# --------------------------------------------------------------------------------------------
# exact formulations


def traffic_pairs(instance: Instance) -> list[tuple[int, int, float]]:
    """Unordered module pairs ``(i, i', W_ii')`` with ``i < i'`` and traffic ``W = M + M^T > 0``."""
    w = instance.pair_weight
    return [(int(i), int(k), float(w[i, k])) for i, k in np.argwhere(np.triu(w, 1) > 0)]


def module_classes(instance: Instance) -> list[list[int]]:
    """Classes of interchangeable modules (identical traffic to every other module).

    Modules i and i' are interchangeable when ``W[i, k] = W[i', k]`` for every other module k;
    inside a class all pairs carry the same weight. Greedy, in module order, among the modules
    with the same sorted row; returns the classes as sorted lists, ordered by first module.
    """
    w = instance.pair_weight
    # interchangeable rows are equal up to swapping two entries, so they have the same sorted
    # row: bucket by it (hash) and compare exactly only inside a bucket
    buckets: dict[bytes, list[int]] = {}
    for i, key in enumerate(np.sort(w, axis=1)):
        buckets.setdefault(key.tobytes(), []).append(i)
    classes: list[list[int]] = []
    for bucket in buckets.values():
        local: list[list[int]] = []
        intra: list[float] = []
        for i in bucket:
            joined = False
            if local:
                # i joins the class of representative r only if their rows differ at most in
                # columns i and r, and i's traffic to every member is the class's intra weight
                reps = np.array([members[0] for members in local])
                diff = w[reps] != w[i]
                diff[:, i] = False
                diff[np.arange(reps.size), reps] = False
                for c in np.flatnonzero(~diff.any(axis=1)).tolist():
                    weight = intra[c] if len(local[c]) > 1 else w[i, reps[c]]
                    if np.all(w[i, local[c]] == weight):
                        local[c].append(i)
                        intra[c] = float(weight)
                        joined = True
                        break
            if not joined:
                local.append([i])
                intra.append(0.0)
        classes.extend(local)
    return sorted(classes)


def build_paper(instance: Instance) -> Any:
    """The MINLP (8)-(12) as written: binary X and the quadratic objective (8)."""
    import pyomo.environ as pyo

    m_, n = instance.m, instance.n
    mm, d = instance.traffic, instance.distance
    model = pyo.ConcreteModel(name=f"tap_paper_{instance.name}")
    model.I = pyo.RangeSet(0, m_ - 1)
    model.J = pyo.RangeSet(0, n - 1)
    # (9) X_ij in {0, 1}
    model.x = pyo.Var(model.I, model.J, domain=pyo.Binary)
    # (8) min sum_{i,i'} sum_{j,j'} X_ij X_i'j' M_ii' D_jj' (zero terms omitted)
    mp = [(int(i), int(k)) for i, k in np.argwhere(mm > 0)]
    dp = [(int(j), int(l)) for j, l in np.argwhere(d > 0)]
    model.obj = pyo.Objective(
        expr=pyo.quicksum(mm[i, k] * d[j, l] * model.x[i, j] * model.x[k, l]
                          for i, k in mp for j, l in dp),
        sense=pyo.minimize,
    )
    # (10) m <= n K holds by validation of the instance
    # (11) sum_i X_ij <= K
    model.capacity = pyo.Constraint(
        model.J, rule=lambda mo, j: pyo.quicksum(mo.x[i, j] for i in mo.I) <= instance.K)
    # (12) sum_j X_ij = 1
    model.assign = pyo.Constraint(
        model.I, rule=lambda mo, i: pyo.quicksum(mo.x[i, j] for j in mo.J) == 1)
    return model


def _vm_pairs(n: int, same: bool) -> list[tuple[int, int]]:
    return [(j, l) for j in range(n) for l in range(n) if j != l or same]


def build_rlt(instance: Instance, symmetry: bool = False) -> Any:
    """Adams-Johnson RLT1 linearisation on the pairs with traffic (module docstring)."""
    import pyomo.environ as pyo

    m_, n, K = instance.m, instance.n, instance.K
    d = instance.distance
    pairs = traffic_pairs(instance)
    vm_pairs = _vm_pairs(n, same=K > 1)
    model = pyo.ConcreteModel(name=f"tap_rlt_{instance.name}")
    model.I = pyo.RangeSet(0, m_ - 1)
    model.J = pyo.RangeSet(0, n - 1)
    model.P = pyo.RangeSet(0, len(pairs) - 1) if pairs else pyo.Set(initialize=[])
    model.JJ = pyo.Set(initialize=vm_pairs, dimen=2)
    model.x = pyo.Var(model.I, model.J, domain=pyo.Binary)  # (9)
    # y[p, j, j'] = X_ij X_i'j' for p = (i, i')
    model.y = pyo.Var(model.P, model.JJ, bounds=(0, 1))
    model._pairs = pairs
    model.obj = pyo.Objective(
        expr=pyo.quicksum(w * d[j, l] * model.y[p, j, l]
                          for p, (_, _, w) in enumerate(pairs) for j, l in vm_pairs
                          if d[j, l] > 0),
        sense=pyo.minimize,
    )
    model.capacity = pyo.Constraint(  # (11)
        model.J, rule=lambda mo, j: pyo.quicksum(mo.x[i, j] for i in mo.I) <= K)
    model.assign = pyo.Constraint(  # (12)
        model.I, rule=lambda mo, i: pyo.quicksum(mo.x[i, j] for j in mo.J) == 1)
    out = {j: [l for jj, l in vm_pairs if jj == j] for j in range(n)}
    inn = {l: [j for j, ll in vm_pairs if ll == l] for l in range(n)}
    # (12) for i' times X_ij: sum_j' y[p, j, j'] = X_ij
    model.rlt_row = pyo.Constraint(model.P, model.J, rule=lambda mo, p, j: pyo.quicksum(
        mo.y[p, j, l] for l in out[j]) == mo.x[pairs[p][0], j])
    # (12) for i times X_i'j': sum_j y[p, j, j'] = X_i'j'
    model.rlt_col = pyo.Constraint(model.P, model.J, rule=lambda mo, p, l: pyo.quicksum(
        mo.y[p, j, l] for j in inn[l]) == mo.x[pairs[p][1], l])
    if K > 1:
        touching: dict[int, list[int]] = {i: [] for i in range(m_)}
        for p, (i, k, _) in enumerate(pairs):
            touching[i].append(p)
            touching[k].append(p)
        # (11) for j times X_ij: sum_{i' != i} X_ij X_i'j <= (K - 1) X_ij
        model.rlt_cap = pyo.Constraint(model.I, model.J, rule=lambda mo, i, j: (
            pyo.quicksum(mo.y[p, j, j] for p in touching[i]) <= (K - 1) * mo.x[i, j])
            if touching[i] else pyo.Constraint.Skip)
    if symmetry:
        order = [(c[t], c[t + 1]) for c in module_classes(instance) for t in range(len(c) - 1)]
        model.symmetry = pyo.Constraint(range(len(order)), rule=lambda mo, t: pyo.quicksum(
            j * mo.x[order[t][0], j] for j in mo.J) <= pyo.quicksum(
            j * mo.x[order[t][1], j] for j in mo.J))
    return model


def _class_data(instance: Instance) -> tuple[list[list[int]], list[tuple[int, int, float]],
                                              list[tuple[int, float]]]:
    """Classes, inter-class pairs (c < c', W) and intra-class weights (c, W) with traffic."""
    classes = module_classes(instance)
    w = instance.pair_weight
    inter = [(c, e, float(w[classes[c][0], classes[e][0]]))
             for c in range(len(classes)) for e in range(c + 1, len(classes))
             if w[classes[c][0], classes[e][0]] > 0]
    intra = [(c, float(w[members[0], members[1]])) for c, members in enumerate(classes)
             if len(members) > 1 and w[members[0], members[1]] > 0]
    return classes, inter, intra


def build_class(instance: Instance) -> Any:
    """RLT on classes of interchangeable modules (K = 1), else RLT + symmetry breaking."""
    if instance.K > 1:
        return build_rlt(instance, symmetry=True)
    import pyomo.environ as pyo

    n, d = instance.n, instance.distance
    classes, inter, intra = _class_data(instance)
    size = [len(c) for c in classes]
    model = pyo.ConcreteModel(name=f"tap_class_{instance.name}")
    model.C = pyo.RangeSet(0, len(classes) - 1)
    model.J = pyo.RangeSet(0, n - 1)
    model._classes = classes
    # u[c, j] = 1: VM j holds a module of class c (K = 1)
    model.u = pyo.Var(model.C, model.J, domain=pyo.Binary)
    off = [(j, l) for j in range(n) for l in range(n) if j != l]
    upper = [(j, l) for j, l in off if j < l]
    model.PI = pyo.RangeSet(0, len(inter) - 1) if inter else pyo.Set(initialize=[])
    model.PA = pyo.RangeSet(0, len(intra) - 1) if intra else pyo.Set(initialize=[])
    model.OFF = pyo.Set(initialize=off, dimen=2)
    model.UP = pyo.Set(initialize=upper, dimen=2)
    # yi[q, j, j'] = u[c, j] u[c', j'] for q = (c, c'); ya[q, j, j'] = u[c, j] u[c, j'], j < j'
    model.yi = pyo.Var(model.PI, model.OFF, bounds=(0, 1))
    model.ya = pyo.Var(model.PA, model.UP, bounds=(0, 1))
    model.obj = pyo.Objective(
        expr=pyo.quicksum(w * d[j, l] * model.yi[q, j, l]
                          for q, (_, _, w) in enumerate(inter) for j, l in off if d[j, l] > 0)
        + pyo.quicksum(w * d[j, l] * model.ya[q, j, l]
                       for q, (_, w) in enumerate(intra) for j, l in upper if d[j, l] > 0),
        sense=pyo.minimize,
    )
    # (11) with K = 1: at most one module, of one class, per VM
    model.capacity = pyo.Constraint(
        model.J, rule=lambda mo, j: pyo.quicksum(mo.u[c, j] for c in mo.C) <= 1)
    # (12) summed over a class: its s_c modules occupy s_c VMs
    model.assign = pyo.Constraint(
        model.C, rule=lambda mo, c: pyo.quicksum(mo.u[c, j] for j in mo.J) == size[c])

    def inter_row(mo, q, j):  # u[c, j] * (sum_j' u[c', j'] = s_c'), u[c, j] u[c', j] = 0
        c, e, _ = inter[q]
        return pyo.quicksum(mo.yi[q, j, l] for l in range(n) if l != j) == size[e] * mo.u[c, j]

    def inter_col(mo, q, l):
        c, e, _ = inter[q]
        return pyo.quicksum(mo.yi[q, j, l] for j in range(n) if j != l) == size[c] * mo.u[e, l]

    def intra_row(mo, q, j):  # u[c, j] * (sum_j' u[c, j'] = s_c), u[c, j]^2 = u[c, j]
        c, _ = intra[q]
        return pyo.quicksum(mo.ya[q, min(j, l), max(j, l)] for l in range(n) if l != j) == (
            size[c] - 1) * mo.u[c, j]

    model.inter_row = pyo.Constraint(model.PI, model.J, rule=inter_row)
    model.inter_col = pyo.Constraint(model.PI, model.J, rule=inter_col)
    model.intra_row = pyo.Constraint(model.PA, model.J, rule=intra_row)
    # y <= u where the sums above do not imply it (the partner class has several modules)
    model.inter_ub_c = pyo.Constraint(model.PI, model.OFF, rule=lambda mo, q, j, l: (
        mo.yi[q, j, l] <= mo.u[inter[q][0], j]) if size[inter[q][1]] > 1 else pyo.Constraint.Skip)
    model.inter_ub_e = pyo.Constraint(model.PI, model.OFF, rule=lambda mo, q, j, l: (
        mo.yi[q, j, l] <= mo.u[inter[q][1], l]) if size[inter[q][0]] > 1 else pyo.Constraint.Skip)
    model.intra_ub = pyo.Constraint(model.PA, model.UP, [0, 1], rule=lambda mo, q, j, l, s: (
        mo.ya[q, j, l] <= mo.u[intra[q][0], (j, l)[s]]) if size[intra[q][0]] > 2
        else pyo.Constraint.Skip)
    # McCormick lower bounds y >= u + u' - 1: implied at integer points, they cut fractional
    # ones (halved HiGHS's time on the DCell all-reduce instances)
    model.inter_lb = pyo.Constraint(model.PI, model.OFF, rule=lambda mo, q, j, l: (
        mo.yi[q, j, l] >= mo.u[inter[q][0], j] + mo.u[inter[q][1], l] - 1))
    model.intra_lb = pyo.Constraint(model.PA, model.UP, rule=lambda mo, q, j, l: (
        mo.ya[q, j, l] >= mo.u[intra[q][0], j] + mo.u[intra[q][0], l] - 1))
    return model


def _size_paper(instance: Instance) -> tuple[int, int]:
    # every bilinear objective term counts as a variable (SCIP gives each an auxiliary one), so
    # the size guard also bounds the objective's m^2 n^2 terms
    terms = int((instance.traffic > 0).sum()) * int((instance.distance > 0).sum())
    return instance.m * instance.n + terms, instance.m + instance.n


def _size_rlt(instance: Instance) -> tuple[int, int]:
    m, n, K = instance.m, instance.n, instance.K
    p = int((np.triu(instance.pair_weight, 1) > 0).sum())
    nvp = n * n if K > 1 else n * (n - 1)
    return m * n + p * nvp, m + n + 2 * p * n + (m * n if K > 1 else 0)


def _size_class(instance: Instance) -> tuple[int, int]:
    if instance.K > 1:
        return _size_rlt(instance)
    n = instance.n
    # classes are computed without Pyomo (O(m^2) numpy): cheap next to any model
    classes, inter, intra = _class_data(instance)
    nv = len(classes) * n + len(inter) * n * (n - 1) + len(intra) * n * (n - 1) // 2
    nc = n + len(classes) + 3 * len(inter) * n * (n - 1) + len(intra) * (n + 3 * n * (n - 1) // 2)
    return nv, nc


#: the exact models (module docstring); "paper" is a nonconvex MIQP: SCIP only
#: (``dmlopt.solve`` refuses the other solvers up front)
FORMULATIONS: dict[str, Formulation] = {
    "paper": Formulation(build_paper, _size_paper,
                         "the MINLP (8)-(12) as written: quadratic objective (SCIP only)",
                         solvers=("scip",)),
    "rlt": Formulation(build_rlt, _size_rlt,
                       "first-level reformulation-linearization (Adams and Johnson) of (8)"),
    "class": Formulation(build_class, _size_class,
                         "RLT with interchangeable modules aggregated into classes"),
}


def build(instance: Instance, formulation: str = "paper") -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (see :data:`FORMULATIONS`)."""
    return FORMULATIONS[formulation].build(instance)


def estimate_size(instance: Instance, formulation: str = "paper") -> tuple[int, int]:
    """(variables, constraints) of the model, computed without building it."""
    return FORMULATIONS[formulation].estimate_size(instance)


def decode(model: Any, instance: Instance) -> Solution:
    """The VM of each module from X (largest value wins) or, for ``"class"``, from u."""
    if hasattr(model, "u"):
        out = [-1] * instance.m
        for c, members in enumerate(model._classes):
            vms = sorted(range(instance.n), key=lambda j, c=c: -(model.u[c, j].value or 0.0))
            for i, j in zip(members, vms[: len(members)], strict=True):
                out[i] = j
        return Solution(assignment=out)
    x = np.zeros((instance.m, instance.n))
    for (i, j), var in model.x.items():
        x[i, j] = var.value or 0.0
    return Solution(assignment=x.argmax(axis=1).tolist())


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    """Set every variable of any formulation (X or u, and the products y) from ``solution``."""
    a = np.asarray(solution.assignment, dtype=np.int64)
    if hasattr(model, "u"):
        classes = model._classes
        occ = np.zeros((len(classes), instance.n))
        for c, members in enumerate(classes):
            occ[c, a[members]] = 1.0
        for (c, j), var in model.u.items():
            var.set_value(occ[c, j])
        _, inter, intra = _class_data(instance)
        for (q, j, l), var in model.yi.items():
            var.set_value(occ[inter[q][0], j] * occ[inter[q][1], l])
        for (q, j, l), var in model.ya.items():
            var.set_value(occ[intra[q][0], j] * occ[intra[q][0], l])
        return
    for (i, j), var in model.x.items():
        var.set_value(1.0 if a[i] == j else 0.0)
    if hasattr(model, "y"):
        for (p, j, l), var in model.y.items():
            i, k, _ = model._pairs[p]
            var.set_value(1.0 if a[i] == j and a[k] == l else 0.0)


# --------------------------------------------------------------------------------------------
# generators


def _spec_error(field: str, value: object, text: str):
    from dmlopt.errors import InstanceError

    return InstanceError(f"spec.{field}", value, text)


#: overlay kinds of :func:`overlay_matrix`
OVERLAYS = ("ps", "allreduce", "ring", "random")


def overlay_matrix(kind: str, modules: int, *, weight: float = 1.0, p: float = 0.5,
                   max_weight: int = 10, rng: np.random.Generator | None = None) -> np.ndarray:
    """Traffic M of an overlay (section V-C), each link's weight once (``M[i][i'], i < i'``).

    ``ps``: module 0 is the parameter server, linked to every worker 1..m-1; ``allreduce``: every
    module with every other; ``ring``: module i with i+1 (mod m); ``random``: each pair with
    probability p, integer weight uniform in 1..max_weight.
    """
    if modules < 1:
        raise _spec_error("modules", modules, "must be >= 1")
    if modules > MAX_MODULES:
        raise _spec_error("modules", modules, f"is above the limit {MAX_MODULES}")
    mm = np.zeros((modules, modules))
    if kind == "ps":
        mm[0, 1:] = weight
    elif kind == "allreduce":
        mm[np.triu_indices(modules, 1)] = weight
    elif kind == "ring":
        for i in range(modules if modules > 2 else modules - 1):
            a, b = sorted((i, (i + 1) % modules))
            mm[a, b] = weight
    elif kind == "random":
        if not 0 <= p <= 1:
            raise _spec_error("p", p, "must be in [0, 1]")
        rng = rng or np.random.default_rng(0)
        iu = np.triu_indices(modules, 1)
        keep = rng.random(iu[0].size) < p
        mm[iu[0][keep], iu[1][keep]] = rng.integers(1, max_weight + 1, int(keep.sum()))
    else:
        raise _spec_error("overlay", kind, f"is not an overlay (one of {', '.join(OVERLAYS)})")
    return mm


def generate_dc(
    *, seed: int = 0, topology: str = "fat-tree", overlay: str = "ps", modules: int = 8,
    vms: int | list[Node] | None = None, K: int = 1, weight: float = 1.0, p: float = 0.5,
    max_weight: int = 10, k: int = 4, dcell_n: int = 4, dcell_level: int = 1, leaves: int = 4,
    spines: int = 2, servers_per_leaf: int = 4,
) -> Instance:
    """An overlay on a data-centre underlay (section V-C: 8 modules, K = 1, fat-tree or DCell).

    Parameters
    ----------
    topology : "fat-tree" (arity ``k``), "dcell" (``dcell_n`` servers per unit, level
        ``dcell_level``) or "leaf-spine" (``leaves``, ``spines``, ``servers_per_leaf``).
    overlay : "ps", "allreduce", "ring" or "random" (see :func:`overlay_matrix`).
    vms : None (every server is a VM), a count (a random subset of the servers, drawn with
        ``seed``) or a list of server names.
    """
    from dmlopt import topology as topo

    builders = {"fat-tree": lambda: topo.fat_tree(k),
                "dcell": lambda: topo.dcell(dcell_n, dcell_level),
                "leaf-spine": lambda: topo.leaf_spine(leaves, spines, servers_per_leaf)}
    if topology not in builders:
        raise _spec_error("topology", topology, f"is not a topology (one of {', '.join(builders)})")
    try:
        g = builders[topology]()
    except ValueError as exc:
        raise _spec_error("topology", topology, f"parameters rejected ({exc})") from None
    rng = np.random.default_rng(seed)
    servers = topo.servers(g)
    if vms is None:
        chosen = servers
    elif isinstance(vms, int):
        if not 1 <= vms <= len(servers):
            raise _spec_error("vms", vms, f"must be in 1..{len(servers)} (servers of the "
                              f"{topology})")
        pick = set(rng.choice(len(servers), size=vms, replace=False).tolist())
        chosen = [s for t, s in enumerate(servers) if t in pick]
    else:
        chosen = list(vms)
    mm = overlay_matrix(overlay, modules, weight=weight, p=p, max_weight=max_weight, rng=rng)
    name = f"{topology}-{overlay}-m{modules}-n{len(chosen)}-K{K}-s{seed}"
    return parse(Instance, {"name": name, "M": mm.tolist(), "K": K, "vms": chosen, "underlay": {
        "edges": [(u, v) for u, v in g.edges()], "servers": servers}})


def generate_random(*, seed: int = 0, m: int = 6, n: int = 6, K: int = 1, density: float = 0.6,
                    max_weight: int = 10, max_dist: int = 5) -> Instance:
    """Random integer traffic (density ``density``) and a random symmetric integer D."""
    if m < 1 or n < 1 or max_dist < 1 or max_weight < 1:
        raise _spec_error("m/n/max_dist/max_weight", (m, n, max_dist, max_weight),
                          "must be positive")
    if max(m, n) > MAX_VMS:
        raise _spec_error("m/n", (m, n), f"is above the limit {MAX_VMS}")
    rng = np.random.default_rng(seed)
    mm = rng.integers(1, max_weight + 1, (m, m)) * (rng.random((m, m)) < density)
    np.fill_diagonal(mm, 0)
    d = np.triu(rng.integers(1, max_dist + 1, (n, n)), 1)
    d = d + d.T
    return parse(Instance, {"name": f"random-m{m}-n{n}-K{K}-s{seed}", "M": mm.tolist(),
                            "D": d.tolist(), "K": K})


def generate_qaplib(*, seed: int = 0, name: str = "nug12", path: str | None = None) -> Instance:
    """A QAPLIB instance as a TAP with K = 1 (``seed`` is unused): a shipped one by ``name``, or
    any ``.dat`` file by ``path`` (then ``name`` is ignored)."""
    from dmlopt.models.tap import qaplib

    if path is not None:
        if not str(path).endswith(".dat"):
            raise _spec_error("path", path, "must be a QAPLIB .dat file")
        return qaplib.load(path)
    return qaplib.load(name)


class DcParams(Options):
    """Parameters of the ``dc`` generator (section V-C)."""

    topology: Literal["fat-tree", "dcell", "leaf-spine"] = pydantic.Field(
        default="fat-tree", description="the underlay (dmlopt.topology)")
    overlay: Literal["ps", "allreduce", "ring", "random"] = pydantic.Field(
        default="ps", description="the overlay: parameter server, all-reduce, ring or random")
    modules: int = pydantic.Field(default=8, ge=1, le=MAX_MODULES,
                                  description="number of ML modules m")
    vms: int | list[Node] | None = pydantic.Field(
        default=None, description="the VMs: None (every server), a count (a random subset "
        "drawn with the seed) or a list of server names")
    K: int = pydantic.Field(default=1, ge=1, description="modules per VM at most")
    weight: float = pydantic.Field(default=1.0, ge=0, description="traffic of an overlay link "
                                   "(ps, allreduce, ring)")
    p: float = pydantic.Field(default=0.5, ge=0, le=1, description="link probability of the "
                              "random overlay")
    max_weight: int = pydantic.Field(default=10, ge=1, description="largest link traffic of "
                                     "the random overlay (uniform 1..max_weight)")
    k: int = pydantic.Field(default=4, ge=2, description="fat-tree arity (even)")
    dcell_n: int = pydantic.Field(default=4, ge=2, description="servers per DCell_0")
    dcell_level: int = pydantic.Field(default=1, ge=0, description="DCell level")
    leaves: int = pydantic.Field(default=4, ge=1, description="leaf switches (leaf-spine)")
    spines: int = pydantic.Field(default=2, ge=1, description="spine switches (leaf-spine)")
    servers_per_leaf: int = pydantic.Field(default=4, ge=1,
                                           description="servers per leaf (leaf-spine)")


class RandomParams(Options):
    """Parameters of the ``random`` generator (tests)."""

    m: int = pydantic.Field(default=6, ge=1, le=MAX_MODULES, description="number of modules")
    n: int = pydantic.Field(default=6, ge=1, le=MAX_VMS, description="number of VMs")
    K: int = pydantic.Field(default=1, ge=1, description="modules per VM at most")
    density: float = pydantic.Field(default=0.6, ge=0, le=1, description="probability of "
                                    "traffic between two modules")
    max_weight: int = pydantic.Field(default=10, ge=1, description="largest traffic "
                                     "(uniform 1..max_weight)")
    max_dist: int = pydantic.Field(default=5, ge=1, description="largest VM distance "
                                   "(uniform 1..max_dist)")


class QaplibParams(Options):
    """Parameters of the ``qaplib`` generator."""

    name: str = pydantic.Field(default="nug12", description="a shipped QAPLIB name (data/"
                               "qaplib: 76 instances, n = 12..100)")
    path: str | None = pydantic.Field(default=None, description="any QAPLIB .dat file (then "
                                      "name is ignored), read through the bounded reader")


#: bytes and interpreted operations per matrix entry of an instance (a Python float in a list,
#: validated into numpy)
_ENTRY_BYTES, _ENTRY_OPS = 100.0, 200.0
#: interpreted operations per node or edge visited by a networkx breadth-first search
_BFS_OPS = 1000.0


def _underlay_size(params: DcParams) -> tuple[float, float, float]:
    """(nodes, edges, servers) of the underlay, from the parameters alone."""
    if params.topology == "fat-tree":
        k = float(params.k)
        return 5 * k * k / 4 + k**3 / 4, 3 * k**3 / 4, k**3 / 4
    if params.topology == "leaf-spine":
        leaves = float(params.leaves)
        servers = leaves * params.servers_per_leaf
        return leaves + params.spines + servers, servers + leaves * params.spines, servers
    servers = float(params.dcell_n)
    for _ in range(min(params.dcell_level, 64)):  # t_l = t_{l-1} (t_{l-1} + 1)
        servers = servers * (servers + 1)
        if servers > 1e30:
            break
    return servers * (1 + 1 / params.dcell_n), servers * (1 + params.dcell_level / 2), servers


def estimate_dc(params: DcParams) -> Size:
    """The underlay graph, M (m x m), D (VMs x VMs) by one breadth-first search per VM."""
    nodes, edges, servers = _underlay_size(params)
    if isinstance(params.vms, int):
        vms = float(params.vms)
    elif params.vms is None:
        vms = servers
    else:
        vms = float(len(params.vms))
    m = float(params.modules)
    entries = m * m + vms * vms
    return Size(300 * (nodes + edges) + _ENTRY_BYTES * entries,
                _BFS_OPS * (nodes + edges) * (1 + vms) + _ENTRY_OPS * entries)


def estimate_random(params: RandomParams) -> Size:
    """Random M (m x m) and D (n x n), as numpy arrays and as lists."""
    entries = float(params.m) ** 2 + float(params.n) ** 2
    return Size((_ENTRY_BYTES + 40) * entries, (_ENTRY_OPS + 20) * entries)


def estimate_qaplib(params: QaplibParams) -> Size:
    """The .dat file's tokens (its size, capped by the QAPLIB reader) and the instance."""
    from dmlopt.models.tap import qaplib

    try:
        source = params.path if params.path is not None else params.name
        size = min(float(qaplib._resolve(source, ".dat").stat().st_size),
                   float(qaplib.MAX_FILE_BYTES))
    except (OSError, ValueError, DmloptError):
        size = 0.0  # the reader refuses it with its own message
    return Size(60 * size, 100 * size)


GENERATORS: dict[str, Generator] = {
    "dc": Generator(generate_dc, DcParams, estimate_dc,
                    "an overlay on a data-centre underlay (fat-tree, DCell, leaf-spine)"),
    "qaplib": Generator(generate_qaplib, QaplibParams, estimate_qaplib,
                        "a QAPLIB instance (shipped name or .dat path) as a TAP with K = 1"),
    "random": Generator(generate_random, RandomParams, estimate_random,
                        "random integer traffic and a random symmetric integer D (tests)"),
}


#: a tiny ``dmlopt.generate`` spec, 4 modules on 4 VMs: solves in about a second with
#: every formulation; tests/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "random", "m": 4, "n": 4}
