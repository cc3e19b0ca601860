"""Paper 003, Figs. 5-7, 12 and 14-16: ILP vs RDDA on the 6-node network, 2..12 requests.

For each request count, scheme and seed, solves the ``cpn6`` instance with the aggregated
formulation (HiGHS, 1 thread, wall-clock limit, RDDA warm start) and runs RDDA; prints per
(requests, scheme) the means over the seeds of the paper's metrics for both, and how many ILP runs
were proven optimal (markdown).

    python benchmarks/scripts/rar_small.py --requests 2:12:2 --seeds 0,1 --time-limit 120
"""

from __future__ import annotations

import argparse
import statistics
import time

import dmlopt
from dmlopt.models import rar

METRICS = ("blocking_rate", "activated_cu_ratio", "activated_wavelength_ratio", "aot_ratio",
           "avg_reliability")


def _counts(text: str) -> list[int]:
    if ":" in text:
        lo, hi, step = (int(x) for x in text.split(":"))
        return list(range(lo, hi + 1, step))
    return [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", default="2:12:2")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--schemes", default=",".join(rar.SCHEMES))
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    print("| requests | scheme | method | optimal | blocking | CU ratio | wavelength ratio "
          "| AOT ratio | reliability | objective | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in _counts(args.requests):
        for scheme in args.schemes.split(","):
            runs: dict[str, list] = {"ILP": [], "RDDA": []}
            for seed in seeds:
                inst = rar.generate_cpn6(seed=seed, requests=n, scheme=scheme)
                t0 = time.process_time()
                ilp = dmlopt.solve(inst, formulation="aggregated", time_limit=args.time_limit,
                                   threads=1, warm_start="rdda")
                runs["ILP"].append((ilp, time.process_time() - t0))
                t0 = time.process_time()
                h = dmlopt.heuristic(inst, "rdda")
                runs["RDDA"].append((h, time.process_time() - t0))
            for method, rows in runs.items():
                opt = sum(r.status == "optimal" for r, _ in rows)
                mean = {m: statistics.fmean(r.metrics[m] for r, _ in rows) for m in METRICS}
                obj = statistics.fmean(r.objective for r, _ in rows)
                cpu = statistics.fmean(c for _, c in rows)
                proven = f"{opt}/{len(rows)}" if method == "ILP" else "-"
                print(f"| {n} | {scheme} | {method} | {proven} "
                      f"| {mean['blocking_rate']:.3f} | {mean['activated_cu_ratio']:.3f} "
                      f"| {mean['activated_wavelength_ratio']:.3f} | {mean['aot_ratio']:.3f} "
                      f"| {mean['avg_reliability']:.5f} | {obj:.4f} | {cpu:.1f} |", flush=True)


if __name__ == "__main__":
    main()
