"""``dmlopt references [PROBLEM...] [--json | --verify | --export DIR]``: the reference library
on the command line (:mod:`dmlopt.references`)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from dmlopt import references
from dmlopt.errors import DmloptError, InstanceError


def cmd_references(args: argparse.Namespace) -> int:
    if args.export:
        return _export(args)
    if args.size_limit:
        raise DmloptError("references: --size-limit applies to --export only")
    if args.verify:
        return _verify(args)
    recs = [r for p in (args.problem or [None]) for r in references.records(p)]
    if args.json:
        print(json.dumps([r.as_dict() for r in recs], indent=1))
        return 0
    counts: dict[str, dict[str, int]] = {}
    for r in recs:
        counts.setdefault(r.problem, {}).setdefault(r.status, 0)
        counts[r.problem][r.status] += 1
    print(f"{'problem':<10} {'id':<34} {'status':<10} {'objective':>14} {'bound':>14} "
          f"{'method':<22} {'seconds':>8}")
    for r in recs:
        bound = "-" if r.bound is None else f"{r.bound:.8g}"
        print(f"{r.problem:<10} {r.id:<34} {r.status:<10} {r.objective:>14.8g} {bound:>14} "
              f"{r.method:<22} {r.seconds:>8.1f}")
    print("; ".join(f"{p}: " + ", ".join(f"{n} {s}" for s, n in sorted(c.items()))
                    for p, c in counts.items()) or "no records")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Every record checked (``references.verify_library``): one line on stderr per failure
    (with a count when there are several), then exit 2; a bad record never stops the others
    being checked."""
    t0 = time.perf_counter()
    count, failures = 0, []
    for p in args.problem or [None]:
        n, bad = references.verify_library(p)
        count, failures = count + n, failures + bad
    if len(failures) == 1:
        raise DmloptError(f"references: {failures[0]}")
    for line in failures:
        print(f"dmlopt: references: {' '.join(line.split())}", file=sys.stderr)
    if failures:
        raise DmloptError(f"references: {len(failures)} check(s) failed in {count} "
                          "records") from None
    print(f"{count} records verified in {time.perf_counter() - t0:.1f} s: every "
          "solution re-evaluates to its objective, every bound and status is consistent")
    return 0


def _export(args: argparse.Namespace) -> int:
    from dmlopt.contract import parse_limits

    limit = None
    if args.size_limit is not None:
        if len(args.size_limit.split(",")) != 2:
            raise InstanceError("--size-limit", args.size_limit, "must be V,C (variables, "
                                "constraints: the export builds models only, e.g. "
                                "100000,1000000)")
        limit = parse_limits(args.size_limit, "--size-limit")
    t0 = time.perf_counter()
    exported, skipped = references.export_set(
        args.export, args.problem or None, size_limit=limit,
        log=lambda line: print(f"dmlopt: references: {line}", file=sys.stderr))
    opt = sum(1 for e in exported if e.status == "optimal")
    print(f"wrote {len(exported)} models ({opt} =opt=, {len(exported) - opt} =best=) and "
          f"references.solu to {args.export} in {time.perf_counter() - t0:.1f} s; "
          f"{len(skipped)} records skipped")
    return 0


def register(sub: Any) -> None:
    r = sub.add_parser("references", help="the reference library: certified optima and "
                       "best-known values of shipped instances",
                       description="List, print as JSON or re-check the certified values "
                       "shipped in data/<problem>/references.json.")
    r.add_argument("problem", nargs="*", default=None,
                   help="the problems (default: every library)")
    which = r.add_mutually_exclusive_group()
    which.add_argument("--json", action="store_true",
                       help="print every record as JSON, with the absolute paths of its "
                       "instance and solution (default: a table)")
    which.add_argument("--verify", action="store_true",
                       help="re-evaluate every solution and check objective, bound and status; "
                       "exit 2 on any mismatch")
    which.add_argument("--export", metavar="DIR", default=None,
                       help="write the library as a benchmark set: DIR/<problem>/<id>.mps.gz, "
                       "DIR/references.solu (MIPLIB format), DIR/README.md; DIR must not exist, "
                       "be empty or hold an interrupted export of the same records (resumed) "
                       "(default: list the records)")
    r.add_argument("--size-limit", default=None, metavar="V,C",
                   help="with --export: skip models above V variables or C constraints "
                   "(default 100000,1000000)")
    r.set_defaults(func=cmd_references)
