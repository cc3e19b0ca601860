"""Ctrl-C on every long-running command, with a real SIGINT: ``bound`` keeps the dual bound
reached so far, ``heuristic`` (tabu) its best solution, a direct HiGHS run stops within a
fraction of a second, a second Ctrl-C ends the process at once, ``reproduce`` and ``train``
exit 130 with one line saying how to resume. (``solve`` and ``bench``:
tests/core/test_interrupt_solve.py and tests/bench/test_runner.py.)"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import dmlopt

ENV = {**os.environ, "PYTHONUNBUFFERED": "1", "OPENBLAS_NUM_THREADS": "1"}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _interrupt_after_cpu(proc: subprocess.Popen, cpu: float, deadline: float = 300.0) -> None:
    """SIGINT once the child has used ``cpu`` seconds of CPU (robust to a loaded machine)."""
    t0 = time.monotonic()
    while _cpu_seconds(proc.pid) < cpu:
        assert proc.poll() is None, "the command ended before the interrupt"
        assert time.monotonic() - t0 < deadline, "the command used no CPU in time"
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)


def _popen(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dmlopt", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)


def _json_of(out: str) -> dict:
    return json.loads(out[out.index("{"):])


def test_bound_ctrl_c_keeps_the_dual_bound(tmp_path):
    # cpn6 with 14 requests: HiGHS's tree is far from closed after a minute
    inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 14, "scheme": "MinCU"},
                           seed=0)
    path, out = tmp_path / "inst.json", tmp_path / "bound.json"
    dmlopt.save(inst, path)
    proc = _popen(["bound", str(path), "--method", "mip", "--time-limit", "600", "--json",
                   "-o", str(out)])
    _interrupt_after_cpu(proc, 5.0)  # the start-up takes 0.5-2 CPU s (a loaded machine): HiGHS runs
    t0 = time.monotonic()
    rest, err = proc.communicate(timeout=120)
    # HiGHS answers between nodes (at once) or after its root LP and cuts (seconds, more on a
    # loaded machine); either way long before the time limit
    assert time.monotonic() - t0 < 60, "HiGHS did not stop"
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        f"dmlopt: interrupted: the bound reached so far is above, written to {out}"], err
    res = _json_of(rest)
    assert res["status"] == "bound" and res["metrics"]["interrupted"] == 1
    assert res["seconds"] < 590  # stopped by the interrupt, not by the time limit
    ev = dmlopt.evaluate(inst, out)  # the incumbent found on the way, written and evaluated
    assert ev.feasible and abs(ev.objective - res["objective"]) < 1e-9
    assert res["bound"] <= ev.objective
    assert res["bound"] > 0  # the root was solved: a real bound, not the trivial 0


def test_heuristic_ctrl_c_keeps_the_best_tabu_solution(tmp_path):
    inst = dmlopt.generate("tap", {"generator": "qaplib", "name": "tai100a"}, seed=0)
    path, out = tmp_path / "inst.json", tmp_path / "sol.json"
    dmlopt.save(inst, path)
    # the interrupt must come once the search runs, after the start-up (imports, the instance,
    # numba's compile on a fresh clone, which a Ctrl-C during it ends otherwise): one round,
    # run first, measures that start-up in CPU seconds and leaves numba's cache written. It
    # runs on tai12a (the same kernels and array types as tai100a, so the same compile and
    # cache), whose round costs nothing, so the measure is the start-up, not a 100-facility
    # round too; the search then has its 2.5 CPU s after the start-up as before
    small = tmp_path / "small.json"
    dmlopt.save(dmlopt.generate("tap", {"generator": "qaplib", "name": "tai12a"}, seed=0), small)
    args = ["heuristic", str(path), "tabu", "--json", "-o", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "dmlopt", "heuristic", str(small), "tabu", "--json",
                    "-o", str(tmp_path / "small-sol.json"), "--option", "rounds=1"],
                   capture_output=True, env=ENV, timeout=300, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    start_up = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    proc = _popen([*args, "--option", "rounds=300"])
    _interrupt_after_cpu(proc, start_up + 2.5)
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # numba's SystemError is not an internal error
    assert "the best solution so far is above" in err and "internal error" not in err
    res = _json_of(rest)
    assert res["status"] == "interrupted"
    ev = dmlopt.evaluate(inst, out)
    assert ev.feasible and abs(ev.objective - res["objective"]) < 1e-9
    # far better than a random assignment: the search's best, not its start
    rng = np.random.default_rng(0)
    random_costs = [dmlopt.evaluate(inst, dmlopt.heuristic(inst, "random", seed=s).solution)
                    .objective for s in rng.integers(0, 1000, 3)]
    assert ev.objective < 0.95 * min(random_costs), (ev.objective, min(random_costs), start_up)


def test_highspy_run_stops_within_a_second(tmp_path):
    # a market split MIP (Cornuejols and Dawande 1998): tiny LPs, a tree far too large to end
    code = (
        "import os, signal, threading, time\n"
        "import numpy as np\n"
        "from dmlopt import solvers\n"
        "rng = np.random.default_rng(1)\n"
        "m, n = 4, 40\n"
        "a = rng.integers(0, 100, (m, n)).astype(float)\n"
        "h = solvers.highspy_model()\n"
        "h.setOptionValue('threads', 1)\n"
        "solvers.prepare_highs(1)\n"
        "h.addVars(n, np.zeros(n), np.ones(n))\n"
        "h.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.ones(n, dtype=np.uint8))\n"
        "h.changeColsCost(n, np.arange(n, dtype=np.int32), rng.integers(1, 10, n) * 1.0)\n"
        "for r in a:\n"
        "    rhs = float(np.floor(r.sum() / 2))\n"
        "    h.addRow(rhs, rhs, n, np.arange(n, dtype=np.int32), r)\n"
        "threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "t0 = time.monotonic()\n"
        "try:\n"
        "    solvers.run_highspy(h)\n"
        "    print('FINISHED', h.modelStatusToString(h.getModelStatus()))\n"
        "except KeyboardInterrupt:\n"
        "    print('STOPPED', round(time.monotonic() - t0, 2))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=ENV, timeout=120)
    assert proc.stdout.startswith("STOPPED"), proc.stdout + proc.stderr
    assert float(proc.stdout.split()[1]) < 5.0  # 2 s to the signal, then a prompt stop
    assert "Running HiGHS" not in proc.stdout  # the banner never reaches stdout


def test_second_ctrl_c_stops_at_once(tmp_path):
    # HiGHS answers an interrupt only after the root LP of this MIP (a minute or more)
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 20, "p": 0.5, "tau": 3, "l": 4},
                           seed=1)
    path = tmp_path / "inst.json"
    dmlopt.save(inst, path)
    proc = _popen(["bound", str(path), "--method", "mip", "--time-limit", "600"])
    _interrupt_after_cpu(proc, 2.0)  # past the start-up (half a CPU second), in the root LP
    time.sleep(1.0)
    assert proc.poll() is None, "the root LP ended already: no test of the second Ctrl-C"
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 5
    assert proc.returncode == 130
    assert err.strip().splitlines() == [
        "dmlopt: interrupted twice: stopped at once, nothing written"], err
    assert rest == ""


def test_reproduce_ctrl_c_says_how_to_resume(tmp_path):
    proc = _popen(["reproduce", "inc_oxc", "fig4", "--quick", "--workers", "1", "-o",
                   str(tmp_path)])
    t0 = time.monotonic()
    for line in proc.stderr:  # the progress lines: interrupt after the first stored run
        if line.startswith("[1/"):
            break
        assert time.monotonic() - t0 < 300
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    said = [line for line in err.splitlines() if line.startswith("dmlopt:")]
    assert len(said) == 1 and "run the same command to resume" in said[0], err
    assert list((tmp_path / "inc_oxc-quick" / "stores").glob("*.sqlite"))


def test_train_ctrl_c_keeps_the_checkpoint(tmp_path):
    out = tmp_path / "policy.npz"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dmlopt", "train", "nara", "--topology", "alpha", "--steps",
         "1000000", "--batch", "256", "--minibatch", "64", "--epochs", "1", "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    t0 = time.monotonic()
    for line in proc.stderr:  # one line per PPO iteration, after its checkpoint
        if line.startswith("it 1 "):
            break
        assert time.monotonic() - t0 < 300
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    ckpt = tmp_path / "policy.ckpt.npz"
    assert ckpt.exists() and not out.exists()
    assert f"dmlopt: interrupted; the checkpoint {ckpt} is kept; run the same command to " \
           "resume" in err


def test_bound_json_is_all_stdout_holds(tmp_path):
    # the bound methods that drive highspy directly: HiGHS's banner once broke --json
    for spec, method in (({"generator": "cpn6", "requests": 3, "scheme": "MinCU"}, "energy"),):
        inst = dmlopt.generate("rar", spec, seed=0)
        path = tmp_path / "inst.json"
        dmlopt.save(inst, path)
        proc = subprocess.run([sys.executable, "-m", "dmlopt", "bound", str(path), "--method",
                               method, "--json"], capture_output=True, text=True, env=ENV,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["status"] == "bound"
    for name, method in (("nara", "aggregate"), ("inc_oxc", "jobs")):
        inst = dmlopt.generate(name, {}, seed=0)
        path = tmp_path / f"{name}.json"
        dmlopt.save(inst, path)
        proc = subprocess.run([sys.executable, "-m", "dmlopt", "bound", str(path), "--method",
                               method, "--json"], capture_output=True, text=True, env=ENV,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["status"] == "bound"
