"""The RAR evaluator (paper 003, section 4) against values worked out by hand.

The instance is a 4-node network (a square 0-1-2-3 with the chord 0-2) whose requests are so
small that one slot suffices for any CU count, so every window below is long enough (checked
up front with the model's own duration, which is a precondition here, not an expectation).
Each expected value is computed in this file from the paper's definitions: eq. (3)
reliability as a product written out, eq. (4) objective = blocking + alpha * zeta, zeta of the
four schemes (activated CUs, activated wavelengths, sum of t_e / t_d, sum of 1 - Gamma_j with
Gamma_j = 0 when blocked), section 6's AOT ratio and reliability gain.
"""

from __future__ import annotations

import math

import pytest

from dmlopt.models import rar

NODE_FAIL = [0.01, 0.02, 0.03, 0.04]
#: (u, v, km): a square and a chord; e_l = 1e-4 per km
LINKS = [(0, 1, 10.0), (1, 2, 20.0), (2, 3, 30.0), (3, 0, 40.0), (0, 2, 50.0)]
PER_KM = 1e-4


def instance(scheme: str = "MinCU", rho: int = 1, requests: int = 3, **extra) -> rar.Instance:
    return rar.Instance.model_validate({
        "scheme": scheme, "slots": 20, "cu_tflops": 100.0, "rho": rho,
        "nodes": [{"cus": 3, "failure": f} for f in NODE_FAIL],
        "links": [{"u": u, "v": v, "length_km": km, "wavelengths": 2, "failure_per_km": PER_KM}
                  for u, v, km in LINKS],
        "requests": [{"data_gb": 0.01, "source": 0, "arrival": 2, "deadline": 10 + 2 * j,
                      "theta": 0.5, "reliability": 0.5, "node_counts": [1, 2, 3]}
                     for j in range(requests)],
        **extra,
    })


def a(ring, nodes, cus, wl, start, end) -> dict:
    return {"ring": ring, "nodes": nodes, "cus": cus, "wavelength": wl, "start": start,
            "end": end}


def solve(inst: rar.Instance, entries: list) -> rar.Evaluation:
    return rar.evaluate(inst, rar.Solution.model_validate({"requests": entries}))


def gamma_by_hand(ring: list[int]) -> float:
    """Eq. (3) for the test network: the ring's nodes and the links between consecutive ones."""
    km = {frozenset((u, v)): length for u, v, length in LINKS}
    g = 1.0
    for v in ring:
        g *= 1.0 - NODE_FAIL[v]
    for x, y in zip(ring, ring[1:] + ring[:1], strict=True):
        g *= 1.0 - PER_KM * km[frozenset((x, y))]
    return g


# request 0 on the triangle 0-1-2 with 2 nodes (2 + 1 CUs), request 1 on the square with one
# node and CU 2 of node 0, request 2 blocked
R0 = a([0, 1, 2], [0, 1], [[0, 1], [0]], 0, 2, 5)
R1 = a([0, 1, 2, 3], [0], [[2]], 1, 3, 9)
MIXED = [R0, R1, None]


def test_windows_are_long_enough_for_the_cases_below():
    inst = instance()
    for j in range(3):
        for n_nodes in (1, 2, 3):
            assert rar.duration(inst, j, n_nodes, 1) == 1


def test_every_scheme_objective_and_metric_by_hand():
    g0, g1 = gamma_by_hand([0, 1, 2]), gamma_by_hand([0, 1, 2, 3])
    assert 0.5 < g1 < g0 < 1  # the test's premise: distinct, above r_j
    deadlines = [10, 12, 14]
    blocking = 1 / 3
    cus = 4          # (0,0) (0,1) (1,0) (0,2)
    wls = 3 + 4      # triangle links on wavelength 0, square links on wavelength 1
    te = 5 / 10 + 9 / 12
    one_minus = (1 - g0) + (1 - g1) + 1.0
    total_cus, total_wl = 4 * 3, 5 * 2
    expected = {"MinCU": blocking + cus / total_cus, "MinW": blocking + wls / total_wl,
                "MinT": blocking + te / 3, "MaxR": blocking + 100 / 3 * one_minus}
    for scheme, value in expected.items():
        ev = solve(instance(scheme), MIXED)
        assert ev.feasible, ev.violations
        assert ev.objective == pytest.approx(value, rel=1e-12)
        for s, v in expected.items():
            assert ev.metrics[f"objective_{s}"] == pytest.approx(v, rel=1e-12)
    m = solve(instance(), MIXED).metrics
    assert m["blocking_rate"] == pytest.approx(blocking)
    assert m["deployed"] == 2
    assert m["activated_cus"] == cus
    assert m["activated_cu_ratio"] == pytest.approx(cus / total_cus)
    assert m["activated_wavelengths"] == wls
    assert m["activated_wavelength_ratio"] == pytest.approx(wls / total_wl)
    assert m["aot_ratio"] == pytest.approx(((10 - 5) / 10 + (12 - 9) / 12) / 3)
    assert m["avg_reliability"] == pytest.approx((g0 + g1) / 2, rel=1e-12)
    assert m["reliability_gain"] == pytest.approx(((g0 - 0.5) / 0.5 + (g1 - 0.5) / 0.5) / 2,
                                                  rel=1e-12)
    assert deadlines[2] == 14  # request 2 (blocked) adds nothing to te or AOT


def test_alpha_override_applies_to_the_instance_scheme_only():
    ev = solve(instance("MinCU", alpha=0.5), MIXED)
    assert ev.objective == pytest.approx(1 / 3 + 0.5 * 4)
    assert ev.metrics["objective_MinW"] == pytest.approx(1 / 3 + 7 / 10)


def test_all_blocked_and_all_deployed():
    ev = solve(instance("MaxR"), [None, None, None])
    assert ev.feasible and ev.objective == pytest.approx(1.0 + 100 / 3 * 3)
    assert ev.metrics["avg_reliability"] == 0 and ev.metrics["reliability_gain"] == 0
    assert ev.metrics["activated_cus"] == 0 and ev.metrics["aot_ratio"] == 0
    r2 = a([0, 2, 3], [0], [[0]], 0, 10, 14)  # CU (0,0) again, after R0's window
    ev = solve(instance("MinT"), [R0, R1, r2])
    assert ev.feasible, ev.violations
    assert ev.metrics["blocking_rate"] == 0 and ev.metrics["deployed"] == 3
    assert ev.objective == pytest.approx((5 / 10 + 9 / 12 + 14 / 14) / 3)
    assert ev.metrics["activated_cus"] == 4  # (0,0) reused


@pytest.mark.parametrize("start, ok", [(5, False), (6, True)])
def test_a_cu_serves_one_request_per_slot_inclusive_windows(start, ok):
    # R0 holds CU 0 of node 0 in slots 2..5; a second request on it from `start` on
    other = a([0, 2, 3], [0], [[0]], 1, start, 10)  # wavelength 1: no link conflict
    ev = solve(instance(), [R0, other, None])
    assert ev.feasible is ok
    if not ok:
        assert ev.objective == math.inf
        assert ev.violations == ("node 0 CU 0 serves 2 requests in slot 5 (eq. 8)",)


def test_cu_conflicts_are_listed_per_node_at_most_five():
    # node 0 CU 0 doubly used in slots 2..9 (8 cells) and node 1 CU 0 in slots 3..5
    r0 = a([0, 1, 2], [0, 1], [[0], [0]], 0, 2, 9)
    r1 = a([0, 1, 2, 3], [0, 1], [[0], [0]], 1, 2, 9)
    ev = solve(instance(), [r0, r1, None])
    node0 = [v for v in ev.violations if v.startswith("node 0 ")]
    node1 = [v for v in ev.violations if v.startswith("node 1 ")]
    assert node0 == [f"node 0 CU 0 serves 2 requests in slot {t} (eq. 8)" for t in range(2, 7)]
    assert node1 == [f"node 1 CU 0 serves 2 requests in slot {t} (eq. 8)" for t in range(2, 7)]
    assert not ev.feasible


def test_cu_cap_counts_cells_of_every_cu_of_a_node():
    # node 0: CU 0 overloaded in slots 2..4 (3 cells), CU 1 in 2..5 (4 cells): 5 shown in all
    r0 = a([0, 1, 2], [0], [[0, 1]], 0, 2, 5)
    r1 = a([0, 2, 3], [0], [[0]], 1, 2, 4)
    r2 = a([0, 1, 2, 3], [0], [[1]], 1, 2, 8)
    ev = solve(instance(rho=3), [r0, r1, r2])
    assert ev.violations == (
        "node 0 CU 0 serves 2 requests in slot 2 (eq. 8)",
        "node 0 CU 0 serves 2 requests in slot 3 (eq. 8)",
        "node 0 CU 0 serves 2 requests in slot 4 (eq. 8)",
        "node 0 CU 1 serves 2 requests in slot 2 (eq. 8)",
        "node 0 CU 1 serves 2 requests in slot 3 (eq. 8)",
    )


@pytest.mark.parametrize("rho, ok", [(1, False), (2, True)])
def test_wavelength_capacity_rho(rho, ok):
    # both rings use link 0-1 (index 0) on wavelength 0 in slot 3..5; CUs are disjoint
    r0 = a([0, 1, 2], [0], [[0]], 0, 2, 5)
    r1 = a([0, 1, 2, 3], [1], [[0]], 0, 3, 9)
    inst = instance(rho=rho, requests=3)
    inst = inst.model_copy(update={"requests": [inst.requests[0].model_copy(
        update={"source": 0}), inst.requests[1].model_copy(update={"source": 1}),
        inst.requests[2]]})
    ev = solve(inst, [r0, r1, None])
    assert ev.feasible is ok
    if not ok:
        # one message per overloaded (link, wavelength): the first slot only; links 0 and 1
        # are shared (0-1, 1-2), links 4 (0-2) and 2, 3 are not
        assert ev.violations == (
            "link 0 wavelength 0 carries 2 requests in slot 3, above rho = 1 (eq. 9)",
            "link 1 wavelength 0 carries 2 requests in slot 3, above rho = 1 (eq. 9)",
        )
    else:
        assert ev.metrics["activated_wavelengths"] == 3 + 4 - 2  # two links shared


def test_wrong_length_and_structural_errors_are_reported():
    ev = solve(instance(), [R0, None])
    assert not ev.feasible and ev.objective == math.inf
    assert ev.violations == ("requests: 2 entries, the instance has 3",)
    bad = a([0, 1, 3], [0], [[0]], 0, 2, 5)  # 1-3 is no link
    ev = solve(instance(), [bad, R1, None])
    assert ev.violations == ("requests[0].ring: [0, 1, 3] is not a cycle of the network",)
    # a rejected request counts neither as deployed nor as blocked-by-choice: metrics stay
    # those of the rest, the objective is infinite
    assert ev.metrics["deployed"] == 1


def test_fifth_message_of_a_node_comes_from_its_next_cu():
    # node 0: CU 0 overloaded in slots 2..5 (4 cells), then CU 1: exactly one more message
    r0 = a([0, 1, 2], [0], [[0, 1]], 0, 2, 5)
    r1 = a([0, 2, 3], [0], [[0]], 1, 2, 5)
    r2 = a([0, 1, 2, 3], [0], [[1]], 1, 2, 8)
    ev = solve(instance(rho=3), [r0, r1, r2])
    assert [v[:24] for v in ev.violations] == ["node 0 CU 0 serves 2 req"] * 4 + [
        "node 0 CU 1 serves 2 req"]


def test_low_reliability_rings_and_low_thresholds():
    # Gamma below 1/2 and r_j far below Gamma: 1 - Gamma and (Gamma - r_j) / r_j by hand
    fail = [0.3, 0.2, 0.25, 0.1]
    inst = instance("MaxR").model_copy(update={"nodes": [
        rar.Node(cus=3, failure=f) for f in fail]})
    inst = inst.model_copy(update={"requests": [r.model_copy(update={"reliability": 0.1})
                                                for r in inst.requests]})
    inst = rar.Instance.model_validate(inst.model_dump())
    g = (1 - 0.3) * (1 - 0.2) * (1 - 0.25) * (1 - PER_KM * 10) * (1 - PER_KM * 20) * (
        1 - PER_KM * 50)
    assert 0.1 < g < 0.5
    ev = solve(inst, [R0, None, None])
    assert ev.feasible, ev.violations
    assert ev.objective == pytest.approx(2 / 3 + 100 / 3 * ((1 - g) + 2.0), rel=1e-12)
    assert ev.metrics["reliability_gain"] == pytest.approx((g - 0.1) / 0.1, rel=1e-12)


def test_more_entries_than_requests_is_reported_not_raised():
    ev = solve(instance(), [R0, R1, None, None])
    assert not ev.feasible and ev.violations == ("requests: 4 entries, the instance has 3",)


def test_length_rule_compares_values_not_objects():
    # 300 requests (counts above CPython's small-int cache) and 300 entries: feasible
    inst = instance(requests=1)
    inst = inst.model_copy(update={"requests": inst.requests * 300})
    ev = solve(inst, [None] * 300)
    assert ev.feasible and ev.metrics["blocking_rate"] == 1.0
