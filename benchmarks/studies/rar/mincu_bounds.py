"""Paper 003, MinCU at 10 requests: which strengthening moves the `aggregated` bound.

Diagnostics for the MinCU gap (README, RAR section). For the ``cpn6`` instance (seed
``--seed``) it prints, in CUs (objective x sum |C_n|), the LP relaxation of ``aggregated``:

* ``base``: the model as built (blocking may be fractional);
* ``thresholds``: plus u_{n,c} = [A_n >= c] (binary, non-increasing in c, A_n = sum_c u_{n,c})
  and u_{n,c} >= sum of w_{j,n,q} over the modes q of request j with at least c CUs (valid: a
  request computing on n with k CUs activates at least k of them);
* ``coupled``: plus w_{j,n,q} <= q_{j,q} (a node computes in mode and start q only if the
  request does; without it the LP may give each of a request's N nodes its own mode and start,
  as long as the modes' weights add up);
* ``deploy=K``: plus sum_j eta_j = K with objective sum_n A_n (the objective of eq. 4 is
  blocking/|R| + sum A / sum|C_n|, so the optimum is the best over K of
  (|R| - K) sum|C_n| / |R| + min CUs deploying exactly K; each K has no blocking trade-off);

and with ``--mip-seconds S`` solves each ``deploy=K`` subproblem for S seconds (HiGHS, 1 thread)
and prints its status, best CUs and bound. Cuts implied by the time-indexed rows are not listed:
per-node area rows 12 A_n >= sum k d w and per-node/interval energetic rows are sums of
A_n >= usage(n, t) over slots, and HiGHS already detects the objective's integrality (scale 60).

    python -m benchmarks.studies.rar.mincu_bounds -o DIR --seed 0 --deploy 10,9 \\
        --mip-seconds 240
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from dmlopt.models import rar

from .. import ArgumentParser, output_dir, tee


def _model(inst, thresholds: bool, deploy: int | None, relax: bool, coupled: bool = False):
    import pyomo.environ as pyo

    m = rar.build_aggregated(inst)
    ms = m._rar_modes
    if coupled:
        m.coupled = pyo.Constraint(list(m.w), rule=lambda m, j, n, q: m.w[j, n, q] <= m.q[j, q])
    if thresholds:
        caps = {n: nd.cus for n, nd in enumerate(inst.nodes)}
        nk = [(n, c) for n in caps for c in range(1, caps[n] + 1)]
        m.u = pyo.Var(nk, domain=pyo.Binary)
        m.u_sum = pyo.Constraint(list(caps), rule=lambda m, n: m.A[n] == sum(
            m.u[n, c] for c in range(1, caps[n] + 1)))
        m.u_mono = pyo.Constraint([(n, c) for n, c in nk if c > 1],
                                  rule=lambda m, n, c: m.u[n, c] <= m.u[n, c - 1])
        by_jn: dict[tuple[int, int], list[int]] = {}
        for j, n, q in m.w:
            by_jn.setdefault((j, n), []).append(q)
        keys = [(j, n, c) for (j, n), qs in by_jn.items() for c in range(1, caps[n] + 1)
                if any(ms[j][q][1] >= c for q in qs)]
        m.u_thr = pyo.Constraint(keys, rule=lambda m, j, n, c: m.u[n, c] >= sum(
            m.w[j, n, q] for q in by_jn[j, n] if ms[j][q][1] >= c))
    if deploy is not None:
        m.deploy = pyo.Constraint(expr=sum(m.eta[j] for j in m.eta) == deploy)
        m.obj.deactivate()
        m.obj_cus = pyo.Objective(expr=sum(m.A[n] for n in m.A))
    if relax:
        pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    return m


def _solve(m, seconds: float | None, scale: float) -> tuple[str, float, float, float, float]:
    """(status, objective, bound, wall s, CPU s) with objective/bound multiplied by scale."""
    import highspy

    fd, path = tempfile.mkstemp(suffix=".mps")
    os.close(fd)
    try:
        m.write(path, io_options={"symbolic_solver_labels": False})
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.readModel(path)
    finally:
        os.unlink(path)
    h.setOptionValue("threads", 1)
    if seconds is not None:
        h.setOptionValue("time_limit", seconds)
    w0, c0 = time.perf_counter(), time.process_time()
    h.run()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    info = h.getInfo()
    status = h.modelStatusToString(h.getModelStatus())
    bound = info.mip_dual_bound if seconds is not None else info.objective_function_value
    return status, info.objective_function_value * scale, bound * scale, wall, cpu


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.rar.mincu_bounds",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (NAME.md) and writes (created)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--requests", type=int, default=10)
    ap.add_argument("--deploy", default="10,9", help="deploy counts K to fix")
    ap.add_argument("--mip-seconds", type=float, default=0.0, help="0: LP bounds only")
    args = ap.parse_args(argv)
    out = output_dir(args.out)
    with tee(out / "rar_mincu_bounds.md"):
        _run(args)


def _run(args: argparse.Namespace) -> None:
    inst = rar.generate_cpn6(seed=args.seed, requests=args.requests, scheme="MinCU")
    total = sum(nd.cus for nd in inst.nodes)
    ks = [int(x) for x in args.deploy.split(",") if x]
    print(f"seed {args.seed}, {args.requests} requests, sum |C_n| = {total}")
    print("| model | LP bound (CUs) |")
    print("|---|---|")
    for name, thr, cpl in (("base", False, False), ("thresholds", True, False),
                           ("coupled", False, True)):
        _, val, _, _, _ = _solve(_model(inst, thr, None, True, cpl), None, total)
        print(f"| {name} | {val:.2f} |", flush=True)
    for k in ks:
        _, val, _, _, _ = _solve(_model(inst, False, k, True), None, 1.0)
        blocked = (args.requests - k) * total / args.requests
        print(f"| deploy={k} | {val:.2f} CUs (+ {blocked:g} for blocking) |", flush=True)
    if args.mip_seconds > 0:
        print("\n| deploy | status | best CUs | bound CUs | wall s | CPU s |")
        print("|---|---|---|---|---|---|")
        for k in ks:
            st, obj, bnd, wall, cpu = _solve(_model(inst, False, k, False), args.mip_seconds, 1.0)
            print(f"| {k} | {st} | {obj:.0f} | {bnd:.2f} | {wall:.1f} | {cpu:.1f} |", flush=True)
        st, obj, bnd, wall, cpu = _solve(_model(inst, False, None, False, True), args.mip_seconds,
                                         total)
        print(f"| coupled, any | {st} | {obj:.2f} | {bnd:.2f} | {wall:.1f} | {cpu:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
