"""The command line's output: help on every option with its default and no reStructuredText
markup, ``--json`` on the listing commands and on ``dmlopt report``, metrics printed once by
``--json``, and aligned columns in ``dmlopt validate``."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from dmlopt import cli, io, registry
from dmlopt.benchmarks import reproduce
from dmlopt.benchmarks.store import Store

SHIPPED = "tabgp/er12-p03-tau1-s0"


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _own_parsers() -> dict[str, argparse.ArgumentParser]:
    """``dmlopt`` and each of its subcommands, except the problem-contributed ones (whose
    parsers are built by their problems when they run)."""
    p = cli.parser()
    subs = {f"dmlopt {name}": sp for name, sp in _subparsers(p).items()
            if name not in registry.commands()}
    return {"dmlopt": p, **subs}


def _problem_parsers() -> dict[str, argparse.ArgumentParser]:
    out = {}
    for name in registry.commands():
        p = cli._Parser(prog=f"dmlopt {name}", description=registry.command(name).help)
        registry.command(name).configure(p)
        out[f"dmlopt {name}"] = p
    return out


def _missing_help(p: argparse.ArgumentParser) -> list[str]:
    return [", ".join(a.option_strings) or a.dest for a in p._actions
            if not isinstance(a, argparse._HelpAction) and not (a.help or "").strip()]


@pytest.mark.parametrize("prog", list(_own_parsers()))
def test_every_option_has_help_with_its_default(prog):
    p = _own_parsers()[prog]
    assert _missing_help(p) == [], f"{prog}: options without help"
    for a in p._actions:
        if a.option_strings and type(a) is argparse._StoreAction and not a.required:
            assert "default" in a.help, f"{prog} {a.option_strings[0]}: help names no default"


def test_problem_command_options_have_help():
    missing = {prog: _missing_help(p) for prog, p in _problem_parsers().items()}
    assert not any(missing.values()), missing


@pytest.mark.parametrize("prog", [*_own_parsers(), *_problem_parsers()])
def test_help_has_no_restructuredtext_markup(prog):
    p = {**_own_parsers(), **_problem_parsers()}[prog]
    text = p.format_help() + p.format_usage()
    assert "``" not in text and not re.search(r":[a-z]+:`", text), text


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--time-limit SECONDS stop after SECONDS with the best solution found " \
           "(default: no time limit)" in text
    assert "(default: highs)" in text and "(default: the solver's own choice)" in text
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    top = capsys.readouterr().out
    assert "``" not in top and "exit codes:" in top


def test_plain_turns_literals_into_code():
    assert cli.plain("``a`` and :func:`~x.y` and `z`") == "`a` and `x.y` and `z`"


def test_list_json(capsys):
    code, out, _ = run(capsys, "list", "--json")
    problems = json.loads(out)
    assert code == 0 and [p["name"] for p in problems] == registry.names()
    tabgp = next(p for p in problems if p["name"] == "tabgp")
    assert tabgp["sense"] == "min" and "paper" in tabgp["formulations"]
    assert "dense-refine" in tabgp["heuristics"] and "lp" in tabgp["bounds"]
    assert tabgp["generators"] == list(registry.get("tabgp").generators)


def test_list_problem_json_has_every_schema(capsys):
    code, out, _ = run(capsys, "list", "tabgp", "--json")
    data = json.loads(out)
    prob = registry.get("tabgp")
    assert code == 0 and data["name"] == "tabgp"
    assert [f["name"] for f in data["formulations"]] == list(prob.formulations)
    assert [h["name"] for h in data["heuristics"]] == list(prob.heuristics)
    assert [b["name"] for b in data["bounds"]] == list(prob.bound_entries)  # strongest first
    ils = next(h for h in data["heuristics"] if h["name"] == "ils")
    assert ils["options"] == json.loads(run(capsys, "schema", "tabgp", "--heuristic",
                                             "ils")[1])
    er = next(g for g in data["generators"] if g["name"] == "er")
    assert {"n", "p", "tau"} <= set(er["params"]["properties"])
    for name in registry.names():  # every problem's listing is valid JSON
        code, out, _ = run(capsys, "list", name, "--json")
        assert code == 0 and json.loads(out)["name"] == name


def test_list_data_json(capsys):
    code, out, _ = run(capsys, "list", "--data", "tabgp", "--json")
    names = json.loads(out)
    assert code == 0 and SHIPPED in names
    assert names == [n for n in io.shipped_instances() if n.startswith("tabgp/")]


def test_bench_list_json(capsys):
    code, out, _ = run(capsys, "bench", "--list", "--json")
    suites = json.loads(out)
    assert code == 0
    example = next(s for s in suites if s["name"] == "example")
    assert "TABGP" in example["description"] and example["path"].endswith("example.toml")
    code, _, err = run(capsys, "bench", "example", "--json")
    assert code == 2 and "--json applies to --list only" in err


def test_reproduce_list_json(capsys):
    code, out, _ = run(capsys, "reproduce", "--list", "rar", "--json")
    (paper,) = json.loads(out)
    assert code == 0 and paper["paper"] == "rar"
    names = [t.name for t in reproduce.tables("rar")]
    assert [t["name"] for t in paper["tables"]] == names
    text = reproduce.listing("rar")
    first = paper["tables"][0]
    assert re.search(rf"^  {re.escape(first['name'])} +{first['runs']} runs ", text, re.M)
    assert f"all tables: {paper['runs']} runs" in text


def test_report_json(tmp_path, capsys):
    path = tmp_path / "s.sqlite"
    base = {"suite": "s", "problem": "tabgp", "instance": "A", "instance_hash": "h-A",
            "options": "{}", "seed": 0, "seconds": 0.1, "wall_seconds": 0.2, "host": "h",
            "dmlopt_version": "0.1.0", "metrics": {}}
    with Store(path) as s:
        s.put({**base, "kind": "exact", "method": "highs:paper", "status": "optimal",
               "objective": 3.0, "bound": 3.0,
               "options": json.dumps({"formulation": "paper", "solver": "highs"})})
        s.put({**base, "kind": "heuristic", "method": "random", "status": "feasible",
               "objective": 4.0})
        s.put({**base, "kind": "heuristic", "method": "mine", "status": "error",
               "objective": None})
    out = tmp_path / "rep"
    code, printed, _ = run(capsys, "report", path, "-o", out, "--json")
    data = json.loads(printed)
    assert code == 0 and data["runs"] == 3 and data["problems"] == {"tabgp": 3}
    assert data["statuses"] == {"error": 1, "feasible": 1, "optimal": 1}
    kinds = {f["kind"] for f in data["files"]}
    assert {"markdown", "csv"} <= kinds
    assert all((tmp_path / "rep" / f["path"].rsplit("/", 1)[1]).is_file() for f in data["files"])


def test_heuristic_json_prints_each_metric_once(capsys):
    code, out, _ = run(capsys, "heuristic", SHIPPED, "random", "--json")
    data = json.loads(out)
    assert code == 0 and data["metrics"] and data["solution"]["assignment"]
    assert not [k for k in data if k.startswith("m_")]
    for key in data["metrics"]:
        assert out.count(f'"{key}"') == 1, key


def _columns(text: str) -> set[int]:
    """Where the value starts on each ``key  value`` line."""
    return {m.end() - m.start() for m in re.finditer(r"^\S+ +(?=\S)", text, re.M)}


def test_validate_columns_are_aligned(capsys, tmp_path):
    sol = tmp_path / "sol.json"
    assert run(capsys, "heuristic", SHIPPED, "random", "-o", sol)[0] == 0
    code, out, _ = run(capsys, "validate", SHIPPED, "--solution", sol)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["feasible", "True"]
    assert len(lines) > 3 and len(_columns(out)) == 1, out
    code, heur, _ = run(capsys, "heuristic", SHIPPED, "random")
    assert len(_columns(heur)) == 1  # the same layout as solve and heuristic
