"""Which side is loose: a bound and the best heuristic, each measured against a proven optimum.

A certified gap (:mod:`dmlopt.benchmarks.tables.certified`) says how far apart a heuristic's
objective and a bound are; it does not say which of the two is far from the optimum. Where an
exact run proves the optimum (status ``optimal``), this module splits the gap in two:

* the bound's gap, ``100 |optimum - bound| / |optimum|``: how loose the bound is;
* the heuristic's gap, ``100 |objective - optimum| / |optimum|``: how far the best heuristic
  is from the optimum.

Both are also given in a problem's own unit where a table names one (RAR: one blocked
request's worth of eq. (4)), and absolute where the optimum is 0. A bound on the wrong side of
a proven optimum, or a heuristic better than it, is a contradiction: it is counted in the table
(it would mean a bug in the bound, the heuristic, the evaluator or the exact model), never
hidden.

The tables built on it (``dmlopt reproduce PAPER loose``) run scaled-down versions of the
papers' hard settings, small enough for an exact method to prove the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from dmlopt.benchmarks.report import SOLVED, sense_of
from dmlopt.benchmarks.tables import md_table
from dmlopt.benchmarks.tables.certified import (
    ZERO,
    best_heuristic,
    num,
    numeric,
    parse_id,
    pct,
    seeds_text,
    strongest_bound,
)

#: relative tolerance of the comparisons with the optimum (solver tolerances, rounding)
TOL = 1e-6

COLUMNS = ["problem", "instance", "generator", "params", "seed", "sense", "optimum", "proven",
           "exact_method", "exact_seconds", "exact_bound", "exact_incumbent", "heuristic",
           "objective", "bound_method", "bound", "bound_status", "bound_seconds",
           "bound_gap_pct", "heur_gap_pct", "bound_gap_abs", "heur_gap_abs", "unit",
           "bound_gap_units", "heur_gap_units", "loose_side", "contradiction"]


def _side(bound_abs: float, heur_abs: float, scale: float) -> str:
    """``bound``, ``heuristic``, ``both`` (within a factor 1.25 of each other) or ``neither``
    (both at the optimum); ``-`` where a value is missing."""
    if not (math.isfinite(bound_abs) and math.isfinite(heur_abs)):
        return "-"
    tol = TOL * max(1.0, scale)
    if bound_abs <= tol and heur_abs <= tol:
        return "neither"
    if bound_abs > 1.25 * heur_abs:
        return "bound"
    if heur_abs > 1.25 * bound_abs:
        return "heuristic"
    return "both"


def _exact(g: pd.DataFrame, sense: str,
           exact: Callable[[str], bool] | None) -> tuple[float, bool, str, float, float, float]:
    """``(optimum or NaN, proven, method, seconds, best proven bound, best incumbent)`` of the
    exact runs in ``g``."""
    e = g[g["kind"] == "exact"]
    if exact is not None:
        e = e[[bool(exact(str(m))) for m in e["method"]]]
    if e.empty:
        return math.nan, False, "", math.nan, math.nan, math.nan
    better = min if sense == "min" else max
    proven = e[(e["status"] == "optimal") & e["objective"].notna()]
    inc = e[e["status"].isin(SOLVED) & e["objective"].notna()]["objective"]
    bnd = e["bound"].dropna()
    incumbent = float(better(inc)) if len(inc) else math.nan
    best_bound = (float(bnd.max() if sense == "min" else bnd.min()) if len(bnd) else math.nan)
    if len(proven):
        pick = proven["seconds"].astype(float).fillna(np.inf).idxmin()
        return (float(proven.at[pick, "objective"]), True, str(proven.at[pick, "method"]),
                float(proven.at[pick, "seconds"]), best_bound, incumbent)
    last = e.iloc[-1]
    return (math.nan, False, str(last["method"]), float(last["seconds"]) if pd.notna(
        last["seconds"]) else math.nan, best_bound, incumbent)


def loose(runs: pd.DataFrame, heuristics: Iterable[str], bounds: Iterable[str],
          exact: Callable[[str], bool] | None = None,
          unit: Callable[[str, dict], float] | None = None) -> pd.DataFrame:
    """One row per (instance, bound method) of ``runs``: the proven optimum, the best heuristic,
    the bound, and the gap of each to the optimum.

    Parameters
    ----------
    runs : pandas.DataFrame
        Store rows (:func:`dmlopt.benchmarks.tables.rows`) of exact, heuristic and bound runs.
    heuristics : iterable of str
        Heuristic method names; the best objective among them counts (ties: the first listed).
    bounds : iterable of str
        Bound method names (``energy`` for stored ``bound:energy``); the strongest run of each.
    exact : callable, optional
        ``exact(method) -> bool`` picks the exact runs that may prove the optimum (stored method
        names such as ``highs:config``); default every exact run.
    unit : callable, optional
        ``unit(instance, params) -> float``: the value of one unit of the objective for the
        instance (params as parsed from its id, values as text), e.g. one blocked request;
        the gaps are then also given in units.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`. ``optimum`` is NaN unless an exact run has status
        ``optimal``; ``bound_gap_pct`` and ``heur_gap_pct`` are relative to ``|optimum|`` (NaN
        where it is 0: see ``bound_gap_abs`` and ``heur_gap_abs``); ``loose_side`` is
        ``bound``, ``heuristic``, ``both``, ``neither`` or ``-``; ``contradiction`` names a
        bound beyond the optimum or a heuristic better than it (empty otherwise).

    References
    ----------
    .. [1] The gap split follows the usual reading of a MIP's primal and dual gaps, e.g.
       T. Berthold, "Measuring the impact of primal heuristics", Oper. Res. Lett. 41 (2013).
    """
    heuristics, bounds = tuple(heuristics), tuple(bounds)
    if runs.empty:
        return pd.DataFrame(columns=COLUMNS)
    df = numeric(runs)
    out = []
    for (problem, inst), g in df.groupby(["problem", "instance"], sort=False):
        sense = sense_of(str(problem))
        opt, proven, em, es, eb, ei = _exact(g, sense, exact)
        best, who = best_heuristic(g, heuristics, sense)
        parsed = parse_id(inst) or (str(inst), {}, 0)
        u = float(unit(str(inst), parsed[1])) if unit is not None else math.nan
        for name in bounds:
            value, status, secs, chosen = strongest_bound(g, name, sense)
            if chosen is None and not who and not em:
                continue
            sign = 1.0 if sense == "min" else -1.0
            b_abs = sign * (opt - value)  # >= 0 for a valid bound
            h_abs = sign * (best - opt)  # >= 0 for a feasible solution
            scale = abs(opt) if math.isfinite(opt) else 1.0
            tol = TOL * max(1.0, scale)
            bad = []
            if math.isfinite(b_abs) and b_abs < -tol:
                bad.append(f"bound {num(value)} beyond the optimum {num(opt)}")
            if math.isfinite(h_abs) and h_abs < -tol:
                bad.append(f"`{who}` {num(best)} better than the optimum {num(opt)}")
            rel = math.nan if not math.isfinite(opt) or scale < ZERO else 100.0 / scale
            per = 1.0 / u if math.isfinite(u) and u > 0 else math.nan
            out.append({"problem": problem, "instance": inst, "generator": parsed[0],
                        "params": parsed[1], "seed": parsed[2], "sense": sense,
                        "optimum": opt, "proven": proven, "exact_method": em,
                        "exact_seconds": es, "exact_bound": eb, "exact_incumbent": ei,
                        "heuristic": who, "objective": best, "bound_method": name,
                        "bound": value, "bound_status": status, "bound_seconds": secs,
                        "bound_gap_pct": rel * b_abs, "heur_gap_pct": rel * h_abs,
                        "bound_gap_abs": b_abs, "heur_gap_abs": h_abs, "unit": u,
                        "bound_gap_units": per * b_abs, "heur_gap_units": per * h_abs,
                        "loose_side": _side(b_abs, h_abs, scale),
                        "contradiction": "; ".join(bad)})
    return pd.DataFrame(out, columns=COLUMNS)


def _mm(s: pd.Series, fmt: Callable[[float], str]) -> str:
    s = s.dropna()
    return "-" if s.empty else f"{fmt(s.mean())} / {fmt(s.max())}"


def _sides(g: pd.DataFrame) -> str:
    counts = g.loc[g["loose_side"] != "-", "loose_side"].value_counts()
    order = ("bound", "heuristic", "both", "neither")
    return ", ".join(f"{k} ({counts[k]})" for k in order if k in counts) or "-"


def loose_table(frame: pd.DataFrame, labels: dict[str, str] | None = None,
                unit_name: str | None = None, details: bool = True) -> str:
    """Markdown: one row per (``setting``, bound method) of ``frame`` (:func:`loose` rows with a
    ``setting`` column, in their order).

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`loose` rows plus a ``setting`` column.
    labels : dict, optional
        Display label of a bound method (default ```name```).
    unit_name : str, optional
        Name of the unit (``blocked requests``): adds the gaps in units.
    details : bool
        Add a line per setting with every seed's optimum, bound and best heuristic.

    Returns
    -------
    str
        The table (``_no runs_`` for no rows). Gaps are summarised over the instances with a
        proven optimum; the side that is loose is counted per instance.

    References
    ----------
    .. [1] :func:`loose`.
    """
    if frame.empty:
        return "_no runs_"
    labels = labels or {}
    head = ["setting", "bound", "optimum proven", "mean optimum", "exact s, mean / max",
            "bound's gap to the optimum, mean / max",
            "best heuristic's gap to the optimum, mean / max"]
    if unit_name:
        head += [f"bound's gap in {unit_name}, mean / max",
                 f"heuristic's gap in {unit_name}, mean / max"]
    head += ["loose side (instances)", "contradictions"]
    lines, notes = [], []
    for (setting, bm), g in frame.groupby(["setting", "bound_method"], sort=False):
        label = labels.get(bm, f"`{bm}`")
        p = g[g["proven"].astype(bool)]
        zero = p[p["optimum"].abs() < ZERO]
        row = [str(setting), label, f"{len(p)} of {len(g)}", num(p["optimum"].mean()),
               _mm(g.loc[g["proven"].astype(bool), "exact_seconds"], lambda x: f"{x:.3g}"),
               _mm(p["bound_gap_pct"], pct), _mm(p["heur_gap_pct"], pct)]
        if len(zero):
            row[-2] += f" (optimum 0: absolute {_mm(zero['bound_gap_abs'], num)})"
            row[-1] += f" (optimum 0: absolute {_mm(zero['heur_gap_abs'], num)})"
        if unit_name:
            row += [_mm(p["bound_gap_units"], lambda x: f"{x:.1f}"),
                    _mm(p["heur_gap_units"], lambda x: f"{x:.1f}")]
        bad = int((g["contradiction"] != "").sum())
        row += [_sides(p), str(bad)]
        lines.append(row)
        notes.append(f"- {setting}, {label}, seeds {seeds_text(g['seed'])}: "
                     + "; ".join(_seed_text(r) for r in g.sort_values("seed").itertuples()))
    out = md_table(head, lines)
    if details:
        out += ("\n\nPer seed, optimum / bound (its gap) / best heuristic (its gap):\n\n"
                + "\n".join(notes))
        bad = frame[frame["contradiction"] != ""]
        if len(bad):
            out += "\n\nContradictions:\n\n" + "\n".join(
                f"- {r.instance}: {r.contradiction}" for r in bad.itertuples())
    return out


def _seed_text(r: object) -> str:
    if not r.proven:
        bracket = (f"not proven ({r.exact_method}: {num(r.exact_incumbent)} / "
                   f"{num(r.exact_bound)})" if r.exact_method else "no exact run")
        return f"{r.seed}: {bracket}, bound {num(r.bound)}, `{r.heuristic}` {num(r.objective)}"
    bg = pct(r.bound_gap_pct) if not pd.isna(r.bound_gap_pct) else f"abs {num(r.bound_gap_abs)}"
    hg = pct(r.heur_gap_pct) if not pd.isna(r.heur_gap_pct) else f"abs {num(r.heur_gap_abs)}"
    who = f"`{r.heuristic}` " if r.heuristic else ""
    return (f"{r.seed}: {num(r.optimum)} / {num(r.bound)} ({bg}) / {who}{num(r.objective)} "
            f"({hg})")
