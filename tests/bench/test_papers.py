"""A paper is its own module (:mod:`dmlopt.benchmarks.papers`): the toy problem added as a full
paper by the steps of docs/architecture.md "Adding a problem" (tests/helpers/toy_paper.py and
its suite; the ``dmlopt.papers`` entry point simulated as the ``toy`` fixture simulates the
problem's) gets a ``dmlopt reproduce`` table and growth table, reference-library entries and
groups in the ``quick`` suite, and no shared harness file names it."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

import dmlopt
from dmlopt import cli
from dmlopt.benchmarks import library, papers, reproduce, runner, suite
from dmlopt.errors import DmloptError
from tests.helpers import toy_problem

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def toy_paper(toy, monkeypatch):
    """The toy problem registered (``toy``) and its paper too (the entry point's mapping), here
    and in the runner's helper processes (tests/helpers/toy_child.py)."""
    monkeypatch.setitem(papers._MODULES, "toy", "tests.helpers.toy_paper")
    popen = runner.subprocess.Popen

    def helper(argv, **kw):
        if argv[1:] == ["-m", "dmlopt.benchmarks.child"]:
            argv = [argv[0], "-m", "tests.helpers.toy_child"]
            kw["env"] = {**kw["env"], "PYTHONPATH": str(ROOT)}
        return popen(argv, **kw)

    monkeypatch.setattr(runner.subprocess, "Popen", helper)
    return papers.get("toy")


def _greedy_by_hand(inst) -> float:
    """Greedy written again without the toy module's heuristic: best cost per weight first
    until the weight is covered."""
    order = sorted(range(len(inst.cost)), key=lambda i: inst.cost[i] / inst.weight[i])
    cost = weight = 0.0
    for i in order:
        if weight >= inst.need:
            break
        cost, weight = cost + inst.cost[i], weight + inst.weight[i]
    return cost


def test_the_toy_paper_is_listed_by_the_command_line(toy_paper):
    """A hard-coded paper list (the harness before papers were modules) lists no toy."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["reproduce", "--list", "toy", "--json"]) == 0
    [entry] = json.loads(out.getvalue())
    assert entry["paper"] == "toy" and entry["title"] == "paper 999: Minimum-cost cover (test only)"
    assert [t["name"] for t in entry["tables"]] == ["cover", "growth"]
    assert entry["runs"] == 6  # 3 instances x (1 exact + 1 greedy), counted from the suite
    assert papers.names()[-1] == "toy"  # paper-number order: 999 after 000-004


def test_reproduce_renders_the_toy_tables(toy_paper, tmp_path):
    """``dmlopt reproduce toy --quick`` runs the paper's suite and renders its table from the
    store: the optimum column equals a brute force of every instance and the greedy column a
    greedy written again here (a renderer fed other runs, or none, fails); the growth table
    measures every toy heuristic."""
    written = reproduce.run("toy", quick=True, workers=1, outdir=tmp_path)
    here = tmp_path / "toy-quick"
    assert {p.name for p in written} == {"cover.md", "growth.md", "README.md"}
    text = (here / "cover.md").read_text()
    assert "dmlopt reproduce toy cover --quick" in text
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
             if line.startswith("| random")]
    found = {c[0]: c[1:] for c in cells}
    assert len(found) == 3
    for seed in range(3):
        inst = dmlopt.generate("toy", {"generator": "random", "n": 8}, seed=seed)
        optimum, greedy = found[f"random(n=8)#{seed}"]
        assert float(optimum) == toy_problem.brute_force(inst)
        assert float(greedy) == _greedy_by_hand(inst)
    growth = (here / "growth.md").read_text()
    assert all(f"| `{h}` |" in growth for h in ("all", "nothing", "greedy"))
    assert "# paper 999: Minimum-cost cover (test only) (quick run)" in \
        (here / "README.md").read_text()


def test_library_builds_the_toy_entries(toy_paper, tmp_path):
    """The library builder takes the toy paper's specs (command line and API); each record's
    objective is the brute-force optimum."""
    assert library.main(["toy", "--root", str(tmp_path)]) == 0
    recs = json.loads((tmp_path / "toy" / "references.json").read_text())
    assert [r["id"] for r in recs] == ["random-n8-s0", "random-n8-s1"]
    for seed, rec in enumerate(recs):
        inst = dmlopt.generate("toy", {"generator": "random", "n": 8}, seed=seed)
        assert rec["status"] == "optimal"
        assert rec["objective"] == toy_problem.brute_force(inst)


def test_the_quick_suite_holds_the_toy_group(toy_paper, monkeypatch):
    """The shipped ``quick`` suite takes every paper's groups: the toy's 2 runs join, and
    without the toy paper they are gone (a quick suite listing its groups by hand has none)."""
    with_toy = suite.load("quick")
    toy_tasks = [t for t in with_toy.tasks if t.problem == "toy"]
    assert len(toy_tasks) == 2
    assert {t.method for t in toy_tasks} == {"highs:paper", "greedy"}
    monkeypatch.delitem(papers._MODULES, "toy")
    without = suite.load("quick")
    assert len(without.tasks) == len(with_toy.tasks) - 2
    assert not any(t.problem == "toy" for t in without.tasks)


def test_no_shared_harness_file_names_the_toy():
    """Adding the toy paper edited no shared file: nothing under benchmarks/ (code, suites) or
    pyproject.toml names it."""
    files = [p for p in (ROOT / "benchmarks").rglob("*") if p.suffix in (".py", ".toml")]
    assert files
    named = [p for p in files if re.search(r"\btoy\b", p.read_text())]
    assert named == []
    assert not re.search(r"\btoy\b", (ROOT / "pyproject.toml").read_text())


def test_a_paper_module_must_declare_its_paper(monkeypatch):
    """A registered module without ``PAPER``, or declaring another key, is refused by name."""
    monkeypatch.setitem(papers._MODULES, "nopaper", "tests.helpers.toy_problem")
    with pytest.raises(DmloptError, match="tests.helpers.toy_problem declares no PAPER"):
        papers.all_papers()
    monkeypatch.setitem(papers._MODULES, "nopaper", "dmlopt.benchmarks.papers.rar")
    with pytest.raises(DmloptError, match="declares paper 'rar'"):
        papers.all_papers()
