"""Noisy k-cast measurements: how well eq. 7 recovers the categories, and what FT makes of them.

4-ary fat-tree, Dijkstra routing, a random source and ``--paths`` destinations; every cast weight
``phi_C`` (all 2^n - 1 subsets) gets Gaussian noise of standard deviation sigma; the category
weights are solved back by Moebius inversion (the exact inverse, = least squares) or NNLS and
thresholded at ``--threshold``; FT runs on the result. Reported per (sigma, solver): how often
the recovered non-zero category set equals the exact one, false and missed categories, FT's
hops error and NGED (metrics of dmlopt.models.infer.metrics). Not a figure of the paper (it uses
exact measurements); it shows where the k-cast pipeline stops being exact.

    python -m benchmarks.studies.infer.noise -o DIR --runs 10 --paths 8
"""

from __future__ import annotations

import argparse

import numpy as np

from dmlopt import topology
from dmlopt.models.infer import cast_weights, evaluate_inference, flow_tracking, measure
from dmlopt.models.infer.measurement import solve_category_weights

from .. import ArgumentParser, output_dir, tee


def main(argv: list[str] | None = None) -> None:

    ap = ArgumentParser(prog="python -m benchmarks.studies.infer.noise",
                        description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for what the study prints (infer_noise.md; created)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--paths", type=int, default=8)
    ap.add_argument("--threshold", type=float, default=0.01)
    ap.add_argument("--sigmas", type=float, nargs="+", default=[0, 1e-4, 3e-4, 1e-3, 3e-3])
    args = ap.parse_args(argv)
    with tee(output_dir(args.out) / "infer_noise.md"):
        _run(args)


def _run(args: argparse.Namespace) -> None:
    import pandas as pd

    g = topology.fat_tree(4)
    rows = []
    for seed in range(args.runs):
        m = measure(g, "dijkstra", n_paths=args.paths, seed=seed, alpha=(0.9, 0.99))
        exact = set(m.categories())
        for sigma in args.sigmas:
            phi = cast_weights(m.graph, m.paths, noise=sigma, seed=seed)
            for solver in ("mobius", "nnls"):
                cats = solve_category_weights(phi, m.n, method=solver, threshold=args.threshold)
                got = set(cats)
                row = {"sigma": sigma, "solver": solver, "exact_set": got == exact,
                       "false": len(got - exact), "missed": len(exact - got)}
                try:
                    ev = evaluate_inference(flow_tracking(cats, m.n), m)
                    row.update(hops_error=ev["hops_error"], nged=ev["nged"])
                except Exception as exc:  # noqa: BLE001 - e.g. a path left without category
                    row.update(hops_error=np.nan, nged=np.nan, error=type(exc).__name__)
                rows.append(row)
    df = pd.DataFrame(rows)
    df["exact_set"] = df["exact_set"].astype(float)
    summ = df.groupby(["sigma", "solver"])[["exact_set", "false", "missed", "hops_error",
                                            "nged"]].mean()
    print(f"fat-tree k=4, dijkstra, {args.paths} paths, alpha in [0.9, 0.99], threshold "
          f"{args.threshold}, {args.runs} runs")
    print(summ.round(3).to_string())


if __name__ == "__main__":
    main()
