"""What runs inside the child process of one benchmark run.

:func:`execute` turns a task payload (plain data, see :meth:`Task.as_payload`) into the
child's part of a results row: it validates the instance, calls :func:`dmlopt.solve` or
:func:`dmlopt.heuristic` (which re-evaluate every objective), and catches every exception into an
``error`` row with the message. ``python -m dmlopt.benchmarks.child`` reads a payload as JSON on
stdin and writes the row as JSON on stdout (what the Dask path uses); the method's own output goes
to stderr.

Peak memory is the child's peak resident set size (``VmHWM``; ``ru_maxrss`` where /proc is
missing). It includes the interpreter and the modules preloaded before the run, not only the
method.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import resource
import socket
import sys
import time
from typing import Any

from dmlopt import __version__, api, io, registry, solvers
from dmlopt.result import _finite


def execute(payload: dict[str, Any]) -> dict[str, Any]:
    """Run one task here; never raises (an exception becomes an ``error`` row)."""
    out: dict[str, Any] = {
        "status": "error", "message": "", "metrics": {}, "dmlopt_version": __version__,
        "solver_version": "", "python": platform.python_version(), "host": socket.gethostname(),
    }
    _reset_peak()
    try:
        inst = io.instance_from_dict(payload["instance"])
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

                problem.heuristics[name] = import_function(name, payload.get("import_path", ""))
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
    mods.extend(sorted({fn.__module__ for fn in prob.heuristics.values()}))
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


def main() -> int:
    """Payload JSON on stdin -> row JSON on stdout (the method's prints go to stderr)."""
    result_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    payload = json.load(sys.stdin)
    _preload(payload)
    t0 = time.perf_counter()
    row = execute(payload)
    row["child_seconds"] = time.perf_counter() - t0
    with os.fdopen(result_fd, "w") as fh:
        fh.write(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
