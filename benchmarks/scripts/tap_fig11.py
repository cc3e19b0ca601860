"""Paper 000, Fig. 11: communication cost of exact, CLE, ABM and random TAP allocations.

8 modules, K = 1, parameter-server and all-reduce overlays on the 4-ary fat-tree (16 servers) and
DCell_1 with n = 4 (20 servers), a varying number of VMs (random subsets of the servers, one per
seed). Every objective is re-evaluated by the TAP evaluator.

    python benchmarks/scripts/tap_fig11.py fig11  [--seeds 3]   # the Fig. 11 table
    python benchmarks/scripts/tap_fig11.py exact  [--time-limit 120]  # seconds per formulation

``fig11``: mean cost over the VM subsets of the exact optimum (``class`` formulation, HiGHS) and
of each heuristic (random: mean over 10 seeds per instance), and the runtime ratio exact /
heuristic (the paper reports about 10^4 for its MINLP against CLE and ABM).
``exact``: wall seconds (model build included) of every formulation and solver on the
paper-size instances (all servers as VMs, and a 10-VM subset).
"""

from __future__ import annotations

import argparse
import statistics as st

import dmlopt

TOPOLOGIES = {"fat-tree": [8, 10, 12, 14, 16], "dcell": [8, 12, 16, 20]}
OVERLAYS = ("ps", "allreduce")
HEURISTICS = ("cle", "abm", "random", "cle-ls", "abm-ls", "random-ls", "tabu")


def instance(topology: str, overlay: str, vms: int, seed: int):
    return dmlopt.generate("tap", {"generator": "dc", "topology": topology, "overlay": overlay,
                                   "modules": 8, "vms": vms, "K": 1}, seed=seed)


def fig11(seeds: int, time_limit: float) -> None:
    cols = ["exact", *HEURISTICS]
    print("| underlay | overlay | VMs | " + " | ".join(cols)
          + " | exact s | CLE s | ABM s | exact/CLE | exact/ABM |")
    print("|" + "---|" * (len(cols) + 8))
    for topology, sizes in TOPOLOGIES.items():
        for overlay in OVERLAYS:
            for n in sizes:
                cost = {c: [] for c in cols}
                secs = {c: [] for c in cols}
                for seed in range(seeds):
                    inst = instance(topology, overlay, n, seed)
                    ex = dmlopt.solve(inst, "highs", formulation="class", threads=1,
                                      time_limit=time_limit)
                    assert ex.status == "optimal", (inst.name, ex.status)
                    cost["exact"].append(ex.objective)
                    secs["exact"].append(ex.seconds)
                    for h in HEURISTICS:
                        runs = [dmlopt.heuristic(inst, h, seed=s)
                                for s in (range(10) if h == "random" else [0])]
                        cost[h].append(st.mean(r.objective for r in runs))
                        secs[h].append(st.mean(r.seconds for r in runs))
                        assert min(r.objective for r in runs) >= ex.objective - 1e-9
                m = {c: st.mean(v) for c, v in cost.items()}
                s = {c: st.mean(v) for c, v in secs.items()}
                print(f"| {topology} | {overlay} | {n} | "
                      + " | ".join(f"{m[c]:.1f}" for c in cols)
                      + f" | {s['exact']:.3f} | {s['cle']:.1e} | {s['abm']:.1e} "
                      f"| {s['exact'] / s['cle']:.1e} | {s['exact'] / s['abm']:.1e} |",
                      flush=True)


def exact(time_limit: float) -> None:
    runs = [("paper", "scip"), ("rlt", "highs"), ("rlt", "scip"), ("class", "highs"),
            ("class", "scip")]
    print("| underlay | overlay | VMs | optimum | "
          + " | ".join(f"{f}/{s} s" for f, s in runs) + " |")
    print("|" + "---|" * (4 + len(runs)))
    for topology, sizes in TOPOLOGIES.items():
        for overlay in OVERLAYS:
            for n in (sizes[-1], 10):
                inst = instance(topology, overlay, n, 0)
                cells, objs = [], set()
                for f, s in runs:
                    res = dmlopt.solve(inst, s, formulation=f, threads=1, time_limit=time_limit)
                    if res.status == "optimal":
                        objs.add(round(res.objective, 6))
                        cells.append(f"{res.seconds:.2f}")
                    else:
                        cells.append(f">{time_limit:g} ({res.status}, gap "
                                     f"{100 * (res.gap or 0):.0f} %)")
                assert len(objs) == 1, (inst.name, objs)
                print(f"| {topology} | {overlay} | {n} | {objs.pop():g} | "
                      + " | ".join(cells) + " |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("part", choices=["fig11", "exact"])
    ap.add_argument("--seeds", type=int, default=3, help="VM subsets per size (fig11)")
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args()
    warm = instance("fat-tree", "ps", 8, 0)  # import Pyomo, the solvers and the kernel once
    dmlopt.heuristic(warm, "tabu")
    dmlopt.solve(warm, "highs", formulation="class", threads=1)
    dmlopt.solve(warm, "scip", formulation="class", threads=1)
    if args.part == "fig11":
        fig11(args.seeds, args.time_limit)
    else:
        exact(args.time_limit)


if __name__ == "__main__":
    main()
