"""A SCIP solve whose log is longer than a pipe's buffer (64 KiB) finishes: SCIP's log goes
through Python's stdout (Pyomo's capture stream), so the capture's reader thread gets the GIL
while SCIP waits for it to drain the pipe."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

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
