"""Run a suite into a results store: the sweep ``dmlopt bench`` and ``dmlopt reproduce`` share
(:func:`run_suite`), with its progress display and the store lock."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections import Counter
from typing import Any

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
        except KeyboardInterrupt as exc:
            progress.close()
            print(f"dmlopt: interrupted; {sum(statuses.values())} finished run(s) are stored in "
                  f"{out}; run the same command to resume", file=sys.stderr)
            exc.reported = True  # the commands above print no second line
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
