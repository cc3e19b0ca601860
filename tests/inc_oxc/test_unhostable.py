"""An INC/OXC instance that passes validation but can host no parameter server (issue 51).

Validation checks each PS alone and the workers' total; here every PS must run on a server (no
PDP slot) and the workers fill the racks' CPU, so no PS fits beside them. Every method must
answer clearly: each heuristic and bound raises a DmloptError saying the instance has no
feasible solution (never OverflowError), and ``dmlopt.solve`` returns status "infeasible" for
every formulation (the MIP's own proof, independent of the certificate).
"""

from __future__ import annotations

import math

import pytest

import dmlopt
from dmlopt import registry
from dmlopt.errors import DmloptError, InstanceError
from dmlopt.models.inc_oxc.hosting import capped_count, unhostable

RACK = {"cpu": 10.0, "gpu": 50.0, "mem": 2.0, "ps_slots": 0}


def _instance(worker_cpu: float, inc: bool = True) -> dmlopt.models.inc_oxc.Instance:
    """Two racks of 10 CPU, one job of two workers and a PS of 5 CPU, no PDP slot."""
    worker = {"cpu": worker_cpu, "gpu": 20.0, "mem": 0.4}
    return dmlopt.load({"problem": "inc_oxc", "name": "no-ps", "racks": [RACK, RACK],
                        "n_tor": 4, "port_bw": 1250.0, "inc": inc,
                        "jobs": [{"data": 400.0, "alpha": 0.5, "ps_cpu": 5.0, "ps_mem": 0.4,
                                  "workers": [worker, worker]}]})


PROBLEM = registry.get("inc_oxc")
NO_HOST = _instance(10.0)     # workers 20 CPU + PS 5 > 20: the aggregate proof applies


def _says_infeasible(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "no feasible solution" in text or "infeasible" in text


def test_the_instance_passes_validation_and_has_no_solution():
    assert unhostable(NO_HOST) is not None
    assert "cpu 25" in unhostable(NO_HOST)
    for formulation in PROBLEM.formulations:   # the MIP proves it on its own
        res = dmlopt.solve(NO_HOST, "highs", formulation=formulation, time_limit=20)
        assert res.status == "infeasible", (formulation, res.status, res.message)
        assert res.solution is None


@pytest.mark.parametrize("name", list(PROBLEM.heuristics))
def test_every_heuristic_says_infeasible(name):
    with pytest.raises(InstanceError) as caught:
        dmlopt.heuristic(NO_HOST, name)
    assert caught.value.field == "jobs"
    assert "no feasible solution" in str(caught.value)


@pytest.mark.parametrize("name", list(PROBLEM.bound_entries))
def test_every_bound_says_infeasible(name):
    with pytest.raises(DmloptError) as caught:
        dmlopt.bound(NO_HOST, method=name, time_limit=5)
    assert _says_infeasible(caught.value), str(caught.value)


def test_solve_default_is_infeasible_without_its_exact_stage():
    res = dmlopt.solve(NO_HOST, time_limit=10)
    assert res.status == "infeasible", res.message
    assert res.solution is None


@pytest.mark.parametrize("name", ["configs", "placements", "placements-static", "bisection"])
def test_an_infeasible_instance_the_proof_misses_gives_no_overflow(name):
    """Workers of 6 CPU: one per rack (two do not fit one), 4 CPU left in each, the PS needs 5.
    The aggregate proof does not see it (6 + 6 + 5 <= 20); the bisections reach f near 0,
    where a worker's rate is 0 and a link's flow count was NB / 0: now a finite bound."""
    inst = _instance(6.0)
    assert unhostable(inst) is None
    assert dmlopt.solve(inst, "highs", formulation="paper", time_limit=20).status == "infeasible"
    res = dmlopt.bound(inst, method=name, time_limit=1)
    assert math.isfinite(res.bound) and res.bound >= 0


def test_the_proof_never_refuses_a_generated_instance():
    """The generators make feasible instances (a greedy placement fits): no false proof, with
    INC on (PDP slots) or off."""
    for seed in range(6):
        for racks, jobs in ((2, 2), (3, 4), (6, None)):
            spec = {"generator": "small", "racks": racks} | ({"jobs": jobs} if jobs else {})
            inst = dmlopt.generate("inc_oxc", spec, seed=seed)
            assert unhostable(inst) is None
            off = dmlopt.load(inst.model_dump() | {"inc": False})
            assert unhostable(off) is None


def test_capped_count_is_finite_as_the_rate_goes_to_zero():
    assert capped_count(1250.0, 0.0, 7) == 7
    assert capped_count(1250.0, 1e-320, 7) == 7
    assert capped_count(10.0, 3.0, 7) == 3
    assert capped_count(9.0, 3.0, 7) == 3      # the 1e-12 slack keeps an exact fit
    assert capped_count(1.0, 2.0, 7) == 0
