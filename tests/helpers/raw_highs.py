"""Raw HiGHS (no dmlopt code) on an exported ``.mps.gz``, once per test run per file content.

Two test modules re-solve the same exported models (the Nara episode alone takes HiGHS 13-20
s): the first to ask solves it, the others (in any xdist worker of the run, waiting on a file
lock while it runs) read its result. A result is keyed by the file's bytes, so it answers only
for a byte-identical model; one stopped by its time limit does not answer a longer limit.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import highspy

from dmlopt.solvers import reset_highs_scheduler

#: the limit of every raw re-solve: one limit for all the tests, so that a file two tests
#: re-solve (the Nara episode) is solved once per run (a result stopped by a shorter limit
#: would not answer a longer one, and the file would be solved again)
TIME_LIMIT = 60.0


def cache_dir(tmp_path_factory: Any) -> Path:
    """A folder shared by every worker of this pytest run (xdist's workers each have a
    base temporary folder under the run's)."""
    base = Path(tmp_path_factory.getbasetemp())
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / "raw-highs"
    folder.mkdir(exist_ok=True)
    return folder


def solve(path: Path, time_limit: float, cache: Path) -> dict[str, Any]:
    """HiGHS (one thread, ``time_limit`` seconds) on the model file at ``path``: its status
    name (``"kOptimal"``, ``"kTimeLimit"``...), objective, dual bound, primal solution status,
    sense sign (-1 maximise) and a solution file it wrote (``sol``)."""
    key = hashlib.sha256(path.read_bytes()).hexdigest()
    with open(cache / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker solving it: wait for its result
        done = cache / f"{key}.json"
        if done.is_file():
            got = json.loads(done.read_text())
            if got["status"] == "kOptimal" or got["time_limit"] >= time_limit:
                return got
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        reset_highs_scheduler()  # this process may have run HiGHS with other threads
        h.setOptionValue("threads", 1)
        h.setOptionValue("time_limit", float(time_limit))
        assert h.readModel(str(path)) == highspy.HighsStatus.kOk, path
        h.run()
        info = h.getInfo()
        sol = cache / f"{key}.sol"
        h.writeSolution(str(sol), 0)
        got = {"status": h.getModelStatus().name, "objective": info.objective_function_value,
               "dual_bound": info.mip_dual_bound,
               "primal_solution_status": int(info.primal_solution_status),
               "sign": -1.0 if h.getLp().sense_ == highspy.ObjSense.kMaximize else 1.0,
               "time_limit": float(time_limit), "sol": str(sol)}
        done.write_text(json.dumps(got))
        return got
