"""Build the reference library (``data/<problem>/references.json``, :mod:`dmlopt.references`).

    python -m dmlopt.benchmarks.library PROBLEM [PROBLEM ...] [--only ID ...] [--time-limit S]
        [--root DIR]

For every spec of the problem (its paper's settings: ``Paper.library`` in
``benchmarks/papers/<problem>.py``, :mod:`dmlopt.benchmarks.papers`) it makes the instance,
solves it with the problem's best exact formulation (HiGHS, one thread, warm-started by a good
heuristic), or takes a published solution (QAPLIB), re-evaluates the solution with the
evaluator, and writes the instance (``<root>/<problem>/<id>.json``, unless the record's instance
is a generator spec), the solution (``<root>/<problem>/solutions/<id>.json``) and the record,
each file atomically. A record already present and verified is skipped, so an interrupted build
resumes. The status is ``optimal`` only when the solver proved it at the default gap (1e-4),
``best-known`` otherwise, with the solver's bound. ``--root`` defaults to the installed
``dmlopt.data`` directory (the repository's ``data/`` in a development install); nothing is
written elsewhere.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import dmlopt
from dmlopt import io, references
from dmlopt.errors import DmloptError


@dataclass(frozen=True)
class Spec:
    """One library entry to make: where it comes from and how its value is found."""

    id: str
    problem: str
    provenance: dict
    generator: dict  # the dmlopt.generate spec ({"generator": g, **params})
    seed: int = 0
    formulation: str | None = None  # None: a published solution (``known``)
    warm_start: str | None = None
    ship_instance: bool = True  # False: the record points at the generator spec
    known: Callable[[Any], tuple[Any, str]] | None = None
    options: dict = field(default_factory=dict)
    heuristic: str | None = None  # best known from a heuristic (no exact model at this size)
    time_limit: float | None = None  # frontier entries: their own budget (None: --time-limit)
    default_solve: bool = False  # dmlopt.solve without naming the formulation (exact methods
    # the problem runs first, then the MIP of ``formulation``, its default)


#: seconds per exact solve of a frontier entry (the frontier's aim: each within an hour, one core)
FRONTIER_SECONDS = 3600.0


def all_specs() -> dict[str, Callable[[], Iterator[Spec]]]:
    """The library specs of every registered paper that declares some.

    Returns
    -------
    dict
        paper key (the problem whose library it fills, ``data/<key>/references.json``) ->
        ``Paper.library`` (:mod:`dmlopt.benchmarks.papers`), in paper order.
    """
    from dmlopt.benchmarks import papers

    return {k: p.library for k, p in papers.all_papers().items() if p.library is not None}


def _load(path: Path) -> list[dict]:
    return io.read_json(path) if path.is_file() else []


def _write(path: Path, recs: list[dict]) -> None:
    recs = sorted(recs, key=lambda r: r["id"])
    # one record per line: diffs of a rebuilt library stay readable
    io.atomic_write_text(path, "[\n" + ",\n".join(json.dumps(r) for r in recs) + "\n]\n")


def build(spec: Spec, root: Path, time_limit: float, old: dict | None = None) -> dict:
    """Make one record (writing its instance and solution files under ``root``).

    With ``old`` (a best-known record of the same spec) the solver starts from the stored
    solution, and the record keeps the better objective and the tighter bound of the two runs
    (both are valid for the instance), with their seconds added up."""
    base = root / spec.problem
    inst = dmlopt.generate(spec.problem, spec.generator, seed=spec.seed)
    warm = spec.warm_start if old is None else str(base / old["solution"])
    t0 = time.perf_counter()
    if spec.heuristic is not None:
        res = dmlopt.heuristic(inst, spec.heuristic, seed=0)
        sol, method, bound, solver = res.solution, spec.heuristic, None, ""
        res_status, seconds = "best-known", res.seconds
    elif spec.known is not None:
        sol, method = spec.known(inst)
        ev = dmlopt.evaluate(inst, sol)
        res_status, bound, solver = "best-known", None, ""
        seconds = time.perf_counter() - t0
    else:
        res = dmlopt.solve(inst, "highs", threads=1, time_limit=time_limit, warm_start=warm,
                           formulation=None if spec.default_solve else spec.formulation)
        if res.solution is None or res.objective is None:
            raise DmloptError(f"{spec.problem}/{spec.id}: {res.status}, no solution "
                              f"({res.message})")
        sol, bound, seconds = res.solution, res.bound, res.seconds
        res_status = "optimal" if res.status == "optimal" else "best-known"
        method, solver = f"highs:{spec.formulation}", f"highspy {version('highspy')}"
        if spec.default_solve:
            # the exact method the default solve ran first names the record when it proved it
            # (res.message says so); otherwise the MIP that ran after it
            ran = [k[len("bound_"):] for k in res.metrics if k.startswith("bound_")]
            method = res.method
            if ran and res.message.startswith(f"proven optimal by the {ran[0]} bound"):
                method = f"bound:{ran[0]}"
            if any(k.startswith("cpsat") and v for k, v in res.metrics.items()):
                solver += f", ortools {version('ortools')}"  # CP-SAT decided sets on the way
        if old is not None:
            sol, bound, res_status = _merge(inst, spec.problem, old, base, sol, bound)
            seconds += float(old["seconds"])
    ev = dmlopt.evaluate(inst, sol)
    if not ev.feasible:
        raise DmloptError(f"{spec.problem}/{spec.id}: the solution is infeasible")
    rec: dict[str, Any] = {"id": spec.id, "problem": spec.problem}
    if io.safe_name(spec.id) != spec.id:  # an id names files: one plain path component
        raise DmloptError(f"{spec.problem}/{spec.id}: an id must be a plain file name "
                          f"(letters, digits, '._+=,@-'; e.g. {io.safe_name(spec.id)!r})")
    if spec.ship_instance:
        path = base / f"{spec.id}.json"
        if path.exists():
            old = io.load(path)
            if io.instance_hash(old) != io.instance_hash(inst):
                raise DmloptError(f"{path}: exists with other content; not overwritten")
        else:
            io.save(inst, path)
        rec["instance"] = f"{spec.id}.json"
    else:
        rec["instance"] = None
    io.save(sol, base / "solutions" / f"{spec.id}.json")
    rec.update({
        "instance_hash": io.instance_hash(inst), "solution": f"solutions/{spec.id}.json",
        "provenance": spec.provenance, "objective": float(ev.objective),
        "bound": None if bound is None else float(bound), "status": res_status,
        "method": method, "solver": solver, "seconds": round(float(seconds), 3),
        "date": _dt.date.today().isoformat(), "dmlopt_version": dmlopt.__version__})
    return rec


def _merge(inst: Any, problem: str, old: dict, base: Path, sol: Any,
           bound: float | None) -> tuple[Any, float | None, str]:
    """The better of the stored and the new solution, the tighter of the two bounds, and the
    status they prove together."""
    from dmlopt import registry

    sense = registry.get(problem).sense
    better = min if sense == "min" else max
    old_sol = io.load_solution(inst, base / old["solution"])
    new_obj, old_obj = dmlopt.evaluate(inst, sol).objective, float(old["objective"])
    if better(new_obj, old_obj) != new_obj:
        sol, new_obj = old_sol, old_obj
    bounds = [b for b in (bound, old["bound"]) if b is not None]
    tight = None if not bounds else (max(bounds) if sense == "min" else min(bounds))
    proven = tight is not None and \
        abs(new_obj - tight) <= references.GAP * max(1.0, abs(new_obj))
    return sol, tight, "optimal" if proven else "best-known"


def run(problems: list[str], root: Path, time_limit: float, only: set[str] | None = None,
        out: Any = sys.stderr, improve: bool = False, frontier_seconds: float | None = None
        ) -> int:
    """Build the missing records of ``problems`` (with ``improve``, also solve the best-known
    records with an exact formulation again, from their stored solution); the number made or
    re-solved. Frontier entries get ``frontier_seconds`` (default: their own budget)."""
    if only is not None:
        unknown = sorted(only - {s.id for problem in problems for s in all_specs()[problem]()})
        if unknown:
            raise DmloptError(f"--only: {', '.join(unknown)} is not an id of "
                              f"{', '.join(problems)} (dmlopt references lists them)")
    made = 0
    for problem in problems:
        path = root / problem / "references.json"
        recs = {r["id"]: r for r in _load(path)}
        specs = [s for s in all_specs()[problem]() if only is None or s.id in only]
        for i, spec in enumerate(specs, 1):
            old = recs.get(spec.id)
            if old is not None and not (improve and old["status"] == "best-known"
                                        and spec.formulation is not None):
                continue
            limit = time_limit if spec.time_limit is None else \
                (frontier_seconds or spec.time_limit)
            t0 = time.perf_counter()
            try:
                rec = build(spec, root, limit, old)
            except DmloptError as exc:
                print(f"[{problem} {i}/{len(specs)}] {spec.id}: skipped ({exc})", file=out,
                      flush=True)
                continue
            recs[spec.id] = rec
            _write(path, list(recs.values()))
            made += 1
            print(f"[{problem} {i}/{len(specs)}] {spec.id}: {rec['status']} {rec['objective']:g}"
                  f" ({time.perf_counter() - t0:.1f} s)", file=out, flush=True)
    return made


def add_bounds(problems: list[str], root: Path, time_limit: float,
               only: set[str] | None = None, out: Any = sys.stderr,
               method: str | None = None) -> int:
    """Give every best-known record the best dual bound :func:`dmlopt.bound` finds for it
    within ``time_limit`` seconds (``method``, default the problem's strongest that fits),
    keeping the tighter of that and the record's own bound; its method goes to
    ``provenance["bound"]``. A bound that meets the record's objective (relative gap at most
    :data:`dmlopt.references.GAP`) proves it: the record becomes ``optimal`` with the bound
    method as its ``method``. Returns the number of records whose bound moved.
    """
    from dmlopt import registry

    moved = 0
    for problem in problems:
        sense = registry.get(problem).sense
        path = root / problem / "references.json"
        recs = {r["id"]: r for r in _load(path)}
        specs = {s.id: s for s in all_specs()[problem]()}
        todo = [r for r in recs.values() if r["status"] == "best-known"
                and (only is None or r["id"] in only)]
        for i, rec in enumerate(todo, 1):
            if rec.get("instance"):
                inst = io.load(root / problem / rec["instance"])
            elif rec["id"] in specs:
                spec = specs[rec["id"]]
                inst = dmlopt.generate(problem, spec.generator, seed=spec.seed)
            else:
                continue
            try:
                res = dmlopt.bound(inst, method, time_limit=time_limit)
            except DmloptError as exc:
                print(f"[{problem} {i}/{len(todo)}] {rec['id']}: no bound ({exc})", file=out,
                      flush=True)
                continue
            old = rec.get("bound")
            tighter = res.bound if old is None else (
                max(old, res.bound) if sense == "min" else min(old, res.bound))
            if old is None or tighter != old:
                rec["bound"] = float(tighter)
                rec["provenance"] = {**rec.get("provenance", {}),
                                     "bound": f"{res.method} ({res.seconds:.1f} s)"}
                moved += 1
                _write(path, list(recs.values()))
            gap = abs(rec["objective"] - rec["bound"]) / max(1e-9, abs(rec["objective"]))
            if tighter == res.bound and gap <= references.GAP:  # the bound proves the record
                rec.update(status="optimal", method=res.method,
                           solver=f"highspy {version('highspy')}",
                           seconds=round(float(rec["seconds"]) + res.seconds, 3))
                _write(path, list(recs.values()))
            print(f"[{problem} {i}/{len(todo)}] {rec['id']}: {res.method} {res.bound:.6g}, "
                  f"best-known {rec['objective']:.6g}, certified gap {100 * gap:.2f} %",
                  file=out, flush=True)
    return moved


def _gap(rec: references.Record) -> str:
    if rec.bound is None:
        return "-"
    return f"{100.0 * abs(rec.objective - rec.bound) / max(1e-9, abs(rec.objective)):.2f}"


def frontier_table(recs: list[references.Record]) -> str:
    """The frontier records (provenance table ``frontier: ...``) as a Markdown table: per
    instance its status, value, bound, gap and time, each checkable from the library."""
    rows = [r for r in recs if str(r.provenance.get("table", "")).startswith("frontier")]
    if not rows:
        return "No frontier record yet.\n"
    lines = ["| problem | instance | setting | status | value | bound | gap % | seconds | "
             "method |", "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r.problem, r.provenance["table"], r.id)):
        bound = "-" if r.bound is None else f"{r.bound:.6g}"
        lines.append(f"| {r.problem} | `{r.id}` | {r.provenance['table'][10:]} | {r.status} "
                     f"| {r.objective:.6g} | {bound} | {_gap(r)} | {r.seconds:.0f} | "
                     f"`{r.method}` |")
    proven = sum(r.status == "optimal" for r in rows)
    return (f"{proven} of {len(rows)} frontier instances proven optimal; seconds are the "
            "solver's wall time summed over the runs (one HiGHS thread).\n\n"
            + "\n".join(lines) + "\n")


_BLOCK = re.compile(r"(<!-- frontier -->\n).*?(<!-- /frontier -->)", re.S)


def write_frontier(page: Path, root: Path, problems: list[str]) -> None:
    """Replace the ``<!-- frontier -->`` block of ``page`` by :func:`frontier_table` of the
    libraries of ``problems`` (the rest of the page byte for byte, written atomically)."""
    if not page.is_file():
        raise DmloptError(f"--frontier-docs: {page} is not an existing Markdown page")
    text = page.read_text()
    if not _BLOCK.search(text):
        raise DmloptError(f"--frontier-docs: {page} has no <!-- frontier --> block")
    recs = [r for p in problems for r in references.records(p, root)]
    stamp = (f"*Written by `python -m dmlopt.benchmarks.library {' '.join(problems)} "
             f"--frontier-docs PAGE` on {_dt.date.today().isoformat()} from the library.*\n\n")
    body = stamp + frontier_table(recs)
    io.atomic_write_text(page, _BLOCK.sub(lambda m: m.group(1) + body + m.group(2), text))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dmlopt.benchmarks.library",
                                 description=__doc__.split("\n\n")[0])
    known = list(all_specs())
    ap.add_argument("problems", nargs="+", choices=known, metavar="PROBLEM",
                    help=f"one or more of {', '.join(known)}")
    ap.add_argument("--only", nargs="*", default=None, metavar="ID", help="only these ids")
    ap.add_argument("--time-limit", type=float, default=600.0,
                    help="seconds per exact solve (default 600)")
    ap.add_argument("--frontier-seconds", type=float, default=None, metavar="S",
                    help=f"seconds per frontier solve (default {FRONTIER_SECONDS:g})")
    ap.add_argument("--improve", action="store_true",
                    help="also re-solve best-known records from their stored solution, keeping "
                         "the better objective and the tighter bound")
    ap.add_argument("--root", default=None, metavar="DIR",
                    help="data root holding <problem>/ (default: the installed dmlopt.data)")
    ap.add_argument("--bounds", type=float, default=None, metavar="SECONDS",
                    help="only give every best-known record the best bound `dmlopt bound` "
                    "finds in SECONDS (the tighter of it and its own)")
    ap.add_argument("--bound-method", default=None, metavar="NAME",
                    help="with --bounds: this bound method (default: the strongest that fits)")
    ap.add_argument("--frontier-docs", default=None, metavar="PAGE",
                    help="only rewrite the frontier table of PAGE (its <!-- frontier --> block)")
    args = ap.parse_args(argv)
    try:
        for flag, value in (("--time-limit", args.time_limit),
                            ("--frontier-seconds", args.frontier_seconds)):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise DmloptError(f"{flag}: {value} (must be a finite number of seconds > 0)")
        root = Path(args.root) if args.root else references.data_root()
        if args.bounds is not None:
            if not (math.isfinite(args.bounds) and args.bounds > 0):
                raise DmloptError(f"--bounds: {args.bounds} (must be a finite number of "
                                  "seconds > 0)")
            n = add_bounds(args.problems, root, args.bounds,
                           set(args.only) if args.only else None, method=args.bound_method)
            print(f"{n} bound(s) tightened under {root}")
            return 0
        if args.frontier_docs:
            write_frontier(Path(args.frontier_docs), root, args.problems)
            print(f"frontier table written to {args.frontier_docs}")
            return 0
        n = run(args.problems, root, args.time_limit, set(args.only) if args.only else None,
                improve=args.improve, frontier_seconds=args.frontier_seconds)
    except DmloptError as exc:  # bad input: one line, exit 2 (README, "Errors and limits")
        print(f"library: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # finished records are already written (atomically)
        print("library: interrupted (finished records are kept; run again to resume)",
              file=sys.stderr)
        return 130
    print(f"{n} record(s) made under {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
