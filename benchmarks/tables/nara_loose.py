"""Paper 001 (Nara): which side of the uniform certified gap is loose, from the runs of
``paper-nara-loose`` (full) or ``quick-nara-loose`` (``dmlopt reproduce nara loose``).

Placeholder until the shared helper lands; see the final version of this module.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dmlopt.benchmarks.tables import Table


def loose_side(runs: pd.DataFrame, outdir: Path) -> str:
    """Placeholder renderer."""
    return f"{len(runs)} runs"


TABLES = [
    Table("nara", "loose", "Which side is loose: the proven offline optimum vs the bounds and the "
          "allocators (alpha, uniform, 24 and 32 requests, seeds 0-4)", ("paper-nara-loose",),
          ("quick-nara-loose",), loose_side, 40.0, 0.5),
]
