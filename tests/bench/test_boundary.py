"""The harness's boundary: every bad suite, store or report target is refused with exit
2 and one line naming the field (nothing on stdout, no file left behind); the run cap; rows stored
from the first run on; the report's reference only from optima proven at the default tolerance;
the hard limit kills detached grandchildren too, and a finished run leaves no process behind.

Methods that fork are heuristics of a module written into the test's directory and named
"module:function" (DMLOPT_BENCH_ALLOW_IMPORT=1). Runs synchronise on files the methods write,
never on naps.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import sqlite3
import textwrap
import threading
from pathlib import Path

import pytest

from dmlopt.benchmarks import report, runner
from dmlopt.benchmarks import store as store_mod
from dmlopt.benchmarks import suite as suite_mod
from dmlopt.cli import main

GEN = '{ generator = "er", params = { n = 6, p = 0.5, tau = 2, l = 2 }, seeds = [0] }'

GOOD = f"""\
name = "b"
[[groups]]
problem = "tabgp"
instances = [{GEN}]
methods = [
  {{ solver = "highs", formulation = "paper", time_limit = 5 }},
  {{ heuristic = "random", seeds = [0, 1] }},
]
"""

FAKES = '''
import os
import time
from pathlib import Path

from dmlopt.heuristics.tabgp import random_partition


def _publish(path, text):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def detach(instance, *, seed=0, pids="", keep_pipe=False, finish=False):
    """Start a detached grandchild (double fork + setsid) that sleeps; then sleep (killed at
    the limit) or return (``finish``). The grandchild publishes its pid in ``pids``."""
    target = Path(pids, f"{seed}.pid")
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            _publish(target, str(os.getpid()))
            if not keep_pipe:  # a daemon closes what it inherited (the run's result pipe too)
                os.closerange(3, 4096)
            time.sleep(300)
        os._exit(0)
    os.waitpid(middle, 0)
    for _ in range(3000):  # the run waits until the grandchild is there
        if target.exists():
            break
        time.sleep(0.01)
    if not finish:
        time.sleep(300)
    return random_partition(instance, seed=seed)
'''


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def refused(capfd, argv: list[str], *expected: str) -> str:
    """Run the CLI; assert exit 2, one line on stderr holding ``expected``, nothing on stdout
    (file descriptor level: what C libraries print counts too)."""
    assert main(argv) == 2
    out, err = capfd.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    for text in expected:
        assert text in err, err
    return err


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """The test's directory as the working directory (the default store goes to results/)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    return tmp_path


# --------------------------------------------------------------------------- suite values


BAD_VALUES = [
    # (what is replaced, by what, the field and rule expected)
    ("time_limit = 5 }", "time_limit = 5, mip_gap = 1.0 }",
     "groups[0].methods[0].mip_gap: 1.0 must be a relative gap in [0, 1)"),
    ("time_limit = 5 }", "time_limit = 5, mip_gap = 2 }", "groups[0].methods[0].mip_gap: 2"),
    ("time_limit = 5 }", "time_limit = nan }", "groups[0].methods[0].time_limit: nan must be"),
    ("time_limit = 5 }", "time_limit = inf }", "groups[0].methods[0].time_limit: inf must be"),
    ("time_limit = 5 }", "time_limit = 5, grace = 0 }",
     "groups[0].methods[0].grace: 0 must be positive"),
    ("time_limit = 5 }", "time_limit = 5, grace = inf }", "groups[0].methods[0].grace: inf"),
    ("time_limit = 5 }", "time_limit = 5, threads = 1000000000 }",
     "groups[0].methods[0].threads: 1000000000 must be an integer in [1, 256]"),
    ("seeds = [0, 1]", "seeds = [9223372036854775808]",
     "groups[0].methods[1].seeds[0]: 9223372036854775808 must be an integer in [0, "),
    ("seeds = [0] }", "seeds = [-1] }", "groups[0].instances[0].seeds[0]: -1 must be"),
    ('solver = "highs"', 'solver = "asl:/some/program"',
     "groups[0].methods[0].solver: 'asl:/some/program' is not an allowed solver"),
    ("time_limit = 5 }", 'time_limit = 5, solver_options = { log_file = "/anywhere/x" } }',
     "groups[0].methods[0].solver_options.log_file: '/anywhere/x' reads or writes a file"),
    ("time_limit = 5 }", "time_limit = 5, solver_options = { no_such_option = 1 } }",
     "groups[0].methods[0].solver_options.no_such_option: 1 is not a HiGHS option"),
    ('name = "b"', 'name = "../escape"', "name: '../escape' must be a plain name"),
    ('name = "b"', 'name = "a/b"', "name: 'a/b' must be a plain name"),
    ('name = "b"', 'name = ".."', "name: '..' must be a plain name"),
]


@pytest.mark.parametrize(("old", "new", "expected"), BAD_VALUES,
                         ids=[f"{i}-{b[2].split(' ')[0]}" for i, b in enumerate(BAD_VALUES)])
def test_bad_suite_value_is_refused_before_anything(in_tmp, capfd, old, new, expected):
    assert old in GOOD
    path = write(in_tmp, GOOD.replace(old, new, 1))
    before = files_under(in_tmp)
    refused(capfd, ["bench", str(path)], f"dmlopt: {path}: {expected}")
    assert files_under(in_tmp) == before  # no store, no results/ directory


def test_mip_gap_one_refused(in_tmp, capfd):
    """The issue's example: a suite's mip_gap = 1.0 used to end as 'optimal'."""
    path = write(in_tmp, GOOD.replace("time_limit = 5 }", "time_limit = 5, mip_gap = 1.0 }"))
    refused(capfd, ["bench", str(path), "-o", "r.sqlite"],
            "groups[0].methods[0].mip_gap: 1.0 must be a relative gap in [0, 1)")
    assert not (in_tmp / "r.sqlite").exists()


def test_asl_path_solver_refused(in_tmp, capfd):
    path = write(in_tmp, GOOD.replace('solver = "highs"', 'solver = "asl:/some/program"'))
    refused(capfd, ["bench", str(path)], "'asl:/some/program' is not an allowed solver",
            "never a path")


def test_log_file_option_refused(in_tmp, capfd):
    target = in_tmp / "anywhere" / "x"
    path = write(in_tmp, GOOD.replace(
        "time_limit = 5 }", f'time_limit = 5, solver_options = {{ log_file = "{target}" }} }}'))
    refused(capfd, ["bench", str(path)], "solver_options.log_file", "reads or writes a file")
    assert not target.parent.exists()


def test_unknown_highs_option_refused_naming_it(in_tmp, capfd):
    path = write(in_tmp, GOOD.replace(
        "time_limit = 5 }", "time_limit = 5, solver_options = { presolve = \"off\", "
        "wibble_wobble = 3 } }"))
    refused(capfd, ["bench", str(path)], "solver_options.wibble_wobble: 3 is not a HiGHS option")


def test_dotdot_name_refused(in_tmp, capfd):
    sub = in_tmp / "sub"
    sub.mkdir()
    path = write(sub, GOOD.replace('name = "b"', 'name = "../escape"'))
    refused(capfd, ["bench", str(path)], "name: '../escape' must be a plain name")
    assert files_under(in_tmp) == {sub, path}


def test_name_from_an_odd_file_name_says_how_to_fix(in_tmp, capfd):
    path = write(in_tmp, GOOD.replace('name = "b"\n', ""), name="my suite.toml")
    refused(capfd, ["bench", str(path)], "name: 'my suite' must be a plain name",
            "defaults to the file name")


# --------------------------------------------------------------------------- reading suites


def test_nested_toml_refused(in_tmp, capfd):
    path = in_tmp / "deep.toml"
    path.write_text('name = "deep"\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n")
    refused(capfd, ["bench", str(path)], f"dmlopt: {path}: is nested deeper than")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_special_file_suite_refused_without_hanging(in_tmp, capfd, kind):
    if kind == "fifo":
        path = in_tmp / "fifo.toml"
        os.mkfifo(path)
    else:
        path = in_tmp / "zero.toml"
        path.symlink_to("/dev/zero")
    # if the reader blocked on the FIFO, this would unblock it (EOF) so the test fails, not hangs
    unblocked = threading.Event()

    def unblock() -> None:
        unblocked.set()
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)

    timer = threading.Timer(60, unblock) if kind == "fifo" else None
    if timer:
        timer.start()
    try:
        refused(capfd, ["bench", str(path)], f"dmlopt: {path}: is not a regular file")
    finally:
        if timer:
            timer.cancel()
    assert not unblocked.is_set()


# --------------------------------------------------------------------------- the run cap


def big_suite(tmp_path: Path, runs_per_instance: int, instances: int) -> Path:
    seeds = ", ".join(str(s) for s in range(runs_per_instance))
    inst_seeds = ", ".join(str(s) for s in range(instances))
    return write(tmp_path, f"""\
        name = "big"
        [[groups]]
        problem = "tabgp"
        instances = [
          {{ generator = "er", params = {{ n = 6, p = 0.5, tau = 2 }}, seeds = [{inst_seeds}] }},
        ]
        methods = [{{ heuristic = "random", seeds = [{seeds}] }}]
        """, name="big.toml")


def test_more_runs_than_the_cap_refused_before_generating(in_tmp, capfd, monkeypatch):
    path = big_suite(in_tmp, 10_001, 1)
    generated = []
    monkeypatch.setattr(suite_mod.api, "generate",
                        lambda *a, **k: generated.append(a) or pytest.fail("generated"))
    refused(capfd, ["bench", str(path)], "the suite has 10,001 runs",
            "above the cap of 10,000", "--max-runs 10001")
    assert not generated
    assert not (in_tmp / "results").exists()
    # 300,000 runs: refused as fast, nothing generated
    refused(capfd, ["bench", str(big_suite(in_tmp, 3_000, 100))], "has 300,000 runs")
    assert not generated


def test_max_runs_raises_the_cap(in_tmp, capfd):
    path = big_suite(in_tmp, 10_001, 1)
    assert len(suite_mod.load(path, max_runs=10_001).tasks) == 10_001
    with pytest.raises(suite_mod.SuiteError, match="10,001 runs"):
        suite_mod.load(path)
    # the flag reaches the check: 2 runs refused under --max-runs 1, run under --max-runs 2
    small = write(in_tmp, GOOD.replace(
        '{ solver = "highs", formulation = "paper", time_limit = 5 },\n', ""))
    refused(capfd, ["bench", str(small), "--max-runs", "1"], "has 2 runs", "cap of 1")
    refused(capfd, ["bench", str(small), "--max-runs", "0"], "--max-runs: 0 must be at least 1")
    assert not (in_tmp / "results").exists()
    assert main(["bench", str(small), "--max-runs", "2"]) == 0
    assert len(store_mod.read(in_tmp / "results" / "b.sqlite")) == 2


# --------------------------------------------------------------------------- stores


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def foreign(tmp_path) -> Path:
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
    conn.execute("INSERT INTO accounts (owner) VALUES ('someone')")
    conn.commit()
    conn.close()
    return path


def test_foreign_sqlite_refused_and_left_unchanged(in_tmp, capfd, foreign):
    path = write(in_tmp, GOOD)
    digest = sha(foreign)
    before = files_under(in_tmp)
    refused(capfd, ["bench", str(path), "-o", str(foreign)],
            f"-o: '{foreign}' exists and is not a dmlopt results store")
    assert sha(foreign) == digest
    assert files_under(in_tmp) == before  # no -wal/-shm, no results/
    with pytest.raises(store_mod.InstanceError, match="not a dmlopt results store"):
        store_mod.Store(foreign)
    assert sha(foreign) == digest


@pytest.mark.parametrize("content", [b"", b"not a database at all\n" * 10])
def test_non_sqlite_output_refused(in_tmp, capfd, content):
    target = in_tmp / "notes.sqlite"
    target.write_bytes(content)
    refused(capfd, ["bench", str(write(in_tmp, GOOD)), "-o", str(target)],
            "exists and is not a dmlopt results store")
    assert target.read_bytes() == content


def test_output_directory_refused(in_tmp, capfd):
    refused(capfd, ["bench", str(write(in_tmp, GOOD)), "-o", str(in_tmp)], "is a directory")


def test_new_store_is_marked_and_old_stores_are_accepted(tmp_path):
    new = tmp_path / "new.sqlite"
    with store_mod.Store(new):
        pass
    assert store_mod.check(new) == "ours"
    conn = sqlite3.connect(new)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == store_mod.APPLICATION_ID
    conn.close()
    # a store of the previous version: the runs table, no mark
    old = tmp_path / "old.sqlite"
    conn = sqlite3.connect(old)
    conn.execute(store_mod._create_sql())
    conn.execute("PRAGMA user_version=1")
    conn.commit()
    conn.close()
    assert store_mod.check(old) == "legacy"
    assert store_mod.read(old) == []
    with store_mod.Store(old) as s:  # adopted, and marked from now on
        s.put(exact_row("A", "optimal", 5.0))
    assert store_mod.check(old) == "ours"
    assert len(store_mod.read(old)) == 1


def test_report_refuses_a_foreign_store_and_writes_nothing(tmp_path, capfd, foreign):
    digest = sha(foreign)
    out = tmp_path / "rep"
    refused(capfd, ["report", str(foreign), "-o", str(out)],
            f"store: '{foreign}' exists and is not a dmlopt results store")
    assert sha(foreign) == digest
    assert not out.exists()
    refused(capfd, ["report", str(tmp_path), "-o", str(out)], "is a directory")
    assert not out.exists()


def test_report_is_read_only_and_writes_only_under_dir(tmp_path, capfd):
    path = tmp_path / "s.sqlite"
    with store_mod.Store(path) as s:
        s.put(exact_row("A", "optimal", 5.0))
    digest = sha(path)
    before = files_under(tmp_path)
    out = tmp_path / "rep"
    assert main(["report", str(path), "-o", str(out)]) == 0
    assert sha(path) == digest
    assert files_under(tmp_path) - before == {out} | files_under(out)
    assert (out / "report.md").is_file()
    capfd.readouterr()
    not_dir = tmp_path / "file"
    not_dir.write_text("x")
    refused(capfd, ["report", str(path), "-o", str(not_dir)], "exists and is not a directory")


# --------------------------------------------------------------------------- report reference


def exact_row(inst: str, status: str, obj: float | None, *, bound: float | None = None,
              gap: float | None = None, mip_gap: float | None = None,
              method: str = "highs:paper") -> dict:
    opts = {"formulation": "paper", "solver": method.split(":")[0], "threads": 1,
            "time_limit": 60.0}
    if mip_gap is not None:
        opts["mip_gap"] = mip_gap
    return {"suite": "t", "problem": "tabgp", "instance": inst, "instance_hash": f"h-{inst}",
            "kind": "exact", "method": method, "options": json.dumps(opts, sort_keys=True),
            "seed": 0, "status": status, "objective": obj, "bound": bound, "gap": gap,
            "seconds": 1.0, "metrics": {}}


def heur_row(inst: str, obj: float) -> dict:
    return {"suite": "t", "problem": "tabgp", "instance": inst, "instance_hash": f"h-{inst}",
            "kind": "heuristic", "method": "random", "options": "{}", "seed": 0,
            "status": "feasible", "objective": obj, "seconds": 0.1, "metrics": {}}


def test_report_ignores_an_optimal_row_of_mip_gap_2_as_reference(tmp_path):
    rows = [
        # an old store's "optimal" at mip_gap = 2 (objective 12, bound 6): not an optimum
        exact_row("A", "optimal", 12.0, bound=6.0, mip_gap=2.0),
        heur_row("A", 10.0),
        # "optimal" with a solver gap of 5 %: not proven at 1e-4 either
        exact_row("B", "optimal", 10.5, bound=9.975, gap=0.05),
        heur_row("B", 10.0),
        # proven at the default tolerance (asked 1e-4, gap 0): the reference
        exact_row("C", "optimal", 10.0, bound=10.0, gap=0.0, mip_gap=1e-4),
        heur_row("C", 11.0),
    ]
    path = tmp_path / "s.sqlite"
    with store_mod.Store(path) as s:
        for r in rows:
            s.put(r)
    df = report.frame(store_mod.read(path))
    # an "optimal" its own bound contradicts cannot be true: flagged, and neither a reference
    # nor a bound for the report (issue 51: a row that cannot be true is left out)
    exact = df[df["kind"] == "exact"].set_index("instance")
    assert exact.loc["A", "suspect"].startswith('"optimal" but its own bound disagrees')
    assert exact.loc["B", "suspect"].startswith('"optimal" but its own bound disagrees')
    assert exact.loc["C", "suspect"] == ""
    inst = report.instances(df).set_index("instance")
    assert inst.loc["C", "ref_kind"] == "optimum" and inst.loc["C", "ref"] == 10.0
    assert inst.loc[["A", "B"], "ref"].isna().all()
    heur = df[df["kind"] == "heuristic"].set_index("instance")
    # no gap to optimum on A and B (no proven optimum), never a negative one against a false
    # optimum
    assert heur["gap_pct"].isna()[["A", "B"]].all()
    assert heur.loc["C", "gap_pct"] == pytest.approx(10.0)
    summ = report.summary(df)
    assert summ[summ["kind"] == "exact"]["optimal"].sum() == 1  # only C counts as optimal


# --------------------------------------------------------------------------- windowed submission


def test_first_row_is_stored_before_the_last_task_is_submitted(in_tmp, monkeypatch):
    path = write(in_tmp, GOOD.replace(
        '{ solver = "highs", formulation = "paper", time_limit = 5 },\n', "").replace(
        "seeds = [0, 1]", "seeds = [0, 1, 2, 3, 4, 5, 6, 7]"))
    tasks = suite_mod.load(path).tasks
    assert len(tasks) == 8
    rows: list[dict] = []
    seen_at_submit: list[tuple[int, int]] = []  # (tasks submitted, rows stored) per submission
    payload = suite_mod.Task.as_payload

    def recording(self):
        seen_at_submit.append((len(seen_at_submit) + 1, len(rows)))
        return payload(self)

    monkeypatch.setattr(suite_mod.Task, "as_payload", recording)
    # waits that time out before any run ends must not top the window up past its size
    monkeypatch.setattr(runner, "_POLL", 0.001)
    runner.run_local(tasks, 1, rows.append)
    assert len(rows) == 8 and len(seen_at_submit) == 8
    assert seen_at_submit[-1][1] >= 1  # the last task went in after rows were stored
    window = runner.WINDOW_PER_WORKER * 1
    assert all(submitted - stored <= window for submitted, stored in seen_at_submit)
    assert sorted(r["seed"] for r in rows) == list(range(8))


# --------------------------------------------------------------------------- process trees


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_detached_grandchildren_are_killed_at_the_limit_and_after_a_run(in_tmp, monkeypatch,
                                                                        capfd):
    monkeypatch.setenv("DMLOPT_BENCH_ALLOW_IMPORT", "1")
    (in_tmp / "bench_detach.py").write_text(FAKES)
    pids = in_tmp / "pids"
    pids.mkdir()
    opts = f'pids = "{pids}"'
    fn = 'heuristic = "bench_detach:detach"'
    path = write(in_tmp, f"""\
        name = "detach"
        [[groups]]
        problem = "tabgp"
        instances = [{GEN}]
        kill_limit = 2
        grace = 1
        methods = [
          {{ {fn}, seeds = [0], options = {{ {opts} }} }},
          {{ {fn}, seeds = [1], options = {{ {opts}, keep_pipe = true }} }},
          {{ {fn}, seeds = [2], options = {{ {opts}, finish = true }} }},
        ]
        """)
    out = in_tmp / "r.sqlite"
    try:
        assert main(["bench", str(path), "-o", str(out), "--workers", "2"]) == 0
        rows = {r["seed"]: r for r in store_mod.read(out)}
        grandchildren = {int(p.stem): int(p.read_text()) for p in pids.glob("*.pid")}
        assert sorted(grandchildren) == [0, 1, 2]
        assert not [pid for pid in grandchildren.values() if _alive(pid)]
        for seed in (0, 1):
            row = rows[seed]
            assert row["status"] == "killed", row
            assert "killed at the hard limit 3 s (kill limit 2 s + grace 1 s)" in row["message"]
            count = re.search(r": (\d+) processes killed \(the run and (\d+) it started\)",
                              row["message"])
            assert count, row["message"]
            assert int(count.group(1)) >= 2 and int(count.group(2)) >= 1
        done = rows[2]
        assert done["status"] == "feasible", done
        assert "1 process(es) left running by the method were killed" in done["message"]
    finally:
        for p in pids.glob("*.pid"):
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(p.read_text()), signal.SIGKILL)
