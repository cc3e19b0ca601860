"""Certified gaps of heuristics to bound runs: what the ``bounds`` tables of every paper share.

A bound run (a suite method ``{ bound = "NAME" }``) stores a row of kind ``bound`` with status
``bound`` and its value in column ``bound``: a certified lower bound on the optimum of a
minimisation problem, an upper bound for a maximisation problem. The certified gap of a
heuristic's objective ``obj`` to a bound ``b`` is the one ``dmlopt report`` calls
``cert_gap_pct``, measured against one named bound here:

* minimisation: ``100 (obj - b) / |b|``; maximisation: ``100 (b - obj) / |b|``;
* a bound of 0 (``|b| < 1e-6``) has no relative gap; the absolute gap ``obj - b`` (``b - obj``)
  is given instead.

Every gap holds for the optimum too: the optimum lies between the bound and the heuristic.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from dmlopt.benchmarks.report import SOLVED, sense_of
from dmlopt.benchmarks.tables import md_table

#: below this absolute value a bound counts as 0 (no relative gap), as in ``dmlopt report``
ZERO = 1e-6
_ID = re.compile(r"([\w-]+)\((.*)\)#(\d+)")
_SPLIT = re.compile(r",(?![^\[\]{}]*[\]}])")  # commas outside [...] and {...}

COLUMNS = ["problem", "instance", "generator", "params", "seed", "sense", "heuristic",
           "objective", "bound_method", "bound_options", "bound", "bound_status",
           "bound_seconds", "gap_pct", "gap_abs"]


def parse_id(instance: object) -> tuple[str, dict[str, str], int] | None:
    """``(generator, params, seed)`` of a generated instance id such as
    ``er(n=300,p=0.05,tau=3,l=6)#4`` (values as text), or None for another id."""
    m = _ID.fullmatch(str(instance))
    if m is None:
        return None
    params = {}
    for kv in _SPLIT.split(m.group(2)) if m.group(2) else []:
        key, _, value = kv.partition("=")
        params[key] = value
    return m.group(1), params, int(m.group(3))


def gap(obj: float, bound: float, sense: str) -> tuple[float, float]:
    """``(gap %, absolute gap)`` of objective ``obj`` to ``bound`` (``sense`` ``"min"`` or
    ``"max"``); the gap in % is NaN where the bound is 0, both are NaN where a value is
    missing."""
    if obj is None or bound is None or not (math.isfinite(obj) and math.isfinite(bound)):
        return math.nan, math.nan
    diff = obj - bound if sense == "min" else bound - obj
    return (math.nan if abs(bound) < ZERO else 100.0 * diff / abs(bound)), diff


def bound_name(method: str) -> str:
    """``energy`` for the stored method ``bound:energy``."""
    return method.split(":", 1)[1] if method.startswith("bound:") else method


def certified(runs: pd.DataFrame, heuristics: Iterable[str],
              bounds: Iterable[str]) -> pd.DataFrame:
    """One row per (instance, bound method) of ``runs`` (the store's rows,
    :func:`dmlopt.benchmarks.tables.rows`):
    the best objective of ``heuristics`` on the instance (over their seeds and options) and
    which one found it (ties: the first of ``heuristics``), the bound's value, status, seconds
    and options, and the certified gap.

    Instances with neither a heuristic solution nor a bound run are left out; an instance whose
    bound run failed (status ``error``, ``killed``) keeps its row with bound NaN and that
    status, so tables can count it.
    """
    heuristics, bounds = tuple(heuristics), tuple(bounds)
    if runs.empty:
        return pd.DataFrame(columns=COLUMNS)
    df = numeric(runs)
    out = []
    for (problem, inst), g in df.groupby(["problem", "instance"], sort=False):
        sense = sense_of(str(problem))
        best, who = best_heuristic(g, heuristics, sense)
        parsed = parse_id(inst) or (str(inst), {}, 0)
        for name in bounds:
            value, status, seconds, chosen = strongest_bound(g, name, sense)
            if chosen is None and not who:
                continue
            opts = _payload(chosen["options"]).get("options", {}) if chosen is not None else {}
            pct, diff = gap(best, value, sense)
            out.append({"problem": problem, "instance": inst, "generator": parsed[0],
                        "params": parsed[1], "seed": parsed[2], "sense": sense,
                        "heuristic": who, "objective": best, "bound_method": name,
                        "bound_options": opts if isinstance(opts, dict) else {},
                        "bound": value, "bound_status": status, "bound_seconds": seconds,
                        "gap_pct": pct, "gap_abs": diff})
    return pd.DataFrame(out, columns=COLUMNS)


def numeric(runs: pd.DataFrame) -> pd.DataFrame:
    """A copy of store rows with ``objective``, ``bound`` and ``seconds`` as numbers (NaN where
    a value is missing or not a number)."""
    df = runs.copy()
    for col in ("objective", "bound", "seconds"):
        df[col] = pd.to_numeric(df[col], errors="coerce")
    return df


def best_heuristic(g: pd.DataFrame, heuristics: tuple[str, ...],
                   sense: str) -> tuple[float, str]:
    """``(best objective, its heuristic)`` of the solved heuristic runs of ``heuristics`` in
    the rows ``g`` of one instance (ties: the heuristic listed first); ``(NaN, "")`` if
    none."""
    h = g[(g["kind"] == "heuristic") & g["method"].isin(heuristics)
          & g["status"].isin(SOLVED) & g["objective"].notna()]
    if not len(h):
        return math.nan, ""
    h = h.iloc[np.argsort([heuristics.index(m) for m in h["method"]], kind="stable")]
    pick = h["objective"].idxmin() if sense == "min" else h["objective"].idxmax()
    return float(h.at[pick, "objective"]), str(h.at[pick, "method"])


def strongest_bound(g: pd.DataFrame, name: str,
                    sense: str) -> tuple[float, str, float, pd.Series | None]:
    """``(value, status, seconds, row)`` of bound method ``name`` in the rows ``g`` of one
    instance: its strongest run (one per option set), else its last run's status with value
    NaN (``"not run"`` and row None when it has none)."""
    b = g[(g["kind"] == "bound") & (g["method"] == f"bound:{name}")]
    ok = b[(b["status"] == "bound") & b["bound"].notna()]
    if len(ok):
        pick = ok["bound"].idxmax() if sense == "min" else ok["bound"].idxmin()
        return (float(ok.at[pick, "bound"]), "bound", float(ok.at[pick, "seconds"]),
                ok.loc[pick])
    if b.empty:
        return math.nan, "not run", math.nan, None
    last = b.iloc[-1]
    secs = float(last["seconds"]) if pd.notna(last["seconds"]) else math.nan
    return math.nan, str(last["status"]), secs, last


def seeds_text(seeds: Iterable[int]) -> str:
    """``0-9`` for a run of seeds, ``0, 2 and 5`` otherwise."""
    vals = sorted({int(s) for s in seeds})
    if not vals:
        return "none"
    if len(vals) > 2 and vals == list(range(vals[0], vals[-1] + 1)):
        return f"{vals[0]}-{vals[-1]}"
    if len(vals) == 1:
        return str(vals[0])
    return ", ".join(map(str, vals[:-1])) + f" and {vals[-1]}"


def pct(x: float) -> str:
    """``12.3 %``, or ``-`` for NaN."""
    return "-" if x is None or pd.isna(x) else f"{x:.1f} %"


def num(x: float, fmt: str = ".4g") -> str:
    """A number, or ``-`` for NaN."""
    return "-" if x is None or pd.isna(x) else format(x, fmt)


def _secs(s: pd.Series) -> str:
    s = s.dropna()
    return "-" if s.empty else f"{s.mean():.3g} / {s.max():.3g}"


def _best_of(g: pd.DataFrame) -> str:
    """The heuristics that found the best solution, with how often (``rdda (10)``)."""
    counts = g.loc[g["heuristic"] != "", "heuristic"].value_counts()
    return ", ".join(f"`{m}` ({c})" for m, c in counts.items()) or "-"


def summary_cells(g: pd.DataFrame, goal: float) -> list[str]:
    """The cells every ``bounds`` table has for a group ``g`` of :func:`certified` rows (one
    bound method): instances with a bound / in all, best heuristic (how often), mean objective,
    mean bound, certified gap mean and max, instances within ``goal`` % (of those with a
    bound), bound seconds mean / max, and where the bound is 0 the absolute gap (mean / max,
    instances)."""
    have = g[g["bound"].notna() & g["objective"].notna()]
    rel = have[have["bound"].abs() >= ZERO]
    zero = have[have["bound"].abs() < ZERO]
    within = int((rel["gap_pct"] <= goal + 1e-9).sum() + (zero["gap_abs"] <= ZERO).sum())
    failed = g[g["bound"].isna()]["bound_status"].value_counts()
    count = f"{len(have)} of {len(g)}" + ("" if failed.empty else " ("
                                         + ", ".join(f"{v} {k}" for k, v in failed.items())
                                         + ")")
    zero_cell = ("-" if zero.empty else
                 f"{zero['gap_abs'].mean():.4g} / {zero['gap_abs'].max():.4g} ({len(zero)})")
    return [count, _best_of(g), num(have["objective"].mean()), num(have["bound"].mean()),
            pct(rel["gap_pct"].mean()), pct(rel["gap_pct"].max()),
            f"{within} of {len(have)}", _secs(g["bound_seconds"]), zero_cell]


SUMMARY_HEAD = ["instances with a bound", "best heuristic (instances)", "mean best objective",
                "mean bound", "certified gap, mean", "max", "within the goal",
                "bound s, mean / max", "bound 0: absolute gap, mean / max (instances)"]


def per_seed(cert: pd.DataFrame) -> str:
    """``seed: best / bound (gap)`` for each row of ``cert``, for the text under a table."""
    parts = []
    for r in cert.sort_values("seed").itertuples():
        g = (pct(r.gap_pct) if not pd.isna(r.gap_pct) else
             f"absolute {num(r.gap_abs)}" if not pd.isna(r.gap_abs) else r.bound_status)
        parts.append(f"{r.seed}: {num(r.objective)} / {num(r.bound)} ({g})")
    return "; ".join(parts)


def settings_table(cert: pd.DataFrame, goal: float, labels: dict[str, str] | None = None,
                   details: bool = True) -> str:
    """Markdown: one row per (``setting``, bound method) of ``cert`` (:func:`certified` rows
    with a ``setting`` column, in their order) with :func:`summary_cells`; with ``details``,
    a line per row below with every instance's best objective / bound (gap)."""
    if cert.empty:
        return "_no runs_"
    labels = labels or {}
    lines, notes = [], []
    for (setting, bm), g in cert.groupby(["setting", "bound_method"], sort=False):
        label = labels.get(bm, f"`{bm}`")
        lines.append([setting, label, *summary_cells(g, goal)])
        notes.append(f"- {setting}, {label}: {per_seed(g)}")
    out = md_table(["setting", "bound", *SUMMARY_HEAD], lines)
    if details:
        out += ("\n\nPer seed, best heuristic / bound (certified gap):\n\n"
                + "\n".join(notes))
    return out


def _payload(options: object) -> dict:
    """A stored run's ``options`` (JSON text; a bound run's holds its ``options`` and
    ``time_limit``) as a dict, ``{}`` if it is not one."""
    try:
        opts = json.loads(options or "{}") if isinstance(options, str) else options
    except json.JSONDecodeError:
        return {}
    return opts if isinstance(opts, dict) else {}


def time_limits(runs: pd.DataFrame, method: str) -> str:
    """The time limits the runs of a bound method had (``300 s``, ``60 and 300 s``)."""
    vals = set()
    for o in runs.loc[runs["method"] == method, "options"]:
        t = _payload(o).get("time_limit")
        if isinstance(t, int | float) and np.isfinite(t):
            vals.add(float(t))
    if not vals:
        return "no limit"
    return " and ".join(f"{v:g}" for v in sorted(vals)) + " s"
