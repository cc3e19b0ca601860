"""TABGP exact benchmark (paper 004, section 4): optima of the paper table, formulation timings.

Run from the repository root (every run appends rows to CSV files and skips rows already there,
so an interrupted run resumes)::

    S="python -m benchmarks.studies.tabgp.exact -o DIR"
    $S optima                                 # 180 instances, "pairs"
    $S compare --solver highs --formulations paper strong clusters pairs
    $S compare --solver scip
    $S large --seeds 0 1                      # n = 16, tau = 3
    $S lp                                     # LP relaxation bounds
    $S report                                 # markdown tables on stdout

Instances are the paper's synthetic workload: ``dmlopt.generate("tabgp", {"generator": "er",
"n": 12, "p": p, "tau": tau, "l": 4}, seed=s)`` (k = 3, alpha = 3). Every solve uses one thread
(the machine is shared); compare timings only within one run (ratios), never across runs. Both
wall and CPU seconds of the process are recorded (the solvers run in-process); on a loaded machine
the CPU seconds are the meaningful figure and the wall time limits are set generously for that
reason. Results go to the CSV files under DIR, optima also to ``DIR/tabgp_optima.csv``
(columns tau,p,seed,optimum,status). The paper's tables themselves are ``dmlopt reproduce
tabgp``; this study keeps the long proofs (600 s limits), the LP bounds and the formulation
timings with CPU seconds.
"""

from __future__ import annotations

import csv
import math
import os
import sys
import time
from pathlib import Path

import dmlopt

from .. import ArgumentParser, output_dir

PS = [round(0.1 * i, 1) for i in range(1, 10)]
OUT = Path("results/tabgp-exact")  # set from -o DIR by main()
FIELDS = ["tau", "p", "n", "seed", "solver", "formulation", "time_limit", "status", "objective",
          "bound", "seconds", "cpu_seconds", "warm_start"]


def instance(n: int, p: float, tau: int, seed: int):
    return dmlopt.generate("tabgp", {"generator": "er", "n": n, "p": p, "tau": tau, "l": 4},
                           seed=seed)


def done_keys(path: Path) -> set[tuple]:
    if not path.exists():
        return set()
    with open(path) as fh:
        return {(int(r["tau"]), float(r["p"]), int(r["n"]), int(r["seed"]), r["solver"],
                 r["formulation"]) for r in csv.DictReader(fh)}


def append(path: Path, fields: list[str], row: dict) -> None:
    new = not path.exists()
    with open(path, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        if new:
            w.writeheader()
        w.writerow(row)
        fh.flush()
        os.fsync(fh.fileno())


def run_one(path: Path, n: int, p: float, tau: int, seed: int, solver: str, formulation: str,
            time_limit: float, warm: str | None) -> dict | None:
    key = (tau, p, n, seed, solver, formulation)
    if key in done_keys(path):
        return None
    inst = instance(n, p, tau, seed)
    t0, c0 = time.perf_counter(), time.process_time()
    res = dmlopt.solve(inst, solver, formulation=formulation, threads=1, time_limit=time_limit,
                       warm_start=warm)
    row = {"tau": tau, "p": p, "n": n, "seed": seed, "solver": solver,
           "formulation": formulation, "time_limit": time_limit, "status": res.status,
           "objective": res.objective, "bound": res.bound,
           "seconds": round(time.perf_counter() - t0, 3),
           "cpu_seconds": round(time.process_time() - c0, 3), "warm_start": warm or ""}
    append(path, FIELDS, row)
    print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    return row


def cmd_optima(args) -> None:
    path = OUT / "tabgp_exact_optima_runs.csv"
    optima = Path(args.optima)
    for tau in args.taus:
        for p in PS:
            for seed in range(args.seeds):
                row = run_one(path, 12, p, tau, seed, "highs", args.formulation,
                              args.time_limit, args.warm_start)
                have = {(int(r["tau"]), float(r["p"]), int(r["seed"])) for r in _rows(optima)}
                if row is not None and row["status"] == "optimal" and (tau, p, seed) not in have:
                    append(optima, ["tau", "p", "seed", "optimum", "status"],
                           {"tau": tau, "p": p, "seed": seed, "optimum": row["objective"],
                            "status": row["status"]})


def cmd_compare(args) -> None:
    path = OUT / f"tabgp_exact_compare_{args.solver}.csv"
    for tau in args.taus:
        for p in args.ps or PS:
            for seed in args.seeds:
                for f in args.formulations:
                    run_one(path, 12, p, tau, seed, args.solver, f, args.time_limit,
                            args.warm_start)


def cmd_large(args) -> None:
    path = OUT / "tabgp_exact_large.csv"
    for seed in args.seeds:
        for p in args.ps:
            for f in args.formulations:
                run_one(path, args.n, p, 3, seed, "highs", f, args.time_limit, args.warm_start)


def lp_bound(inst, formulation: str) -> float:
    """Optimum of the LP relaxation (integrality dropped) of a formulation, by HiGHS."""
    import pyomo.environ as pyo

    model = dmlopt.build(inst, formulation)
    for var in model.component_data_objects(pyo.Var):
        if var.is_binary():
            var.domain = pyo.UnitInterval
    dmlopt.solvers.run(model, "highs", threads=1)
    return float(pyo.value(model.obj))


def cmd_lp(args) -> None:
    path = OUT / "tabgp_exact_lp.csv"
    optima = {(int(r["tau"]), float(r["p"]), int(r["seed"])): float(r["optimum"])
              for r in _rows(Path(args.optima))}
    fields = ["tau", "p", "seed", "optimum", *args.formulations]
    for tau in args.taus:
        for p in PS:
            for seed in args.seeds:
                inst = instance(12, p, tau, seed)
                row = {"tau": tau, "p": p, "seed": seed,
                       "optimum": optima.get((tau, p, seed), "")}
                row.update({f: round(lp_bound(inst, f), 3) for f in args.formulations})
                append(path, fields, row)
                print(row, flush=True)


def _rows(name: str | Path) -> list[dict]:
    path = OUT / name
    if not path.exists():
        return []
    with open(path) as fh:
        return list(csv.DictReader(fh))


def cmd_report(args) -> None:
    runs = _rows("tabgp_exact_optima_runs.csv")
    if runs:
        print("## Optima of the paper's table (n=12, l=4, k=3, alpha=3), HiGHS, 1 thread\n")
        print("| tau | p | solved | mean CPU s | max CPU s | max wall s | mean optimum |")
        print("|---|---|---|---|---|---|---|")
        for tau in sorted({int(r["tau"]) for r in runs}):
            for p in PS:
                rs = [r for r in runs if int(r["tau"]) == tau and float(r["p"]) == p]
                if not rs:
                    continue
                cpu = [float(r["cpu_seconds"]) for r in rs]
                wall = [float(r["seconds"]) for r in rs]
                opt = [float(r["objective"]) for r in rs if r["status"] == "optimal"]
                mean_opt = f"{sum(opt) / len(opt):.1f}" if opt else "-"
                print(f"| {tau} | {p} | {len(opt)}/{len(rs)} | {sum(cpu) / len(cpu):.2f} | "
                      f"{max(cpu):.2f} | {max(wall):.1f} | {mean_opt} |")
        print()
    for solver in ("highs", "scip"):
        rows = _rows(f"tabgp_exact_compare_{solver}.csv")
        if not rows:
            continue
        forms = list(dict.fromkeys(r["formulation"] for r in rows))
        print(f"## Formulations with {solver}, 1 thread: CPU seconds (wall seconds); "
              "TL = wall time limit hit\n")
        others = forms[1:]
        print("| tau | p | seed | " + " | ".join(forms) + " | "
              + " | ".join(f"{forms[0]}/{f}" for f in others) + " |")
        print("|---" * (3 + len(forms) + len(others)) + "|")
        keys = list(dict.fromkeys((r["tau"], r["p"], r["seed"]) for r in rows))
        ratios: dict[str, list[float]] = {f: [] for f in others}
        for key in keys:
            by = {r["formulation"]: r for r in rows if (r["tau"], r["p"], r["seed"]) == key}
            cells = []
            for f in forms:
                r = by.get(f)
                if r is None:
                    cells.append("-")
                elif r["status"] == "optimal":
                    cells.append(f"{float(r['cpu_seconds']):.2f} ({float(r['seconds']):.1f})")
                else:
                    cells.append(f"TL {float(r['cpu_seconds']):.1f} ({float(r['seconds']):.0f}) "
                                 f"bound {_fmt(r['bound'])} obj {_fmt(r['objective'])}")
            for f in others:
                a, b = by.get(forms[0]), by.get(f)
                ratio = "-"
                if a and b and b["status"] == "optimal":
                    val = float(a["cpu_seconds"]) / max(float(b["cpu_seconds"]), 1e-3)
                    ratio = (">" if a["status"] != "optimal" else "") + f"{val:.1f}"
                    ratios[f].append(val)
                elif a and b and a["status"] == "optimal":
                    ratio = "<" + f"{float(a['cpu_seconds']) / float(b['cpu_seconds']):.1f}"
                cells.append(ratio)
            print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
        print()
        for f, vals in ratios.items():
            if vals:
                geo = math.exp(sum(math.log(max(x, 1e-9)) for x in vals) / len(vals))
                print(f"geometric mean CPU ratio {forms[0]}/{f}: {geo:.1f} over {len(vals)} "
                      f"instances (a lower bound where {forms[0]} timed out)  ")
        print()
    lp = _rows("tabgp_exact_lp.csv")
    if lp:
        forms = [k for k in lp[0] if k not in ("tau", "p", "seed", "optimum")]
        print("## LP relaxation bound (root, before cuts) against the optimum\n")
        print("| tau | p | seed | optimum | " + " | ".join(forms) + " |")
        print("|---" * (4 + len(forms)) + "|")
        known = {(r["tau"], r["p"], r["seed"]): r["optimum"]
                 for r in _rows(OUT / "tabgp_optima.csv")}
        for r in lp:
            opt = r["optimum"] or known.get((r["tau"], r["p"], r["seed"]), "")
            print(f"| {r['tau']} | {r['p']} | {r['seed']} | {_fmt(opt)} | "
                  + " | ".join(_fmt(r[f]) for f in forms) + " |")
        print()
    large = _rows("tabgp_exact_large.csv")
    if large:
        print("## n = 16, l = 4, k = 4, tau = 3, HiGHS, 1 thread\n")
        print("| p | seed | formulation | status | objective | bound | CPU s | wall s |")
        print("|---|---|---|---|---|---|---|---|")
        for r in large:
            print(f"| {r['p']} | {r['seed']} | {r['formulation']} | {r['status']} | "
                  f"{_fmt(r['objective'])} | {_fmt(r['bound'])} | "
                  f"{float(r['cpu_seconds']):.1f} | {float(r['seconds']):.1f} |")


def _fmt(x: str) -> str:
    try:
        return f"{float(x):.1f}"
    except ValueError:
        return x or "-"


def main(argv: list[str] | None = None) -> None:
    global OUT
    ap = ArgumentParser(prog="python -m benchmarks.studies.tabgp.exact",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory of the CSV files (created; runs resume from them)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("optima")
    o.add_argument("--formulation", default="pairs")
    o.add_argument("--time-limit", type=float, default=600)
    o.add_argument("--taus", type=int, nargs="+", default=[1, 3])
    o.add_argument("--seeds", type=int, default=10)
    o.add_argument("--warm-start", default="dense-refine")
    o.add_argument("--optima", default=None, help="default: DIR/tabgp_optima.csv")
    c = sub.add_parser("compare")
    c.add_argument("--solver", default="highs")
    c.add_argument("--formulations", nargs="+", default=["paper", "strong", "pairs"])
    c.add_argument("--time-limit", type=float, default=120)
    c.add_argument("--taus", type=int, nargs="+", default=[1, 3])
    c.add_argument("--seeds", type=int, nargs="+", default=[0])
    c.add_argument("--ps", type=float, nargs="+", default=None)
    c.add_argument("--warm-start", default=None)
    g = sub.add_parser("large")
    g.add_argument("--n", type=int, default=16)
    g.add_argument("--ps", type=float, nargs="+", default=[0.2, 0.5, 0.8])
    g.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    g.add_argument("--formulations", nargs="+", default=["pairs"])
    g.add_argument("--time-limit", type=float, default=900)
    g.add_argument("--warm-start", default="dense-refine")
    b = sub.add_parser("lp")
    b.add_argument("--formulations", nargs="+", default=["paper", "strong", "clusters", "pairs"])
    b.add_argument("--taus", type=int, nargs="+", default=[3])
    b.add_argument("--seeds", type=int, nargs="+", default=[0])
    b.add_argument("--optima", default=None, help="default: DIR/tabgp_optima.csv")
    sub.add_parser("report")
    args = ap.parse_args(argv)
    OUT = output_dir(args.out)
    if getattr(args, "optima", "") is None:
        args.optima = str(OUT / "tabgp_optima.csv")
    {"optima": cmd_optima, "compare": cmd_compare, "large": cmd_large, "lp": cmd_lp,
     "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
