"""Temporal (almost) balanced graph partitioning, TABGP (paper 004: Figiel, Nichterlein, Schmid).

Problem (section 1). A temporal graph G = (V, E_1, ..., E_tau) on n vertices, numbers k, l and
alpha >= 0. Find tau partitions V_t = V_t^1 u ... u V_t^l with |V_t^i| <= k minimising

    s = sum_t |{uv in E_t : u, v in different clusters}|
        + alpha sum_{t<tau} sum_i |V_t^i \\ V_{t+1}^i|

The migration term counts the vertices whose cluster changes between consecutive steps.

Choices and deviations
----------------------
* Weights. The paper's ML trace is edge-weighted (section 4.5: "we only need to replace counting of
  edges with summing of edge weights"); an instance may carry positive ``weights`` per edge and the
  cut term then sums weights. Without weights every edge weighs 1, as in the definition above.
* Vertices are 0..n-1; clusters 0..l-1. An edge may appear once per step (a duplicate is an
  input error, not silently merged); edges are undirected, so (u, v) and (v, u) are duplicates.
* Clusters are labelled: a solution's clusters at step t and t+1 with the same index are "the same
  cluster" for the migration cost, exactly as the paper's sum over i of |V_t^i \\ V_{t+1}^i|.

Exact formulations
------------------
All formulations share the paper's decision variables x_{v,i,t} (binary: v in cluster i at step
t), y_{e,t} (edge e of E_t cut) and z_{v,t} (v changes cluster between t and t+1), and the
paper's objective sum_t sum_e w_e y_{e,t} + alpha sum_t sum_v z_{v,t}, so ``decode`` and
``warm_start`` work on every model (extra variables are set by the ``_warm_extra`` hook). Each is
proven by tests to reach the brute-force optimum and the same optimum as the others.

``"paper"`` is the ILP of section 4.2 as written (the paper does not number its constraints; we
call them 4.2a-d in order of appearance): (4.2a) sum_i x_{v,i,t} = 1, (4.2b)
sum_v x_{v,i,t} <= k, (4.2c) x_{v,i,t} - x_{u,i,t} <= y_{uv,t} and x_{u,i,t} - x_{v,i,t} <=
y_{uv,t} per edge and cluster, (4.2d) x_{v,i,t} - x_{v,i,t+1} <= z_{v,t}; x, y, z binary. Checked
against the paper line by line; the one change is the weighted cut (above). (4.2d) is one-sided
but exact: a vertex leaving cluster i has x_{v,i,t} = 1, x_{v,i,t+1} = 0. As the paper notes, its
LP relaxation is 0 (x = 1/l everywhere), so HiGHS stalls on n = 12, tau = 3.

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
  what lifts the LP bound above 0 (summed over i: at least deg_t(v) - (k - 1) edges at v are cut);
* (S6) symmetry breaking: relabelling the clusters with one permutation applied to ALL steps
  keeps cut and migration cost (labels matter only between consecutive steps), so we may demand
  that at step 0 the clusters are ordered by their smallest vertex, empty clusters last:
  x_{v,i,0} <= sum_{u<v} x_{u,i-1,0} for i >= 1 (this forces x_{v,i,0} = 0 for v < i). Every
  solution has exactly one such relabelling (:func:`canonical_labels`, which ``warm_start``
  applies so a heuristic start satisfies (S6)). Labels are NOT interchangeable per step, so
  nothing is imposed at later steps.

``"pairs"`` keeps (4.2a), (4.2b), (S3), (S4), (S6) of "strong", replaces its edge variables w by
variables q for every vertex pair (so the same-cluster indicator is defined for non-edges too)
and adds a label-free layer that closes most of the remaining gap (LP bound 36.7 against the
optimum 37 on an n = 12, tau = 3, p = 0.3 instance where "strong" gives 29.4 and "clusters" 32.7):

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

``"clusters"`` is an extended (set-partitioning) model: a binary c_{S,i,t} for every vertex set
S with 1 <= |S| <= k, label i and step t, with (C1) sum_S c_{S,i,t} <= 1, (C2) x_{v,i,t} =
sum_{S containing v} c_{S,i,t}, (C3) = (4.2a), (C4) y_{e,t} = 1 - sum_i sum_{S containing e}
c_{S,i,t}, plus (S3), (S4), (S6). Its per-step LP is the strong set-partitioning relaxation, but
it has sum_{s<=k} C(n, s) l tau columns (3,576 for n = 12, k = 3), so the size guard refuses it
quickly as n and k grow.

``"balanced"`` is "pairs" plus the least cluster size lo = n - (l - 1) k (the other clusters
hold at most (l - 1) k vertices): (B1) sum_v x_{v,i,t} >= lo, (B2) sum_{u != v} q_{uv,i,t} >=
(lo - 1) x_{v,i,t}, (B3) sum_{u != v} p_{uv,t} >= lo - 1 (nothing is added when lo <= 1).

``"triples"`` is "balanced" with a variable r_{abc,t} per vertex triple ("all three together")
in place of the triangle rows: (T1) r <= each of the three p, r >= p_ab + p_ac - 1 (all three
rotations, which imply (P4)), (T2) (lo - 2) p_{vw,t} <= sum_u r_{uvw,t} <= (k - 2) p_{vw,t}
(the cluster of v and w holds lo - 2 to k - 2 others; the lower side only when lo > 2).

:mod:`dmlopt.models.tabgp.cpsat` solves the same problem with OR-Tools CP-SAT when ``ortools``
is installed (an optional model, not a formulation: it is no Pyomo model).

Measured (``python -m dmlopt.benchmarks.analysis.tabgp_exact``, HiGHS, one thread) "pairs" is
the fastest; see docs/tabgp.md for the figures.

Generators
----------
``"er"`` is the paper's synthetic workload (section 4.1): one independent Erdos-Renyi G(n, p) per
step, k = ceil(a * n / l) (augmentation a, 1 in the paper's synthetic runs), alpha = 3.
``"drift"`` is a scale generator of ours: planted communities of about n/l vertices whose members
drift between communities over time, with most edges inside communities.
"""

from __future__ import annotations

from dmlopt.models.tabgp.bounds import BOUNDS
from dmlopt.models.tabgp.constants import NAME, PAPER, SENSE, TITLE
from dmlopt.models.tabgp.formulations import (
    FORMULATIONS,
    build,
    build_balanced,
    build_clusters,
    build_pairs,
    build_paper,
    build_strong,
    build_triples,
    canonical_labels,
    decode,
    estimate_size,
    warm_start,
)
from dmlopt.models.tabgp.generators import (
    EXAMPLE,
    GENERATORS,
    DriftParams,
    ErParams,
    estimate_drift,
    estimate_er,
    generate_drift,
    generate_er,
)
from dmlopt.models.tabgp.instance import Instance, Solution, cost_parts, evaluate

#: the formulation dmlopt.solve uses when none is named, the fastest proven equal to the
#: paper's (pairs: 0.39 s against paper 15.8 s on tabgp/er12-p03-tau1-s0, equal optima in
#: tests/test_tabgp_model.py)
DEFAULT_FORMULATION = "pairs"

__all__ = [
    'DEFAULT_FORMULATION', 'NAME', 'TITLE', 'PAPER', 'SENSE', 'Instance', 'Solution',
    'cost_parts', 'evaluate', 'build_paper', 'build_strong', 'build_pairs', 'build_clusters',
    'build_balanced', 'build_triples',
    'FORMULATIONS', 'BOUNDS', 'build', 'estimate_size', 'decode', 'canonical_labels',
    'warm_start', 'generate_er', 'generate_drift', 'ErParams', 'DriftParams', 'estimate_er',
    'estimate_drift', 'GENERATORS', 'EXAMPLE',
]
