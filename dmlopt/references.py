"""The reference library: certified values of shipped instances, checkable by anyone.

Every problem may ship ``data/<problem>/references.json``: a list of records, one per instance,
each with the instance (a shipped file, or a generator spec in its provenance), a solution file
the problem's evaluator re-scores, the objective, the best bound and the status (``optimal``:
proven at a relative gap of at most 1e-4; ``best-known``: a value with no such proof), the
method, solver, seconds, date and dmlopt version that made it (as QAPLIB's .sln and MIPLIB's
.solu files do). :func:`verify` re-checks every record; the benchmark report compares against a
record when no exact run in the store proves an optimum (:func:`lookup`).

This module is generic: it names no problem, it reads whatever the installed data holds.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from dmlopt import io
from dmlopt.errors import DmloptError, InstanceError

#: a proven optimum: |objective - bound| <= GAP * max(1, |objective|)
GAP = 1e-4
#: the evaluator's objective must equal the record's within this relative tolerance
TOL = 1e-6
STATUSES = ("optimal", "best-known")
FIELDS = ("id", "problem", "instance_hash", "solution", "provenance", "objective", "bound",
          "status", "method", "solver", "seconds", "date", "dmlopt_version")


@dataclass(frozen=True)
class Record:
    """One certified value. Paths are absolute (``instance`` is None when the instance is made by
    the generator spec in ``provenance``)."""

    id: str
    problem: str
    instance: Path | None
    instance_hash: str
    solution: Path
    provenance: dict
    objective: float
    bound: float | None
    status: str
    method: str
    solver: str
    seconds: float
    date: str
    dmlopt_version: str

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("id", "problem")}
        out["instance"] = None if self.instance is None else str(self.instance)
        out.update({k: getattr(self, k) for k in FIELDS[2:]})
        out["solution"] = str(self.solution)
        return out

    def load_instance(self) -> Any:
        """The instance: the shipped file, or the generator spec of the provenance."""
        from dmlopt import api

        if self.instance is not None:
            return io.load(self.instance)
        prov = self.provenance
        spec = {"generator": prov["generator"], **prov.get("params", {})}
        return api.generate(self.problem, spec, seed=int(prov.get("seed", 0)))


def data_root() -> Path:
    """The installed ``dmlopt.data`` directory."""
    return Path(str(resources.files("dmlopt.data")))


def files(root: Path | None = None) -> dict[str, Path]:
    """problem -> its references file, for every problem that ships one."""
    root = data_root() if root is None else root
    return {p.parent.name: p for p in sorted(root.glob("*/references.json"))}


def _field(rec: Any, key: str, where: str, kind: type | tuple) -> Any:
    if not isinstance(rec, dict) or key not in rec:
        raise InstanceError(f"{where}.{key}", None, "is missing")
    value = rec[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InstanceError(f"{where}.{key}", value, f"must be {getattr(kind, '__name__', kind)}")
    return value


def parse(path: Path) -> list[Record]:
    """The records of one references file; :class:`InstanceError` naming the file, the record's
    field and the rule when it is malformed."""
    data = io.read_json(path)
    problem = path.parent.name
    if not isinstance(data, list):
        raise InstanceError(str(path), type(data).__name__, "must be a JSON list of records")
    out, seen = [], set()
    for i, rec in enumerate(data):
        where = f"{path}[{i}]"
        rid = _field(rec, "id", where, str)
        if rid in seen:
            raise InstanceError(f"{where}.id", rid, "is a duplicate")
        seen.add(rid)
        if _field(rec, "problem", where, str) != problem:
            raise InstanceError(f"{where}.problem", rec["problem"], f"must be {problem!r}")
        status = _field(rec, "status", where, str)
        if status not in STATUSES:
            raise InstanceError(f"{where}.status", status, f"must be one of {STATUSES}")
        bound = rec.get("bound")
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int | float)):
            raise InstanceError(f"{where}.bound", bound, "must be a number or null")
        inst = rec.get("instance")
        if inst is not None and not isinstance(inst, str):
            raise InstanceError(f"{where}.instance", inst, "must be a path or null")
        prov = _field(rec, "provenance", where, dict)
        if inst is None and "generator" not in prov:
            raise InstanceError(f"{where}.provenance", prov,
                                "needs a generator when there is no instance file")
        out.append(Record(
            id=rid, problem=problem,
            instance=None if inst is None else (path.parent / inst).resolve(),
            instance_hash=_field(rec, "instance_hash", where, str),
            solution=(path.parent / _field(rec, "solution", where, str)).resolve(),
            provenance=prov, objective=float(_field(rec, "objective", where, int | float)),
            bound=None if bound is None else float(bound), status=status,
            method=_field(rec, "method", where, str), solver=str(rec.get("solver", "")),
            seconds=float(rec.get("seconds", 0.0)), date=str(rec.get("date", "")),
            dmlopt_version=str(rec.get("dmlopt_version", ""))))
    return out


def records(problem: str | None = None, root: Path | None = None) -> list[Record]:
    """Every record (of ``problem``) shipped under ``root`` (default: the installed data)."""
    found = files(root)
    if problem is not None:
        if problem not in found:
            raise DmloptError(f"references: no library for {problem!r} (libraries: "
                              f"{', '.join(found) or 'none'})")
        found = {problem: found[problem]}
    return [r for path in found.values() for r in parse(path)]


def check(rec: Record) -> list[str]:
    """What is wrong with one record (empty: it holds): the instance's hash, the solution
    re-scored by the evaluator, the bound on the right side, the status against the gap."""
    from dmlopt import api, registry

    problems: list[str] = []
    try:
        inst = rec.load_instance()
    except DmloptError as exc:
        return [f"instance: {exc}"]
    if io.instance_hash(inst) != rec.instance_hash:
        problems.append(f"instance_hash: {io.instance_hash(inst)} != {rec.instance_hash}")
    if not rec.solution.is_file():
        return problems + [f"solution: {rec.solution} does not exist"]
    try:
        ev = api.evaluate(inst, io.load_solution(inst, rec.solution))
    except DmloptError as exc:
        return problems + [f"solution: {exc}"]
    if not ev.feasible:
        problems.append(f"solution: infeasible ({'; '.join(ev.violations[:2])})")
    elif not math.isclose(ev.objective, rec.objective, rel_tol=TOL, abs_tol=TOL):
        problems.append(f"objective: the solution evaluates to {ev.objective:.10g}, the record "
                        f"says {rec.objective:.10g}")
    sense = registry.get(rec.problem).sense
    if rec.bound is not None:
        slack = TOL * max(1.0, abs(rec.objective))
        wrong = rec.bound > rec.objective + slack if sense == "min" else \
            rec.bound < rec.objective - slack
        if wrong:
            problems.append(f"bound: {rec.bound:.10g} is on the wrong side of the objective "
                            f"{rec.objective:.10g} for a {sense} problem")
    proven = rec.bound is not None and \
        abs(rec.objective - rec.bound) <= GAP * max(1.0, abs(rec.objective))
    if rec.status == "optimal" and not proven:
        problems.append(f"status: optimal, but the bound {rec.bound} is not within {GAP:g} of "
                        f"the objective {rec.objective:.10g}")
    return problems


def verify(recs: list[Record]) -> list[str]:
    """One line per failed check: ``problem/id: what``."""
    return [f"{r.problem}/{r.id}: {p}" for r in recs for p in check(r)]


@cache
def _by_hash() -> dict[str, Record]:
    try:
        return {r.instance_hash: r for r in records()}
    except DmloptError:
        return {}


def lookup(instance_hash: str) -> Record | None:
    """The library's record of the instance with this content hash, if any."""
    return _by_hash().get(instance_hash)


# --- the library as a MIPLIB-style benchmark set ---------------------------------------------

#: the largest model exported by default (variables, constraints); ``size_limit`` raises it
EXPORT_LIMIT = (100_000, 1_000_000)

#: the .solu keyword of each status (MIPLIB: ``=opt=`` proven, ``=best=`` best known)
SOLU_KEYWORDS = {"optimal": "=opt=", "best-known": "=best="}


@dataclass(frozen=True)
class Exported:
    """One record written as a model: its name in the .solu file (``problem/id``, the path
    under the set's directory without ``.mps.gz``), the formulation, the .solu value and whether
    that value was checked on the model (the record's solution set on the model's variables
    gives this objective)."""

    name: str
    path: Path
    formulation: str
    status: str
    objective: float
    checked: bool


def _linear(problem: Any, formulation: str) -> bool:
    """Whether HiGHS can solve the formulation (the quadratic ones name SCIP as their only
    solver); the written model is checked for products again."""
    allowed = problem.formulation(formulation).solvers
    return not allowed or "highs" in allowed


def _choose(rec: Record, inst: Any, limits: Any) -> tuple[str | None, str]:
    """The formulation to export a record in: the one that made the record when it is linear
    and fits the limits, else the smallest linear one that fits; (None, why) when none does."""
    from dmlopt import registry

    problem = registry.get(rec.problem)
    linear = [f for f in problem.formulations if _linear(problem, f)]
    if not linear:
        return None, f"{rec.problem} has no linear formulation"
    sizes = {f: problem.formulation(f).estimate_size(inst) for f in linear}
    fits = [f for f in linear if sizes[f][0] <= limits.variables and
            sizes[f][1] <= limits.constraints]
    made_by = rec.method.split(":", 1)[1] if rec.method.startswith("highs:") else None
    if made_by in fits:
        return made_by, ""
    if fits:
        return min(fits, key=lambda f: sum(sizes[f])), ""
    smallest = min(linear, key=lambda f: sum(sizes[f]))
    v, c = sizes[smallest]
    return None, (f"too large: the smallest linear formulation ({smallest!r}) has about {v:,} "
                  f"variables and {c:,} constraints, above {limits.variables:,} / "
                  f"{limits.constraints:,} (raise it with --size-limit V,C)")


def _model_objective(problem: Any, formulation: str, model: Any, inst: Any,
                     solution: Any) -> float | None:
    """The model's objective at the record's solution (the formulation's warm start sets the
    variables), or None when the start leaves a variable of the objective unset."""
    import pyomo.environ as pyo
    from pyomo.core.expr.visitor import identify_variables

    entry = problem.formulation(formulation)
    try:
        (entry.warm_start or problem.model.warm_start)(model, inst, solution)
    except DmloptError:
        return None
    obj = next(model.component_data_objects(pyo.Objective, active=True))
    if any(v.value is None for v in identify_variables(obj.expr, include_fixed=True)):
        return None
    return float(pyo.value(obj.expr))


def export_set(directory: str | Path, problems: list[str] | None = None,
               size_limit: Any = None, ids: list[str] | None = None,
               log: Any = None) -> tuple[list[Exported], list[str]]:
    """Write the reference library as a benchmark set: one gzip-compressed MPS model per record
    under ``directory/<problem>/<id>.mps.gz``, ``directory/references.solu`` in MIPLIB's format
    (``=opt= NAME VALUE`` for proven optima, ``=best= NAME VALUE`` for best-known values) and
    ``directory/README.md``.

    Parameters
    ----------
    directory : must not exist or be empty; nothing is written outside it, every file
        atomically.
    problems : the problems whose records to export (default: every library).
    size_limit : ``(variables, constraints)`` above which a record's model is skipped (default
        :data:`EXPORT_LIMIT`).
    ids : only the records with these ids (default: all).
    log : called with one line per skipped record (default: nothing).

    Returns
    -------
    (exported, skipped)
        The records written, and one line per record not written (no linear formulation, or
        too large).

    Raises
    ------
    InstanceError
        A directory that exists and is not empty, or a record whose model objective at its
        solution differs from the record's objective (a formulation whose objective differs
        from the evaluator's: never written as a wrong .solu value).

    References
    ----------
    MIPLIB 2017's .solu format (https://miplib.zib.de); docs/interop.md.
    """
    import gzip

    from dmlopt import api, contract, registry

    root = Path(directory)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise InstanceError("--export", str(root), "must not exist or be an empty directory")
    if size_limit is None:
        size_limit = EXPORT_LIMIT
    limits = contract.limits_from(size_limit)
    recs = [r for p in (problems or [None]) for r in records(p)]
    if ids is not None:
        recs = [r for r in recs if r.id in set(ids)]
    exported: list[Exported] = []
    skipped: list[str] = []
    solu: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    for rec in recs:
        name = f"{rec.problem}/{rec.id}"
        inst = rec.load_instance()
        formulation, why = _choose(rec, inst, limits)
        if formulation is None:
            skipped.append(f"{name}: {why}")
            if log:
                log(f"skipped {name}: {why}")
            continue
        problem = registry.get(rec.problem)
        model = api.build(inst, formulation, (limits.variables, limits.constraints))
        target = root / rec.problem / f"{rec.id}.mps.gz"
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, raw = tempfile.mkstemp(prefix="_tmp_", suffix=".mps", dir=target.parent)
        os.close(fd)
        tmp = Path(raw)
        quiet = logging.getLogger("pyomo.core")
        level = quiet.level
        quiet.setLevel(logging.ERROR)  # a constant objective (0 everywhere) is not news here
        try:
            counts = api.write_model(model, tmp)
            if counts["quadratic"]:
                raise InstanceError(name, formulation, "wrote a quadratic model")
            with open(tmp, "rb") as src, io.atomic_open(target, "wb") as dst, \
                    gzip.GzipFile(f"{rec.id}.mps", "wb", fileobj=dst, mtime=0) as gz:
                while chunk := src.read(1 << 20):
                    gz.write(chunk)
        finally:
            quiet.setLevel(level)
            tmp.unlink(missing_ok=True)
        value = _model_objective(problem, formulation, model, inst,
                                 io.load_solution(inst, rec.solution))
        if value is not None and not math.isclose(value, rec.objective, rel_tol=TOL,
                                                  abs_tol=TOL):
            target.unlink()
            raise InstanceError(name, value, f"is the {formulation!r} model's objective at the "
                                f"record's solution, not the record's {rec.objective!r}")
        exported.append(Exported(name, target, formulation, rec.status, rec.objective,
                                 value is not None))
        solu.append(f"{SOLU_KEYWORDS[rec.status]} {name} {rec.objective!r}")
    io.atomic_write_text(root / "references.solu", "\n".join(solu) + ("\n" if solu else ""))
    io.atomic_write_text(root / "README.md", _readme(exported, skipped))
    return exported, skipped


def _readme(exported: list[Exported], skipped: list[str]) -> str:
    opt = sum(1 for e in exported if e.status == "optimal")
    lines = [
        "# dmlopt reference library: benchmark set",
        "",
        f"{len(exported)} models from dmlopt's reference library ({opt} with a proven optimum, "
        f"{len(exported) - opt} with a best-known value), written by `dmlopt references "
        "--export`. Each `<problem>/<id>.mps.gz` is a gzip-compressed free MPS file with the "
        "symbolic variable names dmlopt gives (`x(1_2)` for `x[1,2]`); HiGHS, SCIP, Gurobi and "
        "CPLEX read it as it is.",
        "",
        "`references.solu` gives each model's value in MIPLIB's format: `=opt= NAME VALUE` (a "
        "proven optimum), `=best= NAME VALUE` (the best known value, no proof); NAME is the "
        "model's path without `.mps.gz`. The values are objectives of these models, the values "
        "a solver reports. No record is infeasible, so there is no `=inf=` line.",
        "",
        "## Checking a solution",
        "",
        "Solve a model, write the solver's solution file (HiGHS `writeSolution`, raw or pretty "
        "style; SCIP `.sol`; Gurobi `.sol`; CPLEX XML `.sol`; or plain `name value` lines), and "
        "let dmlopt map it back onto the instance and re-score it with the problem's "
        "evaluator:",
        "",
        "```text",
        "dmlopt validate PROBLEM/ID --solution FILE --formulation FORMULATION",
        "```",
        "",
        "`PROBLEM/ID` is the shipped instance (`dmlopt references --json` gives its path and a "
        "generator spec when it is not shipped). Exit 0: feasible, with the evaluated objective "
        "printed; 3: infeasible; 2: the file does not match the model.",
        "",
        "| model | formulation | status | value | value checked on the model |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| `{e.name}` | `{e.formulation}` | {e.status} | {e.objective:.10g} | "
              f"{'yes' if e.checked else 'no (partial start)'} |" for e in exported]
    if skipped:
        lines += ["", "## Not exported", ""] + [f"- {s}" for s in skipped]
    return "\n".join(lines) + "\n"
