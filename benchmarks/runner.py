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
    The same tasks go to a ``distributed.Client``; on the worker :func:`run_in_helper` hands the
    run to a forking helper, ``python -m dmlopt.benchmarks.child``, one per worker thread and
    kept between runs (Dask workers are daemonic processes, which may not start multiprocessing
    children), which forks the run with the same isolation and hard limit; the runner writes the
    rows as they arrive, exactly as for the local pool.

Each finished row goes to ``on_row`` at once (the store commits it) and nothing else is kept.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from multiprocessing.connection import wait
from typing import Any

from dmlopt.benchmarks.suite import Task

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


def _proc_main(conn: Any, payload: dict[str, Any], hard_limit: float) -> None:
    """Entry point of a local child process."""
    from dmlopt.benchmarks.child import execute, isolate

    isolate(hard_limit)
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


class _Helper:
    """A ``python -m dmlopt.benchmarks.child`` forking helper owned by one thread."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dmlopt.benchmarks.child"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        self.buf = b""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def send(self, payload: dict[str, Any]) -> None:
        self.proc.stdin.write(json.dumps(payload).encode() + b"\n")
        self.proc.stdin.flush()

    def readline(self, deadline: float | None) -> dict[str, Any] | None:
        """The next JSON line; None at the deadline; EOFError if the helper is gone."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return None
            data = os.read(fd, 1 << 16)
            if not data:
                raise EOFError("helper process ended")
            self.buf += data
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)


_helpers = threading.local()
_all_helpers: list[_Helper] = []
_helpers_lock = threading.Lock()


def _helper() -> _Helper:
    helper = getattr(_helpers, "helper", None)
    if helper is None or not helper.alive():
        helper = _Helper()
        _helpers.helper = helper
        with _helpers_lock:
            _all_helpers.append(helper)
    return helper


def close_helpers() -> None:
    """End the forking helpers this process started."""
    with _helpers_lock:
        for helper in _all_helpers:
            helper.close()
        _all_helpers.clear()


def run_in_helper(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one task in a forked child of this thread's helper, with the hard limit; its row.

    This is the function Dask workers execute; it never raises for a failing run.
    """
    hard = payload["time_limit"] + payload["grace"]
    t0 = time.perf_counter()
    helper = _helper()
    try:
        helper.send(payload)
        started = helper.readline(None)  # after the helper's imports for this run
        pid = started["pid"]
        end = helper.readline(time.perf_counter() + hard)
        if end is None:  # past the hard limit
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            helper.readline(None)
            return make_row(payload, None, time.perf_counter() - t0, "killed",
                            _killed_message(payload))
    except (EOFError, OSError, ValueError, TypeError, KeyError) as exc:
        helper.close()
        return make_row(payload, None, time.perf_counter() - t0, "error",
                        f"benchmark helper process failed: {type(exc).__name__}: {exc}")
    wall = time.perf_counter() - t0
    if end.get("row") is not None:
        return make_row(payload, end["row"], wall)
    status, message = _died_message(end.get("exitcode"))
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
            fut = client.submit(run_in_helper, payload, pure=False,
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
            close_helpers()  # the LocalCluster's workers were threads of this process
