"""Paper 000, TAP (task allocation) and Flow Tracking: its tables (Flow Tracking's are the
``infer`` problem's), cost-growth series, reference-library entries and ``quick`` suite groups
(:mod:`dmlopt.benchmarks.papers`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from dmlopt.benchmarks.library import FRONTIER_SECONDS, Spec
from dmlopt.benchmarks.papers import Paper, Plan


def _qaplib_known(name: str) -> Callable[[Any], tuple[Any, str]]:
    def known(inst: Any) -> tuple[Any, str]:
        from dmlopt.models.tap import Solution, evaluate, qaplib

        _, perm = qaplib.solution(name)
        perm = [int(x) for x in perm]
        inverse = [0] * len(perm)
        for i, v in enumerate(perm):
            inverse[v] = i
        cands = [Solution(assignment=perm), Solution(assignment=inverse)]
        best = min(cands, key=lambda s: evaluate(inst, s).objective)
        return best, "QAPLIB published solution (.sln), re-evaluated"
    return known


def library() -> Iterator[Spec]:
    """The reference-library entries: Fig. 11's instances (``class`` formulation warm-started
    by ABM + local search), QAPLIB's published solutions and the fat-tree k = 8 frontier."""
    from dmlopt.models.tap import qaplib

    for topo, vms_list in (("fat-tree", (8, 12, 16)), ("dcell", (8, 12, 16, 20))):
        for overlay in ("ps", "allreduce"):
            for vms in vms_list:
                for s in range(2):
                    params = {"topology": topo, "overlay": overlay, "modules": 8, "vms": vms,
                              "K": 1}
                    yield Spec(f"fig11-{topo}-{overlay}-v{vms}-s{s}", "tap",
                               {"paper": "000", "table": "Fig. 11", "generator": "dc",
                                "params": params, "seed": s}, {"generator": "dc", **params}, s,
                               "class", "abm-ls")
    for name in qaplib.names():
        yield Spec(f"qaplib-{name}", "tap",
                   {"paper": "QAPLIB (Burkard, Karisch, Rendl 1997)", "table": "QAPLIB",
                    "generator": "qaplib", "params": {"name": name}, "seed": 0},
                   {"generator": "qaplib", "name": name}, 0, ship_instance=False,
                   known=_qaplib_known(name))
    # the frontier: ten times Fig. 11's size (fat-tree k = 8: 128 servers, 32 modules, K = 1)
    for overlay in ("ps", "allreduce"):
        params = {"topology": "fat-tree", "k": 8, "overlay": overlay, "modules": 32, "K": 1}
        yield Spec(f"frontier-fat-tree-k8-{overlay}-m32-s0", "tap",
                   {"paper": "000", "table": "frontier: fat-tree k = 8, 32 modules",
                    "generator": "dc", "params": params, "seed": 0},
                   {"generator": "dc", **params}, 0, "class", "rts",
                   time_limit=FRONTIER_SECONDS)


# growth minutes: wall minutes of the full run measured on 2026-11-25 with --workers 1 on the
# shared 2-core machine at load average 8-11 (until a run takes 5 s of CPU)
PAPER = Paper(
    key="tap", number="000", name="TAP (task allocation) and Flow Tracking",
    tables=("dmlopt.benchmarks.tables.tap", "dmlopt.benchmarks.tables.infer",
            "dmlopt.benchmarks.tables.tap_bounds"),
    growth=Plan("modules", lambda m: {"generator": "dc", "topology": "fat-tree", "k": 16,
                                      "modules": m, "vms": 2 * m, "overlay": "random"},
                (16, 32, 64, 128, 256), (8, 16), minutes=12.5, quick_minutes=1.0),
    library=library,
    quick=(
        {"problem": "tap",
         "instances": [{"generator": "dc", "params": {"topology": "fat-tree", "overlay": "ps",
                                                      "modules": 8, "vms": 10}, "seeds": [0]},
                       {"generator": "dc", "params": {"topology": "dcell",
                                                      "overlay": "allreduce", "modules": 8,
                                                      "vms": 12}, "seeds": [0]}],
         "methods": [{"solver": "highs", "formulation": "class", "time_limit": 30},
                     {"heuristic": "cle", "seeds": [0]},
                     {"heuristic": "abm", "seeds": [0]},
                     {"heuristic": "abm-ls", "seeds": [0]},
                     {"heuristic": "tabu", "seeds": [0]}]},
        {"problem": "tap",
         "instances": [{"generator": "qaplib", "params": {"name": "nug12"}, "seeds": [0]}],
         "methods": [{"heuristic": "tabu", "seeds": [0]}, {"heuristic": "abm-ls", "seeds": [0]}]},
        {"problem": "infer",
         "instances": [{"generator": "dc", "params": {"topology": "fat-tree",
                                                      "routing": "dijkstra"}, "seeds": [0]},
                       {"generator": "dc", "params": {"topology": "dcell",
                                                      "routing": "random-walk", "paths": 6},
                        "seeds": [0]}],
         "methods": [{"heuristic": "ft"}, {"heuristic": "rnj"}, {"heuristic": "ce"}]},
        {"problem": "infer_tap",
         "instances": [{"generator": "dc", "params": {"topology": "fat-tree", "overlay": "ps",
                                                      "vms": 8}, "seeds": [0]}],
         "methods": [{"solver": "highs", "formulation": "truth", "time_limit": 30},
                     {"heuristic": "cle"},
                     {"heuristic": "abm"}]},
    ),
    # the Flow Tracking page also covers infer_tap (allocation on inferred topologies)
    pages={"tap": ("tap",), "infer": ("infer", "infer_tap")},
)
