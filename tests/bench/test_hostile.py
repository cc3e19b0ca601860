"""The hostile-input sweep (:mod:`benchmarks.studies.harness.hostile`): its rules catch each
kind of fault, it keeps a fault's inputs for a replay, and a short clean run reports none."""

from __future__ import annotations

import json
import os
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
                   "--problems", "tabgp", "--kinds", *H.CLI_KINDS]) == 1
    rows = [json.loads(x) for x in (tmp_path / "bad" / "faults.jsonl").read_text().splitlines()]
    assert rows and all(r["fault"].startswith("exit 1") for r in rows)
    named = [a for r in rows for a in r["argv"] if a.endswith(".json")]
    assert named and all("faults" in a and (tmp_path / "bad" / "faults").exists() for a in named)
    for a in named:
        assert json.loads(Path(a).read_text()) is not None
    monkeypatch.setattr(cli, "main", real)
    assert H.main(["-o", str(tmp_path / "good"), "--rounds", "4", "--seeds", "4-4",
                   "--problems", "tabgp", "tap", "--kinds", *H.CLI_KINDS]) == 0


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
                   "--problems", "tabgp", "--kinds", *H.CLI_KINDS]) == 0
    gens = [i for i, c in enumerate(ran) if c[0] == "generate"]
    assert gens, "no generator round drawn"
    assert all(i + 1 == len(ran) or ran[i + 1][0] != "bound" for i in gens)
    assert not (work / "generated.json").exists()


# --- the kinds of issue 51 (benchmarks/studies/harness/hostile_{run,files,model}.py) ---

from benchmarks.studies.harness import hostile_files as HF  # noqa: E402
from benchmarks.studies.harness import hostile_model as HM  # noqa: E402
from benchmarks.studies.harness import hostile_run as HR  # noqa: E402


def test_a_write_outside_the_destination_is_detected(tmp_path):
    """A real command told to write outside the destination (into the sandbox's victim folder,
    through a link to the victim file) is reported; the same command writing into the
    destination is not."""
    box, dest, cwd = HF.sandbox(tmp_path)
    dest.mkdir()
    out = box / "outside" / "dir" / "new.json"
    gen = ["generate", "tabgp", "-g", "er", "-p", "n=6", "-o"]
    o = HR.run_case(HR.Case(gen + [str(out)], HF.boundary, cwd=cwd, watch=box, dest=dest),
                    60, 2 * 2**30)
    assert o.code == 0 and out.exists()
    assert HF.boundary(o).startswith("wrote outside") and "outside/dir/new.json" in o.outside[0]
    os.symlink(box / "outside" / "victim.txt", dest / "link.json")
    o = HR.run_case(HR.Case(gen + [str(dest / "link.json")], HF.boundary, cwd=cwd, watch=box,
                            dest=dest), 60, 2 * 2**30)
    if (box / "outside" / "victim.txt").read_text() != "victim\n":
        assert "modified outside/victim.txt" in o.outside
    else:
        assert not o.outside
    o = HR.run_case(HR.Case(gen + [str(dest / "in.json")], HF.boundary, cwd=cwd, watch=box,
                            dest=dest), 60, 2 * 2**30)
    assert o.code == 0 and not o.outside and HF.boundary(o) == ""


def test_snapshot_changes_and_reset(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("a")
    (tmp_path / "dest").mkdir()
    before = HR.snapshot(tmp_path)
    (tmp_path / "d" / "f").write_text("abc")
    (tmp_path / "new").write_text("")
    (tmp_path / "dest" / "mine").write_text("")
    os.symlink("/nowhere", tmp_path / "d" / "l")
    got = HR.changes(before, HR.snapshot(tmp_path), "dest")
    assert got == ["created d/l", "modified d/f", "created new"] or sorted(got) == sorted(
        ["created d/l", "modified d/f", "created new"])
    os.chmod(tmp_path / "d", 0o555)
    HR.reset(tmp_path / "d")
    assert list((tmp_path / "d").iterdir()) == []


def test_the_report_rules(tmp_path):
    """A negative gap and a table row broken by an unescaped '|' are faults; escaped is fine."""
    ok = HR.Outcome(0, "", "", 1.0)
    (tmp_path / "r.md").write_text("| a | gap |\n|---|---|\n| x\\|y | 3.0 % |\n")
    assert HF._report_check(ok, tmp_path) == ""
    (tmp_path / "r.md").write_text("| a | gap |\n|---|---|\n| x|y | 3.0 % |\n")
    assert "breaks the Markdown table" in HF._report_check(ok, tmp_path)
    (tmp_path / "r.md").write_text("| a | gap |\n|---|---|\n| x | -25.0 % |\n")
    assert "negative gap" in HF._report_check(ok, tmp_path)
    assert HF.boundary(HR.Outcome(1, "", "dmlopt: internal error: X\n", 1.0)).startswith("exit 1")
    assert HF.boundary(HR.Outcome(3, "", "", 1.0), (0, 2, 3)) == ""
    assert HF.boundary(HR.Outcome(3, "", "", 1.0)).startswith("exit 3")


def test_the_solution_file_edits(tmp_path):
    """Each edit of a HiGHS raw file does what it says, checked on the text (the columns of a
    TABGP model read back independently of the edit)."""
    text, cols = HM.highs_solution(HM._instance(tmp_path / "i.json", 6, 1), tmp_path)
    rng = random.Random(0)

    def values(t):   # the columns block: up to the first blank or comment line
        out = {}
        for ln in t.split("# Columns", 1)[1].splitlines()[1:]:
            if not ln.strip() or ln.startswith("#"):
                break
            out[ln.split()[0]] = ln.split()[1]
        return out

    base = values(text)
    assert set(base) == set(cols)
    assert len(values(HM.mutate_solution(text, "extra", rng))) == len(cols) + 1
    assert len(values(HM.mutate_solution(text, "missing", rng))) == len(cols) - 1
    assert "0.5" in values(HM.mutate_solution(text, "half", rng)).values() or any(
        v in ("0.4999", "0.3") for v in values(HM.mutate_solution(text, "half", rng)).values())
    for how, want in (("two", 1), ("none", 0)):
        v = values(HM.mutate_solution(text, how, rng))
        per = {}
        for name, val in v.items():
            if name.startswith("x("):
                a, _, t = name[2:-1].split("_")
                per.setdefault((a, t), []).append(float(val))
        sums = [sum(x) for x in per.values()]
        assert (max(sums) >= 2) if want else (min(sums) == 0)
    assert "Objective " in HM.mutate_solution(text, "space", rng).replace("Objective_", "")
    assert HM.mutate_solution(text, "objective", rng) != text


@pytest.mark.parametrize("kind", ["solfile", "clash", "env", "store"])
def test_each_kind_runs_and_logs_its_faults(tmp_path, kind):
    """Two rounds of a kind run, count their commands and log each fault with its command."""
    code = H.main(["-o", str(tmp_path), "--rounds", "2", "--seeds", "0-0", "--kinds", kind])
    log = (tmp_path / "log.txt").read_text()
    assert f"{kind} " in log.splitlines()[-1]
    rows = [json.loads(x) for x in (tmp_path / "faults.jsonl").read_text().splitlines()]
    assert code == (1 if rows else 0)
    assert all(r["kind"] == kind and r["argv"] and r["fault"] for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("kind,seed", [("writes", 1), ("limits", 0), ("interrupt", 0)])
def test_each_slow_kind_runs_and_logs_its_faults(tmp_path, kind, seed):
    """As above; the seed of ``writes`` draws a ``references --export`` and a file output (seed
    0 draws ``reproduce``, which first runs a quick table for its cache: 30 s and more)."""
    code = H.main(["-o", str(tmp_path), "--rounds", "2", "--seeds", f"{seed}-{seed}", "--kinds",
                   kind])
    rows = [json.loads(x) for x in (tmp_path / "faults.jsonl").read_text().splitlines()]
    assert code == (1 if rows else 0)
    assert f"{kind} " in (tmp_path / "log.txt").read_text().splitlines()[-1]


def test_the_plain_format_keeps_columns_and_objective(tmp_path):
    """The plain ``name value`` rewrite keeps every nonzero column and the stated objective."""
    text, cols = HM.highs_solution(HM._instance(tmp_path / "i.json", 6, 2), tmp_path)
    for seed in range(4):
        plain = HM.to_plain(text, random.Random(seed))
        lines = plain.splitlines()
        assert lines[0].startswith("# Objective value = ")
        obj = [ln.split()[1] for ln in text.splitlines() if ln.startswith("Objective ")][0]
        assert lines[0].endswith(obj)
        got = dict(ln.split() for ln in lines[1:])
        raw = {}
        for ln in text.split("# Columns", 1)[1].splitlines()[1:]:
            if not ln.strip() or ln.startswith("#"):
                break
            raw[ln.split()[0]] = ln.split()[1]
        assert len(raw) == len(cols)
        assert {k: v for k, v in raw.items() if float(v) != 0} == {
            k: v for k, v in got.items() if float(v) != 0}


def test_the_interrupt_rules(tmp_path):
    """Ctrl-C not seen, output on stdout and an exit 1 are faults of the first run; a re-run
    refused after a real interruption is a fault, after a finished first run it is not."""
    first, again = HF.draw_interrupt(tmp_path, random.Random(0))
    assert first.sigint_after and again.sigint_after is None
    late = first.sigint_after + 5
    assert first.check(HR.Outcome(0, "", "", late)).startswith("exit 0 after a Ctrl-C")
    assert "stdout" in first.check(HR.Outcome(130, "ERROR: Constructing component 'x'", "", 1))
    assert first.check(HR.Outcome(1, "", "dmlopt: internal error: X\n", 1)).startswith("exit 1")
    assert first.check(HR.Outcome("crash: ended by signal SIGINT", "", "", 1)) == ""
    refused = HR.Outcome(2, "", "dmlopt: --export: not empty\n", 1)
    assert "refused" in again.check(refused)
    assert first.check(HR.Outcome(0, "", "", 0.01)) == ""   # finished before the Ctrl-C
    assert again.check(refused) == ""
    first, again = HF.draw_interrupt(tmp_path, random.Random(0))
    first.dest.mkdir(parents=True, exist_ok=True)
    (first.dest / "references.solu").write_text("")   # finished, then the Ctrl-C at exit
    assert first.check(HR.Outcome("crash: ended by signal SIGINT", "wrote 16 models\n", "", 3)
                       ) == ""
    assert again.check(refused) == ""


def test_the_limits_rule(tmp_path, monkeypatch):
    """The method's own seconds past the limit, or a wall time past the limit plus start-up and
    reading (scaled by the machine's load now), is a fault; a refusal (exit 2) never is."""
    cases = []
    rng = random.Random(1)
    monkeypatch.setattr(HM, "startup", lambda: 0.5)   # as fast as at the sweep's start
    while not cases or cases[0].argv[0] != "bound":
        cases = HM.draw_limits(tmp_path, rng, start=0.5)
    c = cases[0]
    assert c.argv[c.argv.index("--time-limit") + 1] == "2" and c.argv[-1] == "--json"
    ok = '{"seconds": 2.1, "bound": 1}'
    assert c.check(HR.Outcome(0, ok, "", 3.0)) == ""
    assert c.check(HR.Outcome(0, ok, "", 60.0)).startswith("ran 60.0 s on a 2 s limit")
    assert c.check(HR.Outcome(0, '{"seconds": 9}', "", 3.0)).startswith(
        "its own seconds 9.0 on a 2 s limit")
    assert c.check(HR.Outcome(0, "", "", 3.0)).startswith("no JSON result")
    assert c.check(HR.Outcome(2, "", "dmlopt: too large\n", 60.0)) == ""
    # a fresh start 4 times slower now: start-up and reading count 4 times
    allowed = float(c.check(HR.Outcome(0, ok, "", 1e3)).split("(allowed ")[1].split(" s")[0])
    assert c.check(HR.Outcome(0, ok, "", allowed + 0.2)).startswith("ran ")
    monkeypatch.setattr(HM, "startup", lambda: 2.0)
    rng, cases = random.Random(1), []
    while not cases or cases[0].argv[0] != "bound":
        cases = HM.draw_limits(tmp_path, rng, start=0.5)
    assert "x4.0 for the machine's load" in cases[0].check(HR.Outcome(0, ok, "", 1e3))
    assert cases[0].check(HR.Outcome(0, ok, "", allowed + 0.2)) == ""
