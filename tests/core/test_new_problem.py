"""Adding a problem changes no shared file but pyproject.toml: a toy problem
(tests/helpers/typed_toy.py) registered by an entry point alone gets the contract tests, is
listed by ``dmlopt list`` and is solved, bounded and served its heuristics, through the library
and the command line. Nothing else in the repository names its module."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

import dmlopt
from dmlopt import registry
from dmlopt.cli import main
from dmlopt.io import to_json
from tests.core import test_contract as contract
from tests.core import test_contract_entries as entries
from tests.core import test_recommended as recommended
from tests.helpers.toy_problem import brute_force

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests.helpers.typed_toy"
NAME = "toy"


def _caches_clear() -> None:
    registry.get.cache_clear()
    for fn in (contract.example, contract.heuristic, contract.optimum):
        fn.cache_clear()


@pytest.fixture
def new_problem(monkeypatch):
    """The installed entry points plus one ``dmlopt.problems`` entry for the toy, read by the
    registry's own discovery: the only place the toy is named."""
    groups = (registry.PROBLEMS_GROUP, registry.COMMANDS_GROUP, registry.GYM_GROUP)
    installed = [ep for g in groups for ep in metadata.entry_points(group=g)]
    assert NAME not in metadata.entry_points(group=registry.PROBLEMS_GROUP).names
    extra = metadata.EntryPoint(name=NAME, value=MODULE, group=registry.PROBLEMS_GROUP)
    monkeypatch.setattr(metadata, "entry_points",
                        lambda: metadata.EntryPoints([*installed, extra]))
    problems, _, _ = registry._discover()
    monkeypatch.setattr(registry, "_PROBLEMS", problems)
    _caches_clear()
    yield registry.get(NAME)
    _caches_clear()


def test_nothing_but_the_entry_point_names_the_new_problem():
    # the check below can fail: the module exists and its own file names it
    assert (ROOT / "tests" / "helpers" / "typed_toy.py").is_file()
    mine = {ROOT / "tests" / "helpers" / "typed_toy.py", Path(__file__).resolve()}
    files = [p for d in ("dmlopt", "models", "heuristics", "benchmarks", "tests")
             for p in (ROOT / d).rglob("*.py") if p.resolve() not in mine]
    files += [ROOT / "pyproject.toml", ROOT / "tests" / "conftest.py"]
    assert len(files) > 100
    naming = [str(p.relative_to(ROOT)) for p in files
              if "typed_toy" in p.read_text(encoding="utf-8", errors="replace")]
    assert naming == []
    assert NAME not in registry.names()


def test_the_contract_tests_run_on_the_new_problem(new_problem, tmp_path, capsys):
    assert NAME in registry.names() and new_problem.formulations == ["paper"]
    entries.check_entries_are_typed_and_described(NAME)
    entries.check_registry_serves_the_declared_entries(NAME)
    entries.check_defaults_are_cheap(NAME)
    recommended.check_recommended_is_declared(NAME)
    contract.test_example_is_valid_and_survives_json(NAME)
    contract.test_every_formulation_reaches_the_same_optimum(NAME)
    for name in new_problem.heuristics:
        contract.test_heuristic_is_feasible_and_evaluated(NAME, name)
    contract.test_export_is_read_back_by_highs_at_the_optimum(NAME, "paper", "lp", tmp_path)
    contract.test_warm_start_reaches_the_solver(NAME, "paper", "highs", capsys)
    contract.test_example_start_is_strictly_worse_than_the_optimum(NAME)
    # the optimum the contract checks compared against is the brute-force one
    assert contract.optimum(NAME, "paper") == pytest.approx(brute_force(contract.example(NAME)))


def test_the_library_serves_the_new_problem(new_problem):
    inst = dmlopt.generate(NAME, {"n": 7}, seed=3)
    best = brute_force(inst)
    res = dmlopt.solve(inst, threads=1)
    assert res.status == "optimal" and res.objective == pytest.approx(best)
    greedy = dmlopt.heuristic(inst, "greedy")
    assert greedy.feasible and greedy.objective >= best - 1e-9
    assert greedy.objective == dmlopt.evaluate(inst, greedy.solution).objective
    assert dmlopt.bound(inst).bound <= best + 1e-9


def test_the_command_line_serves_the_new_problem(new_problem, tmp_path, capsys):
    assert main(["list"]) == 0
    assert NAME in capsys.readouterr().out
    assert main(["list", NAME]) == 0
    listed = capsys.readouterr().out
    assert "greedy" in listed and "paper" in listed and "random" in listed
    inst = dmlopt.generate(NAME, {"n": 6}, seed=1)
    path = tmp_path / "toy.json"
    path.write_text(to_json(inst))
    assert main(["solve", str(path), "--threads", "1", "--json"]) == 0
    solved = json.loads(capsys.readouterr().out)
    assert solved["status"] == "optimal"
    assert solved["objective"] == pytest.approx(brute_force(inst))
    assert main(["heuristic", str(path), "greedy", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["feasible"] and found["objective"] >= solved["objective"] - 1e-9
