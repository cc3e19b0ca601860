"""Tests of the INC/OXC bounds over shared resources (models/inc_oxc/bounds.py): the
configuration LP (``configs``) and the fixed-f MILP (``placements``, ``placements-static``).

Values are checked against proven optima of the `strong` MILP on small instances and against
hand-derived optima of tiny instances (one of them reached only by a time-shared OXC
schedule, so the time-shared bounds must stay at or above it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dmlopt
from dmlopt.errors import DmloptError
from dmlopt.models import inc_oxc as M
from dmlopt.models.inc_oxc.bounds import (
    BOUNDS,
    ConfigurationLP,
    configs_bound,
    fixed_f_model,
    jobs_bound,
    placements_bound,
)
from tests.inc_oxc.test_bounds import fig2_instance, spread_instance


def test_methods_are_registered_and_the_default_holds_for_every_solution():
    assert list(BOUNDS)[0] == "jobs-timeshared"
    assert {"configs", "placements", "placements-static"} <= set(BOUNDS)


@pytest.mark.parametrize("make, static_opt, shared_opt", [
    (fig2_instance, 0.2, 0.2),          # Fig. 2(c), derived in test_inc_oxc_bounds
    (spread_instance, 0.1, 0.15),       # static 0.1, time-shared 0.15 (derived there)
])
def test_hand_derived_optima(make, static_opt, shared_opt):
    inst = make()
    cfg = dmlopt.bound(inst, "configs", time_limit=60).bound
    shared = dmlopt.bound(inst, "placements", time_limit=60).bound
    static = dmlopt.bound(inst, "placements-static", time_limit=60).bound
    assert shared_opt <= cfg and shared_opt <= shared <= shared_opt * (1 + 1e-4)
    assert static_opt <= static <= static_opt * (1 + 1e-4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_placements_static_meets_the_proven_optimum(seed):
    """The fixed-f MILP is exact for static pairings: its bound is the optimum within the
    bisection's precision, and every other bound lies above it."""
    inst = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 4}, seed=seed)
    opt = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=120)
    assert opt.status == "optimal"
    static = dmlopt.bound(inst, "placements-static", time_limit=120)
    assert opt.objective <= static.bound <= opt.objective * (1 + 2e-5)
    assert static.metrics["reached_f"] == pytest.approx(opt.objective, rel=1e-6)
    # the solution found on the way is scored by the evaluator: optimal
    assert static.objective == pytest.approx(opt.objective, rel=1e-6)
    assert M.evaluate(inst, static.solution).feasible
    cfg = dmlopt.bound(inst, "configs", time_limit=60).bound
    assert cfg >= opt.objective
    ts, _ = jobs_bound(inst, static=False)
    assert cfg <= ts * (1 + 1e-5)


def test_fixed_f_model_feasible_below_and_infeasible_above_the_optimum():
    inst = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 4}, seed=2)
    opt = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=120).objective
    for f, expect in ((opt * 0.999, "Optimal"), (opt * 1.001, "Infeasible")):
        h, _ = fixed_f_model(inst, f, static=True)
        h.run()
        assert h.modelStatusToString(h.getModelStatus()) == expect


def test_configuration_pricing_is_exact_on_a_tiny_instance():
    """The greedy pricing equals the least price over every configuration, enumerated."""
    inst = spread_instance()
    cfg = ConfigurationLP(inst)
    rng = np.random.default_rng(3)
    f = 0.12
    for _ in range(20):
        pi = rng.uniform(0, 1, cfg.n_rows)
        for server in (True, False):
            got = cfg.price(0, server, f, pi)
            where, U, K = cfg.places(0, server, f)
            best = math.inf
            m = int(cfg.m[0])
            for t in where:
                for n in np.ndindex(*(int(u) + 1 for u in U)):
                    n = np.array(n)
                    if n.sum() != m or n.sum() - n[t] > K:
                        continue
                    idx, val = cfg.column(0, int(t), server, n, f)
                    keep = idx != 0                                  # the convexity row
                    best = min(best, float(pi[idx[keep]] @ val[keep]))
            if got is None:
                assert best == math.inf
            else:
                assert got[0] == pytest.approx(best, abs=1e-12)


def test_time_limited_runs_stay_valid():
    inst = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 4}, seed=0)
    opt = dmlopt.solve(inst, formulation="strong", threads=1, time_limit=120).objective
    value, metrics = configs_bound(inst, time_limit=0.0)
    assert value >= opt
    value, metrics, sol = placements_bound(inst, static=True, time_limit=0.0)
    assert sol is None
    assert value >= opt and metrics["stopped_by_time_limit"] == 1.0


def test_placements_refuses_workers_of_different_kinds():
    one = {"cpu": 1.0, "gpu": 1.0, "mem": 1.0}
    two = {"cpu": 2.0, "gpu": 1.0, "mem": 1.0}
    inst = M.Instance(racks=[{"cpu": 9.0, "gpu": 9.0, "mem": 9.0, "ps_slots": 1}] * 2,
                      n_tor=2, port_bw=100.0,
                      jobs=[{"data": 100.0, "ps_cpu": 1.0, "ps_mem": 1.0,
                             "workers": [one, two]}])
    with pytest.raises(DmloptError, match="identical workers"):
        fixed_f_model(inst, 0.1)
    with pytest.raises(DmloptError, match="identical workers"):
        dmlopt.bound(inst, "placements")
