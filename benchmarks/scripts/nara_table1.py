"""Table 1 of paper 001: acceptance ratio per allocator, topology and request distribution.

Usage: python benchmarks/scripts/nara_table1.py [--topologies alpha beta] [--seeds 0 1 2 3 4]
       [--n 128] [--methods random tetris nalb nulb netfit netfit-probe "tetris:check_paths=false"]

Every solution is re-scored by the evaluator (dmlopt.heuristic); infeasible ones are flagged.
Prints one row per (topology, distribution, method): mean acceptance ratio over the seeds, its
standard deviation, mean CPU / memory utilisation, rack locality and mean seconds per episode.
"""

from __future__ import annotations

import argparse
import json
import statistics as st

import dmlopt


def _method(spec: str) -> tuple[str, dict]:
    """``"tetris:check_paths=false"`` -> ("tetris", {"check_paths": False})."""
    name, _, rest = spec.partition(":")
    opts: dict = {}
    for item in filter(None, rest.split(",")):
        key, _, val = item.partition("=")
        opts[key] = json.loads(val)
    return name, opts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topologies", nargs="+", default=["alpha", "beta"])
    ap.add_argument("--dists", nargs="+", default=["uniform", "azure", "alibaba"])
    ap.add_argument("--methods", nargs="+",
                    default=["random", "tetris", "nalb", "nulb", "netfit",
                             "netfit-probe"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--n", type=int, default=None, help="requests per episode (default: paper)")
    args = ap.parse_args()
    print(f"{'topology':8} {'dist':8} {'method':24} {'accept':>7} {'sd':>6} {'cpu':>5} "
          f"{'mem':>5} {'local':>5} {'sec':>6}")
    for topo in args.topologies:
        for dist in args.dists:
            insts = [dmlopt.generate("nara", {"generator": dist, "topology": topo,
                                              "n_requests": args.n}, seed=s)
                     for s in args.seeds]
            for meth in args.methods:
                name, opts = _method(meth)
                rows = [dmlopt.heuristic(inst, name, seed=0, **opts) for inst in insts]
                bad = [r for r in rows if not r.feasible]
                acc = [r.metrics["acceptance_ratio"] for r in rows]
                print(f"{topo:8} {dist:8} {meth:24} {st.mean(acc):7.3f} "
                      f"{st.pstdev(acc):6.3f} {st.mean(r.metrics['cpu_util'] for r in rows):5.2f} "
                      f"{st.mean(r.metrics['mem_util'] for r in rows):5.2f} "
                      f"{st.mean(r.metrics['rack_locality'] for r in rows):5.2f} "
                      f"{st.mean(r.seconds for r in rows):6.2f}"
                      + (f"  INFEASIBLE x{len(bad)}: {bad[0].message}" if bad else ""),
                      flush=True)


if __name__ == "__main__":
    main()
