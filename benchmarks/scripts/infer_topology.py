"""Paper 000, Figs. 5-10: topology inference accuracy of FT, RNJ and CE.

Ground truths: the 4-ary fat-tree (16 servers) and DCell_1 with n = 4 (20 servers); the four
routing strategies of section V-A; a growing number of measurement paths from one random source
server to distinct random destination servers; Monte Carlo runs (seeds; the paper uses 20).
Category weights are the exact ones from the ground truth (eqs. 2-6; noiseless k-cast recovers
exactly these, see tests/test_infer.py). Metrics (section V-B, definitions in
dmlopt/infer/metrics.py) against the measured subgraph of the ground truth; the hops error
against the whole underlay is recorded too (``hops_error_underlay``).

The benchmark harness runs registered optimisation problems; inference is not one, so this stays
a script. Output: a CSV of every run, a summary CSV (means), PNG plots like Figs. 5-10.

    python benchmarks/scripts/infer_topology.py --runs 20 --out results/infer
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from dmlopt import topology
from dmlopt.infer import evaluate_inference, infer, measure
from dmlopt.infer.measurement import ROUTINGS

TOPOLOGIES = {
    "fat-tree": (lambda: topology.fat_tree(4), [2, 4, 6, 8, 10, 12, 15]),
    "dcell": (lambda: topology.dcell(4, 1), [2, 4, 7, 10, 13, 16, 19]),
}
METHODS = ("ft", "rnj", "ce")
METRICS = ("hops_error", "hops_ratio", "hops_error_underlay", "gde", "pde", "nged", "h2",
           "h2_precision", "ged_exact")


def run(runs: int, out: Path) -> list[dict]:
    rows = []
    t0 = time.perf_counter()
    for topo, (build, counts) in TOPOLOGIES.items():
        g = build()
        for routing in ROUTINGS:
            for n_paths in counts:
                for seed in range(runs):
                    m = measure(g, routing, n_paths=n_paths, seed=seed)
                    cats = m.categories()
                    for method in METHODS:
                        opts = {"seed": seed} if method == "ce" else {}
                        inf = infer(cats, m.n, method, **opts)
                        ev = evaluate_inference(inf, m)
                        under = evaluate_inference(inf, m, reference="underlay", with_ged=False)
                        rows.append({"topology": topo, "routing": routing, "paths": n_paths,
                                     "seed": seed, "method": method.upper(),
                                     "hops_error_underlay": under["hops_error"],
                                     "path_hops": float(np.mean([len(p) - 1 for p in m.paths])),
                                     **{k: ev[k] for k in ev}})
            print(f"{topo:8s} {routing:15s} done ({time.perf_counter() - t0:.0f} s)",
                  flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "runs.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows


def summarise(rows: list[dict], out: Path) -> list[dict]:
    import pandas as pd

    df = pd.DataFrame(rows)
    df["ged_exact"] = df["ged_exact"].astype(float)
    summ = (df.groupby(["topology", "routing", "paths", "method"])[list(METRICS)]
            .mean().reset_index())
    summ.to_csv(out / "summary.csv", index=False)
    return summ


def plot(summ, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = {"fig5_6_hops_error": ("hops_error", "hops error |h_inf/h_true - 1|", METHODS),
            "fig7_8_gde": ("gde", "global degree error", ("ft", "rnj")),
            "fig7_8_pde": ("pde", "path degree error", ("ft", "rnj")),
            "fig9_nged": ("nged", "NGED (upper bound where not exact)", METHODS),
            "fig10_h2": ("h2", "H2 index", METHODS),
            "fig10b_h2_precision": ("h2_precision", "H2 precision (our addition)", METHODS)}
    styles = {"FT": "o-", "RNJ": "s--", "CE": "^:"}
    for fname, (metric, ylabel, methods) in figs.items():
        fig, axes = plt.subplots(2, 4, figsize=(16, 7), sharey="row")
        for r, topo in enumerate(TOPOLOGIES):
            for c, routing in enumerate(ROUTINGS):
                ax = axes[r, c]
                for method in methods:
                    sub = summ[(summ.topology == topo) & (summ.routing == routing)
                               & (summ.method == method.upper())]
                    ax.plot(sub["paths"], sub[metric], styles[method.upper()],
                            label=method.upper())
                ax.set_title(f"{topo}, {c + 1}: {routing}", fontsize=9)
                ax.grid(alpha=0.3)
                if r == 1:
                    ax.set_xlabel("measurement paths")
                if c == 0:
                    ax.set_ylabel(ylabel, fontsize=8)
        axes[0, 0].legend()
        fig.suptitle(f"{ylabel}: mean over Monte Carlo runs (paper 000, {fname.split('_')[0]})")
        fig.tight_layout()
        fig.savefig(out / f"{fname}.png", dpi=80)
        plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="Monte Carlo runs per point")
    ap.add_argument("--out", type=Path, default=Path("results/infer"))
    args = ap.parse_args()
    rows = run(args.runs, args.out)
    summ = summarise(rows, args.out)
    plot(summ, args.out)
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_rows", 500):
        full = summ[summ.paths == summ.groupby("topology")["paths"].transform("max")]
        print(full.round(3).to_string(index=False))


if __name__ == "__main__":
    main()
