"""Paper 004 (TABGP): which side of drift's certified gap is loose, on scaled-down drift
instances whose optimum the ``pairs`` MIP proves (``dmlopt reproduce tabgp loose``; suites
``paper-tabgp-loose``, ``quick-tabgp-loose``).

Instances are ``drift(n=N,tau=T,l=L,m=M)#seed``; the objective is cut plus migration
(minimised). Per instance: the optimum proven by an exact run, the ``spectral`` bound with a
window of 3 steps (the certified-gap table's) and with its default options (``dmlopt.bound``'s
choice: the largest window that fits, here every step), and the best of ``dense-refine``,
``best`` and ``memetic``; the gap of each to the optimum
(:mod:`dmlopt.benchmarks.tables.loose`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dmlopt.benchmarks.tables import Table, sizes
from dmlopt.benchmarks.tables.certified import _payload, seeds_text, time_limits
from dmlopt.benchmarks.tables.loose import loose, loose_table

HEURISTICS = ("dense-refine", "best", "memetic")
#: bound variants shown: (label in the table, predicate on the run's options)
VARIANTS = (("spectral-w3", "`spectral`, window 3", lambda o: o == {"window": 3}),
            ("spectral-w3-nopairs", "`spectral`, window 3, no same-label pairs (as at n = "
             "1,000)", lambda o: o == {"window": 3, "pairs": 0}),
            ("spectral-default", "`spectral`, default options (`dmlopt.bound`)",
             lambda o: not o))


def _options(row: pd.Series) -> dict:
    opts = _payload(row["options"]).get("options", {})
    return opts if isinstance(opts, dict) else {}


def frame(runs: pd.DataFrame) -> pd.DataFrame:
    """The :func:`~dmlopt.benchmarks.tables.loose.loose` rows of the ``drift`` runs, one per
    instance and bound variant (``bound_method`` ``spectral-w3`` or ``spectral-default``), with
    a ``setting`` (the generator's parameters) and ``n``.

    Parameters
    ----------
    runs : pandas.DataFrame
        Store rows (:func:`dmlopt.benchmarks.tables.rows`) of the table's suites.

    Returns
    -------
    pandas.DataFrame
        :data:`dmlopt.benchmarks.tables.loose.COLUMNS` plus ``setting`` and ``n``, by size,
        variant and seed; a bound run counts for the variant whose options it has.

    References
    ----------
    :func:`dmlopt.benchmarks.tables.loose.loose`; paper 004 (the objective).
    """
    sub = runs[(runs["problem"] == "tabgp")
               & runs["instance"].astype(str).str.startswith("drift(")] if len(runs) else runs
    parts = []
    for key, _, keep in VARIANTS:
        if sub.empty:
            break
        is_spectral = (sub["kind"] == "bound") & (sub["method"] == "bound:spectral")
        mask = [not b or bool(keep(_options(r))) for b, (_, r) in
                zip(is_spectral, sub.iterrows(), strict=True)]
        part = loose(sub[mask], HEURISTICS, ("spectral",))
        parts.append(part.assign(bound_method=key))
    if not parts or all(p.empty for p in parts):
        return pd.DataFrame(columns=["setting", "n", "bound_method"])
    out = pd.concat([p for p in parts if not p.empty], ignore_index=True)
    out = out.assign(n=[int(p.get("n", 0)) for p in out["params"]],
                     _rank=[[k for k, _, _ in VARIANTS].index(b) for b in out["bound_method"]])
    out["setting"] = ["drift, " + ", ".join(f"{k} = {v}" for k, v in p.items())
                      for p in out["params"]]
    return out.sort_values(["n", "setting", "_rank", "seed"], kind="stable").drop(
        columns="_rank")


def loose_drift(runs: pd.DataFrame, outdir: Path) -> str:
    """Per drift size and bound variant: optima proven, the bound's gap to the optimum and the
    best heuristic's (mean / max), which side is loose; every seed below."""
    fr = frame(runs)
    if fr.empty:
        return "_no runs_"
    text = ("Objective: cut plus migration, minimised. Optimum: the `pairs` MIP (HiGHS, one "
            "thread, warm start `best`). Gaps to the optimum: the bound's 100 (optimum - "
            "bound) / optimum, the best heuristic's (of `dense-refine`, `best`, `memetic`, "
            "seed 0) 100 (objective - optimum) / optimum. Bound: `spectral`, time limit "
            f"{time_limits(runs, 'bound:spectral')}, one BLAS thread; the default options "
            "take the largest window within 2,000 nodes (all steps here).")
    labels = {k: label for k, label, _ in VARIANTS}
    return text + "\n\n" + loose_table(fr, labels) + "\n"


def _heading(runs: pd.DataFrame) -> str:
    fr = frame(runs)
    if fr.empty:
        return "Which side is loose on drift: no runs"
    return (f"Which side is loose on drift: proven optima against the spectral bound and the "
            f"heuristics (n = {sizes(fr['n'])}, seeds {seeds_text(fr['seed'])})")


# minutes on the shared 2-core machine (--workers 1, load 5-11): the full run 12.8 of run time
# (its ten pairs MIPs 28-114 s, thirty bounds of at most 30 s, memetic 8-16 s each), quick 0.5
TABLES = [
    Table("tabgp", "loose", "Which side is loose on drift: proven optima of scaled-down "
          "drift against the spectral bound and the heuristics",
          ("paper-tabgp-loose",), ("quick-tabgp-loose",), loose_drift, 13.0, 0.5,
          heading=_heading),
]
