"""TAP (paper 000): the MINLP (8)-(12) (paper), its RLT linearisation and the class formulation."""

from __future__ import annotations

from typing import Any

import numpy as np

from dmlopt.contract import Formulation
from dmlopt.models.tap.instance import Instance, Solution

# --------------------------------------------------------------------------------------------
# exact formulations

#: SCIP options of the formulations on which SCIP 10.0's symmetry handling crashed the process
#: (a segmentation fault on a 4-module fat-tree instance, in its constraint-based symmetry
#: handling, bit 1 of ``misc/usesymmetry``): symmetry handled by orbital reduction only (2)
SCIP_SAFE = {"misc/usesymmetry": 2}


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
    """The MINLP (8)-(12) as written: binary X and the quadratic objective (8).

    The objective sums over all ordered pairs (terms with ``M_ii' D_jj' = 0`` omitted). A
    nonconvex MIQP: SCIP solves it; HiGHS cannot, and ``solve(..., "highs",
    formulation="paper")`` is refused up front (the :class:`~dmlopt.contract.Formulation` names
    SCIP as its only solver). (10), m <= n K, is a condition on the data, checked when the
    instance is read.

    Parameters
    ----------
    instance : Instance
        The TAP instance.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Variables ``x[i, j]`` (9), objective ``obj`` (8), constraints ``capacity`` (11) and
        ``assign`` (12).

    References
    ----------
    Paper 000 (An, Wu, Huang), section IV-A, equations (8)-(12).
    """
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
    """The first-level reformulation-linearization (RLT1) of (8)-(12), on the pairs with traffic.

    The standard QAP linearisation with the strongest LP bound among the classic ones (it
    dominates Lawler, Kaufman-Broeckx and Frieze-Yadegar): ``y[p, j, j'] = X_ij X_i'j'`` for
    every module pair ``p = {i, i'}`` that exchanges traffic, linked by multiplying (12) for i'
    by X_ij (and (12) for i by X_i'j'). Pairs without traffic get no variables. With K = 1 the
    same-VM products are 0 by (11) and omitted; with K > 1 they stay, and (11) multiplied by
    X_ij is added.

    Parameters
    ----------
    instance : Instance
        The TAP instance.
    symmetry : bool, optional
        Add lexicographic symmetry breaking among identical modules (``VM index of i <= VM
        index of i'`` for consecutive members of a class of :func:`module_classes`); default
        False. :func:`build_class` uses it when K > 1.

    Returns
    -------
    pyomo.environ.ConcreteModel
        A MILP with the optimum of (8)-(12); ``x[i, j]`` as in :func:`build_paper`.

    References
    ----------
    W. P. Adams and T. A. Johnson, Improved linear programming-based lower bounds for the
    quadratic assignment problem, DIMACS Series 16 (1994) 43-75; applied to paper 000's
    (8)-(12) (ours: the capacity products for K > 1, no variables for pairs without traffic).
    """
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
    """RLT after removing module symmetry: one binary per class of identical modules and VM.

    Modules with identical traffic (all workers of an all-reduce, the workers of a parameter
    server: :func:`module_classes`) are interchangeable. With K = 1 they are aggregated into
    classes c of size s_c with one binary ``u[c, j]`` per VM (VM j holds a module of class c),
    and the products ``u[c, j] u[c', j']`` are linearized as in :func:`build_rlt` (``sum_j' y =
    s_c' u[c, j]``, plus ``y <= u`` where a class has more than one module, and the McCormick
    cuts ``y >= u + u' - 1``); the 8-module paper instances shrink from 8 x n binaries to 1-2 x
    n. With no identical modules it is ``"rlt"``; with K > 1 it is ``build_rlt(instance,
    symmetry=True)``.

    Parameters
    ----------
    instance : Instance
        The TAP instance.

    Returns
    -------
    pyomo.environ.ConcreteModel
        A MILP with the optimum of (8)-(12) (tests, against brute force); :func:`decode` turns
        its classes back into one VM per module.

    References
    ----------
    Ours, on the RLT1 of W. P. Adams and T. A. Johnson (DIMACS Series 16, 1994) and paper 000's
    (8)-(12): the aggregation of interchangeable modules into classes.
    """
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


#: the exact models (module docstring); "paper" is a nonconvex MIQP (binary products in the
#: objective): SCIP, Gurobi, CPLEX, Xpress and COPT take it, HiGHS does not (``dmlopt.solve``
#: refuses it up front)
FORMULATIONS: dict[str, Formulation] = {
    "paper": Formulation(build_paper, _size_paper,
                         "the MINLP (8)-(12) as written: quadratic objective (not HiGHS)",
                         solvers=("scip", "gurobi", "cplex", "xpress", "copt"),
                         # SCIP 10.0 crashes in its symmetry code on some instances and, with
                         # restarts, reported a point infeasible in the original problem as
                         # optimal (module docstring of dmlopt.models.tap, "SCIP")
                         solver_options={"scip": SCIP_SAFE | {"presolving/maxrestarts": 0}}),
    "rlt": Formulation(build_rlt, _size_rlt,
                       "first-level reformulation-linearization (Adams and Johnson) of (8)",
                       solver_options={"scip": SCIP_SAFE}),
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
    """The VM of each module: the one j with X_ij = 1 (above 0.5) or, for ``"class"``, the
    VMs j with u[c, j] = 1 given to the members of class c in order.

    A module on no VM or on two (row (12), sum_j X_ij = 1, broken), or a class on as many VMs as
    it has not members (sum_j u[c, j] = s_c broken), decodes to -1 for those modules, which the
    evaluator reports infeasible: the rows are read as written, never by an argmax.
    """
    if hasattr(model, "u"):
        out = [-1] * instance.m
        for c, members in enumerate(model._classes):
            vms = [j for j in range(instance.n) if (model.u[c, j].value or 0.0) > 0.5]
            if len(vms) == len(members):
                for i, j in zip(members, vms, strict=True):
                    out[i] = j
        return Solution(assignment=out)
    x = np.zeros((instance.m, instance.n), dtype=bool)
    for (i, j), var in model.x.items():
        x[i, j] = (var.value or 0.0) > 0.5
    one = x.sum(axis=1) == 1
    return Solution(assignment=np.where(one, x.argmax(axis=1), -1).tolist())


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
