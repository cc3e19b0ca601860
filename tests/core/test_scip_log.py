"""A SCIP solve whose log is longer than a pipe's buffer (64 KiB) finishes: SCIP's log goes
through Python's stdout (Pyomo's capture stream), so the capture's reader thread gets the GIL
while SCIP waits for it to drain the pipe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import dmlopt
from dmlopt import solvers

pytest.importorskip("pyscipopt")

#: an INC/OXC instance on which SCIP's root node restarts print about 100 KB of log
SCRIPT = textwrap.dedent("""
    import dmlopt
    inst = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 2, "jobs": 1,
                                       "inc": False, "alpha": 0.5}, seed=7003)
    res = dmlopt.solve(inst, "scip", formulation="paper", time_limit=30, threads=1, tee=TEE)
    print("RESULT", res.status, res.objective)
""")


@pytest.mark.parametrize("tee", [False, True])
def test_a_long_scip_log_does_not_block_the_solve(tee):
    """Catches SCIP writing its log from C into Pyomo's capture pipe while holding the GIL:
    the solve blocked for ever once the log passed 64 KiB (here the process is killed after
    120 s, far above the few seconds the solve takes)."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT.replace("TEE", str(tee))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "RESULT optimal" in proc.stdout
    if tee:  # the log reached the terminal, and it is longer than a pipe's buffer
        assert len(proc.stdout) > 65536 and "SCIP Status" in proc.stdout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="SCIP runs in a forked child only with fork")
def test_a_scip_crash_is_an_error_result_not_the_end_of_the_caller(monkeypatch):
    """Catches SCIP run in-process, where its segmentation faults (SCIP 10.0's symmetry code)
    end the caller's program: the solve's child is killed by a signal (SIGKILL here, as a
    SIGSEGV would), and the caller gets status "error" naming it, then solves on."""
    inst = dmlopt.generate("tap", {"generator": "random", "m": 3, "n": 3}, seed=0)
    real = solvers.backends._run_contrib

    def crash(model, *args):
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(solvers.backends, "_run_contrib", crash)
    res = dmlopt.solve(inst, "scip", formulation="rlt", threads=1)
    assert res.status == "error" and "SIGKILL" in res.message and res.solution is None
    monkeypatch.setattr(solvers.backends, "_run_contrib", real)
    again = dmlopt.solve(inst, "scip", formulation="rlt", threads=1)
    ref = dmlopt.solve(inst, "highs", formulation="class", threads=1)
    assert again.status == "optimal" and again.objective == pytest.approx(ref.objective)
