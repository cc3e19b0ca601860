"""Paper 003, Figs. 8-13 and Table 2 (RDDA side): RDDA on the 38-node network.

For each request count and scheme, runs RDDA on ``cpn38`` instances (48 slots) for several
seeds and prints the mean of the paper's metrics, the wall time of ``dmlopt.heuristic`` (RDDA
plus the evaluator) and its CPU time (the machine is shared: CPU time is the stable figure).

    python benchmarks/scripts/rar_large.py --requests 50:500:50 --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import statistics
import time

import dmlopt
from dmlopt.models import rar

METRICS = ("blocking_rate", "activated_cu_ratio", "activated_wavelength_ratio", "aot_ratio",
           "avg_reliability", "reliability_gain")


def _counts(text: str) -> list[int]:
    if ":" in text:
        lo, hi, step = (int(x) for x in text.split(":"))
        return list(range(lo, hi + 1, step))
    return [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", default="50:500:50")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--slots", type=int, default=48)
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    print("| requests | scheme | blocking | CU ratio | wavelength ratio | AOT ratio | reliability "
          "| gain | wall s (mean, max) | CPU s (mean, max) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in _counts(args.requests):
        for scheme in rar.SCHEMES:
            rows, secs, cpu = [], [], []
            for seed in seeds:
                inst = rar.generate_cpn38(seed=seed, requests=n, scheme=scheme, slots=args.slots)
                t0 = time.process_time()
                res = dmlopt.heuristic(inst, "rdda")
                cpu.append(time.process_time() - t0)
                assert res.status == "feasible", res.message
                rows.append(res.metrics)
                secs.append(res.seconds)
            mean = {m: statistics.fmean(r[m] for r in rows) for m in METRICS}
            print(f"| {n} | {scheme} | {mean['blocking_rate']:.3f} "
                  f"| {mean['activated_cu_ratio']:.3f} | {mean['activated_wavelength_ratio']:.3f} "
                  f"| {mean['aot_ratio']:.3f} | {mean['avg_reliability']:.5f} "
                  f"| {mean['reliability_gain']:.5f} | {statistics.fmean(secs):.2f}, "
                  f"{max(secs):.2f} | {statistics.fmean(cpu):.2f}, {max(cpu):.2f} |", flush=True)


if __name__ == "__main__":
    main()
