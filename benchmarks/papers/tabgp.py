"""Paper 004, TABGP (temporal balanced graph partitioning): its tables, cost-growth series,
reference-library entries and ``quick`` suite groups (:mod:`dmlopt.benchmarks.papers`)."""

from __future__ import annotations

from collections.abc import Iterator

from dmlopt.benchmarks.library import FRONTIER_SECONDS, Spec
from dmlopt.benchmarks.papers import Paper, Plan


def library() -> Iterator[Spec]:
    """The reference-library entries: Figure 4.2's 180 instances (n = 12), the paper's "slightly
    larger" n = 16 set and the n = 20 frontier, each solved with the ``pairs`` formulation
    warm-started by Dense-Refine."""
    for tau in (1, 3):
        for i in range(1, 10):
            p = round(0.1 * i, 1)
            for s in range(10):
                yield Spec(f"fig42-p{i:02d}-tau{tau}-s{s}", "tabgp",
                           {"paper": "004", "table": "Figure 4.2", "generator": "er",
                            "params": {"n": 12, "p": p, "tau": tau, "l": 4}, "seed": s},
                           {"generator": "er", "n": 12, "p": p, "tau": tau, "l": 4}, s,
                           "pairs", "dense-refine")
    # the paper's "slightly larger" set (suite paper-tabgp, table n16): n = 16, k = 4
    for p in (0.2, 0.5, 0.8):
        for s in range(2):
            yield _spec(f"n16-p{round(10 * p):02d}-tau3-s{s}", 16, p, s, "n = 16 (k = 4)")
    # the frontier: n = 20, tau = 3 (k = 5, l = 4), never solved (section 4.2: Gurobi ran two
    # weeks on larger instances without a proof)
    for p in (0.2, 0.5, 0.8):
        yield _spec(f"n20-p{round(10 * p):02d}-tau3-s0", 20, p, 0,
                    "frontier: n = 20, tau = 3", FRONTIER_SECONDS)


def _spec(sid: str, n: int, p: float, s: int, table: str,
          time_limit: float | None = None) -> Spec:
    params = {"n": n, "p": p, "tau": 3, "l": 4}
    return Spec(sid, "tabgp", {"paper": "004", "table": table, "generator": "er",
                               "params": params, "seed": s},
                {"generator": "er", **params}, s, "pairs", "dense-refine",
                time_limit=time_limit)


# growth minutes: wall minutes of the full run measured on 2026-11-25 with --workers 1 on the
# shared 2-core machine at load average 8-11 (until a run takes 5 s of CPU); quick: 0.9 min
# measured at load 9
PAPER = Paper(
    key="tabgp", number="004", name="TABGP (temporal balanced graph partitioning)",
    tables=("dmlopt.benchmarks.tables.tabgp", "dmlopt.benchmarks.tables.tabgp_bounds",
            "dmlopt.benchmarks.tables.tabgp_loose"),
    growth=Plan("vertices", lambda n: {"generator": "drift", "n": n, "m": 5 * n, "tau": 10,
                                       "l": 16}, (125, 250, 500, 1000, 2000, 4000), (64, 128),
                minutes=10.0, quick_minutes=1.0,
                skip={"memetic": "not run: a search of minutes by design, (population + "
                      "generations) x rounds rounds of ils (its row) and a local search per "
                      "member and child"}),
    library=library,
    quick=(
        {"problem": "tabgp",
         "instances": [{"generator": "er", "params": {"n": 10, "p": 0.4, "tau": 2, "l": 4},
                        "seeds": [0, 1]}],
         "methods": [{"solver": "highs", "formulation": "paper", "time_limit": 30},
                     {"solver": "highs", "formulation": "pairs", "time_limit": 30},
                     {"heuristic": "dense-refine", "seeds": [0]},
                     {"heuristic": "metis-ls", "seeds": [0]},
                     {"heuristic": "best", "seeds": [0]}]},
    ),
)
