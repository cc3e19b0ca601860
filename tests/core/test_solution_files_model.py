"""A solution file belongs to its model (issue 51, item 2): a file of another instance of the
same size is refused, a vertex in two clusters or in none is infeasible (never decoded by an
argmax), a malformed objective line is refused in one line, a text file is streamed in bounded
memory, and the arguments are checked as :func:`dmlopt.load` checks them."""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

import highspy
import pyomo.environ as pyo
import pytest

import dmlopt
from dmlopt import cli, io, registry, solution_files

SPEC = {"generator": "er", "n": 6, "p": 0.5, "tau": 2, "l": 2}


def _highs(model: Path, style: int = 0) -> tuple[Path, dict[str, float]]:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(model))
    h.run()
    out = model.with_suffix(f".s{style}.sol")
    h.writeSolution(str(out), style)
    return out, dict(zip(h.getLp().col_names_, h.getSolution().col_value, strict=True))


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two TABGP instances of the same size, each exported, HiGHS's raw file and values for
    each: the second (seed 0) has a subset of the edges of the first (seed 1), so its file names
    a subset of the first model's columns, and its objective is what its values give there."""
    d = tmp_path_factory.mktemp("pair")
    out = []
    for i, seed in enumerate((1, 0)):
        inst = dmlopt.generate("tabgp", SPEC, seed=seed)
        dmlopt.save(inst, d / f"i{i}.json")
        dmlopt.export(inst, d / f"m{i}.lp", "paper")
        out.append((inst, *_highs(d / f"m{i}.lp")))
    return d, out


def _validate(capsys, inst_file: Path, sol: Path) -> tuple[int, str, str]:
    code = cli.main(["validate", str(inst_file), "--solution", str(sol), "-f", "paper"])
    out, err = capsys.readouterr()
    return code, out, err


def _write(path: Path, values: dict[str, float], objective: float | None = None) -> Path:
    head = f"# Objective value = {objective!r}\n" if objective is not None else ""
    path.write_text(head + "".join(f"{k} {v!r}\n" for k, v in values.items()))
    return path


def test_other_instance_of_the_same_size_refused(pair, capsys):
    d, [(_, sol0, v0), (_, sol1, v1)] = pair
    assert _validate(capsys, d / "i0.json", sol0)[0] == 0
    assert set(v1) < set(v0)  # a subset of the columns: every name is a variable here
    code, out, err = _validate(capsys, d / "i0.json", sol1)
    assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
    assert "another instance" in err
    # the same refusal through the library, with the column named
    with pytest.raises(dmlopt.InstanceError, match=r"leaves out|not a variable"):
        dmlopt.read_solution(pair[1][0][0], sol1, "paper")


def test_complete_format_missing_column_named(pair, tmp_path):
    _, [(inst, _, values), _] = pair
    name = next(k for k, v in values.items() if v == 0.0)
    path = _write(tmp_path / "g.sol", {k: v for k, v in values.items() if k != name})
    with pytest.raises(dmlopt.InstanceError, match=rf"'{re.escape(name)}'.*leaves out.*1 of its "
                       rf"{len(values)} columns"):
        dmlopt.read_solution(inst, path, "paper")


def test_sparse_formats_read_nonzeros_only(pair, tmp_path):
    """HiGHS's sparse raw style (4) and SCIP list only nonzeros: read, the rest set to 0."""
    d, [(inst, _, values), _] = pair
    sparse, _ = _highs(d / "m0.lp", 4)
    parsed = solution_files.parse(sparse)
    assert parsed.format == "highs" and not parsed.complete
    assert sum(1 for _ in parsed.values) == sum(1 for v in values.values() if v != 0.0)
    ev = dmlopt.evaluate(inst, dmlopt.read_solution(inst, sparse, "paper"))
    assert ev.feasible


@pytest.mark.parametrize("how", ["two", "none"])
def test_vertex_in_two_clusters_or_none_is_infeasible(pair, capsys, tmp_path, how):
    d, [(inst, _, values), _] = pair
    x = {k: v for k, v in values.items() if k.startswith("x(0_")}  # vertex 0, every cluster/step
    step0 = sorted(k for k in x if k.endswith("_0)"))
    assert len(step0) == inst.l and sum(x[k] for k in step0) == pytest.approx(1.0)
    changed = dict(values)
    for k in step0:
        changed[k] = 1.0 if how == "two" else 0.0
    path = _write(tmp_path / f"{how}.sol", changed)
    sol = dmlopt.read_solution(inst, path, "paper")
    assert sol.assignment[0][0] == -1
    ev = dmlopt.evaluate(inst, sol)
    assert not ev.feasible and any("assignment[0][0]" in v for v in ev.violations)
    code, out, _ = _validate(capsys, d / "i0.json", path)
    assert code == 3 and "violated: assignment[0][0]" in out


def _zero(model) -> None:
    for var in model.component_data_objects(pyo.Var):
        if not var.fixed:
            var.set_value(0.0, skip_validation=True)


@pytest.mark.parametrize("problem", ["tabgp", "tap", "inc_oxc"])
def test_decoders_report_unassigned_never_argmax(problem):
    """Every variable at 0 (each item in no place): every problem's decoder, every linear
    formulation, gives a solution the evaluator finds infeasible."""
    prob = registry.get(problem)
    inst = dmlopt.generate(problem, prob.model.EXAMPLE, seed=0)
    for form in prob.formulations:
        if prob.formulation(form).solvers and "highs" not in prob.formulation(form).solvers:
            continue
        model = dmlopt.build(inst, form)
        _zero(model)
        sol = dmlopt.decode(inst, model, form)
        ev = dmlopt.evaluate(inst, sol)
        assert not ev.feasible, (problem, form, ev)
        # nothing placed: every item decodes to -1, not to the first place an argmax finds
        if problem == "tabgp":
            assert {v for row in sol.assignment for v in row} == {-1}
        elif problem == "tap":
            assert set(sol.assignment) == {-1}
        else:
            assert {k for k, _ in sol.ps} == {-1}
            assert {k for row in sol.workers for k in row} == {-1}


def test_rar_served_request_without_ring_is_an_error():
    prob = registry.get("rar")
    inst = dmlopt.generate("rar", prob.model.EXAMPLE, seed=0)
    for form in prob.formulations:
        model = dmlopt.build(inst, form)
        _zero(model)
        model.eta[0].set_value(1.0, skip_validation=True)
        with pytest.raises(ValueError, match="request 0 is served .* 0 "):
            dmlopt.decode(inst, model, form)
        if getattr(model, "_rar", "") == "config":  # two configurations of one request
            j = min(k[0] for k in model.z)
            _zero(model)
            model.eta[j].set_value(1.0, skip_validation=True)
            for c in [k for k in model.z if k[0] == j][:2]:
                model.z[c].set_value(1.0, skip_validation=True)
            with pytest.raises(ValueError, match=f"request {j} is served .* 2 configurations"):
                dmlopt.decode(inst, model, form)


def test_objective_line_without_value_refused(pair, capsys, tmp_path):
    d, [(_, sol0, _), _] = pair
    text = sol0.read_text()
    lines = [("Objective " if ln.startswith("Objective ") else ln) for ln in text.split("\n")]
    assert lines != text.split("\n")
    bad = tmp_path / "o.sol"
    bad.write_text("\n".join(lines))
    code, out, err = _validate(capsys, d / "i0.json", bad)
    assert code == 2 and out == "" and err.count("\n") == 1 and "states no objective" in err


def test_duplicate_name_refused(pair, tmp_path):
    _, [(inst, _, values), _] = pair
    name = next(iter(values))
    path = tmp_path / "d.sol"
    path.write_text("".join(f"{k} {v!r}\n" for k, v in values.items()) + f"{name} 0\n")
    with pytest.raises(dmlopt.InstanceError, match="given twice"):
        dmlopt.read_solution(inst, path, "paper")


def test_text_file_streamed_in_bounded_memory(tmp_path):
    """A 'name value' file of about 6 MB: parsing it holds one line at a time (the old reader
    held the text and every pair, several times the file's size)."""
    path = tmp_path / "big.sol"
    with path.open("w") as fh:
        for i in range(300_000):
            fh.write(f"x({i}_{i % 7}_0) 0.0\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        parsed = solution_files.parse(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert parsed.format == "gurobi" and not isinstance(parsed.values, list)
    assert peak < size / 3, (peak, size)
    assert sum(1 for _ in parsed.values) == 300_000


def test_byte_cap_and_long_line(tmp_path, monkeypatch):
    path = tmp_path / "s.sol"
    path.write_text("a 1\n" * 1000)
    monkeypatch.setattr(io, "MAX_FILE_BYTES", 1000)
    with pytest.raises(dmlopt.InstanceError, match="above the limit 1000"):
        solution_files.parse(path)
    monkeypatch.setattr(io, "MAX_FILE_BYTES", 10**9)
    path.write_text("a " + "1" * (solution_files.MAX_LINE_BYTES + 10) + "\n")
    with pytest.raises(dmlopt.InstanceError, match="longer than"):
        solution_files.parse(path)


@pytest.mark.parametrize("arg", [None, 3, b"s.sol", "s\x00.sol"])
def test_path_arguments_typed(arg):
    inst = dmlopt.load("tabgp/er12-p03-tau1-s0")
    for fn in (dmlopt.read_solution, dmlopt.load_solution):
        if fn is dmlopt.load_solution and arg in (None, 3):
            continue  # a parsed JSON value: refused as "a JSON null/number" below
        with pytest.raises(dmlopt.InstanceError, match="^solution: "):
            fn(inst, arg)
    with pytest.raises(dmlopt.InstanceError, match="JSON object is required"):
        dmlopt.load_solution(inst, None)


def test_load_solution_takes_a_dict_instance(tmp_path):
    inst = dmlopt.load("tabgp/er12-p03-tau1-s0")
    sol = registry.get("tabgp").model.Solution(assignment=[[v % inst.l for v in range(inst.n)]])
    dmlopt.save(sol, tmp_path / "s.json")
    got = dmlopt.load_solution(inst.model_dump(mode="json"), tmp_path / "s.json")
    assert got == sol


def test_read_solution_takes_a_dict_instance_with_a_solver_file(pair):
    """A solver's file read for an instance given as a dict, as bound and solve take it."""
    d, [(inst, sol_file, _), _] = pair
    got = dmlopt.read_solution(inst.model_dump(mode="json"), sol_file, "paper")
    assert got == dmlopt.read_solution(inst, sol_file, "paper")
