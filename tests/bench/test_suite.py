"""Benchmark suites: expansion into tasks, and every kind of error -> exit 2 with one line naming
the file, the field, the value and the rule, before anything runs."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

import dmlopt
from dmlopt.benchmarks import suite as suite_mod
from dmlopt.cli import main

GOOD_GROUP = """
[[groups]]
problem = "tabgp"
instances = [
  { generator = "er", params = { n = 6, p = 0.5, tau = 2, l = 2 }, seeds = [0, 1] },
  { file = "inst/*.json" },
]
methods = [
  { solver = "highs", formulation = "paper", time_limit = 5 },
  { heuristic = "random", seeds = [0, 1, 2] },
]
"""


@pytest.fixture
def suite_dir(tmp_path):
    (tmp_path / "inst").mkdir()
    for seed in (5, 6):
        inst = dmlopt.generate("tabgp", {"generator": "er", "n": 5, "p": 0.5, "tau": 2}, seed)
        dmlopt.save(inst, tmp_path / "inst" / f"g{seed}.json")
    return tmp_path


def test_expansion(suite_dir):
    path = suite_dir / "s.toml"
    path.write_text('name = "s"\ndescription = "d"\ntime_limit = 7\nkill_limit = 9\ngrace = 2\n'
                    + GOOD_GROUP)
    s = suite_mod.load(path)
    assert s.name == "s"
    # 4 instances x (1 exact + 3 heuristic seeds)
    assert len(s.tasks) == 16
    ids = sorted({t.instance_id for t in s.tasks})
    assert ids == ["er(n=6,p=0.5,tau=2,l=2)#0", "er(n=6,p=0.5,tau=2,l=2)#1", "inst/g5", "inst/g6"]
    exact = [t for t in s.tasks if t.kind == "exact"]
    assert {t.method for t in exact} == {"highs:paper"}
    assert all(t.time_limit == 5 and t.grace == 2 and t.options["threads"] == 1 for t in exact)
    heur = [t for t in s.tasks if t.kind == "heuristic"]
    assert all(t.time_limit == 9 and t.grace == 2 for t in heur)
    g5 = dmlopt.load(suite_dir / "inst" / "g5.json")
    assert any(t.instance_hash == dmlopt.instance_hash(g5) for t in s.tasks)
    assert len({t.key for t in s.tasks}) == 16


def test_time_limit_and_kill_limit_govern_their_own_methods(suite_dir):
    """The suite's ``time_limit`` reaches exact and bound runs only, ``kill_limit`` heuristic
    runs only (each at every level; the most specific wins). Catches a harness that still lets
    one name set both limits."""
    group = GOOD_GROUP.replace(', time_limit = 5 },', ' },').replace(
        'methods = [', 'kill_limit = 11\nmethods = [\n  { bound = "lp", time_limit = 4 },\n'
        '  { heuristic = "random", seeds = [7], kill_limit = 3 },')
    path = suite_dir / "s.toml"
    path.write_text("time_limit = 6\n" + group)
    tasks = suite_mod.load(path).tasks
    limits = {(t.kind, t.seed): t.time_limit for t in tasks}
    assert limits[("exact", 0)] == 6  # the suite's time_limit, not the group's kill_limit
    assert limits[("bound", 0)] == 4
    assert limits[("heuristic", 0)] == 11  # the group's kill_limit, not the suite's time_limit
    assert limits[("heuristic", 7)] == 3
    exact = next(t for t in tasks if t.kind == "exact")
    assert exact.options["time_limit"] == 6
    path.write_text("time_limit = 6\n" + GOOD_GROUP)
    heur = [t for t in suite_mod.load(path).tasks if t.kind == "heuristic"]
    assert {t.time_limit for t in heur} == {suite_mod.DEFAULT_KILL_LIMIT}


def test_duplicates_are_run_once(suite_dir):
    path = suite_dir / "s.toml"
    path.write_text(GOOD_GROUP + GOOD_GROUP)
    assert len(suite_mod.load(path).tasks) == 16


def test_shipped_suites_are_valid(monkeypatch):
    """Every shipped suite loads: each instance it names is generated (or read) and valid.
    The suites share generator specs (2,800 instances, 2,037 distinct): each distinct
    (problem, spec, seed) is generated once here, generation being deterministic per seed."""
    made: dict[str, Any] = {}
    generate = suite_mod.api.generate

    def once(problem, spec=None, seed=0, size_limit=None):
        key = json.dumps([problem, spec, seed, size_limit], sort_keys=True)
        if key not in made:
            made[key] = generate(problem, spec, seed, size_limit)
        return made[key]

    monkeypatch.setattr(suite_mod.api, "generate", once)
    shipped = suite_mod.shipped()
    assert "quick" in shipped
    for name in shipped:
        s = suite_mod.load(name)
        assert s.tasks, name
        assert suite_mod.describe(shipped[name]), f"{name} has no description"


def test_list(capsys):
    assert main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    assert "quick " in out
    assert "example " in out


BAD = [
    ("name = 'x'\n[[groups]\nproblem = 'tabgp'\n", "not valid TOML"),
    ("colour = 1\n" + GOOD_GROUP, "colour: 1 is not a known key"),
    ("time_limit = -3\n" + GOOD_GROUP, "time_limit: -3 must be positive"),
    ('name = "x"\n', "groups: missing"),
    (GOOD_GROUP.replace('"tabgp"', '"nope"'), "groups[0].problem: 'nope' is not a known problem"),
    (GOOD_GROUP.replace('formulation = "paper"', 'formulation = "fancy"'),
     "groups[0].methods[0].formulation: 'fancy' is not a tabgp formulation"),
    (GOOD_GROUP.replace('"random"', '"magic"'),
     "groups[0].methods[1].heuristic: 'magic' is not a tabgp heuristic"),
    (GOOD_GROUP.replace('solver = "highs"', 'solver = "nosuchsolver"'),
     "groups[0].methods[0].solver: 'nosuchsolver' is not an allowed solver"),
    (GOOD_GROUP.replace('"inst/*.json"', '"missing/*.json"'),
     "groups[0].instances[1].file: 'missing/*.json' matches no file"),
    (GOOD_GROUP.replace('generator = "er"', 'generator = "zz"'),
     "groups[0].instances[0].generator: 'zz' is not a tabgp generator"),
    (GOOD_GROUP.replace("seeds = [0, 1]", "seeds = []"),
     "groups[0].instances[0].seeds: [] must be a non-empty list"),
    (GOOD_GROUP.replace("tau = 2,", "tau = 2, wibble = 3,"), "wibble: 3 is not a parameter of er"),
    (GOOD_GROUP.replace("p = 0.5", "p = 1.5"),
     "groups[0].instances[0]: p: 1.5 must be in [0, 1]"),
    (GOOD_GROUP.replace("seeds = [0, 1, 2] }", "seeds = [0], options = { depth = 2 } }"),
     "groups[0].methods[1].options.depth: 2 is not an option of random"),
    (GOOD_GROUP.replace("time_limit = 5", "time_limit = 'long'"),
     "groups[0].methods[0].time_limit: 'long' must be a number"),
    (GOOD_GROUP.replace("{ heuristic", "{ what = 1, heuristic"),
     "groups[0].methods[1].what: 1 is not a known key"),
    (GOOD_GROUP.replace("seeds = [0, 1, 2] }", "seeds = [0], time_limit = 9 }"),
     "groups[0].methods[1].time_limit: 9 is not a heuristic method key: the harness's limit of "
     "a heuristic run is kill_limit, the heuristic's own time limit goes in options"),
    (GOOD_GROUP.replace("time_limit = 5", "kill_limit = 5"),
     "groups[0].methods[0].kill_limit: 5 is not a known key"),
    ("kill_limit = 0\n" + GOOD_GROUP, "kill_limit: 0 must be positive"),
    (GOOD_GROUP.replace("seeds = [0, 1, 2] }", "seeds = [0], kill_limit = inf }"),
     "groups[0].methods[1].kill_limit: inf must be"),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_suite_exits_2_with_one_line(suite_dir, capsys, text, expected):
    path = suite_dir / "bad.toml"
    path.write_text(textwrap.dedent(text))
    store = suite_dir / "r.sqlite"
    assert main(["bench", str(path), "-o", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"dmlopt: {path}: "), err
    assert expected in err
    assert not store.exists()


def test_unknown_suite_name(capsys):
    assert main(["bench", "no-such-suite"]) == 2
    err = capsys.readouterr().err
    assert "suite: 'no-such-suite' is neither a shipped suite nor a file" in err
    assert "quick" in err


def test_report_of_missing_store(tmp_path, capsys):
    assert main(["report", str(tmp_path / "none.sqlite"), "-o", str(tmp_path / "r")]) == 2
    assert "does not exist" in capsys.readouterr().err


DEFAULT_SOLVE_BAD = [
    ('formulation = "paper", time_limit = 5', 'formulation = "paper", default_solve = "yes"',
     "groups[0].methods[0].default_solve: 'yes' must be true or false"),
    ('formulation = "paper", time_limit = 5', 'formulation = "paper", default_solve = 1',
     "groups[0].methods[0].default_solve: 1 must be true or false"),
    ('formulation = "paper", time_limit = 5', 'formulation = "paper", default_solve = true',
     "groups[0].methods[0].formulation: 'paper' must be left out or be the default formulation"),
]


@pytest.mark.parametrize(("old", "new", "expected"), DEFAULT_SOLVE_BAD)
def test_bad_default_solve_exits_2(suite_dir, capsys, old, new, expected):
    test_bad_suite_exits_2_with_one_line(suite_dir, capsys, GOOD_GROUP.replace(old, new),
                                         expected)


NARA_GROUP = """
[[groups]]
problem = "nara"
instances = [
  { generator = "uniform", params = { topology = "alpha", n_requests = 6 }, seeds = [3] },
]
methods = [
  { solver = "highs", time_limit = 60 },
  { solver = "highs", default_solve = true, time_limit = 60 },
]
"""


def test_default_solve_runs_the_exact_method_first(tmp_path):
    """``default_solve = true`` runs what ``dmlopt.solve`` runs without a formulation (Nara's
    exact ``acceptance-sets`` first), the plain method the MIP alone: catches a harness that
    drops the key (both runs would be the MIP alone) or applies it to every solver method."""
    from dmlopt.benchmarks.child import execute

    path = tmp_path / "s.toml"
    path.write_text('name = "s"\n' + NARA_GROUP)
    tasks = [t for t in suite_mod.load(path).tasks if t.kind == "exact"]
    assert len(tasks) == 2 and len({t.key for t in tasks}) == 2
    rows = {bool(t.options.get("default_solve")): execute(t.as_payload()) for t in tasks}
    assert all(t.method == "highs:offline" for t in tasks)
    assert "bound_acceptance-sets" in rows[True]["metrics"], rows[True]
    assert not any("acceptance-sets" in k for k in rows[False]["metrics"]), rows[False]
    assert rows[True]["status"] == rows[False]["status"] == "optimal"
    assert rows[True]["objective"] == rows[False]["objective"]
