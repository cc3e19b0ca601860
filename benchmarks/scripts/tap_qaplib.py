"""TAP heuristics on the 43 shipped QAPLIB instances (K = 1) against scipy's QAP solvers.

Every objective is re-evaluated by the TAP evaluator; the gap is to the published optimum.
The peer is ``scipy.optimize.quadratic_assignment``: FAQ from a random doubly-stochastic start,
then 2-opt from the FAQ permutation, 10 restarts, best kept.

    python benchmarks/scripts/tap_qaplib.py [--methods tabu,abm-ls,...] [--restarts 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import quadratic_assignment

import dmlopt
from dmlopt import qaplib

DEFAULT = "tabu,random-ls,abm-ls,cle-ls,abm,cle,random"


def scipy_peer(inst, restarts: int, seed: int = 0) -> tuple[list[int], float]:
    """FAQ (randomized start) + 2-opt from its result, ``restarts`` times; best permutation."""
    a, b = np.asarray(inst.traffic), np.asarray(inst.distance)
    rng = np.random.default_rng(seed)
    best, best_perm = np.inf, None
    t0 = time.perf_counter()
    for _ in range(restarts):
        faq = quadratic_assignment(a, b, method="faq", options={"P0": "randomized", "rng": rng})
        guess = np.column_stack([np.arange(len(a)), faq.col_ind])
        two = quadratic_assignment(a, b, method="2opt",
                                   options={"partial_guess": guess, "rng": rng})
        for res in (faq, two):
            if res.fun < best:
                best, best_perm = res.fun, res.col_ind
    return [int(x) for x in best_perm], time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", default=DEFAULT)
    ap.add_argument("--restarts", type=int, default=10, help="scipy restarts")
    ap.add_argument("--only", default="", help="comma-separated instance names")
    args = ap.parse_args()
    methods = args.methods.split(",")
    names = args.only.split(",") if args.only else qaplib.names()
    gaps: dict[str, list[float]] = {m: [] for m in [*methods, "scipy-faq-2opt"]}
    secs: dict[str, list[float]] = {m: [] for m in gaps}
    print("instance," + ",".join(f"{m}_gap%,{m}_s" for m in gaps), flush=True)
    for name in names:
        inst = qaplib.load(name)
        opt, _ = qaplib.solution(name)
        row = [name]
        for m in methods:
            res = dmlopt.heuristic(inst, m, seed=0)
            gaps[m].append(_gap(res.objective, opt))
            secs[m].append(res.seconds)
        perm, seconds = scipy_peer(inst, args.restarts)
        obj = dmlopt.evaluate(inst, {"assignment": perm}).objective
        gaps["scipy-faq-2opt"].append(_gap(obj, opt))
        secs["scipy-faq-2opt"].append(seconds)
        for m in gaps:
            row += [f"{gaps[m][-1]:.3f}", f"{secs[m][-1]:.3f}"]
        print(",".join(row), flush=True)
    print("\n| method | mean gap % | max gap % | optimal | mean s | max s |")
    print("|---|---|---|---|---|---|")
    for m in gaps:
        g, s = np.array(gaps[m]), np.array(secs[m])
        print(f"| {m} | {g.mean():.3f} | {g.max():.2f} | {(g < 1e-9).sum()}/{g.size} "
              f"| {s.mean():.3f} | {s.max():.3f} |")


def _gap(objective: float, opt: float) -> float:
    return 100.0 * (objective - opt) / max(abs(opt), 1.0)


if __name__ == "__main__":
    main()
