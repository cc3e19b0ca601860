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

import json
import logging
import math
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import pydantic

from dmlopt import io
from dmlopt.errors import DmloptError, InstanceError
from dmlopt.pyomo_log import pyomo_to_stderr
from dmlopt.validation import INT64, rule
from dmlopt.validation import parse as _validate

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


#: set it to a folder holding ``<problem>/references.json`` to read (and verify) that library
#: instead of the installed one
ROOT_ENV = "DMLOPT_REFERENCES_ROOT"

#: an id, an instance file name or one part of a solution path: letters, digits, ``.``, ``_``
#: and ``-``, starting with a letter or digit (so never ``.`` or ``..``)
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_PLAIN_RULE = "must be a plain name (letters, digits, '.', '_', '-', starting with a letter or " \
    "digit, at most 200 characters)"
#: the length of :func:`dmlopt.io.instance_hash`
HASH_DIGITS = 16


def data_root() -> Path:
    """The folder the library is read from.

    Returns
    -------
    Path
        ``$DMLOPT_REFERENCES_ROOT`` when it is set (a folder of ``<problem>/references.json``
        files, e.g. a library being built or a copy to check), else the installed
        ``dmlopt.data`` directory.
    """
    env = os.environ.get(ROOT_ENV)
    if env:
        try:
            ok = "\0" not in env and Path(env).is_dir()
        except OSError as exc:  # a name the file system cannot take (too long, ...)
            raise InstanceError(ROOT_ENV, env[:80], f"is not a folder ({exc.strerror})") from None
        if not ok:
            raise InstanceError(ROOT_ENV, env[:80], "must be a folder of "
                                "<problem>/references.json files")
        return Path(env)
    return Path(str(resources.files("dmlopt.data")))


def files(root: Path | None = None) -> dict[str, Path]:
    """problem -> its references file, for every problem that ships one."""
    root = data_root() if root is None else root
    return {p.parent.name: p for p in sorted(root.glob("*/references.json"))}


def _plain(field: str, value: str) -> str:
    if len(value) > 200 or not _PLAIN.fullmatch(value):
        raise rule(field, value, _PLAIN_RULE)
    return value


class _Provenance(pydantic.BaseModel):
    """Where a record comes from: free-form text keys (paper, table, ...) beside the typed
    ones. ``generator``/``params``/``seed`` make the instance when no file is shipped;
    ``bound`` names the method that found the record's bound when the record's own method
    proves none (``bound:NAME (S s)``); ``proof`` says how an ``optimal`` record with no bound
    was proven."""

    model_config = pydantic.ConfigDict(strict=True, allow_inf_nan=False, extra="allow",
                                       frozen=True)
    generator: str | None = None
    params: dict[str, Any] = pydantic.Field(default_factory=dict)
    seed: int = pydantic.Field(0, ge=0, le=INT64[1])
    bound: str | None = None
    proof: str | None = None


class _RecordFile(pydantic.BaseModel):
    """One record as ``references.json`` holds it: every field required, none unknown, numbers
    finite, names plain, paths relative and inside the problem's folder."""

    model_config = pydantic.ConfigDict(strict=True, allow_inf_nan=False, extra="forbid",
                                       frozen=True)
    id: str
    problem: str
    instance: str | None
    instance_hash: str
    solution: str
    provenance: _Provenance
    objective: float
    bound: float | None
    status: Literal["optimal", "best-known"]
    method: str = pydantic.Field(min_length=1)
    solver: str
    seconds: float = pydantic.Field(ge=0)
    date: str
    dmlopt_version: str

    @pydantic.field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return _plain("id", v)

    @pydantic.field_validator("instance")
    @classmethod
    def _instance(cls, v: str | None) -> str | None:
        return None if v is None else _plain("instance", v)

    @pydantic.field_validator("instance_hash")
    @classmethod
    def _hash(cls, v: str) -> str:
        if len(v) != HASH_DIGITS or any(c not in "0123456789abcdef" for c in v):
            raise rule("instance_hash", v, f"must be {HASH_DIGITS} lower-case hex digits "
                       "(dmlopt.io.instance_hash)")
        return v

    @pydantic.field_validator("solution")
    @classmethod
    def _solution(cls, v: str) -> str:
        if v.startswith(("/", "\\")) or (len(v) > 1 and v[1] == ":"):
            raise rule("solution", v, "must be a relative path inside the library folder, not "
                       "an absolute one")
        parts = v.split("/")
        if ".." in parts or "." in parts:
            raise rule("solution", v, "must stay inside the library folder (no '.' or '..')")
        for part in parts:
            if len(part) > 200 or not _PLAIN.fullmatch(part):
                raise rule("solution", v, "must be '/'-separated plain names (letters, digits, "
                           "'.', '_', '-')")
        return v

    @pydantic.model_validator(mode="after")
    def _generator(self) -> _RecordFile:
        if self.instance is None and self.provenance.generator is None:
            raise rule("provenance", self.provenance.model_dump(),
                       "needs a generator when there is no instance file")
        return self


def _inside(folder: Path, rel: str, field: str) -> Path:
    """``folder/rel`` resolved (links followed); :class:`InstanceError` when it leaves
    ``folder``."""
    target = (folder / rel).resolve()
    if not target.is_relative_to(folder.resolve()):
        raise InstanceError(field, rel, f"leads to {target}, outside the library folder "
                            f"{folder.resolve()} (a link pointing out)")
    return target


def _read(path: Path) -> list:
    """The JSON list of a references file, read with the bounded reader; ``NaN`` and
    ``Infinity`` are read as numbers here so that the record's schema names them."""
    raw = io.read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstanceError("file", str(path), f"is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=float)
    except ValueError as exc:  # JSONDecodeError, or an integer of more than 4300 digits
        raise InstanceError("file", str(path), f"is not valid JSON ({exc})") from None
    except RecursionError:
        raise InstanceError("file", str(path), "is nested too deeply") from None
    io.check_depth(data, str(path))
    if not isinstance(data, list):
        raise InstanceError(str(path), type(data).__name__, "must be a JSON list of records")
    return data


def _parse_all(path: Path) -> tuple[list[Record], list[str]]:
    """The valid records of one references file, and one line per invalid one
    (``problem/id: field: value rule``; ``FILE[i]: ...`` when the id itself is bad)."""
    folder = path.parent
    problem = folder.name
    out: list[Record] = []
    bad: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(_read(path)):
        rid = item.get("id") if isinstance(item, dict) else None
        plain = isinstance(rid, str) and len(rid) <= 200 and _PLAIN.fullmatch(rid)
        where = f"{problem}/{rid}" if plain else f"{path}[{i}]"
        if not isinstance(item, dict):
            bad.append(f"{where}: a JSON {type(item).__name__} where a record (object) is "
                       "required")
            continue
        try:
            rec = parse_record(item, folder)
        except InstanceError as exc:
            bad.append(f"{where}: {exc}")
            continue
        if rec.id in seen:
            bad.append(f"{where}: id: {rec.id!r} is a duplicate")
            continue
        seen.add(rec.id)
        out.append(rec)
    return out, bad


def parse_record(data: dict, folder: Path) -> Record:
    """One record of ``folder/references.json``, checked against its schema.

    Parameters
    ----------
    data : the record as parsed from JSON.
    folder : the problem's library folder (``<root>/<problem>``); the instance and solution
        paths are relative to it and must stay inside it.

    Returns
    -------
    Record
        With absolute paths.

    Raises
    ------
    InstanceError
        Naming the field, the value and the rule: an unknown or missing field, a number that
        is not finite (or an integer outside 64 bits), an unknown status, an id or instance
        that is not a plain name, a solution path that is absolute, holds ``..`` or leads out
        of ``folder`` through a link, a malformed hash, a problem other than the folder's.
    """
    rec = _validate(_RecordFile, data)
    if rec.problem != folder.name:
        raise InstanceError("problem", rec.problem, f"must be {folder.name!r} (the folder's)")
    return Record(
        id=rec.id, problem=rec.problem,
        instance=None if rec.instance is None else _inside(folder, rec.instance, "instance"),
        instance_hash=rec.instance_hash,
        solution=_inside(folder, rec.solution, "solution"),
        provenance=rec.provenance.model_dump(exclude_unset=True),
        objective=rec.objective, bound=rec.bound, status=rec.status, method=rec.method,
        solver=rec.solver, seconds=rec.seconds, date=rec.date,
        dmlopt_version=rec.dmlopt_version)


def parse(path: Path) -> list[Record]:
    """The records of one references file.

    Raises
    ------
    InstanceError
        The first malformed record, as ``problem/id: field: value rule`` (see
        :func:`parse_record`), or a file that is not a bounded, UTF-8 JSON list.
    """
    out, bad = _parse_all(path)
    if bad:
        raise InstanceError("", message=bad[0])
    return out


def records(problem: str | None = None, root: Path | None = None) -> list[Record]:
    """Every record (of ``problem``) shipped under ``root`` (default: :func:`data_root`)."""
    return [r for path in _chosen(problem, root).values() for r in parse(path)]


def _chosen(problem: str | None, root: Path | None) -> dict[str, Path]:
    found = files(root)
    if problem is None:
        return found
    if problem not in found:
        raise DmloptError(f"references: no library for {problem!r} (libraries: "
                          f"{', '.join(found) or 'none'})")
    return {problem: found[problem]}


def _method_kind(problem: Any, method: str) -> str | None:
    """``"exact"`` for ``SOLVER:FORMULATION`` (a formulation of the problem the solver may
    solve), ``"bound"`` for ``bound:NAME`` (a bound method of the problem), else None."""
    head, sep, name = method.partition(":")
    if not sep:
        return None
    if head == "bound":
        return "bound" if name in problem.bound_entries else None
    if name not in problem.formulations or not re.fullmatch(r"[a-z][a-z0-9_]*", head):
        return None
    allowed = problem.formulation(name).solvers
    return "exact" if not allowed or head in allowed else None


def _methods(problem: Any) -> str:
    return (f"SOLVER:FORMULATION with a formulation of {problem.name} "
            f"({', '.join(problem.formulations)}), or bound:NAME with a bound method "
            f"({', '.join(problem.bound_entries) or 'none'})")


def _proof(rec: Record, problem: Any) -> list[str]:
    """The provenance of the record's bound and, for an ``optimal`` record, of its proof."""
    out: list[str] = []
    kind = _method_kind(problem, rec.method)
    by = rec.provenance.get("bound")
    if by is not None:
        if rec.bound is None:
            out.append(f"provenance.bound: {by!r} names a bound method, but bound is null")
        if _method_kind(problem, by.split(" (", 1)[0]) is None:
            out.append(f"provenance.bound: {by!r} must name the method that found the bound: "
                       f"{_methods(problem)}, optionally followed by ' (SECONDS s)'")
    elif rec.bound is not None and kind is None and rec.status != "optimal":
        out.append(f"provenance.bound: missing: the method {rec.method!r} finds no bound, so "
                   "the provenance must name the one that found the bound "
                   f"{rec.bound:.10g}")
    if rec.status != "optimal":
        return out
    if kind is None:
        out.append(f"method: {rec.method!r} proves no optimum; an optimal record's method is "
                   f"{_methods(problem)}")
    elif not rec.solver.strip():
        out.append("solver: empty; an optimal record names the solver (and version) that "
                   "proved it")
    elif kind == "exact" and rec.method.split(":", 1)[0].removesuffix("_direct") \
            not in rec.solver.lower():
        out.append(f"solver: {rec.solver!r} is not the solver of the method {rec.method!r}")
    if rec.bound is None:
        proof = rec.provenance.get("proof")
        if not (isinstance(proof, str) and proof.strip()):
            out.append("status: optimal, but the bound is null and provenance.proof does not "
                       "say how optimality was proven")
    elif abs(rec.objective - rec.bound) > GAP * max(1.0, abs(rec.objective)):
        out.append(f"status: optimal, but the bound {rec.bound:.10g} is not within {GAP:g} of "
                   f"the objective {rec.objective:.10g}")
    return out


def check(rec: Record) -> list[str]:
    """What is wrong with one record.

    Parameters
    ----------
    rec : a parsed record (:func:`parse_record` has checked its schema).

    Returns
    -------
    list of str
        One ``field: what`` per failed check, empty when the record holds: the instance's
        content hash (the shipped file, or the instance its provenance generates), the
        solution re-scored by the problem's evaluator (feasible, objective within
        :data:`TOL`), the bound on the right side of the objective for the problem's sense,
        the provenance of the bound, and for an ``optimal`` record its proof (a method that
        proves: an exact formulation or a bound method of the problem, its solver named, the
        bound within :data:`GAP` of the objective).
    """
    from dmlopt import api, registry

    problem = registry.get(rec.problem)
    problems = _proof(rec, problem)
    if rec.bound is not None:
        slack = TOL * max(1.0, abs(rec.objective))
        wrong = rec.bound > rec.objective + slack if problem.sense == "min" else \
            rec.bound < rec.objective - slack
        if wrong:
            problems.append(f"bound: {rec.bound:.10g} is on the wrong side of the objective "
                            f"{rec.objective:.10g} for a {problem.sense} problem")
    field = "instance" if rec.instance is not None else "provenance"
    try:
        inst = rec.load_instance()
    except _BAD_INPUT as exc:
        return problems + [f"{field}: the instance cannot be loaded ({exc})"]
    if io.instance_hash(inst) != rec.instance_hash:
        problems.append(f"instance_hash: {rec.instance_hash} is not the instance's "
                        f"{io.instance_hash(inst)}")
    if not rec.solution.is_file():
        return problems + [f"solution: {rec.solution} does not exist"]
    try:
        ev = api.evaluate(inst, io.load_solution(inst, rec.solution))
    except _BAD_INPUT as exc:
        return problems + [f"solution: {exc}"]
    if not ev.feasible:
        problems.append(f"solution: infeasible ({'; '.join(ev.violations[:2])})")
    elif not math.isclose(ev.objective, rec.objective, rel_tol=TOL, abs_tol=TOL):
        problems.append(f"objective: the solution evaluates to {ev.objective:.10g}, the record "
                        f"says {rec.objective:.10g}")
    return problems


#: what a hostile instance or solution file may make loading or evaluating raise: reported as
#: a failed check of the record, never a crash of the verification
_BAD_INPUT = (DmloptError, ValueError, TypeError, KeyError, IndexError, ArithmeticError)


def verify(recs: list[Record]) -> list[str]:
    """One line per failed check of :func:`check`: ``problem/id: field: what``."""
    out = []
    for r in recs:
        try:
            out += [f"{r.problem}/{r.id}: {p}" for p in check(r)]
        except DmloptError as exc:  # e.g. a folder that names no problem
            out.append(f"{r.problem}/{r.id}: problem: {exc}")
    return out


def verify_library(problem: str | None = None,
                   root: Path | None = None) -> tuple[int, list[str]]:
    """Check every record of the library (of ``problem``) under ``root``.

    Parameters
    ----------
    problem : one problem's library (default: all).
    root : the folder of ``<problem>/references.json`` files (default: :func:`data_root`).

    Returns
    -------
    (count, failures)
        The number of records read, and one line per failed check: a file that cannot be
        read, a record that breaks its schema (:func:`parse_record`), a record whose checks
        fail (:func:`check`). Every record is checked, one bad record does not hide the
        others.

    Raises
    ------
    DmloptError
        ``problem`` has no library under ``root``.
    """
    count, failures = 0, []
    for name, path in _chosen(problem, root).items():
        try:
            recs, bad = _parse_all(path)
        except InstanceError as exc:
            failures.append(f"{name}: {exc}")
            continue
        count += len(recs) + len(bad)
        failures += bad + verify(recs)
    return count, failures


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


def _choose(rec: Record, inst: Any, limits: Any) -> tuple[list[str], str]:
    """The formulations to try a record in, in order: the one that made the record when it is
    linear and fits the limits, then the other linear ones that fit, smallest first; ([], why)
    when none does. The first whose objective at the record's solution is the record's is
    exported (:func:`_export_one`)."""
    from dmlopt import registry

    problem = registry.get(rec.problem)
    linear = [f for f in problem.formulations if _linear(problem, f)]
    if not linear:
        return [], f"{rec.problem} has no linear formulation"
    sizes = {f: problem.formulation(f).estimate_size(inst) for f in linear}
    fits = [f for f in linear if sizes[f][0] <= limits.variables and
            sizes[f][1] <= limits.constraints]
    made_by = rec.method.split(":", 1)[1] if rec.method.startswith("highs:") else None
    if fits:
        order = sorted(fits, key=lambda f: (f != made_by, sum(sizes[f])))
        return order, ""
    smallest = min(linear, key=lambda f: sum(sizes[f]))
    v, c = sizes[smallest]
    return [], (f"too large: the smallest linear formulation ({smallest!r}) has about {v:,} "
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
    value = pyo.value(obj.expr, exception=False)  # one walk; None on any failure, then:
    if value is not None:
        return float(value)
    if any(v.value is None for v in identify_variables(obj.expr, include_fixed=True)):
        return None
    return float(pyo.value(obj.expr))  # every variable set: raises what failed


def export_set(directory: str | Path, problems: list[str] | None = None,
               size_limit: Any = None, ids: list[str] | None = None,
               log: Any = None) -> tuple[list[Exported], list[str]]:
    """Write the reference library as a benchmark set: one gzip-compressed MPS model per record
    under ``directory/<problem>/<id>.mps.gz``, ``directory/references.solu`` in MIPLIB's format
    (``=opt= NAME VALUE`` for proven optima, ``=best= NAME VALUE`` for best-known values) and
    ``directory/README.md``.

    Parameters
    ----------
    directory : must not exist, be empty, or hold an unfinished export of the same arguments
        (interrupted: it is resumed, the records already written kept); nothing is written
        outside it, every file atomically. ``EXPORT_MARKER`` marks an export in progress.
    problems : the problems whose records to export (default: every library).
    size_limit : ``(variables, constraints)`` above which a record's model is skipped (default
        :data:`EXPORT_LIMIT`).
    ids : only the records with these ids (default: all).
    log : called with one line per skipped record (default: nothing).

    Returns
    -------
    (exported, skipped)
        The records written, and one line per record not written (no linear formulation, too
        large, or no formulation whose objective at the record's solution is the record's:
        never written with a wrong .solu value). Each record is written in the first
        formulation whose model objective at the record's solution is the record's (the one
        that made it first, then the others smallest first; a Nara offline record is not the
        per-request model's objective, it is the offline models').

    Raises
    ------
    InstanceError
        A directory that exists and is not empty.

    References
    ----------
    MIPLIB 2017's .solu format (https://miplib.zib.de); docs/interop.md.
    """
    from dmlopt import contract

    root = io.check_output_dir(directory, "--export")
    if size_limit is None:
        size_limit = EXPORT_LIMIT
    limits = contract.limits_from(size_limit)
    args = {"problems": sorted(problems) if problems else None,
            "size_limit": [limits.variables, limits.constraints],
            "ids": sorted(ids) if ids is not None else None}
    done = _resume_state(root, args)
    recs = [r for p in (problems or [None]) for r in records(p)]
    if ids is not None:
        recs = [r for r in recs if r.id in set(ids)]
    exported: list[Exported] = []
    skipped: list[str] = []
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InstanceError("--export", str(root), f"cannot be created ({exc.strerror})") from None
    marker = root / EXPORT_MARKER
    io.write_json(marker, {"args": args, "done": done})
    with pyomo_to_stderr():
        for rec in recs:
            name = f"{rec.problem}/{rec.id}"
            target = io.inside(root, rec.problem, f"{rec.id}.mps.gz")
            if name in done and target.is_file():  # written and checked by the interrupted run
                e = done[name]
                exported.append(Exported(name, target, e["formulation"], e["status"],
                                         e["objective"], e["checked"]))
                continue
            out = _export_one(rec, name, target, limits)
            if isinstance(out, str):
                skipped.append(f"{name}: {out}")
                if log:
                    log(f"skipped {name}: {out}")
                continue
            exported.append(out)
            done[name] = {"formulation": out.formulation, "status": out.status,
                          "objective": out.objective, "checked": out.checked}
            io.write_json(marker, {"args": args, "done": done})
    solu = [f"{SOLU_KEYWORDS[e.status]} {e.name} {e.objective!r}" for e in exported]
    io.atomic_write_text(root / "references.solu", "\n".join(solu) + ("\n" if solu else ""))
    io.atomic_write_text(root / "README.md", _readme(exported, skipped))
    io.write_json(root / EXPORT_DONE, {"args": args, "done": done})
    marker.unlink()  # complete: the folder is a finished export (the same command re-runs it)
    return exported, skipped


#: The MPS sections Pyomo writes for products (TAP's MINLP): none in an exported (linear) model
QUADRATIC_MPS = re.compile(rb"\n(QUADOBJ|QCMATRIX|QMATRIX|QSECTION)\b")
#: bytes of the written model read at a time (gzipped and scanned for QUADRATIC_MPS)
COPY_CHUNK = 1 << 20
#: The file an unfinished ``export_set`` keeps in its folder (its arguments and the records
#: already written); removed when the export completes.
EXPORT_MARKER = ".dmlopt-export-in-progress.json"
#: What a finished export keeps instead: the same command run again (e.g. after a Ctrl-C that
#: came as it finished) completes at once from it
EXPORT_DONE = ".dmlopt-export.json"


def _resume_state(root: Path, args: dict[str, Any]) -> dict[str, Any]:
    """The records an interrupted export of the same arguments wrote (``{}`` for a new
    folder); refuses a folder that is neither empty nor an unfinished export of ours."""
    if not root.exists() or not any(root.iterdir()):
        return {}
    marker = root / EXPORT_MARKER
    if not marker.is_file() and (root / EXPORT_DONE).is_file():
        marker = root / EXPORT_DONE  # a finished export: the same arguments complete at once
    if not marker.is_file() or marker.is_symlink():
        raise InstanceError("--export", str(root), "must not exist, be an empty directory or "
                            "hold an unfinished export (it holds other files)")
    try:
        state = io.read_json(marker)
        if not isinstance(state, dict) or not isinstance(state.get("done"), dict):
            raise InstanceError(EXPORT_MARKER, None, "is not an export state")
    except InstanceError:
        raise InstanceError("--export", str(root), f"holds an unreadable {EXPORT_MARKER}; "
                            "remove the folder and export again") from None
    if state.get("args") != args:
        raise InstanceError("--export", str(root), f"holds an export with other "
                            f"arguments ({state.get('args')}); re-run it with those, or use "
                            "an empty directory")
    for tmp in root.glob("*/_tmp_*"):  # left by a run killed outright (never by Ctrl-C)
        tmp.unlink(missing_ok=True)
    return state["done"]


def _export_one(rec: Any, name: str, target: Path, limits: Any) -> Exported | str:
    """One record's model written to ``target`` and checked (an :class:`Exported`), or why
    it is skipped."""
    import gzip

    from dmlopt import api, registry

    inst = rec.load_instance()
    tries, why = _choose(rec, inst, limits)
    if not tries:
        return str(why)
    problem = registry.get(rec.problem)
    solution = io.load_solution(inst, rec.solution)
    chosen, unchecked, other = None, None, []
    for formulation in tries:  # the first whose objective at the solution is the record's
        model = api.build(inst, formulation, (limits.variables, limits.constraints))
        value = _model_objective(problem, formulation, model, inst, solution)
        if value is None:
            unchecked = unchecked or (formulation, model)
        elif math.isclose(value, rec.objective, rel_tol=TOL, abs_tol=TOL):
            chosen = (formulation, model)
            break
        else:
            other.append(f"{formulation!r} gives {value:.10g}")
    if chosen is None and unchecked is None:
        return (f"no linear formulation has the record's objective: at the record's solution "
                f"{', '.join(other)}, not the record's {rec.objective:.10g}")
    formulation, model = chosen or unchecked
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InstanceError("--export", str(target.parent), f"cannot be created "
                            f"({exc.strerror})") from None
    quiet = logging.getLogger("pyomo.core")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # a constant objective (0 everywhere) is not news here
    try:
        with io.scratch_path(target.parent, ".mps") as tmp:
            api.write_model(model, tmp, counts=False)
            with open(tmp, "rb") as src, io.atomic_open(target, "wb") as dst, \
                    gzip.GzipFile(f"{rec.id}.mps", "wb", compresslevel=6, fileobj=dst,
                                  mtime=0) as gz:
                line = b"\n"  # the unfinished line before a chunk
                while chunk := src.read(COPY_CHUNK):
                    buf = line + chunk
                    if QUADRATIC_MPS.search(buf):  # no half-written file is left
                        raise InstanceError(name, formulation, "wrote a quadratic model")
                    line = buf[max(buf.rfind(b"\n"), 0):]
                    gz.write(chunk)
    finally:
        quiet.setLevel(level)
    return Exported(name, target, formulation, rec.status, rec.objective, chosen is not None)


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
