"""Paper 003 (RAR, Chen et al.): Table 2, the small-network figures, the 38-node scale and the
trends, from the runs of ``paper-rar`` (full) or ``quick-rar`` (``dmlopt reproduce rar``).

Instances are generator specs ``cpn6(requests=R,scheme=S)#seed`` (6-node network, 12 slots)
and ``cpn38(...)`` (38-node network, 48 slots); methods ``highs:paper`` / ``highs:aggregated``
(the ILP, eqs. 4-41, and our aggregated form, proven equal by tests) and ``rdda`` (Algorithm
1). Metrics are the evaluator's (``dmlopt.models.rar.evaluate``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from dmlopt.benchmarks.tables import Table, md_table, sizes

SCHEMES = ("MinCU", "MinW", "MinT", "MaxR")
METRICS = ("blocking_rate", "activated_cu_ratio", "activated_wavelength_ratio", "aot_ratio",
           "avg_reliability")
SHORT = ("block", "CU ratio", "WL ratio", "AOT", "reliability")
#: Table 2 of paper 003, average running time in seconds of the ILP (Gurobi 9.5.1) at 2, 6, 10
#: requests on the small network
PAPER_TABLE2_ILP = {
    "MinCU": {2: 21, 6: 14937, 10: 81382},
    "MinW": {2: 8, 6: 105, 10: 1771},
    "MaxR": {2: 3, 6: 20, 10: 62},
    "MinT": {2: 4, 6: 126, 10: 77675},
}
#: Table 2 of paper 003, average running time in seconds of RDDA (Python) at 100, 300, 500
#: requests on the large network
PAPER_TABLE2_RDDA = {
    "MinCU": {100: 21, 300: 61, 500: 102},
    "MinW": {100: 16, 300: 51, 500: 84},
    "MaxR": {100: 24, 300: 74, 500: 140},
    "MinT": {100: 16, 300: 49, 500: 91},
}
_ID = re.compile(r"(cpn\d+)\(requests=(\d+),scheme=(\w+)\)#(\d+)")


def frame(runs: pd.DataFrame) -> pd.DataFrame:
    """The RAR runs with network, requests, scheme and seed parsed from the instance id."""
    out = []
    for r in runs.itertuples():
        m = _ID.fullmatch(str(r.instance)) if r.problem == "rar" else None
        if m is None:
            continue
        out.append({"net": m[1], "n": int(m[2]), "scheme": m[3], "seed": int(m[4]),
                    "method": r.method, "status": r.status, "obj": r.objective, "gap": r.gap,
                    "sec": r.seconds, "m": r.metrics if isinstance(r.metrics, dict) else {}})
    return pd.DataFrame(out, columns=["net", "n", "scheme", "seed", "method", "status", "obj",
                                      "gap", "sec", "m"])


def _f(x: object, fmt: str = ".4f") -> str:
    return "-" if x is None or pd.isna(x) else format(x, fmt)


_table = md_table


def table2(runs: pd.DataFrame, outdir: Path) -> str:
    """Table 2: time of the ILP (small network, per formulation) and of RDDA (38-node network,
    mean over seeds) beside the paper's."""
    df = frame(runs)
    rows = []
    for s in SCHEMES:
        for n in sorted(df[(df.scheme == s)].n.unique()):
            d = df[(df.scheme == s) & (df.n == n)]
            p_ilp, p_rdda = PAPER_TABLE2_ILP[s].get(int(n)), PAPER_TABLE2_RDDA[s].get(int(n))
            cells = []
            for method in ("highs:paper", "highs:aggregated", "rdda"):
                g = d[d.method == method]
                if g.empty:
                    cells.append("-")
                elif method == "rdda":
                    cells.append(f"{g.sec.mean():.2f} s" + (f" (mean of {len(g)})"
                                                            if len(g) > 1 else ""))
                else:
                    r = g.iloc[0]
                    cells.append(f"{r.sec:.1f} s" if r.status == "optimal" else
                                 f"{r.status}, gap {_f(r.gap, '.1%')} at {r.sec:.0f} s")
            net = "6-node" if d.net.iloc[0] == "cpn6" else "38-node"
            rows.append([s, net, str(n), *cells[:2], _paper_s(p_ilp), cells[2],
                         _paper_s(p_rdda)])
    return ("Time per run. The paper's columns are its Table 2 (mean running time): the ILP "
            "with Gurobi 9.5.1 at 2, 6 and 10 requests on the 6-node network, RDDA in Python "
            "at 100, 300 and 500 requests on the 38-node network (`-`: a size the paper did "
            "not time). Ours: HiGHS on one thread with the suite's time limit (a run stopped at "
            "the limit shows its gap) and RDDA in Python.\n\n" + _table(
                ["scheme", "network", "requests", "ILP `paper`", "ILP `aggregated`",
                 "paper ILP (s)", "RDDA", "paper RDDA (s)"], rows))


def _paper_s(x: int | None) -> str:
    return "-" if x is None else f"{x:,}"


def _sizes_of(net: str):
    """Heading part: the request counts the runs had on network ``net``."""
    def of(runs: pd.DataFrame) -> str:
        df = frame(runs)
        return sizes(df[df.net == net].n, "requests")
    return of


def small(runs: pd.DataFrame, outdir: Path) -> str:
    """Figs. 5-7 and 14-16: ILP (aggregated) vs RDDA on the 6-node network, per scheme."""
    df = frame(runs)
    df = df[df.net == "cpn6"]
    idx = {(r.scheme, r.n, r.method): r for r in df.itertuples()}
    rows = []
    for s in SCHEMES:
        for n in sorted(df[df.scheme == s].n.unique()):
            ilp, h = idx.get((s, n, "highs:aggregated")), idx.get((s, n, "rdda"))
            if ilp is None or h is None:
                continue
            mark = "" if ilp.status == "optimal" else f" ({ilp.status})"
            rows.append([s, str(n), f"{_f(ilp.obj)}{mark} / {_f(h.obj)}"] + [
                f"{_f(ilp.m.get(k), '.3f')} / {_f(h.m.get(k), '.3f')}" for k in METRICS])
    return ("Each cell: ILP / RDDA (seed 0). The objective is the scheme's own.\n\n"
            + _table(["scheme", "requests", "objective", *SHORT], rows))


def large(runs: pd.DataFrame, outdir: Path) -> str:
    """Figs. 8-13: RDDA on the 38-node network, mean over seeds."""
    df = frame(runs)
    df = df[(df.net == "cpn38") & (df.method == "rdda")]
    rows = []
    for (s, n), g in sorted(df.groupby(["scheme", "n"]), key=lambda x: (SCHEMES.index(x[0][0]),
                                                                         x[0][1])):
        ms = [r for r in g.m if r]
        if not ms:
            continue
        rows.append([s, str(n), str(len(ms))]
                    + [f"{sum(m[k] for m in ms) / len(ms):.3f}" for k in METRICS]
                    + [f"{g.sec.mean():.2f}"])
    return ("Mean over the seeds shown (RDDA).\n\n"
            + _table(["scheme", "requests", "seeds", *SHORT, "seconds"], rows))


def trends(runs: pd.DataFrame, outdir: Path) -> str:
    """Section 6's trends: the mean metric of each scheme's solutions, per network and method."""
    df = frame(runs)
    rows = []
    for label, sel in (("6-node ILP (aggregated)", df[(df.net == "cpn6")
                                                      & (df.method == "highs:aggregated")]),
                       ("6-node RDDA", df[(df.net == "cpn6") & (df.method == "rdda")]),
                       ("38-node RDDA", df[(df.net == "cpn38") & (df.method == "rdda")])):
        for s in SCHEMES:
            ms = [m for m in sel[sel.scheme == s].m if m]
            if ms:
                rows.append([label, s, str(len(ms))]
                            + [f"{sum(m[k] for m in ms) / len(ms):.4f}" for k in METRICS])
    return ("Mean over every request count and seed of the network (the paper: MinT spreads "
            "training for the lowest blocking, MinCU activates the fewest CUs, MinW and MaxR "
            "the fewest wavelengths).\n\n"
            + _table(["network / method", "scheme", "runs", *SHORT], rows))


# minutes measured on 2026-11-24 (2 shared cores): paper-rar 956 s with --workers 1, quick-rar
# 55 s with --workers 2
TABLES = [
    Table("rar", "table2", "Table 2: running time of the ILP (6-node) and RDDA (38-node)",
          ("paper-rar",), ("quick-rar",), table2, minutes=16.0, quick_minutes=1.0),
    Table("rar", "small", "Figs. 5-7, 14-16: ILP vs RDDA on the 6-node network, 2..12 requests",
          ("paper-rar",), ("quick-rar",), small, minutes=16.0, quick_minutes=1.0,
          heading=lambda runs: "Figs. 5-7, 14-16: ILP vs RDDA on the 6-node network, "
          + _sizes_of("cpn6")(runs)),
    Table("rar", "large", "Figs. 8-13: RDDA on the 38-node network, 50..500 requests",
          ("paper-rar",), ("quick-rar",), large, minutes=16.0, quick_minutes=1.0,
          heading=lambda runs: "Figs. 8-13: RDDA on the 38-node network, "
          + _sizes_of("cpn38")(runs)),
    Table("rar", "trends", "Section 6: the schemes' trends on both networks",
          ("paper-rar",), ("quick-rar",), trends, minutes=16.0, quick_minutes=1.0),
]
