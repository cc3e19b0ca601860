"""Ctrl-C during an exact solve is an answer, not a loss: a real SIGINT stops HiGHS and SCIP
within seconds, the incumbent is evaluated, printed with status ``interrupted``, written to
``-o``, and the command exits 130; in Python ``dmlopt.solve`` raises ``Interrupted``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import dmlopt


def _hard_instance(tmp_path):
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 16, "p": 0.5, "tau": 2}, seed=3)
    path = tmp_path / "inst.json"
    dmlopt.save(inst, path)
    return path


def _interrupt_when_found(proc: subprocess.Popen, deadline: float = 120.0) -> None:
    """Read the child's progress lines (stderr) until one shows an incumbent, then SIGINT."""
    t0 = time.monotonic()
    for line in proc.stderr:
        if "incumbent" in line and "incumbent -" not in line:
            proc.send_signal(signal.SIGINT)
            return
        assert time.monotonic() - t0 < deadline, "no incumbent in time"
    raise AssertionError("the solve ended before an incumbent was reported")


def _interrupt_after(proc: subprocess.Popen, seconds: float, deadline: float = 120.0) -> None:
    """Wait for the child's first progress line (the solver has started: SCIP reports its
    incumbents only after the root node), then ``seconds`` of solving, then SIGINT."""
    t0 = time.monotonic()
    for line in proc.stderr:
        if line.startswith("dmlopt: scip "):
            break
        assert time.monotonic() - t0 < deadline, "no progress line in time"
    time.sleep(seconds)
    assert proc.poll() is None, "the solve ended before the interrupt"
    proc.send_signal(signal.SIGINT)


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_cli_ctrl_c_keeps_the_incumbent(tmp_path, solver):
    path = _hard_instance(tmp_path)
    out = tmp_path / "sol.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dmlopt", "solve", str(path), "--solver", solver, "-f", "paper",
         "--time-limit", "300", "--threads", "1", "--progress", "0.5", "-o", str(out),
         "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if solver == "highs":
        _interrupt_when_found(proc)  # progress lines are HiGHS's
    else:
        _interrupt_after(proc, 5.0)
    t0 = time.monotonic()
    rest, err = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 15, "the solver did not stop within seconds"
    assert proc.returncode == 130, err
    last = [line for line in err.strip().splitlines() if "incumbent" not in line]
    assert len(last) == 1 and "interrupted: the best solution so far is above" in last[0], err
    result = json.loads(rest[rest.index("{\n"):])
    assert result["status"] == "interrupted"
    assert out.exists()
    inst = dmlopt.load(path)
    ev = dmlopt.evaluate(inst, out)
    assert ev.feasible and ev.objective == result["objective"]
    assert result["bound"] <= result["objective"]


def test_python_solve_raises_interrupted_with_the_result(tmp_path):
    path = _hard_instance(tmp_path)
    code = (
        "import sys, dmlopt\n"
        "from dmlopt.errors import Interrupted\n"
        f"inst = dmlopt.load({str(path)!r})\n"
        "try:\n"
        "    for _ in range(3):\n"
        "        dmlopt.solve(inst, formulation='paper', time_limit=300, threads=1, progress=0.5)\n"
        "except Interrupted as exc:\n"
        "    r = exc.result\n"
        "    ev = dmlopt.evaluate(inst, exc.solution)\n"
        "    print('CAUGHT', r.status, r.objective == ev.objective, flush=True)\n"
        "    sys.exit(7)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    _interrupt_when_found(proc)
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 7, err  # the loop did not go on to the next solve
    assert "CAUGHT interrupted True" in rest


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_progress_lines_with_the_flag_and_none_when_piped(tmp_path, solver):
    # n = 10 (not the interrupt tests' n = 16): each solver proves it optimal within its time
    # limit after a second or two of branching, with progress lines showing incumbent, bound
    # and gap on the way (the n = 16 root LP took SCIP the whole 8 s: one such line, 9 CPU s)
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 10, "p": 0.5, "tau": 2}, seed=3)
    path = tmp_path / "inst.json"
    dmlopt.save(inst, path)
    base = [sys.executable, "-m", "dmlopt", "solve", str(path), "--solver", solver, "-f",
            "pairs", "--threads", "1", "--json"]
    shown = subprocess.run([*base, "--time-limit", "8", "--progress", "0.5"],
                           capture_output=True, text=True, env=os.environ, timeout=120)
    lines = [x for x in shown.stderr.splitlines() if x.startswith(f"dmlopt: {solver} ")]
    assert lines, shown.stderr
    res = json.loads(shown.stdout)
    for line in lines:  # "dmlopt: scip 3 s: incumbent 108, bound 58.8, gap 45.6 %"
        inc, bnd = (x.split()[-1].rstrip(",") for x in line.split(": ")[2].split(", ")[:2])
        if inc != "-" and bnd != "-":  # our gap (|inc - bnd| / |inc|), not the solver's
            gap = float(line.rsplit("gap ", 1)[1].split()[0])
            assert gap == pytest.approx(100 * abs(float(inc) - float(bnd)) / abs(float(inc)),
                                        rel=1e-2, abs=1e-2)
            assert float(inc) >= res["objective"] - 1e-6  # an incumbent only improves
    # a progress line is written at the solver's first callback (0 s): a 1 s run shows it
    piped = subprocess.run([*base, "--time-limit", "1"], capture_output=True, text=True,
                           env=os.environ, timeout=120)
    assert not [x for x in piped.stderr.splitlines() if x.startswith(f"dmlopt: {solver} ")]
