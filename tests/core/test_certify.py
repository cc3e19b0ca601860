"""``dmlopt.certify`` and ``dmlopt certify``: any solution evaluated and set against the best
bound known. Values checked independently: a library record's solution certified at gap 0 to
the library's value; a hand-made solution of a tiny instance whose objective is counted by
hand; the bound equal to the one ``dmlopt.bound`` computes on its own, or to the library's
where that is tighter; a solver's file read back. And every id ``dmlopt references`` prints
loads wherever an instance is accepted."""

from __future__ import annotations

import json
import re

import highspy
import pytest

import dmlopt
from dmlopt import certification, cli, io, loading, references
from dmlopt.errors import InstanceError, ObjectiveMismatchError, UnknownNameError
from dmlopt.models.tabgp import Instance, Solution

#: four vertices, two steps, two clusters of two, migration cost 0.5
TINY = Instance(name="tiny", n=4, edges=[[(0, 1), (1, 2), (2, 3)], [(0, 1), (2, 3)]], l=2, k=2,
                alpha=0.5)
#: by hand: step 0 cuts (0,1), (1,2), (2,3) = 3; step 1 cuts nothing; vertices 1 and 2 move:
#: 2 migrations x 0.5 = 1; objective 4
WORSE = Solution(assignment=[[0, 1, 0, 1], [0, 0, 1, 1]])
WORSE_OBJECTIVE = 4.0
#: {0,1} | {2,3} at both steps: only (1,2) is cut at step 0, nothing moves; the optimum, 1
BEST_OBJECTIVE = 1.0


def _record(rid: str) -> references.Record:
    rec = loading.record_of(rid)
    assert rec is not None, rid
    return rec


def test_hand_made_solution_of_a_tiny_instance():
    assert dmlopt.solve(TINY).objective == BEST_OBJECTIVE  # the optimum the bound approaches
    res = dmlopt.certify(TINY, WORSE, method="lp")
    bound = dmlopt.bound(TINY, "lp").bound
    assert res.status == "feasible" and res.feasible is True
    assert res.objective == WORSE_OBJECTIVE
    assert res.metrics["cut_cost"] == 3.0 and res.metrics["migration_cost"] == 1.0
    assert res.bound == bound and res.metrics["bound_computed"] == bound
    assert bound <= BEST_OBJECTIVE
    assert res.gap == pytest.approx((WORSE_OBJECTIVE - bound) / WORSE_OBJECTIVE, abs=1e-15)
    assert "reference" not in res.metrics  # no library record of this instance
    assert res.options == {"method": "lp"} and res.method == "certify"


def test_optimal_solution_is_certified_optimal():
    best = Solution(assignment=[[0, 0, 1, 1], [0, 0, 1, 1]])
    res = dmlopt.certify(TINY, best.model_dump(), method="enum")  # a dict works too
    assert res.objective == BEST_OBJECTIVE and res.status == "optimal"
    assert res.bound == dmlopt.bound(TINY, "enum").bound
    assert res.gap is not None and res.gap <= 1e-4


def test_default_method_is_dmlopt_bounds_default():
    res = dmlopt.certify(TINY, WORSE)
    ref = dmlopt.bound(TINY)
    assert res.bound == ref.bound and res.options["method"] == ref.method.split(":", 1)[1]


def test_known_optimal_library_solution_gap_zero_to_library_value():
    rec = _record("tabgp/fig42-p01-tau1-s0")
    assert rec.status == "optimal"
    res = dmlopt.certify("tabgp/fig42-p01-tau1-s0", rec.solution, method="lp")
    computed = dmlopt.bound(rec.load_instance(), "lp").bound
    assert res.objective == rec.objective
    assert res.metrics["reference"] == rec.objective and res.metrics["reference_optimal"] == 1.0
    assert res.metrics["reference_gap"] == 0.0
    assert res.metrics["bound_computed"] == computed
    assert res.metrics["bound_library"] == rec.bound
    assert res.bound == max(computed, rec.bound)  # a minimisation: the larger lower bound
    assert res.status == "optimal" and res.gap == pytest.approx(
        abs(rec.objective - res.bound) / rec.objective, abs=1e-15)
    assert f"library tabgp/{rec.id}" in res.message


def test_library_bound_tighter_than_the_computed_one():
    """QAPLIB's chr12a: the library's Hahn-Grant bound beats GLB; a heuristic's solution has
    its gap to the best-known value computed by hand."""
    rec = _record("tap/qaplib-chr12a")
    inst = dmlopt.load("tap/qaplib-chr12a")
    glb = dmlopt.bound(inst, "glb").bound
    assert glb < rec.bound  # the premise: the library's bound is the tighter one
    sol = dmlopt.heuristic(inst, "random", seed=1).solution
    obj = dmlopt.evaluate(inst, sol).objective
    res = dmlopt.certify(inst, sol, method="glb")
    assert res.objective == obj and res.bound == rec.bound
    assert res.metrics["bound_computed"] == glb and res.metrics["bound_library"] == rec.bound
    assert res.gap == pytest.approx((obj - rec.bound) / obj, abs=1e-15)
    assert res.metrics["reference"] == rec.objective and res.metrics["reference_optimal"] == 0.0
    assert res.metrics["reference_gap"] == pytest.approx((obj - rec.objective) / rec.objective,
                                                         abs=1e-15)
    assert "tighter than bound:glb" in res.message


def test_maximisation_record():
    rid = "inc_oxc/fig4-r2-s0"
    rec = _record(rid)
    res = dmlopt.certify(rid, rec.solution, method="lp")
    computed = dmlopt.bound(rec.load_instance(), "lp").bound
    assert res.objective == rec.objective and res.metrics["reference_gap"] == 0.0
    assert res.bound == min(computed, rec.bound)  # a maximisation: the smaller upper bound
    assert res.bound >= res.objective and res.status == "optimal"


def test_infeasible_solution():
    bad = Solution(assignment=[[0, 0, 0, 1], [0, 0, 1, 1]])  # cluster 0 holds 3 > k = 2
    res = dmlopt.certify(TINY, bad, method="lp")
    assert res.status == "infeasible" and res.feasible is False
    assert res.violations and "above k = 2" in res.violations[0]
    assert res.bound is None and res.gap is None
    assert res.message.startswith("infeasible solution: ")


def test_a_bound_beaten_by_the_solution_is_a_bug(monkeypatch):
    rec = _record("tabgp/fig42-p01-tau1-s0")
    fake = references.Record(**{**rec.__dict__, "bound": rec.objective + 1.0})
    monkeypatch.setattr(certification, "_record", lambda instance: fake)
    with pytest.raises(ObjectiveMismatchError, match="the bound is invalid"):
        dmlopt.certify(rec.load_instance(), rec.solution, method="lp")


def test_bad_input_is_refused():
    with pytest.raises(UnknownNameError, match="not a tabgp bound method"):
        dmlopt.certify(TINY, WORSE, method="nope")
    with pytest.raises(InstanceError, match="time_limit"):
        dmlopt.certify(TINY, WORSE, time_limit=-1)
    with pytest.raises(InstanceError, match="formulation"):
        dmlopt.certify(TINY, WORSE, formulation="pairs")
    with pytest.raises(InstanceError, match="not a dmlopt.models.tabgp.Solution"):
        dmlopt.certify(TINY, 42)
    other = dmlopt.heuristic(dmlopt.load("tap/qaplib-chr12a"), "random").solution
    with pytest.raises(InstanceError, match="models.tap"):
        dmlopt.certify(TINY, other)


def _highs_file(inst, tmp_path, formulation: str) -> tuple[str, float]:
    model = tmp_path / "model.mps"
    dmlopt.export(inst, model, formulation)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(model))
    h.run()
    sol = tmp_path / "model.sol"
    h.writeSolution(str(sol), 0)
    return str(sol), h.getInfo().objective_function_value


def test_solver_file_python_and_cli(tmp_path, capsys):
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 7, "p": 0.5, "tau": 2}, seed=1)
    path = tmp_path / "inst.json"
    io.save(inst, path)
    sol, highs_obj = _highs_file(inst, tmp_path, "pairs")
    res = dmlopt.certify(inst, sol, method="lp", formulation="pairs")
    assert res.objective == pytest.approx(highs_obj, abs=1e-6)
    assert res.bound == dmlopt.bound(inst, "lp").bound
    assert "read highs solution file, pairs formulation" in res.message
    code = cli.main(["certify", str(path), sol, "-f", "pairs", "-m", "lp", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["objective"] == res.objective and out["bound"] == res.bound
    assert out["gap"] == res.gap and out["status"] == res.status
    assert out["solution"] == res.solution.model_dump(mode="json")


def test_cli_text_and_exit_codes(tmp_path, capsys):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    io.save(TINY, tmp_path / "tiny.json")
    io.save(WORSE, good)
    io.save(Solution(assignment=[[0, 0, 0, 1], [0, 0, 1, 1]]), bad)
    inst = str(tmp_path / "tiny.json")
    assert cli.main(["certify", inst, str(good), "-m", "lp"]) == 0
    text = capsys.readouterr().out
    bound = dmlopt.bound(TINY, "lp").bound
    assert re.search(r"^objective\s+4$", text, re.M)
    assert re.search(rf"^bound\s+{bound:.10g}$", text, re.M)
    assert cli.main(["certify", inst, str(bad), "-m", "lp"]) == 3
    captured = capsys.readouterr()
    assert "violated: assignment[0]: cluster 0 holds 3 vertices" in captured.out
    assert cli.main(["certify", inst, str(good), "-f", "pairs"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dmlopt: formulation:") and "\n" not in err
    assert cli.main(["certify", inst, str(tmp_path / "missing.json")]) == 2


def test_library_id_certified_from_the_cli(capsys):
    rec = _record("tap/qaplib-chr12a")
    assert cli.main(["certify", "tap/qaplib-chr12a", str(rec.solution), "-m", "glb"]) == 0
    text = capsys.readouterr().out
    assert re.search(rf"^reference\s+{rec.objective:.10g}$", text, re.M)
    assert re.search(r"^reference gap\s+0 %$", text, re.M)


# --- every id `dmlopt references` prints loads ----------------------------------------------

def _printed_ids(capsys) -> list[str]:
    """``PROBLEM/ID`` of every row `dmlopt references` prints."""
    assert cli.main(["references"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:-1]  # the header and the counts left out
    return [f"{line.split()[0]}/{line.split()[1]}" for line in lines]


def test_every_printed_id_loads(capsys):
    ids = _printed_ids(capsys)
    assert ids and set(ids) == set(loading.library_ids())
    assert len(ids) == len(references.records())
    for rid in ids:  # every id, every problem: the record's instance, by content hash
        rec = _record(rid)
        assert io.instance_hash(dmlopt.load(rid)) == rec.instance_hash, rid


def test_printed_ids_work_in_every_command(capsys):
    """A sample of each problem's ids through `dmlopt validate` (the command of the issue),
    and one through each other command that takes an instance."""
    ids = _printed_ids(capsys)
    by_problem: dict[str, list[str]] = {}
    for rid in ids:
        by_problem.setdefault(rid.split("/")[0], []).append(rid)
    sample = [i for group in by_problem.values() for i in (group[0], group[-1])]
    for rid in sample:
        assert cli.main(["validate", rid]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert out.startswith(f"valid {rid.split('/')[0]} instance"), out
    rec = _record("tap/qaplib-chr12a")
    assert cli.main(["validate", "tap/qaplib-chr12a", "--solution", str(rec.solution)]) == 0
    assert cli.main(["heuristic", "tap/qaplib-nug12", "random"]) == 0
    assert cli.main(["bound", "tap/qaplib-nug12", "-m", "glb"]) == 0
    capsys.readouterr()
    res = dmlopt.heuristic("tap/qaplib-nug12", "random")  # and the Python entry points
    assert res.status == "feasible"


def test_bare_id_and_unknown_name(capsys):
    assert io.instance_hash(dmlopt.load("qaplib-nug12")) == \
        _record("tap/qaplib-nug12").instance_hash  # one library holds it: no problem needed
    with pytest.raises(InstanceError, match="nor a reference library id; did you mean "
                       r".*tap/qaplib-nug1\d"):
        dmlopt.load("tap/qaplib-nug1")
    assert cli.main(["validate", "tap/qaplib-nug1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "`dmlopt references`" in err


def test_a_file_wins_over_a_library_id(tmp_path, monkeypatch):
    """An existing path of the same name is the user's file, as before."""
    (tmp_path / "tap").mkdir()
    io.save(TINY, tmp_path / "tap" / "qaplib-nug12")
    monkeypatch.chdir(tmp_path)
    assert dmlopt.load("tap/qaplib-nug12") == TINY


def test_reference_gap_by_hand():
    assert certification.reference_gap(11.0, 10.0, "min") == pytest.approx(0.1)
    assert certification.reference_gap(9.0, 10.0, "min") == pytest.approx(-0.1)  # beats it
    assert certification.reference_gap(9.0, 10.0, "max") == pytest.approx(0.1)
    assert certification.reference_gap(11.0, -10.0, "max") == pytest.approx(-2.1)
    assert certification.reference_gap(0.0, 0.0, "min") == 0.0
    assert certification.reference_gap(1.0, 0.0, "min") is None


def test_no_bound_computed_falls_back_on_the_library(monkeypatch):
    rec = _record("tabgp/fig42-p01-tau1-s0")

    def refuse(*args, **kwargs):
        raise dmlopt.SolverError("no bound in time")

    monkeypatch.setattr(certification.api, "bound", refuse)
    res = dmlopt.certify(rec.load_instance(), rec.solution)
    assert res.bound == rec.bound and "bound_computed" not in res.metrics
    assert "no bound computed (no bound in time)" in res.message
    with pytest.raises(dmlopt.SolverError):  # a method named is the user's choice: raised
        dmlopt.certify(rec.load_instance(), rec.solution, method="lp")
    with pytest.raises(dmlopt.SolverError):  # no library bound to fall back on
        dmlopt.certify(TINY, WORSE)


def test_interrupted_bound_keeps_the_bound_so_far(monkeypatch, tmp_path, capsys):
    from dmlopt.errors import Interrupted
    from dmlopt.result import Result

    def stopped(instance, method=None, **kwargs):
        raise Interrupted(None, result=Result(problem="tabgp", method="bound:lp",
                                              status="bound", bound=0.5))

    monkeypatch.setattr(certification.api, "bound", stopped)
    with pytest.raises(Interrupted) as err:
        dmlopt.certify(TINY, WORSE, method="lp")
    res = err.value.result
    assert res.status == "interrupted" and res.bound == 0.5 and res.objective == 4.0
    assert res.gap == pytest.approx(3.5 / 4.0)
    io.save(TINY, tmp_path / "tiny.json")
    io.save(WORSE, tmp_path / "s.json")
    assert cli.main(["certify", str(tmp_path / "tiny.json"), str(tmp_path / "s.json")]) == 130
    assert re.search(r"^bound\s+0.5$", capsys.readouterr().out, re.M)
