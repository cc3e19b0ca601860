"""The ``infer`` and ``infer_tap`` problems (paper 000, Figs. 5-11 through the harness): the
evaluator on hand-made graph pairs, every heuristic passing it, instance validation errors,
``solve`` without formulations, Fig. 11's truth optimum against brute force, and a tiny suite run
end to end by ``dmlopt bench``."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import dmlopt
from dmlopt.cli import main
from dmlopt.errors import InstanceError, UnknownNameError
from dmlopt.models import infer as model
from dmlopt.models import infer_tap

STAR = {"topology": "graph", "edges": [["x", "a"], ["x", "b"], ["x", "c"]],
        "servers": ["a", "b", "c"], "routing": "dijkstra"}


def star_instance() -> model.Instance:
    return dmlopt.load({"problem": "infer", **STAR})


def sol(**kw) -> model.Solution:
    return model.Solution(**kw)


# --------------------------------------------------------------------------- evaluator

def test_evaluator_exact_copy_of_the_measured_star_scores_zero():
    inst = star_instance()
    assert inst.n == 2  # every server but the source
    good = sol(source="s", endpoints=["p", "q"], routes=[["s", "m", "p"], ["s", "m", "q"]],
               edges=[["s", "m"], ["m", "p"], ["m", "q"]])
    ev = model.evaluate(inst, good)
    assert ev.feasible and ev.objective == 0
    m = ev.metrics
    assert m["nged"] == 0 and m["ged_exact"] == 1 and m["gde"] == 0 and m["pde"] == 0
    assert m["h2"] == 1 and m["h2_precision"] == 1 and m["hops_error_underlay"] == 0


def test_evaluator_on_a_hand_made_line_against_the_star():
    """Inferred line s - p - q against the star: hop ratios 1/2, 1, 1/2 (error 1/3); mean
    degrees 4/3 vs 3/2; path degrees 3/2 vs 5/3 and 4/3 vs 5/3; GED(P3, K1,3) = 2 (one node, one
    edge) over |V| + |E| = 7; every pair within 2 hops in both."""
    inst = star_instance()
    line = sol(source="s", endpoints=["p", "q"], routes=[["s", "p"], ["s", "p", "q"]],
               edges=[["s", "p"], ["p", "q"]])
    ev = model.evaluate(inst, line)
    assert ev.feasible
    assert ev.objective == pytest.approx(1 / 3)
    m = ev.metrics
    assert m["hops_ratio"] == pytest.approx(2 / 3)
    assert m["gde"] == pytest.approx(1 / 6)
    assert m["pde"] == pytest.approx((1 / 6 + 1 / 3) / 2)
    assert m["ged"] == 2 and m["ged_exact"] == 1 and m["nged"] == pytest.approx(2 / 7)
    assert m["h2"] == 1
    assert m["paths"] == 2 and m["path_hops"] == 2


@pytest.mark.parametrize("bad, text", [
    (dict(source="s", endpoints=["p"], routes=[["s", "p"]], edges=[["s", "p"]]),
     "routes: 1 routes, the measurement has 2 paths"),
    (dict(source="s", endpoints=["p", "q"], routes=[["s", "p"], ["s", "q"]],
          edges=[["s", "p"]]), "routes[1][0]: 's' -> 'q' is not an edge"),
    (dict(source="s", endpoints=["p", "q"], routes=[["s", "p"], ["s", "p"]],
          edges=[["s", "p"], ["p", "q"]]), "routes[1]: ['s', 'p'] must run from the source"),
    (dict(source="s", endpoints=["p", "q"], routes=[["s", "p"], ["s", "p", "q"]],
          edges=[["s", "p"], ["p", "q"]], weights=[1.0]), "weights: 1 weights for 2 edges"),
])
def test_evaluator_rejects_routes_that_are_not_walks(bad, text):
    ev = model.evaluate(star_instance(), sol(**bad))
    assert not ev.feasible and math.isinf(ev.objective)
    assert text in ev.violations[0]


# --------------------------------------------------------------------------- heuristics

@pytest.mark.parametrize("spec", [
    {"topology": "fat-tree", "routing": "random-walk", "paths": 5},
    {"topology": "dcell", "routing": "random-simple", "paths": 6},
    {"topology": "dcell", "routing": "random-shortest", "paths": 4, "kcast": True,
     "noise": 1e-4, "kcast_method": "nnls"},
])
def test_every_heuristic_passes_the_evaluator(spec):
    inst = dmlopt.generate("infer", {"generator": "dc", **spec}, seed=3)
    for name in ("ft", "ft-transfer", "rnj", "ce"):
        res = dmlopt.heuristic(inst, name, seed=1)
        assert res.status == "feasible", (name, res.message)
        # objective = mean |r - 1| over the pairs' hop ratios r, hops_ratio = mean r: by the
        # triangle inequality mean |r - 1| >= |mean r - 1| (two metrics computed apart)
        assert res.objective >= abs(res.metrics["hops_ratio"] - 1) - 1e-12
        assert res.metrics["nged"] >= 0 and 0 <= res.metrics["h2"] <= 1


def test_ft_reconstructs_the_fat_tree_under_dijkstra_with_all_paths():
    inst = dmlopt.generate("infer", {"topology": "fat-tree", "routing": "dijkstra"}, seed=5)
    assert inst.n == 15
    res = dmlopt.heuristic(inst, "ft")
    m = res.metrics
    assert res.objective == 0 and m["nged"] == 0 and m["ged_exact"] == 1 and m["h2"] == 1


def test_ft_transfer_weights_add_up_to_each_path_length():
    inst = dmlopt.generate("infer", {"topology": "dcell", "routing": "random-walk",
                                     "paths": 5}, seed=2)
    s = dmlopt.heuristic(inst, "ft-transfer").solution
    w = {tuple(e): x for e, x in zip(s.edges, s.weights, strict=True)}
    for i, r in enumerate(s.routes):
        phi_i = sum(v for a, v in inst.categories.items() if i in a)
        assert sum(w[(a, b)] for a, b in zip(r, r[1:], strict=False)) == pytest.approx(phi_i)


# --------------------------------------------------------------------------- validation

@pytest.mark.parametrize("data, text", [
    ({"routing": "ecmp"}, "routing: 'ecmp' is not one of random-walk"),
    ({"paths": 40}, "paths: 40 must lie in 1..15"),
    ({"paths": 0}, "paths: 0 must lie in 1..15"),
    ({"noise": 0.1}, "noise: 0.1 needs kcast = true"),
    ({"kcast": True, "kcast_method": "lstsq"}, "paths: 15 is too many for kcast"),
    ({"kcast_method": "svd"}, "kcast_method: 'svd' is not one of mobius"),
    ({"topology": "torus"}, "topology: 'torus' is not one of fat-tree"),
    ({"topology": "graph"}, "edges: None must list the edges"),
    ({"k": 3}, "topology: 'fat-tree' parameters rejected"),
    ({"alpha": [0.5, 1.0]}, "alpha: [0.5, 1.0] must satisfy 0 < low <= high < 1"),
    ({"topology": "graph", "edges": [["a", "b"], ["c", "d"]]}, "edges: '2 components'"),
])
def test_bad_infer_instances_name_field_value_and_rule(data, text):
    with pytest.raises(InstanceError, match=None) as exc:
        dmlopt.load({"problem": "infer", **data})
    assert text in str(exc.value)


@pytest.mark.parametrize("data, text", [
    ({"vms": 4}, "K: 1 is too small: 8 modules > vms*K = 4"),
    ({"inference": "mle"}, "inference: 'mle' is not one of ft, rnj, ce"),
    ({"overlay": "mesh"}, "overlay: 'mesh' rejected"),
    ({"vms": 17, "modules": 2}, "paths: 16 must lie in 1..15"),
])
def test_bad_infer_tap_instances_name_field_value_and_rule(data, text):
    with pytest.raises(InstanceError) as exc:
        dmlopt.load({"problem": "infer_tap", **data})
    assert text in str(exc.value)


def test_solve_without_formulations_says_so(tmp_path, capsys):
    inst = star_instance()
    with pytest.raises(UnknownNameError, match="infer has no exact formulation .*ft"):
        dmlopt.solve(inst)
    path = tmp_path / "i.json"
    path.write_text(json.dumps({"problem": "infer", **STAR}))
    assert main(["solve", str(path)]) == 2
    assert "no exact formulation" in capsys.readouterr().err


def test_instance_json_round_trip_redraws_the_same_measurement():
    inst = dmlopt.generate("infer", {"topology": "dcell", "routing": "random-walk", "paths": 4},
                           seed=7)
    again = dmlopt.load(json.loads(inst.model_dump_json()))
    assert again == inst and again.measurement.paths == inst.measurement.paths


# --------------------------------------------------------------------------- infer_tap

def test_infer_tap_truth_optimum_matches_brute_force_and_bounds_the_heuristics():
    inst = dmlopt.generate("infer_tap", {"topology": "dcell", "routing": "random-walk",
                                         "vms": 5, "modules": 4, "overlay": "allreduce"}, seed=1)
    d, w = inst.truth.distance, inst.truth.traffic
    brute = min(float((w * d[np.ix_(p, p)]).sum())
                for p in map(list, itertools.permutations(range(5), 4)))
    opt = dmlopt.solve(inst, "highs", threads=1)
    assert opt.status == "optimal" and opt.objective == pytest.approx(brute)
    for name in ("exact", "cle", "abm", "random", "local-search", "abm-ls"):
        for on in ("inferred", "truth"):
            res = dmlopt.heuristic(inst, name, on=on)
            assert res.status == "feasible" and res.objective >= brute - 1e-9
            a = list(res.solution.assignment)  # module -> VM, K = 1: the brute force's cost
            assert res.objective == pytest.approx(float((w * d[np.ix_(a, a)]).sum()))
    assert dmlopt.heuristic(inst, "exact", on="truth").objective == pytest.approx(brute)


def test_infer_tap_exact_on_ft_equals_the_truth_when_ft_is_exact():
    """Dijkstra with every server measured: FT's VM hop matrix is the true one (Fig. 9's
    claim), so allocating on it loses nothing."""
    inst = dmlopt.generate("infer_tap", {"topology": "fat-tree", "routing": "dijkstra",
                                         "vms": 16}, seed=0)
    assert np.array_equal(inst.inferred.distance, inst.truth.distance)
    res = dmlopt.heuristic(inst, "exact")
    assert res.metrics["hop_corr"] == pytest.approx(1)
    assert res.objective == dmlopt.solve(inst, threads=1).objective
    bad = infer_tap.evaluate(inst, infer_tap.Solution(assignment=[0] * 8))
    assert not bad.feasible


# --------------------------------------------------------------------------- harness

def test_tiny_suite_runs_end_to_end(tmp_path, capsys):
    from dmlopt.benchmarks import store

    suite = tmp_path / "tiny.toml"
    suite.write_text("""
name = "tiny-infer"
[[groups]]
problem = "infer"
instances = [
  { generator = "dc", params = { topology = "fat-tree", routing = "dijkstra" }, seeds = [0] },
]
methods = [{ heuristic = "ft" }, { heuristic = "rnj" }, { heuristic = "ce" }]
[[groups]]
problem = "infer_tap"
instances = [{ generator = "dc", params = { topology = "fat-tree", vms = 8 }, seeds = [0] }]
methods = [{ solver = "highs", formulation = "truth", time_limit = 30 }, { heuristic = "cle" }]
""")
    db = tmp_path / "s.sqlite"
    assert main(["bench", str(suite), "-o", str(db), "--workers", "1"]) == 0
    rows = {(r["problem"], r["method"]): r for r in store.read(db)}
    assert len(rows) == 5 and all(r["status"] in ("feasible", "optimal") for r in rows.values())
    ft = rows[("infer", "ft")]
    assert ft["objective"] == 0 and ft["metrics"]["nged"] == 0
    assert rows[("infer_tap", "cle")]["objective"] >= rows[("infer_tap", "highs:truth")][
        "objective"]
    rep = _report_module()
    out = rep.tables(store.read(db))
    assert "FT" in out and "| fat-tree | dijkstra | 15 |" in out
    assert "highs:truth" in rep.fig11_table(store.read(db))


def _report_module():
    from dmlopt.benchmarks.tables import infer

    return infer
