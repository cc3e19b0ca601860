"""Markdown tables of paper 001 (Nara) with the learned policy, from a results store.

Usage::

    dmlopt bench paper-nara-learn --workers 2 -o results/nara-learn.sqlite
    python benchmarks/tables/nara.py results/nara-learn.sqlite -o results/nara-learn-tables

writes ``nara-tables.md`` into the directory given (and nothing else, nowhere else) and prints it.
Tables (mean acceptance ratio over the seeds, 95 % Student-t interval half-width, number of
episodes): Table 1 (alpha, three request sets), shape (beta, the alpha-trained policy; Table 6),
size (gamma 896 and delta 2048 requests; with the allocator's mean seconds) and cross-dataset
(Table 7: every shipped policy on every request set, alpha). Only evaluator-feasible runs are
averaged; a cell with an infeasible or failed run is marked ``!``.

The functions take the results store as a pandas DataFrame (:func:`frame`) and return Markdown;
they replace ``benchmarks/scripts/nara_tables.py`` for these suites.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pandas as pd

METHODS = ("random", "tetris", "nalb", "nulb", "netfit", "netfit-probe", "nara")
TITLES = {"random": "Random", "tetris": "Tetris", "nalb": "NALB", "nulb": "NULB",
          "netfit": "netfit (ours)", "netfit-probe": "netfit-probe (ours)",
          "nara": "Nara (learned, ours)"}
DATASETS = ("uniform", "azure", "alibaba")
DATASET_TITLES = {"uniform": "uniform", "azure": "Azure-like", "alibaba": "Alibaba-like"}


def frame(rows: list[dict]) -> pd.DataFrame:
    """Results-store rows (``dmlopt.benchmarks.store.read``) of problem nara as a DataFrame
    with the columns dataset, topology, seed, label (method, ``nara[<policy>]`` for a named
    policy), ok (feasible run), acceptance, seconds."""
    out = []
    for r in rows:
        if r["problem"] != "nara":
            continue
        inst = r["instance"]
        family, _, seed = inst.partition("#")
        dataset = family.split("(")[0]
        params = dict(p.split("=", 1) for p in family[len(dataset) + 1:-1].split(",") if p)
        opts = json.loads(r["options"] or "{}")
        label = r["method"] + (f"[{opts['policy']}]" if opts.get("policy") else "")
        m = r["metrics"] or {}
        out.append({"dataset": dataset, "topology": params.get("topology", "alpha"),
                    "n_requests": int(m.get("requests", 0)), "seed": int(seed or 0),
                    "label": label, "ok": bool(r["feasible"]) and r["status"] in
                    ("feasible", "optimal"),
                    "acceptance": m.get("acceptance_ratio", math.nan),
                    "seconds": r["seconds"]})
    df = pd.DataFrame(out, columns=["dataset", "topology", "n_requests", "seed", "label", "ok",
                                    "acceptance", "seconds"])
    # the same run in several stores counts once (the last one read)
    return df.drop_duplicates(["dataset", "topology", "n_requests", "seed", "label"],
                              keep="last").reset_index(drop=True)


def _ci(x: pd.Series) -> tuple[float, float, int]:
    """(mean, 95 % half-width, n) of the values."""
    from scipy.special import stdtrit  # Student-t quantile (lighter import than scipy.stats)

    x = x.dropna()
    n = len(x)
    if n == 0:
        return math.nan, math.nan, 0
    if n == 1:
        return float(x.iloc[0]), math.nan, 1
    half = float(stdtrit(n - 1, 0.975) * x.std(ddof=1) / math.sqrt(n))
    return float(x.mean()), half, n


def _cell(sub: pd.DataFrame, bold: bool = False, seconds: bool = False) -> str:
    if sub.empty:
        return "-"
    mean, half, n = _ci(sub.loc[sub["ok"], "acceptance"])
    text = f"{mean:.3f}" + ("" if math.isnan(half) else f" ± {half:.3f}")
    if bold:
        text = f"**{text}**"
    if seconds:
        text += f" ({sub['seconds'].mean():.1f} s)"
    if not sub["ok"].all():
        text += " !"
    return text


def _family_table(df: pd.DataFrame, topologies: tuple[str, ...], seconds: bool = False) -> str:
    """Rows (topology, dataset); columns the allocators; best mean in bold; last columns
    Nara / Tetris and Nara minus the best other allocator."""
    head = ["topology / requests", *(TITLES[m] for m in METHODS), "Nara / Tetris",
            "Nara - best other"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for topo in topologies:
        for ds in DATASETS:
            fam = df[(df["topology"] == topo) & (df["dataset"] == ds)]
            if fam.empty:
                continue
            means = {m: fam.loc[(fam["label"] == m) & fam["ok"], "acceptance"].mean()
                     for m in METHODS}
            best = max((v for v in means.values() if not math.isnan(v)), default=math.nan)
            cells = [_cell(fam[fam["label"] == m], bold=means[m] == best, seconds=seconds)
                     for m in METHODS]
            others = [v for m, v in means.items() if m != "nara" and not math.isnan(v)]
            ratio = means["nara"] / means["tetris"] if means["tetris"] else math.nan
            diff = means["nara"] - max(others) if others else math.nan
            n_req = int(fam["n_requests"].max())
            lines.append(f"| {topo} {DATASET_TITLES[ds]} ({n_req} req.) | " + " | ".join(cells)
                         + f" | {ratio:.3f} | {diff:+.3f} |")
    return "\n".join(lines)


def table1(df: pd.DataFrame) -> str:
    """Table 1: topology alpha, the three request sets."""
    return _family_table(df, ("alpha",))


def shape(df: pd.DataFrame) -> str:
    """Table 6's test: the alpha-trained policy rolled out on beta (differently shaped)."""
    return _family_table(df, ("beta",))


def size(df: pd.DataFrame) -> str:
    """Section 5.2's size test: gamma and delta, with the mean seconds per episode."""
    return _family_table(df, ("gamma", "delta"), seconds=True)


def cross(df: pd.DataFrame) -> str:
    """Table 7: rows the shipped policies (trained on one request set), columns the request
    sets they are rolled out on (alpha); Tetris and netfit-probe for reference."""
    alpha = df[df["topology"] == "alpha"]
    head = ["policy trained on", *(DATASET_TITLES[d] for d in DATASETS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in DATASETS:
        cells = [_cell(alpha[(alpha["label"] == f"nara[{p}]") & (alpha["dataset"] == d)],
                       bold=p == d) for d in DATASETS]
        lines.append(f"| Nara-{DATASET_TITLES[p]} | " + " | ".join(cells) + " |")
    for m in ("tetris", "netfit-probe"):
        cells = [_cell(alpha[(alpha["label"] == m) & (alpha["dataset"] == d)])
                 for d in DATASETS]
        lines.append(f"| {TITLES[m]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def losses(df: pd.DataFrame) -> str:
    """One line per (topology, request set) where Nara's mean is below another allocator's."""
    out = []
    for (topo, ds), fam in df[df["ok"]].groupby(["topology", "dataset"]):
        means = fam.groupby("label")["acceptance"].mean()
        if "nara" not in means:
            continue
        better = means[(means > means["nara"]) & means.index.isin(METHODS)]
        if len(better):
            out.append(f"* {topo} {DATASET_TITLES.get(ds, ds)}: Nara {means['nara']:.3f} < "
                       + ", ".join(f"{TITLES[m]} {v:.3f}" for m, v in
                                   better.sort_values(ascending=False).items()))
    return "\n".join(out) if out else "* none"


def render(df: pd.DataFrame) -> str:
    """All tables as one Markdown document."""
    return "\n\n".join([
        "## Table 1: topology alpha (mean acceptance ± 95 % interval)", table1(df),
        "## Shape: alpha-trained policy on beta (Table 6)", shape(df),
        "## Size: gamma (896 requests) and delta (2048 requests)", size(df),
        "## Cross-dataset (Table 7), topology alpha", cross(df),
        "## Where the learned policy loses", losses(df)]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/tables/nara.py",
        description="Markdown tables of the Nara suites (paper-nara-learn) from a results "
                    "store; writes nara-tables.md only under the directory given.")
    parser.add_argument("store", nargs="+", help="results store(s) (.sqlite) of dmlopt bench; "
                        "several are concatenated")
    parser.add_argument("-o", "--out", help="directory for nara-tables.md (default: print "
                        "only)")
    args = parser.parse_args(argv)
    from dmlopt.benchmarks import store
    from dmlopt.errors import DmloptError
    from dmlopt.io import atomic_write_text

    try:
        text = render(frame([r for path in args.store for r in store.read(path)]))
    except DmloptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        atomic_write_text(Path(args.out) / "nara-tables.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
