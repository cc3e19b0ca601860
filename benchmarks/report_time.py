"""The report's view of exact runs over time: primal integrals and the gap-over-time figure.

Each exact run stores its incumbent and bound over time (``trace``, :mod:`dmlopt.benchmarks.trace`).
The primal integral of a run is taken against the instance's reference value when it is an
objective value (a proven optimum, the library's optimum or best known value, never a bound), over
the run's time limit (its ``seconds`` when it had none), and divided by it: 0 is the optimum at
once, 1 no incumbent until the limit (T. Berthold, Oper. Res. Lett. 41(6), 2013).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dmlopt.benchmarks import trace as trace_mod
from dmlopt.io import save_figure

#: the shift of the shifted geometric mean of seconds
SHIFT = 10.0

#: reference kinds that are objective values (a gap to them is a primal gap)
VALUE_REFS = ("optimum", "library", "library-best", "best-known")


def horizon(row: Any) -> float:
    """The time limit of a run (its ``time_limit`` column, else its options'), else its seconds.

    Parameters
    ----------
    row : one run (a named tuple or a mapping with ``time_limit``, ``options``, ``seconds``).

    Returns
    -------
    float
        Seconds (NaN when none is known).

    References
    ----------
    Issue 54, item 5.
    """
    get = row.get if isinstance(row, dict) else lambda k, d=None: getattr(row, k, d)
    for v in (get("time_limit"), _option(get("options"), "time_limit"), get("seconds")):
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
            return float(v)
    return math.nan


def _option(options: Any, key: str) -> Any:
    try:
        opts = json.loads(options) if isinstance(options, str) and options else {}
    except json.JSONDecodeError:
        return None
    return opts.get(key) if isinstance(opts, dict) else None


def integrals(df: pd.DataFrame) -> pd.Series:
    """The normalised primal integral of every exact run with a trace (NaN for the others).

    Parameters
    ----------
    df : the runs, with ``ref``, ``ref_kind``, ``trace`` and ``suspect`` columns.

    Returns
    -------
    pandas.Series
        One value in [0, 1] per row, or NaN.

    References
    ----------
    T. Berthold, "Measuring the impact of primal heuristics", Oper. Res. Lett. 41(6), 2013.
    """
    out = pd.Series(np.nan, index=df.index, dtype=float)
    if "trace" not in df:
        return out
    for i, r in df.iterrows():
        pts = r["trace"] if isinstance(r["trace"], list) else []
        if (r["kind"] != "exact" or not pts or r.get("suspect", "") != ""
                or r["ref_kind"] not in VALUE_REFS):
            continue
        out[i] = trace_mod.primal_integral(pts, float(r["ref"]), horizon(r))
    return out


def plot_gap_over_time(df: pd.DataFrame, problem: str, path: Path) -> bool:
    """Primal gap (solid) and the run's own incumbent-to-bound gap (dotted) over time of every
    exact run with a trace, one colour per method; legend outside the axes.

    Parameters
    ----------
    df : the runs (with ``primal_integral``).
    problem : the problem drawn.
    path : the PNG written.

    Returns
    -------
    bool
        Whether a figure was written (False: no exact run with a trace and a reference).

    References
    ----------
    T. Berthold, Oper. Res. Lett. 41(6), 2013 (the primal gap function).
    """
    d = df[(df["problem"] == problem) & (df["kind"] == "exact")
           & df.get("primal_integral", pd.Series(np.nan, index=df.index)).notna()]
    if d.empty:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labels = sorted(d["label"].unique())
    for j, lab in enumerate(labels):
        color = colors[j % len(colors)]
        g = d[d["label"] == lab]
        for k, r in enumerate(g.itertuples()):
            t_end = horizon(r)
            ts, primal, dual = [0.0], [100.0], [100.0]
            for t, x, b in r.trace:
                ts.append(max(float(t), 1e-3))
                primal.append(100 * trace_mod.primal_gap(x, float(r.ref)))
                dual.append(100 * _own_gap(x, b))
            ts.append(max(t_end, ts[-1]))
            primal.append(primal[-1])
            dual.append(dual[-1])
            ax.step(ts, primal, where="post", color=color, lw=1.6, alpha=0.8,
                    label=f"{lab}: primal gap (mean integral {g['primal_integral'].mean():.3f}, "
                          f"n={len(g)})" if k == 0 else None)
            ax.step(ts, dual, where="post", color=color, lw=1.0, ls=":", alpha=0.8,
                    label=f"{lab}: gap incumbent to own bound" if k == 0 else None)
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_ylim(-2, 102)
    ax.set_xlabel("seconds since the solve was called (model build included)")
    ax.set_ylabel("gap (%)")
    ax.set_title(f"{problem}: gap over time of the exact runs "
                 f"({d['instance_hash'].nunique()} instances, {len(d)} runs)", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)  # outside the data
    fig.tight_layout()
    save_figure(fig, path, dpi=110, format="png", bbox_inches="tight")
    plt.close(fig)
    return True


def _own_gap(x: float | None, b: float | None) -> float:
    """The run's own gap in [0, 1]: ``|x - b| / max(|x|, |b|)``, 1 without both."""
    if x is None or b is None:
        return 1.0
    den = max(abs(x), abs(b))
    return 0.0 if den < 1e-9 else min(1.0, abs(x - b) / den)


def one_time_costs(df: pd.DataFrame, problem: str) -> list[list[str]]:
    """Rows of the one-time cost table of a problem: per heuristic, the worker processes that
    ran it (each ran it once, untimed, before its first timed run), the mean wall seconds of
    those warm-up runs and the mean seconds of the timed runs.

    Parameters
    ----------
    df : the runs (``warmup_seconds`` NaN or missing in a store of schema 1).
    problem : the problem.

    Returns
    -------
    list
        Table rows (method, warm-ups, mean warm-up seconds, mean timed seconds); empty
        without a warm-up.

    References
    ----------
    Issue 54, item 5.
    """
    if "warmup_seconds" not in df:
        return []
    d = df[(df["problem"] == problem)]
    warm = pd.to_numeric(d["warmup_seconds"], errors="coerce")
    out = []
    for lab, g in d[warm.notna()].groupby("label", sort=True):
        timed = d[(d["label"] == lab) & d["solved"]]["seconds"]
        w = pd.to_numeric(g["warmup_seconds"], errors="coerce")
        out.append([str(lab), str(len(g)), f"{w.mean():.3g}",
                    f"{timed.mean():.3g}" if len(timed) else "-"])
    return out


def shifted_geomean(x: pd.Series, shift: float = SHIFT) -> float:
    """The shifted geometric mean ``exp(mean(log(x + s))) - s`` of the finite values of ``x``.

    Parameters
    ----------
    x : the values (seconds), NaN left out.
    shift : ``s``, 10 s as on Mittelmann's pages and in SCIP's check scripts.

    Returns
    -------
    float
        NaN without a value.

    References
    ----------
    T. Achterberg, "Constraint Integer Programming", PhD thesis, TU Berlin, 2007, appendix A.3.
    """
    x = pd.to_numeric(x, errors="coerce").dropna()
    x = x[np.isfinite(x) & (x >= 0)]
    return float(np.exp(np.log(x + shift).mean()) - shift) if len(x) else np.nan
