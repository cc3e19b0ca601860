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

__all__ = [
    'DEFAULT_FORMULATION',
    'NAME', 'TITLE', 'PAPER', 'SENSE', 'MAX_MODULES', 'MAX_VMS', 'MAX_UNDERLAY_NODES',
    'MAX_HOP_WORK', 'Node', 'Underlay', 'Instance', 'Solution', 'cost', 'evaluate',
    'traffic_pairs', 'module_classes', 'build_paper', 'build_rlt', 'build_class',
    'FORMULATIONS', 'build', 'estimate_size', 'decode', 'warm_start', 'OVERLAYS',
    'overlay_matrix', 'generate_dc', 'generate_random', 'generate_qaplib', 'DcParams',
    'RandomParams', 'QaplibParams', 'estimate_dc', 'estimate_random', 'estimate_qaplib',
    'GENERATORS', 'EXAMPLE', 'BOUNDS',
]
