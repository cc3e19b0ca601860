"""Paper 000's Flow Tracking figures (Figs. 5-10) and Fig. 11 on the inferred topology.

The generic ``dmlopt report`` gives per-method gaps and runtimes; the paper's figures need the
metrics of the ``infer`` evaluator averaged per topology, routing and number of paths (Figs.
5-10), and the true communication cost per overlay and VM count (Fig. 11). ``dmlopt reproduce
tap flow-tracking fig11-inferred`` runs ``paper-infer`` and ``paper-infer_tap`` (or their quick
versions) and renders :data:`TABLES`; on existing stores::

    python -m dmlopt.benchmarks.tables.infer --infer infer.sqlite --tap infer_tap.sqlite \
        -o results/infer
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd

from dmlopt import io
from dmlopt.benchmarks.tables import Table

METHODS = ("ft", "rnj", "ce")
METRICS = {"hops_error": "hops error", "gde": "GDE", "pde": "PDE", "nged": "NGED",
           "h2": "H2"}
ROUTINGS = ("random-walk", "random-simple", "random-shortest", "dijkstra")
#: generator defaults of models/infer.py and models/infer_tap.py ("dc")
DEFAULTS = {"infer": {"topology": "fat-tree", "routing": "dijkstra"},
            "infer_tap": {"topology": "fat-tree", "routing": "random-walk", "overlay": "ps"}}
_ID = re.compile(r"^(?P<gen>[^(#]+)\((?P<args>[^)]*)\)#(?P<seed>\d+)$")


def _params(instance_id: str) -> dict:
    m = _ID.match(instance_id)
    if not m:
        return {}
    out: dict = {"run": int(m["seed"])}
    for kv in m["args"].split(","):
        k, _, v = kv.partition("=")
        out[k] = int(v) if v.isdigit() else v
    return out


def frame(rows: list[dict], problem: str) -> pd.DataFrame:
    """One row per finished run: instance parameters, method label, objective, metrics."""
    recs = []
    for r in rows:
        if r["problem"] != problem or r["objective"] is None:
            continue
        opts = r.get("options") or "{}"
        on = "truth" if '"on":"truth"' in opts.replace(" ", "") else ""
        label = r["method"] + (" on=truth" if on else "")
        recs.append({**_params(r["instance"]), "method": label, "status": r["status"],
                     "objective": r["objective"], "seconds": r["seconds"],
                     **(r.get("metrics") or {})})
    df = pd.DataFrame(recs)
    for col, default in DEFAULTS[problem].items():  # the generator's defaults (not in the id)
        df[col] = df[col].fillna(default) if col in df else default
    for col in ("paths", "vms"):  # from the evaluator's metrics (the id omits defaults)
        if col in df:
            df[col] = df[col].astype(int)
    return df


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Means over the Monte Carlo runs per topology, routing, paths and method."""
    cols = [c for c in (*METRICS, "h2_precision", "ged_exact", "hops_error_underlay")
            if c in df]
    return df.groupby(["topology", "routing", "paths", "method"])[cols].mean().reset_index()


def tables(rows: list[dict]) -> str:
    """Markdown: per topology, one row per routing and path count, each cell FT / RNJ / CE."""
    df = frame(rows, "infer")
    if df.empty:
        return ""
    s = summary(df)
    runs = df.groupby(["topology", "routing", "paths", "method"]).size().min()
    out = [f"Means over {runs} Monte Carlo runs; each cell FT / RNJ / CE.", ""]
    head = "| topology | routing | paths | " + " | ".join(METRICS.values()) + " |"
    out += [head, "|" + "---|" * (3 + len(METRICS))]
    for (topo, routing, paths), grp in s.groupby(["topology", "routing", "paths"], sort=False):
        by = grp.set_index("method")
        cells = []
        for metric in METRICS:
            vals = [by.loc[m, metric] if m in by.index else np.nan for m in METHODS]
            cells.append(" / ".join("-" if pd.isna(v) else f"{v:.3f}" for v in vals))
        out.append(f"| {topo} | {routing} | {paths} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _order(s: pd.DataFrame) -> pd.DataFrame:
    key = {r: i for i, r in enumerate(ROUTINGS)}
    return s.assign(_r=s.routing.map(key)).sort_values(["topology", "_r", "paths"]).drop(
        columns="_r")


def plot_infer(s: pd.DataFrame, out: Path) -> list[Path]:
    """Figs. 5-10: one PNG per metric, a panel per topology and routing strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"ft": "o-", "rnj": "s--", "ce": "^:"}
    figs = {"fig5_6_hops_error": "hops_error", "fig7_8_gde": "gde", "fig7_8_pde": "pde",
            "fig9_nged": "nged", "fig10_h2": "h2"}
    topos = list(dict.fromkeys(s.topology))
    paths = []
    for fname, metric in figs.items():
        fig, axes = plt.subplots(len(topos), 4, figsize=(16, 3.5 * len(topos)), sharey="row",
                                 squeeze=False)
        for r, topo in enumerate(topos):
            for c, routing in enumerate(ROUTINGS):
                ax = axes[r, c]
                for method in METHODS:
                    sub = s[(s.topology == topo) & (s.routing == routing) & (s.method == method)]
                    ax.plot(sub["paths"], sub[metric], styles[method], label=method.upper())
                ax.set_title(f"{topo}, routing {c + 1}: {routing}", fontsize=9)
                ax.grid(alpha=0.3)
                ax.set_xlabel("measurement paths")
                if c == 0:
                    ax.set_ylabel(METRICS[metric])
        axes[0, 0].legend()
        fig.suptitle(f"{METRICS[metric]} (paper 000, {fname.split('_')[0]}), mean over runs")
        fig.tight_layout()
        path = io.inside(out, f"{fname}.png")
        io.save_figure(fig, path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths


TAP_COLS = ("highs:truth", "exact", "cle", "abm", "local-search", "random", "cle on=truth",
            "abm on=truth", "local-search on=truth")


def fig11_summary(rows: list[dict]) -> pd.DataFrame:
    df = frame(rows, "infer_tap")
    if df.empty:
        return df
    keys = ["topology", "routing", "overlay", "vms"]
    cost = df.pivot_table(index=keys, columns="method", values="objective", aggfunc="mean")
    opt = df[df.method == "highs:truth"].set_index([*keys, "run"])["objective"]
    ex = df[df.method == "exact"].set_index([*keys, "run"])
    gap = ((ex["objective"] / opt.reindex(ex.index) - 1) * 100).groupby(keys).mean()
    corr = ex["hop_corr"].groupby(keys).mean()
    runs = ex.groupby(keys).size()
    cols = [c for c in TAP_COLS if c in cost.columns]
    return cost[cols].assign(**{"exact gap %": gap, "hop corr": corr, "runs": runs}).reset_index()


def fig11_table(rows: list[dict]) -> str:
    s = fig11_summary(rows)
    if s.empty:
        return ""
    head = list(s.columns)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in s.iterrows():
        out.append("| " + " | ".join(f"{v:.2f}" if isinstance(v, float) else str(v)
                                     for v in r.tolist()) + " |")
    return "\n".join(out) + "\n"


def plot_fig11(s: pd.DataFrame, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = [c for c in ("highs:truth", "exact", "cle", "abm", "local-search", "random")
            if c in s]
    combos = list(dict.fromkeys(zip(s.topology, s.overlay, strict=True)))
    paths = []
    for routing in dict.fromkeys(s.routing):
        fig, axes = plt.subplots(1, len(combos), figsize=(4.5 * len(combos), 4), squeeze=False)
        for ax, (topo, overlay) in zip(axes[0], combos, strict=True):
            sub = s[(s.topology == topo) & (s.overlay == overlay) & (s.routing == routing)]
            x = np.arange(len(sub))
            w = 0.8 / len(cols)
            for k, c in enumerate(cols):
                ax.bar(x + k * w, sub[c], w, label=c if c != "highs:truth" else "exact@truth")
            ax.set_xticks(x + 0.4 - w / 2, sub["vms"].astype(int))
            ax.set_xlabel("VMs")
            ax.set_ylabel("communication cost (true hops)")
            ax.set_title(f"{topo}-{'PS' if overlay == 'ps' else 'AR'}")
        axes[0, 0].legend(fontsize=7)
        fig.suptitle(f"Fig. 11: allocation on the FT-inferred topology ({routing}), cost on the "
                     "truth")
        fig.tight_layout()
        path = io.inside(out, f"fig11_{routing}.png")
        io.save_figure(fig, path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths


def flow_tracking(runs: pd.DataFrame, outdir: Path) -> str:
    """Figs. 5-10: the table (means over the Monte Carlo runs) and one PNG per metric."""
    recs = runs.to_dict("records")
    text = tables(recs)
    if not text:
        return "_no runs_"
    s = _order(summary(frame(recs, "infer")))
    pngs = plot_infer(s, Path(outdir))
    return text + "\n" + "\n".join(f"![{p.stem}]({p.name})" for p in pngs) + "\n"


def fig11_inferred(runs: pd.DataFrame, outdir: Path) -> str:
    """Fig. 11 on the FT-inferred topology: mean true cost per method (means over the Monte
    Carlo runs), the exact allocation's gap to the optimum on the truth, the hop correlation."""
    recs = runs.to_dict("records")
    text = fig11_table(recs)
    if not text:
        return "_no runs_"
    pngs = plot_fig11(fig11_summary(recs), Path(outdir))
    return ("Mean communication cost on the ground truth over the runs (column `runs`); "
            "`highs:truth` allocates on the true hops (the optimum), the others on the inferred "
            "topology (`on=truth`: the heuristic on the truth, for reference).\n\n" + text
            + "\n" + "\n".join(f"![{p.stem}]({p.name})" for p in pngs) + "\n")


# minutes: quick suites measured with --workers 2 (2026-11-24); full runs measured with
# --workers 1 on 2026-11-25 (2 shared cores, load 4-6): paper-infer 99 s, paper-infer_tap 248 s
TABLES = [
    Table("tap", "flow-tracking", "Figs. 5-10: Flow Tracking, RNJ and CE (hops error, GDE, PDE, "
          "NGED, H2) on fat-tree and DCell, four routings", ("paper-infer",), ("quick-infer",),
          flow_tracking, 1.7, 0.3),
    Table("tap", "fig11-inferred", "Fig. 11 on the FT-inferred topology: allocation cost on "
          "the truth", ("paper-infer_tap",), ("quick-infer_tap",), fig11_inferred, 4.1, 0.4),
]


def main(argv: list[str] | None = None) -> None:
    from dmlopt.benchmarks import store

    ap = argparse.ArgumentParser(prog="python -m dmlopt.benchmarks.tables.infer",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--infer", type=Path, help="store of paper-infer")
    ap.add_argument("--tap", type=Path, help="store of paper-infer_tap")
    ap.add_argument("-o", "--out", type=Path, required=True, help="output directory (created)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    text = []
    if args.infer:
        rows = store.read(args.infer)
        df = frame(rows, "infer")
        s = _order(summary(df))
        io.write_csv(args.out / "infer_summary.csv", s, index=False)
        plot_infer(s, args.out)
        text += ["## Figs. 5-10", "", tables(rows)]
    if args.tap:
        rows = store.read(args.tap)
        s = fig11_summary(rows)
        io.write_csv(args.out / "fig11_summary.csv", s, index=False)
        plot_fig11(s, args.out)
        text += ["## Fig. 11", "", fig11_table(rows)]
    io.atomic_write_text(args.out / "report.md", "\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
