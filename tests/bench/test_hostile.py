"""The hostile-input sweep (:mod:`benchmarks.studies.harness.hostile`): its rules catch each
kind of fault, it keeps a fault's inputs for a replay, and a short clean run reports none."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from benchmarks.studies.harness import hostile as H


def test_the_rules_of_an_outcome():
    assert H.fault_of(0, "ok", "") == "" and H.fault_of(3, "", "x\ny") == ""
    assert H.fault_of(2, "", "dmlopt: n: -1 (must be >= 1)\n") == ""
    assert H.fault_of(1, "", "dmlopt: internal error: KeyError: 2\n").startswith("exit 1")
    assert "2 lines" in H.fault_of(2, "", "Warning: overflow\ndmlopt: M: bad\n")
    assert "stdout" in H.fault_of(2, "half a table", "dmlopt: stopped\n")
    assert H.fault_of("crash: the command ended by signal SIGKILL", "", "").startswith("crash")
    assert H.fault_of("hang: no result within 2 s", "", "").startswith("hang")


@pytest.mark.parametrize("behaviour,expected", [
    ("exit1", "exit 1"), ("hang", "hang"), ("nested", "hang"), ("memory", "exit 1"),
    ("ok", "")])
def test_a_command_runs_in_a_limited_child(monkeypatch, behaviour, expected):
    """A command that fails, one that runs past the alarm, one whose own forked child (a
    solver run apart) runs past it, and one that allocates past the memory limit (MemoryError,
    an internal error) are faults, each reported within the alarm; the parent process is
    untouched."""
    import sys

    from dmlopt import cli, solvers

    def fake(argv):
        if behaviour == "exit1":
            print("dmlopt: internal error: RuntimeError: x", file=sys.stderr)
            return 1
        if behaviour == "hang":
            time.sleep(30)
        if behaviour == "nested":   # the grandchild holds the result pipe open
            solvers.forked(lambda: time.sleep(30), "inner")
        if behaviour == "memory":
            try:
                bytearray(2 * 2**30)
            except MemoryError:
                print("dmlopt: internal error: MemoryError", file=sys.stderr)
                return 1
        print("fine")
        return 0

    monkeypatch.setattr(cli, "main", fake)
    t0 = time.perf_counter()
    code, out, err = H.run_cli(["anything"], watchdog=1, memory=1.5 * 2**30)
    assert time.perf_counter() - t0 < 15
    why = H.fault_of(code, out, err)
    assert why.startswith(expected) if expected else why == ""


def test_mutate_edits_a_copy_and_never_the_problem():
    data = {"problem": "tap", "M": [[0, 1], [1, 0]], "D": [[0, 2], [2, 0]], "K": 1}
    before = json.dumps(data)
    rng = random.Random(3)
    edited = [H.mutate(data, rng) for _ in range(40)]
    assert json.dumps(data) == before
    assert all(e["problem"] == "tap" for e in edited)
    assert sum(e != data for e in edited) >= 30


def test_a_fault_is_kept_for_a_replay(monkeypatch, tmp_path):
    """With every command failing, each fault is logged with its command, the files it names
    are kept under faults/, and the exit code is 1; with the real CLI a short run is clean."""
    import sys

    from dmlopt import cli

    real = cli.main

    def failing(argv):
        print("dmlopt: internal error: ZeroDivisionError", file=sys.stderr)
        return 1

    monkeypatch.setattr(cli, "main", failing)
    # seed 1 starts with an instance round: files to keep
    assert H.main(["-o", str(tmp_path / "bad"), "--rounds", "2", "--seeds", "1-1",
                   "--problems", "tabgp"]) == 1
    rows = [json.loads(x) for x in (tmp_path / "bad" / "faults.jsonl").read_text().splitlines()]
    assert rows and all(r["fault"].startswith("exit 1") for r in rows)
    named = [a for r in rows for a in r["argv"] if a.endswith(".json")]
    assert named and all("faults" in a and (tmp_path / "bad" / "faults").exists() for a in named)
    for a in named:
        assert json.loads(Path(a).read_text()) is not None
    monkeypatch.setattr(cli, "main", real)
    assert H.main(["-o", str(tmp_path / "good"), "--rounds", "4", "--seeds", "4-4",
                   "--problems", "tabgp", "tap"]) == 0


def test_a_refused_generate_is_not_followed_by_a_bound_on_an_older_file(monkeypatch, tmp_path):
    """The bound that follows a generate reads what that generate wrote: after a refusal (exit
    2) there is none, and a file left by an earlier round is never used."""
    ran: list[list[str]] = []

    def fake(cmd, watchdog, memory):
        ran.append(list(cmd))
        if cmd[0] == "generate":
            return 2, "", "dmlopt: generate: refused\n"
        return 0, "", ""

    monkeypatch.setattr(H, "run_cli", fake)
    work = tmp_path / "out" / "work"
    work.mkdir(parents=True)
    (work / "generated.json").write_text("{}")   # an earlier round's
    assert H.main(["-o", str(tmp_path / "out"), "--rounds", "40", "--seeds", "2-2",
                   "--problems", "tabgp"]) == 0
    gens = [i for i, c in enumerate(ran) if c[0] == "generate"]
    assert gens, "no generator round drawn"
    assert all(i + 1 == len(ran) or ran[i + 1][0] != "bound" for i in gens)
    assert not (work / "generated.json").exists()
