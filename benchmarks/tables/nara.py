"""Markdown tables of paper 001 (Nara) with the learned policy, from a results store.

``dmlopt reproduce nara [TABLE...]`` runs ``paper-nara-learn`` and ``paper-nara`` (or
``quick-nara``) and renders :data:`TABLES`; on an existing store::

    python -m dmlopt.benchmarks.tables.nara results/nara-learn.sqlite -o results/nara-tables

writes ``nara-tables.md`` into the directory given (and nothing else, nowhere else) and prints it.
Tables (mean acceptance ratio over the seeds, 95 % Student-t interval half-width, number of
episodes): Table 1 (alpha, three request sets), shape (beta, the alpha-trained policy; Table 6),
size (gamma and delta, 896 and 2048 requests in the full run; with the allocator's mean
seconds) and cross-dataset
(Table 7: every shipped policy on every request set, alpha). Only evaluator-feasible runs are
averaged; a cell with an infeasible or failed run is marked ``!``.

The functions take the results store as a pandas DataFrame (:func:`frame`) and return Markdown;
Table 1's cells carry the paper's Nara and Tetris values beside ours (:data:`PAPER_TABLE1`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pandas as pd

from dmlopt.benchmarks.tables import Table

METHODS = ("random", "tetris", "nalb", "nulb", "netfit", "netfit-probe", "nara", "nara-netfit")
#: the learned policies: the paper's agent and ours over netfit-probe's candidates
LEARNED = ("nara", "nara-netfit")
TITLES = {"random": "Random", "tetris": "Tetris", "nalb": "NALB", "nulb": "NULB",
          "netfit": "netfit (ours)", "netfit-probe": "netfit-probe (ours)",
          "nara": "Nara (learned, ours)",
          "nara-netfit": "nara-netfit (learned, ours)"}
DATASETS = ("uniform", "azure", "alibaba")
DATASET_TITLES = {"uniform": "uniform", "azure": "Azure-like", "alibaba": "Alibaba-like"}
#: Table 1 of paper 001: acceptance ratio of Nara and Tetris per request set and topology
#: (Tetris was not run on delta there)
PAPER_TABLE1 = {
    "uniform": {"alpha": (0.71, 0.61), "beta": (0.68, 0.60), "gamma": (0.84, 0.63),
                "delta": (0.81, None)},
    "azure": {"alpha": (0.86, 0.77), "beta": (0.82, 0.67), "gamma": (0.89, 0.71),
              "delta": (0.88, None)},
    "alibaba": {"alpha": (0.72, 0.63), "beta": (0.67, 0.60), "gamma": (0.75, 0.70),
                "delta": (0.68, None)},
}


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
    Nara / Tetris, Nara minus the best other allocator, the paper's values and
    nara-netfit / Tetris."""
    head = ["topology / requests", *(TITLES[m] for m in METHODS), "Nara / Tetris",
            "Nara - best other", "paper: Nara / Tetris", "nara-netfit / Tetris"]
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
            nara, tetris = PAPER_TABLE1.get(ds, {}).get(topo, (None, None))
            paper = "-" if nara is None else f"{nara:.2f} / " + (
                "-" if tetris is None else f"{tetris:.2f}")
            ours = means["nara-netfit"] / means["tetris"] if means["tetris"] else math.nan
            lines.append(f"| {topo} {DATASET_TITLES[ds]} ({n_req} req.) | " + " | ".join(cells)
                         + f" | {ratio:.3f} | {diff:+.3f} | {paper} | "
                         + ("-" if math.isnan(ours) else f"{ours:.3f}") + " |")
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


def _size_heading(df: pd.DataFrame) -> str:
    """``topologies gamma and delta (896 and 2,048 requests)``: the episode lengths the runs had."""
    from dmlopt.benchmarks.tables import sizes

    big = df[df["topology"].isin(("gamma", "delta"))]
    return ("topologies gamma and delta ("
            + " and ".join(sizes(big.loc[big["topology"] == t, "n_requests"])
                         for t in ("gamma", "delta")) + " requests)")


def cross(df: pd.DataFrame) -> str:
    """Table 7: rows the shipped policies (trained on one request set), columns the request
    sets they are rolled out on (alpha); Tetris and netfit-probe for reference; the
    nara-netfit policies (ours) when the store has their runs."""
    alpha = df[df["topology"] == "alpha"]
    head = ["policy trained on", *(DATASET_TITLES[d] for d in DATASETS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method, name in (("nara", "Nara"), ("nara-netfit", "nara-netfit")):
        for p in DATASETS:
            sub = alpha[alpha["label"] == f"{method}[{p}]"]
            if method != "nara" and sub.empty:
                continue
            cells = [_cell(sub[sub["dataset"] == d], bold=p == d) for d in DATASETS]
            lines.append(f"| {name}-{DATASET_TITLES[p]} | " + " | ".join(cells) + " |")
    for m in ("tetris", "netfit-probe"):
        cells = [_cell(alpha[(alpha["label"] == m) & (alpha["dataset"] == d)])
                 for d in DATASETS]
        lines.append(f"| {TITLES[m]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def losses(df: pd.DataFrame) -> str:
    """One line per (topology, request set) and learned policy (Nara, then nara-netfit)
    whose mean is below another allocator's."""
    out = []
    for (topo, ds), fam in df[df["ok"]].groupby(["topology", "dataset"]):
        means = fam.groupby("label")["acceptance"].mean()
        for m0, name in (("nara", "Nara"), ("nara-netfit", "nara-netfit")):
            if m0 not in means:
                continue
            better = means[(means > means[m0]) & means.index.isin(METHODS)]
            if len(better):
                out.append(f"* {topo} {DATASET_TITLES.get(ds, ds)}: {name} {means[m0]:.3f} < "
                           + ", ".join(f"{TITLES[m]} {v:.3f}" for m, v in
                                       better.sort_values(ascending=False).items()))
    return "\n".join(out) if out else "* none"


def bound(runs: pd.DataFrame) -> str:
    """The offline optimum (formulation ``offline``: the most requests any allocator could
    accept on the episode, knowing them all; its proven upper bound, from ``dmlopt.solve``'s
    default exact solve) against every allocator's accepted count."""
    off = runs[(runs["problem"] == "nara") & (runs["method"] == "highs:offline")]
    if off.empty:
        return "_no runs_"
    head = None
    lines = []
    totals: dict[str, float] = {}
    for inst, g in runs[runs["instance"].isin(set(off["instance"]))].groupby("instance",
                                                                          sort=True):
        # every run's bound is valid: the tightest one (a store may hold several runs)
        o = g[g["method"] == "highs:offline"].sort_values("bound", na_position="last").iloc[0]
        b = math.floor((o["bound"] if o["bound"] is not None and not pd.isna(o["bound"])
                        else o["objective"]) + 1e-6)
        row = {"bound": b}
        for r in g.itertuples():
            if r.method != "highs:offline" and r.feasible:
                row[r.method] = r.objective
        if head is None:
            head = ["bound", *[m for m in (*METHODS, "milp") if m in row]]
            lines = ["| episode | offline status | " + " | ".join(head) + " |",
                     "|" + "---|" * (len(head) + 2)]
        lines.append(f"| `{inst}` | {o['status']} | "
                     + " | ".join("-" if row.get(h) is None else f"{row[h]:.0f}" for h in head)
                     + " |")
        for h in head:
            totals[h] = totals.get(h, 0.0) + (row.get(h) or 0.0)
    lines.append("| total | | " + " | ".join(
        f"{totals[h]:.0f}" + ("" if h == "bound" else
                              f" ({(totals['bound'] - totals[h]) / totals['bound']:.1%} below)")
        for h in head) + " |")
    return ("Accepted requests per 32-request episode (alpha, uniform); the bound is the "
            "offline optimum's proven upper bound from `dmlopt.solve`'s default (the exact "
            "method `acceptance-sets`, then formulation `offline` with the time left; status "
            "optimal where an evaluated allocation meets it, its incumbent if it has no bound), "
            "rounded down.\n\n"
            + "\n".join(lines))


def _t(fn):
    """A renderer of this module as a :class:`Table` render function."""
    def render(runs: pd.DataFrame, outdir: Path) -> str:
        if fn is bound:
            return bound(runs)
        df = frame(runs.to_dict("records"))
        if df.empty:
            return "_no runs_"
        return ("Mean acceptance ratio over the seeds (10 in the full run, fewer in --quick) "
                "± the 95 % interval (Student t; none with one seed); bold: the best mean. "
                "`!`: a run was infeasible.\n\n" + fn(df))
    return render


def render(df: pd.DataFrame) -> str:
    """All tables as one Markdown document."""
    return "\n\n".join([
        "## Table 1: topology alpha (mean acceptance ± 95 % interval)", table1(df),
        "## Shape: alpha-trained policy on beta (Table 6)", shape(df),
        f"## Size: {_size_heading(df)}", size(df),
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


# minutes: quick measured with --workers 2 on 2026-11-24; full measured on 2026-11-25 at load 4-5
# (paper-nara-learn 790 runs in 892 s on one worker, then nara-netfit's 190 in 250 s on two;
# paper-nara 316 runs in 1047 s on one worker, the offline MILP's 150 s runs dominate; its
# offline runs are now the default solve, 600 s each where unproven)
TABLES = [
    Table("nara", "table1", "Table 1: acceptance ratio on topology alpha, three request sets",
          ("paper-nara-learn",), ("quick-nara",), _t(table1), 20.0, 1.7),
    Table("nara", "shape", "Table 6's test: the alpha-trained policy on topology beta",
          ("paper-nara-learn",), ("quick-nara",), _t(shape), 20.0, 1.7),
    Table("nara", "size", "Section 5.2: topologies gamma and delta (896 and 2,048 requests)",
          ("paper-nara-learn",), ("quick-nara",), _t(size), 20.0, 1.7,
          heading=lambda runs: f"Section 5.2: {_size_heading(frame(runs.to_dict('records')))}"),
    Table("nara", "cross", "Table 7: each shipped policy on each request set (alpha)",
          ("paper-nara-learn",), ("quick-nara",), _t(cross), 20.0, 1.7),
    Table("nara", "losses", "Where the learned policy loses",
          ("paper-nara-learn",), ("quick-nara",), _t(losses), 20.0, 1.7),
    Table("nara", "bound", "The offline upper bound vs the online allocators (32 requests)",
          ("paper-nara",), ("quick-nara",), _t(bound), 18.0, 1.7),
]
