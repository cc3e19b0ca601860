"""TABGP (paper 004): the ILP of section 4.2 (paper) and ours (strong, pairs, clusters)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dmlopt.contract import Formulation
from dmlopt.models.tabgp.instance import Instance, Solution, evaluate

# --------------------------------------------------------------------------------------------
# exact formulations


def _edge_index(instance: Instance) -> list[tuple[int, int]]:
    return [(t, j) for t in range(instance.tau) for j in range(len(instance.edges[t]))]


def build_paper(instance: Instance) -> Any:
    """The ILP of section 4.2, constraint by constraint (the cut weighted).

    ``"paper"`` is the ILP of section 4.2 as written (the paper does not number its constraints; we
    call them 4.2a-d in order of appearance): (4.2a) sum_i x_{v,i,t} = 1, (4.2b) sum_v x_{v,i,t} <=
    k, (4.2c) x_{v,i,t} - x_{u,i,t} <= y_{uv,t} and x_{u,i,t} - x_{v,i,t} <= y_{uv,t} per edge and
    cluster, (4.2d) x_{v,i,t} - x_{v,i,t+1} <= z_{v,t}; x, y, z binary. Checked against the paper
    line by line; the one change is the weighted cut (:mod:`dmlopt.models.tabgp`). (4.2d) is
    one-sided but exact: a vertex leaving cluster i has x_{v,i,t} = 1, x_{v,i,t+1} = 0. As the paper
    notes, its LP relaxation is 0 (x = 1/l everywhere), so HiGHS stalls on n = 12, tau = 3.

    Parameters
    ----------
    instance : Instance
        The TABGP instance.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Minimises cut weight plus alpha times migrations over binary x, y, z.

    References
    ----------
    Paper 004 (Figiel, Nichterlein, Schmid), section 4.2; the edge weights follow its
    section 4.5.
    """
    import pyomo.environ as pyo

    m = _model_with_sets(instance, "paper")
    # x_{v,i,t} in {0,1}: vertex v is in cluster i at step t
    m.x = pyo.Var(m.V, m.C, m.T, domain=pyo.Binary)
    # y_{u,v,t} in {0,1}: edge {u,v} of E_t is cut
    m.y = pyo.Var(m.E, domain=pyo.Binary)
    # z_{v,t} in {0,1}: vertex v migrates between t and t+1
    m.z = pyo.Var(m.V, m.T1, domain=pyo.Binary)

    # minimize sum_t sum_{uv in E_t} y_{u,v,t} + alpha sum_{t<tau} sum_v z_{v,t}
    m.obj = pyo.Objective(
        expr=sum(instance.weight(t, j) * m.y[t, j] for t, j in m.E)
        + instance.alpha * sum(m.z[v, t] for v in m.V for t in m.T1),
        sense=pyo.minimize,
    )
    # (4.2a) sum_i x_{v,i,t} = 1 for all v, t
    m.assign = pyo.Constraint(m.V, m.T, rule=lambda m, v, t: sum(m.x[v, i, t] for i in m.C) == 1)
    # (4.2b) sum_v x_{v,i,t} <= k for all i, t
    m.capacity = pyo.Constraint(
        m.C, m.T, rule=lambda m, i, t: sum(m.x[v, i, t] for v in m.V) <= instance.k
    )

    # (4.2c) x_{v,i,t} - x_{u,i,t} <= y_{u,v,t} and x_{u,i,t} - x_{v,i,t} <= y_{u,v,t}
    def cut1(m, t, j, i):
        u, v = instance.edges[t][j]
        return m.x[v, i, t] - m.x[u, i, t] <= m.y[t, j]

    def cut2(m, t, j, i):
        u, v = instance.edges[t][j]
        return m.x[u, i, t] - m.x[v, i, t] <= m.y[t, j]

    m.cut1 = pyo.Constraint(m.E, m.C, rule=cut1)
    m.cut2 = pyo.Constraint(m.E, m.C, rule=cut2)
    # (4.2d) x_{v,i,t} - x_{v,i,t+1} <= z_{v,t}
    m.migrate = pyo.Constraint(
        m.V, m.T1, m.C, rule=lambda m, v, t, i: m.x[v, i, t] - m.x[v, i, t + 1] <= m.z[v, t]
    )
    return m




def _model_with_sets(instance: Instance, formulation: str) -> Any:
    """A ConcreteModel with section 4.2's index sets: V, C (clusters), T, T1 (t < tau) and E."""
    import pyomo.environ as pyo

    n, l, tau = instance.n, instance.l, instance.tau
    m = pyo.ConcreteModel(name=f"tabgp_{formulation}_{instance.name}")
    m.V = pyo.RangeSet(0, n - 1)
    m.C = pyo.RangeSet(0, l - 1)
    m.T = pyo.RangeSet(0, tau - 1)
    m.T1 = pyo.RangeSet(0, tau - 2) if tau > 1 else pyo.Set(initialize=[])
    m.E = pyo.Set(initialize=_edge_index(instance), dimen=2)
    return m

def _objective(m: Any, instance: Instance) -> None:
    """Section 4.2's objective on the model's y (cut, weighted) and z (migration) variables."""
    import pyomo.environ as pyo

    m.obj = pyo.Objective(
        expr=sum(instance.weight(t, j) * m.y[t, j] for t, j in m.E)
        + instance.alpha * sum(m.z[v, t] for v in m.V for t in m.T1),
        sense=pyo.minimize,
    )


def _partition(m: Any, instance: Instance) -> None:
    """(4.2a) every vertex in one cluster per step; (4.2b) at most k vertices per cluster."""
    import pyomo.environ as pyo

    m.assign = pyo.Constraint(m.V, m.T, rule=lambda m, v, t: sum(m.x[v, i, t] for i in m.C) == 1)
    m.capacity = pyo.Constraint(
        m.C, m.T, rule=lambda m, i, t: sum(m.x[v, i, t] for v in m.V) <= instance.k
    )

def _size_paper(instance: Instance) -> tuple[int, int]:
    n, l, tau = instance.n, instance.l, instance.tau
    m_tot = sum(len(e) for e in instance.edges)
    n_vars = n * l * tau + m_tot + n * (tau - 1)
    n_cons = n * tau + l * tau + 2 * l * m_tot + l * n * (tau - 1)
    return n_vars, n_cons


def _build_strong(instance: Instance, *, symmetry: bool = True, degree: bool = True) -> Any:
    """The strengthened model (module docstring, "strong"): same x, y, z as the paper."""
    import pyomo.environ as pyo

    n, l, k, tau = instance.n, instance.l, instance.k, instance.tau
    m = _model_with_sets(instance, "strong")
    m.x = pyo.Var(m.V, m.C, m.T, domain=pyo.Binary)
    # y and z are integral once x is: continuous in [0, 1]
    m.y = pyo.Var(m.E, bounds=(0, 1))
    m.z = pyo.Var(m.V, m.T1, bounds=(0, 1))
    # w_{e,i,t}: both ends of edge e of E_t in cluster i; s_{v,i,t}: v stays in cluster i
    m.w = pyo.Var(m.E, m.C, bounds=(0, 1))
    m.s = pyo.Var(m.V, m.C, m.T1, bounds=(0, 1))
    _objective(m, instance)
    _partition(m, instance)

    def ends(t: int, j: int) -> tuple[int, int]:
        return instance.edges[t][j]

    # (S1) w_{e,i,t} <= x_{u,i,t} and w_{e,i,t} <= x_{v,i,t} for e = {u, v}
    m.w_u = pyo.Constraint(
        m.E, m.C, rule=lambda m, t, j, i: m.w[t, j, i] <= m.x[ends(t, j)[0], i, t]
    )
    m.w_v = pyo.Constraint(
        m.E, m.C, rule=lambda m, t, j, i: m.w[t, j, i] <= m.x[ends(t, j)[1], i, t]
    )
    # (S2) y_{e,t} = 1 - sum_i w_{e,i,t}
    m.cut = pyo.Constraint(
        m.E, rule=lambda m, t, j: m.y[t, j] + sum(m.w[t, j, i] for i in m.C) == 1
    )
    _migration(m)
    if degree:
        # (S5) sum_{e in E_t at v} w_{e,i,t} <= (k-1) x_{v,i,t}: <= k-1 same-cluster neighbours
        inc = _incidence(instance)
        m.VT = pyo.Set(initialize=[(v, t) for t in range(tau) for v in range(n) if inc[t][v]],
                       dimen=2)
        m.degree = pyo.Constraint(
            m.VT, m.C, rule=lambda m, v, t, i: sum(m.w[t, j, i] for j in inc[t][v])
            <= (k - 1) * m.x[v, i, t]
        )
    if symmetry:
        _order(m, n, l)
    m._warm_extra = _warm_strong
    return m


def _migration(m: Any) -> None:
    """(S3) s_{v,i,t} <= x_{v,i,t}, s_{v,i,t} <= x_{v,i,t+1}; (S4) z_{v,t} = 1 - sum_i s_{v,i,t}."""
    import pyomo.environ as pyo

    m.s_now = pyo.Constraint(m.V, m.C, m.T1, rule=lambda m, v, i, t: m.s[v, i, t] <= m.x[v, i, t])
    m.s_next = pyo.Constraint(
        m.V, m.C, m.T1, rule=lambda m, v, i, t: m.s[v, i, t] <= m.x[v, i, t + 1]
    )
    m.stay = pyo.Constraint(
        m.V, m.T1, rule=lambda m, v, t: m.z[v, t] + sum(m.s[v, i, t] for i in m.C) == 1
    )


def _order(m: Any, n: int, l: int) -> None:
    """(S6) Representatives at step 0: vertex v may be in cluster i >= 1 only if a smaller
    vertex is in cluster i-1 (clusters ordered by their smallest vertex, empty ones last)."""
    import pyomo.environ as pyo

    if l < 2:
        return
    m.VC1 = pyo.Set(initialize=[(v, i) for v in range(n) for i in range(1, l)], dimen=2)
    m.order = pyo.Constraint(
        m.VC1, rule=lambda m, v, i: m.x[v, i, 0] <= sum(m.x[u, i - 1, 0] for u in range(v))
    )


def _incidence(instance: Instance) -> list[list[list[int]]]:
    """``inc[t][v]``: indices j of the edges of step t at vertex v."""
    inc = [[[] for _ in range(instance.n)] for _ in range(instance.tau)]
    for t, edges in enumerate(instance.edges):
        for j, (u, v) in enumerate(edges):
            inc[t][u].append(j)
            inc[t][v].append(j)
    return inc


def _warm_strong(model: Any, instance: Instance, a: np.ndarray) -> None:
    for (t, j, i), var in model.w.items():
        u, v = instance.edges[t][j]
        var.set_value(1.0 if a[t, u] == i and a[t, v] == i else 0.0)
    _warm_stay(model, a)


def _warm_stay(model: Any, a: np.ndarray) -> None:
    for (v, i, t), var in model.s.items():
        var.set_value(1.0 if a[t, v] == i and a[t + 1, v] == i else 0.0)


def build_strong(instance: Instance) -> Any:
    """The strengthened formulation: linked w/s variables, degree cuts, label symmetry (ours).

    ``"strong"`` keeps (4.2a), (4.2b) and replaces (4.2c), (4.2d); y and z become continuous (they
    are integral once x is):

    * (S1) w_{e,i,t} <= x_{u,i,t}, w_{e,i,t} <= x_{v,i,t} for e = {u, v}: w is "both ends in i";
    * (S2) y_{e,t} = 1 - sum_i w_{e,i,t}. For binary x at most one i has both ends, so y is exactly
      the cut indicator (minimisation pushes w to its upper bound). In the LP, y_e >= 1 - sum_i
      min(x_{u,i}, x_{v,i}) = half the L1 distance of x_u and x_v, at least the paper's
      max_i |x_{u,i} - x_{v,i}|;
    * (S3) s_{v,i,t} <= x_{v,i,t}, s_{v,i,t} <= x_{v,i,t+1} ("v stays in i"), (S4) z_{v,t} = 1 -
      sum_i s_{v,i,t}: exact for binary x by the same argument, and as strong relative to (4.2d);
    * (S5) sum_{e in E_t at v} w_{e,i,t} <= (k - 1) x_{v,i,t}: a cluster holds at most k vertices,
      so v has at most k - 1 neighbours in its cluster, and none in a cluster it is not in. This is
      what lifts the LP bound above 0 (summed over i: at least deg_t(v) - (k - 1) edges at v are
      cut);
    * (S6) symmetry breaking: relabelling the clusters with one permutation applied to ALL steps
      keeps cut and migration cost (labels matter only between consecutive steps), so we may demand
      that at step 0 the clusters are ordered by their smallest vertex, empty clusters last:
      x_{v,i,0} <= sum_{u<v} x_{u,i-1,0} for i >= 1 (this forces x_{v,i,0} = 0 for v < i). Every
      solution has exactly one such relabelling (:func:`canonical_labels`, which ``warm_start``
      applies so a heuristic start satisfies (S6)). Labels are NOT interchangeable per step, so
      nothing is imposed at later steps.

    Parameters
    ----------
    instance : Instance
        The TABGP instance.

    Returns
    -------
    pyomo.environ.ConcreteModel
        The paper's objective over x, y, z plus w and s; the optimum of :func:`build_paper`
        (tests, against it and brute force).

    References
    ----------
    Ours, on paper 004's ILP (section 4.2): the linked formulation of the cut and migration
    indicators, the degree cut (S5) and the symmetry breaking (S6).
    """
    return _build_strong(instance)


def _size_strong(instance: Instance, *, symmetry: bool = True, degree: bool = True
                 ) -> tuple[int, int]:
    n, l, tau = instance.n, instance.l, instance.tau
    m_tot = sum(len(e) for e in instance.edges)
    n_vars = n * l * tau + m_tot + n * (tau - 1) + m_tot * l + n * l * (tau - 1)
    n_cons = n * tau + l * tau + 2 * m_tot * l + m_tot + 2 * n * l * (tau - 1) + n * (tau - 1)
    if degree:
        touched = sum(len({u for e in edges for u in e}) for edges in instance.edges)
        n_cons += touched * l
    if symmetry and l > 1:
        n_cons += n * (l - 1)
    return n_vars, n_cons


def build_pairs(instance: Instance) -> Any:
    """"strong" plus a label-free layer over every vertex pair (ours; the default).

    ``"pairs"`` keeps (4.2a), (4.2b), (S3), (S4), (S6) of "strong", replaces its edge variables w by
    variables q for every vertex pair (so the same-cluster indicator is defined for non-edges too)
    and adds a label-free layer that closes most of the remaining gap (LP bound 36.7 against the
    optimum 37 on an n = 12, tau = 3, p = 0.3 instance where "strong" gives 29.4 and "clusters"
    32.7):

    * (P1) q_{uv,i,t} <= x_{u,i,t}, q_{uv,i,t} <= x_{v,i,t}, q_{uv,i,t} >= x_{u,i,t} + x_{v,i,t} - 1
      for every pair u < v (McCormick, exact for binary x), p_{uv,t} = sum_i q_{uv,i,t}: the
      same-cluster indicator, now both bounded above and below;
    * (P2) y_{e,t} = 1 - p_{e,t} for edges; (P3) sum_{u != v} q_{uv,i,t} <= (k - 1) x_{v,i,t};
    * (P4) triangle inequalities p_{ab,t} + p_{ac,t} - p_{bc,t} <= 1 (all three rotations): "same
      cluster" is an equivalence relation;
    * (P5) |p_{uv,t} - p_{uv,t+1}| <= z_{u,t} + z_{v,t}: if neither u nor v changes its cluster,
      they are together at t+1 exactly when they were at t. This charges migration for a change of
      the partition itself, whatever the labels, which the LP of "strong" can dodge by spreading
      x fractionally and identically over all steps;
    * y and z are declared binary (integral anyway) so the solver knows the objective is integral
      for integer weights and alpha and may round its bound up.

    Parameters
    ----------
    instance : Instance
        The TABGP instance.

    Returns
    -------
    pyomo.environ.ConcreteModel
        The paper's objective; the optimum of :func:`build_paper` (tests).

    References
    ----------
    Ours, on paper 004's ILP (section 4.2); the triangle inequalities (P4) are those of the
    clique partitioning polytope (M. Groetschel and Y. Wakabayashi, Mathematical Programming
    45 (1989) 59-96).
    """
    import pyomo.environ as pyo

    n, l, k, tau = instance.n, instance.l, instance.k, instance.tau
    m = _model_with_sets(instance, "pairs")
    m.P = pyo.Set(initialize=[(u, v) for u in range(n) for v in range(u + 1, n)], dimen=2)
    m.x = pyo.Var(m.V, m.C, m.T, domain=pyo.Binary)
    m.y = pyo.Var(m.E, domain=pyo.Binary)
    m.z = pyo.Var(m.V, m.T1, domain=pyo.Binary)
    m.s = pyo.Var(m.V, m.C, m.T1, bounds=(0, 1))
    # q_{uv,i,t}: u and v both in cluster i at step t; p_{uv,t} = sum_i q_{uv,i,t}
    m.q = pyo.Var(m.P, m.C, m.T, bounds=(0, 1))
    m.p = pyo.Var(m.P, m.T, bounds=(0, 1))
    _objective(m, instance)
    _partition(m, instance)
    # (P1) q = x_u AND x_v (McCormick: exact for binary x)
    m.q_u = pyo.Constraint(
        m.P, m.C, m.T, rule=lambda m, u, v, i, t: m.q[u, v, i, t] <= m.x[u, i, t]
    )
    m.q_v = pyo.Constraint(
        m.P, m.C, m.T, rule=lambda m, u, v, i, t: m.q[u, v, i, t] <= m.x[v, i, t]
    )
    m.q_uv = pyo.Constraint(
        m.P, m.C, m.T,
        rule=lambda m, u, v, i, t: m.q[u, v, i, t] >= m.x[u, i, t] + m.x[v, i, t] - 1,
    )
    m.same = pyo.Constraint(
        m.P, m.T, rule=lambda m, u, v, t: m.p[u, v, t] == sum(m.q[u, v, i, t] for i in m.C)
    )

    def pk(u: int, v: int) -> tuple[int, int]:
        return (u, v) if u < v else (v, u)

    # (P2) y_{e,t} = 1 - p_{e,t}
    m.cut = pyo.Constraint(
        m.E, rule=lambda m, t, j: m.y[t, j] + m.p[(*pk(*instance.edges[t][j]), t)] == 1
    )
    _migration(m)
    # (P3) sum_{u != v} q_{uv,i,t} <= (k-1) x_{v,i,t}: at most k-1 partners in v's cluster
    m.degree = pyo.Constraint(
        m.V, m.C, m.T, rule=lambda m, v, i, t: sum(m.q[(*pk(u, v), i, t)] for u in m.V if u != v)
        <= (k - 1) * m.x[v, i, t]
    )
    # (P4) triangle inequalities: "same cluster" is transitive
    triples = [(a, b, c, t) for t in range(tau) for a in range(n) for b in range(a + 1, n)
               for c in range(b + 1, n)]
    m.R = pyo.Set(initialize=triples, dimen=4)
    m.tri_a = pyo.Constraint(
        m.R, rule=lambda m, a, b, c, t: m.p[a, b, t] + m.p[a, c, t] - m.p[b, c, t] <= 1
    )
    m.tri_b = pyo.Constraint(
        m.R, rule=lambda m, a, b, c, t: m.p[a, b, t] + m.p[b, c, t] - m.p[a, c, t] <= 1
    )
    m.tri_c = pyo.Constraint(
        m.R, rule=lambda m, a, b, c, t: m.p[a, c, t] + m.p[b, c, t] - m.p[a, b, t] <= 1
    )
    # (P5) if u and v both keep their cluster, they stay together or stay apart
    m.move_a = pyo.Constraint(
        m.P, m.T1, rule=lambda m, u, v, t: m.p[u, v, t] - m.p[u, v, t + 1] <= m.z[u, t] + m.z[v, t]
    )
    m.move_b = pyo.Constraint(
        m.P, m.T1, rule=lambda m, u, v, t: m.p[u, v, t + 1] - m.p[u, v, t] <= m.z[u, t] + m.z[v, t]
    )
    _order(m, n, l)
    m._warm_extra = _warm_pairs
    return m


def build_balanced(instance: Instance) -> Any:
    """"pairs" plus the lower side of the cluster sizes (ours).

    The other l - 1 clusters hold at most (l - 1) k vertices, so every non-empty cluster of a
    step has at least ``lo = n - (l - 1) k`` vertices (all k when n = l k). Added to "pairs":

    * (B1) sum_v x_{v,i,t} >= lo: the lower side of (4.2b);
    * (B2) sum_{u != v} q_{uv,i,t} >= (lo - 1) x_{v,i,t}: the lower side of (P3);
    * (B3) sum_{u != v} p_{uv,t} >= lo - 1: v has at least lo - 1 partners, whatever its label.

    All three are valid for every integer solution (so the optimum is unchanged) and void when
    lo <= 1. With n = l k they make (4.2b) and (P3) equalities: the LP can no longer leave
    non-edge pairs apart for free, and the triangle inequalities (P4) then bite.

    Parameters
    ----------
    instance : Instance
        A TABGP instance.

    Returns
    -------
    pyomo.environ.ConcreteModel
        The model (``warm_start`` and ``decode`` work as for "pairs").

    References
    ----------
    Ours, on the ILP of paper 004, section 4.2.
    """
    import pyomo.environ as pyo

    m = build_pairs(instance)
    m.name = f"tabgp_balanced_{instance.name}"
    n, l, k = instance.n, instance.l, instance.k
    lo = n - (l - 1) * k
    if lo <= 1:
        return m

    def pk(u: int, v: int) -> tuple[int, int]:
        return (u, v) if u < v else (v, u)

    m.least = pyo.Constraint(m.C, m.T, rule=lambda m, i, t: sum(m.x[v, i, t] for v in m.V) >= lo)
    m.least_q = pyo.Constraint(
        m.V, m.C, m.T, rule=lambda m, v, i, t: sum(m.q[(*pk(u, v), i, t)] for u in m.V if u != v)
        >= (lo - 1) * m.x[v, i, t]
    )
    m.least_p = pyo.Constraint(
        m.V, m.T, rule=lambda m, v, t: sum(m.p[(*pk(u, v), t)] for u in m.V if u != v) >= lo - 1
    )
    return m


def _size_balanced(instance: Instance) -> tuple[int, int]:
    n_vars, n_cons = _size_pairs(instance)
    n, l, tau = instance.n, instance.l, instance.tau
    if n - (l - 1) * instance.k > 1:
        n_cons += l * tau + n * l * tau + n * tau
    return n_vars, n_cons


def build_triples(instance: Instance) -> Any:
    """"balanced" with the triangle inequalities lifted by triple indicators (ours).

    A variable r_{abc,t} in [0, 1] for every vertex triple a < b < c and step ("all three in
    one cluster") replaces the triangle rows (P4) of "pairs":

    * (T1) r_{abc,t} <= p_{ab,t}, p_{ac,t}, p_{bc,t} and r_{abc,t} >= p_{ab,t} + p_{ac,t} - 1
      (all three rotations): McCormick for a product of pair indicators; (P4) follows, since
      p_{ab} + p_{ac} - 1 <= r_{abc} <= p_{bc};
    * (T2) (lo - 2) p_{vw,t} <= sum_{u not in {v, w}} r_{uvw,t} <= (k - 2) p_{vw,t}: if v and
      w share a cluster, it has between lo = n - (l - 1) k and k vertices, so between lo - 2
      and k - 2 others (the lower side only when lo > 2). This is (P3) multiplied by p_{vw}
      (reformulation-linearisation), the step that lifts the LP.

    Valid for every integer solution (r is then the product), so the optimum is the paper's.

    Parameters
    ----------
    instance : Instance
        A TABGP instance.

    Returns
    -------
    pyomo.environ.ConcreteModel
        The model (``warm_start`` and ``decode`` work as for "pairs"; r is set too).

    References
    ----------
    Ours, on the ILP of paper 004, section 4.2; the lifting is the reformulation-linearisation
    technique (Sherali and Adams, SIAM J. Discrete Math. 3(3), 1990).
    """
    import pyomo.environ as pyo

    m = build_balanced(instance)
    m.name = f"tabgp_triples_{instance.name}"
    n, l, k = instance.n, instance.l, instance.k
    lo = n - (l - 1) * k
    m.del_component(m.tri_a)
    m.del_component(m.tri_b)
    m.del_component(m.tri_c)
    m.r = pyo.Var(m.R, bounds=(0, 1))
    m.r_ab = pyo.Constraint(m.R, rule=lambda m, a, b, c, t: m.r[a, b, c, t] <= m.p[a, b, t])
    m.r_ac = pyo.Constraint(m.R, rule=lambda m, a, b, c, t: m.r[a, b, c, t] <= m.p[a, c, t])
    m.r_bc = pyo.Constraint(m.R, rule=lambda m, a, b, c, t: m.r[a, b, c, t] <= m.p[b, c, t])
    m.r_a = pyo.Constraint(
        m.R, rule=lambda m, a, b, c, t: m.r[a, b, c, t] >= m.p[a, b, t] + m.p[a, c, t] - 1)
    m.r_b = pyo.Constraint(
        m.R, rule=lambda m, a, b, c, t: m.r[a, b, c, t] >= m.p[a, b, t] + m.p[b, c, t] - 1)
    m.r_c = pyo.Constraint(
        m.R, rule=lambda m, a, b, c, t: m.r[a, b, c, t] >= m.p[a, c, t] + m.p[b, c, t] - 1)

    def third(m: Any, v: int, w: int, t: int) -> Any:
        return sum(m.r[(*sorted((u, v, w)), t)] for u in range(n) if u not in (v, w))

    m.PT = pyo.Set(initialize=[(u, v, t) for u, v in m.P for t in m.T], dimen=3)
    m.third_hi = pyo.Constraint(m.PT, rule=lambda m, v, w, t: third(m, v, w, t)
                                <= (k - 2) * m.p[v, w, t])
    if lo > 2:
        m.third_lo = pyo.Constraint(m.PT, rule=lambda m, v, w, t: third(m, v, w, t)
                                    >= (lo - 2) * m.p[v, w, t])
    m._warm_extra = _warm_triples
    return m


def _warm_triples(model: Any, instance: Instance, a: np.ndarray) -> None:
    _warm_pairs(model, instance, a)
    for (x, y, z, t), var in model.r.items():
        var.set_value(1.0 if a[t, x] == a[t, y] == a[t, z] else 0.0)


def _size_triples(instance: Instance) -> tuple[int, int]:
    n_vars, n_cons = _size_balanced(instance)
    n, l, tau = instance.n, instance.l, instance.tau
    triples, pairs = math.comb(n, 3) * tau, n * (n - 1) // 2 * tau
    lo = n - (l - 1) * instance.k
    return n_vars + triples, n_cons + 3 * triples + pairs * (2 if lo > 2 else 1)


def _warm_pairs(model: Any, instance: Instance, a: np.ndarray) -> None:
    _warm_stay(model, a)
    for (u, v, i, t), var in model.q.items():
        var.set_value(1.0 if a[t, u] == i and a[t, v] == i else 0.0)
    for (u, v, t), var in model.p.items():
        var.set_value(1.0 if a[t, u] == a[t, v] else 0.0)


def _size_pairs(instance: Instance) -> tuple[int, int]:
    n, l, tau = instance.n, instance.l, instance.tau
    m_tot = sum(len(e) for e in instance.edges)
    pairs, triples = n * (n - 1) // 2, math.comb(n, 3)
    n_vars = n * l * tau + m_tot + n * (tau - 1) + n * l * (tau - 1) + pairs * l * tau + pairs * tau
    n_cons = (n * tau + l * tau + 3 * pairs * l * tau + pairs * tau + m_tot
              + 2 * n * l * (tau - 1) + n * (tau - 1) + n * l * tau + 3 * triples * tau
              + 2 * pairs * (tau - 1) + (n * (l - 1) if l > 1 else 0))
    return n_vars, n_cons


def _subsets(n: int, k: int) -> list[tuple[int, ...]]:
    from itertools import combinations

    return [c for size in range(1, min(k, n) + 1) for c in combinations(range(n), size)]


#: :func:`_n_subsets` stops counting above this (any model that large is refused anyway)
_SUBSETS_CAP = 2**62


def _n_subsets(n: int, k: int) -> int:
    """Vertex sets of size 1..k: exact up to :data:`_SUBSETS_CAP`, else the first partial sum
    above it (so the size guard stays cheap for any n and k)."""
    total = 0
    for size in range(1, min(k, n) + 1):
        total += math.comb(n, size)
        if total > _SUBSETS_CAP:
            break
    return total


def build_clusters(instance: Instance) -> Any:
    """Extended formulation: one binary per (vertex set S with |S| <= k, label i, step t) (ours).

    ``"clusters"`` is an extended (set-partitioning) model: a binary c_{S,i,t} for every vertex set
    S with 1 <= |S| <= k, label i and step t, with (C1) sum_S c_{S,i,t} <= 1, (C2) x_{v,i,t} =
    sum_{S containing v} c_{S,i,t}, (C3) = (4.2a), (C4) y_{e,t} = 1 - sum_i sum_{S containing e}
    c_{S,i,t}, plus (S3), (S4), (S6). Its per-step LP is the strong set-partitioning relaxation, but
    it has sum_{s<=k} C(n, s) l tau columns (3,576 for n = 12, k = 3), so the size guard refuses it
    quickly as n and k grow.

    x, y, z, s are the strong model's, defined by S.

    Parameters
    ----------
    instance : Instance
        The TABGP instance (small: the size guard refuses large n and k).

    Returns
    -------
    pyomo.environ.ConcreteModel
        The paper's objective; the optimum of :func:`build_paper` (tests).

    References
    ----------
    Ours, on paper 004's ILP (section 4.2): the set-partitioning (extended) formulation of
    graph partitioning, as in column-generation approaches to clustering (A. Mehrotra and M. A.
    Trick, Cliques and clustering: a combinatorial approach, Operations Research Letters 22
    (1998) 1-12).
    """
    import pyomo.environ as pyo

    n, l, k = instance.n, instance.l, instance.k
    subsets = _subsets(n, k)
    m = _model_with_sets(instance, "clusters")
    m.S = pyo.RangeSet(0, len(subsets) - 1)
    # c_{S,i,t}: cluster i at step t is exactly the vertex set S (no S chosen: cluster empty)
    m.c = pyo.Var(m.S, m.C, m.T, domain=pyo.Binary)
    m.x = pyo.Var(m.V, m.C, m.T, bounds=(0, 1))
    m.y = pyo.Var(m.E, bounds=(0, 1))
    m.z = pyo.Var(m.V, m.T1, bounds=(0, 1))
    m.s = pyo.Var(m.V, m.C, m.T1, bounds=(0, 1))
    _objective(m, instance)
    containing: list[list[int]] = [[] for _ in range(n)]
    for q, sub in enumerate(subsets):
        for v in sub:
            containing[v].append(q)
    pair: dict[tuple[int, int], list[int]] = {}
    for q, sub in enumerate(subsets):
        for a in range(len(sub)):
            for b in range(a + 1, len(sub)):
                pair.setdefault((sub[a], sub[b]), []).append(q)
    # (C1) at most one vertex set per label and step
    m.one = pyo.Constraint(m.C, m.T, rule=lambda m, i, t: sum(m.c[q, i, t] for q in m.S) <= 1)
    # (C2) x_{v,i,t} = sum_{S containing v} c_{S,i,t}; (C3) sum_i x_{v,i,t} = 1
    m.link = pyo.Constraint(
        m.V, m.C, m.T,
        rule=lambda m, v, i, t: m.x[v, i, t] == sum(m.c[q, i, t] for q in containing[v]),
    )
    m.assign = pyo.Constraint(m.V, m.T, rule=lambda m, v, t: sum(m.x[v, i, t] for i in m.C) == 1)

    def cut(m, t, j):
        u, v = instance.edges[t][j]
        qs = pair.get((min(u, v), max(u, v)), [])
        return m.y[t, j] + sum(m.c[q, i, t] for q in qs for i in m.C) == 1

    # (C4) y_{e,t} = 1 - sum_i sum_{S containing both ends of e} c_{S,i,t}
    m.cut = pyo.Constraint(m.E, rule=cut)
    _migration(m)
    _order(m, n, l)
    index = {sub: q for q, sub in enumerate(subsets)}
    m._warm_extra = lambda model, inst, a: _warm_clusters(model, inst, a, index)
    return m


def _warm_clusters(model: Any, instance: Instance, a: np.ndarray,
                   index: dict[tuple[int, ...], int]) -> None:
    _warm_stay(model, a)
    chosen = set()
    for t in range(instance.tau):
        for i in range(instance.l):
            members = tuple(int(v) for v in np.flatnonzero(a[t] == i))
            if members:
                chosen.add((index[members], i, t))
    for key, var in model.c.items():
        var.set_value(1.0 if key in chosen else 0.0)


def _size_clusters(instance: Instance) -> tuple[int, int]:
    n, l, tau = instance.n, instance.l, instance.tau
    m_tot = sum(len(e) for e in instance.edges)
    n_sets = _n_subsets(n, instance.k)
    n_vars = n_sets * l * tau + n * l * tau + m_tot + n * (tau - 1) + n * l * (tau - 1)
    n_cons = (l * tau + n * l * tau + n * tau + m_tot + 2 * n * l * (tau - 1) + n * (tau - 1)
              + (n * (l - 1) if l > 1 else 0))
    return n_vars, n_cons


#: the exact models (module docstring); all share x, y, z, so :func:`decode` and
#: :func:`warm_start` serve every one
FORMULATIONS: dict[str, Formulation] = {
    "paper": Formulation(build_paper, _size_paper,
                         "the ILP of section 4.2 as written (cut weighted)"),
    "strong": Formulation(build_strong, _size_strong,
                          "section 4.2 with linked w/s variables, degree cuts, label symmetry"),
    "clusters": Formulation(build_clusters, _size_clusters,
                            "set partitioning: one column per vertex set of size <= k, label "
                            "and step"),
    "pairs": Formulation(build_pairs, _size_pairs,
                         "strong plus same-cluster pair indicators, triangle and migration "
                         "links (fastest)"),
    "balanced": Formulation(build_balanced, _size_balanced,
                            "pairs plus the least cluster size n - (l-1)k on x, q and p"),
    "triples": Formulation(build_triples, _size_triples,
                           "balanced with triple indicators lifting the triangle "
                           "inequalities (RLT)"),
}


def build(instance: Instance, formulation: str = "paper") -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (see :data:`FORMULATIONS`)."""
    return FORMULATIONS[formulation].build(instance)


def estimate_size(instance: Instance, formulation: str = "paper") -> tuple[int, int]:
    """(variables, constraints) of the model, computed without building it."""
    return FORMULATIONS[formulation].estimate_size(instance)


def decode(model: Any, instance: Instance) -> Solution:
    """The cluster of each vertex and step from the x variables: the one cluster i with
    x[v, i, t] = 1 (above 0.5). A vertex in no cluster or in two at a step breaks the
    assignment rows (sum_i x[v, i, t] = 1) as written: it decodes to the label -1, which the
    evaluator reports infeasible (never an argmax that would hide it)."""
    x = np.zeros((instance.tau, instance.n, instance.l), dtype=bool)
    for (v, i, t), var in model.x.items():
        x[t, v, i] = (var.value or 0.0) > 0.5
    one = x.sum(axis=2) == 1
    return Solution(assignment=np.where(one, x.argmax(axis=2), -1).tolist())


def canonical_labels(assign: np.ndarray, l: int) -> np.ndarray:
    """The same solution with labels permuted jointly over all steps so that the clusters of
    step 0 are ordered by their smallest vertex, empty ones last (constraint (S6)).

    Relabelling every step with one permutation changes neither cut nor migration cost.
    """
    assign = np.asarray(assign, dtype=np.int64)
    first = [(int(np.flatnonzero(assign[0] == i)[0]) if (assign[0] == i).any() else
              assign.shape[1] + i) for i in range(l)]
    perm = np.empty(l, dtype=np.int64)
    perm[np.argsort(first, kind="stable")] = np.arange(l)
    return perm[assign]


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    """Set every variable of a model (x, y, z and the formulation's extras) from ``solution``.

    Labels are first put in the canonical order of :func:`canonical_labels` (the same cost), so
    the start also satisfies the symmetry-breaking constraints of "strong", "pairs", "clusters".

    Raises
    ------
    InstanceError
        If ``solution`` is not feasible for ``instance`` (shape, labels or capacity).
    """
    ev = evaluate(instance, solution)
    if not ev.feasible:
        from dmlopt.errors import InstanceError

        raise InstanceError("warm_start", ev.violations[0], "is not a feasible start")
    a = canonical_labels(np.asarray(solution.assignment, dtype=np.int64), instance.l)
    for (v, i, t), var in model.x.items():
        var.set_value(1.0 if a[t, v] == i else 0.0)
    for (t, j), var in model.y.items():
        u, v = instance.edges[t][j]
        var.set_value(1.0 if a[t, u] != a[t, v] else 0.0)
    for (v, t), var in model.z.items():
        var.set_value(1.0 if a[t, v] != a[t + 1, v] else 0.0)
    extra = getattr(model, "_warm_extra", None)
    if extra is not None:
        extra(model, instance, a)
