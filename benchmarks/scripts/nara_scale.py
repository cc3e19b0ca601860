"""Scale runs of paper 001 (section 5.2): one episode per topology and allocator, timed.

Usage: python benchmarks/scripts/nara_scale.py [--topologies gamma delta] [--dists uniform]
       [--methods random tetris nalb nulb netfit netfit-probe] [--seed 0]

gamma: 640 servers, 896 requests; delta: 2560 servers, 4096 requests (the paper's episode
lengths). Prints acceptance ratio, the evaluator's verdict and wall seconds of the allocator
(the evaluator's replay is not included in the time).
"""

from __future__ import annotations

import argparse

import dmlopt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topologies", nargs="+", default=["gamma", "delta"])
    ap.add_argument("--dists", nargs="+", default=["uniform", "azure", "alibaba"])
    ap.add_argument("--methods", nargs="+",
                    default=["random", "tetris", "nalb", "nulb", "netfit",
                             "netfit-probe"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"{'topology':8} {'dist':8} {'method':8} {'accept':>7} {'feasible':>8} {'sec':>7}")
    for topo in args.topologies:
        for dist in args.dists:
            inst = dmlopt.generate("nara", {"generator": dist, "topology": topo},
                                   seed=args.seed)
            _ = inst.net  # topology arrays and candidate paths built once, outside the timing
            for meth in args.methods:
                r = dmlopt.heuristic(inst, meth, seed=args.seed)
                print(f"{topo:8} {dist:8} {meth:8} {r.metrics['acceptance_ratio']:7.3f} "
                      f"{str(r.feasible):>8} {r.seconds:7.2f}", flush=True)


if __name__ == "__main__":
    main()
