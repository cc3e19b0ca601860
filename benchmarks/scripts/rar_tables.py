"""Paper 003 (RAR): markdown tables from a ``dmlopt bench paper-rar`` results store.

    dmlopt bench paper-rar --workers 1 -o /tmp/rar.sqlite
    python benchmarks/scripts/rar_tables.py /tmp/rar.sqlite

Prints (1) the ILP side of Table 2: per formulation, scheme and request count on the 6-node
network the status, objective, gap and seconds; (2) Figs. 5-7 and 14-16: ILP vs RDDA per scheme
and request count with the metrics of both; (3) Figs. 8-13: RDDA on the 38-node network, the
mean over seeds of each metric and of the runtime; (4) the trends: per network the mean metric of
each scheme's solutions (which scheme activates the fewest CUs, wavelengths, most reliable rings).
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from collections import defaultdict
from statistics import mean

SCHEMES = ("MinCU", "MinW", "MinT", "MaxR")
MET = ("blocking_rate", "activated_cu_ratio", "activated_wavelength_ratio", "aot_ratio",
       "avg_reliability")
SHORT = ("block", "CU ratio", "WL ratio", "AOT", "reliability")


def _rows(path: str) -> list[dict]:
    con = sqlite3.connect(path)
    out = []
    pat = re.compile(r"(cpn\d+)\(requests=(\d+),scheme=(\w+)\)#(\d+)")
    for inst, method, status, obj, gap, sec, metrics in con.execute(
            "select instance, method, status, objective, gap, seconds, metrics from runs "
            "where problem = 'rar'"):
        m = pat.fullmatch(inst)
        if not m:
            continue
        out.append({"net": m[1], "n": int(m[2]), "scheme": m[3], "seed": int(m[4]),
                    "method": method, "status": status, "obj": obj, "gap": gap, "sec": sec,
                    "m": json.loads(metrics) if metrics else {}})
    return out


def _f(x: float | None, fmt: str = ".4f") -> str:
    return "-" if x is None else format(x, fmt)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    args = ap.parse_args(argv)
    rows = _rows(args.store)
    small = [r for r in rows if r["net"] == "cpn6"]
    big = [r for r in rows if r["net"] == "cpn38"]

    print("### ILP on the 6-node network (Table 2, seed 0)\n")
    print("| requests | scheme | method | status | objective | gap | seconds |")
    print("|---|---|---|---|---|---|---|")
    for r in sorted((r for r in small if r["method"].startswith("highs")),
                    key=lambda r: (r["method"], r["n"], SCHEMES.index(r["scheme"]))):
        gap = "-" if r["gap"] is None else f"{r['gap']:.1%}"
        print(f"| {r['n']} | {r['scheme']} | {r['method']} | {r['status']} | {_f(r['obj'])} "
              f"| {gap} | {r['sec']:.1f} |")

    print("\n### ILP (aggregated) vs RDDA on the 6-node network (Figs. 5-7, 14-16)\n")
    print("| scheme | requests | ILP obj | RDDA obj | " + " | ".join(
        f"{s} ILP / RDDA" for s in SHORT) + " |")
    print("|---|---|---|---|" + "---|" * len(SHORT))
    idx = {(r["scheme"], r["n"], r["method"]): r for r in small}
    for s in SCHEMES:
        for n in sorted({r["n"] for r in small if r["scheme"] == s}):
            ilp, h = idx.get((s, n, "highs:aggregated")), idx.get((s, n, "rdda"))
            if ilp is None or h is None:
                continue
            cells = [f"{_f(ilp['m'].get(k), '.3f')} / {_f(h['m'].get(k), '.3f')}" for k in MET]
            mark = "" if ilp["status"] == "optimal" else f" ({ilp['status']})"
            print(f"| {s} | {n} | {_f(ilp['obj'])}{mark} | {_f(h['obj'])} | "
                  + " | ".join(cells) + " |")

    print("\n### RDDA on the 38-node network (Figs. 8-13), mean over seeds\n")
    print("| scheme | requests | seeds | " + " | ".join(SHORT) + " | seconds |")
    print("|---|---|---|" + "---|" * len(SHORT) + "---|")
    grp: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in big:
        grp[r["scheme"], r["n"]].append(r)
    for s in SCHEMES:
        for n in sorted(n for ss, n in grp if ss == s):
            rs = [r for r in grp[s, n] if r["m"]]
            cells = [f"{mean(r['m'][k] for r in rs):.3f}" for k in MET]
            print(f"| {s} | {n} | {len(rs)} | " + " | ".join(cells)
                  + f" | {mean(r['sec'] for r in rs):.2f} |")

    print("\n### Trends: mean metric of each scheme's solutions\n")
    print("| network / method | scheme | " + " | ".join(SHORT) + " |")
    print("|---|---|" + "---|" * len(SHORT))
    for label, sel in (("6-node ILP (aggregated)", [r for r in small
                                                    if r["method"] == "highs:aggregated"]),
                       ("6-node RDDA", [r for r in small if r["method"] == "rdda"]),
                       ("38-node RDDA", big)):
        for s in SCHEMES:
            rs = [r for r in sel if r["scheme"] == s and r["m"]]
            if rs:
                print(f"| {label} | {s} | " + " | ".join(
                    f"{mean(r['m'][k] for r in rs):.4f}" for k in MET) + " |")


if __name__ == "__main__":
    main()
