"""Paper tables and figures re-created from harness stores (``dmlopt reproduce``).

Each module ``benchmarks/tables/<problem>.py`` declares ``TABLES``, a list of :class:`Table`: the
shipped suites whose runs a table needs (full and ``--quick``) and a ``render`` function from
those runs to Markdown (the paper's published values beside ours where the paper gives them).
A paper names its tables modules in its ``Paper.tables`` (:mod:`dmlopt.benchmarks.papers`).
``dmlopt reproduce PAPER`` runs the suites through the harness into resumable stores and calls
the renderers; nothing reads SQLite by hand (rows come from :func:`rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported when a table is made, not when the CLI starts
    import pandas as pd

@dataclass(frozen=True)
class Table:
    """One table or figure of a paper.

    Parameters
    ----------
    paper:
        Key of a registered paper (:mod:`dmlopt.benchmarks.papers`: ``tap``, ``nara``,
        ``inc_oxc``, ``rar``, ``tabgp``).
    name:
        Short id used on the command line (``dmlopt reproduce tabgp fig4.2``): lower case,
        letters, digits, ``.``, ``-``.
    title:
        What the paper calls it and what it shows, e.g. ``"Figure 4.2: relative error of the
        heuristics to the optimum (n = 12)"``.
    suites:
        Shipped suite names (``benchmarks/suites/<name>.toml``) of the full run.
    quick:
        Shipped suite names of ``--quick``: a reduced version (fewer seeds, smaller sizes,
        shorter limits) such that every table of a paper together runs in at most 10 minutes
        on 2 cores.
    render:
        ``render(runs, outdir) -> markdown``. ``runs`` holds the rows of the table's suites
        (:func:`rows`); a quick run renders with the same function. PNG figures are written
        under ``outdir`` only and linked from the Markdown by file name.
    minutes, quick_minutes:
        Wall minutes measured for the full and the quick run with ``--workers 2`` on the
        2-core benchmark machine (shown by ``dmlopt reproduce --list``).
    heading:
        ``heading(runs) -> title`` for a table whose title states sizes: the heading of the
        written table then names the sizes the runs actually had (a quick run's smaller ones);
        ``None``: the heading is ``title``.
    """

    paper: str
    name: str
    title: str
    suites: tuple[str, ...]
    quick: tuple[str, ...]
    render: Callable[[pd.DataFrame, Path], str]
    minutes: float
    quick_minutes: float
    heading: Callable[[pd.DataFrame], str] | None = None

    def title_of(self, runs: pd.DataFrame) -> str:
        """The heading of the table rendered from ``runs``."""
        return self.title if self.heading is None else self.heading(runs)


def rows(records: list[dict]) -> pd.DataFrame:
    """Store records (``dmlopt.benchmarks.store.read``) as a DataFrame with the store's columns
    (``suite``, ``problem``, ``instance``, ``kind``, ``method``, ``options`` (JSON text),
    ``seed``, ``status``, ``objective``, ``bound``, ``gap``, ``seconds``, ``feasible``,
    ``metrics`` (dict), ...). The same run stored twice counts once (the last one)."""
    import pandas as pd

    from dmlopt.benchmarks.store import NAMES

    df = pd.DataFrame(records, columns=["id", *NAMES])
    if df.empty:
        return df
    return df.drop_duplicates(["instance_hash", "method", "options", "seed"], keep="last")


def sizes(values: object, unit: str = "") -> str:
    """``2 and 4 requests``, ``50..500 requests``: the distinct values of a run's sizes, for a
    heading (``, `` between the first ones, ``..`` for more than three)."""
    vals = sorted({int(v) for v in values})
    if not vals:
        return "no runs"
    text = (f"{vals[0]:,}..{vals[-1]:,}" if len(vals) > 3 else
            " and ".join([", ".join(f"{v:,}" for v in vals[:-1]), f"{vals[-1]:,}"])
            if len(vals) > 1 else f"{vals[0]:,}")
    return f"{text} {unit}".rstrip()


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, or ``_no runs_`` when there are no rows."""
    if not rows:
        return "_no runs_"
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(r) + " |" for r in rows])
