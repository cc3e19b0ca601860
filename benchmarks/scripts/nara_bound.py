"""Offline upper bound of paper 001's problem vs the online allocators (short episodes).

Usage: python benchmarks/scripts/nara_bound.py [--topology alpha] [--dist uniform]
       [--n 32] [--seeds 0 1 2] [--time-limit 300] [--formulation offline]

For each seed: the offline MILP (formulation "offline", HiGHS, 1 thread, warm-started from
the best allocator's solution) gives a proven upper bound on the accepted requests of ANY
online allocator (and an offline incumbent); every allocator's accepted count and its distance
from the bound, (bound - accepted) / bound, are printed. The bound is floor()ed (accepted
counts are integers).
"""

from __future__ import annotations

import argparse
import math

import dmlopt

METHODS = ["random", "tetris", "nalb", "nulb", "netfit", "milp"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topology", default="alpha")
    ap.add_argument("--dist", default="uniform")
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--time-limit", type=float, default=300)
    ap.add_argument("--formulation", default="offline",
                    help="offline (strengthened), offline-basic or offline-plain")
    args = ap.parse_args()
    tot = {m: 0 for m in METHODS}
    tot_bound = 0
    for seed in args.seeds:
        inst = dmlopt.generate("nara", {"generator": args.dist, "topology": args.topology,
                                        "n_requests": args.n}, seed=seed)
        runs = {m: dmlopt.heuristic(inst, m) for m in METHODS}
        best = max(runs.values(), key=lambda r: r.objective)
        res = dmlopt.solve(inst, "highs", formulation=args.formulation, time_limit=args.time_limit,
                           threads=1, warm_start=best.solution)
        bound = math.floor(res.bound + 1e-6) if res.bound is not None else args.n
        tot_bound += bound
        line = [f"seed {seed}: offline {res.status} incumbent {res.objective:.0f} "
                f"bound {bound} ({res.seconds:.0f} s)"]
        for m, r in runs.items():
            tot[m] += r.objective
            line.append(f"{m} {r.objective:.0f} ({(bound - r.objective) / bound:.1%})")
        print(" | ".join(line), flush=True)
    print("total: bound", tot_bound, " ".join(
        f"{m} {tot[m]:.0f} ({(tot_bound - tot[m]) / tot_bound:.1%})" for m in METHODS))


if __name__ == "__main__":
    main()
