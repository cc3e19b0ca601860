"""Execution of benchmark tasks: one child process per run, with a hard time limit.

Every run is a process of its own, forked by a *helper* (``python -m dmlopt.benchmarks.child``,
see :func:`dmlopt.benchmarks.child.serve`) that has imported dmlopt, the problem modules and
Pyomo/HiGHS/SCIP once, so a run costs a fork, not an interpreter start and imports (the overhead
per run is what ``wall_seconds - seconds`` in the store shows). A run's process is its own
process group; at its hard limit (the method's time limit plus the grace period) the runner kills
the group and records ``killed``. A run that dies without a row (``os._exit``, a crash in a C
extension, the OOM killer) gives ``error`` (exit code) or ``killed`` (signal). A helper dies with
the thread that started it and a run with its helper (``PR_SET_PDEATHSIG`` on Linux), and each
run also carries an alarm a few seconds past its hard limit, so a runner killed with SIGKILL
leaves nothing running. The run is the reaper of its orphaned descendants (Linux), so at the
limit the runner kills its detached grandchildren too (double fork + ``setsid``), and the helper
kills whatever a finished run left behind; the row says how many processes were killed. A run
holds no pipe of the runner's (a process it leaves behind cannot stall the runner), Ctrl-C is
raised only where the waiting loop looks (:func:`held_interrupts`), and a helper closed by
Ctrl-C takes its run in progress down with the run's descendants.

Tasks are submitted in a bounded window (a few per worker), not all at once: the first row is
stored as soon as the first run ends, whatever the number of tasks, and only the window's
payloads are held at a time.

Local pool (the default)
    ``workers`` threads, each driving one helper (threads only wait on pipes), started and
    warmed up before the first run; rows reach ``on_row`` in the calling thread.

Dask (``--dask ADDRESS``; ``local`` starts a LocalCluster)
    The same function, :func:`run_in_helper`, runs on the Dask workers with one helper per
    worker thread, kept between runs (Dask workers are daemonic processes, which may not start
    multiprocessing children; a helper is a plain subprocess), and the runner writes the rows as
    they arrive, exactly as for the local pool.

Each finished row goes to ``on_row`` at once (the store commits it) and nothing else is kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import Any

from dmlopt.benchmarks.suite import Task

OnRow = Callable[[dict[str, Any]], None]

#: tasks in flight per worker (submitted, not yet finished): enough to keep every worker busy
WINDOW_PER_WORKER = 2

#: seconds a helper has to report a run it was told to kill before it is itself killed
HELPER_REPORT_TIMEOUT = 60.0

#: seconds between two looks at a held Ctrl-C (and at a closed helper) in the waiting loops
_POLL = 0.25


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


def _killed_message(payload: dict[str, Any], processes: int = 1) -> str:
    others = processes - 1
    started = f"the run and {others} it started" if others else "the run"
    limit = "kill limit" if payload["kind"] == "heuristic" else "time limit"
    return (f"killed at the hard limit {payload['time_limit'] + payload['grace']:g} s "
            f"({limit} {payload['time_limit']:g} s + grace {payload['grace']:g} s): "
            f"{processes} process{'es' if processes != 1 else ''} killed ({started})")


def _died_message(exitcode: int | None) -> tuple[str, str]:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return "killed", f"child process ended by {name} without a result (out of memory?)"
    return "error", f"child process exited with code {exitcode} without a result"


# --------------------------------------------------------------------------- helpers


def preload_modules(tasks: Iterable[Task]) -> list[str]:
    """Modules a helper imports at start for these tasks."""
    from dmlopt.benchmarks.child import preload_modules as for_payload

    mods: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for t in tasks:
        sig = (t.problem, t.kind, t.options.get("solver", "") if t.kind == "exact" else "")
        if sig not in seen:
            seen.add(sig)
            mods += for_payload({"problem": t.problem, "kind": t.kind, "options": t.options})
    return list(dict.fromkeys(mods))


#: thread pools a run may start on its own (BLAS under numpy/scipy, OpenMP, numba): one thread
#: each unless the environment sets them, so a run uses the one core its worker stands for. Measured
#: on 2026-11-25: the Nara rollout on delta (2,048 requests, dense 16-unit GNN layers) took 181 s
#: with OpenBLAS's default threads on the shared 2-core machine at load 4, 10.7 s with one.
SINGLE_THREADED = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                   "NUMBA_NUM_THREADS")


def child_env(preload: Iterable[str] = ()) -> dict[str, str]:
    """The environment of a helper process: the caller's, one thread per pool where the caller
    sets none (:data:`SINGLE_THREADED`), and the helper's own variables."""
    env = {k: "1" for k in SINGLE_THREADED}
    env.update(os.environ)
    env.update({"DMLOPT_HELPER_PARENT": str(os.getpid()),
                "DMLOPT_HELPER_PRELOAD": ",".join(preload)})
    return env


class Helper:
    """One forking helper process (``python -m dmlopt.benchmarks.child``), used by one thread."""

    def __init__(self, preload: Iterable[str] = ()) -> None:
        env = child_env(preload)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dmlopt.benchmarks.child"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True, env=env,
        )
        self.buf = b""
        self.ready = False
        self.closed = False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self) -> None:
        """Wait until the helper has imported its preload list."""
        if not self.ready:
            msg = self.readline(None)
            if not msg or not msg.get("ready"):
                raise EOFError(f"helper process did not start: {msg!r}")
            self.ready = True

    def close(self) -> None:
        self.closed = True  # a thread waiting in readline stops at its next look
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()
        if self.proc.poll() is None:
            from dmlopt.benchmarks.child import kill_descendants

            # stopped, so it forks nothing new; then its runs and what they started (their
            # own sessions, found by parent pid: the helper reaps their orphans); then itself
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.proc.pid, signal.SIGSTOP)
            kill_descendants(self.proc.pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdout.close()

    def send(self, payload: dict[str, Any]) -> None:
        self.proc.stdin.write(json.dumps(payload).encode() + b"\n")
        self.proc.stdin.flush()

    def readline(self, deadline: float | None) -> dict[str, Any] | None:
        """The next JSON line; None at the deadline; EOFError if the helper is gone or was
        closed (by another thread: a process the run left behind may still hold the pipe)."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            if self.closed:
                raise EOFError("helper process closed")
            timeout = (_POLL if deadline is None
                       else min(_POLL, max(0.0, deadline - time.perf_counter())))
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                if deadline is not None and time.perf_counter() >= deadline:
                    return None
                continue
            data = os.read(fd, 1 << 16)
            if not data:
                raise EOFError("helper process ended")
            self.buf += data
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def run(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Run one task in a forked child with its hard limit; its row (never raises for a
        failing run; a broken helper is closed and reported as an ``error`` row)."""
        hard = payload["time_limit"] + payload["grace"]
        try:
            self.wait_ready()
            t0 = time.perf_counter()
            self.send(payload)
            started = self.readline(None)  # after the imports this run needs
            pid = started["pid"]
            end = self.readline(time.perf_counter() + hard)
            if end is None:  # past the hard limit
                from dmlopt.benchmarks.child import kill_run

                killed = kill_run(pid)
                wall = time.perf_counter() - t0
                done = self.readline(time.perf_counter() + HELPER_REPORT_TIMEOUT)
                if done is None:
                    raise EOFError("helper did not report the killed run")
                killed += int(done.get("killed") or 0)
                return make_row(payload, None, wall, "killed", _killed_message(payload, killed))
        except (EOFError, OSError, ValueError, TypeError, KeyError) as exc:
            self.close()
            return make_row(payload, None, 0.0, "error",
                            f"benchmark helper process failed: {type(exc).__name__}: {exc}")
        wall = time.perf_counter() - t0
        if end.get("row") is not None:
            return make_row(payload, end["row"], wall)
        status, message = _died_message(end.get("exitcode"))
        return make_row(payload, None, wall, status, message)


# --------------------------------------------------------------------------- local pool


@contextlib.contextmanager
def held_interrupts() -> Iterator[Callable[[], None]]:
    """Hold Ctrl-C to the points where the caller looks: yields ``check``, which raises the
    held :class:`KeyboardInterrupt` (after putting the previous handler back).

    A ``KeyboardInterrupt`` raised between two arbitrary bytecodes of the waiting loop can leave
    a lock taken for good: inside :func:`concurrent.futures.wait`, between the acquisitions of
    the futures' conditions, the worker thread that finishes its run then blocks on one of them
    and the pool's shutdown waits for it forever. The previous handler still runs at once (the
    CLI's counts the Ctrl-C, so a second one ends the process at once); only its exception is
    held. Outside the main thread, or when SIGINT is ignored or not a Python handler, nothing
    changes.

    Returns
    -------
    context manager
        Yielding ``check()``.

    References
    ----------
    Ours: a fresh-clone CI run hung 60 s after Ctrl-C on ``reproduce`` with no line written.
    """
    previous = (signal.getsignal(signal.SIGINT)
                if threading.current_thread() is threading.main_thread() else None)
    if not callable(previous):
        yield lambda: None
        return
    held: list[KeyboardInterrupt] = []

    def handler(signum: int, frame: Any) -> None:
        try:
            previous(signum, frame)
        except KeyboardInterrupt as exc:
            held.append(exc)

    def check() -> None:
        if held:
            signal.signal(signal.SIGINT, previous)
            raise held[0]

    signal.signal(signal.SIGINT, handler)
    try:
        yield check
    finally:
        if signal.getsignal(signal.SIGINT) is handler:
            signal.signal(signal.SIGINT, previous)


def run_local(tasks: Sequence[Task], workers: int, on_row: OnRow) -> None:
    """Run ``tasks`` on ``workers`` helpers; ``on_row`` gets each finished row (this thread).

    At most :data:`WINDOW_PER_WORKER` tasks per worker are in flight; the next ones are submitted
    as runs finish, so rows are stored from the first run on.

    On any exception (KeyboardInterrupt included) the helpers and their running children are
    killed before it propagates; rows already handed to ``on_row`` are final, and the rows of
    the runs cut short are dropped.
    """
    if not tasks:
        return
    preload = preload_modules(tasks)
    workers = max(1, min(workers, len(tasks)))
    idle: queue.SimpleQueue[Helper] = queue.SimpleQueue()
    started: list[Helper] = []
    lock = threading.Lock()
    closing = threading.Event()

    def new_helper() -> Helper:
        with lock:
            if closing.is_set():
                raise RuntimeError("the pool is closing")
            helper = Helper(preload)
            started.append(helper)
            return helper

    def work(payload: dict[str, Any]) -> dict[str, Any]:
        helper = idle.get()
        try:
            return helper.run(payload)
        finally:
            if not helper.alive() and not closing.is_set():
                with contextlib.suppress(RuntimeError):
                    helper = new_helper()
            idle.put(helper)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dmlopt-bench")
    try:
        with held_interrupts() as check:  # Ctrl-C is raised only where ``check`` looks
            for _ in range(workers):
                idle.put(new_helper())
            for helper in started:
                helper.wait_ready()
            check()
            pending: set[Future[dict[str, Any]]] = set()
            upcoming = iter(tasks)
            window = WINDOW_PER_WORKER * workers
            while True:
                while len(pending) < window:  # top the window up (payloads made only now)
                    task = next(upcoming, None)
                    if task is None:
                        break
                    pending.add(pool.submit(work, task.as_payload()))
                if not pending:
                    break
                done, pending = wait(pending, timeout=_POLL, return_when=FIRST_COMPLETED)
                for fut in done:
                    on_row(fut.result())
                check()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        closing.set()
        with lock:
            for helper in started:
                helper.close()
        pool.shutdown(wait=True)


# --------------------------------------------------------------------------- Dask


_DASK = threading.local()


def run_in_helper(payload: dict[str, Any], preload: list[str] | None = None) -> dict[str, Any]:
    """Run one task in this thread's helper (started on first use, importing ``preload``); its
    row. Dask calls this."""
    helper = getattr(_DASK, "helper", None)
    if helper is None or not helper.alive():
        from dmlopt.benchmarks.child import preload_modules as for_payload

        helper = Helper(preload if preload is not None else for_payload(payload))
        _DASK.helper = helper
        _DASK_HELPERS.append(helper)
    return helper.run(payload)


_DASK_HELPERS: list[Helper] = []


def close_helpers() -> None:
    """End the Dask helpers this process started (after a LocalCluster of threads)."""
    while _DASK_HELPERS:
        _DASK_HELPERS.pop().close()


def run_dask(tasks: Sequence[Task], address: str, workers: int, on_row: OnRow) -> None:
    """Run ``tasks`` on a Dask cluster (``"local"``: a LocalCluster of ``workers`` threads), at
    most :data:`WINDOW_PER_WORKER` per worker thread in flight."""
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
                               dashboard_address=":0")
        client = Client(cluster)
    else:
        try:
            client = Client(address, timeout=30)
        except (OSError, TimeoutError, ValueError) as exc:
            raise DmloptError(f"--dask: cannot connect to {address!r} ({exc})") from None
    payloads: dict[str, dict[str, Any]] = {}
    preload = preload_modules(tasks)
    upcoming = iter(enumerate(tasks))
    queue_ = None
    try:
        queue_ = as_completed()  # of the client just made (the default client)
        window = WINDOW_PER_WORKER * max(workers, sum(client.nthreads().values()))

        def top_up() -> None:
            for i, task in upcoming:
                payload = task.as_payload()
                fut = client.submit(run_in_helper, payload, preload, pure=False,
                                    key=f"dmlopt-run-{i}-{task.instance_hash}-{os.getpid()}")
                payloads[fut.key] = payload
                queue_.add(fut)
                if len(payloads) >= window:
                    return

        top_up()
        for fut in queue_:
            try:
                row = fut.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker is a row, not a crash
                row = make_row(payloads[fut.key], None, 0.0, "error",
                               f"dask: {type(exc).__name__}: {exc}")
            del payloads[fut.key]
            on_row(row)
            top_up()
    finally:
        if queue_ is not None:
            client.cancel(list(queue_.futures))
        client.close()
        if cluster is not None:
            cluster.close()
            close_helpers()  # the LocalCluster's workers were threads of this process
