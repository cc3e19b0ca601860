"""Solutions back from other solvers: every linear formulation of every problem, exported as LP
and MPS, solved by raw highspy and raw pyscipopt (no dmlopt code in between), their solution
files (HiGHS raw and pretty, SCIP .sol, a Gurobi-style file and a CPLEX XML file written here
from HiGHS's values) read back by ``dmlopt.read_solution`` and ``dmlopt validate``: the
evaluator's objective equals the optimum of ``dmlopt.solve`` and the objective each raw solver
reports. Then hostile files, each refused with exit 2 and one line."""

from __future__ import annotations

import json
import math
import os
import re
from functools import cache
from pathlib import Path

import highspy
import pyscipopt
import pytest

import dmlopt
from dmlopt import cli, registry, solution_files

#: formulations whose smallest instance is too slow here (none at present)
SLOW: set[str] = set()


def _linear() -> list[tuple[str, str]]:
    out = []
    for name in registry.names():
        prob = registry.get(name)
        for f in prob.formulations:
            solvers = prob.formulation(f).solvers
            if solvers and "highs" not in solvers:
                continue  # a nonlinear model (TAP's paper MINLP): SCIP only, no LP/MPS solve
            if f"{name}:{f}" not in SLOW:
                out.append((name, f))
    return out


@cache
def _instance(problem: str):
    return dmlopt.generate(problem, registry.get(problem).model.EXAMPLE, seed=0)


@cache
def _optimum(problem: str, formulation: str) -> float:
    res = dmlopt.solve(_instance(problem), formulation=formulation)
    assert res.status == "optimal"
    return res.objective


def _close(a: float, b: float, tol: float = 1e-6) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


def _highs(model: Path, out: Path) -> tuple[float, dict[str, float]]:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(model))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    h.writeSolution(str(out.with_suffix(".raw.sol")), 0)
    h.writeSolution(str(out.with_suffix(".pretty.sol")), 1)
    names = h.getLp().col_names_
    values = dict(zip(names, h.getSolution().col_value, strict=True))
    return h.getInfo().objective_function_value, values


def _scip(model: Path, out: Path) -> float:
    m = pyscipopt.Model()
    m.hideOutput()
    m.readProblem(str(model))
    m.optimize()
    assert m.getStatus() == "optimal"
    m.writeBestSol(str(out))
    return m.getObjVal()


def _gurobi(values: dict[str, float], objective: float, out: Path) -> None:
    """Gurobi's .sol: comments, then 'name value' for every column, zeros included (as Gurobi
    writes it)."""
    lines = ["# Solution for model written by raw highspy", f"# Objective value = {objective!r}"]
    lines += [f"{k} {v!r}" for k, v in values.items()]
    out.write_text("\n".join(lines) + "\n")


def _cplex(values: dict[str, float], objective: float, out: Path) -> None:
    rows = "\n".join(f'  <variable name="{k}" index="{i}" value="{v!r}"/>'
                     for i, (k, v) in enumerate(values.items()))
    out.write_text('<?xml version = "1.0" encoding="UTF-8" standalone="yes"?>\n'
                   '<CPLEXSolution version="1.2">\n'
                   f' <header problemName="m" objectiveValue="{objective!r}" '
                   'solutionStatusValue="101"/>\n'
                   f' <variables>\n{rows}\n </variables>\n</CPLEXSolution>\n')


@pytest.mark.parametrize("ext", ["lp", "mps"])
@pytest.mark.parametrize(("problem", "formulation"), _linear(),
                         ids=[f"{p}-{f}" for p, f in _linear()])
def test_raw_solvers_read_back(problem, formulation, ext, tmp_path, capsys):
    inst = _instance(problem)
    optimum = _optimum(problem, formulation)
    model = tmp_path / f"m.{ext}"
    dmlopt.export(inst, model, formulation)
    h_obj, h_values = _highs(model, tmp_path / "h.sol")
    s_obj = _scip(model, tmp_path / "scip.sol")
    assert _close(h_obj, optimum) and _close(s_obj, optimum), (h_obj, s_obj, optimum)
    _gurobi(h_values, h_obj, tmp_path / "gurobi.sol")
    _cplex(h_values, h_obj, tmp_path / "cplex.sol")
    expected = {"h.raw.sol": "highs", "h.pretty.sol": "highs-pretty", "scip.sol": "scip",
                "gurobi.sol": "gurobi", "cplex.sol": "cplex"}
    for file, fmt in expected.items():
        assert solution_files.parse(tmp_path / file).format == fmt
    # the Python entry point on one file; every file through the command line below, which
    # decodes it with the same dmlopt.read_solution (each decode builds the model again)
    sol = dmlopt.read_solution(inst, tmp_path / "h.raw.sol", formulation)
    ev = dmlopt.evaluate(inst, sol)
    assert ev.feasible and _close(ev.objective, optimum), (ev.violations, ev.objective)
    # the command line, every file: decoded, evaluated (exit 0: feasible), the decoded JSON
    # written with -o and evaluated again
    inst_file = tmp_path / "inst.json"
    dmlopt.save(inst, inst_file)
    for file in expected:
        out = tmp_path / f"{file}.json"
        code = cli.main(["validate", str(inst_file), "--solution", str(tmp_path / file),
                         "-f", formulation, "-o", str(out), "--json"])
        printed = json.loads(capsys.readouterr().out)
        assert code == 0 and printed["feasible"] is True, (file, printed)
        assert _close(printed["objective"], optimum), (file, printed)
        ev = dmlopt.evaluate(inst, out)
        assert ev.feasible and _close(ev.objective, optimum), (file, ev.violations)


def test_default_formulation_is_exports(tmp_path):
    """Without a formulation, read_solution builds the model `dmlopt export` writes."""
    inst = _instance("tabgp")
    model = tmp_path / "m.lp"
    dmlopt.export(inst, model)
    h_obj, _ = _highs(model, tmp_path / "h.sol")
    sol = dmlopt.read_solution(inst, tmp_path / "h.raw.sol")
    assert _close(dmlopt.evaluate(inst, sol).objective, h_obj)


# --- hostile files -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A tabgp instance, its exported paper model, HiGHS's raw solution file and values."""
    d = tmp_path_factory.mktemp("hostile")
    inst = _instance("tabgp")
    dmlopt.save(inst, d / "inst.json")
    dmlopt.export(inst, d / "m.lp", "paper")
    obj, values = _highs(d / "m.lp", d / "h.sol")
    return d, values, obj


def _validate(capsys, d: Path, sol: Path, *extra: str) -> tuple[int, str, str]:
    code = cli.main(["validate", str(d / "inst.json"), "--solution", str(sol), "-f", "paper",
                     *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _refused(capsys, d, sol, *needles, extra=()) -> str:
    code, out, err = _validate(capsys, d, sol, *extra)
    assert code == 2, (code, out, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("dmlopt: "), err
    for n in needles:
        assert n in err, (n, err)
    return err


def test_accepted_baseline(exported, capsys):
    d, _, obj = exported
    code, out, _ = _validate(capsys, d, d / "h.raw.sol")
    assert code == 0 and ["objective", f"{obj:.6g}"] in [ln.split() for ln in out.splitlines()]


def test_truncated(exported, capsys, tmp_path):
    d, _, _ = exported
    text = (d / "h.raw.sol").read_text()
    cut = tmp_path / "cut.sol"
    cut.write_text(text[: text.index("# Columns") + 40])
    _refused(capsys, d, cut, "truncated")
    pretty = (d / "h.pretty.sol").read_text()
    cut.write_text(pretty[: len(pretty) // 3])
    _refused(capsys, d, cut, "truncated")


def _plain(tmp_path: Path, values: dict[str, float], name: str = "p.sol") -> Path:
    path = tmp_path / name
    path.write_text("".join(f"{k} {v}\n" for k, v in values.items()))
    return path


def test_unknown_name_and_other_size(exported, capsys, tmp_path):
    d, values, _ = exported
    bad = dict(values)
    bad["x(99_0_0)"] = 1.0
    _refused(capsys, d, _plain(tmp_path, bad), "'x(99_0_0)'", "not a variable")
    # a solution of a larger instance: its names do not exist in this model
    big = dmlopt.generate("tabgp", {"generator": "er", "n": 9, "p": 0.5, "tau": 2}, seed=1)
    dmlopt.export(big, tmp_path / "big.lp", "paper")
    _highs(tmp_path / "big.lp", tmp_path / "big.sol")
    _refused(capsys, d, tmp_path / "big.raw.sol", "not a variable", "another instance")


def test_reported_objective_must_match(exported, capsys, tmp_path):
    """A file whose reported objective its values do not give in this model (a file of another
    instance with the same variable names) is refused."""
    d, values, obj = exported
    text = (d / "h.raw.sol").read_text()
    assert f"\nObjective {obj:g}\n" in text
    path = tmp_path / "other.sol"
    path.write_text(text.replace(f"\nObjective {obj:g}\n", f"\nObjective {obj + 2:g}\n"))
    _refused(capsys, d, path, "objective", "another instance")
    scip = tmp_path / "s.sol"
    body = "".join(f"{k} {v!r} \t(obj:0)\n" for k, v in values.items() if v)
    scip.write_text(f"objective value: {obj}\n{body}")
    code, _, _ = _validate(capsys, d, scip)
    assert code == 0
    scip.write_text(f"objective value: {obj + 2}\n{body}")
    _refused(capsys, d, scip, "objective")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_non_finite(exported, capsys, tmp_path, value):
    d, values, _ = exported
    name = next(iter(values))
    text = re.sub(rf"^{re.escape(name)} \S+$", f"{name} {value}",
                  (d / "h.raw.sol").read_text(), count=1, flags=re.M)
    path = tmp_path / "nan.sol"
    path.write_text(text)
    _refused(capsys, d, path, name, "non-finite")
    _refused(capsys, d, _plain(tmp_path, {**values, name: value}), "non-finite")


def test_out_of_bounds_and_fractional(exported, capsys, tmp_path):
    d, values, _ = exported
    name = next(iter(values))
    _refused(capsys, d, _plain(tmp_path, {**values, name: 2.0}), "outside the bounds",
             name)
    _refused(capsys, d, _plain(tmp_path, {**values, name: -0.01}), "outside the bounds")
    _refused(capsys, d, _plain(tmp_path, {**values, name: 0.5}), "not integral")
    # within the tolerance: rounded, accepted
    code, _, _ = _validate(capsys, d, _plain(tmp_path, {**values, name: values[name] + 5e-7}))
    assert code == 0


def test_garbage_fifo_empty_dir(exported, capsys, tmp_path):
    d, _, _ = exported
    garbage = tmp_path / "g.sol"
    garbage.write_bytes(bytes(range(256)) * 20)
    _refused(capsys, d, garbage, "binary")
    latin = tmp_path / "l.sol"
    latin.write_bytes(b"x(0_0_0) 1\n\xff\xfe 2\n")
    _refused(capsys, d, latin, "UTF-8")
    fifo = tmp_path / "f.sol"
    os.mkfifo(fifo)
    _refused(capsys, d, fifo, "not a regular file")
    empty = tmp_path / "e.sol"
    empty.write_text("")
    _refused(capsys, d, empty, "not a solution file")
    comments = tmp_path / "c.sol"
    comments.write_text("# Objective value = 3\n")
    _refused(capsys, d, comments, "names none")
    _refused(capsys, d, tmp_path, "not a regular file")
    prose = tmp_path / "prose.sol"
    prose.write_text("this is not a solution\nat all\n")
    _refused(capsys, d, prose, "expected one of", "HiGHS", "SCIP", "Gurobi", "CPLEX")


def test_glpsol_duplicates_xml_entities(exported, capsys, tmp_path):
    d, values, _ = exported
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(d / "m.lp"))
    h.run()
    h.writeSolution(str(tmp_path / "glp.sol"), 2)
    _refused(capsys, d, tmp_path / "glp.sol", "glpsol", "names no column")
    name = next(iter(values))
    dup = tmp_path / "dup.sol"
    dup.write_text(f"{name} 1\n{name} 0\n")
    _refused(capsys, d, dup, "given twice")
    bomb = tmp_path / "bomb.sol"
    bomb.write_text('<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "aaaa">]>\n'
                    '<CPLEXSolution><variables><variable name="&a;" value="1"/></variables>'
                    '</CPLEXSolution>\n')
    _refused(capsys, d, bomb, "DOCTYPE")
    broken = tmp_path / "broken.sol"
    broken.write_text('<CPLEXSolution><variables><variable name="x" value="1"/>')
    _refused(capsys, d, broken, "XML")


def test_output_checked_first(exported, capsys, tmp_path):
    d, _, _ = exported
    _refused(capsys, d, d / "h.raw.sol", "directory", extra=("-o", str(tmp_path)))
    code, _, err = _validate(capsys, d, d / "h.raw.sol", "-o", str(tmp_path / "s.json"))
    assert code == 0 and (tmp_path / "s.json").is_file()


def test_missing_variable_outside_zero(tmp_path):
    """A variable left out whose bounds exclude 0 is refused (a toy Pyomo model)."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], bounds=(1, 3))
    m.y = pyo.Var(bounds=(0, 1))
    parsed = solution_files.SolutionFile("gurobi", [("x(1)", 2.0), ("y", 1.0)], None)
    with pytest.raises(dmlopt.InstanceError, match=r"x\(2\).*missing"):
        solution_files.assign(m, parsed)
    parsed = solution_files.SolutionFile("gurobi", [("x(1)", 2.0), ("x(2)", 1.0)], None)
    assert solution_files.assign(m, parsed) == {"named": 2, "defaulted": 1}
    assert m.y.value == 0.0 and m.x[2].value == 1.0
    assert math.isclose(m.x[1].value, 2.0)


def test_pretty_style_precision(tmp_path):
    """HiGHS's pretty style prints 6 significant digits: a value at its bound may print half a
    unit beyond it and is read (clipped); the same value in a full-precision file is refused."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.f = pyo.Var(bounds=(0, 3.6231884057971))
    m.obj = pyo.Objective(expr=m.f)
    pretty = tmp_path / "p.sol"
    pretty.write_text(
        "Columns\n"
        "    Index Status        Lower        Upper       Primal         Dual  Type        Name\n"
        "        0                   0      3.62319      3.62319               Continuous  f\n"
        "Rows\n    Index Status        Lower        Upper       Primal         Dual  Name\n"
        "\nModel status: Optimal\n\nObjective value: 3.6231884057971\n")
    parsed = solution_files.parse(pretty)
    assert parsed.format == "highs-pretty" and parsed.objective == 3.6231884057971
    solution_files.assign(m, parsed)
    assert m.f.value == 3.6231884057971
    raw = solution_files.SolutionFile("gurobi", [("f", 3.62319)], None)
    with pytest.raises(dmlopt.InstanceError, match="outside the bounds"):
        solution_files.assign(m, raw)
