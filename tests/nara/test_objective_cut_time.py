"""The objective cut of formulation "offline" (a relaxation computed while the model is built)
gets at most half of what is left of ``dmlopt.solve``'s time limit, and its own 30 s without
one: a solve with a short limit must not spend 30 s before the solver starts."""

from __future__ import annotations

import pytest

import dmlopt
from dmlopt import solvers
from dmlopt.models.nara import bounds as nb
from dmlopt.models.nara import formulations as F


@pytest.fixture
def asked(monkeypatch) -> list[float]:
    seen: list[float] = []
    real = nb.schedule_bound

    def spy(instance, *, time_limit=None, **kw):
        seen.append(time_limit)
        return real(instance, time_limit=time_limit, **kw)

    monkeypatch.setattr(nb, "schedule_bound", spy)
    return seen


def _episode():
    return dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 6}, seed=1)


def test_the_cut_gets_half_the_time_left(asked):
    # catches a build that ignores solve's time limit (the cut would ask for its 30 s)
    res = dmlopt.solve(_episode(), "highs", formulation="offline", threads=1, time_limit=4)
    assert res.status in ("optimal", "time_limit", "feasible")
    assert len(asked) == 1 and 0 < asked[0] <= 2.0


def test_without_a_time_limit_the_cut_keeps_its_own(asked):
    # catches a cap applied where no limit was asked (the cut would be weakened for nothing)
    dmlopt.solve(_episode(), "highs", formulation="offline", threads=1)
    assert asked == [F.CUT_SECONDS]


def test_build_seconds_outside_a_solve_is_the_cap():
    assert solvers.build_seconds(30.0) == 30.0
    import time

    with solvers.build_deadline(time.perf_counter() + 10):
        assert 4.0 < solvers.build_seconds(30.0) <= 5.0
        assert solvers.build_seconds(1.0) == 1.0
    with solvers.build_deadline(time.perf_counter() - 1):
        assert solvers.build_seconds(30.0) == 0.01
    assert solvers.build_seconds(30.0) == 30.0
