"""Paper 003, RAR (ring-all-reduce scheduling): its tables, cost-growth series,
reference-library entries and ``quick`` suite groups (:mod:`dmlopt.benchmarks.papers`)."""

from __future__ import annotations

from collections.abc import Iterator

from dmlopt.benchmarks.library import FRONTIER_SECONDS, Spec
from dmlopt.benchmarks.papers import Paper, Plan


def library() -> Iterator[Spec]:
    """The reference-library entries: the 6-node network's instances (Table 2, Figs. 5-7;
    ``aggregated`` formulation warm-started by RDDA), its MinCU frontier at 10 requests, and
    RDDA's best-known values on the 38-node network."""
    for n in (2, 6, 10, 12):
        for scheme in ("MinCU", "MinW", "MinT", "MaxR"):
            # the frontier: MinCU at 10 requests, seeds 0-9 (3 of 10 proven in 600 s)
            frontier = n == 10 and scheme == "MinCU"
            for s in range(10 if frontier else 5):
                yield Spec(f"cpn6-r{n}-{scheme.lower()}-s{s}", "rar",
                           {"paper": "003", "generator": "cpn6",
                            "table": "frontier: MinCU, 10 requests" if frontier
                            else "Table 2, Figs. 5-7",
                            "params": {"requests": n, "scheme": scheme}, "seed": s},
                           {"generator": "cpn6", "requests": n, "scheme": scheme}, s,
                           "aggregated", "rdda", time_limit=FRONTIER_SECONDS if frontier else None)
    yield from _rar38()


def _rar38() -> Iterator[Spec]:
    # 100 and 200 requests only: a 500-request solution file is 0.4 MB
    for n in (100, 200):
        for scheme in ("MinCU", "MinW", "MinT", "MaxR"):
            yield Spec(f"cpn38-r{n}-{scheme.lower()}-s0", "rar",
                       {"paper": "003", "table": "Figs. 8-13, Table 2 (RDDA)",
                        "generator": "cpn38", "params": {"requests": n, "scheme": scheme},
                        "seed": 0},
                       {"generator": "cpn38", "requests": n, "scheme": scheme}, 0,
                       heuristic="rdda")


# growth minutes: wall minutes of the full run measured on 2026-11-25 with --workers 1 on the
# shared 2-core machine at load average 8-11 (until a run takes 5 s of CPU); quick: 0.2 min
# measured at load 9
PAPER = Paper(
    key="rar", number="003", name="RAR (ring-all-reduce scheduling)",
    tables=("dmlopt.benchmarks.tables.rar", "dmlopt.benchmarks.tables.rar_bounds",
            "dmlopt.benchmarks.tables.rar_loose"),
    growth=Plan("requests", lambda n: {"generator": "cpn38", "requests": n,
                                       "slots": max(12, round(0.48 * n)), "scheme": "MinCU"},
                (63, 125, 250, 500, 1000), (25, 50), minutes=2.0, quick_minutes=0.3,
                skip={"rdda-lns": "not run: a search that stops at its time limit (60 s by "
                      "default), its time is its time limit"}),
    library=library,
    quick=(
        {"problem": "rar",
         "instances": [{"file": "rar/fig2.json"},
                       {"generator": "cpn6", "params": {"requests": 4, "scheme": "MinT"},
                        "seeds": [0]}],
         "methods": [{"solver": "highs", "formulation": "aggregated", "time_limit": 30,
                      "threads": 1},
                     {"heuristic": "rdda", "seeds": [0]}]},
        {"problem": "rar",
         "instances": [{"generator": "cpn38", "params": {"requests": 100, "scheme": "MinCU"},
                        "seeds": [0]}],
         "methods": [{"heuristic": "rdda", "seeds": [0]}]},
    ),
)
