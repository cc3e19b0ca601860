"""Paper 001 (Nara): which side of the uniform certified gap is loose, from the runs of
``paper-nara-loose`` (full) or ``quick-nara-loose`` (``dmlopt reproduce nara loose``).

At 128 uniform requests the certified gap of the best allocator to the bounds stays above 10 %
on several seeds (``dmlopt reproduce nara bounds``), and nothing there says whether the bound
or the allocators are far from the optimum. Here the same request set on the same topology
(alpha) is scaled down in requests until the exact method proves the optimum: instances
``uniform(topology=alpha,n_requests=R)#seed``. The optimum is the *offline* optimum: the most
requests any allocation accepts with the whole episode known in advance (``dmlopt.solve``'s
default exact solve, ``acceptance-sets`` then formulation ``offline``; status ``optimal`` only
where an allocation the evaluator accepts meets the proven bound). It is an upper bound on
every online allocator, so an online allocator's gap to it holds the price of being online
as well as the allocator's own loss; the offline allocator ``offline-search`` (it reads the
whole episode, as the optimum does) is graded in a table of its own. Gaps are split by
:func:`dmlopt.benchmarks.tables.loose.loose`: the bound's ``100 (bound - optimum) / optimum``
and the best allocator's ``100 (optimum - best) / optimum``, also in requests.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dmlopt.benchmarks.tables import Table, sizes
from dmlopt.benchmarks.tables.certified import seeds_text, time_limits
from dmlopt.benchmarks.tables.loose import loose, loose_table

#: the online allocators (the best of them per episode is graded)
ONLINE = ("tetris", "netfit", "netfit-probe", "nara-netfit", "nara")
#: the offline allocator (knows the whole episode), graded apart
OFFLINE = ("offline-search",)
#: the bounds, the default of ``dmlopt.bound`` first (``cover``; ``aggregate`` where its size
#: estimate is above the limits)
BOUNDS = ("cover", "aggregate", "schedule")
LABELS = {"cover": "`cover` (default)"}


def frame(runs: pd.DataFrame, heuristics: tuple[str, ...] = ONLINE) -> pd.DataFrame:
    """The :func:`~dmlopt.benchmarks.tables.loose.loose` rows of the Nara uniform runs for the
    best of ``heuristics`` (default: the online allocators), one unit = one request, with a
    ``setting`` (topology, requests), by requests then seed; bound methods the runs do not
    hold are left out.

    Parameters
    ----------
    runs : pandas.DataFrame
        Store rows (:func:`dmlopt.benchmarks.tables.rows`).
    heuristics : tuple of str
        Allocators whose best count per episode is graded.

    Returns
    -------
    pandas.DataFrame
        :func:`~dmlopt.benchmarks.tables.loose.loose` columns plus ``requests`` and
        ``setting``.

    References
    ----------
    .. [1] :mod:`dmlopt.benchmarks.tables.loose`.
    """
    sub = runs[(runs["problem"] == "nara")] if len(runs) else runs
    ran = [b for b in BOUNDS if len(sub) and (sub["method"] == f"bound:{b}").any()]
    out = loose(sub, heuristics, ran, unit=lambda inst, params: 1.0)
    out = out[out["generator"] == "uniform"] if len(out) else out
    if out.empty:
        return out.assign(requests=[], setting=[])
    out = out.assign(requests=[int(p.get("n_requests", 0) or 0) for p in out["params"]])
    out["setting"] = [f"{p.get('topology', 'alpha')}, {n} requests, uniform"
                      for p, n in zip(out["params"], out["requests"], strict=True)]
    return out.sort_values(["requests", "seed"], kind="stable")


def loose_side(runs: pd.DataFrame, outdir: Path) -> str:
    """Per setting and bound: the optimum proven (of how many), the bound's and the best online
    allocator's gap to it (mean / max, % and requests) and which side is loose per episode,
    every episode below; then the same for the offline allocator :data:`OFFLINE`.

    Parameters
    ----------
    runs : pandas.DataFrame
        Store rows of ``paper-nara-loose`` or ``quick-nara-loose``.
    outdir : pathlib.Path
        The table's directory (unused: Markdown only).

    Returns
    -------
    str
        Markdown.

    References
    ----------
    .. [1] Paper 001 (Shabka and Zervas), section 5 (alpha, uniform requests).
    """
    online = frame(runs)
    if online.empty:
        return "_no runs_"
    limits = ", ".join(f"`{b}` {time_limits(runs, f'bound:{b}')}" for b in BOUNDS
                       if (runs["method"] == f"bound:{b}").any())
    text = ("Objective: accepted requests, maximised. Optimum: the offline optimum (the whole "
            "episode known in advance), proven by `dmlopt.solve`'s default exact solve "
            f"(`acceptance-sets`, then formulation `offline`; {time_limits(runs, 'highs:offline')}"
            f", one thread); it bounds every online allocator. Bound's gap = 100 (bound - "
            "optimum) / optimum, best allocator's gap = 100 (optimum - best) / optimum, also in "
            f"requests; bounds without netfit's allocation, one thread: {limits}. Loose side: "
            "the larger of the two gaps (both: within a factor 1.25).\n\n"
            "**Online allocators** (best of " + ", ".join(f"`{h}`" for h in ONLINE)
            + " per episode; their gap holds the price of being online).\n\n"
            + loose_table(online, LABELS, unit_name="requests") + "\n")
    off = frame(runs, OFFLINE)
    off = off[off["objective"].notna()] if len(off) else off
    if off.empty:
        return text
    return (text + "\n**Offline: " + ", ".join(f"`{h}`" for h in OFFLINE) + "** (reads the "
            "whole episode, as the optimum does).\n\n"
            + loose_table(off, LABELS, unit_name="requests") + "\n")


def _heading(runs: pd.DataFrame) -> str:
    df = frame(runs)
    if df.empty:
        return "Which side is loose: no runs"
    return (f"Which side is loose on uniform requests: the proven offline optimum vs the bounds "
            f"and the allocators (alpha, {sizes(df['requests'], 'requests')}, seeds "
            f"{seeds_text(df['seed'])})")


# minutes measured on the shared 2-core machine: paper-nara-loose 36.6 min on one worker (load
# average 5-11; the exact solves dominate, two of them stopped at 600 s), quick 13.5 s
TABLES = [
    Table("nara", "loose", "Which side is loose on uniform requests: the proven offline optimum "
          "vs the bounds and the allocators (alpha, 24 and 32 requests, seeds 0-4)",
          ("paper-nara-loose",), ("quick-nara-loose",), loose_side, 37.0, 0.5,
          heading=_heading),
]
