"""RAR (paper 003): price-and-branch, the restricted master of `columns` solved as a MIP.

Which side of the MinT and MaxR gaps is loose at 500 requests (issue 55)? A primal method
built on the bound: column generation on the ``config`` LP (:func:`dmlopt.models.rar.colgen.
column_generation`, the bound ``columns``) runs until it converges (or its time limit); then
the restricted master - its generated columns plus the columns of ``rdda-pack``'s solution -
is solved as a MIP (HiGHS, one thread, ``--time-limit`` seconds) with binary configuration
columns, started from ``rdda-pack``'s columns (a feasible point of the master).

The master has no wavelength rows, and each of its configurations assumed the most reliable
candidate ring containing its node set. Its selection becomes a RAR solution by
:func:`decode`: requests in order of start (then end) take, on the first ring that works (the
``rdda-pack`` column's own ring first, then the candidate rings containing the node set, most
reliable first), the first wavelength that exists on all the ring's links and carries fewer
than rho requests on each of them in every slot of the window; a request that gets none is
blocked. Then ``rdda-pack``'s insertion step (every blocked request placed if it fits,
otherwise with one ejection, kept only if eq. (4) drops; :func:`dmlopt.heuristics.
rar_schemes._insert`) repairs what it can. Both solutions are scored by the problem's
evaluator (:func:`dmlopt.evaluate`); the MIP's own value is never reported as an objective.
Its dual bound is a bound on the restricted master only, NOT on the problem (columns that
were never generated may do better); the certified bound is ``columns``.

    python -m benchmarks.studies.rar.rmip -o DIR --seeds 0-2 --schemes MinT --time-limit 240
    python -m benchmarks.studies.rar.rmip -o DIR --seeds 0-2 --schemes MaxR --time-limit 150
    python -m benchmarks.studies.rar.rmip -o DIR --seeds 0 --schemes MinT --mip-start none

With a MIP start HiGHS runs without presolve (HiGHS 1.16.0 returned a wrong objective and dual
bound after a start with presolve on these masters, NOTES.md); ``--mip-start none`` runs
presolve without a start and decodes the start's columns when the MIP finds nothing cheaper.
"""

from __future__ import annotations

import csv
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import dmlopt
from dmlopt.models import rar

from .. import ArgumentParser, output_dir, parse_seeds, refuse_bad, tee

#: schemes the study runs: eq. (4) per request, no resource columns in the master
SCHEMES = ("MinT", "MaxR")


@dataclass
class RmipResult:
    """What :func:`rmip` measured on one instance (objectives evaluated, see the module)."""

    start: Any  # rdda-pack's Solution
    start_objective: float
    bound: float  # the certified `columns` bound
    bound_seconds: float
    converged: bool
    columns: int  # generated columns in the master (without rdda-pack's)
    mip_status: str
    mip_seconds: float
    mip_dual_bound: float  # of the restricted master only: NOT a bound on the problem
    mip_own_matches: bool  # HiGHS's objective equals cost . x of the solution it returned
    start_kept: bool  # mip_start "none": the MIP found nothing cheaper, the start's columns used
    chosen: int  # requests the MIP deploys
    decoded: Any  # Solution after the wavelength step
    decoded_objective: float
    wavelength_blocked: list[int] = field(default_factory=list)
    repaired: Any = None  # Solution after rdda-pack's insertion step
    repaired_objective: float = math.inf


def _start_columns(inst: rar.Instance, pool: Any, start: Any) -> tuple[list[tuple], tuple]:
    """The master columns of ``start``'s deployed requests: per request (j, ring index, node
    tuple in ring order, CUs per node, first slot, last slot), and (costs, starts, rows,
    values) for ``Highs.addCols`` (1 in j's convexity row, k in the node-slot rows)."""
    from dmlopt.models.rar.formulations import _canon_ring

    lay = pool.layout
    ring_index = {ring.nodes: k for k, ring in enumerate(inst.rings)}
    alpha = inst.alpha_of()
    out, costs, starts, rows, vals = [], [], [0], [], []
    for j, a in enumerate(start.requests):
        if a is None:
            continue
        ks = {len(ids) for ids in a.cus}
        if len(ks) != 1:
            raise ValueError(f"request {j}: CU counts {sorted(ks)} differ between nodes; the "
                             "decoder packs one count per request")
        kk = ks.pop()
        k = ring_index[_canon_ring(list(a.ring))]
        out.append((j, k, tuple(a.nodes), kk, a.start, a.end))
        cost = (alpha * a.end / inst.requests[j].deadline if inst.scheme == "MinT"
                else alpha * (1.0 - inst.rings[k].reliability))
        costs.append(cost)
        slots = np.arange(a.start - 1, a.end)
        nodes = np.array(a.nodes)
        r = np.concatenate([[j], (lay.node0 + nodes[:, None] * lay.T + slots[None, :]).ravel()])
        rows.append(r)
        vals.append(np.concatenate([[1.0], np.full(len(r) - 1, float(kk))]))
        starts.append(starts[-1] + len(r))
    if not out:
        return out, (np.zeros(0), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32),
                     np.zeros(0))
    return out, (np.array(costs), np.array(starts[:-1], dtype=np.int32),
                 np.concatenate(rows).astype(np.int32), np.concatenate(vals))


def decode(inst: rar.Instance, chosen: dict[int, tuple[list[int], tuple[int, ...], int, int,
                                                         int]]) -> tuple[Any, list[int]]:
    """A packer (:class:`dmlopt.heuristics.rar_pack._Packer`) holding the master's selection.

    Parameters
    ----------
    inst : rar.Instance
        The instance.
    chosen : dict
        Per deployed request j: (rings to try in order, node set, CUs per node, first slot,
        last slot), slots 1-based.

    Returns
    -------
    tuple
        The packer (its ``solution()`` is a RAR Solution) and the requests blocked because
        no ring of theirs had a wavelength free over the window (rho per link, wavelength
        and slot).

    References
    ----------
    Paper 003 (Chen et al.), eqs. (8), (9), (25); ours: the first-fit wavelength order.
    """
    from dmlopt.heuristics.rar_pack import _Packer

    pk = _Packer(inst, inst.scheme)
    blocked = []
    for j in sorted(chosen, key=lambda j: (chosen[j][3], chosen[j][4], j)):
        rings, sub, kk, s, e = chosen[j]
        for k in rings:
            links = list(inst.rings[k].links)
            ok = pk.exists[links].all(axis=0) & (
                pk.load[links, :, s - 1:e].max(axis=(0, 2)) < inst.rho)
            free = np.flatnonzero(ok)
            if free.size:
                pk.commit(j, (k, tuple(sub), kk, s - 1, e - 1, int(free[0])))
                break
        else:
            blocked.append(j)
    return pk, blocked


def _rings_for(inst: rar.Instance, j: int, sub: tuple[int, ...], first: int | None) -> list[int]:
    """Request j's candidate rings containing ``sub``, ``first`` first, then the most reliable
    first (the ring the master assumed)."""
    rings = [k for k in inst.candidate_rings(j) if set(sub) <= set(inst.rings[k].nodes)]
    rings.sort(key=lambda k: (-inst.rings[k].reliability, k))
    if first is not None:
        rings = [first] + [k for k in rings if k != first]
    return rings


def rmip(inst: rar.Instance, *, time_limit: float, columns_time_limit: float = 300.0,
         start: Any = None, mip_start: str = "rdda-pack") -> RmipResult:
    """Price-and-branch on ``inst`` (module docstring): columns, the master MIP, the decoding.

    Parameters
    ----------
    inst : rar.Instance
        A RAR instance under MinT or MaxR.
    time_limit : float
        Seconds of the master MIP.
    columns_time_limit : float
        Seconds of the column generation (``columns``'s time limit).
    start : Solution or None
        The MIP start; None: ``dmlopt.heuristic(inst, "rdda-pack")``.
    mip_start : str
        ``"rdda-pack"``: the start's columns are the MIP start (HiGHS presolve off, see the
        comment at the options); ``"none"``: no MIP start, presolve on, and the start's
        columns are decoded instead of the MIP's selection when that costs more in the
        master (or the MIP found none).

    Returns
    -------
    RmipResult
        Evaluated objectives of the start, the decoded and the repaired solutions, the
        certified bound, and the master MIP's status and dual bound (restricted master only).

    References
    ----------
    Barnhart et al., Oper. Res. 46(3), 1998 (branch-and-price; price-and-branch is its
    heuristic of branching only on the final master); paper 003, eq. (4).
    """
    import highspy

    from dmlopt import solvers
    from dmlopt.heuristics.rar import fewest_cu_slots
    from dmlopt.heuristics.rar_schemes import _insert
    from dmlopt.models.rar import colgen

    if inst.scheme not in SCHEMES:
        raise ValueError(f"scheme {inst.scheme}: the study runs {', '.join(SCHEMES)}")
    if mip_start not in ("rdda-pack", "none"):
        raise ValueError(f"mip_start {mip_start!r}: rdda-pack or none")
    if start is None:
        start = dmlopt.heuristic(inst, "rdda-pack").solution
    ev0 = dmlopt.evaluate(inst, start)
    assert ev0.feasible, ev0.violations[:3]
    t0 = time.perf_counter()
    bv, pool = colgen.column_generation(inst, time_limit=columns_time_limit, links=False)
    bound_seconds = time.perf_counter() - t0
    nr = len(inst.requests)
    assert pool.first_column == nr  # MinT, MaxR: b_j, then the configuration columns
    h = pool.highs
    n_gen = len(pool.columns)
    extra, (costs, starts, rows, vals) = _start_columns(inst, pool, start)
    if extra:
        h.addCols(len(extra), costs, np.zeros(len(extra)), np.ones(len(extra)), len(rows),
                  starts, rows, vals)
    lp = h.getLp()
    n = lp.num_col_
    lp.integrality_ = ([highspy.HighsVarType.kContinuous] * nr
                       + [highspy.HighsVarType.kInteger] * (n - nr))
    solvers.prepare_highs(1)
    m = solvers.highspy_model()
    # presolve off: with a MIP start, HiGHS 1.16.0's presolve returns a wrong objective and
    # dual bound on these masters (16 requests, MinT seed 0: 0.6818 for a solution of cost
    # 0.7922, the start; 0.7769 without the start or without presolve), the fault of NOTES.md
    for key, value in (("output_flag", False), ("threads", 1), ("time_limit", float(time_limit)),
                       ("mip_rel_gap", 1e-6)):
        m.setOptionValue(key, value)
    if mip_start == "rdda-pack":
        m.setOptionValue("presolve", "off")
    solvers.pass_model(m, lp)
    x0 = np.zeros(n)
    x0[:nr] = 1.0
    for i, (j, *_rest) in enumerate(extra):
        x0[nr + n_gen + i] = 1.0
        x0[j] = 0.0
    sol0 = highspy.HighsSolution()
    sol0.col_value = list(x0)
    sol0.value_valid = True
    if mip_start == "rdda-pack":
        m.setSolution(sol0)
    t1 = time.perf_counter()
    solvers.run_highspy(m)
    mip_seconds = time.perf_counter() - t1
    status = m.modelStatusToString(m.getModelStatus())
    info = m.getInfo()
    x = np.asarray(m.getSolution().col_value)
    cost = np.asarray(lp.col_cost_)
    own = float(cost @ x) + float(lp.offset_) if len(x) == n else math.inf
    matches = abs(own - float(info.objective_function_value)) <= 1e-7 * max(1.0, abs(own))
    kept = False
    if mip_start == "none" and not own < float(cost @ x0) + float(lp.offset_) - 1e-12:
        x, kept = x0, True
    chosen: dict[int, tuple[list[int], tuple[int, ...], int, int, int]] = {}
    for c in np.flatnonzero(x[nr:] > 0.5):
        if c < n_gen:
            j, p, kk, d, st = pool.columns[c]
            rq = pool.requests[j]
            sub, first, s, e = rq.sets[p], None, st, st + d - 1
        else:
            j, first, sub, kk, s, e = extra[c - n_gen]
        assert j not in chosen, f"request {j} chosen twice"
        sub = tuple(sorted(sub))
        chosen[j] = (_rings_for(inst, j, sub, first), sub, kk, s, e)
    pk, wl_blocked = decode(inst, chosen)
    decoded = pk.solution()
    ev1 = dmlopt.evaluate(inst, decoded)
    assert ev1.feasible, ev1.violations[:3]  # the master's CU rows and decode's wavelengths
    fewest = [fewest_cu_slots(inst, j) for j in range(nr)]
    _insert(pk, fewest, 8)
    repaired = pk.solution()
    ev2 = dmlopt.evaluate(inst, repaired)
    assert ev2.feasible, ev2.violations[:3]
    return RmipResult(start, ev0.objective, float(bv.bound), bound_seconds,
                      bool(bv.metrics["converged"]), n_gen, status, mip_seconds,
                      float(info.mip_dual_bound), matches, kept, len(chosen), decoded,
                      ev1.objective, wl_blocked, repaired, ev2.objective)


def _blocked(inst: rar.Instance, sol: Any) -> int:
    """Blocked requests of a solution."""
    return sum(a is None for a in sol.requests)


def add_instance_args(ap: ArgumentParser) -> None:
    """The options that pick the ``cpn38`` instances (``--seeds``, ``--schemes``,
    ``--requests``, ``--slots``, ``--cu-scale``), shared by rmip and dive."""
    ap.add_argument("--seeds", default="0-2", help="e.g. 0-2 or 0,3,5")
    ap.add_argument("--schemes", default="MinT", help="comma-separated, of MinT, MaxR")
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--slots", type=int, default=None, help="cpn38's slots (default its own)")
    ap.add_argument("--cu-scale", type=float, default=None,
                    help="cpn38's cu_scale (default its own)")


def instance_checks(args: Any) -> list[tuple[str, Any, bool, str]]:
    """:func:`benchmarks.studies.refuse_bad` checks of :func:`add_instance_args`' options."""
    schemes = args.schemes.split(",")
    return [("--schemes", args.schemes, all(s in SCHEMES for s in schemes),
             f"a comma-separated list of {', '.join(SCHEMES)}"),
            ("--requests", args.requests, args.requests >= 1, "at least 1")]


def seconds_check(flag: str, value: float) -> tuple[str, float, bool, str]:
    """The :func:`benchmarks.studies.refuse_bad` check of a time limit: finite and > 0."""
    return flag, value, 0 < value < math.inf, "a number of seconds > 0"


def instances(args: Any) -> Any:
    """``(scheme, seed, instance)`` for every scheme and seed of :func:`add_instance_args`'
    options, in that order."""
    for scheme in args.schemes.split(","):
        for seed in parse_seeds(args.seeds):
            spec: dict[str, Any] = {"generator": "cpn38", "requests": args.requests,
                                    "scheme": scheme}
            if args.slots is not None:
                spec["slots"] = args.slots
            if args.cu_scale is not None:
                spec["cu_scale"] = args.cu_scale
            yield scheme, seed, dmlopt.generate("rar", spec, seed=seed)


def write_csv(path: Any, header: tuple[str, ...], records: list[tuple]) -> None:
    """The study's rows as CSV."""
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(records)


HEADER = ("scheme", "seed", "rdda-pack", "blocked", "columns bound", "bound s", "converged",
          "columns", "MIP status", "MIP s", "master MIP dual bound (not a problem bound)",
          "HiGHS objective = cost.x", "MIP deploys", "decoded", "blocked (of them by wavelengths)",
          "repaired", "blocked", "repaired - rdda-pack (u)", "repaired - bound (u)")


def main(argv: list[str] | None = None) -> None:
    """Command line: ``-o DIR --seeds 0-2 --schemes MinT,MaxR --time-limit 240``.

    Parameters
    ----------
    argv : list of str or None
        Arguments (default: sys.argv).

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003), section 6 (the 38-node network, 500 requests).
    """
    ap = ArgumentParser(prog="python -m benchmarks.studies.rar.rmip",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for the results (rar_rmip.md and rar_rmip.csv, created)")
    add_instance_args(ap)
    ap.add_argument("--time-limit", type=float, default=240.0,
                    help="seconds of the master MIP (default 240)")
    ap.add_argument("--columns-time-limit", type=float, default=300.0,
                    help="seconds of the column generation (default 300)")
    ap.add_argument("--mip-start", default="rdda-pack", choices=("rdda-pack", "none"),
                    help="rdda-pack: its columns start the MIP (presolve off); none: no start, "
                    "presolve on, the start's columns used if the MIP finds nothing cheaper")
    args = ap.parse_args(argv)
    parse_seeds(args.seeds)  # a bad list exits 2 before any work
    refuse_bad([*instance_checks(args),
                seconds_check("--time-limit", args.time_limit),
                seconds_check("--columns-time-limit", args.columns_time_limit)])
    out = output_dir(args.out)
    records = []
    with tee(out / "rar_rmip.md"):
        print("| " + " | ".join(HEADER) + " |")
        print("|" + "---|" * len(HEADER))
        for scheme, seed, inst in instances(args):
            res = rmip(inst, time_limit=args.time_limit,
                       columns_time_limit=args.columns_time_limit, mip_start=args.mip_start)
            u = rar.blocked_cost(inst)
            row = (scheme, seed, f"{res.start_objective:.6f}", _blocked(inst, res.start),
                   f"{res.bound:.6f}", f"{res.bound_seconds:.1f}",
                   "yes" if res.converged else "no", res.columns, res.mip_status,
                   f"{res.mip_seconds:.1f}", f"{res.mip_dual_bound:.6f}",
                   ("yes" if res.mip_own_matches else "NO (HiGHS fault)")
                   + (", start kept" if res.start_kept else ""), res.chosen,
                   f"{res.decoded_objective:.6f}",
                   f"{_blocked(inst, res.decoded)} ({len(res.wavelength_blocked)})",
                   f"{res.repaired_objective:.6f}", _blocked(inst, res.repaired),
                   f"{(res.repaired_objective - res.start_objective) / u:.2f}",
                   f"{(res.repaired_objective - res.bound) / u:.2f}")
            print("| " + " | ".join(str(v) for v in row) + " |", flush=True)
            records.append(row)
    write_csv(out / "rar_rmip.csv", HEADER, records)


if __name__ == "__main__":
    main()
