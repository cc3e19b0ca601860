"""The benchmark report: Markdown, a self-contained HTML page, CSV and PNG plots from a store.

Per problem and instance the reference is the best proven optimum (the best objective of an exact
run with status ``optimal`` proven at the default tolerance: its solver gap, if any, and the
``mip_gap`` it asked for, if any, at most :data:`dmlopt.solvers.OPTIMALITY_GAP`, so that an old
store's ``optimal`` run with ``mip_gap = 2`` is not taken as an optimum); without one, the
library's certified optimum, else its best known value (or the store's, when a run beats it);
the certified gap is measured apart, against the best valid bound of the instance (the largest
lower bound of a min problem, the smallest upper bound of a max problem). The gap of a run in
percent is ``100 (obj - ref) / |ref|`` for a min problem and ``100 (ref - obj) / |ref|`` for a
max problem (the problem's ``SENSE`` from the registry); it is undefined (empty) when ``ref`` is
0 and the objective is not. Only runs that produced a feasible, evaluated solution (status
``optimal``, ``feasible`` or ``time_limit`` with an objective) have a gap.

The speed-up of a run is the time of the fastest exact run that proved optimality on that
instance divided by the run's own time (the method's ``seconds``, which include the model build of
exact runs); the time ratio is its inverse. Summaries give, per method, the runs counted apart
(solved, optimal, time limit, failed, bound), the mean and max gaps each with the number of runs
it covers, the plain and shifted (10 s) geometric mean of seconds, the geometric mean of the time
ratio and the mean primal integral of exact runs (:mod:`dmlopt.benchmarks.report_time`). Exact
optima that disagree between exact methods are listed as warnings (a modelling bug).

Plots (one set per problem, matplotlib's Agg backend, legends outside the axes): the gap per
heuristic (box plot with every run as a point), the runtime of every method on a log scale, the
Dolan-More performance profile of the exact methods (E. D. Dolan, J. J. More, "Benchmarking
optimization software with performance profiles", Math. Program. 91, 2002) and the gap over
time of the exact runs.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dmlopt import io as _io
from dmlopt import registry
from dmlopt.benchmarks import report_html, report_time
from dmlopt.benchmarks import store as store_mod
from dmlopt.benchmarks.report_time import SHIFT, shifted_geomean
from dmlopt.errors import InstanceError, UnknownNameError
from dmlopt.io import atomic_write_text, check_output_dir, save_figure, write_csv
from dmlopt.solvers import OPTIMALITY_GAP

SOLVED = ("optimal", "feasible", "time_limit")
_STD_EXACT_OPTS = {"solver", "formulation", "time_limit", "threads"}
_TOL = 1e-6


# --------------------------------------------------------------------------- tables


def sense_of(problem: str, senses: dict[str, str] | None = None) -> str:
    """``"min"`` or ``"max"``: from ``senses`` if given, else the registry (``min`` if unknown)."""
    if senses and problem in senses:
        return senses[problem]
    try:
        return registry.get(problem).sense
    except UnknownNameError:
        return "min"


def label(method: str, kind: str, options: str) -> str:
    """A method's name in the report: the method plus its non-default options."""
    try:
        opts = json.loads(options) if options else {}
    except json.JSONDecodeError:
        opts = {}
    if kind == "exact":
        opts = {k: v for k, v in opts.items() if k not in _STD_EXACT_OPTS}
    if kind == "bound" and isinstance(opts, dict):  # its options and its time limit
        opts = {**(opts.get("options") or {}),
                **({"time_limit": opts["time_limit"]} if opts.get("time_limit") else {})}
    if not opts:
        return method
    return method + " " + ",".join(f"{k}={_compact(v)}" for k, v in sorted(opts.items()))


def _compact(v: Any) -> str:
    return json.dumps(v, separators=(",", ":")) if isinstance(v, dict | list) else str(v)


def frame(rows: list[dict[str, Any]], senses: dict[str, str] | None = None) -> pd.DataFrame:
    """Every run with its method label, reference value, gap (%) and speed-up."""
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df["label"] = [label(m, k, o) for m, k, o in zip(df["method"], df["kind"], df["options"],
                                                      strict=True)]
    df["sense"] = [sense_of(p, senses) for p in df["problem"]]
    for col in ("objective", "bound", "seconds"):
        df[col] = pd.to_numeric(df[col], errors="coerce")
    ok = df["status"].isin(SOLVED) & df["objective"].notna()
    df["solved"] = ok
    df["proven"] = [proven(st, g, o) for st, g, o in
                    zip(df["status"], df["gap"] if "gap" in df else [None] * len(df),
                        df["options"], strict=True)]
    df["suspect"] = suspects(df)
    df.loc[df["suspect"] != "", ["solved", "proven"]] = False
    refs = instances(df)
    df = df.merge(refs[["problem", "instance_hash", "ref", "ref_kind", "ref_seconds"]],
                  on=["problem", "instance_hash"], how="left")
    refs = refs.rename(columns={"bound": "best_bound"})
    df = df.merge(refs[["problem", "instance_hash", "best_bound"]],
                  on=["problem", "instance_hash"], how="left")
    # two columns, never mixed: the gap to a reference optimum (proven, or the library's), and
    # the certified gap to the best valid bound of the instance (exact runs' and bound runs')
    df["gap_pct"] = [
        _gap(o, r, s) if solved and kind != "bound" else np.nan
        for o, r, s, solved, kind in zip(df["objective"], df["ref"], df["sense"], df["solved"],
                                         df["ref_kind"], strict=True)
    ]
    df["cert_gap_pct"] = [
        _gap(o, b, s) if solved else np.nan
        for o, b, s, solved in zip(df["objective"], df["best_bound"], df["sense"], df["solved"],
                                   strict=True)
    ]
    secs = df["seconds"].clip(lower=1e-6)
    df["speedup"] = np.where(df["ref_seconds"].notna() & df["solved"],
                             df["ref_seconds"] / secs, np.nan)
    if "trace" not in df:
        df["trace"] = [[] for _ in range(len(df))]
    df["trace"] = [t if isinstance(t, list) else store_mod.trace_of(t) for t in df["trace"]]
    df["primal_integral"] = report_time.integrals(df)
    return df


def suspects(df: pd.DataFrame) -> pd.Series:
    """Why each row cannot be true (``""``: nothing found), re-checked from the store itself.

    A proven optimum is an exact run with status ``optimal`` whose bound (if stored) agrees
    with its objective. Flagged: "optimal" without that proof (a heuristic's, or a bound that
    disagrees); a solved row the harness marked infeasible; an objective better than a proven
    optimum (it disagrees with its instance); a bound (of a bound run, or of an exact run
    that proved nothing) beyond a proven optimum or a feasible objective of the instance.
    Flagged rows are listed in the report and left out of every reference, gap and mean.

    Parameters
    ----------
    df : the runs, with ``sense`` and ``proven`` columns.

    Returns
    -------
    pandas.Series
        One reason per row, ``""`` for a row that passes.

    References
    ----------
    Issue 51, item 5.
    """
    why = pd.Series([""] * len(df), index=df.index, dtype=object)
    obj, bnd = df["objective"], df["bound"]
    tol = _TOL * np.maximum(1.0, obj.abs().fillna(0.0))
    claims = df["status"] == "optimal"
    agree = bnd.isna() | ((obj - bnd).abs() <= np.maximum(tol, OPTIMALITY_GAP * obj.abs()
                                                           .fillna(0.0) + _TOL))
    why[claims & (df["kind"] != "exact") & ~(bnd.notna() & agree)] = \
        "\"optimal\" without a proof (no bound equal to its objective)"
    why[claims & (df["kind"] == "exact") & ~agree] = \
        "\"optimal\" but its own bound disagrees with its objective"
    feas = df["feasible"] if "feasible" in df else pd.Series([None] * len(df), index=df.index)
    why[(why == "") & df["solved"] & (pd.to_numeric(feas, errors="coerce") == 0)] = \
        "an objective for a solution the evaluator found infeasible"
    for _, g in df[why == ""].groupby(["problem", "instance_hash"], sort=False):
        lower = g["sense"].iloc[0] == "min"  # bounds are lower bounds, objectives >= them
        opt = g[g["proven"] & (g["kind"] == "exact") & g["objective"].notna()]["objective"]
        solved = g[g["solved"] & g["objective"].notna()]["objective"]
        if len(opt):
            best = opt.min() if lower else opt.max()
            t = _TOL * max(1.0, abs(best))
            beyond = (g["objective"] < best - t) if lower else (g["objective"] > best + t)
            why[g.index[beyond & g["solved"]]] = (f"an objective beyond the proven optimum "
                                                  f"{best:.10g}: it disagrees with its instance")
        if len(solved):
            feasible = solved[~why[solved.index].astype(bool)]
            if len(feasible):
                best = feasible.min() if lower else feasible.max()
                t = _TOL * max(1.0, abs(best))
                over = (g["bound"] > best + t) if lower else (g["bound"] < best - t)
                # two proven optima that disagree are the warning below, not a flag here
                over &= ~why[g.index].astype(bool) & ~(g["proven"] & (g["kind"] == "exact"))
                why[g.index[over]] = (f"a bound beyond the feasible objective {best:.10g} "
                                      f"({'a proven optimum' if len(opt) else 'evaluated'})")
    return why


def proven(status: Any, gap: Any, options: Any) -> bool:
    """Whether a run proved optimality at the default tolerance: status ``optimal``, its solver
    gap (if any) and the ``mip_gap`` option it ran with (if any) at most ``OPTIMALITY_GAP``."""
    if status != "optimal":
        return False
    if _number(gap) is not None and _number(gap) > OPTIMALITY_GAP:
        return False
    try:
        opts = json.loads(options) if isinstance(options, str) and options else {}
    except json.JSONDecodeError:
        opts = {}
    asked = _number(opts.get("mip_gap")) if isinstance(opts, dict) else None
    return asked is None or asked <= OPTIMALITY_GAP


def _number(x: Any) -> float | None:
    """A finite float, or None (missing, NaN or not a number)."""
    if isinstance(x, bool) or not isinstance(x, int | float | np.number):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _gap(obj: float, ref: float, sense: str) -> float:
    if ref is None or not math.isfinite(ref) or obj is None or not math.isfinite(obj):
        return np.nan
    diff = obj - ref if sense == "min" else ref - obj
    if abs(ref) < _TOL:
        return 0.0 if abs(diff) < _TOL else np.nan
    return 100.0 * diff / abs(ref)


def instances(df: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, instance): optimum, best bound, best known objective, reference (rows
    flagged by :func:`suspects` left out)."""
    df = _trusted(df)
    out = []
    for (problem, h), g in df.groupby(["problem", "instance_hash"], sort=False):
        sense = g["sense"].iloc[0]
        best = min if sense == "min" else max
        exact = g[g["kind"] == "exact"]
        opt_rows = exact[exact["proven"] & exact["objective"].notna()]
        opt = best(opt_rows["objective"]) if len(opt_rows) else np.nan
        disagree = bool(len(opt_rows) and opt_rows["objective"].max() - opt_rows["objective"].min()
                        > _TOL * max(1.0, abs(opt)))
        bound_rows = g[(g["kind"] == "bound") & (g["status"] == "bound")]
        bounds = pd.concat([exact["bound"], bound_rows["bound"]]).dropna()
        # the strongest bound: largest lower bound (min), smallest upper bound (max)
        bound = (bounds.max() if sense == "min" else bounds.min()) if len(bounds) else np.nan
        solved = g[g["status"].isin(SOLVED) & g["objective"].notna()]
        best_known = best(solved["objective"]) if len(solved) else np.nan
        lib = _library(h) if math.isnan(opt) else None
        lib_bound = _number(getattr(lib, "bound", None)) if lib is not None else None
        if lib_bound is not None:  # the library's certified bound is valid for the instance
            bounds = pd.concat([bounds, pd.Series([lib_bound])])
            bound = (bounds.max() if sense == "min" else bounds.min())
        if not math.isnan(opt):
            ref, ref_kind = opt, "optimum"
        elif lib is not None and lib.status == "optimal":
            ref, ref_kind = lib.objective, "library"  # a certified optimum (dmlopt references)
        elif lib is not None and _number(lib.objective) is not None:
            # the library's best known value, not proven; a run of the store that beats it is
            # the best known value instead (a gap is never taken to a worse value)
            ref, ref_kind = lib.objective, "library-best"
            if not math.isnan(best_known) and best([best_known, ref]) != ref:
                ref, ref_kind = best_known, "best-known"
        elif not math.isnan(bound):
            ref, ref_kind = bound, "bound"
        else:
            ref, ref_kind = np.nan, ""
        ref_seconds = opt_rows["seconds"].min() if len(opt_rows) else np.nan
        out.append({
            "problem": problem, "instance": g["instance"].iloc[0], "instance_hash": h,
            "sense": sense, "optimum": opt, "bound": bound, "best_known": best_known,
            "ref": ref, "ref_kind": ref_kind, "ref_seconds": ref_seconds,
            "optima_disagree": disagree, "runs": len(g),
        })
    return pd.DataFrame(out)


def _library(instance_hash: str) -> Any:
    """The reference library's record of an instance (:mod:`dmlopt.references`), or None."""
    from dmlopt import references

    return references.lookup(instance_hash)


def _geomean(x: pd.Series) -> float:
    x = x.dropna()
    x = x[x > 0]
    return float(np.exp(np.log(x).mean())) if len(x) else np.nan


def _trusted(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["suspect"] == ""] if "suspect" in df else df


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, method label): runs counted apart (solved, proven optimal, time limit,
    failed, bound), mean/max gaps with the number of runs each mean covers, plain and shifted
    geometric mean of seconds, geometric mean time ratio (rows flagged by :func:`suspects`
    left out)."""
    df = _trusted(df)
    out = []
    for (problem, kind, lab), g in df.groupby(["problem", "kind", "label"], sort=False):
        ratio = 1.0 / g["speedup"]
        secs = g["seconds"].where(~g["status"].isin(("error", "killed")))
        out.append({
            "problem": problem, "kind": kind, "method": lab, "runs": len(g),
            "optimal": int(g["proven"].sum()),
            "solved": int(g["solved"].sum()),
            "time_limit": int((g["status"] == "time_limit").sum()),
            "failed": int(g["status"].isin(("error", "killed")).sum()),
            "bound": int((g["status"] == "bound").sum()),
            "mean_gap_pct": g["gap_pct"].mean(), "max_gap_pct": g["gap_pct"].max(),
            "n_gap": int(g["gap_pct"].notna().sum()),
            "mean_cert_gap_pct": g["cert_gap_pct"].mean(),
            "max_cert_gap_pct": g["cert_gap_pct"].max(),
            "n_cert_gap": int(g["cert_gap_pct"].notna().sum()),
            "mean_seconds": secs.mean(), "geomean_seconds": _geomean(secs),
            "sgm_seconds": shifted_geomean(secs), "n_seconds": int(secs.notna().sum()),
            "geomean_time_ratio": _geomean(ratio), "geomean_speedup": _geomean(g["speedup"]),
            "n_speedup": int(g["speedup"].notna().sum()),
            "mean_primal_integral": (g["primal_integral"].mean() if "primal_integral" in g
                                     else np.nan),
            "n_primal_integral": (int(g["primal_integral"].notna().sum())
                                  if "primal_integral" in g else 0),
        })
    return pd.DataFrame(out)


def per_instance(df: pd.DataFrame) -> pd.DataFrame:
    """Per (problem, instance, method label), seeds aggregated (flagged rows left out)."""
    df = _trusted(df)
    out = []
    keys = ["problem", "instance_hash", "kind", "label"]
    for (problem, h, kind, lab), g in df.groupby(keys, sort=False):
        statuses = g["status"].value_counts()
        out.append({
            "problem": problem, "instance": g["instance"].iloc[0], "instance_hash": h,
            "kind": kind, "method": lab, "runs": len(g),
            "status": ", ".join(f"{n} {s}" if n > 1 else s for s, n in statuses.items()),
            "ref": g["ref"].iloc[0], "ref_kind": g["ref_kind"].iloc[0],
            "objective": g["objective"].where(g["solved"]).mean(),
            "objective_min": g["objective"].where(g["solved"]).min(),
            "objective_max": g["objective"].where(g["solved"]).max(),
            "solved": int(g["solved"].sum()),
            "bound": g["bound"].where(~g["status"].isin(("error", "killed"))).mean(),
            "gap_pct": g["gap_pct"].mean(), "cert_gap_pct": g["cert_gap_pct"].mean(),
            "seconds": g["seconds"].mean(),
            "speedup": _geomean(g["speedup"]),
        })
    res = pd.DataFrame(out)
    # within an instance: exact methods first, then heuristics, each alphabetically
    order = {h: i for i, h in enumerate(dict.fromkeys(df["instance_hash"]))}
    res["_o"] = res["instance_hash"].map(order)
    return res.sort_values(["_o", "kind", "method"], kind="stable").drop(columns="_o")


# --------------------------------------------------------------------------- plots


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_EXACT_COLOR = "#1f77b4"
_HEUR_COLOR = "#ff7f0e"
_KIND_COLOR = {"exact": _EXACT_COLOR, "heuristic": _HEUR_COLOR, "bound": "#2ca02c"}
_KIND_NAME = {"exact": "exact method (solved)", "heuristic": "heuristic (solved)",
              "bound": "bound method (a bound)"}


def plot_gaps(df: pd.DataFrame, problem: str, path: Path) -> bool:
    """Box plot of the gap per heuristic, every run a point: the gap to the optimum when every
    plotted run has one, else the certified gap (to the best bound); never a mix."""
    mine = df[(df["problem"] == problem) & (df["kind"] == "heuristic") & df["solved"]]
    column = "gap_pct" if len(mine) and mine["gap_pct"].notna().all() else "cert_gap_pct"
    d = mine[mine[column].notna()]
    if d.empty:
        return False
    plt = _plt()
    labels = sorted(d["label"].unique(), key=lambda lab: d[d["label"] == lab][column].mean())
    data = [d[d["label"] == lab][column].to_numpy() for lab in labels]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(labels) + 2), 4.2))
    ax.boxplot(data, showfliers=False, widths=0.5,
               medianprops={"color": "black"}, boxprops={"color": "#555555"})
    rng = np.random.default_rng(0)
    for i, vals in enumerate(data, start=1):
        ax.scatter(i + rng.uniform(-0.12, 0.12, len(vals)), vals, s=18, alpha=0.7,
                   color=_HEUR_COLOR, zorder=3, label="one run" if i == 1 else None)
        ax.scatter([i], [vals.mean()], marker="D", s=36, color="black", zorder=4,
                   label="mean" if i == 1 else None)
    ax.set_xticks(range(1, len(labels) + 1), labels, rotation=20 if len(labels) > 3 else 0,
                  ha="right" if len(labels) > 3 else "center")
    ref = "optimum" if column == "gap_pct" else "best bound (certified gap)"
    ax.axhline(0, color="#2ca02c", lw=1, ls="--", label="optimum" if column == "gap_pct"
               else "bound")
    ax.set_ylabel(f"gap to the {ref} (%)")
    ax.set_xlabel("heuristic")
    ax.set_title(f"{problem}: gap of each heuristic to the {ref}\n"
                 f"{d['instance_hash'].nunique()} instances, {len(d)} runs; lower is better",
                 fontsize=10)
    lo, hi = float(np.nanmin(d[column])), float(np.nanmax(d[column]))
    pad = 0.05 * max(hi - min(lo, 0.0), 1e-3)
    ax.set_ylim(min(lo, 0.0) - pad, hi + pad)  # from the data's range
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # outside the data
    _save(fig, path)
    return True


def plot_runtime(df: pd.DataFrame, problem: str, path: Path) -> bool:
    """Runtime of every method (log scale), exact methods and heuristics in two colours."""
    d = df[(df["problem"] == problem) & df["seconds"].notna()]
    if d.empty:
        return False
    plt = _plt()
    order = (d.groupby(["kind", "label"])["seconds"].median().reset_index()
             .sort_values(["kind", "seconds"]))
    labels = list(order["label"])
    kinds = list(order["kind"])
    fig, ax = plt.subplots(figsize=(max(5.5, 1.1 * len(labels) + 2), 4.5))
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for i, (lab, kind) in enumerate(zip(labels, kinds, strict=True), start=1):
        g = d[(d["label"] == lab) & (d["kind"] == kind)]
        secs = g["seconds"].clip(lower=1e-4).to_numpy()
        color = _KIND_COLOR.get(kind, _HEUR_COLOR)
        ax.boxplot([secs], positions=[i], widths=0.5, showfliers=False,
                   medianprops={"color": "black"}, boxprops={"color": "#555555"})
        status = g["status"].to_numpy()
        x = i + rng.uniform(-0.12, 0.12, len(secs))
        for name, mask, style in (
                (_KIND_NAME.get(kind, kind), np.isin(status, ("optimal", "feasible", "bound")),
                 {"s": 18, "alpha": 0.75, "color": color,
                  "marker": "s" if kind == "bound" else "o"}),
                ("time limit", status == "time_limit",
                 {"s": 30, "marker": "^", "color": "#9467bd"}),
                ("failed (killed / error / infeasible)",
                 ~np.isin(status, ("optimal", "feasible", "bound", "time_limit")),
                 {"s": 36, "marker": "x", "color": "#d62728"})):
            if mask.any():
                ax.scatter(x[mask], secs[mask], zorder=3, **style,
                           label=name if name not in seen else None)
                seen.add(name)
    ax.set_yscale("log")
    ax.set_xticks(range(1, len(labels) + 1), labels, rotation=20 if len(labels) > 3 else 0,
                  ha="right" if len(labels) > 3 else "center")
    ax.set_ylabel("seconds (log scale)")
    ax.set_xlabel("method")
    ax.set_title(f"{problem}: runtime of every method\n"
                 f"({d['instance_hash'].nunique()} instances, {len(d)} runs)")
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # outside the data
    _save(fig, path)
    return True


def profile(df: pd.DataFrame, problem: str) -> tuple[list[str], np.ndarray]:
    """Performance ratios of the exact methods: (labels, ratios [instance, method]).

    The ratio is the time to optimality over the best time on that instance; ``inf`` where the
    method did not prove optimality (or was not run).
    """
    d = df[(df["problem"] == problem) & (df["kind"] == "exact")]
    if d.empty:
        return [], np.empty((0, 0))
    t = d.assign(t=np.where(d["proven"], d["seconds"].clip(lower=1e-6), np.inf))
    table = t.pivot_table(index="instance_hash", columns="label", values="t", aggfunc="min")
    table = table.fillna(np.inf)
    best = table.min(axis=1).to_numpy()[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(np.isfinite(best), table.to_numpy() / best, np.inf)
    return list(table.columns), ratios


def plot_profile(df: pd.DataFrame, problem: str, path: Path) -> bool:
    """Dolan-More performance profile of the exact methods."""
    labels, ratios = profile(df, problem)
    if len(labels) < 2:  # a profile compares exact methods; one method is a flat line
        return False
    plt = _plt()
    finite = ratios[np.isfinite(ratios)]
    tau_max = max(2.0, float(finite.max()) * 1.5) if finite.size else 2.0
    taus = np.geomspace(1.0, tau_max, 400)
    fig, ax = plt.subplots(figsize=(6.4, 4.5))
    n = ratios.shape[0]
    styles = ["-", "--", "-.", ":"]
    for j, lab in enumerate(labels):
        rho = [(ratios[:, j] <= tau).sum() / n for tau in taus]
        solved = np.isfinite(ratios[:, j]).sum()
        ax.step(taus, rho, where="post", lw=2.2, ls=styles[j % len(styles)], alpha=0.85,
                label=f"{lab} ({solved}/{n} solved)")
    ax.set_xscale("log", base=2)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(1.0, tau_max)
    ticks = [t for t in (1, 1.25, 1.5, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256, 512, 1024)
             if t <= tau_max]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_xlabel("performance ratio r: time within a factor r of the fastest exact method "
                  "(log2)")
    ax.set_ylabel("fraction of instances solved to optimality")
    ax.set_title(f"{problem}: performance profile of the exact methods ({n} instances)\n"
                 "higher and further left is better")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)  # outside the data
    _save(fig, path)
    return True


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    save_figure(fig, path, dpi=110, format="png", bbox_inches="tight")
    plt.close(fig)


# --------------------------------------------------------------------------- Markdown


def _f(v: Any, digits: int = 6) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        if math.isinf(v):
            return "inf"
        return f"{v:.{digits}g}"
    return str(v)


def _pct(v: Any, upper: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    text = f"{v:.2f}"
    if text == "-0.00":  # a gap of -1e-12 is rounding, not a better-than-optimal run
        text = "0.00"
    if text.startswith("-"):  # never printed: such a row is flagged by suspects()
        return "-"
    return f"{'<= ' if upper else ''}{text}"


def _objective(r: Any) -> str:
    """The objective of one run, or the mean of several labelled as such with its range."""
    if r.solved <= 1:
        return _f(r.objective)
    if r.objective_min == r.objective_max:
        return f"{_f(r.objective)} (all {r.solved})"
    return (f"mean {_f(r.objective, 4)} of {r.solved} "
            f"[{_f(r.objective_min)}, {_f(r.objective_max)}]")


def _bound_text(bound: Any, sense: str) -> str:
    """``>= 16`` (a lower bound of a min problem) or ``<= 50`` (an upper bound), or ``-``."""
    if _number(bound) is None:
        return "-"
    return f"{'>=' if sense == 'min' else '<='} {_f(bound)}"


def _n(text: str, n: Any) -> str:
    """A mean with the number of runs it covers: ``"25.00 (n=2)"``; ``-`` alone over none."""
    return text if text == "-" else f"{text} (n={n})"


def _times(r: Any) -> str:
    """``"0.0310 / 0.0309 (n=3)"``: plain and shifted (10 s) geometric mean of seconds."""
    if _f(r.geomean_seconds) == "-":
        return "-"
    return f"{_f(r.geomean_seconds, 3)} / {_f(r.sgm_seconds, 3)} (n={r.n_seconds})"


def _speedup_at(speedup: Any, gap: Any) -> str:
    """``"218 at 50.00 %"``: a speed-up is shown only with the gap it buys."""
    if _pct(gap) == "-" or _f(speedup) == "-":
        return "-"
    return f"{_f(speedup, 3)} at {_pct(gap)} %"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _cell(text: str) -> str:
    """A table cell: ``|`` escaped, line breaks made spaces (a name from the store is data)."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ") \
        .replace("\n", " ")


def _code(text: Any) -> str:
    """Inline code for a name from data: backticks inside it cannot close the span."""
    text = str(text)
    return f"`{text}`" if "`" not in text else "`` " + text.replace("``", "`'") + " ``"


def _suspect_section(df: pd.DataFrame, problem: str) -> list[str]:
    bad = df[(df["problem"] == problem) & (df["suspect"] != "")] if "suspect" in df else df[:0]
    if bad.empty:
        return []
    return ["", "### Rows that cannot be true (left out of every reference, gap and mean)", "",
            _table(["instance", "method", "seed", "status", "objective", "bound", "why"],
                   [[_code(r.instance), r.label, str(r.seed), r.status, _f(r.objective),
                     _f(r.bound), r.suspect] for r in bad.itertuples()]), ""]


def markdown(df: pd.DataFrame, store_path: str, plots: dict[str, list[str]]) -> str:
    if df.empty:
        return f"# Benchmark report\n\nThe store `{store_path}` holds no runs.\n"
    summ = summary(df)
    inst = instances(df)
    per = per_instance(df)
    parts = [
        "# Benchmark report",
        "",
        f"Store `{store_path}`: {len(df)} runs on {inst.shape[0]} instances of "
        f"{df['problem'].nunique()} problem(s); suites: {', '.join(sorted(set(df['suite'])))}; "
        f"dmlopt {', '.join(sorted(set(df['dmlopt_version'].dropna())))}; "
        f"hosts: {', '.join(sorted(set(df['host'].dropna())))}; "
        f"generated {datetime.now(UTC).isoformat(timespec='seconds')}.",
        "",
        "Two gaps, never mixed. The gap to reference (%) is measured against the best proven "
        "optimum of the instance (an exact run with status optimal at a gap of at most "
        f"{OPTIMALITY_GAP:g}); where the store proves no optimum, a certified optimum of the "
        "reference library (`dmlopt references`) is the reference, marked `library opt`, else "
        "its best known value, marked `library best known` (or a better objective of this "
        "store, marked `best known, this store`). The certified gap (%) is measured "
        "against the best valid bound of the instance (the strongest bound of its exact runs "
        "and of its bound runs, `dmlopt bound`): the true gap of a run is at most its "
        "certified gap, with or without a known optimum. Speed-up is the "
        "fastest optimal exact run's time over the method's time (geometric mean over runs), "
        "shown only beside the gap it buys. Where a method ran several times on an instance "
        "(seeds), objective, gap and seconds are means over those runs, marked as such.",
        "",
        "Runs are counted apart: solved (a feasible, evaluated solution), optimal (proven), "
        "time limit (stopped by its time limit, with or without a solution), failed (error, "
        "killed, infeasible) and bound (a bound method's bound). Every mean says over how "
        "many runs it is taken (n). Times are the method's own seconds (exact runs: model "
        "build and solve) of the runs that did not fail, as the plain geometric mean and the "
        f"shifted geometric mean (shift {SHIFT:g} s, as on Mittelmann's pages and in SCIP's "
        "check scripts). They exclude the one-time costs of a worker process: the modules a "
        "run needs (the solver's interface, a heuristic's numba kernels, its `PRELOAD`) are "
        "imported before the clock starts; the numba kernels are compiled once into the "
        "on-disk cache (see docs/benchmarks.md for the first and second process's times), "
        "and each worker runs a heuristic once, untimed, before its first timed run: that "
        "warm-up's wall time (one-time costs plus one run) is listed apart. "
        "The primal integral of an exact run (Berthold 2013) is the integral over its time "
        "limit of the primal gap of its incumbent to the reference (1 before its first "
        "incumbent), divided by the time limit: 0 is the optimum at once; it is taken only "
        "against an objective value (an optimum or a best known value), never a bound.",
    ]
    versions = sorted(set(df["solver_version"].dropna()) - {""})
    if versions:
        parts[2] += f" Solvers: {', '.join(versions)}."
    for problem in sorted(df["problem"].unique()):
        parts += _problem_section(problem, df, summ, inst, per, plots.get(problem, []))
    return "\n".join(parts) + "\n"


def _problem_section(problem: str, df: pd.DataFrame, summ: pd.DataFrame, inst: pd.DataFrame,
                     per: pd.DataFrame, plots: list[str]) -> list[str]:
    sense = df[df["problem"] == problem]["sense"].iloc[0]
    out = ["", f"## {_cell(problem)} ({'minimise' if sense == 'min' else 'maximise'})", ""]
    s = summ[summ["problem"] == problem]
    heur = s[s["kind"] == "heuristic"]
    exact = s[s["kind"] == "exact"]
    bnd = s[s["kind"] == "bound"]
    if len(heur):
        out += ["### Heuristics", "", _table(
            ["heuristic", "runs", "solved", "time limit", "failed",
             "mean gap to reference % (n)", "max gap to reference %",
             "mean certified gap % (n)", "max certified gap %",
             "seconds: geo-mean / shifted geo-mean (n)", "speed-up at that mean gap (geo-mean)"],
            [[r.method, str(r.runs), str(r.solved), str(r.time_limit), str(r.failed),
              _n(_pct(r.mean_gap_pct), r.n_gap), _pct(r.max_gap_pct),
              _n(_pct(r.mean_cert_gap_pct), r.n_cert_gap), _pct(r.max_cert_gap_pct),
              _times(r), _speedup_at(r.geomean_speedup, r.mean_gap_pct)]
             for r in heur.itertuples()]), ""]
    if len(bnd):
        out += ["### Bounds", "", _table(
            ["bound method", "runs", "bound", "time limit", "failed",
             "seconds: geo-mean / shifted geo-mean (n)"],
            [[r.method, str(r.runs), str(r.bound), str(r.time_limit), str(r.failed), _times(r)]
             for r in bnd.itertuples()]), ""]
    if len(exact):
        out += ["### Exact methods", "", _table(
            ["method", "runs", "optimal", "time limit", "failed", "mean gap to reference % (n)",
             "max gap to reference %", "mean certified gap % (n)",
             "seconds: geo-mean / shifted geo-mean (n)", "geo-mean time ratio (n)",
             "mean primal integral (n)"],
            [[r.method, str(r.runs), str(r.optimal), str(r.time_limit), str(r.failed),
              _n(_pct(r.mean_gap_pct), r.n_gap), _pct(r.max_gap_pct),
              _n(_pct(r.mean_cert_gap_pct), r.n_cert_gap), _times(r),
              _n(_f(r.geomean_time_ratio, 3), r.n_speedup),
              _n(_f(r.mean_primal_integral, 3), r.n_primal_integral)]
             for r in exact.itertuples()]), ""]
    if warm := report_time.one_time_costs(df, problem):
        out += ["### One-time costs (not in any timing above)", "", _table(
            ["heuristic", "warm-up runs (one per worker process)", "mean warm-up seconds",
             "mean timed seconds"], warm), ""]
    for p in plots:
        out += [f"![{Path(p).stem}]({p})", ""]
    out += ["### Per instance", ""]
    rows = []
    for i in inst[inst["problem"] == problem].itertuples():
        ref = (f"{_f(i.optimum)} (opt)" if i.ref_kind == "optimum"
               else f"{_f(i.ref)} (library opt)" if i.ref_kind == "library"
               else f"{_f(i.ref)} (library best known)" if i.ref_kind == "library-best"
               else f"{_f(i.ref)} (best known, this store)" if i.ref_kind == "best-known"
               else "-")
        for r in per[(per["problem"] == problem) & (per["instance_hash"] == i.instance_hash)] \
                .itertuples():
            gap = _pct(r.gap_pct)
            speed = _f(r.speedup, 3) if gap != "-" else "-"  # a speed-up only beside its gap
            rows.append([_code(i.instance), ref, _bound_text(i.bound, sense), r.method,
                         str(r.runs), r.status, _objective(r), gap, _pct(r.cert_gap_pct),
                         _f(r.bound) if r.kind != "heuristic" and _number(r.bound) is not None
                         else "",
                         speed, _f(r.seconds, 3)])
    out += [_table(["instance", "reference", "best bound", "method", "runs", "status",
                    "objective (mean of runs)", "gap to reference % (mean)",
                    "certified gap % (mean)", "its bound", "speed-up", "seconds (mean)"],
                   rows), ""]
    out += _suspect_section(df, problem)
    bad = inst[(inst["problem"] == problem) & inst["optima_disagree"]]
    for i in bad.itertuples():
        out.append(f"**Warning**: exact methods report different optima on {_code(i.instance)} "
                   "(a modelling or solver bug).")
    fails = df[(df["problem"] == problem) & df["status"].isin(("error", "killed"))]
    if len(fails):
        out += ["", "### Failed runs", "", _table(
            ["instance", "method", "seed", "status", "message"],
            [[_code(r.instance), r.label, str(r.seed), r.status,
              str(r.message or "").replace("|", "/").replace("\n", " ")[:160]]
             for r in fails.itertuples()]), ""]
    return out


# --------------------------------------------------------------------------- entry point


def write(store_path: str | Path, outdir: str | Path,
          senses: dict[str, str] | None = None) -> list[Path]:
    """Write ``report.md``, ``report.html`` (the same, self-contained: figures inline),
    ``runs.csv``, ``instances.csv``, ``summary.csv``, ``per_instance.csv`` and the PNGs."""
    outdir = check_output_dir(outdir, "-o")
    rows = store_mod.read(store_path)  # refused before anything is written
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InstanceError("-o", str(outdir), f"cannot be created ({exc.strerror})") from None
    df = frame(rows, senses)
    files: list[Path] = []
    plots: dict[str, list[str]] = {}
    if not df.empty:
        for problem in sorted(df["problem"].unique()):
            for kind, fn in (("gap", plot_gaps), ("runtime", plot_runtime),
                             ("profile", plot_profile),
                             ("gap-over-time", report_time.plot_gap_over_time)):
                path = _io.inside(outdir, f"{kind}-{_io.safe_name(problem)}.png")
                if fn(df, problem, path):
                    files.append(path)
                    plots.setdefault(problem, []).append(path.name)
        tables = {"runs.csv": df.drop(columns=["metrics", "trace"]).assign(
                      metrics=[json.dumps(m, sort_keys=True) for m in df["metrics"]],
                      trace=[json.dumps(t) for t in df["trace"]]),
                  "instances.csv": instances(df), "summary.csv": summary(df),
                  "per_instance.csv": per_instance(df)}
        for name, table in tables.items():
            write_csv(outdir / name, table, index=False)
            files.append(outdir / name)
    md = outdir / "report.md"
    text = markdown(df, str(store_path), plots)
    atomic_write_text(md, text)
    html = outdir / "report.html"
    atomic_write_text(html, report_html.page(text, outdir))
    files[:0] = [md, html]
    return files
