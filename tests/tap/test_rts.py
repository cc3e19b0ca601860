"""``rts`` search layer: restarts, elite pool, structured instances (chr-like trees,
els/esc-like sparse flows) against brute force written here.

Runs are bounded by iteration budgets with the clock off (``time_limit=0``): deterministic, no
dependence on the machine's speed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.tap import robust_tabu as rts
from tests.helpers import tap as helpers_tap


def qap_optimum(f: np.ndarray, d: np.ndarray) -> float:
    """min over permutations p of sum_ij F[i, j] D[p(i), p(j)] (numpy, every permutation)."""
    n = f.shape[0]
    perms = np.array(list(itertools.permutations(range(n))))
    best = math.inf
    for chunk in np.array_split(perms, max(1, len(perms) // 2000)):
        costs = (f[None, :, :] * d[chunk[:, :, None], chunk[:, None, :]]).sum(axis=(1, 2))
        best = min(best, float(costs.min()))
    return best


def test_better_handles_an_infinite_reference():
    """A fresh chain has reference cost inf: any finite phase result must improve on it (the
    tolerance of inf is NaN, which once made every restarted chain keep its random start)."""
    assert rts._better(5.0, math.inf)
    assert not rts._better(math.inf, math.inf)
    assert rts._better(1.0, 2.0) and not rts._better(2.0, 2.0)
    assert not rts._better(1e12 - 1e-6, 1e12)  # inside the relative tolerance


def test_restarted_chains_deliver_their_results(monkeypatch):
    """Every chain that ends offers a finite local optimum to the elite pool, no worse than the
    optimum, and the pool fills (restarts from random solutions, then crossovers)."""
    inst = helpers_tap.instance("tree", 8, 3)
    opt = qap_optimum(inst.traffic, inst.distance)
    offered: list[float] = []
    real = rts._offer

    def spy(pool, perm, cost, capacity):
        offered.append(cost)
        real(pool, perm, cost, capacity)

    monkeypatch.setattr(rts, "_offer", spy)
    _, out = rts.solve(inst, 0, rts.options(iterations=20_000, time_limit=0, stall=0.5,
                                            restart=2, population=3))
    assert out.restarts >= 5 and len(offered) == out.restarts
    assert all(math.isfinite(c) and c >= opt - 1e-9 for c in offered)
    assert out.cost == pytest.approx(opt)


@pytest.mark.parametrize("family, n, seed", [("tree", 8, 0), ("tree", 8, 1), ("sparse", 8, 2),
                                             ("sparse", 8, 3), ("cube", 8, 4)])
def test_rts_reaches_brute_force_optimum_on_structured_instances(family, n, seed):
    inst = helpers_tap.instance(family, n, seed)
    opt = qap_optimum(inst.traffic, inst.distance)
    res = dmlopt.heuristic(inst, "rts", seed=seed, iterations=4000, time_limit=0)
    assert res.status == "feasible", res.message
    assert res.objective == pytest.approx(opt)


def test_structured_generators_have_their_structure():
    rng = np.random.default_rng(0)
    f = helpers_tap.tree_flows(rng, 12)
    assert np.count_nonzero(np.triu(f)) == 11 and (f == f.T).all()  # a tree: n - 1 edges
    reach = np.eye(12, dtype=bool)
    for _ in range(12):
        reach = reach | ((reach.astype(int) @ (f > 0).astype(int)) > 0)
    assert reach.all()  # connected
    assert (helpers_tap.grid_distance(4) == [[0, 1, 1, 2], [1, 0, 2, 1], [1, 2, 0, 1],
                                             [2, 1, 1, 0]]).all()
    flows, dist = helpers_tap.cube_instance(rng, 3, 4)
    assert dist[0, 7] == 3 and np.count_nonzero(flows.any(axis=1)) <= 4


def test_chain_starts_adapt_to_what_wins():
    """Random starts until the pool is warm; then the kinds are drawn by their record, so a kind
    that keeps winning is drawn more often, and a kind that never wins is still drawn."""
    from dmlopt.heuristics.tap import search as ts

    qap = ts.padded(np.ones((6, 6)) - np.eye(6), np.ones((6, 6)) - np.eye(6), 1)
    rng = np.random.default_rng(0)
    starts = rts.Starts(3)
    pool = [(1.0, np.arange(6)), (2.0, np.arange(6)[::-1].copy())]
    for _ in range(5):  # pool of 2 < warm = 3: random starts only
        p = starts.start(qap, pool, rng, 2)
        assert sorted(p.tolist()) == list(range(6))
    assert starts.trials["random"][0] == 5 and starts.trials["crossover"][0] == 0
    starts.score(0.5)  # beats the pool's median 1.5: a win for the kind that started it
    assert starts.trials["random"][1] == 1
    starts.score(0.1)  # nothing pending: no credit
    assert starts.trials["random"][1] == 1
    pool.append((3.0, np.roll(np.arange(6), 1)))
    starts.trials = {"random": [50, 0], "crossover": [50, 49], "kick": [50, 0]}
    drawn = {k: 0 for k in rts.Starts.KINDS}
    for _ in range(600):
        before = {k: v[0] for k, v in starts.trials.items()}
        child = starts.start(qap, pool, rng, 2)
        assert sorted(child.tolist()) == list(range(6))
        kind = next(k for k in before if starts.trials[k][0] > before[k])
        drawn[kind] += 1
        starts.score(10.0)  # a loss: keeps the record about where it was
    assert drawn["crossover"] > 3 * max(drawn["random"], drawn["kick"])
    assert min(drawn.values()) > 0


def test_kick_levels_follow_their_record():
    """Levels are geometric between the bounds; a level that keeps improving the reference is
    drawn most, none is starved."""
    jumps = rts.Jumps(2, 40)
    assert jumps.levels[0] == 2 and jumps.levels[-1] == 40 and len(jumps.levels) == 5
    assert all(a < b for a, b in itertools.pairwise(jumps.levels))
    rng = np.random.default_rng(1)
    counts = dict.fromkeys(jumps.levels, 0)
    for _ in range(2000):
        level = jumps.draw(rng)
        counts[level] += 1
        jumps.score(level == jumps.levels[1])  # only the second level ever wins
    assert counts[jumps.levels[1]] > 0.5 * 2000
    assert min(counts.values()) > 0
    jumps.score(True)  # nothing drawn since the last score: no credit
    assert jumps.trials[:, 1].sum() == counts[jumps.levels[1]]
    assert rts.Jumps(2, 2).levels == [2]


@pytest.mark.parametrize("method", ["rts", "tabu", "faq-2opt"])
@pytest.mark.parametrize("value", [1e308, 86_401])
def test_time_limits_beyond_a_day_are_refused_by_name(method, value):
    # 1e308 used to reach an int conversion inside rts (OverflowError, CLI exit 1)
    inst = dmlopt.generate("tap", {"generator": "qaplib", "name": "nug12"}, seed=0)
    with pytest.raises(dmlopt.InstanceError, match="time_limit"):
        dmlopt.heuristic(inst, method, seed=0, time_limit=value)


def test_progress_lines_report_a_non_increasing_best(capsys):
    """``progress=0.1`` on a 0.6 s run: lines on stderr (elapsed of the budget, best, ...),
    the best never rising and never below the final objective; ``progress=0`` prints nothing."""
    inst = helpers_tap.instance("sparse", 40, 7)
    res = dmlopt.heuristic(inst, "rts", seed=0, time_limit=0.6, progress=0.1, clock="cpu")
    err = capsys.readouterr().err.splitlines()
    lines = [x for x in err if x.startswith("rts: ")]
    assert len(lines) >= 3, err
    assert all(" of 0.6 s, best " in x for x in lines)
    bests = [float(x.split("best ")[1].split(",")[0]) for x in lines]
    assert bests == sorted(bests, reverse=True)
    assert bests[-1] >= res.objective - 1e-6
    dmlopt.heuristic(inst, "rts", seed=0, time_limit=0.2, clock="cpu")
    assert capsys.readouterr().err == ""


def test_cli_shows_progress_only_on_a_terminal(tmp_path, capsys, monkeypatch):
    """`dmlopt heuristic` turns progress on (every 10 s) when stderr is a terminal and the
    heuristic has the option; piped, stderr stays empty; a bad value is exit 2 naming it."""
    from dmlopt import cli

    path = tmp_path / "i.json"
    inst = helpers_tap.instance("tree", 12, 3)
    path.write_text(inst.model_dump_json())
    seen: dict[str, object] = {}
    real = dmlopt.api.heuristic

    def spy(instance, name, **kw):
        seen.update(kw)
        return real(instance, name, **kw)

    monkeypatch.setattr(dmlopt.api, "heuristic", spy)
    argv = ["heuristic", str(path), "rts", "--option", "time_limit=0.1"]
    assert cli.main(argv) == 0 and "progress" not in seen
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(cli.sys.stderr, "isatty", lambda: True, raising=False)
    seen.clear()
    assert cli.main(argv) == 0 and seen["progress"] == cli.PROGRESS_SECONDS
    seen.clear()
    assert cli.main([*argv, "--option", "progress=0"]) == 0 and seen["progress"] == 0
    capsys.readouterr()
    assert cli.main([*argv, "--option", "progress=-1"]) == 2
    err = capsys.readouterr().err
    assert "progress" in err and err.count("\n") == 1


def _interrupt_on_call(monkeypatch, k: int) -> None:
    """Make the k-th kernel call raise KeyboardInterrupt (as Ctrl-C would, between chunks)."""
    real = rts.kern.run
    calls = {"n": 0}

    def run(*args):
        calls["n"] += 1
        if calls["n"] == k:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(rts.kern, "run", run)


def test_ctrl_c_keeps_the_best_solution_so_far(monkeypatch):
    """Ctrl-C in the 5th kernel call: ``rts`` raises Interrupted (a KeyboardInterrupt) with the
    best solution of the 4 phases before it, and the API adds that solution evaluated; its
    objective is the 4-phase run's best, found here by an iteration budget that ends there."""
    from dmlopt.errors import Interrupted
    from dmlopt.models.tap import evaluate

    inst = helpers_tap.instance("tree", 20, 11)
    counted = {"n": 0}
    real = rts.kern.run

    def count(*args):
        counted["n"] += 1
        return real(*args)

    monkeypatch.setattr(rts.kern, "run", count)
    base = rts.solve(inst, 0, rts.options(iterations=200_000, time_limit=0, restart=1000,
                                          stall=0.5))[1]
    assert base.phases > 5 and counted["n"] == base.phases  # one kernel call per phase
    _interrupt_on_call(monkeypatch, 5)
    with pytest.raises(Interrupted) as caught:
        dmlopt.heuristic(inst, "rts", seed=0, iterations=200_000, time_limit=0, restart=1000,
                         stall=0.5)
    exc = caught.value
    assert isinstance(exc, KeyboardInterrupt)
    res = exc.result
    assert res.status == "interrupted" and res.message.startswith("interrupted")
    assert res.objective == evaluate(inst, exc.solution).objective
    phases4 = rts.solve(inst, 0, rts.options(iterations=_iterations_of_phases(inst, 4),
                                             time_limit=0, restart=1000, stall=0.5))[1]
    assert res.objective == pytest.approx(phases4.cost)


def _iterations_of_phases(inst, k: int) -> int:
    """Iterations of the first k phases of the seed-0 run (one kernel call per phase here)."""
    total = {"it": 0, "calls": 0}
    real = rts.kern.run

    def run(*args):
        before = int(args[14][0])
        code = real(*args)
        total["calls"] += 1
        if total["calls"] <= k:
            total["it"] += int(args[14][0]) - before
        return code

    rts.kern.run, saved = run, rts.kern.run
    try:
        rts.solve(inst, 0, rts.options(iterations=200_000, time_limit=0, restart=1000,
                                       stall=0.5))
    finally:
        rts.kern.run = saved
    return total["it"]


def test_cli_ctrl_c_writes_the_best_so_far_and_exits_130(tmp_path, capsys, monkeypatch):
    from dmlopt import cli

    path = tmp_path / "i.json"
    path.write_text(helpers_tap.instance("tree", 20, 11).model_dump_json())
    out = tmp_path / "sol.json"
    _interrupt_on_call(monkeypatch, 5)
    code = cli.main(["heuristic", str(path), "rts", "-o", str(out), "--option",
                     "iterations=200000", "--option", "time_limit=0"])
    std = capsys.readouterr()
    assert code == 130
    assert std.err.count("\n") == 1 and "interrupted" in std.err and str(out) in std.err
    assert "objective" in std.out
    assert cli.main(["validate", str(path), "--solution", str(out)]) == 0
    printed = [x for x in std.out.splitlines() if x.startswith("objective")][0].split()[1]
    assert printed in capsys.readouterr().out


def test_tap_kernels_load_on_first_search_and_before_a_timed_benchmark_run():
    """Importing the TAP heuristics (as `dmlopt list`, `validate` and `solve` do) loads no numba
    (about a second); the first search does; the benchmark child imports the kernels before it
    starts a run's clock (``PRELOAD``)."""
    import subprocess
    import sys

    code = ("import sys, dmlopt.heuristics.tap as t; a = 'numba' in sys.modules; "
            "t.rts.__module__; from dmlopt.heuristics.tap import robust_tabu as r; r.kern; "
            "print(a, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]
    from dmlopt.benchmarks import child

    mods = child.preload_modules({"problem": "tap", "kind": "heuristic", "options": {}})
    assert {"dmlopt.heuristics.tap.kernel", "dmlopt.heuristics.tap.robust_tabu_kernel"} <= set(mods)
