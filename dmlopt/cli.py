"""The ``dmlopt`` command line.

``dmlopt solve | heuristic | bound | export | validate | generate | list | schema`` (and
``bench`` and ``report`` from the benchmark harness), each with ``--help``. Exit code 0 on
success, 2 on bad input with one line on stderr, 1 on an internal error (one line;
``DMLOPT_DEBUG=1`` shows the traceback), 130 when interrupted. Every file is written atomically.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from dmlopt import __version__, api, io, registry
from dmlopt.contract import Limits, parse_limits
from dmlopt.errors import DmloptError, InstanceError, Interrupted, ObjectiveMismatchError


class UsageError(DmloptError):
    """Bad command-line usage (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        where = self.prog.removeprefix("dmlopt").strip()
        raise UsageError(f"{where + ': ' if where else ''}{message} (see {self.prog} --help)")


def key_values(items: Sequence[str] | None, what: str) -> dict[str, Any]:
    """``["n=12", "p=0.5", "name=x"]`` -> ``{"n": 12, "p": 0.5, "name": "x"}``."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{what}: {item!r} must be KEY=VALUE")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _size_limit(raw: str | None) -> Limits | None:
    """``--size-limit V,C`` (models) or ``V,C,MEMORY,WORK`` (also heuristics, generators)."""
    return None if raw is None else parse_limits(raw, "--size-limit")


def _output(path: str | None) -> str | None:
    """Check an output path before any work is done (not a directory, not a special file)."""
    if path is not None:
        io.check_output(path, "--output")
    return path


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isinf(value):
            return "inf"
        return f"{value:.6g}"
    return str(value)


def _print_result(res: Any, as_json: bool) -> None:
    if as_json:
        print(res.to_json())
        return
    rows = [
        ("problem", res.problem),
        ("method", res.method),
        ("status", res.status),
        ("objective", res.objective),
        ("bound", res.bound),
        ("gap", None if res.gap is None else f"{100 * res.gap:.3g} %"),
        ("seconds", res.seconds),
    ]
    rows += [(k, v) for k, v in res.metrics.items()]
    if res.message:
        rows.append(("message", res.message))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {_fmt(value)}")


def _write_solution(res: Any, path: str | None) -> None:
    if path and res.solution is not None:
        io.save(res.solution, path)


def cmd_solve(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = io.load(args.instance)
    try:
        res = api.solve(
            inst, args.solver, time_limit=args.time_limit, mip_gap=args.mip_gap,
            threads=args.threads, formulation=args.formulation, warm_start=args.warm_start,
            size_limit=_size_limit(args.size_limit), tee=args.tee,
            progress=args.progress if args.progress is not None else
            (PROGRESS_SECONDS / 2 if sys.stderr.isatty() else None),
        )
    except Interrupted as exc:
        return _kept(exc, args)
    _write_solution(res, args.output)
    _print_result(res, args.json)
    return 0


def _kept(exc: Interrupted, args: argparse.Namespace) -> int:
    """Ctrl-C on a run that kept its best solution so far: write it (``-o``), print it, 130."""
    if exc.result is None:
        raise exc
    _write_solution(exc.result, args.output)
    _print_result(exc.result, args.json)
    kept = exc.result.solution is not None
    where = f", written to {args.output}" if args.output and kept else ""
    what = "the best solution so far is above" if kept else "no solution was found yet"
    return _fail(f"interrupted: {what}{where}", 130)


#: seconds between the progress lines of a heuristic that has a ``progress`` option, when the
#: command line runs it with stderr on a terminal
PROGRESS_SECONDS = 10.0


def _has_option(instance: object, name: str, option: str) -> bool:
    """Whether heuristic ``name`` of the instance's problem declares ``option`` (False for an
    unknown name: the API call that follows says what is wrong)."""
    try:
        entry = registry.of(instance).heuristic(name)
    except Exception:  # noqa: BLE001 - reported by api.heuristic with its own message
        return False
    return option in getattr(entry.Options, "model_fields", {})


def cmd_heuristic(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = io.load(args.instance)
    options = key_values(args.option, "--option")
    if "progress" not in options and sys.stderr.isatty() and _has_option(inst, args.name,
                                                                        "progress"):
        options["progress"] = PROGRESS_SECONDS  # long runs say how far they are
    try:
        res = api.heuristic(inst, args.name, seed=args.seed,
                            size_limit=_size_limit(args.size_limit), **options)
    except Interrupted as exc:  # Ctrl-C on a heuristic that keeps its best so far: keep it
        return _kept(exc, args)
    _write_solution(res, args.output)
    _print_result(res, args.json)
    return 0


def cmd_bound(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = io.load(args.instance)
    options = key_values(args.option, "--option")
    res = api.bound(inst, args.method, time_limit=args.time_limit,
                    size_limit=_size_limit(args.size_limit), **options)
    _write_solution(res, args.output)
    _print_result(res, args.json)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = io.load(args.instance)
    model = api.build(inst, args.formulation, _size_limit(args.size_limit))
    n = api.write_model(model, args.output)
    quad = f", {n['quadratic']} quadratic" if n["quadratic"] else ""
    print(f"wrote {args.output} ({n['variables']} variables of which {n['integer']} integer, "
          f"{n['constraints']} constraints{quad})")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = io.load(args.instance)
    if args.solution is None:
        if args.output or args.formulation:
            raise UsageError("validate: --output and --formulation need --solution")
        print(f"valid {inst.problem} instance {inst.name or args.instance}")
        return 0
    from dmlopt import solution_files

    limit = _size_limit(args.size_limit)
    source = ""
    if solution_files.is_json(args.solution):
        if args.formulation:
            raise UsageError("validate: --formulation applies to a solver's solution file, not "
                             "to a solution JSON")
        solution = io.load_solution(inst, args.solution)
    else:
        solution = api.read_solution(inst, args.solution, args.formulation, size_limit=limit)
        source = solution_files.parse(args.solution).format
    ev = api.evaluate(inst, solution, size_limit=limit)
    if args.output:
        io.save(solution, args.output)
    if args.json:
        print(json.dumps(ev.as_dict(), indent=2))
    else:
        if source:
            print(f"read       {source} solution file, "
                  f"{args.formulation or api.default_formulation(registry.of(inst))} formulation")
        print(f"feasible   {ev.feasible}\nobjective  {_fmt(ev.objective)}")
        for key, value in ev.metrics.items():
            print(f"{key}  {_fmt(value)}")
        for v in ev.violations:
            print(f"violated: {v}")
        if args.output:
            print(f"wrote {args.output}")
    return 0 if ev.feasible else 3


def cmd_generate(args: argparse.Namespace) -> int:
    _output(args.output)
    spec = key_values(args.param, "--param")
    if args.generator:
        spec["generator"] = args.generator
    inst = api.generate(args.problem, spec, seed=args.seed,
                        size_limit=_size_limit(args.size_limit))
    if args.output:
        io.save(inst, args.output)
        print(f"wrote {args.output}")
    else:
        print(io.to_json(inst))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    if args.data:
        for name in io.shipped_instances():
            if args.problem in (None, name.split("/")[0]):
                print(name)
        return 0
    if args.problem:
        print(describe(registry.get(args.problem)))
        return 0
    for name in registry.names():
        prob = registry.get(name)
        print(f"{name}: {getattr(prob.model, 'TITLE', '')} (paper {prob.model.PAPER})")
        print(f"  formulations: {', '.join(prob.formulations) or '-'}")
        print(f"  heuristics:   {', '.join(prob.heuristics)}")
        print(f"  bounds:       {', '.join(prob.bound_entries) or '-'}")
        print(f"  generators:   {', '.join(prob.generators)}")
    print("\n`dmlopt list PROBLEM` shows every option and parameter with type, default and "
          "meaning.")
    return 0


def describe(prob: registry.Problem) -> str:
    """A problem's formulations, heuristics (with options) and generators (with parameters)."""
    lines = [f"{prob.name}: {getattr(prob.model, 'TITLE', '')} (paper {prob.model.PAPER}, "
             f"{'maximise' if prob.sense == 'max' else 'minimise'})", "", "formulations:"]
    for name, f in prob.formulation_entries.items():
        only = f" [{', '.join(f.solvers)} only]" if f.solvers else ""
        lines.append(f"  {name}{only}: {f.description}")
    if not prob.formulations:
        lines.append("  none (scored by its evaluator; use a heuristic)")
    lines += ["", "heuristics (dmlopt heuristic INSTANCE NAME --seed S --option KEY=VALUE):"]
    for name, h in prob.heuristics.items():
        lines.append(f"  {name}: {h.description}")
        lines += _fields(h.Options)
    lines += ["", "bounds, strongest first (dmlopt bound INSTANCE --method NAME --time-limit S "
              "--option KEY=VALUE):"]
    for name, b in prob.bound_entries.items():
        lines.append(f"  {name}: {b.description}")
        lines += _fields(b.Options)
    if not prob.bound_entries:
        lines.append("  none")
    lines += ["", "generators (dmlopt generate PROBLEM -g NAME --seed S -p KEY=VALUE):"]
    for name, g in prob.generator_entries.items():
        lines.append(f"  {name}: {g.description}")
        lines += _fields(g.Params)
    return "\n".join(lines)


def _fields(model: Any) -> list[str]:
    """One line per field: name (type, bounds, default): meaning, from the JSON Schema."""
    try:
        schema = model.model_json_schema()
    except Exception:  # noqa: BLE001 - a field type without a schema: name and default only
        schema = {"properties": {k: {} for k in model.model_fields}}
    defs = schema.get("$defs", {})
    out = []
    for key, field in model.model_fields.items():
        prop = schema.get("properties", {}).get(key, {})
        kind = _schema_type(prop, defs)
        default = "required" if field.is_required() else f"default {field.default!r}"
        meaning = f": {field.description}" if field.description else ""
        out.append(f"      {key} ({kind}{_bounds(prop)}, {default}){meaning}")
    return out


def _schema_type(prop: dict, defs: dict) -> str:
    if "enum" in prop:
        return " | ".join(repr(v) for v in prop["enum"])
    if "const" in prop:
        return repr(prop["const"])
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " | ".join(_schema_type(p, defs) for p in prop[key])
    kind = prop.get("type", "any")
    if kind == "array" and "items" in prop:
        return f"list of {_schema_type(prop['items'], defs)}"
    return {"integer": "int", "number": "float", "string": "str", "boolean": "bool",
            "null": "null"}.get(kind, str(kind))


def _bounds(prop: dict) -> str:
    marks = (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="),
             ("exclusiveMaximum", "<"))
    found = [f"{op} {prop[k]}" for k, op in marks if k in prop]
    for sub in prop.get("anyOf", []):
        found += [f"{op} {sub[k]}" for k, op in marks if k in sub]
    return f", {' '.join(found)}" if found else ""


def cmd_schema(args: argparse.Namespace) -> int:
    prob = registry.get(args.problem)
    if args.heuristic:
        cls = prob.heuristic(args.heuristic).Options
    elif args.generator:
        cls = prob.generator(args.generator).Params
    else:
        cls = prob.model.Solution if args.solution else prob.model.Instance
    print(json.dumps(cls.model_json_schema(), indent=2))
    return 0


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dmlopt", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"dmlopt {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def instance_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("instance", help="instance JSON file, or a shipped name (tabgp/...)")

    s = sub.add_parser("solve", help="solve an instance exactly (HiGHS by default)")
    instance_arg(s)
    s.add_argument("--solver", default="highs", help="highs (default), scip, or a Pyomo name")
    s.add_argument("--formulation", "-f", default=None,
                   help="default: the paper's, when the solver can solve it (see `dmlopt list`)")
    s.add_argument("--time-limit", type=float, default=None, metavar="SECONDS")
    s.add_argument("--mip-gap", type=float, default=None, metavar="REL")
    s.add_argument("--threads", type=int, default=None)
    s.add_argument("--warm-start", default=None, metavar="HEURISTIC|FILE",
                   help="a heuristic name or a solution JSON file to start from")
    s.add_argument("--size-limit", default=None, metavar="V,C",
                   help="refuse models above V variables or C constraints")
    s.add_argument("--tee", action="store_true", help="show the solver log")
    s.add_argument("--progress", type=float, default=None, metavar="SECONDS",
                   help="a progress line on stderr every SECONDS (HiGHS: incumbent, bound, "
                   "gap, elapsed); default 5 when stderr is a terminal, else none")
    s.add_argument("--json", action="store_true", help="JSON output (with the solution)")
    s.add_argument("-o", "--output", default=None, help="write the solution JSON here")
    s.set_defaults(func=cmd_solve)

    h = sub.add_parser("heuristic", help="run a heuristic")
    instance_arg(h)
    h.add_argument("name", help="heuristic name (see `dmlopt list`)")
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="heuristic option, repeatable (values parsed as JSON)")
    h.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK",
                   help="refuse runs estimated above MEMORY bytes or WORK operations")
    h.add_argument("--json", action="store_true")
    h.add_argument("-o", "--output", default=None, help="write the solution JSON here")
    h.set_defaults(func=cmd_heuristic)

    b = sub.add_parser("bound", help="a dual bound on the optimum (lower for min, upper for "
                       "max) and the certified gap of any solution found on the way")
    instance_arg(b)
    b.add_argument("--method", "-m", default=None,
                   help="a bound method of the problem (default: the strongest that fits the "
                   "size limit; see `dmlopt list PROBLEM`)")
    b.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="stop an iterative method early (default: the method's own)")
    b.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="bound option, repeatable (values parsed as JSON)")
    b.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK",
                   help="refuse runs estimated above these limits")
    b.add_argument("--json", action="store_true", help="JSON output")
    b.add_argument("-o", "--output", default=None,
                   help="write the solution found on the way (if any) here")
    b.set_defaults(func=cmd_bound)

    e = sub.add_parser("export", help="write the model as LP or MPS (by extension)")
    instance_arg(e)
    e.add_argument("output", help="file ending in .lp or .mps")
    e.add_argument("--formulation", "-f", default=None, help="default: the paper's")
    e.add_argument("--size-limit", default=None, metavar="V,C")
    e.set_defaults(func=cmd_export)

    v = sub.add_parser("validate", help="check an instance, or evaluate a solution of it")
    instance_arg(v)
    v.add_argument("--solution", default=None, metavar="FILE",
                   help="solution to evaluate (exit 3 if infeasible): a solution JSON, or the "
                   "solution file a solver wrote for the model `dmlopt export` wrote (HiGHS, "
                   "SCIP, Gurobi, CPLEX XML or plain 'name value'; see docs/interop.md)")
    v.add_argument("--formulation", "-f", default=None,
                   help="the formulation the model was exported in (default: the same as "
                   "`dmlopt export`)")
    v.add_argument("-o", "--output", default=None,
                   help="write the solution read as solution JSON here")
    v.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK",
                   help="limits in force while the solution is evaluated")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=cmd_validate)

    g = sub.add_parser("generate", help="generate an instance")
    g.add_argument("problem")
    g.add_argument("--generator", "-g", default=None)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--param", "-p", action="append", metavar="KEY=VALUE",
                   help="generator parameter, repeatable (values parsed as JSON)")
    g.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK",
                   help="refuse generators estimated above MEMORY bytes or WORK operations")
    g.add_argument("-o", "--output", default=None, help="file to write (default: stdout)")
    g.set_defaults(func=cmd_generate)

    ls = sub.add_parser("list", help="problems, formulations, heuristics, generators; with "
                        "PROBLEM, every option and parameter")
    ls.add_argument("problem", nargs="?", default=None)
    ls.add_argument("--data", action="store_true", help="the shipped instances, loadable by "
                    "name (dmlopt solve tabgp/er12-p03-tau1-s0)")
    ls.set_defaults(func=cmd_list)

    sc = sub.add_parser("schema", help="JSON Schema of a problem's instance, solution, "
                        "heuristic options or generator parameters")
    sc.add_argument("problem")
    which = sc.add_mutually_exclusive_group()
    which.add_argument("--solution", action="store_true", help="the solution format")
    which.add_argument("--heuristic", metavar="NAME", help="a heuristic's options")
    which.add_argument("--generator", metavar="NAME", help="a generator's parameters")
    sc.set_defaults(func=cmd_schema)

    from dmlopt import references_cli

    references_cli.register(sub)
    _problem_commands(sub)
    _extra_commands(sub)
    return p


def _problem_commands(sub: Any) -> None:
    """Commands problems contribute (``registry.commands()``): parsed by the command's own
    parser, built only when the command runs, so ``dmlopt`` starts without importing them."""
    for name, problem in registry.commands().items():
        c = sub.add_parser(name, help=f"({problem}) see `dmlopt {name} --help`", add_help=False,
                           prefix_chars="\0")
        c.add_argument("rest", nargs=argparse.REMAINDER)
        c.set_defaults(func=lambda args, name=name: _run_command(name, args.rest))


def _run_command(name: str, argv: list[str]) -> int:
    entry = registry.command(name)
    p = _Parser(prog=f"dmlopt {name}", description=entry.help)
    entry.configure(p)
    return int(entry.run(p.parse_args(argv)) or 0)


def _extra_commands(sub: Any) -> None:
    """Commands of the benchmark harness (``bench``, ``report``), when it is installed."""
    try:
        from dmlopt.benchmarks import cli as bench_cli
    except ImportError:
        return
    bench_cli.register(sub)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        return int(args.func(args) or 0)
    except ObjectiveMismatchError as exc:
        return _fail(f"internal error: {exc}", 1)
    except (DmloptError, InstanceError) as exc:
        return _fail(str(exc), 2)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback by default
        if os.environ.get("DMLOPT_DEBUG"):
            raise
        return _fail(f"internal error: {type(exc).__name__}: {exc}", 1)


def _fail(message: str, code: int) -> int:
    print(f"dmlopt: {' '.join(message.split())}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
