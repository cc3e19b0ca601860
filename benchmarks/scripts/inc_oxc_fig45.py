"""Paper 002's experiments for inc_oxc: Fig. 4 / Table II (small scale) and Fig. 5 (64 racks).

Usage (from the repository root; threads = 1 for every solver)::

    python benchmarks/scripts/inc_oxc_fig45.py small --racks 2 4 6 --seeds 0-9 \
        --methods milp_inc milp_non_inc wcg swg rwp --time-limit 300 --out /tmp/inc_small.jsonl
    python benchmarks/scripts/inc_oxc_fig45.py large --workers 4 16 --seeds 0-9 \
        --methods wcg swg rwp --out /tmp/inc_large.jsonl
    python benchmarks/scripts/inc_oxc_fig45.py table /tmp/inc_small.jsonl /tmp/inc_large.jsonl
    python benchmarks/scripts/inc_oxc_fig45.py ratio /tmp/inc_small.jsonl   # JCT / MILP optimum

Methods: ``milp_inc`` / ``milp_non_inc`` (the ``strong`` formulation, INC on / off),
``paper_inc`` / ``paper_non_inc`` (the ``paper`` formulation), any heuristic name of inc_oxc
(``wcg``, ``swg``, ``rwp``, ``wcg-opt``, ``wcg-ls``). One JSON line per run; ``table`` prints the
mean longest JCT (s), mean wall and CPU time (s; the machine is shared, CPU time is the fair
measure) and the number of proven optima per configuration.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import defaultdict

import dmlopt


def _seeds(spec: str) -> list[int]:
    if "-" in spec:
        a, b = spec.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in spec.split(",")]


def _run(inst, method: str, time_limit: float) -> dict:
    cpu0 = time.process_time()
    if method.startswith(("milp_", "paper_")):
        form = "strong" if method.startswith("milp_") else "paper"
        res = dmlopt.solve(inst, formulation=form, time_limit=time_limit, threads=1)
    else:
        res = dmlopt.heuristic(inst, method)
    m = res.metrics or {}
    return {"method": method, "status": res.status, "f": res.objective,
            "bound": res.bound, "longest_jct": m.get("longest_jct"),
            "seconds": round(res.seconds, 4), "cpu": round(time.process_time() - cpu0, 4)}


def run(args) -> None:
    out = open(args.out, "a") if args.out else sys.stdout  # noqa: SIM115 - appended per run
    configs = [(r, None) for r in args.racks] if args.scale == "small" else [(64, args.workers)]
    for racks, workers in configs:
        for seed in _seeds(args.seeds):
            for method in args.methods:
                inc = not method.endswith("non_inc")
                spec = {"generator": args.scale, "racks": racks, "inc": inc}
                if workers:
                    spec["workers"] = tuple(workers)
                inst = dmlopt.generate("inc_oxc", spec, seed=seed)
                row = {"scale": args.scale, "racks": racks, "workers": workers, "seed": seed,
                       "jobs": len(inst.jobs), "n_workers": sum(len(j.workers) for j in inst.jobs)}
                row.update(_run(inst, method, args.time_limit))
                out.write(json.dumps(row) + "\n")
                out.flush()


def table(paths: list[str]) -> None:
    rows = []
    for p in paths:
        with open(p) as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["scale"], r["racks"], str(r["workers"]), r["method"])].append(r)
    print("| scale | racks | workers | method | runs | optimal | f = 0 (no circuit) "
          "| mean longest JCT (s), finite runs | mean wall (s) | max wall (s) | mean CPU (s) "
          "| max CPU (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(groups):
        g = groups[key]
        jct = [r["longest_jct"] for r in g
               if r["longest_jct"] is not None and math.isfinite(r["longest_jct"])]
        zero = sum(r["f"] == 0 for r in g)
        opt = sum(r["status"] == "optimal" for r in g)
        t = [r["seconds"] for r in g]
        cpu = [r.get("cpu", r["seconds"]) for r in g]
        mean = f"{statistics.mean(jct):.4f}" if jct else "-"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {len(g)} | {opt} | {zero} | {mean} "
              f"| {statistics.mean(t):.3f} | {max(t):.3f} | {statistics.mean(cpu):.3f} "
              f"| {max(cpu):.3f} |")


def ratio(paths: list[str], ref: str = "milp_inc") -> None:
    """Mean per-instance longest-JCT ratio of every method to ``ref`` (proven optima only)."""
    rows = []
    for p in paths:
        with open(p) as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    best: dict[tuple, float] = {}
    for r in rows:
        if r["method"] == ref and r["status"] == "optimal":
            best[(r["racks"], str(r["workers"]), r["seed"])] = r["longest_jct"]
    acc: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        key = (r["racks"], str(r["workers"]), r["seed"])
        if key in best and r["longest_jct"] is not None:
            acc[(r["racks"], r["method"])].append(r["longest_jct"] / best[key])
    print(f"| racks | method | instances | mean JCT / {ref} | max |")
    print("|---|---|---|---|---|")
    for (racks, method), v in sorted(acc.items()):
        print(f"| {racks} | {method} | {len(v)} | {statistics.mean(v):.3f} | {max(v):.3f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for scale in ("small", "large"):
        s = sub.add_parser(scale)
        s.add_argument("--racks", type=int, nargs="+", default=[2, 4, 6])
        s.add_argument("--workers", type=int, nargs=2, default=[4, 16])
        s.add_argument("--seeds", default="0-9")
        s.add_argument("--methods", nargs="+", default=["wcg", "swg", "rwp"])
        s.add_argument("--time-limit", type=float, default=300)
        s.add_argument("--out")
        s.set_defaults(scale=scale)
    t = sub.add_parser("table")
    t.add_argument("paths", nargs="+")
    q = sub.add_parser("ratio")
    q.add_argument("paths", nargs="+")
    q.add_argument("--ref", default="milp_inc")
    args = p.parse_args()
    if args.cmd == "table":
        table(args.paths)
    elif args.cmd == "ratio":
        ratio(args.paths, args.ref)
    else:
        run(args)


if __name__ == "__main__":
    main()
