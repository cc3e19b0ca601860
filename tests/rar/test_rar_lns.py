"""RAR (paper 003): ``rdda-lns``, the large neighbourhood search from ``rdda-pack``."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.heuristics import rar_lns
from dmlopt.heuristics.rar_schemes import rdda_pack
from dmlopt.models import rar
from tests.helpers.rar import TINY, _brute_force, proven_optimum


def _empty(inst: rar.Instance) -> rar.Solution:
    return rar.Solution(requests=[None] * len(inst.requests))


@pytest.mark.parametrize("scheme", rar.SCHEMES)
@pytest.mark.parametrize("seed", range(3))
def test_feasible_and_never_worse_than_rdda_pack(scheme, seed):
    """Small neighbourhoods (3 of 8 requests) on tight random instances: the result is
    feasible by the evaluator and eq. (4) is at most rdda-pack's (catches a move accepted on
    the sub-model's value instead of the re-evaluated eq. (4), or a sub-model whose solution
    breaks a capacity the fixed requests use)."""
    inst = dmlopt.generate("rar", {"generator": "random", "scheme": scheme, "requests": 8,
                                   "slots": 6, "cus": 2}, seed=seed)
    # 0.5 s (was 1 s): the search still solves 15-80 sub-models of these 8 requests and
    # accepts the same moves (measured on seeds 0-2 under MinCU and MaxR)
    res = dmlopt.heuristic(inst, "rdda-lns", seed=seed, time_limit=0.5, size=3)
    pack = dmlopt.heuristic(inst, "rdda-pack")
    assert res.status == "feasible"
    assert res.objective <= pack.objective + 1e-12


@pytest.mark.parametrize("spec", TINY)
@pytest.mark.parametrize("scheme", rar.SCHEMES)
def test_whole_instance_from_nothing_reaches_brute_force_optimum(spec, scheme):
    """With the whole instance as the neighbourhood and every option kept, one sub-model is
    the aggregated model: started from every request blocked, the search reaches the optimum
    of the brute force of tests/helpers/rar.py (its own CU and wavelength bookkeeping).
    Catches a wrong objective term of the sub-model (MinW's new wavelengths, MinT's end,
    MaxR's reliability), a missing option or a wrong decoding."""
    inst = rar.generate_random(scheme=scheme, **spec)
    best = _brute_force(inst)[scheme]
    sol, stats = rar_lns.rdda_lns_search(inst, time_limit=5.0, size=len(inst.requests),
                                         max_options=0, start=_empty(inst))
    ev = rar.evaluate(inst, sol)
    assert ev.feasible
    assert ev.objective == pytest.approx(best, abs=1e-9)
    assert stats.accepted >= 1 and stats.blocked_before == len(inst.requests)


@pytest.mark.parametrize("scheme", rar.SCHEMES)
@pytest.mark.parametrize("seed", range(3))
def test_whole_instance_reaches_aggregated_optimum(scheme, seed):
    """4 requests: the optimum proven by the aggregated MIP (dmlopt.solve) is reached from
    every request blocked."""
    inst = dmlopt.generate("rar", {"generator": "random", "requests": 4, "scheme": scheme,
                                   "slots": 5, "cus": 2}, seed=seed)
    # the optimum from the golden file of tests/helpers/rar.py (solved by aggregated)
    opt = proven_optimum(inst, "aggregated", time_limit=60, threads=1)
    sol, _ = rar_lns.rdda_lns_search(inst, time_limit=5.0, size=4, max_options=0,
                                     start=_empty(inst))
    assert rar.evaluate(inst, sol).objective == pytest.approx(opt, abs=1e-9)


@pytest.mark.parametrize("seed", [1, 2])
def test_strictly_better_than_rdda_pack_where_it_is_not_optimal(seed):
    """MinT, 4 requests, seeds 1 and 2: rdda-pack stays above the proven optimum and the
    registered heuristic (default start) reaches it (catches a search that never changes
    rdda-pack's solution)."""
    inst = dmlopt.generate("rar", {"generator": "random", "requests": 4, "scheme": "MinT",
                                   "slots": 5, "cus": 2}, seed=seed)
    opt = proven_optimum(inst, "aggregated", time_limit=60, threads=1)  # golden file
    pack = dmlopt.heuristic(inst, "rdda-pack")
    assert pack.objective > opt + 1e-6
    res = dmlopt.heuristic(inst, "rdda-lns", time_limit=5.0)
    assert res.objective == pytest.approx(opt, abs=1e-9)


@pytest.mark.parametrize("scheme", ["MaxR", "MinW", "MinCU"])
@pytest.mark.parametrize("tight", [dict(cus=1, wavelengths=4, rho=3),
                                   dict(cus=4, wavelengths=1, rho=1)], ids=["cus", "wavelengths"])
def test_sub_model_leaves_the_fixed_requests_their_resources(scheme, tight):
    """A blocked request of rdda-pack (which tries to insert every blocked request) freed
    alone or with one deployed request, every other request fixed, on instances where CUs
    (resp. wavelengths) bind: the sub-model's solution, put into the full solution, is
    feasible by the evaluator. A sub-model that does not reduce the CU (resp. wavelength)
    capacities by the fixed requests deploys the blocked request on resources they hold (the
    evaluator then reports eq. 8, resp. 9, violated)."""
    inst = dmlopt.generate("rar", {"generator": "random", "scheme": scheme, "requests": 12,
                                   "slots": 4, **tight}, seed=3)
    st = rar_lns._State(inst, rdda_pack(inst))
    blocked = [j for j, p in enumerate(st.plans) if p is None]
    deployed = [j for j, p in enumerate(st.plans) if p is not None]
    assert blocked and deployed
    rng = np.random.default_rng(0)
    for free in [[j] for j in blocked] + [[blocked[0], i] for i in deployed]:
        m, frees, x0 = rar_lns._build(inst, st, free, 0, rng, {}, 0)
        if m.ncol == 0:
            continue  # no placement fits in what the fixed requests leave
        h = m.highs(30.0, 1e-9)
        rar_lns._solve(h, x0)
        x = rar_lns._values(h)
        assert x is not None  # the warm start (the current placements) is feasible
        plans = list(st.plans)
        for f in frees:
            plans[f.j] = rar_lns._decode(inst, x, f)
        trial = rar_lns._State(inst, _empty(inst))
        trial.plans = plans
        ev = rar.evaluate(inst, trial.solution())
        assert ev.feasible, (free, ev.violations[:2])


def test_bad_options_name_the_field():
    inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 4, "scheme": "MaxR"},
                           seed=0)
    for name, value in (("size", 0), ("time_limit", -1.0), ("solve_limit", 0.0),
                        ("max_options", -1)):
        with pytest.raises(InstanceError, match=name):
            rar_lns.rdda_lns(inst, **{name: value})
        with pytest.raises(dmlopt.errors.DmloptError, match=name):
            dmlopt.heuristic(inst, "rdda-lns", **{name: value})
    bad = rar.Solution(requests=[None] * (len(inst.requests) - 1))
    with pytest.raises(InstanceError, match="start"):
        rar_lns.rdda_lns_search(inst, start=bad)


def test_time_limit_is_honoured_loosely():
    """60 requests on the 38-node network, twice rdda-pack's time plus 2 s (the limit covers the
    start) and 1 s per sub-model: the run ends within the limit, one sub-model and a wide
    margin for a loaded machine (catches a search that ignores its time limit); it solved at
    least one sub-model. 60 requests (was 120: the run lasts about twice rdda-pack's time, so
    half the CPU): the search is still far from done at the limit (given 45 s it ran all of
    them, 13 rounds), so one that ignored the limit would overrun the margin."""
    inst = dmlopt.generate("rar", {"generator": "cpn38", "requests": 60, "scheme": "MaxR"},
                           seed=1)
    t0 = time.perf_counter()
    rdda_pack(inst)
    pack = time.perf_counter() - t0
    t1 = time.perf_counter()
    sol, stats = rar_lns.rdda_lns_search(inst, time_limit=2.0 * pack + 2.0,
                                         solve_limit=1.0)
    took = time.perf_counter() - t1
    assert stats.rounds >= 1
    assert took < 2.0 * pack + 2.0 + 1.0 + 20.0
    assert rar.evaluate(inst, sol).objective <= stats.objective_before + 1e-12


def test_ctrl_c_returns_the_best_solution_so_far(monkeypatch):
    """Ctrl-C during a sub-model's solve raises ``Interrupted`` carrying the best solution so
    far (here rdda-pack's: nothing was accepted), which the API evaluates (catches a search
    that loses its incumbent on Ctrl-C)."""
    inst = dmlopt.generate("rar", {"generator": "random", "scheme": "MaxR", "requests": 8,
                                   "slots": 6, "cus": 2}, seed=0)

    def stop(h, x0):
        raise KeyboardInterrupt

    monkeypatch.setattr(rar_lns, "_solve", stop)
    with pytest.raises(dmlopt.errors.Interrupted) as caught:
        dmlopt.heuristic(inst, "rdda-lns", size=3, time_limit=5.0)
    assert caught.value.solution == rdda_pack(inst)
    assert caught.value.result.status == "interrupted"
