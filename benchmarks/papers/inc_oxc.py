"""Paper 002, INC/OXC (in-network computing, optical DCN): its tables, cost-growth series,
reference-library entries and ``quick`` suite group (:mod:`dmlopt.benchmarks.papers`)."""

from __future__ import annotations

from collections.abc import Iterator

from dmlopt.benchmarks.library import Spec
from dmlopt.benchmarks.papers import Paper, Plan


def library() -> Iterator[Spec]:
    """The reference-library entries: Fig. 4's instances (2, 4, 6 racks) and the 8-rack
    frontier, solved with the ``strong`` formulation warm-started by WCG-LS."""
    for racks in (2, 4, 6):
        for s in range(4):
            yield Spec(f"fig4-r{racks}-s{s}", "inc_oxc",
                       {"paper": "002", "table": "Fig. 4 / Table II", "generator": "small",
                        "params": {"racks": racks}, "seed": s},
                       {"generator": "small", "racks": racks}, s, "strong", "wcg-ls")
    # the frontier: 8 racks (the paper stops at 6, 1,556 s in Gurobi); goal: proven in 600 s
    for s in range(4):
        yield Spec(f"fig4-r8-s{s}", "inc_oxc",
                   {"paper": "002", "table": "frontier: 8 racks", "generator": "small",
                    "params": {"racks": 8}, "seed": s},
                   {"generator": "small", "racks": 8}, s, "strong", "wcg-ls", time_limit=600.0)


# growth minutes: wall minutes of the full run measured on 2026-11-25 with --workers 1 on the
# shared 2-core machine at load average 8-11 (until a run takes 5 s of CPU)
PAPER = Paper(
    key="inc_oxc", number="002", name="INC/OXC (in-network computing, optical DCN)",
    tables=("dmlopt.benchmarks.tables.inc_oxc", "dmlopt.benchmarks.tables.inc_oxc_bounds"),
    growth=Plan("racks", lambda r: {"generator": "large", "racks": r},
                (16, 32, 64, 128, 256), (8, 16), minutes=10.5, quick_minutes=1.0),
    library=library,
    quick=(
        {"problem": "inc_oxc",
         "instances": [{"generator": "small", "params": {"racks": 2}, "seeds": [0, 1]},
                       {"generator": "small", "params": {"racks": 2, "inc": False},
                        "seeds": [0]}],
         "methods": [{"solver": "highs", "formulation": "strong", "time_limit": 30},
                     {"solver": "highs", "formulation": "paper", "time_limit": 30},
                     {"heuristic": "wcg", "seeds": [0]},
                     {"heuristic": "swg", "seeds": [0]},
                     {"heuristic": "rwp", "seeds": [0]},
                     {"heuristic": "wcg-ls", "seeds": [0], "options": {"time_limit": 0.5}}]},
    ),
)
