"""The ``growth`` tables (:mod:`dmlopt.benchmarks.tables.scale`): the mechanics (a quick series
measured, stored, resumed without running again, rendered in the registry's order with the two
estimate / measured columns, ratios outside [1, 4] flagged), on one cheap heuristic and on
fabricated measurements.

No test here compares a size estimate with measured CPU time (issue 51, item 7: no unit test
asserts a CPU time): the growth table of every paper (``dmlopt reproduce PAPER growth``) shows
"memory estimate / measured" (tracemalloc peak) and "work estimate / measured" (CPU seconds x
1e9) for every heuristic at default options, flagged (!) outside [1, 4]; the claims once timed
here live there: the rar rdda memory estimate (once 4-11x too high), the shared inc_oxc estimate
(wcg memory once 140x), Nara's per-request overhead (netfit-probe work once 0.03x), the TAP
local search charged m swaps per descent (8x), abm-ls's fixed cost per restart (1/57), and rts
and faq-2opt with a CPU-clock budget. memetic, left out of the growth series, keeps its memory
check below."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from dmlopt.benchmarks.tables import scale as S


@pytest.fixture()
def tiny(monkeypatch):
    plan = dataclasses.replace(S.plan_of("rar"), quick_sizes=(25, 63), quick_cap=2.0)
    monkeypatch.setattr(S, "plan_of", {"rar": plan}.__getitem__)


def test_resumes_from_its_store_and_flags_ratios_outside(tiny, tmp_path, monkeypatch):
    """A first run measures and stores both sizes of the series; a second run reads the store
    instead of running again (a heuristic that would now fail is never called); the table has
    one row per heuristic with both estimate / measured columns; a ratio outside [1, 4]
    (fabricated measurements) is flagged in the rendered table."""
    out = tmp_path / "rar-quick"
    first = S.measure("rar", out, True, ["rdda"])
    assert set(first["rdda"]["runs"]) == {"25", "63"} and not first["rdda"].get("error")
    assert all(r["seconds"] > 0 for r in first["rdda"]["runs"].values())
    shown = copy.deepcopy(first)
    S.estimates("rar", shown)
    assert all(r["memory_est"] > 0 and r["work_est"] > 0 for r in shown["rdda"]["runs"].values())
    text = S.render_data("rar", shown, True)
    assert "| memory estimate / measured | work estimate / measured |" in text
    assert text.count("\n| `") == 1
    from dmlopt.registry import get

    heur = get("rar").heuristics

    def boom(*a, **k):
        raise AssertionError("ran again")

    monkeypatch.setitem(heur, "rdda", dataclasses.replace(heur["rdda"], function=boom))
    again = S.measure("rar", out, True, ["rdda"])
    assert again == first
    fake = {"h": {"runs": {"63": {"seconds": 1.0, "peak": 2.0**21, "memory_est": 2.0**24,
                                  "work_est": 2e9},
                           "125": {"seconds": 2.0, "peak": 2.0**22, "memory_est": 2.0**21,
                                   "work_est": 4e9}}}}
    assert S.ratios(fake["h"]) == ((125, 0.5), (125, 2.0))
    text = S.render_data("rar", fake, True)
    assert "0.5 at 125 (!)" in text and "| 1.01 |" in text   # b = ln 2 / ln(125 / 63)


def test_a_wall_clock_budget_is_measured_in_cpu_seconds(monkeypatch, tmp_path):
    """A heuristic whose default time budget is wall-clock seconds (rts) runs with
    ``clock="cpu"`` in the growth table: on a loaded machine a wall-clock budget gets fewer CPU
    seconds than it lasts, and the work estimate (the budget's CPU seconds) then looked 5x too
    high. Other options stay at their defaults."""
    from dmlopt.registry import get

    real = get("tap").heuristics["rts"]
    seen: list[dict] = []

    def record(inst, seed=0, **opts):
        seen.append(opts)

    monkeypatch.setitem(get("tap").heuristics, "rts", dataclasses.replace(real, function=record))
    plan = dataclasses.replace(S.plan_of("tap"), quick_sizes=(8,), quick_cap=2.0)
    monkeypatch.setattr(S, "plan_of", lambda paper: plan)
    S.measure("tap", tmp_path / "tap-quick", True, ["rts"])
    default = real.Options().model_dump()
    assert default["clock"] == "wall" and seen
    for opts in seen:
        assert opts == {**default, "clock": "cpu"}


def test_rows_follow_the_registry_whether_fresh_or_resumed():
    """The store is written with sorted keys, so a resumed run reads its heuristics in
    alphabetical order; the table lists them in the registry's order either way (a heuristic
    the registry no longer has goes last)."""
    from dmlopt.registry import get

    names = list(get("tabgp").heuristics)
    run = {"runs": {"125": {"seconds": 0.5}, "250": {"seconds": 1.0}}}
    data = {name: run for name in sorted(names + ["zz-gone", "aa-gone"])}
    rows = [line.split("|")[1].strip().strip("`") for line in
            S.render_data("tabgp", data, True).splitlines() if line.startswith("| `")]
    assert rows == names + ["aa-gone", "zz-gone"]
    assert sorted(names) != names   # alphabetical order would fail the first assertion


@pytest.mark.parametrize("spec,opts", [
    ({"generator": "drift", "n": 128, "m": 640, "tau": 10, "l": 16},
     {"population": 2, "generations": 2, "rounds": 5}),
    ({"generator": "er", "n": 300, "p": 0.05, "tau": 3, "l": 6},
     {"population": 2, "generations": 1, "rounds": 10}),
])
def test_memetic_estimate_covers_a_small_run(spec, opts):
    """memetic is left out of the growth series (minutes by design), so its memory estimate is
    checked here on small options: [1, 4] x the traced peak (er n = 300 runs the pair path
    moves, the largest arrays). Its work estimate is not timed (issue 51, item 7)."""
    import tracemalloc

    import dmlopt
    from dmlopt.registry import get

    inst = dmlopt.generate("tabgp", spec, seed=0)
    entry = get("tabgp").heuristics["memetic"]
    entry.function(inst, seed=0, population=2, generations=0, rounds=0)   # warm-up
    # the instance's cached arrays and what a first generation and round allocate once, outside
    # the trace: one generation of one round does it (est / peak as after a run at ``opts``:
    # 2.114 against 2.116 on drift, 1.542 on er; the warm-up above alone leaves them traced)
    entry.function(inst, seed=0, population=2, generations=1, rounds=1)
    tracemalloc.start()
    try:
        entry.function(inst, seed=0, **opts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    est = entry.estimate(inst, entry.Options(**opts))
    assert 1 <= est.memory / peak <= 4, (est.memory, peak)
    assert est.work > 0
