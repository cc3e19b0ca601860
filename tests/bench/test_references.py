"""The reference library: every shipped record re-checks, the proven values of small
instances are re-solved and agree, and tampered records are caught by ``--verify``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import dmlopt
from dmlopt import references
from dmlopt.benchmarks import library


def test_every_shipped_record_verifies():
    recs = references.records()
    assert recs, "the library is empty"
    assert references.verify(recs) == []


OTHER = {"tabgp": ("scip", "strong"), "tap": ("highs", "rlt"), "inc_oxc": ("highs", "paper"),
         "rar": ("highs", "config"), "nara": ("highs", "offline-plain")}


def test_the_re_solved_problems_are_shipped():
    assert {"tabgp", "tap", "inc_oxc"} <= set(references.files())


@pytest.mark.parametrize("problem", sorted(OTHER))
def test_small_proven_values_are_re_solved_independently(problem):
    """Three (tabgp) or one of the smallest proven records of each problem, solved again from
    the instance by another formulation or solver where one exists; the values agree. (One
    test per problem: nara's offline-plain re-solve alone takes 10 CPU seconds.)"""
    solver, form = OTHER[problem]
    if problem not in references.files():
        pytest.skip(f"no {problem} references shipped")
    proven = [r for r in references.records(problem) if r.status == "optimal"]
    if not proven:
        pytest.skip(f"no proven {problem} record")
    proven.sort(key=lambda r: (r.seconds, r.id))
    for rec in proven[:3 if problem == "tabgp" else 1]:
        res = dmlopt.solve(rec.load_instance(), solver, formulation=form, threads=1,
                           time_limit=60, mip_gap=0.0)
        if res.status == "optimal":  # the paper's models may not prove within the limit
            assert res.objective == pytest.approx(rec.objective, rel=1e-6), rec.id


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("lib")
    made = library.run(["tabgp", "tap"], root, 60.0,
                       only={"fig42-p05-tau1-s0", "fig42-p01-tau3-s1", "qaplib-nug12"},
                       out=open("/dev/null", "w"))  # noqa: SIM115 - closed with the process
    assert made == 3
    return root


def _cli(root: Path, *argv: str) -> subprocess.CompletedProcess:
    code = ("import sys; from pathlib import Path; from dmlopt import references; "
            f"references.data_root = lambda: Path({str(root)!r}); "
            "from dmlopt.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, "references", *argv],
                          capture_output=True, text=True, timeout=300)


def test_build_resumes_and_verifies(tiny_root):
    assert library.run(["tabgp"], tiny_root, 60.0, only={"fig42-p05-tau1-s0"},
                       out=open("/dev/null", "w")) == 0  # noqa: SIM115 - already there
    recs = references.records(root=tiny_root)
    assert {r.id for r in recs} == {"fig42-p05-tau1-s0", "fig42-p01-tau3-s1", "qaplib-nug12"}
    assert references.verify(recs) == []
    nug = next(r for r in recs if r.id == "qaplib-nug12")
    assert nug.status == "best-known" and nug.objective == 578 and nug.instance is None
    ok = _cli(tiny_root, "--verify")
    assert ok.returncode == 0 and "3 records verified" in ok.stdout


def test_json_paths_are_absolute(tiny_root):
    proc = _cli(tiny_root, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for rec in data:
        assert Path(rec["solution"]).is_absolute() and Path(rec["solution"]).is_file()
        if rec["instance"] is not None:
            assert Path(rec["instance"]).is_absolute() and Path(rec["instance"]).is_file()
        assert {"problem", "id", "objective", "bound", "status", "provenance"} <= set(rec)


@pytest.mark.parametrize("tamper, expect", [
    (lambda r: r.update(objective=r["objective"] + 1), "objective: the solution evaluates"),
    (lambda r: r.update(bound=r["objective"] + 5), "bound:"),
    (lambda r: r.update(bound=r["objective"] - 5), "status: optimal, but the bound"),
    (lambda r: r.update(instance_hash="0" * 16), "instance_hash:"),
    (lambda r: r.update(solution="solutions/missing.json"), "does not exist"),
])
def test_tampered_records_fail_verify(tiny_root, tmp_path, tamper, expect):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(tiny_root, root)
    path = root / "tabgp" / "references.json"
    recs = json.loads(path.read_text())
    target = next(r for r in recs if r["status"] == "optimal" and r["objective"] > 0)
    tamper(target)
    path.write_text(json.dumps(recs))
    proc = _cli(root, "--verify")
    assert proc.returncode == 2 and proc.stdout == ""
    assert expect in proc.stderr, proc.stderr


def test_malformed_file_names_the_field(tmp_path):
    (tmp_path / "tabgp").mkdir()
    (tmp_path / "tabgp" / "references.json").write_text('[{"id": "x", "problem": "tabgp"}]')
    with pytest.raises(dmlopt.DmloptError, match=r"^tabgp/x: \w+: missing"):
        references.records(root=tmp_path)
    (tmp_path / "tabgp" / "references.json").write_text('{"not": "a list"}')
    with pytest.raises(dmlopt.DmloptError, match="must be a JSON list"):
        references.records(root=tmp_path)


def test_improve_keeps_the_better_value_and_the_tighter_bound(tiny_root, tmp_path):
    """A best-known record made from a poor start (random, no bound) is re-solved by
    ``--improve`` from its stored solution: it becomes the proven optimum of the original build;
    the merge never keeps the worse of two solutions or the looser of two bounds."""
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(tiny_root, root)
    path = root / "tabgp" / "references.json"
    recs = json.loads(path.read_text())
    rec = next(r for r in recs if r["id"] == "fig42-p01-tau3-s1")
    optimum = rec["objective"]
    inst = dmlopt.load(str(root / "tabgp" / rec["instance"]))
    poor = dmlopt.heuristic(inst, "random", seed=3)
    assert poor.objective > optimum  # a start the solver must improve on
    dmlopt.io.save(poor.solution, root / "tabgp" / rec["solution"])
    rec.update(objective=poor.objective, bound=None, status="best-known", seconds=1.5)
    path.write_text(json.dumps(recs))
    assert references.verify(references.records(root=root)) == []
    made = library.run(["tabgp"], root, 60.0, only={"fig42-p01-tau3-s1"},
                       out=open("/dev/null", "w"), improve=True)  # noqa: SIM115
    assert made == 1
    new = next(r for r in references.records(root=root) if r.id == "fig42-p01-tau3-s1")
    assert new.status == "optimal" and new.objective == optimum and new.bound is not None
    assert new.seconds > 1.5  # the runs' seconds add up
    assert references.verify([new]) == []
    # the merge itself: a worse new solution never replaces the stored one, the tighter bound
    # (the larger, for a min problem) wins
    old = {"solution": f"solutions/{new.id}.json", "objective": optimum, "bound": optimum - 3}
    sol, bound, status = library._merge(inst, "tabgp", old, root / "tabgp", poor.solution,
                                        optimum - 5)
    assert dmlopt.evaluate(inst, sol).objective == optimum
    assert bound == optimum - 3 and status == "best-known"


def test_frontier_table_is_generated_from_the_records(tiny_root, tmp_path):
    recs = references.records(root=tiny_root)
    base = next(r for r in recs if r.id == "qaplib-nug12")
    import dataclasses

    front = dataclasses.replace(base, id="front-1", objective=10.0, bound=8.0,
                                status="best-known", seconds=12.4,
                                provenance={**base.provenance, "table": "frontier: tiny"})
    table = library.frontier_table([*recs, front])
    lines = [ln for ln in table.splitlines() if ln.startswith("| tap")]
    assert len(lines) == 1  # only the frontier record, not the library's others
    # gap = |10 - 8| / 10 = 20 %
    assert "| `front-1` | tiny | best-known | 10 | 8 | 20.00 | 12 |" in lines[0]
    assert table.startswith("0 of 1 frontier instances proven optimal")
    page = tmp_path / "page.md"
    page.write_text("before\n<!-- frontier -->\nold\n<!-- /frontier -->\nafter\n")
    library.write_frontier(page, tiny_root, ["tap"])
    text = page.read_text()
    assert text.startswith("before\n<!-- frontier -->\n*Written by") and "old" not in text
    assert text.endswith("<!-- /frontier -->\nafter\n") and "No frontier record yet." in text
    bare = tmp_path / "bare.md"
    bare.write_text("no block\n")
    with pytest.raises(dmlopt.DmloptError, match="no <!-- frontier --> block"):
        library.write_frontier(bare, tiny_root, ["tap"])


@pytest.mark.parametrize("argv, words", [
    (["tabgp", "--frontier-docs", "nosuch-page.md"], "is not an existing Markdown page"),
    (["tabgp", "--time-limit", "nan"], "--time-limit: nan"),
    (["tabgp", "--frontier-seconds", "-5"], "--frontier-seconds: -5"),
    (["tabgp", "--only", "fig42-p01-tau1-s0", "nosuch-id"], "--only: nosuch-id is not an id"),
])
def test_builder_bad_input_is_one_line_and_exit_2(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert library.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("library: ") and words in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_default_solve_records_name_the_exact_method_that_proved_them(tmp_path):
    """A spec with ``default_solve`` runs ``dmlopt.solve`` without naming the formulation, so
    the problem's exact method runs first; a record it proves names that method (``bound:``)
    and verifies; without the flag the named formulation's MIP runs alone. Catches a flag the
    builder ignores and a record whose method ``--verify`` rejects."""
    gen = {"generator": "uniform", "topology": "alpha", "n_requests": 6}
    prov = {"paper": "001", "table": "test", "generator": "uniform",
            "params": {"topology": "alpha", "n_requests": 6}, "seed": 2}
    recs = {}
    for flag in (True, False):
        spec = library.Spec(f"tiny-{flag}", "nara", prov, gen, 2, "offline", "netfit",
                            default_solve=flag)
        recs[flag] = library.build(spec, tmp_path, 60.0)
    assert recs[True]["method"] == "bound:acceptance-sets"
    assert recs[False]["method"] == "highs:offline"
    assert recs[True]["status"] == recs[False]["status"] == "optimal"
    assert recs[True]["objective"] == recs[False]["objective"]
    path = tmp_path / "nara" / "references.json"
    library._write(path, list(recs.values()))
    assert references.verify(references.records(root=tmp_path)) == []


def test_records_decided_with_cpsat_name_ortools(tmp_path, monkeypatch):
    """A default solve whose exact method used CP-SAT on the way (a ``cpsat*`` metric above 0)
    records ortools beside highspy; one that did not records highspy alone. Catches a record
    whose provenance hides the second solver."""
    pytest.importorskip("ortools")
    real = dmlopt.solve
    used = {"flag": False}

    def solve(*args, **kwargs):
        res = real(*args, **kwargs)
        res.metrics["cpsat_fits_acceptance-sets"] = 1.0 if used["flag"] else 0.0
        return res

    monkeypatch.setattr(library.dmlopt, "solve", solve)
    gen = {"generator": "uniform", "topology": "alpha", "n_requests": 6}
    prov = {"paper": "001", "table": "test", "generator": "uniform",
            "params": {"topology": "alpha", "n_requests": 6}, "seed": 2}
    for flag in (False, True):
        used["flag"] = flag
        spec = library.Spec(f"tiny-{flag}", "nara", prov, gen, 2, "offline", "netfit",
                            default_solve=True)
        solver = library.build(spec, tmp_path, 60.0)["solver"]
        assert solver.startswith("highspy ")
        assert ("ortools" in solver) is flag
