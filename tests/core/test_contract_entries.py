"""The typed contract of every registered problem: every entry is a typed
:class:`~dmlopt.contract.Formulation` / :class:`~dmlopt.contract.Heuristic` /
:class:`~dmlopt.contract.Generator` with documented options, served by the registry; and
hostile but schema-valid generator parameters and heuristic options are refused by the estimates
or the rules before any work is done.

The checks of every problem are parametrised over ``dmlopt.registry.names()`` (a new problem
gets them by its entry point alone; tests/core/test_new_problem.py proves it with a toy
problem); the cases after them name a problem's own generators and options. Hostile instances
are in tests/core/test_contract_hostile.py.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import time
from types import ModuleType

import pytest

import dmlopt
from dmlopt import registry
from dmlopt.cli import main
from dmlopt.contract import DEFAULT_LIMITS, Formulation, Generator, Heuristic, Options, Size
from dmlopt.errors import InstanceError, ModelTooLargeError

PROBLEMS = registry.names()


def modules(name: str) -> tuple[ModuleType, ModuleType]:
    """The model and heuristics modules of problem ``name``, as the registry found them."""
    model, heur = registry._PROBLEMS[name]
    return importlib.import_module(model), importlib.import_module(heur)


def _boom(*_args, **_kwargs):
    raise AssertionError("ran although the estimate should have refused it")


def _over(size: Size) -> bool:
    return size.memory > DEFAULT_LIMITS.memory or size.work > DEFAULT_LIMITS.work


# --------------------------------------------------------------------------------------------
# every problem: typed entries, documented, served by the registry, cheap defaults


def check_entries_are_typed_and_described(name: str) -> None:
    """Every formulation, generator and heuristic is a typed entry with a one-line description;
    every option and parameter has a description and a default."""
    model, heur = modules(name)
    assert model.GENERATORS and heur.HEURISTICS
    assert not hasattr(model, "SOLVERS")
    for key, f in model.FORMULATIONS.items():
        assert isinstance(f, Formulation), key
        assert f.description.strip() and "\n" not in f.description.strip(), key
    models: list[type[Options]] = []
    for key, g in model.GENERATORS.items():
        assert isinstance(g, Generator), key
        assert g.description.strip(), key
        models.append(g.Params)
    for key, h in heur.HEURISTICS.items():
        assert isinstance(h, Heuristic), key
        assert h.description.strip(), key
        models.append(h.Options)
    for m in models:
        assert issubclass(m, Options) and not m.derived, m
        for field, info in m.model_fields.items():
            assert info.description, f"{m.__name__}.{field} has no description"
            assert not info.is_required(), f"{m.__name__}.{field} has no default"


def check_registry_serves_the_declared_entries(name: str) -> None:
    model, heur = modules(name)
    prob = registry.get(name)
    for key, h in heur.HEURISTICS.items():
        assert prob.heuristic(key) is h
    for key, g in model.GENERATORS.items():
        assert prob.generator(key) is g
    for key, f in model.FORMULATIONS.items():
        assert prob.formulation(key) is f


def check_defaults_are_cheap(name: str) -> None:
    """Shipped defaults stay well under the limits: every heuristic's estimate on the default
    generator's instance, and every generator's estimate at its default parameters."""
    problem = registry.get(name)
    inst = dmlopt.generate(name, {}, 0)
    for hname, entry in problem.heuristics.items():
        size = entry.estimate(inst, entry.Options())
        assert size.memory < DEFAULT_LIMITS.memory / 10, hname
        assert size.work < DEFAULT_LIMITS.work / 10, hname
    for gname, entry in problem.generator_entries.items():
        size = entry.estimate(entry.Params())
        assert not _over(size), gname


@pytest.mark.parametrize("name", PROBLEMS)
def test_every_entry_is_typed_and_described(name):
    check_entries_are_typed_and_described(name)


@pytest.mark.parametrize("name", PROBLEMS)
def test_registry_serves_the_declared_entries(name):
    check_registry_serves_the_declared_entries(name)


@pytest.mark.parametrize("name", PROBLEMS)
def test_default_generator_instance_runs_every_cheap_heuristic(name):
    check_defaults_are_cheap(name)


# --------------------------------------------------------------------------------------------
# a problem's own entries


def test_rar_config_brings_its_own_decode_and_warm_start():
    from dmlopt.models.rar import config as _rar_config

    f = registry.get("rar").formulation("config")
    assert f.decode is _rar_config.decode_config
    assert f.warm_start is _rar_config.warm_start_config


def test_module_level_build_and_estimate_use_the_entries():
    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 3}, seed=0)
    nara = registry.get("nara").model
    assert nara.estimate_size(inst, "request") == nara.FORMULATIONS["request"].estimate_size(inst)
    small = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 2}, seed=0)
    from dmlopt.models.inc_oxc import formulations as MI_F

    inc_oxc = registry.get("inc_oxc").model
    assert inc_oxc.estimate_size(small, "strong") == MI_F._size_strong(small)


# --------------------------------------------------------------------------------------------
# generators refused by their estimate, before they run


@pytest.mark.parametrize("problem, gen, params", [
    ("nara", "uniform", {"n_requests": 100_000_000}),
    ("nara", "azure", {"n_requests": 100_000_000}),
    ("nara", "alibaba", {"n_requests": 10**12}),
    ("inc_oxc", "small", {"racks": 100_000_000}),
    ("inc_oxc", "large", {"racks": 100_000_000}),
    ("inc_oxc", "dcn", {"racks": 4, "jobs": 10**9}),
    ("rar", "cpn38", {"requests": 100_000_000}),
    ("rar", "cpn6", {"requests": 100_000_000}),
    ("rar", "random", {"requests": 10**9}),
])
def test_hostile_generator_refused_by_its_estimate(monkeypatch, problem, gen, params):
    model = registry.get(problem).model
    monkeypatch.setitem(model.GENERATORS, gen,
                        dataclasses.replace(model.GENERATORS[gen], function=_boom))
    t0 = time.perf_counter()
    with pytest.raises(ModelTooLargeError, match=gen):
        dmlopt.generate(problem, {"generator": gen, **params}, seed=0)
    assert time.perf_counter() - t0 < 5


def test_cli_refuses_a_huge_generator_with_one_line(capsys):
    assert main(["generate", "nara", "-p", "n_requests=100000000"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "too large" in err


def test_generator_estimates_grow_with_size():
    def size(problem, gen, **params):
        entry = registry.get(problem).model.GENERATORS[gen]
        return entry.estimate(entry.Params(**params))

    for problem, gen, key, lo, hi in [("nara", "uniform", "n_requests", 100, 10_000),
                                      ("inc_oxc", "small", "racks", 2, 60),
                                      ("inc_oxc", "large", "racks", 16, 64),
                                      ("rar", "cpn38", "requests", 10, 10_000),
                                      ("rar", "random", "requests", 2, 2000)]:
        a, b = size(problem, gen, **{key: lo}), size(problem, gen, **{key: hi})
        assert a.memory < b.memory and a.work < b.work, (problem, gen)


def test_paper_generators_well_under_the_default_limits():
    for problem, gen, params in [("nara", "uniform", {"topology": "delta"}),
                                 ("nara", "alibaba", {"topology": "delta", "n_requests": 2048}),
                                 ("inc_oxc", "large", {"workers": (16, 64)}),
                                 ("rar", "cpn38", {"requests": 500})]:
        entry = registry.get(problem).model.GENERATORS[gen]
        s = entry.estimate(entry.Params(**params))
        assert s.memory < DEFAULT_LIMITS.memory / 10 and s.work < DEFAULT_LIMITS.work / 10


# --------------------------------------------------------------------------------------------
# bad options and parameters name the option


@pytest.mark.parametrize("problem, spec, field", [
    ("nara", {"generator": "uniform", "n_requests": "ten"}, "n_requests"),
    ("nara", {"generator": "uniform", "n_requests": -5}, "n_requests"),
    ("nara", {"generator": "azure", "load": math.nan}, "load"),
    ("nara", {"generator": "uniform", "load": 11}, "load"),
    ("nara", {"generator": "uniform", "max_units": 101}, "max_units"),
    ("nara", {"generator": "uniform", "topology": "epsilon"}, "topology"),
    ("nara", {"generator": "uniform", "k": 0}, "k"),
    ("inc_oxc", {"generator": "small", "racks": 0}, "racks"),
    ("inc_oxc", {"generator": "small", "racks": "six"}, "racks"),
    ("inc_oxc", {"generator": "large", "workers": [0, 4]}, "workers"),
    ("inc_oxc", {"generator": "dcn", "pdp_fraction": 1.5}, "pdp_fraction"),
    ("inc_oxc", {"generator": "dcn", "load": math.inf}, "load"),
    ("rar", {"generator": "cpn38", "requests": 0}, "requests"),
    ("rar", {"generator": "cpn6", "slots": 5}, "slots"),
    ("rar", {"generator": "cpn6", "scheme": "Fast"}, "scheme"),
    ("rar", {"generator": "random", "cus": -1}, "cus"),
    ("tabgp", {"generator": "er", "p": 1.5}, "p"),
    ("tabgp", {"generator": "er", "a": 0.5}, "a"),
    ("tabgp", {"generator": "drift", "mix": -0.1}, "mix"),
    ("tap", {"generator": "random", "density": 2}, "density"),
    ("tap", {"generator": "dc", "modules": 10**6}, "modules"),
    ("infer", {"generator": "dc", "routing": "teleport"}, "routing"),
    ("infer_tap", {"generator": "dc", "inference": "magic"}, "inference"),
])
def test_bad_params_name_the_param(problem, spec, field):
    with pytest.raises(InstanceError, match=f"^{field}"):
        dmlopt.generate(problem, spec, seed=0)


@pytest.fixture(scope="module")
def small_instances():
    return {
        "nara": dmlopt.generate("nara", {"generator": "uniform", "n_requests": 6}, seed=0),
        "inc_oxc": dmlopt.generate("inc_oxc", {"generator": "small", "racks": 2}, seed=0),
        "rar": dmlopt.generate("rar", {"generator": "cpn6", "requests": 3}, seed=0),
    }


@pytest.mark.parametrize("problem, heuristic, options, field", [
    ("nara", "tetris", {"penalty": "abc"}, "penalty"),
    ("nara", "tetris", {"penalty": math.nan}, "penalty"),
    ("nara", "tetris", {"penalty": 2}, "penalty"),
    ("nara", "netfit-probe", {"n_probe": -1}, "n_probe"),
    ("nara", "netfit-probe", {"max_cand": 2.5}, "max_cand"),
    ("nara", "milp", {"time_limit": -1}, "time_limit"),
    ("inc_oxc", "wcg", {"circuits": "magic"}, "circuits"),
    ("inc_oxc", "swg", {"bandwidth": 3}, "bandwidth"),
    ("inc_oxc", "wcg-ls", {"time_limit": math.nan}, "time_limit"),
    ("inc_oxc", "wcg-ls", {"max_rounds": 0}, "max_rounds"),
    ("rar", "rdda", {"scheme": "Fast"}, "scheme"),
])
def test_bad_options_name_the_option(small_instances, monkeypatch, problem, heuristic, options,
                                     field):
    heur = modules(problem)[1]
    monkeypatch.setitem(heur.HEURISTICS, heuristic,
                        dataclasses.replace(heur.HEURISTICS[heuristic], function=_boom))
    with pytest.raises(InstanceError, match=field):
        dmlopt.heuristic(small_instances[problem], heuristic, **options)


def test_unknown_option_lists_the_valid_ones(small_instances):
    from dmlopt.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match=r"depth.*n_probe, max_cand"):
        dmlopt.heuristic(small_instances["nara"], "netfit-probe", depth=2)


def test_cli_bad_param_is_one_line_and_nothing_on_stdout(capsys):
    assert main(["generate", "nara", "-p", "n_requests=ten"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "n_requests" in err


def test_valid_options_reach_the_function_unchanged(small_instances):
    inst = small_instances["nara"]
    from dmlopt.heuristics import nara as HN
    from dmlopt.heuristics import rar as HR

    direct = HN.allocate_tetris(inst, seed=0, penalty=0.5, check_paths=False)
    assert dmlopt.heuristic(inst, "tetris", penalty=0.5, check_paths=False).solution == direct
    probe = HN.allocate_netfit_probe(inst, seed=3, n_probe=8)
    assert dmlopt.heuristic(inst, "netfit-probe", seed=3, n_probe=8).solution == probe
    rar = small_instances["rar"]
    assert dmlopt.heuristic(rar, "rdda", scheme="MinT").solution == HR.rdda(rar, scheme="MinT")


# --------------------------------------------------------------------------------------------
# heuristic estimates: paper scale well under, growth with size


def test_heuristic_estimates_of_paper_instances_well_under_the_limits():
    cases = [
        ("nara", dmlopt.generate("nara", {"generator": "alibaba", "topology": "delta"}, seed=0)),
        ("inc_oxc", dmlopt.load("inc_oxc/large-r64-w16_64-s0")),
        ("rar", dmlopt.generate("rar", {"generator": "cpn38", "requests": 100}, seed=0)),
    ]
    for problem, inst in cases:
        for name, h in registry.get(problem).heuristics.items():
            if problem == "nara" and name in ("milp", "offline-search"):
                # one MILP per arrival; thousands of replays of the episode: both are meant
                # for episodes of tens to hundreds of requests (their docstrings), and the size
                # limit refuses them on delta
                continue
            s = h.estimate(inst, h.Options())
            assert isinstance(s, Size)
            assert s.memory < DEFAULT_LIMITS.memory / 4, (problem, name, s)
            assert s.work < DEFAULT_LIMITS.work / 3, (problem, name, s)


def test_heuristic_estimates_grow_with_size():
    pairs = {
        "nara": [dmlopt.generate("nara", {"generator": "uniform", "topology": t,
                                          "n_requests": 64}, seed=0)
                 for t in ("alpha", "gamma")],
        "inc_oxc": [dmlopt.generate("inc_oxc", {"generator": "small", "racks": r}, seed=0)
                    for r in (2, 6)],
        "rar": [dmlopt.generate("rar", {"generator": g, "requests": 20}, seed=0)
                for g in ("cpn6", "cpn38")],
    }
    for problem, (a, b) in pairs.items():
        for name, h in registry.get(problem).heuristics.items():
            sa, sb = h.estimate(a, h.Options()), h.estimate(b, h.Options())
            assert sa.memory < sb.memory and sa.work < sb.work, (problem, name)
