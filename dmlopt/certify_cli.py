"""``dmlopt certify INSTANCE SOLUTION [--formulation F] [--method M] [--time-limit S]
[--json]``: the certified gap of any solution on the command line
(:func:`dmlopt.certification.certify`)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from dmlopt.errors import Interrupted


def cmd_certify(args: argparse.Namespace) -> int:
    """Run :func:`dmlopt.certify` on the command line's arguments and print its Result.

    Parameters
    ----------
    args : the parsed arguments of ``dmlopt certify``.

    Returns
    -------
    int
        0 for a feasible solution, 3 for an infeasible one (as ``dmlopt validate``), 130 when
        Ctrl-C stopped the bound method (the bound so far is printed).

    References
    ----------
    docs/interop.md, "Your own function, certified".
    """
    from dmlopt import api, certification
    from dmlopt.contract import parse_limits

    inst = api.as_instance(args.instance)
    try:
        res = certification.certify(inst, args.solution, method=args.method,
                                    time_limit=args.time_limit, formulation=args.formulation,
                                    size_limit=None if args.size_limit is None else
                                    parse_limits(args.size_limit, "--size-limit"))
    except Interrupted as exc:
        if exc.result is None:
            raise
        _show(exc.result, args.json)
        print("dmlopt: interrupted: the bound reached so far is above", file=sys.stderr)
        return 130
    _show(res, args.json)
    return 3 if res.status == "infeasible" else 0


def _show(res: Any, as_json: bool) -> None:
    from dmlopt.cli import result_json

    if as_json:
        print(json.dumps(result_json(res), indent=2))
        return
    m = res.metrics
    rows: list[tuple[str, Any]] = [
        ("problem", res.problem), ("status", res.status), ("feasible", res.feasible),
        ("objective", res.objective), ("bound", res.bound), ("certified gap", _pct(res.gap)),
        ("reference", m.get("reference")),
        ("reference gap", _pct(m.get("reference_gap"))), ("seconds", f"{res.seconds:.3g}"),
    ]
    if "reference" not in m:
        rows = [r for r in rows if not r[0].startswith("reference")]
    if res.message:
        rows.append(("message", res.message))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {_fmt(value)}")
    for v in res.violations:
        print(f"violated: {v}")


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{100 * value:.4g} %"


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:.10g}"
    return str(value)


def register(sub: Any) -> None:
    """Add ``dmlopt certify`` to the command line's subcommands.

    Parameters
    ----------
    sub : the subparsers of the ``dmlopt`` parser.

    Returns
    -------
    None

    References
    ----------
    docs/interop.md, "Your own function, certified".
    """
    c = sub.add_parser(
        "certify", help="evaluate any solution and certify its gap to the best bound known",
        description="Evaluate a solution (a solution JSON, or a solver's solution file for the "
        "model `dmlopt export` wrote) with the problem's evaluator and certify it: the best "
        "dual bound known (`dmlopt bound`'s, or the reference library's where the instance is "
        "a record, whichever is tighter), the certified gap to it, and the gap to the "
        "library's proven or best-known value. Exit 3 if the solution is infeasible.")
    c.add_argument("instance", help="instance JSON file, a shipped name (tabgp/...; see "
                   "`dmlopt list --data`) or a reference library id (tap/qaplib-nug12; see "
                   "`dmlopt references`)")
    c.add_argument("solution", help="a solution JSON (as `dmlopt solve -o` writes), or the "
                   "solution file a solver wrote for the model `dmlopt export` wrote (HiGHS, "
                   "SCIP, Gurobi, CPLEX XML or plain 'name value'; see docs/interop.md)")
    c.add_argument("--formulation", "-f", default=None, metavar="NAME",
                   help="the formulation a solver's file was exported in (default: the same "
                   "as `dmlopt export`)")
    c.add_argument("--method", "-m", default=None, metavar="NAME",
                   help="the bound method to run (default: the strongest that fits the size "
                   "limit; see `dmlopt list PROBLEM`)")
    c.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                   help="stop the bound method early (default: the method's own)")
    c.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK",
                   help="limits in force while the solution is read and the bound computed "
                   "(default: 1e6,2e6,2GiB,1e12, or DMLOPT_SIZE_LIMIT)")
    c.add_argument("--json", action="store_true",
                   help="print the result with its solution as JSON (default: aligned text)")
    c.set_defaults(func=cmd_certify)
