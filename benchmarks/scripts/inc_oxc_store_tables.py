"""Fig. 4, Fig. 5 and Table II tables of paper 002 from a ``dmlopt bench paper-inc_oxc`` store.

Usage::

    dmlopt bench benchmarks/suites/paper-inc_oxc.toml --workers 1 -o /tmp/inc_oxc.sqlite
    python benchmarks/scripts/inc_oxc_store_tables.py /tmp/inc_oxc.sqlite

Prints markdown: per configuration the mean longest JCT (s) of every method, the mean of the
paired ratio heuristic / MILP_INC optimum, run times (wall and the store's CPU ``seconds``), the
number of proven optima, and the paper vs strong formulation time ratio on common instances.
"""

from __future__ import annotations

import json
import re
import sqlite3
import statistics
import sys
from collections import defaultdict

PAPER_T2 = {2: (1.65, 0.71, 0.17), 4: (22.1, 2.80, 0.31), 6: (1556, 30.6, 0.35)}
HEUR = ["wcg", "wcg-literal", "swg", "rwp", "wcg-opt", "wcg-ls"]


def _load(path: str):
    con = sqlite3.connect(path)
    rows = con.execute("select instance, method, status, objective, seconds, wall_seconds, "
                       "metrics from runs where problem = 'inc_oxc'").fetchall()
    runs = defaultdict(dict)   # (config, seed) -> method -> record
    for inst, method, status, obj, sec, wall, met in rows:
        mt = re.match(r"(\w+)\((.*)\)#(\d+)", inst)
        gen, params, seed = mt.group(1), mt.group(2), int(mt.group(3))
        inc = "inc=False" not in params and "inc=false" not in params
        if gen == "small":
            racks = int(re.search(r"racks=(\d+)", params).group(1))
            config = ("small", racks, inc)
        else:
            config = ("large", re.search(r"workers=\[?([\d, ]+)\]?", params).group(1), inc)
        jct = json.loads(met or "{}").get("longest_jct", float("inf"))
        rec = {"status": status, "f": obj, "jct": jct, "sec": sec, "wall": wall,
               "ts": json.loads(met or "{}").get("time_shared_oxc", 0.0)}
        runs[(config, seed)][method] = rec
    return runs


def _mean(xs):
    xs = list(xs)
    return statistics.fmean(xs) if xs else float("nan")


def main(path: str) -> None:
    runs = _load(path)
    configs = sorted({c for c, _ in runs}, key=str)
    print("## Fig. 4 / Table II (small scale, INC): mean longest JCT (s), ratio to MILP_INC\n")
    print("| racks | MILP_INC | MILP_Non_INC | " + " | ".join(HEUR) + " |")
    print("|---" * (3 + len(HEUR)) + "|")
    for r in (2, 4, 6):
        seeds = [s for (c, s) in runs if c == ("small", r, True)]
        inc = [runs[(("small", r, True), s)] for s in seeds]
        non = [runs.get((("small", r, False), s), {}) for s in seeds]
        opt = [x.get("highs:strong") for x in inc]
        cells = [f"{_mean(o['jct'] for o in opt if o):.3f} "
                 f"({sum(o['status'] == 'optimal' for o in opt if o)} opt)",
                 f"{_mean(x['highs:strong']['jct'] for x in non if 'highs:strong' in x):.3f}"]
        for h in HEUR:
            pairs = [(x[h]["jct"], x["highs:strong"]) for x in inc if h in x
                     and "highs:strong" in x and x["highs:strong"]["status"] == "optimal"]
            ratio = _mean(j / o["jct"] for j, o in pairs)
            cells.append(f"{_mean(x[h]['jct'] for x in inc if h in x):.3f} (x{ratio:.3f})")
        print(f"| {r} | " + " | ".join(cells) + " |")
    print("\n## Table II: run times (s), mean wall / mean CPU, paper (Gurobi) beside\n")
    print("| racks | MILP_INC strong | MILP_INC paper | MILP_Non_INC strong | MILP_Non_INC paper "
          "| WCG | SWG | RWP | paper: MILP_INC / Non_INC / WCG |")
    print("|---" * 9 + "|")
    for r in (2, 4, 6):
        cells = []
        for inc, meth in ((True, "highs:strong"), (True, "highs:paper"),
                          (False, "highs:strong"), (False, "highs:paper")):
            xs = [v[meth] for (c, s), v in runs.items() if c == ("small", r, inc) and meth in v]
            if not xs:
                cells.append("-")
                continue
            n_opt = sum(x["status"] == "optimal" for x in xs)
            cells.append(f"{_mean(x['wall'] for x in xs):.2f} / {_mean(x['sec'] for x in xs):.2f}"
                         f" ({n_opt}/{len(xs)} opt)")
        for h in ("wcg", "swg", "rwp"):
            xs = [v[h] for (c, s), v in runs.items() if c == ("small", r, True) and h in v]
            cells.append(f"{_mean(x['wall'] for x in xs):.3f}")
        a = PAPER_T2[r]
        print(f"| {r} | " + " | ".join(cells) + f" | {a[0]} / {a[1]} / {a[2]} |")
    print("\n## paper vs strong formulation, paired wall-time ratio (instances both ran)\n")
    for r in (2, 4, 6):
        for inc in (True, False):
            pairs = [(v["highs:paper"], v["highs:strong"]) for (c, s), v in runs.items()
                     if c == ("small", r, inc) and "highs:paper" in v and "highs:strong" in v]
            if pairs:
                rat = _mean(p["wall"] / max(q["wall"], 1e-9) for p, q in pairs)
                nop = sum(p["status"] == "optimal" for p, _ in pairs)
                same = sum(abs(p["f"] - q["f"]) <= 1e-6 * q["f"] for p, q in pairs
                           if p["status"] == "optimal" and q["status"] == "optimal")
                print(f"- {r} racks, INC {'on' if inc else 'off'}: {len(pairs)} instances, "
                      f"paper / strong = {rat:.1f}x, paper optimal {nop}, equal optima {same}")
    print("\n## Fig. 5 (64 racks): mean longest JCT (s), WCG wall time\n")
    print("| workers | " + " | ".join(HEUR) + " | WCG wall mean / max | time-shared OXC |")
    print("|---" * (3 + len(HEUR)) + "|")
    for c in configs:
        if c[0] != "large":
            continue
        xs = [v for (cc, s), v in runs.items() if cc == c]
        cells = [f"{_mean(x[h]['jct'] for x in xs if h in x):.3f}" for h in HEUR]
        walls = [x["wcg"]["wall"] for x in xs if "wcg" in x]
        ts = {h: sum(x[h]["ts"] for x in xs if h in x) for h in ("wcg", "swg", "rwp")}
        print(f"| [{c[1]}] | " + " | ".join(cells) +
              f" | {_mean(walls):.2f} / {max(walls):.2f} | "
              + ", ".join(f"{h} {int(n)}/{len(xs)}" for h, n in ts.items()) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/inc_oxc.sqlite")
