"""One recommended path per problem (issue 52): every registered problem declares a recommended
heuristic (``RECOMMENDED`` in its heuristics module) and a recommended bound
(``RECOMMENDED_BOUND`` in its model module), each naming registered entries; ``dmlopt list``
marks them; ``dmlopt heuristic INSTANCE`` / ``dmlopt.heuristic(instance)`` and ``dmlopt bound
INSTANCE`` / ``dmlopt.bound(instance)`` without a name run them; and the recommended heuristic's
estimate at every instance of the papers' suites (benchmarks/suites/paper-*.toml) and every
shipped instance is under the default limits (estimates only: nothing big is run)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import dmlopt
from dmlopt import io, registry
from dmlopt.cli import main
from dmlopt.contract import (
    DEFAULT_LIMITS,
    ByInstance,
    Size,
    check_run_size,
    recommended_names,
    recommended_text,
)
from dmlopt.errors import ModelTooLargeError
from tests.core.test_contract import example
from tests.core.test_contract_entries import modules

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = registry.names()


def check_recommended_is_declared(name: str) -> None:
    """Both declarations present, of the contract's types, naming registered entries."""
    model, heur = modules(name)
    prob = registry.get(name)
    for module, attr, entries in ((heur, "RECOMMENDED", prob.heuristics),
                                  (model, "RECOMMENDED_BOUND", prob.bound_entries)):
        choice = getattr(module, attr, None)
        assert isinstance(choice, str | ByInstance), f"{name}: {attr} is not declared"
        names = recommended_names(choice)
        assert names, f"{name}: {attr} names nothing"
        for n in names:
            assert n in entries, f"{name}: {attr} names {n!r}, not registered ({list(entries)})"
        if isinstance(choice, ByInstance):
            assert choice(example(name)) in names and choice.text
            assert all(n in choice.text for n in names)


@pytest.mark.parametrize("name", PROBLEMS)
def test_every_problem_declares_a_recommended_heuristic_and_bound(name):
    check_recommended_is_declared(name)


@pytest.mark.parametrize("name", PROBLEMS)
def test_list_marks_the_recommended_entries(name, capsys):
    model, heur = modules(name)
    assert main(["list", name]) == 0
    text = capsys.readouterr().out
    for attr, module, header in (("RECOMMENDED", heur, "heuristics ("),
                                 ("RECOMMENDED_BOUND", model, "bounds, strongest first")):
        section = text.split(header, 1)[1].split("\n\n", 1)[0]
        marked = {line.split()[0] for line in section.splitlines()
                  if line.startswith("  ") and not line.startswith("    ")
                  and "[recommended]" in line}
        assert marked == set(recommended_names(getattr(module, attr))), (name, attr, marked)
    assert main(["list", "--json"]) == 0
    entry = {e["name"]: e for e in json.loads(capsys.readouterr().out)}[name]
    assert set(entry["recommended"]) == {"heuristic", "bound"}
    for n in recommended_names(heur.RECOMMENDED):
        assert n in entry["recommended"]["heuristic"]
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    block = listing.split(f"\n{name}: ", 1)[1] if not listing.startswith(f"{name}: ") \
        else listing
    line = next(x for x in block.splitlines() if x.startswith("  recommended:"))
    assert f"bound {recommended_text(model.RECOMMENDED_BOUND)}" in line


@pytest.mark.parametrize("name", PROBLEMS)
def test_heuristic_without_a_name_runs_the_recommended_one(name, tmp_path, capsys):
    inst = example(name)
    _, heur = modules(name)
    choice = heur.RECOMMENDED
    expected = choice(inst) if isinstance(choice, ByInstance) else choice
    fields = registry.get(name).heuristic(expected).Options.model_fields
    quick = {"time_limit": 1.0} if "time_limit" in fields else {}  # a search: 1 s is plenty
    res = dmlopt.heuristic(inst, seed=0, **quick)
    assert res.method == expected and res.status == "feasible"
    assert res.options == {"seed": 0, **quick}
    path = tmp_path / "inst.json"
    io.save(inst, path)
    argv = [f"--option=time_limit={quick['time_limit']}"] if quick else []
    assert main(["heuristic", str(path), "--json", *argv]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == expected and out["objective"] is not None


def test_rar_recommendation_follows_the_scheme():
    """rdda-ls takes MinCU instances only: the others get rdda-pack."""
    for scheme, expected in (("MinCU", "rdda-ls"), ("MinW", "rdda-pack"),
                             ("MinT", "rdda-pack"), ("MaxR", "rdda-pack")):
        inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 4, "scheme": scheme},
                               seed=1)
        assert inst.scheme == scheme
        assert dmlopt.heuristic(inst).method == expected
    with pytest.raises(dmlopt.errors.InstanceError):  # why: rdda-ls refuses the others
        dmlopt.heuristic(inst, "rdda-ls")


@pytest.mark.parametrize("name", PROBLEMS)
def test_bound_without_a_method_runs_the_recommended_one(name):
    """Unless an exact algorithm listed before it fits (it gives the optimum on a small
    instance), the default bound is the recommended one."""
    model, _ = modules(name)
    prob = registry.get(name)
    names = list(prob.bound_entries)
    rec = model.RECOMMENDED_BOUND
    if isinstance(rec, ByInstance):
        rec = rec(example(name))
    exact = [n for n in names[:names.index(rec)] if prob.bound(n).exact]
    res = dmlopt.bound(example(name), time_limit=2)
    assert res.method in {f"bound:{n}" for n in [*exact, rec]}
    if not exact:
        assert res.method == f"bound:{rec}"


def test_bound_default_keeps_enum_where_it_fits_and_is_the_recommended_one_beyond():
    """TABGP lists enum first (strongest, exact) and recommends spectral: on a tiny instance
    the default is enum's optimum; where enum's estimate is above the limits it is spectral."""
    assert next(iter(registry.get("tabgp").bound_entries)) == "enum"
    tiny = dmlopt.load("tabgp/er12-p03-tau1-s0")
    res = dmlopt.bound(tiny, time_limit=30)
    assert res.method == "bound:enum" and res.objective == dmlopt.solve(tiny).objective
    assert res.gap <= 1e-4  # enum proves its solution optimal
    bigger = dmlopt.generate("tabgp", {"generator": "er", "n": 40, "p": 0.2, "tau": 3}, seed=0)
    with pytest.raises(ModelTooLargeError):
        dmlopt.bound(bigger, "enum", time_limit=1)
    assert dmlopt.bound(bigger, time_limit=1).method == "bound:spectral"


def _paper_instances() -> list[tuple[str, str, str, int]]:
    """Every distinct (problem, generator, params) of the papers' suites, with its first seed."""
    specs: dict[tuple[str, str, str], int] = {}
    for path in sorted((ROOT / "benchmarks" / "suites").glob("paper-*.toml")):
        suite = tomllib.loads(path.read_text())
        for group in suite["groups"]:
            for spec in group["instances"]:
                if "generator" not in spec:
                    continue  # a file spec: the shipped data, checked below
                key = (group["problem"], spec["generator"],
                       json.dumps(spec.get("params", {}), sort_keys=True))
                specs.setdefault(key, spec["seeds"][0])
    return [(*key, seed) for key, seed in specs.items()]


PAPER_INSTANCES = _paper_instances()


def _check_estimate(inst, what: str) -> float:
    prob = registry.of(inst)
    name = prob.recommended_heuristic_for(inst)
    entry = prob.heuristic(name)
    size = Size(*entry.estimate(inst, entry.Options()))
    check_run_size(f"{name} on {what}", size, DEFAULT_LIMITS)  # ModelTooLargeError above
    return max(size.memory / DEFAULT_LIMITS.memory, size.work / DEFAULT_LIMITS.work)


@pytest.mark.parametrize("name", PROBLEMS)
def test_recommended_heuristic_fits_the_default_limits_at_the_papers_sizes(name):
    mine = [s for s in PAPER_INSTANCES if s[0] == name]
    assert mine, f"{name}: no paper suite generates its instances"
    worst = 0.0
    for problem, gen, params, seed in mine:
        inst = dmlopt.generate(problem, {"generator": gen, **json.loads(params)}, seed=seed)
        worst = max(worst, _check_estimate(inst, f"{gen} {params}"))
    for inst_name in io.shipped_instances():
        if inst_name.split("/")[0] == name:
            worst = max(worst, _check_estimate(io.load(inst_name), inst_name))
    assert 0.0 < worst <= 1.0  # an estimate of zero would be a missing estimate


def test_memetic_is_why_tabgp_recommends_best():
    """The brief's reason, checked: memetic's estimate at drift n = 1,000 is above the default
    work limit, best's is not."""
    prob = registry.get("tabgp")
    big = [s for s in PAPER_INSTANCES if s[0] == "tabgp" and json.loads(s[2]).get("n") == 1000]
    assert big
    problem, gen, params, seed = big[0]
    inst = dmlopt.generate(problem, {"generator": gen, **json.loads(params)}, seed=seed)
    memetic, best = prob.heuristic("memetic"), prob.heuristic("best")
    assert Size(*memetic.estimate(inst, memetic.Options())).work > DEFAULT_LIMITS.work
    assert Size(*best.estimate(inst, best.Options())).work <= DEFAULT_LIMITS.work
