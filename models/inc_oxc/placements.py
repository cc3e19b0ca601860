"""INC/OXC (paper 002): the placements bounds (``placements``, ``placements-static``).

The feasibility MILP "some solution reaches f" at a fixed f (linear because f is fixed), and the
bisection on f over it. Registered in :data:`dmlopt.models.inc_oxc.bounds.BOUNDS`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pydantic

from dmlopt import solvers
from dmlopt.bounds import safe
from dmlopt.contract import BoundValue, Options, Size
from dmlopt.models.inc_oxc.constants import SENSE, TOL
from dmlopt.models.inc_oxc.hosting import capped_count
from dmlopt.models.inc_oxc.instance import Instance
from dmlopt.models.inc_oxc.jobs import (
    _ABS,
    fit_counts,
    jobs_bound,
)


def fixed_f_model(instance: Instance, f: float, *, static: bool = True) -> Any:
    """The feasibility MILP "some solution reaches f" (HiGHS model), linear because f is fixed.

    Variables: y_itk = 1 when job i's PS runs in rack t on a server (k = 0) or on the PDP
    switch (k = 1); x_istk >= 0 integer, job i's workers in rack s with that PS place
    (sum_s x_istk = m_i y_itk); c_st = c_ts circuits (integer when ``static``, else
    time-averaged). Every worker carries its least rate a_ik f, so (1), (2), (10), (12), (13)
    are linear. Workers of a job must be identical (the generators' jobs are).

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance, every job's workers identical.
    f : float
        The throughput rate to reach.
    static : bool
        True: integer circuit counts (static port pairings); False: fractional ones (also a
        time-shared OXC).

    Returns
    -------
    tuple
        (highspy.Highs model, one thread, no output, not yet run; its layout: per job a list
        of (t, server, y column, [(s, x column), ...]), and the circuit columns of the rack
        pairs s < t in lexicographic order first).

    References
    ----------
    Paper 002, section II-B, eqs. (1)-(13); at a fixed f the products r_i x of eqs. (10)-(13)
    are linear.
    """
    import highspy

    A = instance.arrays
    R, P, B = instance.n_racks, instance.n_tor, instance.port_bw
    J = len(instance.jobs)
    NB = instance.capacity * (1 + TOL) + _ABS
    capres = A["cap"] * (1 + TOL) + _ABS
    for i in range(J):
        if len(instance.worker_classes(i)) != 1:
            from dmlopt.errors import InstanceError

            raise InstanceError(f"jobs[{i}].workers", f"{len(instance.worker_classes(i))} "
                                "kinds", "the fixed-f model (placements bounds) needs "
                                "identical workers per job")
    inf = highspy.kHighsInf
    cols_lo, cols_hi, integ = [], [], []
    entries: list[tuple[int, int, float]] = []          # (row, col, value)
    rows_lo: list[float] = []
    rows_hi: list[float] = []

    def var(lo: float, hi: float, integer: bool) -> int:
        cols_lo.append(lo)
        cols_hi.append(hi)
        integ.append(integer)
        return len(cols_lo) - 1

    def row(lo: float, hi: float) -> int:
        rows_lo.append(lo)
        rows_hi.append(hi)
        return len(rows_lo) - 1

    res = np.array([[row(-inf, float(capres[k, q])) for q in range(3)] for k in range(R)])
    wside = [row(-inf, NB) for _ in range(R)]
    pside = [row(-inf, NB) for _ in range(R)]
    slot = [row(-inf, float(A["slots"][k])) for k in range(R)]
    load = {(s, t): row(-inf, _ABS) for s in range(R) for t in range(R) if s != t}
    port = [row(-inf, P if static else P * (1 + TOL)) for _ in range(R)]
    for s in range(R):
        for t in range(s + 1, R):
            c = var(0, P, static)
            for key in ((s, t), (t, s)):
                entries.append((load[key], c, -B * (1 + TOL)))
            entries.append((port[s], c, 1.0))
            entries.append((port[t], c, 1.0))
    H = np.stack([fit_counts(instance, i) for i in range(J)])
    layout: list[list] = []
    for i in range(J):
        layout.append([])
        m = int(A["size"][i])
        w = A["wdem"][A["job_of"] == i][0]
        one = row(1, 1)
        for server in (True, False):
            r = 2 * A["data"][i] * (1 + A["alpha"][i] * server) * f
            per_link = capped_count(NB, r, m)  # at most m, finite as r goes to 0
            if per_link <= 0 or (server and per_link < m):
                continue
            for t in range(R):
                if server and not (A["psdem"][i] <= capres[t]).all():
                    continue
                if not server and A["slots"][t] <= 0:
                    continue
                y = var(0, 1, True)
                xs: list[tuple[int, int]] = []
                layout[i].append((t, server, y, xs))
                entries.append((one, y, 1.0))
                assign = row(0, 0)
                entries.append((assign, y, -float(m)))
                if server:
                    for q in range(3):
                        entries.append((int(res[t, q]), y, float(A["psdem"][i, q])))
                    entries.append((pside[t], y, m * r))
                else:
                    entries.append((slot[t], y, 1.0))
                for s in range(R):
                    ub = min(int(H[i, s]), per_link, m)
                    if ub <= 0:
                        continue
                    x = var(0, ub, True)
                    xs.append((s, x))
                    entries.append((assign, x, 1.0))
                    for q in range(3):
                        if w[q]:
                            entries.append((int(res[s, q]), x, float(w[q])))
                    entries.append((wside[s], x, r))
                    if s != t:
                        entries.append((load[(s, t)], x, r))
    return solvers.triplet_model(cols_lo, cols_hi, integ, rows_lo, rows_hi, entries), layout


class PlacementsOptions(Options):
    """Options of the fixed-f MILP bound (``placements``, ``placements-static``)."""

    precision: float = pydantic.Field(
        default=1e-5, gt=0, le=0.5,
        description="relative width of the final bracket on f")


def _reached(instance: Instance, h: Any, layout: list, static: bool) -> tuple[float, Any]:
    """(the f the placement of a solved fixed-f model reaches, the solution when the circuits
    are static and the evaluator accepts it, else None).

    Integer values are rounded; the rate of every worker is the best for the placement and
    its circuits (closed form, ``best_bandwidth``); the f is the evaluator's."""
    from dmlopt.models.inc_oxc.evaluation import best_bandwidth, best_f, evaluate
    from dmlopt.models.inc_oxc.instance import Solution

    R, J = instance.n_racks, len(instance.jobs)
    v = np.asarray(h.getSolution().col_value)
    c = np.zeros((R, R))
    col = 0
    for s in range(R):
        for t in range(s + 1, R):
            c[s, t] = c[t, s] = round(v[col]) if static else max(v[col], 0.0)
            col += 1
    workers: list[list[int]] = []
    ps: list[tuple[int, str]] = []
    for i in range(J):
        racks: list[int] = []
        for t, server, y, xs in layout[i]:
            if v[y] > 0.5:
                ps.append((t, "server" if server else "switch"))
                for s, x in xs:
                    racks += [s] * int(round(v[x]))
        workers.append(racks)
    if len(ps) != J or any(len(w) != len(job.workers) for w, job in zip(workers, instance.jobs,
                                                                         strict=True)):
        return 0.0, None
    wrack = np.array([k for w in workers for k in w], np.int64)
    ps_rack = np.array([t for t, _ in ps], np.int64)
    server = np.array([kind == "server" for _, kind in ps], float)
    reached = best_f(instance, wrack, ps_rack, server, c)
    if not static:
        return reached, None
    from dmlopt.models.inc_oxc.evaluation import ports_from_circuits

    sol = Solution(workers=workers, ps=ps, oxc=ports_from_circuits(instance, c),
                   bandwidth=[[0.0] * len(job.workers) for job in instance.jobs])
    sol = sol.model_copy(update={"bandwidth": best_bandwidth(instance, sol)})
    ev = evaluate(instance, sol)
    return (ev.objective, sol) if ev.feasible else (reached, None)


def placements_bound(instance: Instance, *, static: bool = False, precision: float = 1e-5,
                     time_limit: float | None = None,
                     start: Any = None) -> tuple[float, dict[str, float], Any]:
    """Upper bound on f by bisection with the fixed-f feasibility MILP (:func:`fixed_f_model`).

    The bracket starts at the ``jobs`` bound (``jobs-timeshared`` unless ``static``); f is
    infeasible when HiGHS proves the fixed-f model infeasible, and a feasible model moves the
    lower end to what its placement and circuits reach (closed form), so an optimal solution
    found early ends the search in one more step. Exact for the model, with HiGHS's
    tolerances (the capacities carry the evaluator's own).

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance, every job's workers identical.
    static : bool
        True: integer circuits (static port pairings only); False: fractional ones, valid
        for every solution the evaluator accepts.
    precision : float
        Relative width of the final bracket.
    time_limit : float or None
        Seconds; when reached, the smallest f proven infeasible so far is returned.
        Ctrl-C stops it the same way (metric ``interrupted``), with the best solution so far.
    start : Solution or None
        A solution to begin from: when the evaluator accepts it and it has static circuits
        (no ``oxc_schedule``), the f it reaches is the first lower end (the bisection then
        tests just above it) and it is the best solution until one beats it. It only steers
        the search: the bound comes from infeasibility proofs alone.

    Returns
    -------
    tuple
        (bound on f before the safety margin, metrics: ``reached_f`` is the best f a
        placement found on the way reaches, the best solution found on the way when
        ``static`` (a static port pairing the evaluator accepts) or None).

    References
    ----------
    Paper 002, section II-B, eqs. (1)-(17).
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    hi, _ = jobs_bound(instance, static=static, time_limit=time_limit)
    lo = 0.0
    steps, stopped, jumped, interrupted = 0, 0.0, True, 0.0
    best_obj, best_sol = -math.inf, None
    if start is not None and static and not start.oxc_schedule:
        from dmlopt.models.inc_oxc.evaluation import evaluate

        ev = evaluate(instance, start)
        if ev.feasible and ev.objective > 0:
            best_obj, best_sol = ev.objective, start
            lo = min(hi, ev.objective)
            steps = -1  # the start is the first step: test just above it next
    while hi - lo > precision * hi:
        # the first step tests the start; then downwards by 10 % until a placement is found,
        # then just above what the best placement reaches (usually the optimum: one more
        # step) when the last placement reached more than asked, else the geometric middle
        if steps == 0:
            f = hi * (1 - 0.5 * precision)
        elif steps < 0:
            f = min(lo * (1 + 0.5 * precision), 0.5 * (lo + hi))
            steps = 0
        elif lo <= 0:
            f = 0.9 * hi
        elif jumped:
            f = min(lo * (1 + 0.5 * precision), 0.5 * (lo + hi))
        else:
            f = math.sqrt(lo * hi)
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            stopped = 1.0
            break
        h, layout = fixed_f_model(instance, f, static=static)
        if left is not None:
            h.setOptionValue("time_limit", float(left))
        try:
            solvers.run_highspy(h)
        except KeyboardInterrupt:  # Ctrl-C: the bracket so far holds
            interrupted = 1.0
            break
        steps += 1
        status = h.modelStatusToString(h.getModelStatus())
        if status == "Infeasible":
            hi = f
        elif h.getInfo().primal_solution_status == 2:            # a feasible point
            reached, sol = _reached(instance, h, layout, static)
            if sol is not None and reached > best_obj:
                best_obj, best_sol = reached, sol
            reached = min(hi, reached)
            jumped = reached > f * (1 + precision)
            lo = max(lo, f, reached)
        else:
            stopped = 1.0
            break
    metrics = {"bound_f": hi, "longest_jct_lower": 1.0 / hi if hi > 0 else math.inf,
               "reached_f": lo, "milps": float(steps), "stopped_by_time_limit": stopped,
               "seconds": time.perf_counter() - t0}
    if interrupted:
        metrics["interrupted"] = interrupted
    return hi, {k: v for k, v in metrics.items() if math.isfinite(v)}, best_sol


def _placements_function(static: bool) -> Any:
    def function(instance: Instance, *, time_limit: float | None = None,
                 precision: float = 1e-5, start: Any = None) -> BoundValue:
        """Upper bound on f by bisection with the fixed-f feasibility MILP
        (:func:`placements_bound`; small instances).

        ``placements`` uses fractional circuits (every solution the evaluator accepts);
        ``placements-static`` integer ones (static port pairings only).

        Parameters
        ----------
        instance : Instance
            The INC/OXC instance, every job's workers identical.
        time_limit : float or None, optional
            Seconds; when reached, the smallest f proven infeasible so far is returned
            (default None).
        precision : float, optional
            Relative width of the final bracket on f (default 1e-5).
        start : Solution or None, optional
            A solution to begin from (``dmlopt.solve``'s warm start): a static one the
            evaluator accepts is the bisection's first lower end (default None).

        Returns
        -------
        BoundValue
            The bound on f (1/s), moved by :func:`dmlopt.bounds.safe`; with ``static`` the
            best static placement found on the way as the solution (the core evaluates it);
            metrics ``bound_f``, ``reached_f``, ``milps`` ...

        References
        ----------
        Paper 002, section II-B, eqs. (1)-(17); ours: the bisection on f over the fixed-f
        feasibility model, with the evaluator's tolerances on every capacity.
        """
        value, metrics, sol = placements_bound(instance, static=static, precision=precision,
                                               time_limit=time_limit, start=start)
        return BoundValue(safe(value, SENSE), solution=sol, metrics=metrics)

    return function


def _placements_estimate(instance: Instance, _options: Any) -> Size:
    R, J = instance.n_racks, len(instance.jobs)
    n = 2.0 * J * R * (R + 1) + R * R
    return Size(200.0 * n, 10.0 * n * n)
