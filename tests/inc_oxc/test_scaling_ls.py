"""INC/OXC wcg-ls: the move table decoded on demand gives the old move order; the clock is
read before any quadratic setup.

golden/scaling_ls.json holds the results of the previous local search (it built the list of
every move, O(workers^2) tuples, before its first clock check), computed once by that code on
the cases below: its score and final placement.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.inc_oxc import search
from dmlopt.heuristics.inc_oxc.placement import (
    _BIG_NEIGHBOURHOOD,
    _place_ps,
    _State,
    _workers_balanced,
)


def _golden() -> dict:
    return json.loads((Path(__file__).parent / "golden" / "scaling_ls.json").read_text())


def _placement(inst):
    st = _State(inst)
    wrack = _workers_balanced(inst, st, np.random.default_rng(0))
    ps_rack, server = _place_ps(inst, st, wrack)
    return wrack, ps_rack, server


CASES = [
    ({"racks": 4}, 1, 50), ({"racks": 32}, 1, 1), ({"racks": 6}, 2, 50),
    ({"racks": 8, "inc": False}, 0, 50), ({"racks": 8, "workers": [1, 3]}, 4, 50),
    ({"racks": 16, "workers": [16, 64]}, 3, 2),
]


@pytest.mark.parametrize(("spec", "seed", "rounds"), CASES)
def test_local_search_identical_to_the_move_list(spec, seed, rounds):
    """Same seed, same moves tried in the same order, same placement and score as the old
    search (golden; the move types split into :class:`search._Descent` methods must not change a
    single decision: a swapped restore, a missed resource update or a skipped move changes
    the final placement). 32 racks: more than _BIG_NEIGHBOURHOOD moves, so the critical
    jobs' moves come first; the search moves at least once on every case."""
    inst = dmlopt.generate("inc_oxc", {"generator": "large", **spec}, seed=seed)
    w0, p0, s0 = _placement(inst)
    if spec["racks"] == 32:
        assert search._Moves(inst).size > _BIG_NEIGHBOURHOOD
    w, p, s = w0.copy(), p0.copy(), s0.copy()
    best = search._local_search(inst, w, p, s, np.random.default_rng(3), 1e6, rounds)
    want = _golden()[str(CASES.index((spec, seed, rounds)))]
    assert list(best) == want["best"]
    assert w.tolist() == want["wrack"] and p.tolist() == want["ps_rack"]
    assert s.tolist() == want["server"]
    x1 = (w, p, s)
    start = (w0, p0, s0)
    assert not all(np.array_equal(u, v) for u, v in zip(x1, start, strict=True))


def test_move_table_matches_the_move_list():
    inst = dmlopt.generate("inc_oxc", {"generator": "large", "racks": 8}, seed=0)
    R, J = inst.n_racks, len(inst.jobs)
    job_of = inst.arrays["job_of"]
    W = job_of.size
    moves = [("w", n, k) for n in range(W) for k in range(R)]
    moves += [("p", i, k, sv) for i in range(J) for k in range(R) for sv in (0.0, 1.0)]
    moves += [("x", n, q) for n in range(W) for q in range(n + 1, W) if job_of[n] != job_of[q]]
    moves += [("s", i, i2) for i in range(J) for i2 in range(i + 1, J)]
    moves += [("g", i, k) for i in range(J) for k in range(R)]
    table = search._Moves(inst)
    assert table.size == len(moves)
    assert [table.move(i) for i in range(table.size)] == moves
    crit = np.random.default_rng(0).random(J) < 0.3
    hot = [crit[job_of[m[1]]] if m[0] in "wx" else crit[m[1]] for m in moves]
    hot = [h or (crit[job_of[m[2]]] if m[0] == "x" else crit[m[2]]) if m[0] in "xs" else h
           for h, m in zip(hot, moves, strict=True)]
    assert table.hot(crit).tolist() == hot


def test_wcg_ls_returns_within_its_time_limit():
    """wcg-ls with time_limit t takes at most wcg's time + t + 0.75 s (one move's scoring and
    the final circuits) at 128 racks, where the move list has ~ 10^5 entries."""
    inst = dmlopt.generate("inc_oxc", {"generator": "large", "racks": 128}, seed=0)
    t0 = time.perf_counter()
    dmlopt.heuristic(inst, "wcg", seed=0)
    t_wcg = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = dmlopt.heuristic(inst, "wcg-ls", seed=0, time_limit=0.2)
    t_ls = time.perf_counter() - t0
    assert res.feasible
    assert t_ls <= t_wcg + 0.2 + 0.75 + 0.5 * t_wcg      # loaded machines: slack with wcg
