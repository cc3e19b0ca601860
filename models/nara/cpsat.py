"""Nara (paper 001): the offline problem as a CP-SAT model (optional: needs ``ortools``).

The model is formulation ``offline`` (:mod:`dmlopt.models.nara.formulations`, section 3.1
constraints 1-3 over the whole episode) written for a constraint solver with clause learning,
OR-Tools CP-SAT:

* per request i: ``acc[i]`` (accepted), ``u[i]`` (uses >= 2 servers); per request and server:
  ``x[i, s]`` (s gives i a piece), integers ``a[i, s]``, ``g[i, s]`` (its CPU and memory),
  ``v[i, s]`` (the access link of s is charged: x and u); per request and rack ``w[i, r]``
  (exactly "some server of r is used"); per request and rack pair used, one candidate path
  (``z``) and the links it charges (``y[i, e]``, the union rule: once per request);
* the capacities (CPU, memory per server; bandwidth per access link and per other link) are
  checked at the *maximal* active sets only (the active set of a step contained in another
  step's is implied, every term being non-negative);
* the bandwidths are scaled to integers (:func:`scale_bandwidth`) so that every allocation the
  evaluator accepts satisfies the scaled rows (the scaled model is a relaxation: an
  infeasibility it proves holds for the evaluator; an allocation it finds is re-evaluated);
* redundant rows: the bandwidth-conflict cliques of the access links (requests whose
  bandwidths pairwise exceed a link's capacity share no server at one step: at most one), the
  rows of the ``aggregate`` bound (:func:`dmlopt.models.nara.bounds.aggregate_rows`) scaled
  down to integers, and ``sum acc <= upper`` when an upper bound is given;
* symmetry: identical servers of a rack (same CPU, memory and access-link capacity; they share
  the rack's links, so every relabelling of them maps an allocation to an allocation of the
  same requests; a request holds its servers for its whole lifetime) are numbered by first use:
  server k+1 of such a run serves request i only if server k served some request <= i (the
  first-use rows of formulation ``offline``, :func:`first_use_groups`).

:func:`solve` asks for the most accepted requests (or for ``target`` of them: a feasibility
question) with a time limit; only CP-SAT's statuses OPTIMAL (with its proven bound) and
INFEASIBLE are proofs; UNKNOWN and FEASIBLE at a time-out prove nothing beyond the bound CP-SAT
reports. :func:`allocate_set` is the set check of ``acceptance-sets`` (option
``set_check="cpsat"``): can every request of a set be allocated together?
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from dmlopt.errors import InstanceError
from dmlopt.models.nara.constants import BW_TOL
from dmlopt.models.nara.instance import Allocation, Instance, Solution

#: outcomes of one set check (as in :mod:`dmlopt.models.nara.exact`)
FITS, CUT, UNDECIDED = "fits", "cut", "undecided"

#: denominators tried for the bandwidths, smallest first (:func:`scale_bandwidth`)
DENOMINATORS = (100, 1000, 10_000, 1_000_000)

#: scale of the float rows of the ``aggregate`` bound before rounding down to integers
AGG_SCALE = 1000


def available() -> bool:
    """Whether OR-Tools CP-SAT can be imported.

    Returns
    -------
    bool
        True when ``ortools.sat.python.cp_model`` imports (the optional dependency is
        installed), else False; never raises.

    References
    ----------
    Ours.
    """
    try:
        from ortools.sat.python import cp_model  # noqa: F401
    except Exception:  # noqa: BLE001 - any failure to import means "not available"
        return False
    return True


def scale_bandwidth(bs: list[float], caps: list[float]) -> tuple[int, list[int], list[int]]:
    """Integer bandwidths: a denominator D, ``round(b * D)`` per request and, per link, the
    largest integer capacity every evaluator-feasible load respects.

    With err the largest rounding error |round(b D) - b D| and K the number of requests, a set
    of requests whose bandwidths sum to at most cap + tol (the evaluator's tolerance
    :data:`BW_TOL`) has scaled sum at most (cap + tol) D + K err, an integer, so at most
    ``floor((cap + tol) D + K err)``: the scaled rows are a relaxation of the evaluator's.
    D is the first of :data:`DENOMINATORS` that makes every b an integer within 1e-9 (exact,
    the generators use multiples of 0.01), else the last.

    Parameters
    ----------
    bs : list of float
        Bandwidths of the requests (fraction of a server link).
    caps : list of float
        Capacities of the links.

    Returns
    -------
    (D, b_int, cap_int)

    References
    ----------
    Ours.
    """
    b = np.asarray(bs, dtype=float)
    den = DENOMINATORS[-1]
    for d in DENOMINATORS:
        if b.size == 0 or np.max(np.abs(b * d - np.round(b * d))) <= 1e-9:
            den = d
            break
    b_int = [int(round(x * den)) for x in b]
    err = float(np.max(np.abs(b * den - np.round(b * den)))) if b.size else 0.0
    slack = len(bs) * err + 1e-9
    cap_int = [int(math.floor((c + BW_TOL) * den + slack)) for c in caps]
    return den, b_int, cap_int


def maximal_sets(active: list[list[int]]) -> list[list[int]]:
    """The active sets not contained in another one (each once, in step order).

    Parameters
    ----------
    active : list of list of int
        The requests active at every step (:meth:`Instance.active_sets`).

    Returns
    -------
    list of list of int
        Every non-empty set of ``active`` that no other set strictly contains (duplicates
        kept once): the capacity rows of the other steps are implied.

    References
    ----------
    Ours.
    """
    sets = [frozenset(a) for a in active if a]
    uniq = list(dict.fromkeys(sets))
    keep = [s for s in uniq if not any(s < o for o in uniq)]
    return [sorted(s) for s in keep]


def first_use_groups(instance: Instance) -> list[list[int]]:
    """Runs of interchangeable servers: consecutive servers of one rack with the same CPU,
    memory and access-link capacity.

    Parameters
    ----------
    instance : Instance
        A Nara episode.

    Returns
    -------
    list of list of int
        Groups of >= 2 servers (in server order); the servers of a group are interchangeable
        in every allocation (they hang off the same rack switch).

    References
    ----------
    Ours (the chains of the first-use rows of formulation ``offline``).
    """
    net = instance.net
    out = []
    for r in range(net.n_racks):
        srv = [int(s) for s in net.rack_servers[r]]
        group = [srv[0]]
        for s0, s1 in zip(srv[:-1], srv[1:], strict=True):
            if _kind(net, s0) == _kind(net, s1):
                group.append(s1)
            else:
                if len(group) >= 2:
                    out.append(group)
                group = [s1]
        if len(group) >= 2:
            out.append(group)
    return out


def _kind(net: Any, s: int) -> tuple[int, int, float]:
    return int(net.cpu[s]), int(net.mem[s]), float(net.cap[int(net.access[s])])


def relabel(instance: Instance, solution: Solution) -> Solution:
    """``solution`` with the servers of every :func:`first_use_groups` group renumbered by
    first use (the same allocation up to a relabelling of identical servers), so that it
    satisfies the model's first-use rows (a hint CP-SAT can complete).

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    solution : Solution
        An allocation of it.

    Returns
    -------
    Solution
        The relabelled allocation (same counts, same routes).

    References
    ----------
    Ours.
    """
    n = len(solution.allocations)
    first: dict[int, int] = {}
    for i, al in enumerate(solution.allocations):
        for s in al.servers if al is not None else []:
            first.setdefault(s, i)
    new: dict[int, int] = {}
    for g in first_use_groups(instance):
        order = sorted(g, key=lambda s: (first.get(s, n), s))
        new.update(dict(zip(order, g, strict=True)))
    allocs = []
    for al in solution.allocations:
        allocs.append(None if al is None else Allocation(
            servers=[new.get(s, s) for s in al.servers], cpu=al.cpu, mem=al.mem,
            routes=al.routes))
    return Solution(allocations=allocs)


@dataclass
class Model:
    """A built CP-SAT model and its variables (see the module docstring)."""

    model: Any
    acc: list[Any]
    x: dict[tuple[int, int], Any]
    a: dict[tuple[int, int], Any]
    g: dict[tuple[int, int], Any]
    z: dict[tuple[int, int, int, int], Any]
    rows: dict[str, int] = field(default_factory=dict)


def build(instance: Instance, *, fix_all: bool = False, target: int | None = None,
          upper: int | None = None, symmetry: bool = True, redundant: bool = True
          ) -> Model:
    """The CP-SAT model of ``instance`` (module docstring).

    Parameters
    ----------
    instance : Instance
        A Nara episode (every server and link starts free).
    fix_all : bool
        Every request accepted (the set check): a feasibility model, default False.
    target : int, optional
        ``sum acc >= target`` and no objective (a feasibility question); default None:
        maximise ``sum acc``.
    upper : int, optional
        A valid upper bound added as ``sum acc <= upper`` (default None).
    symmetry : bool
        The first-use rows of identical servers (default True).
    redundant : bool
        The clique and ``aggregate`` rows (default True).

    Returns
    -------
    Model

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1 (constraints 1-3); ours: the offline model as in
    :func:`dmlopt.models.nara.formulations.build_offline`, here for CP-SAT (L. Perron and
    F. Didier, OR-Tools CP-SAT, Google, https://developers.google.com/optimization).
    """
    from ortools.sat.python import cp_model

    net = instance.net
    reqs = instance.requests
    n, S = len(reqs), net.n_servers
    md = cp_model.CpModel()
    max_c, max_m = max(int(net.cpu.max()), 1), max(int(net.mem.max()), 1)
    need = [max(-(-r.c // max_c), -(-r.m // max_m), 1) for r in reqs]
    acc = [md.NewBoolVar(f"acc{i}") for i in range(n)]
    if fix_all:
        for lit in acc:
            md.Add(lit == 1)
    x, a, g, v = {}, {}, {}, {}
    for i, r in enumerate(reqs):
        u = acc[i] if need[i] >= 2 else md.NewBoolVar(f"u{i}")
        for s in range(S):
            cu, mu = int(min(net.cpu[s], r.c)), int(min(net.mem[s], r.m))
            if cu + mu == 0:
                continue
            x[i, s] = xs = md.NewBoolVar(f"x{i}_{s}")
            a[i, s] = md.NewIntVar(0, cu, f"a{i}_{s}")
            g[i, s] = md.NewIntVar(0, mu, f"g{i}_{s}")
            md.Add(a[i, s] <= cu * xs)
            md.Add(g[i, s] <= mu * xs)
            md.Add(a[i, s] + g[i, s] >= xs)
            md.AddImplication(xs, acc[i])
            if need[i] >= 2:
                v[i, s] = xs
            else:
                v[i, s] = md.NewBoolVar(f"v{i}_{s}")
                md.AddBoolOr([xs.Not(), u.Not(), v[i, s]])
        srv = [s for s in range(S) if (i, s) in x]
        md.Add(sum(a[i, s] for s in srv) == r.c * acc[i])
        md.Add(sum(g[i, s] for s in srv) == r.m * acc[i])
        if need[i] >= 2:
            md.Add(sum(x[i, s] for s in srv) >= need[i] * acc[i])
        else:
            md.Add(sum(x[i, s] for s in srv) >= 2).OnlyEnforceIf(u)
            md.Add(sum(x[i, s] for s in srv) <= 1).OnlyEnforceIf(u.Not())
    z, y = _paths(md, instance, x)
    rows = _capacities(md, instance, x, a, g, v, y, redundant)
    if symmetry:
        rows["first_use"] = _first_use(md, instance, x)
    if redundant and not fix_all:
        rows["aggregate"] = _aggregate(md, instance, acc)
    if upper is not None and not fix_all:
        md.Add(sum(acc) <= int(upper))
    if target is not None and not fix_all:
        md.Add(sum(acc) >= int(target))
    elif not fix_all:
        md.Maximize(sum(acc))
    return Model(md, acc, x, a, g, z, rows)


def _paths(md: Any, instance: Instance, x: dict[tuple[int, int], Any]
           ) -> tuple[dict[tuple[int, int, int, int], Any], dict[tuple[int, int], Any]]:
    """Racks used, one candidate path per rack pair used, links charged (section 3.1
    constraint 3, the union rule); returns (z, y)."""
    net = instance.net
    n, R = len(instance.requests), net.n_racks
    z: dict[tuple[int, int, int, int], Any] = {}
    y: dict[tuple[int, int], Any] = {}
    for i in range(n):
        w = []
        for r in range(R):
            xs = [x[i, int(s)] for s in net.rack_servers[r] if (i, int(s)) in x]
            wr = md.NewBoolVar(f"w{i}_{r}")
            md.AddMaxEquality(wr, xs) if xs else md.Add(wr == 0)
            w.append(wr)
        users: dict[int, list[Any]] = {}
        for (ra, rb), plist in net.cand.items():
            both = md.NewBoolVar(f"both{i}_{ra}_{rb}")
            md.AddMultiplicationEquality(both, [w[ra], w[rb]])
            zs = []
            for p, links in enumerate(plist):
                z[i, ra, rb, p] = zp = md.NewBoolVar(f"z{i}_{ra}_{rb}_{p}")
                zs.append(zp)
                for e in links:
                    users.setdefault(int(e), []).append(zp)
            md.Add(sum(zs) == both)
        for e, zs in users.items():
            y[i, e] = md.NewBoolVar(f"y{i}_{e}")
            md.AddMaxEquality(y[i, e], zs)
    return z, y


def _capacities(md: Any, instance: Instance, x: dict, a: dict, g: dict, v: dict, y: dict,
                redundant: bool) -> dict[str, int]:
    """CPU, memory and access-link rows per maximal active set and server, link rows per
    maximal active set and link, and (``redundant``) the access-link conflict cliques."""
    from dmlopt.models.nara.formulations import _conflict_cliques

    net = instance.net
    reqs = instance.requests
    S = net.n_servers
    den, b_int, cap_int = scale_bandwidth([r.b for r in reqs], [float(c) for c in net.cap])
    rows = {"steps": 0, "capacity": 0, "cliques": 0}
    for act in maximal_sets(instance.active_sets()):
        rows["steps"] += 1
        for s in range(S):
            on = [i for i in act if (i, s) in x]
            if not on:
                continue
            md.Add(sum(a[i, s] for i in on) <= int(net.cpu[s]))
            md.Add(sum(g[i, s] for i in on) <= int(net.mem[s]))
            e = int(net.access[s])
            bw = [i for i in on if b_int[i] > 0]
            if bw and sum(b_int[i] for i in bw) > cap_int[e]:
                md.Add(sum(b_int[i] * v[i, s] for i in bw) <= cap_int[e])
                rows["capacity"] += 1
                if redundant:
                    bs = {i: b_int[i] / den for i in bw}
                    for k in _conflict_cliques(bs, cap_int[e] / den):
                        md.AddAtMostOne([v[i, s] for i in k])
                        rows["cliques"] += 1
            rows["capacity"] += 2
        for e in range(net.n_links):
            on = [i for i in act if (i, e) in y and b_int[i] > 0]
            if on and sum(b_int[i] for i in on) > cap_int[e]:
                md.Add(sum(b_int[i] * y[i, e] for i in on) <= cap_int[e])
                rows["capacity"] += 1
    return rows


def _first_use(md: Any, instance: Instance, x: dict) -> int:
    """First-use rows of the identical servers of a rack (module docstring); their count."""
    n = len(instance.requests)
    count = 0
    for grp in first_use_groups(instance):
        for s0, s1 in zip(grp[:-1], grp[1:], strict=True):
            for i in range(n):
                if (i, s1) not in x:
                    continue
                before = [x[h, s0] for h in range(i + 1) if (h, s0) in x]
                md.AddBoolOr(before + [x[i, s1].Not()])
                count += 1
    return count


def _aggregate(md: Any, instance: Instance, acc: list[Any]) -> int:
    """The rows of the ``aggregate`` bound in the acceptances, coefficients multiplied by
    :data:`AGG_SCALE` and rounded down, right-hand sides rounded down (valid: acc >= 0 and
    the left side is an integer); their count."""
    from dmlopt.models.nara.bounds import aggregate_rows

    index, coef, rhs = aggregate_rows(instance)
    for idx, cf, b in zip(index, coef, rhs, strict=True):
        md.Add(sum(int(math.floor(c * AGG_SCALE)) * acc[i] for i, c in zip(idx, cf, strict=True))
               <= int(math.floor(b * AGG_SCALE)))
    return len(rhs)


def hint(built: Model, instance: Instance, solution: Solution) -> None:
    """Give CP-SAT ``solution`` (relabelled by first use, :func:`relabel`) as a hint: the
    acceptances, servers and amounts.

    Parameters
    ----------
    built : Model
        The model of :func:`build`.
    instance : Instance
        Its episode.
    solution : Solution
        An allocation of the episode (need not be feasible: a hint is only a hint).

    Returns
    -------
    None

    References
    ----------
    Ours.
    """
    sol = relabel(instance, solution)
    md = built.model
    for i, al in enumerate(sol.allocations):
        md.AddHint(built.acc[i], int(al is not None))
        got = {} if al is None else {s: (c, m) for s, c, m in
                                     zip(al.servers, al.cpu, al.mem, strict=True)}
        for (ii, s), xs in built.x.items():
            if ii != i:
                continue
            c, m = got.get(s, (0, 0))
            md.AddHint(xs, int(s in got))
            md.AddHint(built.a[i, s], int(c))
            md.AddHint(built.g[i, s], int(m))


def decode(built: Model, solver: Any, instance: Instance) -> Solution:
    """The allocation of a CP-SAT solution: servers, amounts and the path of every rack pair
    (the same path for every server pair of those racks; one route 0 within a rack).

    Parameters
    ----------
    built : Model
        The model of :func:`build`.
    solver : ortools.sat.python.cp_model.CpSolver
        A solver holding a solution of it.
    instance : Instance
        Its episode.

    Returns
    -------
    Solution
        To be evaluated by the caller.

    References
    ----------
    Ours.
    """
    net = instance.net
    allocs: list[Allocation | None] = []
    for i in range(len(instance.requests)):
        if not solver.BooleanValue(built.acc[i]):
            allocs.append(None)
            continue
        servers, cpu, mem = [], [], []
        for s in range(net.n_servers):
            if (i, s) in built.x and solver.BooleanValue(built.x[i, s]):
                servers.append(s)
                cpu.append(int(solver.Value(built.a[i, s])))
                mem.append(int(solver.Value(built.g[i, s])))
        routes = []
        for s, t in combinations(servers, 2):
            ra, rb = sorted((int(net.rack[s]), int(net.rack[t])))
            ps = [p for p in range(len(net.cand.get((ra, rb), [])))
                  if ra != rb and solver.BooleanValue(built.z[i, ra, rb, p])]
            routes.append(ps[0] if ps else 0)
        allocs.append(Allocation(servers=servers, cpu=cpu, mem=mem, routes=routes))
    return Solution(allocations=allocs)


@dataclass
class Result:
    """What :func:`solve` returns."""

    status: str
    bound: float
    solution: Solution | None
    objective: float
    metrics: dict[str, float]


def _check_args(time_limit: float, workers: int) -> None:
    """Refuse a time limit that is not a finite number > 0 and a worker count below 1."""
    if isinstance(time_limit, bool) or not isinstance(time_limit, int | float) or not (
            0 < time_limit < math.inf):
        raise InstanceError("time_limit", time_limit, "must be a finite number of seconds > 0")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InstanceError("workers", workers, "must be an integer >= 1")


def solve(instance: Instance, *, time_limit: float, workers: int = 1,
          target: int | None = None, upper: int | None = None, start: Solution | None = None,
          fix_all: bool = False, symmetry: bool = True, redundant: bool = True,
          progress: Any = None) -> Result:
    """Solve the CP-SAT model of ``instance`` (module docstring).

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    time_limit : float
        Seconds (wall clock) for CP-SAT.
    workers : int
        CP-SAT workers (``num_workers``; default 1).
    target, upper, fix_all, symmetry, redundant
        As in :func:`build`.
    start : Solution, optional
        A hint (:func:`hint`).
    progress : callable, optional
        Called as ``progress(seconds, objective, bound)`` at every improving solution (only
        when maximising).

    Returns
    -------
    Result
        ``status``: "optimal", "feasible", "infeasible" (a proof), "unknown" (nothing proven)
        or "invalid"; ``bound``: CP-SAT's proven upper bound on the accepted requests (the
        number of requests when nothing is proven; ``target - 1`` after "infeasible" of a
        target question; -inf after "infeasible" of a set check); ``solution``: the decoded
        allocation (to be evaluated by the caller) or None; ``objective``: its count as
        CP-SAT sees it; metrics: ``wall``, ``branches``, ``conflicts``, and the row counts.

    References
    ----------
    Ours; L. Perron and F. Didier, OR-Tools CP-SAT (solver parameters ``max_time_in_seconds``,
    ``num_workers``).
    """
    _check_args(time_limit, workers)
    from ortools.sat.python import cp_model

    t0 = time.monotonic()
    built = build(instance, fix_all=fix_all, target=target, upper=upper, symmetry=symmetry,
                  redundant=redundant)
    if start is not None:
        hint(built, instance, start)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(float(time_limit) - (time.monotonic() - t0),
                                                1e-3)
    solver.parameters.num_workers = int(workers)
    if progress is not None and target is None and not fix_all:
        code = solver.Solve(built.model, _progress(progress, t0))
    else:
        code = solver.Solve(built.model)
    status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
              cp_model.INFEASIBLE: "infeasible", cp_model.UNKNOWN: "unknown"}.get(code,
                                                                                "invalid")
    n = len(instance.requests)
    sol, obj = None, -math.inf
    if status in ("optimal", "feasible"):
        sol = decode(built, solver, instance)
        obj = float(sol.accepted)
    if status == "infeasible":
        bound = -math.inf if fix_all else float((target if target is not None else 0) - 1)
    elif status == "optimal" and target is None and not fix_all:
        bound = float(round(solver.ObjectiveValue()))
    elif status == "feasible" and target is None and not fix_all:
        bound = float(math.floor(solver.BestObjectiveBound() + 1e-6))
    else:
        bound = float(n if upper is None else min(n, upper))
    metrics = {"wall": time.monotonic() - t0, "branches": float(solver.NumBranches()),
               "conflicts": float(solver.NumConflicts())}
    metrics.update({k: float(v) for k, v in built.rows.items()})
    return Result(status, bound, sol, obj, metrics)


def _progress(report: Any, t0: float) -> Any:
    """A CP-SAT solution callback calling ``report(seconds, objective, bound)``."""
    from ortools.sat.python import cp_model

    class Callback(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            report(time.monotonic() - t0, self.ObjectiveValue(), self.BestObjectiveBound())

    return Callback()


def allocate_set(instance: Instance, members: list[int], *, time_limit: float,
                 workers: int = 1) -> tuple[str, Solution | None]:
    """Decide whether the requests ``members`` can all be allocated together: the CP-SAT
    model of the restricted episode (:func:`dmlopt.models.nara.exact.sub_episode`) with every
    request accepted.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices.
    time_limit : float
        Seconds (wall clock) for CP-SAT.
    workers : int
        CP-SAT workers (default 1).

    Returns
    -------
    (outcome, solution)
        :data:`FITS` and the allocation (a solution of ``instance`` accepting exactly
        ``members``, to be evaluated by the caller), :data:`CUT` (CP-SAT's status INFEASIBLE:
        no allocation accepts all of them) or :data:`UNDECIDED` (UNKNOWN at the time limit:
        nothing is proven), None.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1 (constraints 1-3); ours: the set check of
    ``acceptance-sets`` by CP-SAT.
    """
    from dmlopt.models.nara.exact import lift, sub_episode

    _check_args(time_limit, workers)
    n = len(instance.requests)
    if not members or any(isinstance(i, bool) or not 0 <= i < n for i in members):
        raise InstanceError("members", list(members),
                            f"must name at least one request, each in 0..{n - 1}")
    sub = sub_episode(instance, members)
    res = solve(sub, time_limit=time_limit, workers=workers, fix_all=True)
    if res.status == "infeasible":
        return CUT, None
    if res.solution is not None and res.solution.accepted == len(members):
        return FITS, lift(instance, members, list(res.solution.allocations))
    return UNDECIDED, None
