"""Paper 003, MinCU at 10 requests on the 6-node network: three more routes to a proof, measured.

The reference library's frontier (``cpn6-r10-mincu-sS``, docs/references.md) has seven seeds
that ``aggregated`` does not prove in 600 s. This study measures, per seed, in CUs (objective
x sum |C_n|; the objective is blocked x 6 + activated CUs on this network):

* ``lp``: the LP relaxation of ``aggregated`` (it equals the area bound: every node's usage is
  flat over the 12 slots);
* ``clique``: that LP plus, per node n, A_n >= sum of k over a clique of (request, CUs k,
  duration d) items that must overlap in time whatever their starts (two items of different
  requests must overlap when neither fits before the other inside the windows; intervals that
  pairwise overlap share a slot, so the clique's CUs are all in use there); valid rows;
* ``start-free``: a relaxation solved as a MIP: node sets, modes and integer peaks exactly as
  in ``aggregated``, but no start slots; instead, per node and slot interval [t1, t2], the CU
  slots that each (request, mode) must spend inside [t1, t2] whatever its start (its least
  overlap) are at most (t2 - t1 + 1) A_n. It drops only the condition that a request's nodes
  share one window, so its optimum is a lower bound;
* ``cpsat`` (only if ``ortools`` is installed, it is no dependency of dmlopt): CP-SAT on one
  worker with an optional interval per (request, mode, node) and one cumulative per node whose
  capacity is the node's activated CUs; status, best and bound after ``--cpsat-seconds``.

Seconds are CPU seconds of this process (the machine may be shared).

    python -m benchmarks.studies.rar.mincu_frontier -o DIR --seeds 0-9 \\
        --mip-seconds 120 --cpsat-seconds 120
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from fractions import Fraction
from typing import Any

from dmlopt.models import rar
from dmlopt.models.rar.instance import Instance, modes

from .. import ArgumentParser, output_dir, parse_seeds, tee
from .cpsat import least_overlap, node_sets


def must_overlap(a1: int, b1: int, d1: int, a2: int, b2: int, d2: int) -> bool:
    """True if windows of d1 slots in [a1, b1] and d2 slots in [a2, b2] always share a slot."""
    return not (a1 + d1 - 1 < b2 - d2 + 1 or a2 + d2 - 1 < b1 - d1 + 1)


def _mode_list(inst: Instance, j: int, sets: list[tuple[int, ...]]) -> list[tuple[int, int, int]]:
    k_max = max(nd.cus for nd in inst.nodes)
    sizes = {len(s) for s in sets}
    return [md for md in modes(inst, j, k_max) if md[0] in sizes]


def build_start_free(inst: Instance) -> Any:
    """The ``start-free`` relaxation (module docstring) as a Pyomo MIP, objective eq. (4)."""
    import pyomo.environ as pyo

    nr, T = len(inst.requests), inst.slots
    S = {j: node_sets(inst, j) for j in range(nr)}
    MD = {j: _mode_list(inst, j, S[j]) for j in range(nr)}
    JN = sorted({(j, n) for j in range(nr) for s in S[j] for n in s})
    JNM = [(j, n, i) for j, n in JN for i, md in enumerate(MD[j]) if inst.nodes[n].cus >= md[1]]
    m = pyo.ConcreteModel()
    m.x = pyo.Var([(j, i) for j in range(nr) for i in range(len(S[j]))], domain=pyo.Binary)
    m.md = pyo.Var([(j, i) for j in range(nr) for i in range(len(MD[j]))], domain=pyo.Binary)
    m.v = pyo.Var(JNM, bounds=(0, 1))  # node n computes request j in mode i (integral if x, md)
    m.A = pyo.Var(range(len(inst.nodes)), domain=pyo.NonNegativeIntegers,
                  bounds=lambda m, n: (0, inst.nodes[n].cus))
    m.c = pyo.ConstraintList()
    eta = {j: sum(m.x[j, i] for i in range(len(S[j]))) for j in range(nr)}
    for j in (j for j in range(nr) if S[j]):  # a request without a node set stays blocked
        m.c.add(eta[j] <= 1)
        for nn in {len(s) for s in S[j]}:
            m.c.add(sum(m.md[j, i] for i, md in enumerate(MD[j]) if md[0] == nn)
                    == sum(m.x[j, i] for i, s in enumerate(S[j]) if len(s) == nn))
        for i, md in enumerate(MD[j]):
            m.c.add(sum(m.v[jj, n, ii] for jj, n, ii in JNM if jj == j and ii == i)
                    == md[0] * m.md[j, i])
    for j, n in JN:
        m.c.add(sum(m.v[jj, nn, i] for jj, nn, i in JNM if (jj, nn) == (j, n))
                == sum(m.x[j, i] for i, s in enumerate(S[j]) if n in s))
    for j, n, i in JNM:
        m.c.add(m.v[j, n, i] <= m.md[j, i])
        m.c.add(m.A[n] >= MD[j][i][1] * m.v[j, n, i])
    for n in range(len(inst.nodes)):
        for t1, t2 in itertools.combinations_with_replacement(range(1, T + 1), 2):
            terms = []
            for j, nn, i in JNM:
                r, (_, k, d) = inst.requests[j], MD[j][i]
                o = least_overlap(r.arrival, r.deadline, d, t1, t2) if nn == n else 0
                if o:
                    terms.append(k * o * m.v[j, n, i])
            if terms:
                m.c.add(sum(terms) <= (t2 - t1 + 1) * m.A[n])
    m.obj = pyo.Objective(expr=(1 - sum(eta.values()) / nr)
                          + inst.alpha_of() * sum(m.A[n] for n in m.A))
    return m


def add_cliques(m: Any, inst: Instance) -> int:
    """The ``clique`` rows (module docstring) added to a built ``aggregated`` model; their
    number of maximal cliques."""
    import networkx as nx
    import pyomo.environ as pyo

    ms = m._rar_modes
    items = sorted({(j, k, d) for j in ms for (_, k, d, _) in ms[j]})
    g = nx.Graph()
    g.add_nodes_from(items)
    for (j1, k1, d1), (j2, k2, d2) in itertools.combinations(items, 2):
        r1, r2 = inst.requests[j1], inst.requests[j2]
        if j1 == j2 or must_overlap(r1.arrival, r1.deadline, d1, r2.arrival, r2.deadline, d2):
            g.add_edge((j1, k1, d1), (j2, k2, d2))
    cliques = [c for c in nx.find_cliques(g) if len({j for j, _, _ in c}) > 1]
    by_key: dict[tuple[int, int, int, int], list] = {}
    for j, n, q in m.w:
        _, k, d, _ = ms[j][q]
        by_key.setdefault((j, n, k, d), []).append(m.w[j, n, q])
    m.cliques = pyo.ConstraintList()
    for n in m.A:
        for c in cliques:
            terms = [k * w for j, k, d in c for w in by_key.get((j, n, k, d), [])]
            if terms:
                m.cliques.add(m.A[n] >= sum(terms))
    return len(cliques)


def _highs(m: Any, seconds: float | None, relax: bool) -> tuple[float, float, float]:
    """(objective, bound, CPU s) of m with HiGHS on one thread."""
    import pyomo.environ as pyo
    from pyomo.contrib.solver.common.factory import SolverFactory

    if relax:
        pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    c0 = time.process_time()
    opts = {"threads": 1, "load_solutions": False, "raise_exception_on_nonoptimal_result": False}
    if seconds is not None:
        opts["time_limit"] = seconds
    res = SolverFactory("highs").solve(m, **opts)
    obj = res.incumbent_objective if res.incumbent_objective is not None else math.inf
    bound = res.objective_bound if res.objective_bound is not None else obj
    return obj, bound if not relax else obj, time.process_time() - c0


def cpsat(inst: Instance, seconds: float) -> tuple[str, float, float, float]:
    """(status, best, bound, CPU s) in objective units of CP-SAT on one worker (module
    docstring); raises ImportError without ``ortools``, ValueError where wavelengths can bind
    (the model has none: ``|R| <= rho min_l |W_l|`` and not MinW is required)."""
    from ortools.sat.python import cp_model

    from dmlopt.models.rar.formulations import _wavelengths_never_bind

    if not _wavelengths_never_bind(inst) or inst.scheme != "MinCU":
        raise ValueError(f"cpsat: instance {inst.name} is not MinCU with wavelengths that "
                         "never bind (|R| <= rho min_l |W_l|)")

    md = cp_model.CpModel()
    nr = len(inst.requests)
    A = [md.NewIntVar(0, nd.cus, f"A{n}") for n, nd in enumerate(inst.nodes)]
    per_node: dict[int, tuple[list, list]] = {n: ([], []) for n in range(len(inst.nodes))}
    eta = []
    for j, r in enumerate(inst.requests):
        sets = node_sets(inst, j)
        xs = [md.NewBoolVar(f"x{j}_{i}") for i in range(len(sets))]
        eta.append(md.NewBoolVar(f"eta{j}"))
        md.Add(sum(xs) == eta[j])
        y = {n: md.NewBoolVar(f"y{j}_{n}") for n in sorted({v for s in sets for v in s})}
        for n, yn in y.items():
            md.Add(yn == sum(x for x, s in zip(xs, sets, strict=True) if n in s))
        mds = _mode_list(inst, j, sets)
        mv = [md.NewBoolVar(f"m{j}_{i}") for i in range(len(mds))]
        for nn in {len(s) for s in sets}:
            md.Add(sum(v for v, (a, _, _) in zip(mv, mds, strict=True) if a == nn)
                   == sum(x for x, s in zip(xs, sets, strict=True) if len(s) == nn))
        start = md.NewIntVar(r.arrival, r.deadline, f"s{j}")
        for v, (_, k, d) in zip(mv, mds, strict=True):
            md.Add(start + d - 1 <= r.deadline).OnlyEnforceIf(v)
            for n, yn in y.items():
                if inst.nodes[n].cus < k:
                    md.AddImplication(v, yn.Not())
                    continue
                z = md.NewBoolVar("")
                md.AddMultiplicationEquality(z, [v, yn])
                per_node[n][0].append(md.NewOptionalFixedSizeIntervalVar(start, d, z, ""))
                per_node[n][1].append(k)
    for n, (ivs, ks) in per_node.items():
        md.AddCumulative(ivs, ks, A[n])
    alpha = Fraction(inst.alpha_of()).limit_denominator(10**6)
    den = math.lcm(nr, alpha.denominator)
    cb, ca = den // nr, int(alpha * den)
    md.Minimize(cb * sum(1 - e for e in eta) + ca * sum(A))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = seconds
    c0 = time.process_time()
    status = solver.Solve(md)
    cpu = time.process_time() - c0
    return (solver.StatusName(status), solver.ObjectiveValue() / den,
            solver.BestObjectiveBound() / den, cpu)


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.rar.mincu_frontier",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (rar_mincu_frontier.md, created)")
    ap.add_argument("--seeds", default="0-9", help="cpn6 seeds, as 0-9 or 0,3,5 (default 0-9)")
    ap.add_argument("--requests", type=int, default=10, help="requests (default 10)")
    ap.add_argument("--mip-seconds", type=float, default=120.0,
                    help="limit of the start-free MIP, seconds (default 120)")
    ap.add_argument("--cpsat-seconds", type=float, default=0.0,
                    help="CP-SAT limit, seconds; 0 (default) skips it")
    args = ap.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    out = output_dir(args.out)
    with tee(out / "rar_mincu_frontier.md"):
        _run(args, seeds)


def _run(args: argparse.Namespace, seeds: list[int]) -> None:
    print("| seed | lp | clique | start-free (bound) | CPU s | cpsat status | best | bound "
          "| CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for seed in seeds:
        inst = rar.generate_cpn6(seed=seed, requests=args.requests, scheme="MinCU")
        scale = float(inst.total_cus)
        lp, _, _ = _highs(rar.build_aggregated(inst), None, True)
        m = rar.build_aggregated(inst)
        add_cliques(m, inst)
        cl, _, _ = _highs(m, None, True)
        _, sf, sf_cpu = _highs(build_start_free(inst), args.mip_seconds, False)
        row = f"| {seed} | {lp * scale:.2f} | {cl * scale:.2f} | {sf * scale:.2f} | {sf_cpu:.1f}"
        if args.cpsat_seconds > 0:
            try:
                st, best, bnd, cpu = cpsat(inst, args.cpsat_seconds)
                row += f" | {st} | {best * scale:.0f} | {bnd * scale:.0f} | {cpu:.1f} |"
            except ImportError:
                row += " | no ortools | - | - | - |"
        else:
            row += " | - | - | - | - |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
