"""Flow Tracking evaluator (paper 000, section V-B): the metrics it adds to
``evaluate_inference`` computed by hand, and the cap on listed violations. Written from mutation
testing (``make mutation TARGETS=infer``)."""

from __future__ import annotations

import dmlopt
from dmlopt.models.infer import Solution, evaluate

SPEC = {"generator": "dc", "topology": "dcell", "dcell_n": 4, "dcell_level": 1,
        "routing": "random-walk", "paths": 12}


def test_path_metrics_by_hand():
    """Kills ``len(p) - 1`` -> ``len(p) ^ 1`` (random walks give paths of even and odd length)
    and ``paths``."""
    inst = dmlopt.generate("infer", SPEC, seed=3)
    sol = dmlopt.heuristic(inst, "ft").solution
    ev = evaluate(inst, sol)
    paths = inst.measurement.paths
    hops = [len(p) - 1 for p in paths]
    assert len({h % 2 for h in hops}) == 2, "the instance must mix even and odd hop counts"
    assert ev.feasible and ev.metrics["paths"] == len(paths) == 12
    assert ev.metrics["path_hops"] == sum(hops) / len(hops)


def test_at_most_ten_violations_are_listed():
    """Kills the ``[:10]`` cap turned into 9 or 11: 12 routes that do not start at the source."""
    inst = dmlopt.generate("infer", SPEC, seed=3)
    sol = dmlopt.heuristic(inst, "ft").solution
    wrong = "not-the-source"
    bad = Solution(source=sol.source, endpoints=sol.endpoints, edges=sol.edges,
                   routes=[[wrong, *r[1:]] for r in sol.routes])
    ev = evaluate(inst, bad)
    assert not ev.feasible and len(ev.violations) == 10
    assert ev.violations[0].startswith("routes[0]: ") and "must run from the source" in \
        ev.violations[0]
