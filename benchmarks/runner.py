"""Execution of benchmark tasks: one child process per run, with a hard time limit.

Local pool (the default)
    Up to ``workers`` children at a time, each forked from a ``forkserver`` that has imported
    dmlopt, the suite's problem modules and Pyomo/HiGHS/SCIP once, so a run costs a fork, not an
    interpreter start and an import (the harness's overhead per run is what ``wall_seconds -
    seconds`` in the store measures). A child is its own process group (``setsid``); at its hard
    limit (the method's time limit plus the grace period) the runner kills the group and records
    ``killed``. A child that dies without a result (``os._exit``, a crash in a C extension, the
    OOM killer) gives an ``error`` row (``killed`` if a signal ended it). The children die with
    the forkserver (``PR_SET_PDEATHSIG`` on Linux), which dies with the runner, and every child
    also carries an ``alarm`` a few seconds past its hard limit, so a runner killed with SIGKILL
    leaves no solver running for long.

Dask (``--dask ADDRESS``; ``local`` starts a LocalCluster)
    The same tasks go to a ``distributed.Client``; on the worker :func:`run_subprocess` starts
    ``python -m dmlopt.benchmarks.child`` (Dask workers are daemonic processes, which may not
    fork multiprocessing children) with the same hard limit, and the runner writes the rows as
    they arrive, exactly as for the local pool.

Each finished row goes to ``on_row`` at once (the store commits it) and nothing else is kept.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from multiprocessing.connection import wait
from typing import Any

from dmlopt.benchmarks.suite import Task

#: seconds past the hard limit at which a child's own alarm ends it (runner gone)
ALARM_MARGIN = 5

OnRow = Callable[[dict[str, Any]], None]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def make_row(payload: dict[str, Any], child: dict[str, Any] | None, wall: float,
             status: str = "", message: str = "") -> dict[str, Any]:
    """A full store row from the task and what the child reported (None if it gave nothing)."""
    row: dict[str, Any] = {
        "suite": payload["suite"], "problem": payload["problem"],
        "instance": payload["instance_id"], "instance_hash": payload["instance_hash"],
        "kind": payload["kind"], "method": payload["method"], "options": payload["options_json"],
        "seed": payload["seed"], "time_limit": payload["time_limit"], "wall_seconds": wall,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if child is not None:
        row.update({k: v for k, v in child.items() if k != "child_seconds"})
    else:
        from dmlopt import __version__

        row.update({"status": status, "message": message, "seconds": wall,
                    "dmlopt_version": __version__, "metrics": {}})
    return row


def _killed_message(payload: dict[str, Any]) -> str:
    return (f"killed at the hard limit {payload['time_limit'] + payload['grace']:g} s "
            f"(time limit {payload['time_limit']:g} s + grace {payload['grace']:g} s)")


def _died_message(exitcode: int | None) -> tuple[str, str]:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return "killed", f"child process ended by {name} without a result (out of memory?)"
    return "error", f"child process exited with code {exitcode} without a result"


# --------------------------------------------------------------------------- local pool


def preload_modules(tasks: Iterable[Task]) -> list[str]:
    """Modules the forkserver imports once for these tasks."""
    from dmlopt.benchmarks.child import preload_modules as for_payload

    mods: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for t in tasks:
        sig = (t.problem, t.kind, t.options.get("solver", "") if t.kind == "exact" else "")
        if sig not in seen:
            seen.add(sig)
            mods += for_payload({"problem": t.problem, "kind": t.kind, "options": t.options})
    return list(dict.fromkeys(mods))


def _set_pdeathsig() -> None:
    """Ask Linux to SIGKILL this process when its parent (the forkserver) dies."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _proc_main(conn: Any, payload: dict[str, Any], hard_limit: float) -> None:
    """Entry point of a local child process."""
    with contextlib.suppress(OSError):
        os.setsid()
    _set_pdeathsig()
    signal.alarm(max(1, math.ceil(hard_limit + ALARM_MARGIN)))
    from dmlopt.benchmarks.child import execute

    row = execute(payload)
    conn.send(row)
    conn.close()


def _noop() -> None:
    pass


def _warm_up(ctx: Any) -> None:
    """Start the forkserver and let it import the preloaded modules (once per runner)."""
    proc = ctx.Process(target=_noop, daemon=True)
    proc.start()
    proc.join()


class _Running:
    __slots__ = ("proc", "conn", "payload", "t0", "deadline")

    def __init__(self, proc: Any, conn: Any, payload: dict[str, Any], t0: float,
                 deadline: float):
        self.proc, self.conn, self.payload, self.t0, self.deadline = (
            proc, conn, payload, t0, deadline)


def _kill(proc: Any) -> None:
    if proc.pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.join(timeout=5)


def run_local(tasks: list[Task], workers: int, on_row: OnRow) -> None:
    """Run ``tasks`` on up to ``workers`` child processes; ``on_row`` gets each finished row.

    On any exception (KeyboardInterrupt included) every running child is killed before it
    propagates; rows already handed to ``on_row`` are final.
    """
    if not tasks:
        return
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(preload_modules(tasks))
    _warm_up(ctx)
    pending = deque(tasks)
    running: list[_Running] = []
    try:
        while pending or running:
            while pending and len(running) < workers:
                task = pending.popleft()
                payload = task.as_payload()
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_proc_main, args=(send, payload, task.hard_limit),
                                   daemon=True, name=f"dmlopt-bench-{task.method}")
                t0 = time.perf_counter()
                proc.start()
                send.close()
                running.append(_Running(proc, recv, payload, t0, t0 + task.hard_limit))
            timeout = max(0.0, min(r.deadline for r in running) - time.perf_counter())
            wait([r.conn for r in running] + [r.proc.sentinel for r in running], timeout)
            still = []
            for r in running:
                row = _collect(r)
                if row is None:
                    still.append(r)
                else:
                    on_row(row)
            running = still
    finally:
        for r in running:
            _kill(r.proc)
            r.conn.close()


def _collect(r: _Running) -> dict[str, Any] | None:
    """The row of a finished, dead or overdue child; None while it runs."""
    now = time.perf_counter()
    if r.conn.poll():
        try:
            child = r.conn.recv()
        except (EOFError, OSError):
            child = None
        wall = time.perf_counter() - r.t0
        r.proc.join(timeout=5)
        if r.proc.exitcode is None:
            _kill(r.proc)
        r.conn.close()
        if child is not None:
            return make_row(r.payload, child, wall)
        status, message = _died_message(r.proc.exitcode)
        return make_row(r.payload, None, wall, status, message)
    if not r.proc.is_alive():
        r.proc.join()
        r.conn.close()
        status, message = _died_message(r.proc.exitcode)
        return make_row(r.payload, None, now - r.t0, status, message)
    if now >= r.deadline:
        _kill(r.proc)
        r.conn.close()
        return make_row(r.payload, None, now - r.t0, "killed", _killed_message(r.payload))
    return None


# --------------------------------------------------------------------------- subprocess / Dask


def run_subprocess(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one task in ``python -m dmlopt.benchmarks.child`` with the hard limit; its row.

    This is the function Dask workers execute; it never raises.
    """
    hard = payload["time_limit"] + payload["grace"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dmlopt.benchmarks.child"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        out, err = proc.communicate(json.dumps(payload).encode(), timeout=hard)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return make_row(payload, None, time.perf_counter() - t0, "killed",
                        _killed_message(payload))
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    wall = time.perf_counter() - t0
    try:
        child = json.loads(out) if proc.returncode == 0 else None
    except json.JSONDecodeError:
        child = None
    if child is not None:
        return make_row(payload, child, wall)
    status, message = _died_message(proc.returncode)
    tail = err.decode(errors="replace").strip().splitlines()[-1:] if err else []
    if tail:
        message += f": {tail[0][:300]}"
    return make_row(payload, None, wall, status, message)


def run_dask(tasks: list[Task], address: str, workers: int, on_row: OnRow) -> None:
    """Run ``tasks`` on a Dask cluster (``"local"``: a LocalCluster of ``workers`` threads)."""
    from dmlopt.errors import DmloptError

    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise DmloptError(
            "--dask: the 'distributed' package is not installed (pip install 'dmlopt[cluster]')"
        ) from None
    if not tasks:
        return
    cluster = None
    if address == "local":
        cluster = LocalCluster(n_workers=1, threads_per_worker=workers, processes=False,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        try:
            client = Client(address, timeout=30)
        except (OSError, TimeoutError, ValueError) as exc:
            raise DmloptError(f"--dask: cannot connect to {address!r} ({exc})") from None
    payloads = {}
    futures = []
    try:
        for i, task in enumerate(tasks):
            payload = task.as_payload()
            fut = client.submit(run_subprocess, payload, pure=False,
                                key=f"dmlopt-run-{i}-{task.instance_hash}-{os.getpid()}")
            payloads[fut.key] = payload
            futures.append(fut)
        for fut in as_completed(futures):
            try:
                row = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker is a row, not a crash
                row = make_row(payloads[fut.key], None, 0.0, "error",
                               f"dask: {type(exc).__name__}: {exc}")
            on_row(row)
    finally:
        client.cancel(futures)
        client.close()
        if cluster is not None:
            cluster.close()
