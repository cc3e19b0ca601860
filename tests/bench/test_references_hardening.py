"""Hostile reference libraries (issue: records hardened like policy files): every bad record or
file is one line naming the record and the field, exit 2 on the command line, an
``InstanceError`` (a ``DmloptError``) in Python; never a traceback, never exit 1.

Each test copies two shipped records (TABGP, a min problem, and INC/OXC, a max problem) with
their instance and solution files into ``tmp_path``, spoils one thing and points the library
there (``root=`` in Python, ``DMLOPT_REFERENCES_ROOT`` on the command line)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dmlopt import references
from dmlopt.errors import DmloptError, InstanceError

SHIPPED = references.data_root()
MIN_ID, MAX_ID = "fig42-p01-tau1-s0", "fig4-r2-s0"   # tabgp (min), inc_oxc (max); optimal


def _copy(root: Path, problem: str, rid: str) -> dict:
    rec = next(r for r in json.loads((SHIPPED / problem / "references.json").read_text())
               if r["id"] == rid)
    (root / problem / "solutions").mkdir(parents=True, exist_ok=True)
    shutil.copy(SHIPPED / problem / rec["instance"], root / problem / rec["instance"])
    shutil.copy(SHIPPED / problem / rec["solution"], root / problem / rec["solution"])
    return rec


@pytest.fixture
def lib(tmp_path):
    """A two-record library that verifies, and ``write(problem, record)`` to replace a record
    (a dict, or raw JSON text for what :func:`json.dumps` cannot write)."""
    root = tmp_path / "lib"
    recs = {"tabgp": _copy(root, "tabgp", MIN_ID), "inc_oxc": _copy(root, "inc_oxc", MAX_ID)}

    def write(problem: str, rec: dict | str) -> None:
        text = rec if isinstance(rec, str) else json.dumps(rec)
        (root / problem / "references.json").write_text(f"[{text}]")

    for problem, rec in recs.items():
        write(problem, rec)
    return root, recs, write


def _fails(root: Path, problem: str | None = None) -> list[str]:
    return references.verify_library(problem, root)[1]


def _cli(root: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, references.ROOT_ENV: str(root)}
    env.pop("DMLOPT_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "dmlopt", "references", "--verify", *argv],
                          capture_output=True, text=True, timeout=300, env=env)


def _one_line(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_the_copied_library_verifies(lib):
    root, _, _ = lib
    assert references.verify_library(None, root) == (2, [])
    proc = _cli(root)
    assert proc.returncode == 0 and "2 records verified" in proc.stdout, proc.stderr


def test_nan_names_the_record_and_field(lib):
    root, recs, write = lib
    write("tabgp", json.dumps(recs["tabgp"]).replace('"objective": 2.0', '"objective": NaN'))
    assert _fails(root) == [f"tabgp/{MIN_ID}: objective: nan must be a finite number"]
    with pytest.raises(InstanceError, match=f"tabgp/{MIN_ID}: objective: nan"):
        references.records("tabgp", root)
    _one_line(_cli(root, "tabgp"), f"tabgp/{MIN_ID}", "objective", "finite")


@pytest.mark.parametrize(("field", "text", "rule"), [
    ("bound", "1e400", "finite"),                  # json reads it as inf
    ("seconds", str(10**30), "64-bit"),
    ("objective", "9" * 5000, "not valid JSON"),   # past Python's integer digit limit
])
def test_huge_numbers(lib, field, text, rule):
    root, recs, write = lib
    raw = json.dumps({**recs["tabgp"], field: 0.5}).replace(f'"{field}": 0.5',
                                                            f'"{field}": {text}')
    write("tabgp", raw)
    line = _fails(root, "tabgp")
    assert len(line) == 1 and rule in line[0], line
    if rule != "not valid JSON":  # the whole file is unreadable: named by its path
        assert line[0].startswith(f"tabgp/{MIN_ID}: {field}: ")
    _one_line(_cli(root, "tabgp"), rule)


@pytest.mark.parametrize(("field", "value", "rule"), [
    ("solution", "../../etc/passwd", "inside the library folder"),
    ("solution", "solutions/../../../etc/passwd", "inside the library folder"),
    ("solution", "/etc/passwd", "not an absolute one"),
    ("instance", "../../etc/passwd", "plain name"),
    ("instance", "/etc/passwd", "plain name"),
])
def test_paths_out_of_the_library(lib, field, value, rule):
    root, recs, write = lib
    write("tabgp", {**recs["tabgp"], field: value})
    fails = _fails(root, "tabgp")
    assert len(fails) == 1 and fails[0].startswith(f"tabgp/{MIN_ID}: {field}: "), fails
    assert rule in fails[0]
    _one_line(_cli(root, "tabgp"), f"tabgp/{MIN_ID}", field, rule)


def test_a_symlink_out_of_the_library(lib, tmp_path):
    """A solution that is a good solution, but read through a link to a file outside."""
    root, recs, _ = lib
    outside = tmp_path / "elsewhere.json"
    sol = root / "tabgp" / recs["tabgp"]["solution"]
    shutil.move(sol, outside)
    sol.symlink_to(outside)
    fails = _fails(root, "tabgp")
    assert len(fails) == 1 and fails[0].startswith(f"tabgp/{MIN_ID}: solution: "), fails
    assert "outside the library folder" in fails[0]
    inst = root / "tabgp" / recs["tabgp"]["instance"]
    shutil.move(inst, tmp_path / "inst.json")
    inst.symlink_to(tmp_path / "inst.json")
    _one_line(_cli(root, "tabgp"), f"tabgp/{MIN_ID}: instance: ", "outside the library")
    inst.unlink()
    shutil.move(tmp_path / "inst.json", inst)
    real = root / "tabgp" / "solutions" / "real.json"
    sol.unlink()
    shutil.move(outside, real)
    sol.symlink_to(real)  # a link that stays inside is fine
    assert _fails(root, "tabgp") == []


@pytest.mark.parametrize(("value", "rule"), [
    ("0123456789abcdeF", "lower-case hex"), ("0123", "16 lower-case hex"),
    ("0" * 64, "16 lower-case hex"), ("0000000000000000", "is not the instance's"),
])
def test_wrong_hash(lib, value, rule):
    root, recs, write = lib
    write("tabgp", {**recs["tabgp"], "instance_hash": value})
    fails = _fails(root, "tabgp")
    assert fails and fails[0].startswith(f"tabgp/{MIN_ID}: instance_hash: ") and \
        rule in fails[0], fails
    _one_line(_cli(root, "tabgp"), "instance_hash", rule)


@pytest.mark.parametrize(("problem", "rid", "bound", "rule"), [
    ("tabgp", MIN_ID, 1.0, "status: optimal, but the bound 1 is not within 0.0001"),
    ("tabgp", MIN_ID, 3.0, "bound: 3 is on the wrong side"),    # above, for a min problem
    ("inc_oxc", MAX_ID, 3.0, "bound: 3 is on the wrong side"),  # below, for a max problem
    ("inc_oxc", MAX_ID, 7.0, "status: optimal, but the bound 7 is not within 0.0001"),
])
def test_optimal_with_a_bound_far_or_on_the_wrong_side(lib, problem, rid, bound, rule):
    root, recs, write = lib
    write(problem, {**recs[problem], "bound": bound})
    fails = _fails(root, problem)
    assert any(f.startswith(f"{problem}/{rid}: {rule}") for f in fails), fails
    assert _cli(root, problem).returncode == 2


def test_infeasible_solution(lib):
    root, recs, _ = lib
    (root / "tabgp" / recs["tabgp"]["solution"]).write_text(
        json.dumps({"problem": "tabgp", "assignment": [[0] * 12]}))
    fails = _fails(root, "tabgp")
    assert len(fails) == 1 and fails[0].startswith(f"tabgp/{MIN_ID}: solution: infeasible")
    _one_line(_cli(root, "tabgp"), f"tabgp/{MIN_ID}", "solution", "infeasible")


@pytest.mark.parametrize(("change", "field", "rule"), [
    ({"method": "rdda"}, "method", "proves no optimum"),
    ({"method": "highs:nonsense"}, "method", "proves no optimum"),
    ({"method": "bound:nonsense"}, "method", "proves no optimum"),
    ({"solver": ""}, "solver", "empty"),
    ({"solver": "pyscipopt 5.0"}, "solver", "not the solver"),
    ({"bound": None}, "status", "provenance.proof does not say"),
])
def test_optimal_proof_provenance(lib, change, field, rule):
    root, recs, write = lib
    write("tabgp", {**recs["tabgp"], **change})
    fails = _fails(root, "tabgp")
    assert len(fails) == 1 and fails[0].startswith(f"tabgp/{MIN_ID}: {field}: ") and \
        rule in fails[0], fails


def test_proof_rules_that_hold(lib):
    """An optimal record proven by a bound method, or with no bound but a stated proof; a
    best-known bound with the method that found it."""
    root, recs, write = lib
    tabgp = recs["tabgp"]
    write("tabgp", {**tabgp, "method": "bound:mip", "solver": "highspy 1.16.0"})
    assert _fails(root, "tabgp") == []
    write("tabgp", {**tabgp, "bound": None,
                    "provenance": {**tabgp["provenance"], "proof": "published, Table 3"}})
    assert _fails(root, "tabgp") == []
    best = {**tabgp, "status": "best-known", "method": "rts", "solver": "", "bound": 1.5}
    write("tabgp", best)
    assert _fails(root, "tabgp") == [
        f"tabgp/{MIN_ID}: provenance.bound: missing: the method 'rts' finds no bound, so the "
        "provenance must name the one that found the bound 1.5"]
    write("tabgp", {**best, "provenance": {**tabgp["provenance"], "bound": "bound:lp (0.1 s)"}})
    assert _fails(root, "tabgp") == []
    write("tabgp", {**best, "provenance": {**tabgp["provenance"], "bound": "guessed"}})
    assert "provenance.bound: 'guessed' must name" in _fails(root, "tabgp")[0]


@pytest.mark.parametrize(("change", "field", "rule"), [
    ({"status": "proven"}, "status", "input should be 'optimal' or 'best-known'"),
    ({"id": "../x"}, "id", "plain name"),
    ({"objective": True}, "objective", "valid number"),
    ({"seconds": -1.0}, "seconds", "greater than or equal to 0"),
    ({"seconds": "1"}, "seconds", "valid number"),
    ({"provenance": []}, "provenance", "valid dictionary"),
    ({"provenance": {"generator": "er", "seed": -3}}, "provenance.seed", "greater than"),
    ({"method": 5}, "method", "valid string"),
    ({"date": None}, "date", "valid string"),
    ({"extra": 1}, "extra", "unknown field"),
    ({"problem": "tap"}, "problem", "must be 'tabgp'"),
])
def test_schema_of_every_field(lib, change, field, rule):
    root, recs, write = lib
    write("tabgp", {**recs["tabgp"], **change})
    fails = _fails(root, "tabgp")
    assert len(fails) == 1 and f": {field}: " in fails[0] and rule in fails[0], fails
    with pytest.raises(DmloptError):
        references.records("tabgp", root)


def test_missing_field_and_duplicates(lib):
    root, recs, write = lib
    rec = dict(recs["tabgp"])
    del rec["solver"]
    write("tabgp", rec)
    assert _fails(root, "tabgp") == [f"tabgp/{MIN_ID}: solver: missing (the field is "
                                     "required)"]
    write("tabgp", json.dumps(recs["tabgp"]) + "," + json.dumps(recs["tabgp"]))
    assert _fails(root, "tabgp") == [f"tabgp/{MIN_ID}: id: {MIN_ID!r} is a duplicate"]


def test_many_bad_records_each_one_line(lib):
    root, recs, write = lib
    write("tabgp", {**recs["tabgp"], "seconds": -1})
    write("inc_oxc", {**recs["inc_oxc"], "solution": "/etc/passwd"})
    proc = _cli(root)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"dmlopt: references: inc_oxc/{MAX_ID}: solution: ")
    assert lines[1].startswith(f"dmlopt: references: tabgp/{MIN_ID}: seconds: ")
    assert lines[2] == "dmlopt: references: 2 check(s) failed in 2 records"


def test_not_a_list_or_not_json(lib):
    root, _, _ = lib
    (root / "tabgp" / "references.json").write_text('{"id": 1}')
    _one_line(_cli(root, "tabgp"), "must be a JSON list")
    (root / "tabgp" / "references.json").write_text("[1]")
    assert _fails(root, "tabgp") == [f"{root / 'tabgp' / 'references.json'}[0]: a JSON int "
                                     "where a record (object) is required"]


@pytest.mark.parametrize("value", ["9" * 400, "/no/such/folder"])
def test_a_references_root_that_is_no_folder_is_one_line(value, monkeypatch, capsys):
    """DMLOPT_REFERENCES_ROOT too long for the file system (it was OSError, exit 1) or not a
    folder: exit 2 naming the variable."""
    from dmlopt.cli import main

    monkeypatch.setenv(references.ROOT_ENV, value)
    assert main(["references"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dmlopt: {references.ROOT_ENV}: ") and err.count("\n") == 1
