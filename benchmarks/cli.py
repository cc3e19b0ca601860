"""``dmlopt bench``, ``dmlopt report`` (and ``dmlopt reproduce``, :mod:`.reproduce`): the
harness's commands, registered into dmlopt's CLI.

``dmlopt bench SUITE [-o results/X.sqlite] [--workers N] [--dask ADDRESS] [--rerun] [--list]
[--max-runs N]`` validates the whole suite first (exit 2 with one line on any error, nothing on
stdout and no store created), refuses a suite of more than 10,000 runs unless ``--max-runs``
raises the cap, refuses an ``-o`` file that is not a dmlopt store, skips the runs already in the
store, runs the rest and commits each row as it finishes. Progress is a bar with ETA on a
terminal, plain lines otherwise (``CI`` set or stderr not a TTY). Ctrl-C stops the sweep, kills
the running children and keeps every finished row; the same command resumes it (exit 130).

``dmlopt report STORE.sqlite -o DIR`` writes ``report.md``, CSV tables and PNG plots into DIR
(nothing else is written; the store is opened read-only and must be a dmlopt store).
"""

from __future__ import annotations

import argparse
from typing import Any

from dmlopt import io
from dmlopt.benchmarks import suite as suite_mod
from dmlopt.errors import DmloptError

from .run import run_suite


def cmd_bench(args: argparse.Namespace) -> int:
    if args.list:
        for name, path in suite_mod.shipped().items():
            print(f"{name:<20} {suite_mod.describe(path)}")
        return 0
    if not args.suite:
        raise DmloptError("bench: SUITE is required (or --list; see dmlopt bench --help)")
    if args.workers is not None and args.workers < 1:
        raise DmloptError(f"--workers: {args.workers} must be at least 1")
    if args.max_runs is not None and args.max_runs < 1:
        raise DmloptError(f"--max-runs: {args.max_runs} must be at least 1")
    from dmlopt.benchmarks import store as store_mod

    if args.output:  # refused before the suite is expanded (nothing is written here)
        store_mod.check(io.check_output(args.output, "-o"), "-o")
    suite = suite_mod.load(args.suite, max_runs=args.max_runs or suite_mod.MAX_RUNS)
    from dmlopt.benchmarks import runner

    out = io.check_output(args.output or f"results/{suite.name}.sqlite", "-o")
    workers = args.workers or runner.default_workers()
    try:
        run_suite(suite, out, workers, dask=args.dask, rerun=args.rerun,
                  rerun_failed=args.rerun_failed)
    except KeyboardInterrupt:
        return 130
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from dmlopt.benchmarks import report

    files = report.write(args.store, args.output)
    for path in files:
        print(f"wrote {path}")
    return 0


def register(sub: Any) -> None:
    """Add ``bench`` and ``report`` to dmlopt's subcommands."""
    b = sub.add_parser("bench", help="run a benchmark suite into a results store",
                       description="Run a benchmark suite (a shipped name such as 'quick', or a "
                       "TOML file). Runs already in the store are skipped.")
    b.add_argument("suite", nargs="?", help="shipped suite name or path to a TOML suite")
    b.add_argument("-o", "--output", default=None, metavar="STORE.sqlite",
                   help="results store (default: results/<suite name>.sqlite)")
    b.add_argument("--workers", type=int, default=None, metavar="N",
                   help="parallel runs (default: the number of cores)")
    b.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="run on a Dask cluster at ADDRESS (tcp://host:8786), or 'local' for a "
                   "LocalCluster")
    b.add_argument("--rerun", action="store_true", help="run again the runs already stored")
    b.add_argument("--rerun-failed", action="store_true",
                   help="run again the stored runs whose status is error or killed")
    b.add_argument("--max-runs", type=int, default=None, metavar="N",
                   help=f"run a suite of more than {suite_mod.MAX_RUNS:,} runs (the cap); "
                   "a larger suite is refused unless N covers it")
    b.add_argument("--list", action="store_true", help="list the shipped suites and exit")
    b.set_defaults(func=cmd_bench)

    r = sub.add_parser("report", help="Markdown + CSV + PNG report of a results store")
    r.add_argument("store", help="results store written by dmlopt bench")
    r.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="output directory (created; only report files are written there)")
    r.set_defaults(func=cmd_report)

    from . import reproduce

    reproduce.register(sub)
