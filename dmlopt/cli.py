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
import re
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from dmlopt import __version__, api, exact, io, registry
from dmlopt.arguments import CLI_FLAGS
from dmlopt.contract import Limits, parse_limits
from dmlopt.errors import (
    DmloptError,
    InstanceError,
    Interrupted,
    ModelTooLargeError,
    ObjectiveMismatchError,
)
from dmlopt.listing import cmd_list, cmd_schema


class UsageError(DmloptError):
    """Bad command-line usage (exit 2)."""


class _Parser(argparse.ArgumentParser):
    """dmlopt's argument parser: usage errors are one line (exit 2), and help text written in
    reStructuredText (descriptions taken from docstrings) is shown as plain text."""

    def error(self, message: str) -> NoReturn:  # one line, exit 2
        where = self.prog.removeprefix("dmlopt").strip()
        raise UsageError(f"{where + ': ' if where else ''}{message} (see {self.prog} --help)")

    def format_help(self) -> str:
        return plain(super().format_help())

    def format_usage(self) -> str:
        return plain(super().format_usage())


def plain(text: str) -> str:
    """Help text without reStructuredText markup: inline literals (two backticks) and roles
    such as ``:func:`` are shown as Markdown-style code (one backtick).

    Parameters
    ----------
    text : help text, possibly taken from a docstring.

    Returns
    -------
    str
        The text with inline literals shown as Markdown-style code.

    Examples
    --------
    >>> plain("see ``dmlopt list`` and :func:`dmlopt.solve`")
    'see `dmlopt list` and `dmlopt.solve`'
    """
    text = re.sub(r"``([^`]+)``", r"`\1`", text)
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)


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


def result_json(res: Any) -> dict[str, Any]:
    """A :class:`~dmlopt.result.Result` as the command line prints it with ``--json``.

    Parameters
    ----------
    res : the result of a solve, heuristic or bound run.

    Returns
    -------
    dict
        The fields of ``Result.to_json`` with each metric once, under ``metrics`` (the flat
        ``m_<metric>`` copies of ``Result.as_dict`` are left out), and the solution.
    """
    data = json.loads(res.to_json())
    for key in res.metrics:
        data.pop(f"m_{key}", None)
    return data


def _print_result(res: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result_json(res), indent=2))
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
    # a metric named like a row above (a method's own seconds) is shown with the method's name
    shown = {k for k, _ in rows} | {"message"}
    short = res.method.removeprefix("bound:")
    rows += [(f"{k} ({short})" if k in shown else k, v) for k, v in res.metrics.items()]
    if res.message:
        rows.append(("message", res.message))
    _print_rows(rows)


def _print_rows(rows: list[tuple[str, Any]]) -> None:
    """``key  value`` lines, the values in one column."""
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {_fmt(value)}")


def _write_solution(res: Any, path: str | None) -> None:
    if path and res.solution is not None:
        io.save(res.solution, path)


def cmd_solve(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = api.as_instance(args.instance)
    try:
        res = api.solve(
            inst, args.solver, time_limit=args.time_limit, mip_gap=args.mip_gap,
            threads=args.threads, formulation=args.formulation, warm_start=args.warm_start,
            size_limit=_size_limit(args.size_limit), tee=args.tee,
            solver_options=key_values(args.solver_option, "--solver-option") or None,
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
    if getattr(exc.result, "status", None) == "bound":
        what = "the bound reached so far is above" + ("" if kept else " (no solution yet)")
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


def _options(args: argparse.Namespace, call: str) -> dict[str, Any]:
    """``--option KEY=VALUE``s, none named after an argument of the command (``seed``)."""
    options = key_values(args.option, "--option")
    api.check_option_names(options, call, CLI_FLAGS)
    return options


def cmd_heuristic(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = api.as_instance(args.instance)
    options = _options(args, "heuristic")
    name = args.name or registry.of(inst).recommended_heuristic_for(inst)
    if "progress" not in options and sys.stderr.isatty() and _has_option(inst, name,
                                                                        "progress"):
        options["progress"] = PROGRESS_SECONDS  # long runs say how far they are
    try:
        res = api.heuristic(inst, name, seed=args.seed,
                            size_limit=_size_limit(args.size_limit), **options)
    except Interrupted as exc:  # Ctrl-C on a heuristic that keeps its best so far: keep it
        return _kept(exc, args)
    _write_solution(res, args.output)
    _print_result(res, args.json)
    return 0


def cmd_bound(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = api.as_instance(args.instance)
    options = _options(args, "bound")
    try:
        res = api.bound(inst, args.method, time_limit=args.time_limit,
                        size_limit=_size_limit(args.size_limit), **options)
    except Interrupted as exc:  # Ctrl-C on a method whose bound so far holds: keep it
        return _kept(exc, args)
    _write_solution(res, args.output)
    _print_result(res, args.json)
    if args.output and res.solution is None:  # -o names a solution file: say why there is none
        print(f"dmlopt: note: {args.output} not written: the "
              f"{res.method.removeprefix('bound:')} bound found no feasible solution on the way "
              "(the bound itself is printed)", file=sys.stderr)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = api.as_instance(args.instance)
    api._export_path(args.output)  # a wrong extension is refused before the build
    problem = registry.of(inst)
    form = args.formulation or api.default_formulation(problem)
    api.check_size(inst, form, _size_limit(args.size_limit))
    limit = args.build_limit
    need, words = exact.build_estimate(problem, inst, form, write=True)
    hint = "raise --build-limit or take a smaller formulation or instance"
    if need > limit:
        raise ModelTooLargeError(
            f"export: the {form!r} model would take about {need:.0f} s to build and write "
            f"({words}), above the build limit of {limit:g} s; {hint}")
    start = time.perf_counter()
    with exact.build_watch(f"export: the {form!r} model", start + limit,
                           exact.BUILD_PROGRESS_SECONDS, hint, need):
        model = api.build(inst, form, _size_limit(args.size_limit))
        n = api.write_model(model, args.output)
    quad = f", {n['quadratic']} quadratic" if n["quadratic"] else ""
    print(f"wrote {args.output} ({n['variables']} variables of which {n['integer']} integer, "
          f"{n['constraints']} constraints{quad})")
    return 0


#: seconds ``dmlopt export`` may spend building and writing a model by default
BUILD_LIMIT = 60.0


def _seconds(raw: str) -> float:
    """A number of seconds > 0 and finite (``--build-limit``)."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of seconds") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"{raw!r} must be a number of seconds > 0")
    return value


def cmd_validate(args: argparse.Namespace) -> int:
    _output(args.output)
    inst = api.as_instance(args.instance)
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
        rows: list[tuple[str, Any]] = []
        if source:
            form = args.formulation or api.default_formulation(registry.of(inst))
            rows.append(("read", f"{source} solution file, {form} formulation"))
        rows += [("feasible", ev.feasible), ("objective", ev.objective), *ev.metrics.items()]
        _print_rows(rows)
        for v in ev.violations:
            print(f"violated: {v}")
        if args.output:
            print(f"wrote {args.output}")
    return 0 if ev.feasible else 3


def cmd_generate(args: argparse.Namespace) -> int:
    _output(args.output)
    spec = key_values(args.param, "--param")
    if args.generator:
        if "generator" in spec and spec["generator"] != args.generator:
            raise UsageError(f"generate: --param generator={spec['generator']} and --generator "
                             f"{args.generator} name two generators (give one)")
        spec["generator"] = args.generator
    inst = api.generate(args.problem, spec, seed=args.seed,
                        size_limit=_size_limit(args.size_limit))
    if args.output:
        io.save(inst, args.output)
        print(f"wrote {args.output}")
    else:
        print(io.to_json(inst))
    return 0


DESCRIPTION = ("Exact models, fast heuristics and benchmarks for the optimization problems of "
               "distributed ML training. Every command has --help.")

#: what ``dmlopt --help`` says last
EPILOG = ("exit codes: 0 done; 2 bad input (one line on stderr); 3 dmlopt validate --solution "
          "or dmlopt certify: infeasible; 1 a bug in dmlopt (DMLOPT_DEBUG=1 shows the "
          "traceback); 130 interrupted (Ctrl-C)")

#: help of ``--size-limit`` for models (solve, export)
_MODEL_LIMIT = ("refuse models above V variables or C constraints (default: 1e6,2e6, or "
                "DMLOPT_SIZE_LIMIT)")

#: help of ``--size-limit`` for runs (heuristic, bound, validate, generate)
_RUN_LIMIT = ("refuse runs estimated above V variables, C constraints, MEMORY bytes (units "
              "KiB, MiB, GiB) or WORK elementary operations (default: 1e6,2e6,2GiB,1e12, or "
              "DMLOPT_SIZE_LIMIT)")


def parser() -> argparse.ArgumentParser:
    """The ``dmlopt`` argument parser, every subcommand included.

    Returns
    -------
    argparse.ArgumentParser
        A parser whose usage errors raise :class:`UsageError` (one line, exit 2).
    """
    p = _Parser(prog="dmlopt", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"dmlopt {__version__}",
                   help="print dmlopt's version and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser,
                           metavar="COMMAND", title="commands",
                           help="run `dmlopt COMMAND --help` for its options")

    _run_commands(sub)
    _file_commands(sub)

    from dmlopt import certify_cli, references_cli

    references_cli.register(sub)
    certify_cli.register(sub)
    _problem_commands(sub)
    return p


def _instance_arg(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("instance", help="instance JSON file, a shipped name (tabgp/...; see "
                    "`dmlopt list --data`) or a reference library id (tap/qaplib-nug12; see "
                    "`dmlopt references`)")


def _json_arg(sp: argparse.ArgumentParser, what: str) -> None:
    sp.add_argument("--json", action="store_true",
                    help=f"print {what} as JSON (default: aligned text)")


def _run_commands(sub: Any) -> None:
    """``solve``, ``heuristic`` and ``bound``: the commands that run a method."""
    s = sub.add_parser("solve", help="solve an instance exactly (HiGHS by default)",
                       description="Solve an instance exactly with a MILP/MINLP solver; the "
                       "objective is re-computed by the problem's evaluator.")
    _instance_arg(s)
    s.add_argument("--solver", default="highs",
                   help="highs, scip, gurobi, cplex, xpress or copt (each when its Python "
                   "package is installed), or another Pyomo solver listed in DMLOPT_SOLVERS "
                   "(default: highs)")
    s.add_argument("--solver-option", action="append", metavar="KEY=VALUE",
                   help="a parameter of the solver under its own name (HiGHS mip_heuristic_"
                   "effort, SCIP limits/nodes, Gurobi MIPFocus, CPLEX mip.strategy.search, "
                   "Xpress heuristics, COPT HeurLevel), repeatable; values parsed as JSON "
                   "(default: none)")
    s.add_argument("--formulation", "-f", default=None, metavar="NAME",
                   help="a formulation of the problem (default: its fastest formulation "
                   "proven equal to the paper's, marked in `dmlopt list PROBLEM`; `-f paper` "
                   "for the paper's)")
    s.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="stop after SECONDS with the best solution found (default: no time "
                   "limit)")
    s.add_argument("--mip-gap", type=float, default=None, metavar="REL",
                   help="stop at this relative gap, in [0, 1) (default: the solver's own, "
                   "HiGHS, Gurobi, CPLEX, Xpress and COPT 1e-4, SCIP 0); optimal is reported "
                   "only at a gap <= 1e-4")
    s.add_argument("--threads", type=int, default=None, metavar="N",
                   help="solver threads, in [1, 256] (default: the solver's own choice)")
    s.add_argument("--warm-start", default=None, metavar="HEURISTIC|FILE",
                   help="a heuristic name or a solution JSON file to start from (default: "
                   "none)")
    s.add_argument("--size-limit", default=None, metavar="V,C", help=_MODEL_LIMIT)
    s.add_argument("--tee", action="store_true", help="show the solver log (default: hidden)")
    s.add_argument("--progress", type=float, default=None, metavar="SECONDS",
                   help="a progress line on stderr every SECONDS (HiGHS and SCIP: incumbent, "
                   "bound, gap, elapsed; the model's build: elapsed, every SECONDS or "
                   f"{exact.BUILD_PROGRESS_SECONDS:g} s, whichever is longer) (default: "
                   f"every {PROGRESS_SECONDS / 2:g} when stderr "
                   "is a terminal, else none)")
    _json_arg(s, "the result with its solution")
    s.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write the solution JSON here (default: not written)")
    s.set_defaults(func=cmd_solve)

    h = sub.add_parser("heuristic", help="run a heuristic",
                       description="Run a heuristic on an instance; its solution is scored by "
                       "the problem's evaluator.")
    _instance_arg(h)
    h.add_argument("name", nargs="?", default=None,
                   help="heuristic name (default: the problem's recommended heuristic for the "
                   "instance, marked in `dmlopt list`; see `dmlopt list PROBLEM`)")
    h.add_argument("--seed", type=int, default=0,
                   help="random seed, an integer in [0, 2^63 - 1] (default: 0)")
    h.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="heuristic option, repeatable; values parsed as JSON (default: the "
                   "heuristic's defaults; see `dmlopt list PROBLEM`)")
    h.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK", help=_RUN_LIMIT)
    _json_arg(h, "the result with its solution")
    h.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write the solution JSON here (default: not written)")
    h.set_defaults(func=cmd_heuristic)

    b = sub.add_parser("bound", help="a dual bound on the optimum (lower for min, upper for "
                       "max) and the certified gap of any solution found on the way",
                       description="A dual bound on the optimum (lower for a minimisation, "
                       "upper for a maximisation) and the certified gap of any feasible "
                       "solution found on the way.")
    _instance_arg(b)
    b.add_argument("--method", "-m", default=None, metavar="NAME",
                   help="a bound method of the problem (default: its recommended one, marked "
                   "in `dmlopt list`, else the strongest that fits the size limit; see "
                   "`dmlopt list PROBLEM`)")
    b.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="stop an iterative method early (default: the method's own)")
    b.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="bound option, repeatable; values parsed as JSON (default: the "
                   "method's defaults)")
    b.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK", help=_RUN_LIMIT)
    _json_arg(b, "the result")
    b.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write the solution found on the way here; exit 2 with nothing "
                   "written when the method found none (default: not written)")
    b.set_defaults(func=cmd_bound)



def _file_commands(sub: Any) -> None:
    """``export``, ``validate``, ``generate``, ``list`` and ``schema``."""
    e = sub.add_parser("export", help="write the model as LP or MPS (by extension)",
                       description="Write the model of an instance as an LP or MPS file, with "
                       "readable names. A model above --size-limit, or estimated to take longer "
                       "than --build-limit to build and write, is refused before anything is "
                       "built (one line, exit 2); e.g. `dmlopt export rar/fig2 model.lp -f paper "
                       "--build-limit 120`.")
    _instance_arg(e)
    e.add_argument("output", help="file ending in .lp or .mps")
    e.add_argument("--formulation", "-f", default=None, metavar="NAME",
                   help="a formulation of the problem (default: the one `dmlopt solve` uses)")
    e.add_argument("--size-limit", default=None, metavar="V,C", help=_MODEL_LIMIT)
    e.add_argument("--build-limit", type=_seconds, default=BUILD_LIMIT, metavar="SECONDS",
                   help="refuse a model whose build and write are estimated above SECONDS "
                   "(from its size; nonzeros where rows grow with the instance), and stop one "
                   f"that runs past it, nothing written (default: {BUILD_LIMIT:g}); a line on "
                   f"stderr every {exact.BUILD_PROGRESS_SECONDS:g} s while it builds")
    e.set_defaults(func=cmd_export)

    v = sub.add_parser("validate", help="check an instance, or evaluate a solution of it",
                       description="Check an instance, or evaluate a solution of it with the "
                       "problem's evaluator (exit 3 if the solution is infeasible).")
    _instance_arg(v)
    v.add_argument("--solution", default=None, metavar="FILE",
                   help="solution to evaluate (exit 3 if infeasible): a solution JSON, or the "
                   "solution file a solver wrote for the model `dmlopt export` wrote (HiGHS, "
                   "SCIP, Gurobi, CPLEX XML or plain 'name value'; see docs/interop.md) "
                   "(default: check the instance only)")
    v.add_argument("--formulation", "-f", default=None, metavar="NAME",
                   help="the formulation the model was exported in (default: the same as "
                   "`dmlopt export`)")
    v.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write the solution read as solution JSON here (default: not "
                   "written)")
    v.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK",
                   help="limits in force while the solution is evaluated (default: "
                   "1e6,2e6,2GiB,1e12, or DMLOPT_SIZE_LIMIT)")
    _json_arg(v, "the evaluation")
    v.set_defaults(func=cmd_validate)

    g = sub.add_parser("generate", help="generate an instance",
                       description="Generate an instance with one of a problem's generators.")
    g.add_argument("problem", help="a problem name (see `dmlopt list`)")
    g.add_argument("--generator", "-g", default=None, metavar="NAME",
                   help="a generator of the problem (default: its first; see `dmlopt list "
                   "PROBLEM`)")
    g.add_argument("--seed", type=int, default=0,
                   help="random seed, an integer in [0, 2^63 - 1] (default: 0)")
    g.add_argument("--param", "-p", action="append", metavar="KEY=VALUE",
                   help="generator parameter, repeatable; values parsed as JSON (default: the "
                   "generator's defaults)")
    g.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK", help=_RUN_LIMIT)
    g.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="file to write (default: print the instance JSON)")
    g.set_defaults(func=cmd_generate)

    ls = sub.add_parser("list", help="problems, formulations, heuristics, generators; with "
                        "PROBLEM, every option and parameter",
                        description="The problems with their formulations, heuristics, bounds "
                        "and generators; with PROBLEM, every option and parameter with type, "
                        "default and meaning.")
    ls.add_argument("problem", nargs="?", default=None,
                    help="show every option and parameter of this problem (default: all "
                    "problems, names only)")
    ls.add_argument("--data", action="store_true", help="the shipped instances, loadable by "
                    "name (dmlopt solve tabgp/er12-p03-tau1-s0)")
    _json_arg(ls, "the listing (with PROBLEM: options and parameters as JSON Schema)")
    ls.set_defaults(func=cmd_list)

    sc = sub.add_parser("schema", help="JSON Schema of a problem's instance, solution, "
                        "heuristic options or generator parameters",
                        description="Print the JSON Schema of a problem's instance format "
                        "(default), solution format, heuristic options or generator "
                        "parameters.")
    sc.add_argument("problem", help="a problem name (see `dmlopt list`)")
    which = sc.add_mutually_exclusive_group()
    which.add_argument("--solution", action="store_true",
                       help="the solution format (default: the instance format)")
    which.add_argument("--heuristic", metavar="NAME",
                       help="a heuristic's options (default: the instance format)")
    which.add_argument("--generator", metavar="NAME",
                       help="a generator's parameters (default: the instance format)")
    sc.set_defaults(func=cmd_schema)



def _problem_commands(sub: Any) -> None:
    """Commands other packages contribute (``registry.commands()``: a problem's, such as
    ``train``, and the benchmark harness's ``bench``, ``report``, ``reproduce``): parsed by the
    command's own parser, built only when the command runs, so ``dmlopt`` starts without
    importing a problem. A command of no problem is listed with its own help line."""
    contributed = registry.commands()
    problems = set(registry.names()) if contributed else set()
    # a problem's commands first, then the others (the harness's), as the help lists them
    for name, owner in sorted(contributed.items(), key=lambda kv: kv[1] not in problems):
        text = (f"({owner}) see `dmlopt {name} --help`" if owner in problems
                else registry.command(name).help)
        c = sub.add_parser(name, help=text, add_help=False, prefix_chars="\0")
        c.add_argument("rest", nargs=argparse.REMAINDER)
        c.set_defaults(func=lambda args, name=name: _run_command(name, args.rest))


def _run_command(name: str, argv: list[str]) -> int:
    entry = registry.command(name)
    p = _Parser(prog=f"dmlopt {name}", description=entry.help)
    entry.configure(p)
    args, extra = p.parse_known_args(argv)
    if extra:
        # argparse fills a list positional (TABLE ...) before the options, so words of it given
        # after an option (`dmlopt reproduce tap --docs docs/tap.md growth`) come back unknown
        listed = [a for a in p._actions if not a.option_strings and a.nargs == "*"]
        if not listed or any(e.startswith("-") for e in extra):
            p.error(f"unrecognized arguments: {' '.join(extra)}")
        setattr(args, listed[-1].dest, [*getattr(args, listed[-1].dest), *extra])
    return int(entry.run(args) or 0)


#: a duplicate of the process's stderr at the first :func:`main`, for the second Ctrl-C's line
_STDERR: int | None = None


def _second_interrupt_stops() -> Any:
    """Ctrl-C once stops a run gracefully (the best so far is kept); a second Ctrl-C ends the
    process at once, for a solver that answers the first only at its next check (HiGHS during
    a long root LP of a MIP), and so does the first while numba compiles (:func:`in_compiler`:
    no exception is raised inside LLVM, no interpreter teardown after it). Returns the handler
    to restore (None: nothing changed)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        return None  # ignored (a background job) or the caller's own handler: leave it
    global _STDERR
    if _STDERR is None:  # a solver run may have fd 2 redirected into its log when Ctrl-C comes
        _STDERR = os.dup(2)
    stderr, count = _STDERR, [0]

    def handler(signum: int, frame: Any) -> None:
        count[0] += 1
        if count[0] > 1:
            os.write(stderr, b"dmlopt: interrupted twice: stopped at once, nothing written\n")
            os._exit(130)
        if in_compiler(frame):  # numba compiling: an exception there can crash LLVM
            os.write(stderr, b"dmlopt: interrupted while numba compiles: stopped at once, "
                     b"nothing written\n")
            os._exit(130)
        raise KeyboardInterrupt

    return signal.signal(signal.SIGINT, handler)


#: the files whose frames mean "numba is compiling": its compiler pipeline, code generation and
#: cache (LLVM's callbacks run there) and llvmlite; not the helpers compiled code calls at run
#: time (``numba/core/serialize.py`` when a kernel raises), where Ctrl-C is answered as usual
_COMPILER_FILES = tuple(os.path.join(*p) for p in (
    ("numba", "core", "compiler.py"), ("numba", "core", "codegen.py"),
    ("numba", "core", "caching.py"), ("llvmlite", "")))


def in_compiler(frame: Any) -> bool:
    """Whether ``frame`` or a caller of it runs numba's compiler, code generation or cache, or
    llvmlite.

    A ``KeyboardInterrupt`` raised there unwinds through LLVM's callbacks (llvmlite's object
    cache): numba then fails with an internal error ("no compiled object yet") or the process
    crashes (SIGSEGV). Compiled code itself runs without Python frames, so a running kernel is
    not "compiling".

    Parameters
    ----------
    frame : a Python frame (the one a signal handler receives), or None.

    Returns
    -------
    bool
        True while numba compiles (or dispatches) in that stack.

    References
    ----------
    Issue 51 (a Ctrl-C during the first compile of TAP's ``tabu`` exited -11).
    """
    while frame is not None:
        if any(p in frame.f_code.co_filename for p in _COMPILER_FILES):
            return True
        frame = frame.f_back
    return False


def main(argv: Sequence[str] | None = None) -> int:
    previous = _second_interrupt_stops()
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _main(argv: Sequence[str] | None) -> int:
    try:
        p = parser()
        args = p.parse_args(argv)
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
