"""RAR (paper 003): RDDA's ``block`` option (blocking by choice under MinCU's eq. 4)."""

from __future__ import annotations

import pytest

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.heuristics.rar import fewest_cu_slots, rdda
from dmlopt.models import rar


def fig2(alpha: float | None = None, scheme: str = "MinCU") -> rar.Instance:
    inst = dmlopt.load("rar/fig2")
    return rar.Instance.model_validate({**inst.model_dump(), "scheme": scheme, "alpha": alpha})


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scheme", ["MinCU", "MinW", "MinT", "MaxR"])
def test_block_never_is_algorithm_1(seed, scheme):
    inst = dmlopt.generate("rar", {"generator": "random", "scheme": scheme}, seed=seed)
    assert rdda(inst, block="never") == rdda(inst)


@pytest.mark.parametrize(("alpha", "deployed", "objective"), [
    # Fig. 2 (|T| = 4, one request, fewest 12 CU-slots: 1 CU on 3 nodes for 4 slots): deploying
    # costs 3 alpha, blocking 1; both break-even rules switch at alpha = 1/3
    (0.33, True, 0.99),
    (0.34, False, 1.0),
    (None, True, 3 / 16),  # the paper's alpha = 1 / sum |C_n| = 1/16
])
def test_break_even_on_fig2(alpha, deployed, objective):
    inst = fig2(alpha)
    assert fewest_cu_slots(inst, 0) == 12
    res = dmlopt.heuristic(inst, "rdda", block="break-even")
    assert res.status == "feasible"
    assert (res.solution.requests[0] is not None) == deployed
    assert res.objective == pytest.approx(objective)
    plain = dmlopt.heuristic(inst, "rdda")
    assert plain.objective == pytest.approx(3 * inst.alpha_of())
    assert res.objective <= plain.objective + 1e-12


def _filtered(inst: rar.Instance) -> tuple[float, set[int]]:
    """RDDA run on a sub-instance without the requests above the break-even CU-slots,
    scored on the whole instance (each request's fewest CU-slots computed from ``duration``)."""
    k_max = max(nd.cus for nd in inst.nodes)
    limit = inst.slots / (inst.alpha_of() * len(inst.requests))
    keep = []
    for j, r in enumerate(inst.requests):
        fewest = min(nn * k * rar.duration(inst, j, nn, k) for nn in r.node_counts
                     for k in range(1, k_max + 1)
                     if rar.duration(inst, j, nn, k) <= r.deadline - r.arrival + 1)
        if fewest <= limit:
            keep.append(j)
    data = inst.model_dump()
    data["requests"] = [data["requests"][j] for j in keep]
    sub = rdda(rar.Instance.model_validate(data))
    full: list = [None] * len(inst.requests)
    for i, j in enumerate(keep):
        full[j] = sub.requests[i]
    ev = rar.evaluate(inst, rar.Solution(requests=full))
    assert ev.feasible
    return ev.objective, {j for j, a in enumerate(full) if a is not None}


@pytest.mark.parametrize(("generator", "requests", "seed"), [
    ("cpn6", 10, 0), ("cpn6", 10, 3), ("cpn6", 12, 1), ("cpn38", 300, 0),
])
def test_break_even_never_worse_than_rdda_on_the_kept_requests(generator, requests, seed):
    inst = dmlopt.generate("rar", {"generator": generator, "requests": requests,
                                   "scheme": "MinCU"}, seed=seed)
    res = dmlopt.heuristic(inst, "rdda", block="break-even")
    assert res.status == "feasible"
    ref, _ = _filtered(inst)
    # the first pass is RDDA on the kept requests; every later change lowers eq. (4)
    assert res.objective <= ref + 1e-12



def test_break_even_needs_the_mincu_objective():
    with pytest.raises(InstanceError, match="block"):
        rdda(fig2(scheme="MinT"), block="break-even")
    with pytest.raises(InstanceError, match="block"):
        rdda(fig2(), block="sometimes")
    # MinCU objective with another scheme's ordering is allowed
    assert rdda(fig2(), block="break-even", scheme="MinT").requests[0] is not None


@pytest.mark.parametrize("seed", range(3))
def test_fewest_cu_slots_is_the_brute_force_minimum(seed):
    inst = dmlopt.generate("rar", {"generator": "cpn38", "requests": 30, "scheme": "MinCU"},
                           seed=seed)
    k_max = max(nd.cus for nd in inst.nodes)
    for j, r in enumerate(inst.requests):
        fits = [nn * k * rar.duration(inst, j, nn, k) for nn in r.node_counts
                for k in range(1, k_max + 1)
                if rar.duration(inst, j, nn, k) <= r.deadline - r.arrival + 1]
        assert fewest_cu_slots(inst, j) == min(fits, default=1 << 62)
