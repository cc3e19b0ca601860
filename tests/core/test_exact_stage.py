"""``dmlopt.solve`` with a problem's exact method: after the method's share of the time limit,
the MIP stage is skipped when the time left could not even build its model; without a time
limit, or with time enough, it runs."""

from __future__ import annotations

import pytest

import dmlopt
from dmlopt import api, exact
from dmlopt.contract import BoundValue

LOOSE = 9.0  # an upper bound on accepted requests well above what the episode can reach


@pytest.fixture
def stages(monkeypatch) -> list[str]:
    """The exact method returns an unproven bound at once; the MIP stage is recorded, not run."""
    seen: list[str] = []

    def method(function, instance, **kw):
        return BoundValue(bound=LOOSE, solution=None, metrics={"sets": 1.0})

    def mip(problem, instance, **kw):
        seen.append(kw["formulation"])
        raise RuntimeError("stage ran")

    monkeypatch.setattr(exact, "_interruptible", method)
    monkeypatch.setattr(api, "_solve_mip", mip)
    return seen


def _episode():
    return dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 6}, seed=2)


def test_no_time_to_build_skips_the_mip_stage(stages, monkeypatch):
    # catches a solve that starts a model it cannot build in the time left (it overran a short
    # --time-limit by the build) and one that drops the exact method's bound when it stops
    monkeypatch.setattr(exact, "BUILD_SECONDS_PER_ROW", 1e3)
    res = dmlopt.solve(_episode(), threads=1, time_limit=5)
    assert stages == []
    assert res.status == "time_limit" and res.bound == LOOSE and res.objective is None
    assert "not started" in res.message and res.metrics["sets_acceptance-sets"] == 1.0


@pytest.mark.parametrize("time_limit", [5, None])
def test_time_enough_runs_the_mip_stage(stages, monkeypatch, time_limit):
    # catches a skip that ignores the estimate, or that fires without any time limit
    monkeypatch.setattr(exact, "BUILD_SECONDS_PER_ROW", 0.0 if time_limit else 1e3)
    with pytest.raises(RuntimeError, match="stage ran"):
        dmlopt.solve(_episode(), threads=1, time_limit=time_limit)
    assert stages == ["offline"]


def test_the_estimate_grows_with_the_model():
    small, big = (dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                           "n_requests": n}, seed=0) for n in (8, 32))
    problem = dmlopt.registry.of(small)
    import functools

    mip = functools.partial(api._solve_mip, formulation="offline")
    assert 0 < api._build_estimate(problem, small, mip) < api._build_estimate(problem, big, mip)
