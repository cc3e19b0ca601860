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
import json
import os
from collections import Counter
from typing import Any

from dmlopt import io
from dmlopt.benchmarks import suite as suite_mod
from dmlopt.contract import Command
from dmlopt.errors import DmloptError

from .run import run_suite


def cmd_bench(args: argparse.Namespace) -> int:
    if args.list:
        suites = shipped_suites()
        if args.json:
            print(json.dumps(suites, indent=2))
        else:
            for entry in suites:
                print(f"{entry['name']:<20} {entry['description']}")
        return 0
    if args.json:
        raise DmloptError("bench: --json applies to --list only (the runs go to the store; "
                          "dmlopt report --json summarises a report)")
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


def shipped_suites() -> list[dict[str, str]]:
    """The shipped suites, as ``dmlopt bench --list --json`` prints them.

    Returns
    -------
    list of dict
        One ``{name, description, path}`` per shipped suite, by name; ``path`` is the TOML
        file (copy it to start a suite of your own).
    """
    return [{"name": name, "description": suite_mod.describe(path), "path": str(path)}
            for name, path in suite_mod.shipped().items()]


def cmd_report(args: argparse.Namespace) -> int:
    from dmlopt.benchmarks import report

    files = report.write(args.store, args.output)
    if args.json:
        print(json.dumps(report_summary(args.store, args.output, files), indent=2))
        return 0
    for path in files:
        print(f"wrote {path}")
    return 0


def report_summary(store: Any, outdir: Any, files: list[Any]) -> dict[str, Any]:
    """What ``dmlopt report --json`` prints: the report written, as data.

    Parameters
    ----------
    store : the results store the report was made from.
    outdir : the report's directory.
    files : the files written (as :func:`dmlopt.benchmarks.report.write` returns them).

    Returns
    -------
    dict
        ``store``, ``output``, ``runs`` (rows in the store), ``problems`` (runs per problem),
        ``statuses`` (runs per status) and ``files``: one ``{path, kind}`` per file written,
        ``kind`` one of ``markdown``, ``csv``, ``png``.
    """
    from dmlopt.benchmarks import store as store_mod

    rows = store_mod.read(store)
    kinds = {".md": "markdown", ".csv": "csv", ".png": "png"}
    return {"store": str(store), "output": str(outdir), "runs": len(rows),
            "problems": dict(sorted(Counter(r["problem"] for r in rows).items())),
            "statuses": dict(sorted(Counter(r["status"] for r in rows).items())),
            "files": [{"path": str(f), "kind": kinds.get(os.path.splitext(str(f))[1], "other")}
                      for f in files]}


def register(sub: Any) -> None:
    """Add ``bench``, ``report`` and ``reproduce`` to the subcommands ``sub``."""
    _register_bench(sub)
    _register_report(sub)
    _register_reproduce(sub)


def _register_bench(sub: Any) -> None:
    """Add ``bench`` to the subcommands ``sub``."""
    b = sub.add_parser("bench", help="run a benchmark suite into a results store",
                       description="Run a benchmark suite (a shipped name such as 'quick', or a "
                       "TOML file). Runs already in the store are skipped.")
    b.add_argument("suite", nargs="?", help="shipped suite name (see --list) or path to a "
                   "TOML suite")
    b.add_argument("-o", "--output", default=None, metavar="STORE.sqlite",
                   help="results store (default: results/<suite name>.sqlite)")
    b.add_argument("--workers", type=int, default=None, metavar="N",
                   help="parallel runs (default: the number of cores)")
    b.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="run on a Dask cluster at ADDRESS (tcp://host:8786), or 'local' for a "
                   "LocalCluster (default: a local pool of --workers processes)")
    b.add_argument("--rerun", action="store_true", help="run again the runs already stored")
    b.add_argument("--rerun-failed", action="store_true",
                   help="run again the stored runs whose status is error or killed")
    b.add_argument("--max-runs", type=int, default=None, metavar="N",
                   help=f"run a suite of more than {suite_mod.MAX_RUNS:,} runs (the cap); "
                   f"a larger suite is refused unless N covers it (default: "
                   f"{suite_mod.MAX_RUNS:,})")
    b.add_argument("--list", action="store_true", help="list the shipped suites and exit")
    b.add_argument("--json", action="store_true",
                   help="with --list: print the suites as JSON (name, description, path) "
                   "(default: one line per suite)")
    b.set_defaults(func=cmd_bench)


def _register_report(sub: Any) -> None:
    """Add ``report`` to the subcommands ``sub``."""
    r = sub.add_parser("report", help="Markdown + CSV + PNG report of a results store",
                       description="Write report.md, CSV tables and PNG plots of a results "
                       "store into DIR (the store is opened read-only).")
    r.add_argument("store", help="results store written by dmlopt bench")
    r.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="output directory (required; created; only report files are written "
                   "there)")
    r.add_argument("--json", action="store_true",
                   help="print a JSON summary of what was written: store, runs per problem "
                   "and status, files (default: one 'wrote FILE' line per file)")
    r.set_defaults(func=cmd_report)


class _Into:
    """A stand-in for argparse's subparsers whose ``add_parser`` returns the command's own
    parser, so that :func:`register` fills the parser dmlopt's CLI builds for a command."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser

    def add_parser(self, name: str, *, help: str = "", description: str | None = None,
                   **_kw: Any) -> argparse.ArgumentParser:
        if description:
            self.parser.description = description
        return self.parser


def _command(name: str, text: str, configure: Any) -> Command:
    """The :class:`~dmlopt.contract.Command` ``dmlopt NAME``: its parser filled by
    ``configure(subparsers)``, run by the ``func`` that sets."""
    return Command(name, text, lambda p: configure(_Into(p)), lambda args: args.func(args))


def _register_reproduce(sub: Any) -> None:
    """Add ``reproduce`` to the subcommands ``sub``."""
    from . import reproduce

    reproduce.register(sub)


#: the harness's commands, added to dmlopt's command line through the ``dmlopt.commands`` entry
#: points (pyproject.toml), as a problem's commands are: the core imports no harness code
COMMANDS = {
    "bench": _command("bench", "run a benchmark suite into a results store",
                      _register_bench),
    "report": _command("report", "Markdown + CSV + PNG report of a results store",
                       _register_report),
    "reproduce": _command("reproduce", "re-create a paper's tables and figures (runs its "
                          "suites)", _register_reproduce),
}
