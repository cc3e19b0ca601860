"""A heuristic of your own: the example of docs/benchmarks.md ("Your own heuristic") runs as
written, and a function that returns anything but its problem's Solution is refused with a line
naming the class expected, in Python and in the harness (progress line, closing summary)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import dmlopt
from dmlopt import registry
from dmlopt.benchmarks.run import failure_summary
from dmlopt.errors import DmloptError, InstanceError

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Your own heuristic"
EXPECTED = "not a dmlopt.models.tabgp.Solution"


def _example() -> dict[str, str]:
    """The section's fenced blocks by language: the function (python), the suite (toml) and the
    commands (the text block that holds ``dmlopt bench``)."""
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    assert SECTION in text, "docs/benchmarks.md has no 'Your own heuristic' section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    found: dict[str, str] = {}
    for lang, body in re.findall(r"```(\w+)\n(.*?)```", section, re.S):
        if lang == "text" and "dmlopt bench" not in body:
            continue  # the signature line
        found[lang] = body
    assert set(found) == {"python", "toml", "text"}, found.keys()
    return found


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return {**env, "DMLOPT_BENCH_ALLOW_IMPORT": "1", "PYTHONPATH": ""}


def _dmlopt(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dmlopt", *argv], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=300)


def test_docs_example_runs_as_written(tmp_path):
    blocks = _example()
    (tmp_path / "mine.py").write_text(blocks["python"])
    (tmp_path / "mine.toml").write_text(blocks["toml"])
    commands = [line.split(" #")[0].strip() for line in blocks["text"].splitlines()]
    commands = [c for c in commands if c]
    assert commands[0] == "export DMLOPT_BENCH_ALLOW_IMPORT=1"
    assert [c.split()[:2] for c in commands[1:]] == [["dmlopt", "bench"], ["dmlopt", "report"]]
    for line in commands[1:]:
        argv = shlex.split(line)[1:]
        if argv[0] == "bench":
            argv += ["--workers", "1"]  # the shared test machine (the last --workers wins)
        proc = _dmlopt(argv, tmp_path)
        assert proc.returncode == 0, f"`{line}` exited {proc.returncode}: {proc.stderr}"
        if argv[0] == "bench":
            assert proc.stdout.strip().splitlines()[-1] == "errors: none", proc.stdout
            assert ": error" not in proc.stderr
    report = (tmp_path / "results" / "mine-report" / "report.md").read_text()
    assert "mine:mine" in report and "random" in report


def _as_dict(instance, *, seed=0):
    return {"assignment": [[0] * instance.n] * len(instance.edges)}


def _as_none(instance, *, seed=0):
    return None


def _other_problems(instance, *, seed=0):
    from dmlopt.models.rar import Solution

    return Solution.model_construct()


@pytest.mark.parametrize(("function", "returned"), [
    (_as_dict, "dict"), (_as_none, "None"), (_other_problems, "dmlopt.models.rar.Solution")])
def test_wrong_return_type_is_refused_in_python(monkeypatch, function, returned):
    problem = registry.get("tabgp")
    monkeypatch.setitem(problem.heuristics, "mine", registry.as_heuristic(function, "mine"))
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 6, "p": 0.5, "tau": 2}, seed=0)
    with pytest.raises(InstanceError) as err:
        dmlopt.heuristic(inst, "mine", seed=0)
    assert isinstance(err.value, DmloptError)
    assert str(err.value).startswith(f"heuristic mine returned {returned}, {EXPECTED}")
    assert "\n" not in str(err.value)
    with pytest.raises(InstanceError, match=EXPECTED):  # a warm start runs the same check
        dmlopt.solve(inst, warm_start="mine", time_limit=10)


def test_wrong_return_type_in_the_harness(tmp_path):
    (tmp_path / "bad.py").write_text(
        "def as_dict(instance, *, seed=0):\n"
        "    return {'assignment': [[0] * instance.n] * len(instance.edges)}\n\n\n"
        "def as_none(instance, *, seed=0):\n"
        "    return None\n")
    (tmp_path / "bad.toml").write_text(
        'name = "bad"\n\n[[groups]]\nproblem = "tabgp"\n'
        'instances = [{ generator = "er", params = { n = 6, p = 0.5, tau = 2 }, seeds = [0] }]\n'
        'methods = [\n  { heuristic = "bad:as_dict", seeds = [0, 1] },\n'
        '  { heuristic = "bad:as_none" },\n  { heuristic = "random" },\n]\n')
    proc = _dmlopt(["bench", "bad.toml", "-o", "bad.sqlite", "--workers", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = {m: [ln for ln in proc.stderr.splitlines() if f" {m} seed=" in ln]
             for m in ("bad:as_dict", "bad:as_none", "random")}
    assert len(lines["bad:as_dict"]) == 2 and len(lines["bad:as_none"]) == 1
    for line in lines["bad:as_dict"]:
        assert ": error obj=- " in line
        assert f"heuristic bad:as_dict returned dict, {EXPECTED}" in line
    assert f"heuristic bad:as_none returned None, {EXPECTED}" in lines["bad:as_none"][0]
    assert ": feasible" in lines["random"][0]
    assert proc.stdout.strip().splitlines()[-1] == "errors: bad:as_dict 2, bad:as_none 1"


def test_failure_summary_counts_by_method():
    assert failure_summary(Counter()) == "errors: none"
    assert failure_summary(Counter({"wcg": 1, "mine": 3})) == "errors: mine 3, wcg 1"
    assert failure_summary(Counter({"b": 2, "a": 2}), Counter({"highs:paper": 1})) == \
        "errors: a 2, b 2; killed: highs:paper 1"
