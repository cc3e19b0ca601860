"""Paper 001, Nara (network-aware resource allocation): its tables, cost-growth series,
reference-library entries and ``quick`` suite group (:mod:`dmlopt.benchmarks.papers`)."""

from __future__ import annotations

from collections.abc import Iterator

from dmlopt.benchmarks.library import Spec
from dmlopt.benchmarks.papers import Paper, Plan


def library() -> Iterator[Spec]:
    """The reference-library entries: the offline bound's 16-request episodes on topology
    alpha (``offline`` formulation warm-started by NetFit) and the frontier, the five
    32-request episodes of the ``bound`` table (the default solve, which runs the exact
    ``acceptance-sets`` first, warm-started by ``offline-search``; 600 s each)."""
    for s in range(10):
        yield Spec(f"alpha-uniform-r16-s{s}", "nara",
                   {"paper": "001", "table": "offline bound (section 4)", "generator": "uniform",
                    "params": {"topology": "alpha", "n_requests": 16}, "seed": s},
                   {"generator": "uniform", "topology": "alpha", "n_requests": 16}, s,
                   "offline", "netfit")
    for s in range(5):
        yield Spec(f"alpha-uniform-r32-s{s}", "nara",
                   {"paper": "001", "table": "frontier: 32 requests", "generator": "uniform",
                    "params": {"topology": "alpha", "n_requests": 32}, "seed": s},
                   {"generator": "uniform", "topology": "alpha", "n_requests": 32}, s,
                   "offline", "offline-search", time_limit=600.0, default_solve=True)


# growth minutes: wall minutes of the full run measured on 2026-11-25 with --workers 1 on the
# shared 2-core machine at load average 8-11 (until a run takes 5 s of CPU)
PAPER = Paper(
    key="nara", number="001", name="Nara (network-aware resource allocation)",
    tables=("dmlopt.benchmarks.tables.nara", "dmlopt.benchmarks.tables.nara_bounds",
            "dmlopt.benchmarks.tables.nara_loose"),
    growth=Plan("requests", lambda n: {"generator": "uniform", "topology": "alpha",
                                       "n_requests": n}, (128, 256, 512, 1024, 2048, 4096),
                (32, 64), minutes=6.5, quick_minutes=1.0,
                skip={"milp": "not run: an exact MILP per episode, its time is its time limit"}),
    library=library,
    quick=(
        {"problem": "nara",
         "instances": [{"generator": "uniform", "params": {"topology": "alpha",
                                                           "n_requests": 8}, "seeds": [0]}],
         "methods": [{"solver": "highs", "formulation": "offline", "time_limit": 30,
                      "threads": 1, "warm_start": "netfit"},
                     {"heuristic": "tetris", "seeds": [0]},
                     {"heuristic": "netfit", "seeds": [0]}]},
    ),
)
