"""Paper 000, Fig. 11: communication cost of task allocation on the FT-inferred topology.

8 modules, K = 1, parameter-server (PS) and all-reduce (AR) overlays, fat-tree (k = 4) and DCell_1
(n = 4) underlays, a varying number of VMs (random servers). One VM is the measurement source,
the others the destinations; FT infers the topology from the exact category weights of the
chosen routing; the TAP instance gets the inferred VM hop matrix; exact (HiGHS, TAP's "class"
formulation), CLE, ABM, random and local search allocate; every allocation is scored by TAP's
evaluator on the *true* underlay hop matrix. The same methods run on the true topology give the
reference, so ``gap = cost(allocation on inferred) / cost(allocation on truth) - 1``.

    python benchmarks/scripts/infer_tap.py --runs 10 --routing dijkstra random-walk \
        --out results/infer-tap
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dmlopt.models.tap import overlay_matrix

from dmlopt import topology
from dmlopt.infer import flow_tracking, measure
from dmlopt.infer.pipeline import allocation_gap, hop_correlation

TOPOLOGIES = {
    "fat-tree": (lambda: topology.fat_tree(4), [8, 10, 12, 14, 16]),
    "dcell": (lambda: topology.dcell(4, 1), [8, 11, 14, 17, 20]),
}
METHODS = ("exact", "cle", "abm", "random", "local-search")


def run(runs: int, routings: list[str], out: Path):
    import pandas as pd

    rows = []
    t0 = time.perf_counter()
    for topo, (build, counts) in TOPOLOGIES.items():
        g = build()
        servers = topology.servers(g)
        for routing in routings:
            for overlay in ("ps", "allreduce"):
                traffic = overlay_matrix(overlay, 8)
                for n_vms in counts:
                    for seed in range(runs):
                        m = measure(g, routing, n_paths=n_vms - 1, seed=seed,
                                    candidates=servers)
                        inf = flow_tracking(m.categories(), m.n)
                        corr = hop_correlation(inf, m)
                        for r in allocation_gap(m, inf, traffic, methods=METHODS, seed=seed,
                                                time_limit=120):
                            rows.append({"topology": topo, "routing": routing,
                                         "overlay": overlay, "vms": n_vms, "seed": seed,
                                         "hop_corr": corr, **r})
                print(f"{topo} {routing} {overlay} done ({time.perf_counter() - t0:.0f} s)",
                      flush=True)
    df = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "runs.csv", index=False)
    return df


def summarise(df, out: Path):
    keys = ["topology", "routing", "overlay", "vms"]
    cost = df.pivot_table(index=keys, columns="method", values="cost_inferred", aggfunc="mean")
    cost.columns = [f"{c}@FT" for c in cost.columns]
    exact_true = (df[df.method == "exact"].groupby(keys)["cost_true"].mean()
                  .rename("exact@truth"))
    gap = (df[df.method == "exact"].groupby(keys)["gap"].mean() * 100).rename("exact_gap_%")
    corr = df[df.method == "exact"].groupby(keys)["hop_corr"].mean().rename("hop_corr")
    summ = cost.join(exact_true).join(gap).join(corr).reset_index()
    summ.to_csv(out / "summary.csv", index=False)
    # runtime ratio exact / heuristic on the inferred instances (same run, same machine)
    sec = df.groupby("method")["seconds_inferred"].mean()
    ratios = {h: sec["exact"] / sec[h] for h in ("cle", "abm") if sec[h] > 0}
    return summ, sec, ratios


def plot(summ, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    cols = ["exact@truth", "exact@FT", "cle@FT", "abm@FT", "local-search@FT", "random@FT"]
    for routing in summ.routing.unique():
        fig, axes = plt.subplots(1, 4, figsize=(18, 4))
        for ax, (topo, overlay) in zip(axes, [(t, o) for t in TOPOLOGIES
                                              for o in ("ps", "allreduce")], strict=True):
            sub = summ[(summ.topology == topo) & (summ.overlay == overlay)
                       & (summ.routing == routing)]
            x = np.arange(len(sub))
            w = 0.8 / len(cols)
            for k, c in enumerate(cols):
                ax.bar(x + k * w, sub[c], w, label=c)
            ax.set_xticks(x + 0.4 - w / 2, sub["vms"].astype(int))
            ax.set_xlabel("VMs")
            ax.set_ylabel("communication cost (true hops)")
            ax.set_title(f"{topo}-{'PS' if overlay == 'ps' else 'AR'}")
        axes[0].legend(fontsize=7)
        fig.suptitle(f"Fig. 11 setting, FT-inferred topology, routing {routing} (mean over runs)")
        fig.tight_layout()
        fig.savefig(out / f"fig11_{routing}.png", dpi=80)
        plt.close(fig)


def main() -> None:
    import pandas as pd

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--routing", nargs="+", default=["dijkstra", "random-walk"])
    ap.add_argument("--out", type=Path, default=Path("results/infer-tap"))
    args = ap.parse_args()
    df = run(args.runs, args.routing, args.out)
    summ, sec, ratios = summarise(df, args.out)
    plot(summ, args.out)
    with pd.option_context("display.width", 220, "display.max_columns", 30):
        print(summ.round(2).to_string(index=False))
    print("mean seconds per method (inferred instances):", sec.round(5).to_dict())
    print("runtime ratio exact / heuristic:", {k: round(v) for k, v in ratios.items()})


if __name__ == "__main__":
    main()
