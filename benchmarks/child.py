"""What runs inside the child process of one benchmark run.

:func:`execute` turns a task payload (plain data, see :meth:`Task.as_payload`) into the
child's part of a results row: it validates the instance, calls :func:`dmlopt.solve` or
:func:`dmlopt.heuristic` (which re-evaluate every objective), and catches every exception into an
``error`` row with the message. ``python -m dmlopt.benchmarks.child`` is the small forking
helper (:func:`serve`) that the local pool keeps per worker and a Dask worker per thread.

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
import signal
import socket
import sys
from typing import Any

from dmlopt import __version__, api, io, registry, solvers
from dmlopt.result import _finite

#: seconds past the hard limit at which a run's own alarm ends it (runner gone)
ALARM_MARGIN = 5


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
            res = api.solve(
                inst, opts["solver"], formulation=opts["formulation"],
                time_limit=opts.get("time_limit"), mip_gap=opts.get("mip_gap"),
                threads=opts.get("threads"), warm_start=opts.get("warm_start"),
                solver_options=opts.get("solver_options"),
            )
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
    mods.extend(sorted({h.function.__module__ for h in prob.heuristics.values()}))
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


def isolate(hard_limit: float) -> None:
    """Set up a run's process: its own process group (so the runner can kill the method's own
    children too), SIGKILL when its parent dies (Linux), and an alarm a few seconds past the hard
    limit as the last resort if nobody is left to kill it."""
    with contextlib.suppress(OSError):
        os.setsid()
    _pdeathsig()
    signal.alarm(max(1, math.ceil(hard_limit + ALARM_MARGIN)))


def _pdeathsig() -> None:
    """Ask Linux to SIGKILL this process when the thread that started it ends."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


def serve() -> int:
    """A forking helper: one payload per line on stdin, each run in a forked child.

    It first imports the modules named in ``DMLOPT_HELPER_PRELOAD`` and writes
    ``{"ready": true}``. For every payload it imports what the run needs (once per process),
    forks a child that runs it, and writes two JSON lines on stdout: ``{"pid": P}`` when the
    child started (the caller times the hard limit from there and kills process group P at the
    limit) and ``{"row": ..., "exitcode": E}`` when it ended (``row`` null if the child gave
    none). The method's output goes to stderr. The helper ends at EOF on stdin. The local pool
    keeps one per worker and a Dask worker one per thread, so a run costs a fork instead of an
    interpreter start and imports.
    """
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _pdeathsig()
    parent = os.environ.get("DMLOPT_HELPER_PARENT")
    if parent and os.getppid() != int(parent):  # the runner died before the line above
        return 1
    for mod in filter(None, os.environ.get("DMLOPT_HELPER_PRELOAD", "").split(",")):
        with contextlib.suppress(ImportError):
            importlib.import_module(mod)
    proto.write(json.dumps({"ready": True}) + "\n")
    instances: dict[str, Any] = {}  # instance hash -> validated instance (the last few)
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        payload = json.loads(line)
        _preload(payload)
        inst = _validated(instances, payload)
        before = set(sys.modules)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the run
            code = 0
            try:
                os.close(r)
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
        with os.fdopen(r, "rb") as fh:
            data = fh.read()
        _, status = os.waitpid(pid, 0)
        row = json.loads(data) if data else None
        # what the run imported lazily (networkx in a validator, scipy in an evaluator, Pyomo's
        # plugins ...) is imported here too, so that the next runs, forked from here, find it
        # loaded; the time counts in this run's wall time
        for mod in (row or {}).pop("_imported", ()):
            with contextlib.suppress(Exception):
                importlib.import_module(mod)
        proto.write(json.dumps({"row": row, "exitcode": os.waitstatus_to_exitcode(status)})
                    + "\n")


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
