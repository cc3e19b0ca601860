"""RAR (paper 003), MinCU: the fixed-capacity feasibility check as cumulative scheduling (CP-SAT).

With each node's activated CUs bounded by a capacity vector A* and the deployed set D* fixed,
what is left of ``aggregated`` is a scheduling problem: per deployed request j one computing
node set S (N_j nodes, the source among them, all on one candidate ring of j) and one mode
(N_j, k, d) of :func:`dmlopt.models.rar.instance.modes`, and one start s in [t_a, t_d - d + 1];
per node n a cumulative resource of capacity A*_n over the slots, used by k CUs during
[s, s + d - 1] by every request computing on n. :func:`check` states it for OR-Tools CP-SAT:

* Booleans x_{j,S} (one node set per deployed request), m_{j,i} (one mode, its N equal to
  |S|), u_{j,n} = [n in the chosen set] and v_{j,n,i} = u_{j,n} and m_{j,i};
* one start variable s_j per request, d_i <= t_d - s_j + 1 when m_{j,i};
* per (j, n, i) an optional interval of size d_i at s_j present iff v_{j,n,i}, and per node
  one cumulative of those intervals with demands k_i and capacity A*_n;
* optionally (redundant) per node n and slot interval [t1, t2]: sum k_i o_{j,i}(t1, t2)
  v_{j,n,i} <= (t2 - t1 + 1) A_n, with o the fewest slots of [t1, t2] a window of d_i slots
  inside [t_a, t_d] covers (the start-free relaxation's rows).

Modes needing more CUs than A*_n on a node, and node sets with such a node for every mode, are
left out before the model is built. Wavelengths are not modelled: the check refuses instances
where they can bind (:func:`dmlopt.models.rar.formulations._wavelengths_never_bind` false;
:func:`applicable`), and the caller uses the HiGHS check there. Its schedules are the schedules
of ``aggregated`` with A <= A* and eta fixed to D*; "infeasible" is CP-SAT's INFEASIBLE status
(a proof), UNKNOWN decides nothing.

:func:`region_check` asks the same over a box of capacity vectors with a budget on their sum
(A_n variables, A_n <= upper_n, sum A_n <= total), optionally with each node's bound as an
assumption literal so that an INFEASIBLE answer names the nodes whose bounds the proof used
(CP-SAT's sufficient assumptions).

:func:`solve_mincu` states the whole MinCU problem the same way (deployments and capacities as
variables, eq. (4) as objective scaled to integers), with an optional lower bound on the
objective and a schedule as hint.

``ortools`` is not a dependency of dmlopt: it is imported when a function here runs, and
:func:`available` tells whether it can be.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from dmlopt.errors import InstanceError, SolverError
from dmlopt.models.rar.instance import Instance, modes

#: outcomes of one check (the same strings as :mod:`benchmarks.studies.rar.benders`)
FEASIBLE, INFEASIBLE, UNDECIDED = "feasible", "infeasible", "undecided"


def available() -> bool:
    """True if ``ortools`` (CP-SAT) can be imported."""
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except ImportError:
        return False
    return True


def applicable(instance: Instance) -> bool:
    """True if the CP-SAT models here are exact for ``instance``: scheme MinCU and wavelengths
    that cannot bind (|R| <= rho min_l |W_l|)."""
    from dmlopt.models.rar.formulations import _wavelengths_never_bind

    return instance.scheme == "MinCU" and _wavelengths_never_bind(instance)


def node_sets(instance: Instance, j: int) -> list[tuple[int, ...]]:
    """The computing-node sets of request j: N_j nodes (an allowed count) with the source, all
    on one candidate ring of j (eqs. (17), (21)-(24)); sorted tuples, sorted."""
    r = instance.requests[j]
    out: set[tuple[int, ...]] = set()
    for k in instance.candidate_rings(j):
        others = [v for v in instance.rings[k].nodes if v != r.source]
        for nn in r.node_counts:
            for rest in itertools.combinations(others, nn - 1):
                out.add(tuple(sorted((r.source, *rest))))
    return sorted(out)


@dataclass
class _Request:
    """The CP-SAT variables of one request."""

    sets: list[tuple[int, ...]]
    modes: list[tuple[int, int, int]]
    x: list[Any]
    m: list[Any]
    start: Any
    eta: Any = None


@dataclass
class _Model:
    """A CP-SAT model of :func:`check` or :func:`solve_mincu` and its variables."""

    model: Any
    requests: dict[int, _Request] = field(default_factory=dict)
    A: list[Any] = field(default_factory=list)
    impossible: bool = False  # a deployed request has no node set within the capacities


def _build(instance: Instance, capacity: list[int], deployed: set[int] | None,
           energy: bool = True, total: int | None = None) -> _Model:
    """The model: ``deployed`` fixed (None: eta variables) and A_n <= capacity[n] (A_n a
    variable when ``deployed`` is None or ``total`` is given, else the constant
    capacity[n]); with ``total`` also sum_n A_n <= total; with ``energy`` the redundant rows
    per node and slot interval (module docstring)."""
    from ortools.sat.python import cp_model

    md = cp_model.CpModel()
    out = _Model(md)
    k_max = max(nd.cus for nd in instance.nodes)
    free = deployed is None
    out.A = ([md.NewIntVar(0, int(c), f"A{n}") for n, c in enumerate(capacity)]
             if free or total is not None else [int(c) for c in capacity])
    if total is not None:
        md.Add(sum(out.A) <= int(total))
    per_node: dict[int, tuple[list[Any], list[int], list[Any]]] = {
        n: ([], [], []) for n in range(len(instance.nodes))}
    for j, r in enumerate(instance.requests):
        if not free and j not in deployed:
            continue
        mds = [md_ for md_ in modes(instance, j, k_max) if md_[2] <= r.deadline - r.arrival + 1]
        sets = [s for s in node_sets(instance, j)
                if any(a == len(s) and all(capacity[n] >= k for n in s) for a, k, _ in mds)]
        mds = [md_ for md_ in mds if any(len(s) == md_[0] for s in sets)]
        eta = md.NewBoolVar(f"eta{j}") if free else 1
        if not sets:  # no node set fits: the request cannot be deployed
            if free:
                md.Add(eta == 0)
            else:
                out.impossible = True
            continue
        xs = [md.NewBoolVar(f"x{j}_{i}") for i in range(len(sets))]
        ms = [md.NewBoolVar(f"m{j}_{i}") for i in range(len(mds))]
        md.Add(sum(xs) == eta)
        for nn in {a for a, _, _ in mds}:
            md.Add(sum(v for v, (a, _, _) in zip(ms, mds, strict=True) if a == nn)
                   == sum(x for x, s in zip(xs, sets, strict=True) if len(s) == nn))
        start = md.NewIntVar(r.arrival, r.deadline, f"s{j}")
        out.requests[j] = _Request(sets, mds, xs, ms, start, eta if free else None)
        for v, (_, _, d) in zip(ms, mds, strict=True):
            md.Add(start + d - 1 <= r.deadline).OnlyEnforceIf(v)
        for n in sorted({v for s in sets for v in s}):
            u = md.NewBoolVar(f"u{j}_{n}")
            md.Add(u == sum(x for x, s in zip(xs, sets, strict=True) if n in s))
            for v, (_, k, d) in zip(ms, mds, strict=True):
                if k > capacity[n]:
                    md.AddBoolOr([v.Not(), u.Not()])
                    continue
                z = md.NewBoolVar(f"v{j}_{n}_{k}_{d}")
                md.AddImplication(z, u)
                md.AddImplication(z, v)
                md.AddBoolOr([u.Not(), v.Not(), z])
                per_node[n][0].append(md.NewOptionalFixedSizeIntervalVar(start, d, z, ""))
                per_node[n][1].append(k)
                per_node[n][2].append((z, k, d, r.arrival, r.deadline))
    T = instance.slots
    for n, (ivs, ks, items) in per_node.items():
        if not ivs:
            continue
        md.AddCumulative(ivs, ks, out.A[n])
        if not energy:
            continue
        for t1 in range(1, T + 1):
            for t2 in range(t1, T + 1):
                terms = [(z, k * least_overlap(a, b, d, t1, t2)) for z, k, d, a, b in items]
                terms = [(z, w) for z, w in terms if w]
                if terms:
                    md.Add(sum(w * z for z, w in terms) <= (t2 - t1 + 1) * out.A[n])
    return out


def least_overlap(arrival: int, deadline: int, d: int, t1: int, t2: int) -> int:
    """Fewest slots of [t1, t2] that a window of d slots inside [arrival, deadline] covers.

    Parameters
    ----------
    arrival, deadline : int
        The request's first and last allowed slot.
    d : int
        Window length in slots.
    t1, t2 : int
        The interval, t1 <= t2.

    Returns
    -------
    int
        The least overlap; the left-most or the right-most window attains it.

    References
    ----------
    Ours (energetic reasoning on eqs. (1)-(2) windows of paper 003).
    """
    left = max(0, min(t2, arrival + d - 1) - max(t1, arrival) + 1)
    right = max(0, min(t2, deadline) - max(t1, deadline - d + 1) + 1)
    return min(left, right)


def _solver(seconds: float, workers: int) -> Any:
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = int(workers)
    solver.parameters.max_time_in_seconds = max(float(seconds), 0.01)
    return solver


def _schedule(instance: Instance, built: _Model, solver: Any) -> Any:
    """The Solution of CP-SAT's values: ring, nodes, CU ids (:func:`assign_cu_ids`), the
    wavelength floor(i / rho) of the i-th deployed request, the window."""
    from dmlopt.models.rar.evaluation import Assignment, Solution, assign_cu_ids

    plans: list[Any] = []
    rings: list[Any] = []
    for j in range(len(instance.requests)):
        rq = built.requests.get(j)
        if rq is None or (rq.eta is not None and not solver.Value(rq.eta)):
            plans.append(None)
            rings.append(None)
            continue
        s_ = next(s for s, x in zip(rq.sets, rq.x, strict=True) if solver.Value(x))
        _, k, d = next(md_ for md_, v in zip(rq.modes, rq.m, strict=True) if solver.Value(v))
        start = int(solver.Value(rq.start))
        ring = next(instance.rings[q].nodes for q in instance.candidate_rings(j)
                    if set(s_) <= set(instance.rings[q].nodes))
        nodes = [v for v in ring if v in s_]
        plans.append((nodes, [k] * len(nodes), start, start + d - 1))
        rings.append(ring)
    ids = assign_cu_ids(instance, plans)
    out = []
    deployed = 0
    for j, plan in enumerate(plans):
        if plan is None:
            out.append(None)
            continue
        nodes, _, s, e = plan
        out.append(Assignment(ring=list(rings[j]), nodes=nodes, cus=ids[j],
                              wavelength=deployed // instance.rho, start=s, end=e))
        deployed += 1
    return Solution(requests=out)


def _check_args(instance: Instance, seconds: float, workers: int) -> None:
    if not applicable(instance):
        raise InstanceError("instance", instance.name,
                            "the CP-SAT model needs scheme MinCU and wavelengths that cannot "
                            "bind (|R| <= rho min_l |W_l|)")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not (
            0 < seconds < math.inf):
        raise InstanceError("seconds", seconds, "must be a finite number of seconds > 0")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InstanceError("workers", workers, "must be an integer >= 1")


@dataclass
class CheckResult:
    """One check: FEASIBLE (with an evaluated schedule), INFEASIBLE (CP-SAT proved it) or
    UNDECIDED, and the CPU seconds it took."""

    status: str
    solution: Any = None
    seconds: float = 0.0


def _check_vector(instance: Instance, name: str, vector: list[int], deployed: Any) -> None:
    """Refuse a capacity vector (field ``name``) that is not one whole number >= 0 per node,
    or a deployed set naming a request that does not exist."""
    nodes = instance.nodes
    if len(vector) != len(nodes):
        raise InstanceError(name, vector, f"must list {len(nodes)} nodes")
    if any(isinstance(c, bool) or int(c) != c or c < 0 for c in vector):
        raise InstanceError(name, vector, "must be whole numbers of CUs >= 0")
    if any(not 0 <= j < len(instance.requests) for j in deployed):
        raise InstanceError("deployed", sorted(deployed), "names a request that does not exist")


def check(instance: Instance, capacity: list[int], deployed: set[int] | list[int], *,
          seconds: float = 10.0, workers: int = 1, energy: bool = False) -> CheckResult:
    """Is there a schedule deploying exactly ``deployed`` with at most ``capacity[n]`` activated
    CUs on each node n? (module docstring).

    Parameters
    ----------
    instance : Instance
        A RAR instance with scheme MinCU whose wavelengths cannot bind (:func:`applicable`).
    capacity : list of int
        Per node the most CUs it may activate (clipped to its CU count).
    deployed : set or list of int
        The requests deployed (all others blocked).
    seconds : float, default 10.0
        Wall seconds for CP-SAT (``max_time_in_seconds``).
    workers : int, default 1
        CP-SAT workers (threads).
    energy : bool, default False
        Add the redundant rows per node and slot interval (module docstring); they slowed
        the checks measured (docs/rar.md, "Frontier: capacity Benders with a CP-SAT check").

    Returns
    -------
    CheckResult
        ``status`` FEASIBLE with ``solution`` (a Solution the core evaluator found feasible),
        INFEASIBLE (CP-SAT's INFEASIBLE: a proof) or UNDECIDED (the time ran out), and
        ``seconds`` (CPU seconds of this process).

    Raises
    ------
    InstanceError
        The instance is not one :func:`applicable` accepts, or a limit is not positive.
    SolverError
        A schedule CP-SAT found is infeasible for the evaluator (a modelling error).

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D: the subproblem of
    :func:`benchmarks.studies.rar.benders.capacity_benders` (``aggregated`` with A <= A*, eta fixed)
    as cumulative scheduling (Aggoun and Beldiceanu, Math. Comput. Modelling 17(7), 1993).
    """
    from ortools.sat.python import cp_model

    _check_args(instance, seconds, workers)
    nodes = instance.nodes
    _check_vector(instance, "capacity", capacity, deployed)
    cap = [min(int(c), nd.cus) for c, nd in zip(capacity, nodes, strict=True)]
    c0 = time.process_time()
    built = _build(instance, cap, set(deployed), energy=energy)
    if built.impossible:
        return CheckResult(INFEASIBLE, None, time.process_time() - c0)
    solver = _solver(seconds, workers)
    status = solver.Solve(built.model)
    cpu = time.process_time() - c0
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sol = _schedule(instance, built, solver)
        _verify(instance, sol, cap)
        return CheckResult(FEASIBLE, sol, cpu)
    if status == cp_model.INFEASIBLE:
        return CheckResult(INFEASIBLE, None, cpu)
    if status == cp_model.MODEL_INVALID:
        raise SolverError(f"cp-sat: invalid model ({built.model.Validate()})")
    return CheckResult(UNDECIDED, None, cpu)


@dataclass
class RegionResult:
    """One region check: FEASIBLE (with an evaluated schedule), INFEASIBLE (a CP-SAT proof)
    or UNDECIDED; with ``core`` the nodes whose upper bounds the proof used (all nodes when
    no core was asked for), and the CPU seconds it took."""

    status: str
    solution: Any = None
    core: tuple[int, ...] = ()
    seconds: float = 0.0


def region_check(instance: Instance, upper: list[int], deployed: set[int] | list[int],
                 total: int, *, seconds: float = 10.0, workers: int = 1,
                 core: bool = False) -> RegionResult:
    """Is there a schedule deploying exactly ``deployed`` whose activated CUs A satisfy
    A_n <= ``upper[n]`` on every node and sum_n A_n <= ``total``?

    One INFEASIBLE answer refutes every capacity vector of the box below ``upper`` whose sum
    is at most ``total``: a whole region of :func:`check`'s vectors at once, and the sum row
    lets it reach further than a box of :func:`check` alone.

    Parameters
    ----------
    instance : Instance
        A RAR instance that :func:`applicable` accepts.
    upper : list of int
        Per node the most CUs it may activate (clipped to its CU count).
    deployed : set or list of int
        The requests deployed (all others blocked).
    total : int
        The most activated CUs over all nodes.
    seconds : float, default 10.0
        Wall seconds for CP-SAT.
    workers : int, default 1
        CP-SAT workers.
    core : bool, default False
        State each node's bound A_n <= upper[n] as an assumption literal (A_n itself ranges
        up to the node's CU count) and, when infeasible, return in ``core`` the nodes of
        CP-SAT's ``SufficientAssumptionsForInfeasibility``: the region with every other
        node raised to its CU count is infeasible too. False: the bounds are the variables'
        domains (modes needing more CUs are left out), and ``core`` lists every node.

    Returns
    -------
    RegionResult
        ``status`` FEASIBLE (``solution`` evaluated by the core evaluator, within ``upper``
        and ``total``), INFEASIBLE (CP-SAT's INFEASIBLE: a proof) or UNDECIDED; ``core``;
        ``seconds`` (CPU seconds of this process).

    Raises
    ------
    InstanceError
        The instance is not one :func:`applicable` accepts, or an argument is out of range.
    SolverError
        A schedule CP-SAT found is infeasible for the evaluator (a modelling error).

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D: :func:`check` over a
    box of capacity vectors with a budget on their sum; cores of assumptions as in Hooker
    and Ottosson (Math. Program. 96, 2003) Benders cuts from an infeasibility proof.
    """
    from ortools.sat.python import cp_model

    _check_args(instance, seconds, workers)
    nodes = instance.nodes
    _check_vector(instance, "upper", upper, deployed)
    if isinstance(total, bool) or int(total) != total or total < 0:
        raise InstanceError("total", total, "must be a whole number of CUs >= 0")
    cap = [min(int(c), nd.cus) for c, nd in zip(upper, nodes, strict=True)]
    full = [nd.cus for nd in nodes]
    c0 = time.process_time()
    built = _build(instance, full if core else cap, set(deployed), energy=False,
                   total=int(total))
    everyone = tuple(range(len(nodes)))
    if built.impossible:
        return RegionResult(INFEASIBLE, None, everyone, time.process_time() - c0)
    lits = []
    if core:
        for n, c in enumerate(cap):
            if c < full[n]:
                lit = built.model.NewBoolVar(f"bound{n}")
                built.model.Add(built.A[n] <= c).OnlyEnforceIf(lit)
                lits.append((n, lit))
        built.model.AddAssumptions([lit for _, lit in lits])
    solver = _solver(seconds, workers)
    status = solver.Solve(built.model)
    cpu = time.process_time() - c0
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sol = _schedule(instance, built, solver)
        _verify(instance, sol, cap)
        _verify_total(sol, int(total))
        return RegionResult(FEASIBLE, sol, everyone, cpu)
    if status == cp_model.INFEASIBLE:
        if not core:
            return RegionResult(INFEASIBLE, None, everyone, cpu)
        used = set(solver.SufficientAssumptionsForInfeasibility())
        kept = tuple(n for n, lit in lits if lit.Index() in used)
        return RegionResult(INFEASIBLE, None, kept, cpu)
    if status == cp_model.MODEL_INVALID:
        raise SolverError(f"cp-sat: invalid model ({built.model.Validate()})")
    return RegionResult(UNDECIDED, None, everyone, cpu)


def _verify_total(solution: Any, total: int) -> None:
    """The solution activates at most ``total`` CUs over all nodes, else SolverError."""
    used = {(v, cu) for a in solution.requests if a is not None
            for v, ids in zip(a.nodes, a.cus, strict=True) for cu in ids}
    if len(used) > total:
        raise SolverError(f"cp-sat: the schedule activates {len(used)} CUs > {total}")


def _verify(instance: Instance, solution: Any, capacity: list[int] | None) -> None:
    """The evaluator accepts ``solution`` and each node's activated CUs are within
    ``capacity``, else SolverError."""
    from dmlopt.models.rar.evaluation import evaluate

    ev = evaluate(instance, solution)
    if not ev.feasible:
        raise SolverError(f"cp-sat: schedule rejected by the evaluator: {ev.violations[:2]}")
    if capacity is not None:
        for n, c in enumerate(capacity):
            used = {cu for a in solution.requests if a is not None
                    for v, ids in zip(a.nodes, a.cus, strict=True) if v == n for cu in ids}
            if len(used) > c:
                raise SolverError(f"cp-sat: node {n} activates {len(used)} CUs > {c}")


@dataclass
class MinCUResult:
    """:func:`solve_mincu`'s outcome: CP-SAT status name, the best evaluated schedule (or
    None), its objective (eq. (4)), CP-SAT's bound (eq. (4) units) and CPU seconds."""

    status: str
    solution: Any
    objective: float
    bound: float
    seconds: float


def solve_mincu(instance: Instance, *, seconds: float = 60.0, workers: int = 1,
                lower_bound: float | None = None, hint: Any = None) -> MinCUResult:
    """CP-SAT on the whole MinCU problem: deployments, node sets, modes, starts and activated
    CUs (module docstring), eq. (4) minimised as blocked x lcm / |R| + alpha x lcm x sum A.

    Parameters
    ----------
    instance : Instance
        A RAR instance that :func:`applicable` accepts.
    seconds : float, default 60.0
        Wall seconds for CP-SAT.
    workers : int, default 1
        CP-SAT workers.
    lower_bound : float or None, default None
        A valid lower bound on eq. (4) (such as the node-choice bound), added as the row
        objective >= its ceiling on the integer scale; None: no row.
    hint : Solution or None, default None
        A schedule given to CP-SAT as a hint (its deployments, node sets, modes and starts).

    Returns
    -------
    MinCUResult
        Status name (OPTIMAL proves the objective), the evaluated schedule, its eq. (4) value,
        CP-SAT's bound divided back to eq. (4) units (not moved by ``dmlopt.bounds.safe``) and
        CPU seconds.

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D: the ``aggregated``
    formulation's MinCU schedules as optional intervals and cumulatives.
    """
    from dmlopt.models.rar.evaluation import evaluate

    _check_args(instance, seconds, workers)
    nr = len(instance.requests)
    c0 = time.process_time()
    built = _build(instance, [nd.cus for nd in instance.nodes], None)
    md = built.model
    alpha = Fraction(instance.alpha_of()).limit_denominator(10**6)
    den = math.lcm(nr, alpha.denominator)
    cb, ca = den // nr, int(alpha * den)
    eta = [rq.eta for rq in built.requests.values()]
    blocked = nr - len(eta)
    obj = cb * (blocked + sum(1 - e for e in eta)) + ca * sum(built.A)
    md.Minimize(obj)
    if lower_bound is not None and math.isfinite(lower_bound):
        md.Add(obj >= math.ceil(lower_bound * den - 1e-6))
    if hint is not None:
        _hint(instance, built, hint)
    solver = _solver(seconds, workers)
    status = solver.Solve(md)
    cpu = time.process_time() - c0
    name = solver.StatusName(status)
    sol, value = None, math.inf
    if name in ("OPTIMAL", "FEASIBLE"):
        sol = _schedule(instance, built, solver)
        _verify(instance, sol, None)
        value = evaluate(instance, sol).objective
    bound = solver.BestObjectiveBound() / den if name != "INFEASIBLE" else math.inf
    return MinCUResult(name, sol, value, bound, cpu)


def _hint(instance: Instance, built: _Model, solution: Any) -> None:
    """Hint CP-SAT with ``solution``'s deployments, node sets, modes and starts."""
    md = built.model
    for j, rq in built.requests.items():
        a = solution.requests[j]
        if rq.eta is not None:
            md.AddHint(rq.eta, int(a is not None))
        if a is None:
            for v in rq.x + rq.m:
                md.AddHint(v, 0)
            continue
        s_ = tuple(sorted(a.nodes))
        d = a.end - a.start + 1
        for x, s in zip(rq.x, rq.sets, strict=True):
            md.AddHint(x, int(s == s_))
        # the mode with the fewest CUs whose duration fits the schedule's window
        fit = [i for i, (nn, _, dd) in enumerate(rq.modes) if nn == len(s_) and dd <= d]
        pick = min(fit, key=lambda i: rq.modes[i][1]) if fit else -1
        for i, v in enumerate(rq.m):
            md.AddHint(v, int(i == pick))
        md.AddHint(rq.start, a.start)
