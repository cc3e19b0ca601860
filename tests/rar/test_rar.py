"""RAR (paper 003): Fig. 2, eq. 3, eq. 42, brute force = both ILPs, RDDA feasibility, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlopt
from dmlopt.errors import InstanceError, ModelTooLargeError
from dmlopt.models import rar
from tests.helpers.rar import TINY, _brute_force

A, B, C, D = 0, 1, 2, 3


def fig2(scheme: str = "MinCU") -> rar.Instance:
    """Fig. 2: 4 nodes x 4 CUs, 5 equal links x 2 wavelengths, R_j at B in TS 1..4."""
    inst = dmlopt.load("rar/fig2")
    return rar.Instance.model_validate({**inst.model_dump(), "scheme": scheme})


def with_scheme(inst: rar.Instance, scheme: str) -> rar.Instance:
    return rar.Instance.model_validate({**inst.model_dump(), "scheme": scheme})


# -- Fig. 2 worked example ---------------------------------------------------------------------


def test_fig2_both_schemes_use_12_cu_slot_blocks():
    inst = fig2()
    # resource-saving: ring ABD, 1 CU on each of 3 nodes, TS 1..4
    assert rar.duration(inst, 0, 3, 1) == 4
    # time-saving: ring ABCD, 3 CUs on each of 4 nodes, TS 1
    assert rar.duration(inst, 0, 4, 3) == 1
    assert 3 * 1 * rar.duration(inst, 0, 3, 1) == 12
    assert 4 * 3 * rar.duration(inst, 0, 4, 3) == 12
    # W-TS blocks: 3 links x 4 TS versus 4 links x 1 TS
    assert 3 * rar.duration(inst, 0, 3, 1) == 12 and 4 * rar.duration(inst, 0, 4, 3) == 4
    # eq. (5): CU-slots k * d >= a + b k
    a, b = rar.node_work(inst, 0, 3)
    assert 1 * 4 >= a + b * 1 > 1 * 3


def test_fig2_three_node_ring_is_more_reliable():
    inst = fig2()
    abd = rar.ring_reliability(inst, (A, B, D), rar.ring_links(inst, (A, B, D)))
    abcd = rar.ring_reliability(inst, (A, B, C, D), rar.ring_links(inst, (A, B, C, D)))
    assert abd > abcd


def test_fig2_deployments_evaluate():
    inst = fig2()
    saving = rar.Solution(requests=[rar.Assignment(
        ring=[A, B, D], nodes=[A, B, D], cus=[[0], [0], [0]], wavelength=0, start=1, end=4)])
    timing = rar.Solution(requests=[rar.Assignment(
        ring=[A, B, C, D], nodes=[A, B, C, D], cus=[[0, 1, 2]] * 4, wavelength=0, start=1,
        end=1)])
    ev_s, ev_t = rar.evaluate(inst, saving), rar.evaluate(inst, timing)
    assert ev_s.feasible and ev_t.feasible
    assert ev_s.metrics["activated_cus"] == 3 and ev_t.metrics["activated_cus"] == 12
    assert ev_s.metrics["activated_wavelengths"] == 3
    assert ev_t.metrics["activated_wavelengths"] == 4
    assert ev_s.metrics["avg_reliability"] > ev_t.metrics["avg_reliability"]
    # one slot short of eq. (5)
    short = rar.Solution(requests=[rar.Assignment(
        ring=[A, B, D], nodes=[A, B, D], cus=[[0], [0], [0]], wavelength=0, start=1, end=3)])
    ev = rar.evaluate(inst, short)
    assert not ev.feasible and "eq. 5" in ev.violations[0]


@pytest.mark.parametrize("formulation", ["aggregated", "paper"])
def test_fig2_optimal_schemes(formulation):
    # MinCU activates 3 CUs (1 per node over TS 1..4); MinT ends at TS 1 (12 CUs at once)
    res = dmlopt.solve(fig2("MinCU"), formulation=formulation)
    assert res.status == "optimal"
    assert res.metrics["activated_cus"] == 3
    assert res.objective == pytest.approx(3 / 16)
    res = dmlopt.solve(fig2("MinT"), formulation=formulation)
    assert res.solution.requests[0].end == 1
    assert res.objective == pytest.approx(1 / 4)
    res = dmlopt.solve(fig2("MaxR"), formulation=formulation)
    assert len(res.solution.requests[0].ring) == 3  # a 3-node ring is the most reliable


# -- eq. (3), eq. (42) by hand -------------------------------------------------------------------


def test_ring_reliability_eq3_by_hand():
    inst = rar.generate_cpn6(seed=0, requests=2)
    ring = next(r for r in inst.rings if r.size == 4)
    by_hand = 1.0
    for v in ring.nodes:
        by_hand *= 1 - inst.nodes[v].failure
    for i in ring.links:
        by_hand *= 1 - inst.links[i].failure_per_km * inst.links[i].length_km
    assert ring.reliability == pytest.approx(by_hand, rel=0, abs=1e-15)
    km = sum(inst.links[i].length_km for i in ring.links)
    assert ring.reliability == pytest.approx((1 - 1e-6) ** 4 * math.prod(
        1 - 1e-5 * inst.links[i].length_km for i in ring.links))
    assert 1 - ring.reliability == pytest.approx(4e-6 + 1e-5 * km, rel=1e-3)


def test_aot_ratio_and_objectives_by_hand():
    inst = rar.Instance.model_validate({
        **fig2().model_dump(),
        "requests": [
            {"data_gb": 64.0, "source": B, "arrival": 1, "deadline": 4, "theta": 0.1,
             "reliability": 0.99, "node_counts": [3, 4]},
            {"data_gb": 64.0, "source": B, "arrival": 1, "deadline": 4, "theta": 0.1,
             "reliability": 0.99, "node_counts": [4]},
            {"data_gb": 64.0, "source": D, "arrival": 1, "deadline": 3, "theta": 0.1,
             "reliability": 0.99, "node_counts": [4]},
        ],
    })
    sol = rar.Solution(requests=[
        rar.Assignment(ring=[A, B, D], nodes=[A, B, D], cus=[[0], [0], [0]], wavelength=0,
                       start=1, end=4),
        rar.Assignment(ring=[A, B, C, D], nodes=[A, B, C, D], cus=[[1, 2, 3]] * 4,
                       wavelength=1, start=2, end=2),
        None,
    ])
    ev = rar.evaluate(inst, sol)
    assert ev.feasible, ev.violations
    # eq. (42): (1/|R|) sum (t_d - Te) eta / t_d = ((4-4)/4 + (4-2)/4 + 0) / 3
    assert ev.metrics["aot_ratio"] == pytest.approx((0 + 2 / 4) / 3)
    assert ev.metrics["blocking_rate"] == pytest.approx(1 / 3)
    # node B: CU 0 (request 0) and CUs 1-3 (request 1) -> 4 CUs; A, D: 4 each; C: 3
    assert ev.metrics["activated_cus"] == 4 + 4 + 4 + 3
    # wavelength 0 on AB, BD, DA; wavelength 1 on AB, BC, CD, DA
    assert ev.metrics["activated_wavelengths"] == 7
    g0 = rar.ring_reliability(inst, (A, B, D), rar.ring_links(inst, (A, B, D)))
    g1 = rar.ring_reliability(inst, (A, B, C, D), rar.ring_links(inst, (A, B, C, D)))
    blk = 1 / 3
    assert ev.metrics["objective_MinCU"] == pytest.approx(blk + 15 / 16)
    assert ev.metrics["objective_MinW"] == pytest.approx(blk + 7 / 10)
    assert ev.metrics["objective_MinT"] == pytest.approx(blk + (4 / 4 + 2 / 4) / 3)
    assert ev.metrics["objective_MaxR"] == pytest.approx(
        blk + 100 / 3 * ((1 - g0) + (1 - g1) + 1))
    assert ev.metrics["reliability_gain"] == pytest.approx(((g0 - .99) + (g1 - .99)) / .99 / 2)


def test_evaluator_catches_conflicts():
    inst = rar.Instance.model_validate({**fig2().model_dump(), "rho": 1, "requests": [
        {"data_gb": 64.0, "source": B, "arrival": 1, "deadline": 4, "theta": 0.1,
         "reliability": 0.99, "node_counts": [3]}] * 2})
    a = rar.Assignment(ring=[A, B, D], nodes=[A, B, D], cus=[[0], [0], [0]], wavelength=0,
                       start=1, end=4)
    ev = rar.evaluate(inst, rar.Solution(requests=[a, a]))
    text = " | ".join(ev.violations)
    assert "eq. 8" in text and "eq. 9" in text and not ev.feasible
    bad = rar.Assignment(ring=[A, C, D], nodes=[A, C, D], cus=[[0], [0], [0]], wavelength=0,
                         start=1, end=4)
    ev = rar.evaluate(inst, rar.Solution(requests=[bad, None]))
    assert "not a cycle" in ev.violations[0]
    nosrc = rar.Assignment(ring=[B, C, D], nodes=[C, D, B], cus=[[0], [0], [0]], wavelength=0,
                           start=2, end=5)
    text = " | ".join(rar.evaluate(inst, rar.Solution(requests=[nosrc, None])).violations)
    assert "[t_a, t_d]" in text


# -- exact: brute force = paper = aggregated ---------------------------------------------------


@pytest.mark.parametrize("spec", TINY)
def test_brute_force_equals_both_ilps(spec):
    expected = _brute_force(rar.generate_random(**spec))
    assert all(math.isfinite(v) for v in expected.values())
    for scheme in rar.SCHEMES:
        inst = rar.generate_random(scheme=scheme, **spec)
        for formulation in ("paper", "aggregated"):
            res = dmlopt.solve(inst, formulation=formulation, threads=1)
            assert res.status == "optimal"
            assert res.objective == pytest.approx(expected[scheme], abs=1e-7), (scheme,
                                                                                formulation)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 10_000), scheme=st.sampled_from(rar.SCHEMES),
       flexible=st.booleans())
def test_formulations_equal_on_random_instances(seed, scheme, flexible):
    inst = rar.generate_random(seed=seed, nodes=5, extra_links=2, requests=3, slots=4, cus=3,
                               wavelengths=2, rho=1, scheme=scheme, flexible=flexible)
    paper = dmlopt.solve(inst, formulation="paper", threads=1, time_limit=60, mip_gap=0.0)
    agg = dmlopt.solve(inst, formulation="aggregated", threads=1, time_limit=60, mip_gap=0.0)
    assert paper.status == agg.status == "optimal"
    assert paper.objective == pytest.approx(agg.objective, abs=1e-6)


def test_assign_cu_ids_uses_the_peak():
    inst = fig2()
    plans = [([A, B], [2, 1], 1, 2), ([A], [2], 2, 3), ([A, B], [1, 3], 3, 4), None]
    ids = rar.assign_cu_ids(inst, plans)
    assert [len(x) for x in ids[0]] == [2, 1] and ids[3] == []
    used_a = {c for plan in ids[:3] for c in plan[0]}
    assert len(used_a) == 4  # peak on A: slot 2 (2 + 2) and slot 3 (2 + 1)
    with pytest.raises(ValueError):
        rar.assign_cu_ids(inst, [([A], [3], 1, 2), ([A], [2], 2, 2)])


# -- RDDA -------------------------------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), scheme=st.sampled_from(rar.SCHEMES),
       big=st.booleans())
def test_rdda_always_passes_the_evaluator(seed, scheme, big):
    if big:
        inst = rar.generate_cpn38(seed=seed, requests=60, scheme=scheme, slots=24)
    else:
        inst = rar.generate_cpn6(seed=seed, requests=12, scheme=scheme)
    res = dmlopt.heuristic(inst, "rdda")
    assert res.status == "feasible", res.message
    assert res.metrics["reliability_gain"] >= 0


@pytest.mark.parametrize("spec", TINY[:2])
def test_rdda_never_beats_the_optimum(spec):
    for scheme in rar.SCHEMES:
        inst = rar.generate_random(scheme=scheme, **spec)
        h = dmlopt.heuristic(inst, "rdda")
        opt = dmlopt.solve(inst, formulation="aggregated", threads=1)
        assert h.status == "feasible" and h.objective >= opt.objective - 1e-9


def test_rdda_warm_start_is_accepted():
    inst = rar.generate_cpn6(seed=3, requests=3, scheme="MinT")
    res = dmlopt.solve(inst, formulation="aggregated", warm_start="rdda", threads=1)
    assert res.status == "optimal"
    assert res.objective <= dmlopt.heuristic(inst, "rdda").objective + 1e-9


# -- export, size guard, input errors ----------------------------------------------------------


def test_lp_export_round_trip(tmp_path):
    import highspy

    inst = rar.generate_random(seed=2, nodes=4, extra_links=1, requests=2, slots=3, cus=2,
                               wavelengths=2, rho=1, scheme="MinW")
    for formulation in ("aggregated", "paper"):
        path = dmlopt.export(inst, tmp_path / f"rar_{formulation}.lp", formulation=formulation)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        assert h.readModel(str(path)) == highspy.HighsStatus.kOk
        h.run()
        res = dmlopt.solve(inst, formulation=formulation)
        assert h.getInfo().objective_function_value == pytest.approx(res.objective, abs=1e-7)


def test_size_guard_refuses_the_paper_model_before_building():
    inst = rar.generate_cpn38(seed=0, requests=200)
    n_vars, _ = rar.estimate_size(inst, "paper")
    assert n_vars > 10_000_000
    with pytest.raises(ModelTooLargeError, match="paper"):
        dmlopt.solve(inst, formulation="paper")


def test_estimate_size_bounds_the_built_model():
    for inst in (rar.generate_cpn6(seed=0, requests=2), fig2("MinW")):
        for formulation in ("paper", "aggregated"):
            import pyomo.environ as pyo

            model = rar.build(inst, formulation)
            n_vars = sum(1 for _ in model.component_data_objects(pyo.Var))
            n_cons = sum(1 for _ in model.component_data_objects(pyo.Constraint))
            est = rar.estimate_size(inst, formulation)
            assert n_vars <= est[0] and n_cons <= est[1], (formulation, n_vars, n_cons, est)


def _bad(update=None, request=None):
    data = fig2().model_dump()
    data.update(update or {})
    if request:
        data["requests"] = [{**data["requests"][0], **request}]
    return data


@pytest.mark.parametrize("data, field, words", [
    (_bad(request={"source": 9}), "requests[0].source", "not a node"),
    (_bad(request={"arrival": 5}), "requests[0].arrival", "after the horizon"),
    (_bad(request={"deadline": 7}), "requests[0].deadline", "after the horizon"),
    (_bad(request={"arrival": 3, "deadline": 2}), "requests[0].deadline", "before the arrival"),
    (_bad(request={"reliability": 1.5}), "requests[0].reliability", "1"),
    (_bad(request={"reliability": 0.0}), "requests[0].reliability", "0"),
    (_bad(request={"theta": 1.0}), "requests[0].theta", "1"),
    (_bad(request={"node_counts": [3, 3]}), "requests[0].node_counts", "duplicates"),
    (_bad(request={"node_counts": [9]}), "requests[0].node_counts", "ring_max_nodes"),
    (_bad({"links": [{"u": 0, "v": 0, "length_km": 1, "wavelengths": 1}] * 3}), "links[0]",
     "self loop"),
    (_bad({"links": [{"u": 0, "v": 1, "length_km": 1, "wavelengths": 1}] * 3}), "links[1]",
     "duplicates"),
    (_bad({"links": [{"u": 0, "v": 1, "length_km": 20, "wavelengths": 1},
                     {"u": 1, "v": 2, "length_km": 20, "wavelengths": 1},
                     {"u": 2, "v": 3, "length_km": 20, "wavelengths": 1}]}),
     "requests[0].source", "no simple cycle"),
    (_bad({"ring_cap": 2}), "ring_cap", "exceeded"),
    (_bad({"slots": 0}), "slots", "0"),
    (_bad({"rho": 0}), "rho", "0"),
    (_bad({"links": [{"u": 0, "v": 1, "length_km": -3, "wavelengths": 1}] * 3}),
     "links[0].length_km", "-3"),
])
def test_bad_input_names_field_value_rule(data, field, words):
    with pytest.raises(InstanceError) as err:
        dmlopt.load(data)
    msg = str(err.value)
    assert msg.startswith(field) and words in msg, msg


def test_generator_spec_errors():
    with pytest.raises(InstanceError, match="scheme"):
        dmlopt.generate("rar", {"generator": "cpn6", "scheme": "Fast"})
    inst = dmlopt.generate("rar", {"generator": "cpn6", "requests": 4, "scheme": "MaxR"}, seed=3)
    again = dmlopt.generate("rar", {"generator": "cpn6", "requests": 4, "scheme": "MaxR"}, seed=3)
    assert inst == again and inst.scheme == "MaxR"
    assert all(len(r.node_counts) == 1 and r.node_counts[0] in (3, 4) for r in inst.requests)
    assert all(r.arrival <= 3 and r.deadline >= 10 for r in inst.requests)


def test_a_duration_beyond_the_int64_range_is_capped_and_the_request_unservable():
    # D = 1e15 GB gives a duration of about 1e27 slots: cast to int64 it became garbage (a
    # RuntimeWarning, then negative durations that kept the bound's loops running past its
    # time limit); capped, the request fits no window, and every method blocks it
    import warnings

    base = rar.generate_random(seed=91, nodes=4, requests=2, slots=4)
    data = base.model_dump()
    data["requests"][1]["data_gb"] = 1e15
    inst = rar.Instance(**data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rar.duration(inst, 1, 2, 1) == 2**53
        assert (rar.duration(inst, 1, 2, np.array([1, 3])) == 2**53).all()
        exact = dmlopt.solve(inst, formulation="aggregated", threads=1, time_limit=30)
        bound = dmlopt.bound(inst, time_limit=30)
    assert exact.status == "optimal" and exact.solution.requests[1] is None
    assert bound.bound <= exact.objective + 1e-9
