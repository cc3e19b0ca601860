"""The command line: exit codes, one-line errors, outputs written atomically."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import dmlopt
from dmlopt.cli import main

GOOD = {"problem": "tabgp", "n": 6, "edges": [[[0, 1], [1, 2], [3, 4]], [[0, 1], [4, 5]]],
        "l": 3, "k": 2, "alpha": 3}


@pytest.fixture
def inst_file(tmp_path):
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(GOOD))
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"problem": "tabgp", "n": 6,', "is not valid JSON"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "alpha"}), "alpha: missing"),
        (json.dumps({**GOOD, "k": 1}), "k: 1 is too small: k*l = 3 < n = 6"),
        (json.dumps({**GOOD, "edges": [[[0, 7]]]}), "edges[0][0]: (0, 7) names a vertex"),
    ],
)
def test_bad_instance_exit_2_one_line(capsys, tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_text(text)
    for argv in (["validate", path], ["solve", path], ["heuristic", path, "random"]):
        code, out, err = run(capsys, *argv)
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("dmlopt: ") and match in err
        assert out == ""


def test_unknown_solver_and_usage_errors(capsys, inst_file):
    code, _, err = run(capsys, "solve", inst_file, "--solver", "cplexx")
    assert code == 2 and "solver: 'cplexx' is not an allowed solver" in err and err.count("\n") == 1
    code, _, err = run(capsys, "solve", inst_file, "--bogus")
    assert code == 2 and "unrecognized arguments: --bogus" in err and err.count("\n") == 1
    code, _, err = run(capsys, "solve")
    assert code == 2 and err.count("\n") == 1
    code, _, err = run(capsys, "heuristic", inst_file, "nope")
    assert code == 2 and "'nope' is not a tabgp heuristic" in err
    code, _, err = run(capsys, "solve", inst_file, "--size-limit", "3")
    assert code == 2 and "--size-limit" in err
    code, _, err = run(capsys, "solve", inst_file, "--size-limit", "3,3")
    assert code == 2 and "model too large" in err


def test_solve_table_json_and_solution_file(capsys, inst_file, tmp_path):
    out_sol = tmp_path / "sol.json"
    code, out, _ = run(capsys, "solve", inst_file, "-o", out_sol)
    assert code == 0 and "status" in out and "optimal" in out
    inst = dmlopt.load(inst_file)
    ev = dmlopt.evaluate(inst, out_sol)
    # k=2, l=3, n=6: three pairs per step. Keeping {0,1},{3,4},{2,5} cuts {1,2} then {4,5}
    # (cost 2); re-pairing to {4,5},{2,3} in step 2 saves 1 cut but costs 2 migrations * 3.
    assert ev.feasible and ev.objective == 2
    code, out, _ = run(capsys, "solve", inst_file, "--solver", "scip", "--json")
    data = json.loads(out)
    assert code == 0 and data["objective"] == 2 and data["status"] == "optimal"
    code, out, _ = run(capsys, "validate", inst_file, "--solution", out_sol)
    assert code == 0 and ["feasible", "True"] in [ln.split() for ln in out.splitlines()]


def test_validate_infeasible_solution_exit_3(capsys, inst_file, tmp_path):
    sol = tmp_path / "sol.json"
    sol.write_text(json.dumps({"assignment": [[0] * 6, [0] * 6]}))
    code, out, _ = run(capsys, "validate", inst_file, "--solution", sol)
    assert code == 3 and "cluster 0 holds 6 vertices, above k = 2" in out


def test_heuristic_generate_export_list_schema(capsys, tmp_path, inst_file):
    code, out, _ = run(capsys, "heuristic", inst_file, "random", "--seed", "2", "--json")
    assert code == 0 and json.loads(out)["status"] == "feasible"
    gen = tmp_path / "g.json"
    code, out, _ = run(capsys, "generate", "tabgp", "-g", "er", "-p", "n=8", "-p", "p=0.5",
                       "--seed", "3", "-o", gen)
    assert code == 0 and dmlopt.load(gen) == dmlopt.generate(
        "tabgp", {"generator": "er", "n": 8, "p": 0.5}, seed=3)
    code, out, _ = run(capsys, "generate", "tabgp", "-p", "n=5", "-p", "tau=1")
    assert code == 0 and json.loads(out)["n"] == 5
    code, _, err = run(capsys, "generate", "tabgp", "-p", "p=2")
    assert code == 2 and "p: 2" in err and "[0, 1]" in err
    code, _, err = run(capsys, "generate", "tabgp", "-p", "oops")
    assert code == 2 and "KEY=VALUE" in err
    lp = tmp_path / "m.lp"
    code, out, _ = run(capsys, "export", inst_file, lp)
    assert code == 0 and lp.exists() and "variables" in out
    code, out, _ = run(capsys, "list")
    assert code == 0 and "tabgp" in out and "formulations" in out
    code, out, _ = run(capsys, "schema", "tabgp")
    assert code == 0 and "alpha" in json.loads(out)["properties"]


def test_subprocess_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = subprocess.run([sys.executable, "-m", "dmlopt", "solve", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_solve_warm_start_from_a_file(capsys, inst_file, tmp_path):
    start = tmp_path / "start.json"
    # a feasible start (pairs {0,1},{2,3},{4,5} in both steps): the solve still ends optimal
    start.write_text(json.dumps({"assignment": [[0, 0, 1, 1, 2, 2]] * 2}))
    code, out, _ = run(capsys, "solve", inst_file, "--warm-start", start, "--json")
    assert code == 0 and json.loads(out)["objective"] == 2
    # the file is read as a solution, not taken for a heuristic name: an infeasible one is
    # refused with the rule it breaks
    start.write_text(json.dumps({"assignment": [[0] * 6, [0] * 6]}))
    code, _, err = run(capsys, "solve", inst_file, "--warm-start", start)
    assert code == 2 and "warm_start:" in err and "cluster 0 holds 6" in err


def test_internal_errors_exit_1_without_traceback(capsys, toy, tmp_path, monkeypatch):
    path = tmp_path / "toy.json"
    path.write_text(dmlopt.io.to_json(dmlopt.generate("toy", {"n": 6}, seed=1)))
    code, _, err = run(capsys, "solve", path, "--formulation", "underprice")
    assert code == 1 and err.startswith("dmlopt: internal error:") and "under-prices" in err
    monkeypatch.delenv("DMLOPT_DEBUG", raising=False)

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(dmlopt.api, "solve", broken)
    code, _, err = run(capsys, "solve", path)
    assert code == 1 and err.strip() == "dmlopt: internal error: RuntimeError: a bug"


def test_schema_of_a_solution_and_validate_json(capsys, inst_file, tmp_path):
    code, out, _ = run(capsys, "schema", "tabgp", "--solution")
    schema = json.loads(out)
    assert code == 0 and schema["title"] == "Solution" and "assignment" in schema["properties"]
    code, out, _ = run(capsys, "schema", "tabgp")
    assert "assignment" not in json.loads(out)["properties"]
    sol = tmp_path / "sol.json"
    sol.write_text(json.dumps({"assignment": [[0, 0, 1, 1, 2, 2]] * 2}))
    code, out, _ = run(capsys, "validate", inst_file, "--solution", sol, "--json")
    data = json.loads(out)
    # {0,1},{2,3},{4,5} kept in both steps: step 0 cuts {1,2} and {3,4}, step 1 cuts nothing
    # ({0,1} and {4,5} are inside): cost 2, no migration
    assert code == 0 and data["feasible"] and data["violations"] == []
    assert data["objective"] == dmlopt.evaluate(dmlopt.load(inst_file), sol).objective == 2
