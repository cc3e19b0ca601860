"""The toy problem (tests/helpers/toy_problem.py) as a full paper, made by the steps of
docs/architecture.md "Adding a problem": a module declaring ``PAPER`` (here also its
``TABLES``), a suite file, and an entry point, which the test simulates as the ``toy`` fixture
simulates the problem's (tests/bench/test_papers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dmlopt.benchmarks.library import Spec
from dmlopt.benchmarks.papers import Paper, Plan
from dmlopt.benchmarks.tables import Table, md_table

#: the paper's suite, named by path (a real paper ships benchmarks/suites/paper-<key>.toml)
SUITE = str(Path(__file__).with_name("toy_paper.toml"))


def render(runs: Any, outdir: Path) -> str:
    """Per instance: the proven optimum of the exact runs and greedy's objective."""
    del outdir
    rows = []
    for inst, grp in runs.groupby("instance"):
        exact = grp[(grp["kind"] == "exact") & (grp["status"] == "optimal")]["objective"]
        greedy = grp[grp["method"] == "greedy"]["objective"]
        rows.append([inst, f"{exact.min():g}" if len(exact) else "-",
                     f"{greedy.min():g}" if len(greedy) else "-"])
    return md_table(["instance", "optimum", "greedy"], sorted(rows))


TABLES = [Table("toy", "cover", "Cover: the optimum and greedy on random instances",
                (SUITE,), (SUITE,), render, 0.1, 0.1)]


def library() -> Iterator[Spec]:
    """Two library entries, solved with the paper formulation from greedy."""
    for s in range(2):
        yield Spec(f"random-n8-s{s}", "toy", {"paper": "none", "table": "cover",
                                              "generator": "random", "params": {"n": 8},
                                              "seed": s},
                   {"generator": "random", "n": 8}, s, "paper", "greedy")


PAPER = Paper(
    key="toy", number="999", name="Minimum-cost cover (test only)",
    tables=(__name__,),
    growth=Plan("items", lambda n: {"generator": "random", "n": n}, (8, 16), (4, 8),
                minutes=0.1, quick_minutes=0.1),
    library=library,
    quick=({"problem": "toy",
            "instances": [{"generator": "random", "params": {"n": 6}, "seeds": [0]}],
            "methods": [{"solver": "highs", "formulation": "paper", "time_limit": 30},
                        {"heuristic": "greedy", "seeds": [0]}]},),
)
