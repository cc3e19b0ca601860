"""README tables of paper 001 (Nara) from a results store of ``dmlopt bench paper-nara``.

Usage: python benchmarks/scripts/nara_tables.py /tmp/nara.sqlite

Prints markdown: Table 1 (mean acceptance ratio per instance family and allocator, with mean
servers per accepted request), the offline-bound group (per episode: bound, status, every
allocator's accepted count; totals and distances (bound - accepted) / bound) and the scale
group (acceptance ratio and seconds). Only evaluator-feasible rows are used (the harness
re-evaluates every solution).
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from collections import defaultdict


def _label(method: str, options: str) -> str:
    opts = {k: v for k, v in json.loads(options).items()
            if k not in ("time_limit", "threads", "warm_start")}
    return method + ("" if not opts else ":" + ",".join(f"{k}={v}" for k, v in opts.items()))


def main() -> None:
    con = sqlite3.connect(sys.argv[1])
    rows = con.execute("select instance, method, options, status, objective, bound, seconds, "
                       "feasible, metrics from runs where problem = 'nara'").fetchall()
    fam: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for inst, meth, opts, status, obj, bound, sec, feas, metrics in rows:
        family = inst.split("#")[0]
        fam[family][_label(meth, opts)].append((inst, status, obj, bound, sec, feas,
                                                json.loads(metrics or "{}")))
    bound_fams = [f for f in fam if any(m.startswith("highs") for m in fam[f])]
    for family in sorted(fam):
        if family in bound_fams:
            continue
        def mean(rs: list, key: str) -> float:
            return sum(r[6].get(key, 0) for r in rs) / len(rs)

        print(f"{family}: " + " | ".join(
            f"{m} {mean(rs, 'acceptance_ratio'):.3f} "
            f"(n={len(rs)}, srv {mean(rs, 'servers_per_allocation'):.2f}, "
            f"{max(r[4] or 0 for r in rs):.1f} s max)"
            + ("" if all(r[5] for r in rs) else " INFEASIBLE")
            for m, rs in sorted(fam[family].items())))
    for family in bound_fams:
        per: dict[str, dict[str, tuple]] = defaultdict(dict)
        for m, rs in fam[family].items():
            for r in rs:
                per[r[0]][m] = r
        tot: dict[str, float] = defaultdict(float)
        for inst in sorted(per):
            off = next(v for k, v in per[inst].items() if k.startswith("highs"))
            b = math.floor((off[3] if off[3] is not None else off[2]) + 1e-6)
            tot["bound"] += b
            line = [f"{inst}: offline {off[1]} incumbent {off[2]} bound {b}"]
            for m, r in sorted(per[inst].items()):
                if not m.startswith("highs"):
                    tot[m] += r[2]
                    line.append(f"{m} {r[2]:.0f}")
            print(" | ".join(line))
        print("total: " + " | ".join(
            f"{m} {v:.0f}" + ("" if m == "bound" else
                              f" ({(tot['bound'] - v) / tot['bound']:.1%})")
            for m, v in tot.items()))


if __name__ == "__main__":
    main()
