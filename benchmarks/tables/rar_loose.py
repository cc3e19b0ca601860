"""Paper 003 (RAR): which side is loose, on scaled-down versions of the 38-node setting whose
optima an exact formulation proves, from the runs of ``paper-rar-loose`` (full) or
``quick-rar-loose`` (``dmlopt reproduce rar loose``).

At 500 requests on ``cpn38`` the fewest CU-slots of the requests add up to about the network's
CU-slots, so the optimum blocks requests, and the certified gaps of MinW, MinT and MaxR
(``dmlopt reproduce rar bounds``) are tens of blocked requests wide. The scaled-down settings
keep that ratio with fewer requests, fewer slots and fewer CUs per node (``cpn38`` with
``requests``, ``slots`` and ``cu_scale``). Instances are ``cpn38(requests=R,scheme=S,slots=T,
cu_scale=c)#seed``; the exact run is the ``config`` formulation with HiGHS (one thread,
warm-started by ``rdda-pack``), the bound the ``energy`` LP, the heuristics ``rdda``,
``rdda-pack`` and ``rdda-lns``. The gaps of the bound and of the best heuristic to the proven
optimum are those of :func:`dmlopt.benchmarks.tables.loose.loose`, relative and in blocked
requests' worth of eq. (4) (:func:`dmlopt.benchmarks.tables.rar_bounds.unit`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from dmlopt.benchmarks.tables import Table, md_table
from dmlopt.benchmarks.tables.certified import seeds_text, time_limits
from dmlopt.benchmarks.tables.loose import loose, loose_table
from dmlopt.benchmarks.tables.rar_bounds import SCHEMES, unit

HEURISTICS = ("rdda", "rdda-pack", "rdda-lns")
BOUNDS = ("energy", "columns")


def frame(runs: pd.DataFrame) -> pd.DataFrame:
    """The :func:`~dmlopt.benchmarks.tables.loose.loose` rows of the scaled-down ``cpn38`` runs
    (a ``cu_scale`` below 1) with a ``setting`` (requests, slots, CU scale, scheme), in the
    paper's scheme order.

    Parameters
    ----------
    runs : pandas.DataFrame
        Store rows (:func:`dmlopt.benchmarks.tables.rows`).

    Returns
    -------
    pandas.DataFrame
        :data:`dmlopt.benchmarks.tables.loose.COLUMNS` plus ``setting``, ``requests``,
        ``scheme``.

    References
    ----------
    Paper 003 (Chen et al.), eq. (4); :func:`dmlopt.benchmarks.tables.loose.loose`.
    """
    sub = runs[(runs["problem"] == "rar")
               & runs["instance"].astype(str).str.contains(r"^cpn38\(.*cu_scale=",
                                                           regex=True)] if len(runs) else runs
    ran = set(sub["method"]) if len(sub) else set()
    bounds = [b for b in BOUNDS if f"bound:{b}" in ran] or list(BOUNDS[:1])  # those run
    out = loose(sub, HEURISTICS, bounds, unit=unit)
    if out.empty:
        return out.assign(setting=[], requests=[], scheme=[])
    req = [int(p.get("requests", 0)) for p in out["params"]]
    scheme = [p.get("scheme", "") for p in out["params"]]
    rank = [SCHEMES.index(s) if s in SCHEMES else len(SCHEMES) for s in scheme]
    out = out.assign(requests=req, scheme=scheme, _rank=rank)
    out["setting"] = [f"{n} requests, {p.get('slots', 48)} slots, CUs x {p.get('cu_scale', 1)}, "
                      f"{s}" for n, p, s in zip(req, out["params"], scheme, strict=True)]
    return out.sort_values(["requests", "_rank", "seed"], kind="stable").drop(columns="_rank")


def render(runs: pd.DataFrame, outdir: Path) -> str:
    """Per scheme: optima proven, the bound's and the best heuristic's gap to the optimum (mean
    / max, in % and in blocked requests), which side is loose; every seed below.

    Parameters
    ----------
    runs : pandas.DataFrame
        Store rows of the table's suites.
    outdir : pathlib.Path
        Unused (no figures).

    Returns
    -------
    str
        Markdown.

    References
    ----------
    Paper 003 (Chen et al.); :func:`dmlopt.benchmarks.tables.loose.loose_table`.
    """
    fr = frame(runs)
    if fr.empty:
        return "_no runs_"
    text = ("Objective eq. (4), minimised. Optimum: the `config` formulation, HiGHS on one "
            f"thread (time limit {time_limits(runs, 'highs:config')}, warm start `rdda-pack`); "
            "bounds: the `energy` LP and `columns` (the `config` LP by column generation), "
            "default options; best heuristic: the best of `rdda`, "
            f"`rdda-pack` and `rdda-lns` ({_lns_seconds(runs)} of search). Gaps are to the "
            "proven optimum, in % of it and in blocked requests (one = 1 / |R| of eq. (4), "
            "plus alpha = 100 / |R| under MaxR). Loose side: the one farther from the "
            "optimum (both: within a factor 1.25).")
    return (text + "\n\n" + loose_table(fr, unit_name="blocked requests") + "\n\n"
            + brackets(fr) + "\n")


def brackets(fr: pd.DataFrame) -> str:
    """Markdown: for the instances whose optimum the exact run did not prove, what its bound
    and incumbent still say, in blocked requests: the optimum lies in [exact bound, exact
    incumbent], so each bound is at least (exact bound - bound) / u below it and the
    best heuristic at most (heuristic - exact bound) / u above it.

    Parameters
    ----------
    fr : pandas.DataFrame
        :func:`frame` rows.

    Returns
    -------
    str
        A sentence and a table, or an empty string when every optimum is proven.

    References
    ----------
    :func:`dmlopt.benchmarks.tables.loose.loose` (columns ``exact_bound``,
    ``exact_incumbent``, ``unit``).
    """
    open_ = fr[~fr["proven"].astype(bool) & fr["exact_bound"].notna() & fr["unit"].notna()]
    if open_.empty:
        return ""
    u = open_["unit"]
    open_ = open_.assign(b_min=(open_["exact_bound"] - open_["bound"]) / u,
                         h_max=(open_["objective"] - open_["exact_bound"]) / u,
                         width=(open_["exact_incumbent"] - open_["exact_bound"]) / u)
    lines, notes = [], []
    for (setting, bm), g in open_.groupby(["setting", "bound_method"], sort=False):
        setting = f"{setting}, `{bm}`"
        lines.append([str(setting), str(len(g)),
                      f"{g['b_min'].mean():.1f} / {g['b_min'].min():.1f}",
                      f"{g['h_max'].mean():.1f} / {g['h_max'].max():.1f}",
                      f"{g['width'].mean():.2f} / {g['width'].max():.2f}"])
        notes.append(f"- {setting}: " + "; ".join(
            f"{r.seed}: bound >= {r.b_min:.1f}, heuristic <= {r.h_max:.1f}"
            for r in g.sort_values("seed").itertuples()))
    return ("Not proven: the exact run's bound and incumbent bracket the optimum. In blocked "
            "requests, each bound lies at least (exact bound - bound) / u below the "
            "optimum, the best heuristic at most (heuristic - exact bound) / u above it.\n\n"
            + md_table(["setting", "instances", "bound's gap at least, mean / min",
                        "heuristic's gap at most, mean / max",
                        "exact run's own gap, mean / max"], lines)
            + "\n\n" + "\n".join(notes))


def _lns_seconds(runs: pd.DataFrame) -> str:
    """The ``time_limit`` options the ``rdda-lns`` runs had (``60 s``; its default 60 s)."""
    vals = set()
    for o in runs.loc[runs["method"] == "rdda-lns", "options"]:
        try:
            opts = json.loads(o) if isinstance(o, str) else o
        except json.JSONDecodeError:
            opts = {}
        t = opts.get("time_limit", 60) if isinstance(opts, dict) else 60
        if isinstance(t, int | float):
            vals.add(float(t))
    return " and ".join(f"{v:g}" for v in sorted(vals)) + " s" if vals else "no runs"


def _heading(runs: pd.DataFrame) -> str:
    fr = frame(runs)
    if fr.empty:
        return "Which side is loose: no runs"
    settings = sorted({s.rsplit(", ", 1)[0] for s in fr["setting"]})
    return (f"Which side is loose: proven optima of scaled-down 38-node settings "
            f"({'; '.join(settings)}; seeds {seeds_text(fr['seed'])})")


# minutes measured on the shared 2-core machine (load 7-9, --workers 1, 2026-11-28): the full
# run 43.8 min of run time (rdda-lns 60 s per instance, exact runs up to their limits), quick
# 6.4 s
TABLES = [
    Table("rar", "loose", "Which side is loose: proven optima of scaled-down 38-node settings "
          "(demand above capacity as at 500 requests), the energy and columns bounds and the "
          "heuristics",
          ("paper-rar-loose",), ("quick-rar-loose",), render, 45.0, 0.2, heading=_heading),
]
