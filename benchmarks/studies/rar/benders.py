"""RAR (paper 003), MinCU: logic-based Benders on the activated CUs (``capacity-benders``).

MinCU's eq. (4) is the blocking rate plus alpha times the activated CUs, sum_n A_n (each node's
peak CU use). Deciding *how many* CUs each node may activate and *which* requests are deployed
fixes the objective; what remains is whether a schedule exists. :func:`capacity_benders`
splits the problem there:

* Master: the node-choice relaxation of ``aggregated``
  (:func:`dmlopt.models.rar.partial.build_node_choice`: deployments ``eta``, computing nodes
  ``y`` and activated CUs ``A`` integral, modes, starts and wavelengths in [0, 1]) with each A_n
  written by threshold binaries z_{n,c} = [A_n >= c] (A_n = sum_c z_{n,c}, z_{n,c} >=
  z_{n,c+1}), plus the cuts found so far. Every schedule is feasible in it with its own
  objective, so its optimum is a lower bound on eq. (4).
* Subproblem for the master's (A*, D*) (its activated CUs and deployed set): formulation
  ``aggregated`` with A_n <= A*_n, eta_j = [j in D*] and no objective. A schedule it finds
  costs at most the master's value (a bound), so it is optimal; it is evaluated by the core.
* Cut: when HiGHS proves the subproblem *infeasible* (a time-out proves nothing and is never
  a cut), no schedule deploys all of D* within A*, nor any superset of D* within any A <= A*
  (both only shrink the feasible set). So every schedule has A_n > A*_n for some node n or
  leaves some j in D* undeployed:

      sum_{n in N'} z_{n, A*_n + 1} + sum_{j in D'} (1 - eta_j) >= 1

  with N' the nodes below their CU count and D' = D*. Before the cut is added it is lifted
  and shrunk, each step kept only while its check stays proven infeasible: each node in turn
  is raised to its full CU count (it then leaves N'), else one CU at a time (A*_n grows, and
  the cut removes a larger down-set of capacity vectors); then each request is dropped from
  D'. A check that times out keeps the element as it is (the cut stays valid, only weaker).

The master's dual bound at each round is a valid lower bound (each cut removes no schedule),
and the method stops when a subproblem has a schedule (its evaluated objective meets the
master's bound) or at the time limit, returning the best bound seen and the best evaluated
schedule found (the filter's feasible checks are schedules too). Other schemes are refused.

Two options add cuts per master solve: ``neighbours`` checks, after a refuted master vector,
the vectors of the same total one CU move away (breadth first, skipping those a cut already
removes) and cuts each refuted one; ``core`` (CP-SAT) starts each lifting from the nodes of
CP-SAT's infeasibility core (:func:`benchmarks.studies.rar.cpsat.region_check`).

The subproblem is decided by HiGHS on ``aggregated`` (``check="highs"``) or by CP-SAT on the
same schedules stated as cumulative scheduling (``check="cpsat"``,
:mod:`benchmarks.studies.rar.cpsat`; needs ``ortools`` and wavelengths that cannot bind), which
decides the near-boundary checks in seconds where HiGHS often times out.

A study, not a method of the package: why it was not kept is in benchmarks/studies/rar/NOTES.md.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dmlopt import solvers
from dmlopt.bounds import safe
from dmlopt.contract import BoundValue
from dmlopt.errors import InstanceError, SolverError
from dmlopt.models.rar.constants import SENSE
from dmlopt.models.rar.instance import Instance

#: outcomes of one subproblem
FEASIBLE, INFEASIBLE, UNDECIDED = "feasible", "infeasible", "undecided"


@dataclass
class _Mip:
    """The ``aggregated`` model of an instance as a highspy model, with the pyomo columns."""

    model: Any  # the pyomo model (decode reads its variable values)
    columns: list[Any]
    cost: np.ndarray
    offset: float
    lower: np.ndarray
    upper: np.ndarray
    integer: np.ndarray
    matrix: Any  # scipy CSC, rows x columns
    row_lower: np.ndarray
    row_upper: np.ndarray
    eta: list[int] = field(default_factory=list)  # column of eta[j]
    A: list[int] = field(default_factory=list)  # column of A[n]
    relax: list[int] = field(default_factory=list)  # columns node-choice relaxes


def _compile(instance: Instance) -> _Mip:
    """``aggregated`` (MinCU) compiled to arrays by Pyomo's standard-form compiler."""
    import pyomo.environ as pyo
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    from dmlopt.models.rar.formulations import build_aggregated
    from dmlopt.models.rar.partial import KEPT_INTEGRAL

    m = build_aggregated(instance)
    info = LinearStandardFormCompiler().write(m, mixed_form=True, set_sense=None)
    cols = list(info.columns)
    inf = math.inf
    lower = np.array([-inf if v.lb is None else float(v.lb) for v in cols])
    upper = np.array([inf if v.ub is None else float(v.ub) for v in cols])
    integer = np.array([v.is_integer() or v.is_binary() for v in cols])
    rhs = np.asarray(info.rhs, dtype=float)
    kind = np.array([r.bound_type for r in info.rows])
    row_lower = np.where(kind <= 0, rhs, -inf)
    row_upper = np.where(kind >= 0, rhs, inf)
    pos = {id(v): i for i, v in enumerate(cols)}
    nr, nn = len(instance.requests), len(instance.nodes)
    sense = 1.0 if m.obj.sense == pyo.minimize else -1.0
    out = _Mip(model=m, columns=cols, cost=sense * np.asarray(info.c.toarray()[0], dtype=float),
               offset=float(np.asarray(info.c_offset).ravel()[0]) if np.size(info.c_offset)
               else 0.0, lower=lower, upper=upper, integer=integer,
               matrix=info.A.tocsc(), row_lower=row_lower, row_upper=row_upper)
    out.eta = [pos[id(m.eta[j])] for j in range(nr)]
    out.A = [pos[id(m.A[n])] for n in range(nn)]
    keep = {id(v) for name in KEPT_INTEGRAL for v in getattr(m, name).values()}
    out.relax = [i for i, v in enumerate(cols) if integer[i] and id(v) not in keep]
    return out


def _highs(mip: _Mip, threads: int, *, objective: bool) -> Any:
    """A highspy model of ``mip`` (its objective, or none)."""
    solvers.prepare_highs(threads)
    h = solvers.highspy_model()
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("mip_rel_gap", 0.0)
    solvers.add_arrays(h, mip.lower, mip.upper, mip.matrix, mip.row_lower, mip.row_upper,
                       cost=mip.cost if objective else None, integer=mip.integer)
    return h


def _run(h: Any, seconds: float) -> str:
    """Run ``h`` for at most ``seconds``; the HiGHS model status as a string."""
    import highspy

    h.setOptionValue("time_limit", max(float(seconds), 0.01))
    solvers.run_highspy(h)
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        return "optimal"
    if status == highspy.HighsModelStatus.kInfeasible:
        return "infeasible"
    if status == highspy.HighsModelStatus.kInterrupt:
        raise KeyboardInterrupt
    return "undecided"


class _Master:
    """The node-choice relaxation with threshold binaries z_{n,c} and the cuts (module
    docstring)."""

    def __init__(self, mip: _Mip, caps: list[int], threads: int) -> None:
        import highspy

        self.mip = mip
        self.h = h = _highs(mip, threads, objective=True)
        idx = np.asarray(mip.relax, dtype=np.int32)
        if len(idx):
            h.changeColsIntegrality(len(idx), idx,
                                    np.full(len(idx), highspy.HighsVarType.kContinuous))
        n0 = len(mip.columns)
        self.z: dict[tuple[int, int], int] = {}
        for n, cap in enumerate(caps):
            for c in range(1, cap + 1):
                self.z[n, c] = n0 + len(self.z)
        nz = len(self.z)
        h.addVars(nz, np.zeros(nz), np.ones(nz))
        zi = np.arange(n0, n0 + nz, dtype=np.int32)
        h.changeColsIntegrality(nz, zi, np.full(nz, highspy.HighsVarType.kInteger))
        for n, cap in enumerate(caps):
            # A_n = sum_c z_{n,c}
            cols = [mip.A[n]] + [self.z[n, c] for c in range(1, cap + 1)]
            vals = [1.0] + [-1.0] * cap
            h.addRow(0.0, 0.0, len(cols), np.asarray(cols, np.int32), np.asarray(vals))
            for c in range(1, cap):  # z_{n,c} >= z_{n,c+1}
                h.addRow(0.0, highspy.kHighsInf, 2,
                         np.asarray([self.z[n, c], self.z[n, c + 1]], np.int32),
                         np.asarray([1.0, -1.0]))
        self.cuts = 0

    def add_cut(self, capacity: dict[int, int], deployed: list[int]) -> None:
        """sum_{n} z_{n, capacity[n] + 1} + sum_{j in deployed} (1 - eta_j) >= 1."""
        import highspy

        cols = [self.z[n, a + 1] for n, a in capacity.items()] + [self.mip.eta[j]
                                                                  for j in deployed]
        vals = [1.0] * len(capacity) + [-1.0] * len(deployed)
        h = self.h
        h.addRow(1.0 - len(deployed), highspy.kHighsInf, len(cols), np.asarray(cols, np.int32),
                 np.asarray(vals, dtype=float))
        self.cuts += 1

    def solve(self, seconds: float) -> tuple[str, float, np.ndarray | None]:
        """(status, dual bound in eq. (4) units, column values or None)."""
        status = _run(self.h, seconds)
        info = self.h.getInfo()
        if status == "infeasible":  # every schedule cut off: cannot happen with valid cuts
            raise SolverError("capacity-benders: the master became infeasible")
        bound = info.mip_dual_bound
        bound = -math.inf if bound is None or not math.isfinite(bound) else bound + \
            self.mip.offset
        sol = self.h.getSolution()
        x = np.asarray(sol.col_value) if info.primal_solution_status == 2 else None
        return status, bound, x


class _Sub:
    """``aggregated`` without objective: is there a schedule deploying exactly a set D within
    activated CUs A? (module docstring)."""

    def __init__(self, instance: Instance, mip: _Mip, caps: list[int], threads: int) -> None:
        self.instance = instance
        self.mip = mip
        self.caps = caps
        self.h = _highs(mip, threads, objective=False)
        self.seconds: list[float] = []

    def check(self, capacity: dict[int, int], deployed: set[int], seconds: float
              ) -> tuple[str, Any]:
        """FEASIBLE (with the decoded Solution), INFEASIBLE (proven by HiGHS) or UNDECIDED."""
        mip = self.mip
        for j, col in enumerate(mip.eta):
            v = 1.0 if j in deployed else 0.0
            self.h.changeColBounds(col, v, v)
        for n, col in enumerate(mip.A):
            self.h.changeColBounds(col, 0.0, float(capacity.get(n, self.caps[n])))
        t = time.process_time()
        status = _run(self.h, seconds)
        self.seconds.append(time.process_time() - t)
        if status == "optimal":
            x = np.asarray(self.h.getSolution().col_value)
            return FEASIBLE, _decode(self.instance, mip, x)
        if status == "infeasible":
            return INFEASIBLE, None
        return UNDECIDED, None


class _CpsatSub:
    """The same check by CP-SAT (:func:`benchmarks.studies.rar.cpsat.check`)."""

    def __init__(self, instance: Instance, caps: list[int], workers: int) -> None:
        self.instance = instance
        self.caps = caps
        self.workers = workers
        self.seconds: list[float] = []

    def check(self, capacity: dict[int, int], deployed: set[int], seconds: float
              ) -> tuple[str, Any]:
        """FEASIBLE (with an evaluated Solution), INFEASIBLE (proven by CP-SAT) or
        UNDECIDED."""
        from . import cpsat

        cap = [capacity.get(n, c) for n, c in enumerate(self.caps)]
        res = cpsat.check(self.instance, cap, deployed, seconds=max(float(seconds), 0.01),
                          workers=self.workers)
        self.seconds.append(res.seconds)
        return res.status, res.solution

    def core(self, capacity: dict[int, int], deployed: set[int], seconds: float
             ) -> tuple[str, Any, tuple[int, ...]]:
        """The check with each node's bound an assumption: (status, solution, the nodes of
        CP-SAT's sufficient assumptions when INFEASIBLE)."""
        from . import cpsat

        cap = [capacity.get(n, c) for n, c in enumerate(self.caps)]
        res = cpsat.region_check(self.instance, cap, deployed, sum(self.caps),
                                 seconds=max(float(seconds), 0.01), workers=self.workers,
                                 core=True)
        self.seconds.append(res.seconds)
        return res.status, res.solution, res.core


def _decode(instance: Instance, mip: _Mip, x: np.ndarray) -> Any:
    """The Solution of the column values ``x`` of ``aggregated``."""
    from dmlopt.models.rar.formulations import decode

    for v, val in zip(mip.columns, x, strict=True):
        v.set_value(float(round(val)) if v.is_integer() or v.is_binary() else float(val),
                    skip_validation=True)
    return decode(mip.model, instance)


@dataclass
class _Best:
    """The best evaluated schedule so far."""

    instance: Instance
    objective: float = math.inf
    solution: Any = None

    def offer(self, solution: Any) -> None:
        from dmlopt.models.rar.evaluation import evaluate

        if solution is None:
            return
        ev = evaluate(self.instance, solution)
        if ev.feasible and ev.objective < self.objective:
            self.objective, self.solution = ev.objective, solution


def _add_cut(master: Any, cuts: list, sizes: list, capacity: dict[int, int],
             deployed: list[int]) -> None:
    """Add the cut of (capacity, deployed) to the master and record it and its size."""
    master.add_cut(capacity, deployed)
    cuts.append((capacity, deployed))
    sizes.append((len(capacity), len(deployed)))


def _shrink(sub: _Sub | _CpsatSub, capacity: dict[int, int], deployed: list[int], best: _Best,
            seconds: float, deadline: float, counts: dict[str, float], core: bool = False
            ) -> tuple[dict[int, int], list[int]]:
    """The deletion filter and lifting (module docstring): raise each node's capacity as far
    as the check stays proven infeasible (to its full CU count: the node leaves the cut), then
    drop each request whose removal keeps it infeasible. With ``core`` (CP-SAT only) the nodes
    outside CP-SAT's infeasibility core leave the cut first, in one check."""
    cap = dict(capacity)
    dep = list(deployed)
    if core and isinstance(sub, _CpsatSub) and deadline - time.perf_counter() > 0:
        out, sol, kept = sub.core(cap, set(dep), min(seconds, deadline - time.perf_counter()))
        counts["checks"] += 1
        counts["undecided_checks"] += out == UNDECIDED
        best.offer(sol)
        if out == INFEASIBLE:
            cap = {n: a for n, a in cap.items() if n in kept}

    def infeasible(trial_cap: dict[int, int], trial_dep: set[int]) -> bool:
        left = deadline - time.perf_counter()
        if left <= 0:
            return False
        out, sol = sub.check(trial_cap, trial_dep, min(seconds, left))
        counts["checks"] += 1
        counts["undecided_checks"] += out == UNDECIDED
        best.offer(sol)
        return out == INFEASIBLE

    for n in list(cap):
        trial_cap = {k: v for k, v in cap.items() if k != n}
        if infeasible(trial_cap, set(dep)):
            cap = trial_cap
            continue
        while cap[n] + 1 < sub.caps[n] and infeasible({**cap, n: cap[n] + 1}, set(dep)):
            cap[n] += 1
    for j in list(dep):
        if infeasible(cap, set(dep) - {j}):
            dep.remove(j)
    return cap, dep


def _covered(vector: list[int], deployed: set[int], cuts: list[tuple[dict[int, int], list[int]]]
             ) -> bool:
    """Whether a cut found so far removes the capacity vector ``vector`` with ``deployed``:
    every node it names is at most its lifted capacity and ``deployed`` contains its
    requests."""
    return any(all(vector[n] <= a for n, a in cap.items()) and deployed.issuperset(dep)
               for cap, dep in cuts)


def _neighbours(sub: _Sub | _CpsatSub, master: _Master, vector: list[int], deployed: list[int],
                cuts: list[tuple[dict[int, int], list[int]]], best: _Best, budget: int,
                seconds: float, deadline: float, counts: dict[str, float], lift: bool,
                core: bool, sizes: list[tuple[int, int]]) -> None:
    """Refute the capacity vectors of the same total next to the master's refuted one before
    the next master solve: breadth first over moves of one CU from node a to node b, from
    ``vector`` and from every neighbour refuted, at most ``budget`` checks of vectors no cut
    removes yet. A feasible neighbour has the master's objective (it is optimal, and ``best``
    keeps it); an infeasible one becomes a cut, lifted and shrunk like the master's
    (:func:`_shrink`) when ``lift``; an undecided one is skipped."""
    caps = sub.caps
    dep = set(deployed)
    queue = [vector]
    seen = {tuple(vector)}
    done = 0
    while queue and done < budget and deadline - time.perf_counter() > 0:
        v = queue.pop(0)
        for a in range(len(caps)):
            for b in range(len(caps)):
                if a == b or v[a] == 0 or v[b] >= caps[b] or done >= budget:
                    continue
                w = list(v)
                w[a] -= 1
                w[b] += 1
                if tuple(w) in seen or _covered(w, dep, cuts):
                    continue
                seen.add(tuple(w))
                left = deadline - time.perf_counter()
                if left <= 0:
                    return
                capacity = {n: c for n, c in enumerate(w) if c < caps[n]}
                out, sol = sub.check(capacity, dep, min(seconds, left))
                done += 1
                counts["neighbour_checks"] += 1
                best.offer(sol)
                if out == FEASIBLE:
                    return
                if out == UNDECIDED:
                    continue
                cut_dep = list(deployed)
                if lift:
                    capacity, cut_dep = _shrink(sub, capacity, deployed, best, seconds,
                                                deadline, counts, core)
                _add_cut(master, cuts, sizes, capacity, cut_dep)
                queue.append(w)


def _use_cpsat(instance: Instance, check: str) -> bool:
    """Whether ``check`` (capacity_benders's option) selects CP-SAT for this instance."""
    from . import cpsat

    if check not in ("highs", "cpsat", "auto"):
        raise InstanceError("check", check, "must be 'highs', 'cpsat' or 'auto'")
    if check == "highs":
        return False
    ok = cpsat.available() and cpsat.applicable(instance)
    if check == "cpsat" and not cpsat.available():
        raise SolverError("capacity-benders: check='cpsat' needs the package ortools "
                          "(pip install ortools)")
    if check == "cpsat" and not ok:
        raise InstanceError("check", check, "CP-SAT models MinCU instances whose wavelengths "
                            "cannot bind (|R| <= rho min_l |W_l|) only")
    return ok


def capacity_benders(instance: Instance, *, time_limit: float | None = None,
                     check_seconds: float = 10.0, filter: bool = True, threads: int = 1,
                     start: Any = None, check: str = "highs", neighbours: int = 0,
                     core: bool = False) -> BoundValue:
    """Logic-based Benders on MinCU's activated CUs (module docstring): a bound and a schedule.

    Parameters
    ----------
    instance : Instance
        A RAR instance with scheme MinCU.
    time_limit : float or None, default None
        Seconds (wall clock) for the whole method; the bound stays valid at any stop (None:
        until it ends).
    check_seconds : float, default 10.0
        Seconds one deletion-filter check may take; an undecided check keeps its element in
        the cut.
    filter : bool, default True
        Shrink each cut by the deletion filter (False: the cut of the master's whole (A*, D*)).
    threads : int, default 1
        HiGHS threads.
    start : Solution or None, default None
        A schedule to begin from (``dmlopt.solve``'s warm start); kept when the evaluator finds
        it feasible.
    check : {"highs", "cpsat", "auto"}, default "highs"
        Who decides the subproblems: HiGHS on ``aggregated``, or CP-SAT on the cumulative
        scheduling model of :mod:`benchmarks.studies.rar.cpsat` (needs ``ortools`` and an instance
        :func:`~benchmarks.studies.rar.cpsat.applicable` accepts), with ``threads`` workers;
        "auto" takes CP-SAT when both hold, else HiGHS.
    neighbours : int, default 0
        After each refuted master vector, check up to this many capacity vectors of the same
        total next to it (one CU moved between two nodes, breadth first; those a cut already
        removes are skipped) and add a cut for each refuted one before the next master solve
        (0: none).
    core : bool, default False
        With the CP-SAT check, start each cut's lifting from CP-SAT's infeasibility core: the
        nodes whose bounds the proof did not use leave the cut in one check.

    Returns
    -------
    BoundValue
        The best master dual bound (eq. (4) units, moved by :func:`dmlopt.bounds.safe`), the
        best evaluated schedule found (or None) and metrics: ``iterations`` (master solves),
        ``cuts``, ``cut_nodes`` and ``cut_requests`` (mean sizes of N' and D'), ``checks`` and
        ``undecided_checks`` (filter checks), ``sub_seconds`` and ``sub_max_seconds`` (CPU
        seconds of all subproblem and filter runs, and the longest), ``master_seconds`` (CPU),
        ``proven`` (1.0 when a subproblem schedule met the bound), ``cpsat`` (1.0 when CP-SAT
        decided the subproblems) and ``seconds`` (wall).

    Raises
    ------
    InstanceError
        The scheme is not MinCU, an argument is out of its range, or ``check="cpsat"`` on an
        instance whose wavelengths can bind.
    SolverError
        ``check="cpsat"`` without ``ortools`` installed, or the master became infeasible (a
        wrong cut; never with valid ones).

    References
    ----------
    Ours, on paper 003 (Chen et al., JOCN 16(5), 2024), section 4.D: logic-based Benders
    decomposition (Hooker and Ottosson, Math. Program. 96, 2003) of the ``aggregated``
    formulation, the master over activated CUs and deployments, the subproblem a feasibility
    check of eqs. (7)-(9), (17), (21)-(24) with both fixed.
    """
    if instance.scheme != "MinCU":
        raise InstanceError("scheme", instance.scheme,
                            "capacity-benders solves the MinCU scheme only")
    solvers.check_settings(time_limit, None, threads)
    if isinstance(check_seconds, bool) or not isinstance(check_seconds, int | float) or not (
            0 < check_seconds < math.inf):
        raise InstanceError("check_seconds", check_seconds,
                            "must be a finite number of seconds > 0")
    if not isinstance(filter, bool):
        raise InstanceError("filter", filter, "must be True or False")
    if isinstance(neighbours, bool) or not isinstance(neighbours, int) or neighbours < 0:
        raise InstanceError("neighbours", neighbours, "must be a whole number >= 0")
    if not isinstance(core, bool):
        raise InstanceError("core", core, "must be True or False")
    use_cpsat = _use_cpsat(instance, check)
    t0 = time.perf_counter()
    deadline = math.inf if time_limit is None else t0 + float(time_limit)
    caps = [nd.cus for nd in instance.nodes]
    mip = _compile(instance)
    master = _Master(mip, caps, threads)
    sub = _CpsatSub(instance, caps, threads) if use_cpsat else _Sub(instance, mip, caps,
                                                                     threads)
    best = _Best(instance)
    best.offer(start)
    bound = -math.inf
    counts = {"iterations": 0.0, "checks": 0.0, "undecided_checks": 0.0, "proven": 0.0,
              "master_seconds": 0.0, "cpsat": float(use_cpsat), "neighbour_checks": 0.0}
    sizes: list[tuple[int, int]] = []
    cuts: list[tuple[dict[int, int], list[int]]] = []
    tol = 1e-9
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        c0 = time.process_time()
        status, value, x = master.solve(left)
        counts["master_seconds"] += time.process_time() - c0
        counts["iterations"] += 1
        bound = max(bound, value)
        if status != "optimal" or x is None or best.objective <= bound + tol:
            break
        capacity = {n: int(round(x[col])) for n, col in enumerate(mip.A)
                    if round(x[col]) < caps[n]}
        deployed = [j for j, col in enumerate(mip.eta) if x[col] > 0.5]
        left = deadline - time.perf_counter()
        out, sol = sub.check(capacity, set(deployed), left)
        if out == FEASIBLE:
            best.offer(sol)
            break
        if out == UNDECIDED:  # a time-out is never a cut
            break
        vector = [int(round(x[col])) for col in mip.A]
        full = list(deployed)
        if filter:
            capacity, deployed = _shrink(sub, capacity, deployed, best, check_seconds,
                                         deadline, counts, core)
        _add_cut(master, cuts, sizes, capacity, deployed)
        if neighbours:
            _neighbours(sub, master, vector, full, cuts, best, neighbours, check_seconds,
                        deadline, counts, filter, core, sizes)
            if best.objective <= value + tol:
                break
    # a schedule meeting the bound: from the last check, or from a filter check before it
    counts["proven"] = float(best.objective <= bound + 1e-6)
    metrics = {**counts, "cuts": float(master.cuts),
               "cut_nodes": float(np.mean([s[0] for s in sizes])) if sizes else 0.0,
               "cut_requests": float(np.mean([s[1] for s in sizes])) if sizes else 0.0,
               "sub_seconds": float(sum(sub.seconds)),
               "sub_max_seconds": float(max(sub.seconds, default=0.0)),
               "seconds": time.perf_counter() - t0}
    if not math.isfinite(bound):
        raise SolverError("capacity-benders: the master gave no bound within the time limit")
    return BoundValue(safe(bound, SENSE), solution=best.solution, metrics=metrics)
