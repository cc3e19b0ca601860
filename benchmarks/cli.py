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
import shutil
import sys
import time
from collections import Counter
from typing import Any

from dmlopt import io
from dmlopt.benchmarks import suite as suite_mod
from dmlopt.errors import DmloptError


class _Progress:
    """tqdm bar with ETA on a terminal; one plain line per run otherwise."""

    def __init__(self, total: int, desc: str):
        self.total = total
        self.done = 0
        self.bar = None
        if sys.stderr.isatty() and not os.environ.get("CI"):
            from tqdm import tqdm

            cols = shutil.get_terminal_size((100, 24)).columns
            self.bar = tqdm(total=total, desc=desc, unit="run", file=sys.stderr,
                            ncols=cols if cols > 20 else 100)

    def update(self, row: dict[str, Any]) -> None:
        self.done += 1
        obj = row.get("objective")
        obj_s = "-" if obj is None else f"{obj:.6g}"
        secs = row.get("seconds") or 0.0
        bound = row.get("bound")
        bound_s = f" bound={bound:.6g}" if row.get("kind") == "bound" and bound is not None \
            else ""
        why = ""
        if row["status"] in ("error", "killed") and row.get("message"):
            why = f": {' '.join(str(row['message']).split())[:200]}"  # the reason, one line
        text = (f"{row['problem']} {row['instance']} {row['method']} seed={row['seed']}: "
                f"{row['status']}{bound_s} obj={obj_s} ({secs:.2f} s){why}")
        if self.bar is not None:
            self.bar.set_postfix_str(f"{row['method'][:24]}: {row['status']}", refresh=False)
            self.bar.update(1)
        else:
            print(f"[{self.done}/{self.total}] {text}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


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


def run_suite(suite: suite_mod.Suite, out: Any, workers: int, dask: str | None = None,
              rerun: bool = False, rerun_failed: bool = False,
              summary: Any = None) -> Counter[str]:
    """Run the runs of ``suite`` not yet in the store ``out`` and store each row as it finishes.

    Progress goes to stderr. On Ctrl-C the running children are killed, every finished row is
    kept, a line says how to resume, and :class:`KeyboardInterrupt` is raised again. The closing
    line goes to ``summary`` (default stdout). Returns the count of statuses of the runs made.
    """
    from dmlopt.benchmarks import runner
    from dmlopt.benchmarks import store as store_mod

    store = store_mod.Store(out, "-o")
    lock = _exclusive(out, store)
    try:
        skip = set() if rerun else store.keys()
        if rerun_failed:
            skip -= store.failed_keys()
        todo = [t for t in suite.tasks if t.key not in skip]
        where = f"dask {dask}" if dask else f"{workers} worker(s)"
        print(f"suite {suite.name}: {len(suite.tasks)} runs, {len(suite.tasks) - len(todo)} "
              f"already in {out}, {len(todo)} to run on {where}", file=sys.stderr)
        statuses: Counter[str] = Counter()
        failed: dict[str, Counter[str]] = {"error": Counter(), "killed": Counter()}
        progress = _Progress(len(todo), suite.name)

        def on_row(row: dict[str, Any]) -> None:
            store.put(row)
            statuses[row["status"]] += 1
            if row["status"] in failed:
                failed[row["status"]][row["method"]] += 1
            progress.update(row)

        t0 = time.perf_counter()
        try:
            if dask:
                runner.run_dask(todo, dask, workers, on_row)
            else:
                runner.run_local(todo, workers, on_row)
        except KeyboardInterrupt:
            progress.close()
            print(f"dmlopt: interrupted; {sum(statuses.values())} finished run(s) are stored in "
                  f"{out}; run the same command to resume", file=sys.stderr)
            raise
        progress.close()
        wall = time.perf_counter() - t0
        counts = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) or "nothing run"
        print(f"done in {wall:.1f} s: {counts}; results in {out} "
              f"(report: dmlopt report {out} -o DIR)", file=summary or sys.stdout)
        print(failure_summary(failed["error"], failed["killed"]), file=summary or sys.stdout)
    finally:
        store.close()
        os.close(lock)
    return statuses


def failure_summary(errors: Counter[str], killed: Counter[str] | None = None) -> str:
    """The closing line of a sweep: failed runs counted by method, most first.

    Parameters
    ----------
    errors : runs with status ``error``, counted by method.
    killed : runs with status ``killed`` (past their time limit, or a signal), by method.

    Returns
    -------
    str
        ``errors: mine 3, wcg 1`` (``errors: none`` when no run failed), with
        ``; killed: METHOD N, ...`` appended when runs were killed.

    Examples
    --------
    >>> failure_summary(Counter({"wcg": 1, "mine": 3}))
    'errors: mine 3, wcg 1'
    >>> failure_summary(Counter(), Counter({"highs/paper": 2}))
    'errors: none; killed: highs/paper 2'
    """

    def by_method(counts: Counter[str]) -> str:
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return ", ".join(f"{method} {n}" for method, n in ranked) or "none"

    line = f"errors: {by_method(errors)}"
    if killed:
        line += f"; killed: {by_method(killed)}"
    return line


def _exclusive(out: Any, store: Any) -> int:
    """Hold the store for this run alone (``flock`` on the store file, released when the
    process ends): a second ``dmlopt bench`` or ``dmlopt reproduce`` on the same store is
    refused at once instead of running and storing the same runs twice."""
    import fcntl

    fd = os.open(str(out), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        store.close()
        raise DmloptError(f"-o: {out} is in use by another dmlopt bench or reproduce; wait "
                          "for it to finish (then the same command resumes) or use another "
                          "store") from None
    return fd


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
    """Add ``bench`` and ``report`` to dmlopt's subcommands."""
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

    from . import reproduce

    reproduce.register(sub)
