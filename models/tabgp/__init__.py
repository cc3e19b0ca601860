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

``"paper"`` (:func:`build_paper`) is the ILP of section 4.2 as written; ``"strong"``
(:func:`build_strong`), ``"pairs"`` (:func:`build_pairs`) and ``"clusters"``
(:func:`build_clusters`) are ours. Each function's docstring gives its constraints (the paper's
are called 4.2a-d in order of appearance, ours S1-S6, P1-P5, C1-C4).

``"balanced"`` is "pairs" plus the least cluster size lo = n - (l - 1) k (the other clusters
hold at most (l - 1) k vertices): (B1) sum_v x_{v,i,t} >= lo, (B2) sum_{u != v} q_{uv,i,t} >=
(lo - 1) x_{v,i,t}, (B3) sum_{u != v} p_{uv,t} >= lo - 1 (nothing is added when lo <= 1).

``"triples"`` is "balanced" with a variable r_{abc,t} per vertex triple ("all three together")
in place of the triangle rows: (T1) r <= each of the three p, r >= p_ab + p_ac - 1 (all three
rotations, which imply (P4)), (T2) (lo - 2) p_{vw,t} <= sum_u r_{uvw,t} <= (k - 2) p_{vw,t}
(the cluster of v and w holds lo - 2 to k - 2 others; the lower side only when lo > 2).

Measured (``python -m benchmarks.studies.tabgp.exact``, HiGHS, one thread) "pairs" is
the fastest; see docs/tabgp.md for the figures.

Generators
----------
``"er"`` is the paper's synthetic workload (section 4.1): one independent Erdos-Renyi G(n, p) per
step, k = ceil(a * n / l) (augmentation a, 1 in the paper's synthetic runs), alpha = 3.
``"drift"`` is a scale generator of ours: planted communities of about n/l vertices whose members
drift between communities over time, with most edges inside communities.

Examples
--------
A random temporal graph (6 vertices, 2 steps, 2 clusters) partitioned by Dense; the objective is
cut edges plus alpha times migrations:

>>> import dmlopt
>>> inst = dmlopt.generate("tabgp", {"generator": "er", "n": 6, "p": 0.5, "tau": 2, "l": 2}, seed=0)
>>> result = dmlopt.heuristic(inst, "dense", seed=0)
>>> result.status, round(result.objective, 3), dmlopt.evaluate(inst, result.solution).feasible
('feasible', 6.0, True)
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
    planted_groups,
)
from dmlopt.models.tabgp.instance import Instance, Solution, cost_parts, evaluate

#: the formulation dmlopt.solve uses when none is named, the fastest proven equal to the
#: paper's (pairs: 0.39 s against paper 15.8 s on tabgp/er12-p03-tau1-s0, equal optima in
#: tests/tabgp/test_model.py)
DEFAULT_FORMULATION = "pairs"
#: the bound to use at the papers' sizes (docs/tabgp.md; enum and the MIP stop at small n)
RECOMMENDED_BOUND = "spectral"

__all__ = [
    'DEFAULT_FORMULATION', 'RECOMMENDED_BOUND', 'NAME', 'TITLE', 'PAPER', 'SENSE', 'Instance',
    'Solution',
    'cost_parts', 'evaluate', 'build_paper', 'build_strong', 'build_pairs', 'build_clusters',
    'build_balanced', 'build_triples',
    'FORMULATIONS', 'BOUNDS', 'build', 'estimate_size', 'decode', 'canonical_labels',
    'warm_start', 'generate_er', 'generate_drift', 'ErParams', 'DriftParams', 'estimate_er',
    'estimate_drift', 'planted_groups', 'GENERATORS', 'EXAMPLE',
]
