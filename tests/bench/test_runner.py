"""Benchmark runner: failing methods give rows with the right status while the sweep continues,
stored runs are skipped, --rerun / --rerun-failed run again, and a runner killed with SIGKILL
resumes without losing or duplicating a finished run.

The failing methods are heuristics of a module written into the test's directory and named in the
suite as "module:function", which suites may do only with DMLOPT_BENCH_ALLOW_IMPORT=1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import dmlopt
from dmlopt.benchmarks import store as store_mod
from dmlopt.cli import main

FAKES = '''
import os
import time
from pathlib import Path

from dmlopt.heuristics.tabgp import random_partition


def ok(instance, *, seed=0):
    return random_partition(instance, seed=seed)


def boom(instance, *, seed=0):
    raise RuntimeError("boom on purpose")


def slow(instance, *, seed=0):
    time.sleep(60)
    return random_partition(instance, seed=seed)


def die(instance, *, seed=0):
    os._exit(7)


def threads(instance, *, seed=0, out=""):
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
    Path(out).write_text(",".join(os.environ.get(k, "unset") for k in names))
    return random_partition(instance, seed=seed)


def orphan(instance, *, seed=0, pids=""):
    # leaves a detached grandchild behind (as a solver's own fork may), then works on
    if os.fork() == 0:
        os.setsid()
        tmp = Path(pids, "orphan.tmp")
        tmp.write_text(str(os.getpid()))
        os.replace(tmp, Path(pids, "orphan.pid"))
        time.sleep(90)
        os._exit(0)
    time.sleep(90)
    return random_partition(instance, seed=seed)


def nap(instance, *, seed=0, pids="", gate="", free=2):
    if pids:  # written whole or not at all: the run may be killed at any moment
        tmp = Path(pids, f"{seed}.tmp")
        tmp.write_text(str(os.getpid()))
        os.replace(tmp, Path(pids, f"{seed}.pid"))
    # seeds from ``free`` on wait until the test opens the gate (or kills them): the runner is
    # stopped while exactly the first ``free`` runs are done, however fast the machine is
    while gate and seed >= free and not Path(gate).exists():
        time.sleep(0.01)
    return random_partition(instance, seed=seed)
'''

GEN = '{ generator = "er", params = { n = 6, p = 0.5, tau = 2, l = 2 }, seeds = [0] }'


def write_suite(tmp_path: Path, methods: str, name: str = "t") -> Path:
    (tmp_path / "bench_fakes.py").write_text(FAKES)
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(f"""\
        name = "{name}"
        description = "test suite"
        [[groups]]
        problem = "tabgp"
        instances = [{GEN}]
        methods = [
        {methods}
        ]
        """))
    return path


@pytest.fixture
def allow_import(monkeypatch):
    monkeypatch.setenv("DMLOPT_BENCH_ALLOW_IMPORT", "1")
    monkeypatch.setenv("CI", "true")


def by_method(rows: list[dict]) -> dict[tuple[str, int], dict]:
    return {(r["method"], r["seed"]): r for r in rows}


def test_failures_give_rows_and_the_sweep_continues(tmp_path, allow_import, capsys):
    suite = write_suite(tmp_path, """
      { heuristic = "bench_fakes:boom" },
      { heuristic = "bench_fakes:slow", kill_limit = 0.3, grace = 0.2 },
      { heuristic = "bench_fakes:die" },
      { heuristic = "bench_fakes:ok", seeds = [0, 1] },
      { heuristic = "random", seeds = [3] },
    """)
    out = tmp_path / "r.sqlite"
    assert main(["bench", str(suite), "-o", str(out), "--workers", "2"]) == 0
    rows = by_method(store_mod.read(out))
    assert len(rows) == 6
    boom = rows[("bench_fakes:boom", 0)]
    assert boom["status"] == "error"
    assert boom["message"] == "RuntimeError: boom on purpose"
    slow = rows[("bench_fakes:slow", 0)]
    assert slow["status"] == "killed"
    assert "hard limit 0.5 s (kill limit 0.3 s + grace 0.2 s)" in slow["message"]
    assert slow["wall_seconds"] >= 0.5
    die = rows[("bench_fakes:die", 0)]
    assert die["status"] == "error"
    assert "exited with code 7" in die["message"]
    # the runs that work are evaluated: the same objective as running the heuristic here
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 6, "p": 0.5, "tau": 2, "l": 2}, 0)
    for method, seed, name in [("bench_fakes:ok", 0, "random"), ("bench_fakes:ok", 1, "random"),
                               ("random", 3, "random")]:
        row = rows[(method, seed)]
        assert row["status"] == "feasible"
        assert row["objective"] == dmlopt.heuristic(inst, name, seed=seed).objective
        assert row["instance_hash"] == dmlopt.instance_hash(inst)
        assert row["peak_mem_mb"] > 0
        assert row["dmlopt_version"] == dmlopt.__version__
        assert row["metrics"]["cut_cost"] >= 0
    err = capsys.readouterr().err
    assert "6 to run" in err

    # a second run skips everything; --rerun-failed runs the three failures; --rerun all six
    assert main(["bench", str(suite), "-o", str(out)]) == 0
    assert "6 already in" in capsys.readouterr().err
    assert main(["bench", str(suite), "-o", str(out), "--rerun-failed"]) == 0
    assert "3 to run" in capsys.readouterr().err
    assert main(["bench", str(suite), "-o", str(out), "--rerun", "--workers", "3"]) == 0
    assert "6 to run" in capsys.readouterr().err
    again = store_mod.read(out)
    assert len(again) == 6
    assert {r["status"] for r in again} == {"error", "killed", "feasible"}


def test_import_of_code_needs_the_env_var(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DMLOPT_BENCH_ALLOW_IMPORT", raising=False)
    suite = write_suite(tmp_path, '{ heuristic = "bench_fakes:ok" },')
    assert main(["bench", str(suite), "-o", str(tmp_path / "r.sqlite")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(suite) in err
    assert "groups[0].methods[0].heuristic: 'bench_fakes:ok'" in err
    assert "DMLOPT_BENCH_ALLOW_IMPORT=1" in err
    assert not (tmp_path / "r.sqlite").exists()


def test_runs_get_one_thread_per_pool_unless_the_caller_says(tmp_path, allow_import,
                                                               monkeypatch):
    """A worker stands for one core: BLAS, OpenMP, MKL and numba pools get one thread each in
    the run's process, except where the caller's environment sets a count."""
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    seen = tmp_path / "seen.txt"
    suite = write_suite(tmp_path, f'{{ heuristic = "bench_fakes:threads", '
                                  f'options = {{ out = "{seen}" }} }},')
    assert main(["bench", str(suite), "-o", str(tmp_path / "r.sqlite")]) == 0
    assert seen.read_text() == "1,3,1,1"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state


def _wait_for(condition, what: str, proc=None, timeout: float = 120.0) -> None:
    """Poll ``condition`` until it holds (an event: a file, a row, a process exit); fail after
    ``timeout`` s (a hang, not a speed assumption) or if ``proc`` ends first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"runner ended before {what}: {proc.stderr.read()}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _stored(out: Path) -> int:
    return store_mod.Store(out).count() if out.exists() else 0


def test_sigkill_of_the_runner_loses_and_duplicates_nothing(tmp_path, allow_import):
    pids, gate = tmp_path / "pids", tmp_path / "gate"
    pids.mkdir()
    n = 6
    seeds = ", ".join(str(s) for s in range(n))
    suite = write_suite(tmp_path, f'{{ heuristic = "bench_fakes:nap", seeds = [{seeds}], '
                        f'options = {{ pids = "{pids}", gate = "{gate}" }} }},')
    out = tmp_path / "r.sqlite"
    cmd = [sys.executable, "-m", "dmlopt", "bench", str(suite), "-o", str(out), "--workers", "1"]
    env = {**os.environ, "DMLOPT_BENCH_ALLOW_IMPORT": "1", "CI": "true"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    # seeds 0 and 1 stored, seed 2 started and held at the gate
    _wait_for(lambda: _stored(out) >= 2 and (pids / "2.pid").exists(), "seed 2", proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    before = store_mod.read(out)
    assert sorted(r["seed"] for r in before) == [0, 1]
    # no run survives its runner (runs die with their helper, helpers with the runner)
    started = [int(p.read_text()) for p in pids.glob("*.pid")]
    assert started
    _wait_for(lambda: not [pid for pid in started if _alive(pid)], "the runs to die")

    gate.touch()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} already in" in done.stderr
    after = store_mod.read(out)
    assert len(after) == n
    assert sorted(r["seed"] for r in after) == list(range(n))
    assert len({(r["instance_hash"], r["method"], r["options"], r["seed"]) for r in after}) == n
    # the rows stored before the kill are untouched
    assert after[: len(before)] == before
    assert all(r["status"] == "feasible" for r in after)


def _interruptible_bench(suite: Path, out: Path, workers: int) -> subprocess.Popen:
    """``dmlopt bench`` in a subprocess that answers SIGINT (whatever the test runner's own
    disposition), stderr piped."""
    cmd = [sys.executable, "-m", "dmlopt", "bench", str(suite), "-o", str(out), "--workers",
           str(workers)]
    env = {**os.environ, "DMLOPT_BENCH_ALLOW_IMPORT": "1", "CI": "true"}
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_ctrl_c_stops_cleanly_and_keeps_finished_rows(tmp_path, allow_import):
    pids, gate = tmp_path / "pids", tmp_path / "gate"
    pids.mkdir()
    seeds = ", ".join(str(s) for s in range(8))
    suite = write_suite(tmp_path, f'{{ heuristic = "bench_fakes:nap", seeds = [{seeds}], '
                        f'options = {{ pids = "{pids}", gate = "{gate}" }} }},')
    out = tmp_path / "r.sqlite"
    proc = _interruptible_bench(suite, out, workers=2)
    # seeds 0 and 1 stored; the next runs are held at the gate
    _wait_for(lambda: _stored(out) >= 2 and len(list(pids.glob("*.pid"))) >= 3,
              "two stored rows and a held run", proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "run the same command to resume" in err
    rows = store_mod.read(out)
    assert sorted(r["seed"] for r in rows) == [0, 1]
    assert all(r["status"] == "feasible" for r in rows)


def test_ctrl_c_with_a_detached_grandchild_ends_at_once_and_kills_it(tmp_path, allow_import):
    # the grandchild holds no pipe of the runner's and dies with the run: Ctrl-C is answered
    # at once, not when the grandchild ends (90 s), and nothing is left running
    pids = tmp_path / "pids"
    pids.mkdir()
    suite = write_suite(tmp_path, f'{{ heuristic = "bench_fakes:orphan", '
                        f'options = {{ pids = "{pids}" }}, kill_limit = 200 }},')
    proc = _interruptible_bench(suite, tmp_path / "r.sqlite", workers=1)
    _wait_for(lambda: (pids / "orphan.pid").exists(), "the grandchild", proc)
    grandchild = int((pids / "orphan.pid").read_text())
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=45)
    assert proc.returncode == 130, err
    _wait_for(lambda: not _alive(grandchild), "the grandchild to die", timeout=10)


def test_held_interrupts_raise_only_where_checked_and_restore_the_handler():
    from dmlopt.benchmarks.runner import held_interrupts

    calls = []

    def counting(signum, frame):  # as the CLI's: counts, then raises
        calls.append(signum)
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGINT, counting)
    try:
        with held_interrupts() as check:
            check()  # nothing held yet
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler has run by now; nothing was raised here
                time.sleep(0)
            assert calls == [signal.SIGINT]
            assert signal.getsignal(signal.SIGINT) is not counting
            with pytest.raises(KeyboardInterrupt):
                check()
            assert signal.getsignal(signal.SIGINT) is counting  # put back before raising
        with held_interrupts() as check:  # an uninterrupted block leaves the handler as it was
            check()
        assert signal.getsignal(signal.SIGINT) is counting
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with held_interrupts() as check:  # ignored (a background job): left alone
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
