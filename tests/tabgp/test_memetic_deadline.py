"""Limits that hold at every size (issue 51, item 3), TABGP's ``memetic``: once the limit has
passed no further member is built (the first always is), so a large instance stops after one
member rather than the whole population (the mechanism, counted, not a wall-clock figure)."""

from __future__ import annotations

import dmlopt
from dmlopt.heuristics import tabgp as H


def test_no_member_after_the_limit(monkeypatch):
    """A limit shorter than one member: one construction runs, and the answer is feasible;
    without a limit every member of the population is built."""
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 12, "p": 0.5, "tau": 2, "l": 3},
                           seed=4)
    built = []
    for name, fn in list(H._CONSTRUCTIONS.items()):
        monkeypatch.setitem(H._CONSTRUCTIONS, name,
                            lambda *a, _fn=fn, _name=name, **k: built.append(_name) or _fn(*a, **k))
    sol = H.memetic(inst, seed=1, population=4, generations=2, rounds=2, time_limit=1e-9)
    assert len(built) == 1
    assert dmlopt.evaluate(inst, sol).feasible
    built.clear()
    H.memetic(inst, seed=1, population=4, generations=2, rounds=2)
    assert len(built) == 4
