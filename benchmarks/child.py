"""What runs inside the child process of one benchmark run.

:func:`execute` turns a task payload (plain data, see :meth:`Task.as_payload`) into the
child's part of a results row: it validates the instance, calls :func:`dmlopt.solve` or
:func:`dmlopt.heuristic` (which re-evaluate every objective), and catches every exception into an
``error`` row with the message. ``python -m dmlopt.benchmarks.child`` is the small forking
helper (:func:`serve`) that the local pool keeps per worker and a Dask worker per thread.

Processes a method starts are the run's: the run's process is a *child subreaper* (Linux
``PR_SET_CHILD_SUBREAPER``), so a descendant orphaned by its parent (a double fork, a ``setsid``
daemon) is re-parented to the run instead of to init and stays findable by parent pid; the helper
is one too, so what outlives the run lands there. At the hard limit the runner freezes the run's
process group and kills every descendant of the run, then the run (:func:`kill_run`); when a run
ends, the helper kills whatever the run left behind (:func:`kill_descendants`), and the row says
how many processes were killed.

Peak memory is the child's peak resident set size (``VmHWM``; ``ru_maxrss`` where /proc is
missing), reset when the run starts (``/proc/self/clear_refs``, Linux >= 4.0). A forked run's
resident set starts with the helper's (the interpreter and the modules loaded before the run), so
the figure is that baseline plus what the method adds, not the method's memory alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import math
import os
import platform
import resource
import select
import signal
import socket
import sys
import time
from typing import Any

from dmlopt import __version__, api, io, registry, solvers
from dmlopt.benchmarks import trace
from dmlopt.result import _finite

#: seconds past the hard limit at which a run's own alarm ends it (runner gone)
ALARM_MARGIN = 5

#: prctl option making a process the reaper of its orphaned descendants (Linux >= 3.4)
PR_SET_CHILD_SUBREAPER = 36

#: the longest alarm that signal.alarm takes on every platform (seconds)
_MAX_ALARM = 2**31 - 1

#: the ``time_limit`` option of a heuristic's warm-up run at most (seconds)
WARM_UP_BUDGET = 1.0

#: seconds spent at most killing a process tree (a process in uninterruptible sleep may linger)
KILL_TIMEOUT = 10.0


def execute(payload: dict[str, Any], instance: Any = None) -> dict[str, Any]:
    """Run one task here; never raises (an exception becomes an ``error`` row).

    ``instance`` is the payload's instance already validated (by the helper), if at hand.
    """
    out: dict[str, Any] = {
        "status": "error", "message": "", "metrics": {}, "dmlopt_version": __version__,
        "solver_version": "", "python": platform.python_version(), "host": socket.gethostname(),
    }
    _reset_peak()
    try:
        inst = instance if instance is not None else io.instance_from_dict(payload["instance"])
        if payload["kind"] == "exact":
            opts = payload["options"]
            out["solver_version"] = solvers.version(opts["solver"])
            with trace.recording(time.perf_counter()) as points:
                res = api.solve(
                    inst, opts["solver"],
                    formulation=None if opts.get("default_solve") else opts["formulation"],
                    time_limit=opts.get("time_limit"), mip_gap=opts.get("mip_gap"),
                    threads=opts.get("threads"), warm_start=opts.get("warm_start"),
                    solver_options=opts.get("solver_options"), progress=trace.EVERY,
                )
            out["trace"] = trace.finish(points, res.seconds, res.objective, res.bound)
        elif payload["kind"] == "bound":
            opts = payload["options"]
            res = api.bound(inst, opts["bound"], time_limit=opts.get("time_limit"),
                            **opts.get("options", {}))
        else:
            name = payload["method"]
            problem = registry.get(payload["problem"])
            if name not in problem.heuristics and ":" in name:
                # a "module:function" heuristic the suite was allowed to import: registered in
                # this child only, so that dmlopt.heuristic runs it exactly like a shipped one
                from dmlopt.benchmarks.suite import import_function

                fn = import_function(name, payload.get("import_path", ""))
                problem.heuristics[name] = registry.as_heuristic(fn, name)
            res = api.heuristic(inst, name, seed=payload["seed"], **payload["options"])
        row = res.as_dict()
        for key in ("status", "objective", "bound", "gap", "seconds", "build_seconds",
                    "feasible", "message"):
            out[key] = row[key]
        out["metrics"] = {k: _num(v) for k, v in res.metrics.items()}
    except Exception as exc:  # noqa: BLE001 - every failure of a method is a row, not a crash
        out["status"] = "error"
        out["message"] = f"{type(exc).__name__}: {exc}"
    out["peak_mem_mb"] = peak_mem_mb()
    return _finite(out)


def preload_modules(payload: dict[str, Any]) -> list[str]:
    """Modules a run of ``payload`` imports: imported before the run starts, so that their import
    time is not counted in the method's ``seconds`` (``dmlopt.solve`` builds the model, which
    imports Pyomo, inside its timed region)."""
    mods = ["dmlopt", "dmlopt.api", "dmlopt.benchmarks.child", "numpy", "pydantic"]
    try:
        prob = registry.get(payload["problem"])
    except Exception:  # noqa: BLE001 - the run itself reports a bad problem
        return mods
    mods.append(prob.model.__name__)
    heur = sorted({h.function.__module__ for h in prob.heuristics.values()})
    mods.extend(heur)
    for name in heur:  # what a heuristic module loads lazily (numba kernels): its PRELOAD
        mods.extend(getattr(sys.modules.get(name), "PRELOAD", ()))
    if payload["kind"] == "bound":  # what bound methods import lazily (LP solvers, scipy)
        mods += [e.function.__module__ for e in prob.bound_entries.values()]
        mods += ["highspy", "pyomo.environ", "pyomo.contrib.solver.solvers.highs",
                 "scipy.optimize"]
    if payload["kind"] == "exact":
        solver = payload["options"].get("solver", "")
        mods += ["pyomo.environ", "pyomo.contrib.solver.common.factory"]
        if solver == "highs":
            mods += ["highspy", "pyomo.contrib.solver.solvers.highs"]
        elif solver in ("scip", "scip_direct"):
            mods += ["pyscipopt", "pyomo.contrib.solver.solvers.scip.scip_direct"]
    return mods


def _preload(payload: dict[str, Any]) -> None:
    for mod in preload_modules(payload):
        with contextlib.suppress(ImportError):
            importlib.import_module(mod)


def _num(v: Any) -> Any:
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def _reset_peak() -> None:
    """Reset the kernel's peak-RSS mark (Linux >= 4.0), so VmHWM is this run's peak."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def peak_mem_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


#: the helper's protocol pipe (its stdout to the runner), closed in every run it forks
_PROTOCOL_FD: int | None = None


def _drop_protocol() -> None:
    """Close the helper's protocol pipe in a forked run: a process the run leaves behind must
    not hold it open (the runner reads the helper's end of it until EOF)."""
    if _PROTOCOL_FD is not None:
        with contextlib.suppress(OSError):
            os.close(_PROTOCOL_FD)


def isolate(hard_limit: float) -> None:
    """Set up a run's process: its own process group (so the runner can kill the method's own
    children too), the reaper of its orphaned descendants (Linux), SIGKILL when its parent dies
    (Linux), and an alarm a few seconds past the hard limit as the last resort if nobody is left
    to kill it."""
    with contextlib.suppress(OSError):
        os.setsid()
    subreaper()
    _pdeathsig()
    signal.alarm(min(_MAX_ALARM, max(1, math.ceil(hard_limit + ALARM_MARGIN))))


def _prctl(option: int, arg: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)


def _pdeathsig() -> None:
    """Ask Linux to SIGKILL this process when the thread that started it ends."""
    _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def subreaper() -> None:
    """Make this process the reaper of its orphaned descendants (Linux): a process that a
    descendant started and left (double fork, ``setsid``) is re-parented here, not to init."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state letter) of every process in ``/proc`` (empty without /proc)."""
    out: dict[int, tuple[int, str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                data = fh.read()
        except OSError:  # gone meanwhile
            continue
        fields = data[data.rfind(b")") + 2:].split()  # after "pid (comm) "
        if len(fields) >= 2:
            out[int(entry)] = (int(fields[1]), fields[0].decode("ascii", "replace"))
    return out


def live_descendants(root: int) -> set[int]:
    """The descendants of ``root`` that are not zombies (found by parent pid in ``/proc``)."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [root]
    while stack:
        for pid in children.get(stack.pop(), ()):
            if pid not in found:
                found.add(pid)
                stack.append(pid)
    return {pid for pid in found if procs[pid][1] not in ("Z", "X")}


def _reap() -> None:
    """Collect the exit status of this process's ended children (zombies), without waiting."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_descendants(root: int | None = None, timeout: float = KILL_TIMEOUT) -> int:
    """SIGKILL every live descendant of ``root`` (default: this process) until none is left;
    ``root`` itself is not touched. Returns how many processes were killed. Children of this
    process are reaped."""
    me = os.getpid()
    root = me if root is None else root
    killed: set[int] = set()
    end = time.monotonic() + timeout
    while True:
        if root == me:
            _reap()
        live = live_descendants(root)
        if not live or time.monotonic() > end:
            return len(killed)
        for pid in live:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed |= live
        time.sleep(0.002)  # let the kernel deliver the signals before looking again


def kill_run(pid: int) -> int:
    """Kill run ``pid`` with all its descendants (detached ones included): its process group is
    stopped first (so it starts nothing new), every descendant is killed while the run, their
    subreaper, still holds them, then the run and its group. Returns how many were killed."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGSTOP)
    n = kill_descendants(pid)
    for kill in (os.killpg, os.kill):  # the group, and the run if not yet a leader
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)
    return n + 1


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux >= 5.3
        return None


def wait_run(pid: int, r: int) -> tuple[bytes, int, int]:
    """Read run ``pid``'s row from pipe ``r`` and wait for the run; when it has ended, kill what
    it left behind (processes that would also keep the pipe open). Returns (row bytes, wait
    status, processes killed)."""
    data = bytearray()
    status: int | None = None
    killed = 0
    pidfd = _pidfd(pid)
    try:
        while True:
            watch = [r] if status is not None or pidfd is None else [r, pidfd]
            timeout = None if status is not None or pidfd is not None else 0.05
            ready, _, _ = select.select(watch, [], [], timeout)
            if r in ready:
                chunk = os.read(r, 1 << 16)
                if not chunk:
                    break
                data += chunk
                continue
            if status is None:
                done, st = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = st
                    killed += kill_descendants()
    finally:
        if pidfd is not None:
            os.close(pidfd)
        os.close(r)
    if status is None:
        _, status = os.waitpid(pid, 0)
    killed += kill_descendants()
    return bytes(data), status, killed


def serve() -> int:
    """A forking helper: one payload per line on stdin, each run in a forked child.

    It first imports the modules named in ``DMLOPT_HELPER_PRELOAD`` and writes
    ``{"ready": true}``. For every payload it imports what the run needs (once per process),
    forks a child that runs it, and writes two JSON lines on stdout: ``{"pid": P}`` when the
    child started (the caller times the hard limit from there and kills run P with its
    descendants at the limit, :func:`kill_run`) and ``{"row": ..., "exitcode": E, "killed": K}``
    when it ended (``row`` null if the child gave none; K processes the run left behind were
    killed). The method's output goes to stderr. The helper ends at EOF on stdin. The local pool
    keeps one per worker and a Dask worker one per thread, so a run costs a fork instead of an
    interpreter start and imports.
    """
    global _PROTOCOL_FD
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    _PROTOCOL_FD = proto.fileno()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _pdeathsig()
    subreaper()
    parent = os.environ.get("DMLOPT_HELPER_PARENT")
    if parent and os.getppid() != int(parent):  # the runner died before the line above
        return 1
    for mod in filter(None, os.environ.get("DMLOPT_HELPER_PRELOAD", "").split(",")):
        with contextlib.suppress(ImportError):
            importlib.import_module(mod)
    proto.write(json.dumps({"ready": True}) + "\n")
    instances: dict[str, Any] = {}  # instance hash -> validated instance (the last few)
    warmed: set[tuple[str, str]] = set()  # (problem, heuristic) run once in this helper
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        payload = json.loads(line)
        _preload(payload)
        inst = _validated(instances, payload)
        warm = None
        key = (payload["problem"], payload["method"])
        if payload["kind"] == "heuristic" and ":" not in key[1] and key not in warmed:
            warmed.add(key)  # a shipped heuristic (a suite's own function may have effects)
            warm = warm_up(payload, inst)
        before = set(sys.modules)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the run
            code = 0
            try:
                os.close(r)
                _drop_protocol()
                isolate(payload["time_limit"] + payload["grace"])
                row = execute(payload, inst)
                row["_imported"] = [m for m in sys.modules if m not in before]
                with os.fdopen(w, "wb") as fh:
                    fh.write(json.dumps(row).encode())
            except BaseException:  # noqa: BLE001 - the helper reports a missing row
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        proto.write(json.dumps({"pid": pid}) + "\n")
        data, status, killed = wait_run(pid, r)
        try:
            row = json.loads(data) if data else None
        except ValueError:  # a row cut short
            row = None
        if row is not None and warm is not None:
            row["warmup_seconds"] = warm
        if row is not None and killed:
            note = f"{killed} process(es) left running by the method were killed"
            row["message"] = f"{row['message']}; {note}" if row.get("message") else note
        # what the run imported lazily (networkx in a validator, scipy in an evaluator, Pyomo's
        # plugins ...) is imported here too, so that the next runs, forked from here, find it
        # loaded; the time counts in this run's wall time
        for mod in (row or {}).pop("_imported", ()):
            with contextlib.suppress(Exception):
                importlib.import_module(mod)
        proto.write(json.dumps({"row": row, "exitcode": os.waitstatus_to_exitcode(status),
                                "killed": killed}) + "\n")


def warm_up(payload: dict[str, Any], inst: Any) -> float | None:
    """Run a heuristic's payload once, untimed, in a forked child before its first timed run in
    this helper, and import here what it imported: the one-time costs (lazy imports, first calls,
    numba kernels compiled into or loaded from the on-disk cache) are paid by this run, not by
    the timed ones, and measured apart. A heuristic with a ``time_limit`` option warms up with
    at most :data:`WARM_UP_BUDGET` seconds; a suite's own ``module:function`` is not warmed up.

    Parameters
    ----------
    payload : the first payload of a (problem, heuristic) in this helper.
    inst : its validated instance (None: the child validates).

    Returns
    -------
    float or None
        The warm-up run's wall seconds (one-time costs plus one run), None if it failed or was
        killed at the payload's hard limit.

    References
    ----------
    Issue 54, item 5.
    """
    t0 = time.perf_counter()
    before = set(sys.modules)
    opts = payload.get("options") or {}
    if isinstance(opts.get("time_limit"), int | float):  # a budgeted heuristic: 1 s is enough
        payload = {**payload, "options": {**opts, "time_limit": min(opts["time_limit"],
                                                                    WARM_UP_BUDGET)}}
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            _drop_protocol()
            isolate(payload["time_limit"] + payload["grace"])
            row = execute(payload, inst)
            with os.fdopen(w, "wb") as fh:
                fh.write(json.dumps({"ok": row["status"] != "error",
                                     "imported": [m for m in sys.modules if m not in before]})
                         .encode())
        except BaseException:  # noqa: BLE001 - a failed warm-up only goes unmeasured
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    data, _, _ = wait_run(pid, r)
    seconds = time.perf_counter() - t0
    try:
        got = json.loads(data) if data else {}
    except ValueError:
        got = {}
    for mod in got.get("imported", ()):
        with contextlib.suppress(Exception):
            importlib.import_module(mod)
    return seconds if got.get("ok") else None


def _validated(cache: dict[str, Any], payload: dict[str, Any]) -> Any:
    """The payload's instance validated once per helper (None if it fails: the run reports)."""
    key = payload.get("instance_hash", "")
    if key not in cache:
        try:
            cache[key] = io.instance_from_dict(payload["instance"])
        except Exception:  # noqa: BLE001 - the run validates again and reports the error
            return None
        while len(cache) > 8:
            cache.pop(next(iter(cache)))
    return cache[key]


if __name__ == "__main__":
    sys.exit(serve())
