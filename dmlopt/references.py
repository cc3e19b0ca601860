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

import math
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
