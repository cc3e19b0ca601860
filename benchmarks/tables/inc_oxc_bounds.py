"""Paper 002 (INC/OXC): certified gaps of WCG and WCG-LS at the paper's large scale, from the
runs of ``paper-inc_oxc-bounds`` (full) or ``quick-inc_oxc-bounds`` (``dmlopt reproduce inc_oxc
bounds``).

Instances are ``large(racks=R,workers=[lo,hi])#seed``. The objective is f, the common speed of
the jobs (maximised; the longest JCT is proportional to 1 / f); the bounds are upper bounds on
f: ``jobs-timeshared`` holds for every solution, ``jobs`` (integer circuits) only for static OXC
port pairings, which is what both heuristics return. The certified gap of the better heuristic
is ``100 (bound - f) / bound`` (:mod:`dmlopt.benchmarks.tables.certified`), i.e. ``1 -`` the
longest-JCT bound over the heuristic's longest JCT.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dmlopt.benchmarks.tables import Table, sizes
from dmlopt.benchmarks.tables.certified import certified, seeds_text, settings_table, time_limits

HEURISTICS = ("wcg", "wcg-ls")
BOUNDS = ("jobs-timeshared", "jobs")
LABELS = {"jobs-timeshared": "`jobs-timeshared`",
          "jobs": "`jobs` (static pairings only)"}
#: the goal: the best heuristic within 10 % of a certified bound on every seed
GOAL = 10.0


def frame(runs: pd.DataFrame) -> pd.DataFrame:
    """The :func:`~dmlopt.benchmarks.tables.certified.certified` rows of the ``large`` runs,
    with a ``setting`` (racks and workers per job) and the workers' lower end for ordering."""
    sub = runs[(runs["problem"] == "inc_oxc")
               & runs["instance"].astype(str).str.startswith("large(")] if len(runs) else runs
    cert = certified(sub, HEURISTICS, BOUNDS)
    if cert.empty:
        return cert.assign(setting=[], lo=[])
    cert["lo"] = [-int(p.get("workers", "[0").strip("[").split(",")[0]) for p in cert["params"]]
    cert["setting"] = [f"{p.get('racks', '64')} racks, workers "
                       + p.get("workers", "[4,16]").replace(",", ", ") for p in cert["params"]]
    order = {b: i for i, b in enumerate(BOUNDS)}
    return cert.sort_values(["lo", "setting", "seed"], kind="stable").assign(
        _b=lambda d: d["bound_method"].map(order)).sort_values(
        ["lo", "setting", "_b", "seed"], kind="stable").drop(columns="_b")


def bounds(runs: pd.DataFrame, outdir: Path) -> str:
    """Per worker range and bound: the certified gap of the better of ``wcg`` and ``wcg-ls``
    (mean, max, seeds within 10 %), the bound's seconds; every seed below."""
    cert = frame(runs)
    if cert.empty:
        return "_no runs_"
    ls = runs[runs["method"] == "wcg-ls"]
    ls_limit = sorted({str(o) for o in ls["options"]}) if len(ls) else []
    text = (f"Objective f (the jobs' common speed, maximised); certified gap = 100 (bound - f) / "
            f"bound of the better of `wcg` and `wcg-ls` (options {', '.join(ls_limit) or '-'}); "
            f"goal: within {GOAL:g} % on every seed. `jobs-timeshared` holds for every "
            f"solution, `jobs` for static OXC port pairings only (both heuristics' kind). Bound "
            f"time limit {time_limits(runs, 'bound:jobs')}; seconds are the bound's own.")
    return text + "\n\n" + settings_table(cert, GOAL, LABELS) + "\n"


def _heading(runs: pd.DataFrame) -> str:
    cert = frame(runs)
    if cert.empty:
        return "Certified gaps: no runs"
    racks = sizes([p.get("racks", 64) for p in cert["params"]], "racks")
    workers = " and ".join(dict.fromkeys(cert["setting"].str.split("workers ").str[1]))
    return (f"Certified gaps: WCG and WCG-LS vs the per-job bounds "
            f"({racks}, workers {workers} per job, seeds {seeds_text(cert['seed'])})")


# minutes measured on the shared 2-core machine (--workers 2): quick-inc_oxc-bounds 35 s
TABLES = [
    Table("inc_oxc", "bounds", "Certified gaps at the paper's sizes: WCG and WCG-LS vs the "
          "per-job bounds (64 racks, workers [16, 64] and [4, 16] per job, seeds 0-9)",
          ("paper-inc_oxc-bounds",), ("quick-inc_oxc-bounds",), bounds, 3.0, 0.6,
          heading=_heading),
]
