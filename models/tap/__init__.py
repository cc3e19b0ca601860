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

Exact formulations and generators
---------------------------------
:data:`FORMULATIONS`: ``"paper"`` (:func:`build_paper`, (8)-(12) as written, SCIP only),
``"rlt"`` (:func:`build_rlt`, Adams-Johnson linearisation) and ``"class"`` (:func:`build_class`,
RLT over classes of interchangeable modules); all reach the same optimum (tests, against brute
force). :data:`GENERATORS`: ``"dc"`` (:func:`generate_dc`, section V-C), ``"qaplib"``
(:func:`generate_qaplib`), ``"random"`` (:func:`generate_random`, tests). :data:`BOUNDS`: see
:mod:`dmlopt.models.tap.bounds`.

SCIP: ``paper`` and ``rlt`` run SCIP with symmetry handled by orbital reduction only
(``misc/usesymmetry`` 2 instead of 7), and ``paper`` also without restarts
(``presolving/maxrestarts`` 0), by default (the user's own ``solver_options`` win). With SCIP
10.0's defaults, on small random instances of the ``dc`` generator, its constraint-based
symmetry handling ended the process with a segmentation fault (fat-tree, 4 modules, 6 VMs,
K = 1; both formulations; also with 1 or 3), and a restart after presolving returned a point
infeasible in the original MINLP as optimal at objective 2, whose optimum is 4 (fat-tree, 3
modules, ring, 6 VMs, K = 2); ``dmlopt.solve`` refused that answer as an objective mismatch.
On the DCell all-reduce instance of the formulations table (8 modules, seed 0, 300 s of wall
time at load 3-4) ``paper`` reached the same dual bound with these settings as with SCIP's
defaults (56 and 55, optimum 76, 159 and 158 CPU s); with symmetry handling off altogether
it stayed at 0.

Examples
--------
A random instance with 4 modules and 4 VMs, allocated by Average-Based Matching and scored by
the evaluator (:func:`evaluate`, objective (8)):

>>> import dmlopt
>>> inst = dmlopt.generate("tap", {"generator": "random", "m": 4, "n": 4}, seed=0)
>>> result = dmlopt.heuristic(inst, "abm", seed=0)
>>> result.status, round(result.objective, 3), dmlopt.evaluate(inst, result.solution).feasible
('feasible', 124.0, True)
"""

from __future__ import annotations

from dmlopt.models.tap.bounds import BOUNDS
from dmlopt.models.tap.constants import (
    MAX_HOP_WORK,
    MAX_MODULES,
    MAX_UNDERLAY_NODES,
    MAX_VMS,
    NAME,
    PAPER,
    SENSE,
    TITLE,
    Node,
)
from dmlopt.models.tap.formulations import (
    FORMULATIONS,
    build,
    build_class,
    build_paper,
    build_rlt,
    decode,
    estimate_size,
    module_classes,
    traffic_pairs,
    warm_start,
)
from dmlopt.models.tap.generators import (
    EXAMPLE,
    GENERATORS,
    OVERLAYS,
    DcParams,
    QaplibParams,
    RandomParams,
    estimate_dc,
    estimate_qaplib,
    estimate_random,
    generate_dc,
    generate_qaplib,
    generate_random,
    overlay_matrix,
)
from dmlopt.models.tap.instance import Instance, Solution, Underlay, cost, evaluate

#: the formulation dmlopt.solve uses when none is named, the fastest proven equal to the
#: paper's (class: 0.3-6 s to the optimum on the shipped Fig. 11 DCell instances where
#: rlt stops unproven at 60 s; equal optima in tests/tap/test_tap.py)
DEFAULT_FORMULATION = "class"
#: the bound to use (docs/tap.md: the strongest at the papers' sizes)
RECOMMENDED_BOUND = "hahn-grant"

__all__ = [
    'DEFAULT_FORMULATION', 'RECOMMENDED_BOUND',
    'NAME', 'TITLE', 'PAPER', 'SENSE', 'MAX_MODULES', 'MAX_VMS', 'MAX_UNDERLAY_NODES',
    'MAX_HOP_WORK', 'Node', 'Underlay', 'Instance', 'Solution', 'cost', 'evaluate',
    'traffic_pairs', 'module_classes', 'build_paper', 'build_rlt', 'build_class',
    'FORMULATIONS', 'build', 'estimate_size', 'decode', 'warm_start', 'OVERLAYS',
    'overlay_matrix', 'generate_dc', 'generate_random', 'generate_qaplib', 'DcParams',
    'RandomParams', 'QaplibParams', 'estimate_dc', 'estimate_random', 'estimate_qaplib',
    'GENERATORS', 'EXAMPLE', 'BOUNDS',
]
