"""RAR (paper 003): RDDA's certified gap against the energetic LP bound on the 38-node network.

For each scheme and seed: the instance ``cpn38`` with ``--requests`` requests, RDDA with the
instance's scheme, the ``energy`` bound through :func:`dmlopt.bound` (HiGHS, one thread) and the
certified gap |RDDA - bound| / |bound| (absolute where the bound is 0). Also prints the blocked
requests of RDDA and of the bound's LP, to show which part of eq. (4) the gap comes from, and
RDDA's CU-slots over the fewest its deployed requests need with the same node counts (1.0: no
CU-slot is spent beyond the minimum; above: RDDA trades CU-slots for earlier ends). For MinCU
also RDDA run on the requests whose fewest CU-slots stay below the break-even |T| sum |C_n| /
|R| (deploying a larger one costs more activated CUs on average than blocking it), the others
blocked: a feasible solution (scored by the evaluator) and its certified gap; with
``--block`` also RDDA with ``block="break-even"`` (the option that blocks such requests by
choice and deploys them afterwards where they activate few new CUs), its blocked requests, gap
and seconds; with ``--ls`` also the heuristic ``rdda-ls`` (that option from several request
orders and placement keys, then moves), its blocked requests, gap and CPU seconds; with
``--pack`` (MinW, MinT, MaxR) also the heuristic ``rdda-pack`` (several starts, insertion of
blocked requests with one ejection, the scheme's moves), its blocked requests, activated
wavelengths, gap and CPU seconds; with ``--lns SECONDS`` (MinW, MinT, MaxR) also the
heuristic ``rdda-lns`` with a search of SECONDS (wall) after ``rdda-pack``
(:func:`dmlopt.heuristics.rar_lns.rdda_lns_search`): its objective and blocked requests after
60 s of search (the last solution accepted by then, re-evaluated when accepted) and at the
end, its gap, rounds, accepted moves and CPU seconds (``rdda-pack`` included). With
``--assign`` the bound of the main columns is computed with ``assign=False`` and the
``energy`` bound with ``assign=True`` (each request's computing nodes assigned to the nodes
of its candidate rings; on by default under MaxR and MinW) is added, with its LP's blocked
requests and seconds.

    python -m benchmarks.studies.rar.bounds -o DIR --seeds 0-9 --requests 500
    python -m benchmarks.studies.rar.bounds -o DIR --seeds 10-14 --schemes MinCU --ls
    python -m benchmarks.studies.rar.bounds -o DIR --seeds 0-9 --schemes MinW,MinT,MaxR \
        --pack
    python -m benchmarks.studies.rar.bounds -o DIR --seeds 0-4 --schemes MaxR --pack \
        --lns 300
    python -m benchmarks.studies.rar.bounds -o DIR --seeds 0-2 --schemes MaxR --assign
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

import dmlopt
from dmlopt.models import rar

from .. import ArgumentParser, output_dir, parse_seeds, tee


def main(argv: list[str] | None = None) -> None:
    """Command line: ``-o DIR --seeds 0-9 --requests 500 --schemes MinCU,MinW,MinT,MaxR``.

    Parameters
    ----------
    argv : list of str or None
        Arguments (default: sys.argv).

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003), section 6 (the 38-node network, 500 requests).
    """
    ap = ArgumentParser(prog="python -m benchmarks.studies.rar.bounds",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (rar_bounds.md, created)")
    ap.add_argument("--seeds", default="0-9", help="e.g. 0-9 or 0,3,5")
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--schemes", default="MinCU,MinW,MinT,MaxR")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--end-step", type=int, default=2)
    ap.add_argument("--break-even", action="store_true",
                    help="MinCU: add RDDA on the requests below the break-even CU-slots")
    ap.add_argument("--block", action="store_true",
                    help='MinCU: add RDDA with block="break-even"')
    ap.add_argument("--ls", action="store_true",
                    help="MinCU: add the heuristic rdda-ls")
    ap.add_argument("--pack", action="store_true",
                    help="MinW, MinT, MaxR: add the heuristic rdda-pack")
    ap.add_argument("--lns", type=float, default=0.0, metavar="SECONDS",
                    help="MinW, MinT, MaxR: add the heuristic rdda-lns with this time limit")
    ap.add_argument("--assign", action="store_true",
                    help="the bound without the option assign, and add the bound with it")
    args = ap.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    for flag, value, ok, rule in (
            ("--lns", args.lns, 0 <= args.lns < math.inf, "a number of seconds >= 0 (0: off)"),
            ("--time-limit", args.time_limit, 0 < args.time_limit < math.inf,
             "a number of seconds > 0"),
            ("--requests", args.requests, args.requests >= 1, "at least 1")):
        if not ok:
            print(f"error: {flag}: {value} must be {rule}", file=sys.stderr)
            raise SystemExit(2)
    out = output_dir(args.out)
    with tee(out / "rar_bounds.md"):
        extra = " RDDA below break-even | its blocked | its gap |" if args.break_even else ""
        if args.block:
            extra += " RDDA break-even option | its blocked | its gap | its seconds |"
        if args.ls:
            extra += " rdda-ls | its blocked | its gap | its CPU seconds |"
        if args.pack:
            extra += " rdda-pack | its blocked | its wavelengths | its gap | its CPU seconds |"
        if args.lns:
            extra += (" rdda-lns at 60 s | its blocked | rdda-lns | its blocked | its gap | "
                      "rounds | accepted | its CPU seconds |")
        if args.assign:
            extra += " bound (assign) | blocked (LP, assign) | its seconds |"
        print("| scheme | seed | RDDA | blocked (RDDA) | RDDA CU-slots / fewest | bound | "
              "blocked (LP) | gap | seconds |" + extra)
        print("|---|---|---|---|---|---|---|---|---|" + "---|" * (3 if args.break_even else 0)
              + "---|" * (4 if args.block else 0) + "---|" * (4 if args.ls else 0)
              + "---|" * (5 if args.pack else 0) + "---|" * (8 if args.lns else 0)
              + "---|" * (3 if args.assign else 0))
        for scheme in args.schemes.split(","):
            for seed in seeds:
                _row(scheme, seed, args)


def _row(scheme: str, seed: int, args: argparse.Namespace) -> None:
    inst = dmlopt.generate("rar", {"generator": "cpn38", "requests": args.requests,
                                   "scheme": scheme}, seed=seed)
    heur = dmlopt.heuristic(inst, "rdda")
    t0 = time.perf_counter()
    extra: dict[str, Any] = {"assign": False} if args.assign else {}
    res = dmlopt.bound(inst, "energy", time_limit=args.time_limit, end_step=args.end_step,
                       **extra)
    seconds = time.perf_counter() - t0
    b = res.bound
    gap = abs(heur.objective - b) / abs(b) if abs(b) > 1e-12 else abs(heur.objective - b)
    blocked = round(heur.metrics["blocking_rate"] * args.requests)
    lp_blocked = res.metrics.get("lp_blocked", float("nan"))
    print(f"| {scheme} | {seed} | {heur.objective:.4f} | {blocked} | {_excess(inst, heur):.2f} "
          f"| {b:.4f} | "
          f"{lp_blocked:.1f} | {100 * gap:.1f} % | {seconds:.0f} |", end="")
    if args.break_even:
        ev = _break_even(inst)
        g2 = abs(ev.objective - b) / abs(b) if abs(b) > 1e-12 else abs(ev.objective - b)
        print(f" {ev.objective:.4f} | {round(ev.metrics['blocking_rate'] * args.requests)} | "
              f"{100 * g2:.1f} % |", end="")
    if args.block and scheme == "MinCU":
        t1 = time.perf_counter()
        opt = dmlopt.heuristic(inst, "rdda", block="break-even")
        s3 = time.perf_counter() - t1
        g3 = abs(opt.objective - b) / abs(b) if abs(b) > 1e-12 else abs(opt.objective - b)
        print(f" {opt.objective:.4f} | {round(opt.metrics['blocking_rate'] * args.requests)} | "
              f"{100 * g3:.1f} % | {s3:.1f} |", end="")
    if args.ls and scheme == "MinCU":
        t1 = time.process_time()
        ls = dmlopt.heuristic(inst, "rdda-ls")
        s4 = time.process_time() - t1
        g4 = abs(ls.objective - b) / abs(b) if abs(b) > 1e-12 else abs(ls.objective - b)
        print(f" {ls.objective:.4f} | {round(ls.metrics['blocking_rate'] * args.requests)} | "
              f"{100 * g4:.2f} % | {s4:.0f} |", end="")
    if args.pack and scheme != "MinCU":
        t1 = time.process_time()
        pk = dmlopt.heuristic(inst, "rdda-pack")
        s5 = time.process_time() - t1
        g5 = abs(pk.objective - b) / abs(b) if abs(b) > 1e-12 else abs(pk.objective - b)
        print(f" {pk.objective:.4f} | {round(pk.metrics['blocking_rate'] * args.requests)} | "
              f"{pk.metrics['activated_wavelengths']:.0f} | {100 * g5:.1f} % | {s5:.0f} |",
              end="")
    if args.lns and scheme != "MinCU":
        _lns(inst, b, args)
    if args.assign:
        t1 = time.perf_counter()
        ra = dmlopt.bound(inst, "energy", time_limit=args.time_limit, end_step=args.end_step,
                          assign=True)
        print(f" {ra.bound:.4f} | {ra.metrics['lp_blocked']:.1f} | "
              f"{time.perf_counter() - t1:.0f} |", end="")
    print(flush=True)


def _lns(inst: rar.Instance, b: float, args: argparse.Namespace) -> None:
    """The columns of ``rdda-lns`` (module docstring): every objective re-evaluated."""
    from dmlopt.heuristics.rar_lns import rdda_lns_search

    t1 = time.process_time()
    sol, st = rdda_lns_search(inst, time_limit=args.lns)
    s6 = time.process_time() - t1
    ev = rar.evaluate(inst, sol)
    assert ev.feasible, ev.violations[:3]
    at60 = [(obj, blk) for _, wall, obj, blk in st.trace if wall <= 60.0]
    o60, b60 = at60[-1] if at60 else (st.objective_before, st.blocked_before)
    nr = len(inst.requests)
    g6 = abs(ev.objective - b) / abs(b) if abs(b) > 1e-12 else abs(ev.objective - b)
    print(f" {o60:.4f} | {b60} | {ev.objective:.4f} | {nr - round(ev.metrics['deployed'])} | "
          f"{100 * g6:.1f} % | {st.rounds} | {st.accepted} | {s6:.0f} |", end="")


def _break_even(inst: rar.Instance) -> Any:
    """RDDA on the requests whose fewest CU-slots are below |T| sum |C_n| / |R|, the others
    blocked; evaluated on the whole instance."""
    k_max = max(nd.cus for nd in inst.nodes)
    limit = inst.slots * inst.total_cus / len(inst.requests)
    keep = [j for j in range(len(inst.requests))
            if min(nn * k * d for nn, k, d in rar.modes(inst, j, k_max)) <= limit]
    data = inst.model_dump()
    data["requests"] = [data["requests"][j] for j in keep]
    sub = dmlopt.heuristic(rar.Instance.model_validate(data), "rdda").solution
    full: list[Any] = [None] * len(inst.requests)
    for i, j in enumerate(keep):
        full[j] = sub.requests[i]
    ev = rar.evaluate(inst, rar.Solution(requests=full))
    assert ev.feasible, ev.violations[:3]
    return ev


def _excess(inst: rar.Instance, heur: dmlopt.Result) -> float:
    """RDDA's CU-slots over the fewest CU-slots of the same deployments (same N, any k)."""
    k_max = max(nd.cus for nd in inst.nodes)
    used = fewest = 0.0
    for j, a in enumerate(heur.solution.requests):
        if a is None:
            continue
        nn = len(a.nodes)
        used += sum(len(ids) for ids in a.cus) * (a.end - a.start + 1)
        fewest += nn * min(k * d for n2, k, d in rar.modes(inst, j, k_max) if n2 == nn)
    return used / fewest if fewest else 1.0


if __name__ == "__main__":
    main()
