"""Core: registry, I/O and validation, solve (status mapping, objective checks, warm start,
size guard), heuristic, export, generate, Result. Uses the toy problem of
tests/helpers/toy_problem.py (brute force gives the independent optimum) and TABGP where a real
model is needed."""

from __future__ import annotations

import dataclasses
import json
import math

import highspy
import pytest

import dmlopt
from dmlopt import io, registry, solvers
from dmlopt.errors import (
    InstanceError,
    ModelTooLargeError,
    ObjectiveMismatchError,
    SolverError,
    UnknownNameError,
)


def test_registry_lists_tabgp_and_rejects_unknown():
    assert "tabgp" in dmlopt.problems()
    with pytest.raises(UnknownNameError, match="'nope' is not a known problem.*tabgp"):
        registry.get("nope")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_solve_equals_brute_force(toy, seed, solver):
    inst = dmlopt.generate("toy", {"n": 8}, seed=seed)
    res = dmlopt.solve(inst, solver)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(toy.model.brute_force(inst))
    assert res.feasible and res.gap == pytest.approx(0, abs=1e-6)
    assert res.bound == pytest.approx(res.objective, rel=1e-4)
    assert res.method == f"{solver}:paper"


def test_underpricing_model_is_an_error(toy):
    inst = dmlopt.generate("toy", {"n": 6}, seed=1)
    with pytest.raises(ObjectiveMismatchError, match="under-prices"):
        dmlopt.solve(inst, formulation="underprice")


def test_overpricing_model_is_an_error(toy):
    inst = dmlopt.generate("toy", {"n": 6}, seed=1)
    with pytest.raises(ObjectiveMismatchError):
        dmlopt.solve(inst, formulation="overprice")


def test_infeasible_instance_status(toy):
    inst = toy.model.Instance(cost=[1, 2], weight=[1, 1], need=5)
    res = dmlopt.solve(inst)
    assert res.status == "infeasible"
    assert res.solution is None and res.objective is None


def test_node_budget_stops_the_solver_at_the_warm_start_or_better():
    # a node budget stops HiGHS and SCIP deterministically (a time limit depends on the
    # machine); with no node, no presolve and no heuristic, HiGHS's only incumbent is the start
    inst = dmlopt.generate("tabgp", {"n": 12, "p": 0.6, "tau": 3}, seed=0)
    start = dmlopt.heuristic(inst, "random", seed=3)
    budgets = {"highs": {"mip_max_nodes": 0, "presolve": "off", "mip_heuristic_effort": 0},
               "scip": {"limits/nodes": 1}}
    for solver, options in budgets.items():
        res = dmlopt.solve(inst, solver, warm_start=start.solution, threads=1,
                           solver_options=options, formulation="paper")
        assert res.status == "feasible" and res.feasible, solver
        assert "the warm start" not in res.message  # the solver's incumbent, not the fallback
        assert res.objective <= start.objective + 1e-9
        assert res.bound is None or res.bound <= res.objective
        assert res.gap is None or 0 < res.gap <= 1
    res = dmlopt.solve(inst, "highs", warm_start=start.solution, threads=1,
                       solver_options=budgets["highs"], formulation="paper")
    assert res.objective == start.objective


def test_a_solver_stopped_without_incumbent_returns_the_evaluated_start(monkeypatch):
    # the API's fallback: a run that stopped (time limit) before it had a solution gives back
    # the start, evaluated, with the solver's bound; the solver is replaced by one that stops
    inst = dmlopt.generate("tabgp", {"n": 8, "p": 0.5, "tau": 2}, seed=0)
    start = dmlopt.heuristic(inst, "random", seed=3)
    stopped = solvers.SolverRun("time_limit", False, None, 4.0, message="maxTimeLimit")
    monkeypatch.setattr(solvers, "run", lambda *a, **k: stopped)
    res = dmlopt.solve(inst, formulation="pairs", warm_start=start.solution)  # the MIP alone
    assert res.status == "time_limit" and res.feasible
    assert res.objective == start.objective and res.solution == start.solution
    assert res.message == "maxTimeLimit; no incumbent from the solver: the warm start"
    assert res.gap == pytest.approx((start.objective - 4.0) / start.objective)
    # without a start there is nothing to return
    res = dmlopt.solve(inst, formulation="pairs")
    assert res.status == "time_limit" and res.solution is None and res.objective is None


def test_a_solver_outside_highs_and_scip_goes_through_pyomos_factory(monkeypatch):
    # "appsi_highs" is not one of dmlopt's names: opted in (DMLOPT_SOLVERS), the legacy
    # SolverFactory path solves it; without the opt-in it is refused
    inst = dmlopt.generate("tabgp", {"n": 6, "p": 0.5, "tau": 2, "l": 2}, seed=0)
    ref = dmlopt.solve(inst, "highs", threads=1)
    with pytest.raises(SolverError, match="DMLOPT_SOLVERS"):
        dmlopt.solve(inst, "appsi_highs")
    monkeypatch.setenv("DMLOPT_SOLVERS", "appsi_highs")
    res = dmlopt.solve(inst, "appsi_highs", threads=1, time_limit=600)
    assert res.method == "appsi_highs:pairs" and res.status == "optimal"
    assert res.objective == ref.objective and res.bound == pytest.approx(ref.objective)


def test_warm_start_by_heuristic_name(toy):
    inst = dmlopt.generate("toy", {"n": 8}, seed=2)
    res = dmlopt.solve(inst, warm_start="greedy")
    assert res.objective == pytest.approx(toy.model.brute_force(inst))


def test_unknown_solver_formulation_and_size_guard(toy):
    inst = dmlopt.generate("toy", {"n": 8}, seed=0)
    with pytest.raises(SolverError, match="'nosuchsolver' is not an allowed solver.*highs"):
        dmlopt.solve(inst, "nosuchsolver")
    with pytest.raises(UnknownNameError, match="formulation: 'x'.*paper"):
        dmlopt.solve(inst, formulation="x")
    with pytest.raises(ModelTooLargeError, match="about 8 variables and 1 constraints"):
        dmlopt.solve(inst, size_limit=(7, 10))
    assert dmlopt.solve(inst, size_limit=(8, 1)).status == "optimal"


def test_size_limit_from_environment(toy, monkeypatch):
    inst = dmlopt.generate("toy", {"n": 8}, seed=0)
    monkeypatch.setenv("DMLOPT_SIZE_LIMIT", "3,3")
    with pytest.raises(ModelTooLargeError, match="DMLOPT_SIZE_LIMIT"):
        dmlopt.build(inst)
    monkeypatch.setenv("DMLOPT_SIZE_LIMIT", "three")
    with pytest.raises(InstanceError, match="DMLOPT_SIZE_LIMIT"):
        dmlopt.build(inst)


def test_heuristic_result_is_evaluated(toy):
    inst = dmlopt.generate("toy", {"n": 8}, seed=0)
    res = dmlopt.heuristic(inst, "all")
    assert res.status == "feasible"
    assert res.objective == pytest.approx(sum(inst.cost))
    assert res.metrics["weight"] == pytest.approx(sum(inst.weight))
    bad = dmlopt.heuristic(inst, "nothing")
    assert bad.status == "error" and "infeasible heuristic solution" in bad.message
    assert dmlopt.heuristic(inst, "greedy", reverse=True).options == {"seed": 0, "reverse": True}


def test_heuristic_unknown_name_and_option(toy):
    inst = dmlopt.generate("toy", {"n": 8}, seed=0)
    with pytest.raises(UnknownNameError, match="'fast' is not a toy heuristic.*greedy"):
        dmlopt.heuristic(inst, "fast")
    with pytest.raises(UnknownNameError, match="depth: 3 is not an option of greedy .options: rev"):
        dmlopt.heuristic(inst, "greedy", depth=3)


def test_generate_is_deterministic_and_checks_names(toy):
    a = dmlopt.generate("toy", {"generator": "random", "n": 5}, seed=7)
    b = dmlopt.generate("toy", {"n": 5}, seed=7)
    assert a == b and dmlopt.instance_hash(a) == dmlopt.instance_hash(b)
    assert dmlopt.instance_hash(a) != dmlopt.instance_hash(dmlopt.generate("toy", {"n": 5}, 8))
    with pytest.raises(UnknownNameError, match="generator: 'grid'.*random"):
        dmlopt.generate("toy", {"generator": "grid"})
    with pytest.raises(UnknownNameError, match="m: 3 is not a parameter of random .params: n"):
        dmlopt.generate("toy", {"m": 3})


def test_save_load_round_trip(toy, tmp_path):
    inst = dmlopt.generate("toy", {"n": 5}, seed=1)
    path = tmp_path / "sub" / "toy.json"
    dmlopt.save(inst, path)
    assert dmlopt.load(path) == inst
    assert dmlopt.load(json.loads(path.read_text())) == inst
    assert [p.name for p in path.parent.iterdir()] == ["toy.json"]  # no temp file left


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"problem": "toy", "cost": [1], ', "is not valid JSON"),
        ("[1, 2]", "instance: a JSON array where a JSON object is required"),
        ('{"cost": [1]}', "problem: None is missing"),
        ('{"problem": "zzz"}', "problem: 'zzz' is not a known problem"),
        ('{"problem": "toy", "cost": [1], "weight": [1]}', "need: missing"),
        ('{"problem": "toy", "cost": [1], "weight": [1, 2], "need": 1}', "weight: 2 must have 1"),
        ('{"problem": "toy", "cost": ["a"], "weight": [1], "need": 1}', "cost\\[0\\]: 'a'"),
        ('{"problem": "toy", "cost": [1], "weight": [1], "need": 1, "x": 0}', "x: unknown field"),
    ],
)
def test_load_errors_name_field_value_rule(toy, tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InstanceError, match=match):
        dmlopt.load(path)


def test_load_missing_and_oversized_file(tmp_path, monkeypatch):
    with pytest.raises(InstanceError, match="does not exist"):
        dmlopt.load(tmp_path / "none.json")
    path = tmp_path / "big.json"
    path.write_text("{}" + " " * 100)
    monkeypatch.setattr(io, "MAX_FILE_BYTES", 50)
    with pytest.raises(InstanceError, match="above the limit 50"):
        dmlopt.load(path)


@pytest.mark.parametrize("ext", [".lp", ".mps"])
def test_export_round_trip_with_highs(toy, tmp_path, ext):
    inst = dmlopt.generate("toy", {"n": 8}, seed=3)
    path = dmlopt.export(inst, tmp_path / f"model{ext}")
    text = path.read_text()
    assert "x[" in text or "x(" in text  # symbolic names
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(toy.model.brute_force(inst))
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"model{ext}"]


def test_export_refuses_bad_path_and_leaves_nothing(toy, tmp_path):
    inst = dmlopt.generate("toy", {"n": 8}, seed=3)
    with pytest.raises(InstanceError, match="must end in .lp or .mps"):
        dmlopt.export(inst, tmp_path / "model.txt")
    with pytest.raises(ModelTooLargeError):
        dmlopt.export(inst, tmp_path / "model.lp", size_limit=(1, 1))
    assert list(tmp_path.iterdir()) == []


def test_evaluate_accepts_dict_and_rejects_bad_solution(toy):
    inst = dmlopt.generate("toy", {"n": 4}, seed=0)
    assert dmlopt.evaluate(inst, {"chosen": [0, 1, 2, 3]}).feasible
    with pytest.raises(InstanceError, match="solution.chosen"):
        dmlopt.evaluate(inst, {"chosen": "x"})


def test_result_row_and_json(toy):
    inst = dmlopt.generate("toy", {"n": 6}, seed=0)
    res = dmlopt.solve(inst)
    row = res.as_dict()
    assert row["problem"] == "toy" and row["status"] == "optimal" and "m_weight" in row
    data = json.loads(res.to_json())
    assert data["solution"]["chosen"] == res.solution.chosen
    bad = dmlopt.heuristic(inst, "nothing")
    bad.objective = math.inf
    assert json.loads(bad.to_json())["objective"] is None


def test_default_formulation_is_the_papers_when_the_solver_can(toy, monkeypatch):
    inst = dmlopt.generate("toy", {"n": 6}, seed=0)
    assert dmlopt.solve(inst).method == "highs:paper"
    # a paper model only SCIP can solve: HiGHS falls back to the first formulation it can
    scip_only = dataclasses.replace(registry.as_formulation(toy.model.FORMULATIONS["paper"]),
                                    solvers=("scip",))
    monkeypatch.setitem(toy.model.FORMULATIONS, "paper", scip_only)
    assert dmlopt.solve(inst, "scip").method == "scip:paper"
    with pytest.raises(ObjectiveMismatchError):  # "underprice" is the first HiGHS can solve
        dmlopt.solve(inst, "highs")
    with pytest.raises(SolverError, match="cannot solve the toy 'paper' formulation"):
        dmlopt.solve(inst, "highs", formulation="paper")
    # a problem without a "paper" formulation defaults to its first
    forms = dict(toy.model.FORMULATIONS)
    del forms["paper"]
    monkeypatch.setattr(toy.model, "FORMULATIONS", forms)
    assert dmlopt.api.default_formulation(toy) == "underprice"


def test_problems_come_from_entry_points_not_from_the_core():
    """The core names no problem: the registry is what pyproject's entry points declare, and no
    module under dmlopt/ imports a problem module."""
    import ast
    import re
    import tomllib
    from pathlib import Path

    from dmlopt import registry

    root = Path(__file__).resolve().parents[2]
    eps = tomllib.loads((root / "pyproject.toml").read_text())["project"]["entry-points"]
    assert set(registry.names()) == set(eps["dmlopt.problems"])
    assert set(registry.commands()) == set(eps["dmlopt.commands"])
    assert {k: v for k, v in registry.commands().items() if k in ("train", "infer")} == {
        "train": "nara", "infer": "infer"}
    for path in (root / "dmlopt").rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import) dmlopt\.(models|heuristics)\b", text, re.M), \
            f"{path.relative_to(root)} imports a problem module"
        tree = ast.parse(text)
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                      and isinstance(n.body[0], ast.Expr)}
        literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                    and isinstance(n.value, str) and id(n) not in docstrings}
        assert not literals & set(registry.names()), \
            f"{path.relative_to(root)} names a problem: {literals & set(registry.names())}"


def test_the_default_formulation_is_the_declared_fastest_and_proves_the_papers_optimum():
    """TABGP and INC/OXC declare DEFAULT_FORMULATION; solve without a formulation uses it and
    reaches the paper model's optimum."""
    for name, spec in (("tabgp", {"n": 6, "p": 0.5, "tau": 2, "l": 2}),
                       ("inc_oxc", {"generator": "small", "racks": 2, "jobs": 2}),
                       ("rar", {"generator": "random", "requests": 3, "cus": 2})):
        prob = dmlopt.problem(name)
        inst = dmlopt.generate(name, spec, seed=1)
        fast = dmlopt.solve(inst, threads=1)
        assert fast.method == f"highs:{prob.model.DEFAULT_FORMULATION}" != "highs:paper"
        paper = dmlopt.solve(inst, formulation="paper", threads=1)
        assert fast.status == paper.status == "optimal"
        assert fast.objective == pytest.approx(paper.objective, rel=1e-6)
