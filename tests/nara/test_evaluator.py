"""The Nara evaluator (paper 001, section 3.1 and the metrics of section 5) by hand.

The topology is written out here (not built by the package): one pod, racks A = {0, 1} and
B = {2, 3} under one fabric switch; access links of capacity 1, rack-fabric links of capacity
2, every server 10 CPU and 10 memory. Every expected value below is computed in this file from
the episode's timeline: request j arrives at step j and holds its resources while
j' < j + t_j (released at the arrival of step j + t_j, before that step's allocation).
"""

from __future__ import annotations

import math

import pytest

from dmlopt.models import nara

# nodes 0-3 servers, 4 rack A, 5 rack B, 6 fabric
ONE_POD = {
    "name": "one-pod",
    "nodes": [*[{"kind": "server", "cpu": 10, "mem": 10}] * 4,
              {"kind": "rack"}, {"kind": "rack"}, {"kind": "fabric"}],
    "links": [{"u": 0, "v": 4, "capacity": 1.0}, {"u": 1, "v": 4, "capacity": 1.0},
              {"u": 2, "v": 5, "capacity": 1.0}, {"u": 3, "v": 5, "capacity": 1.0},
              {"u": 4, "v": 6, "capacity": 2.0}, {"u": 5, "v": 6, "capacity": 2.0}],
}
TOTAL_CPU = TOTAL_MEM = 40
TIER1_CAP, TIER2_CAP = 4.0, 4.0


def episode(reqs, topology=None) -> nara.Instance:
    return nara.Instance(topology=topology or ONE_POD,
                         requests=[{"c": c, "m": m, "b": b, "t": t} for c, m, b, t in reqs])


def al(servers, cpu, mem, routes=None) -> nara.Allocation:
    n = len(servers)
    return nara.Allocation(servers=servers, cpu=cpu, mem=mem,
                           routes=[0] * (n * (n - 1) // 2) if routes is None else routes)


REQS = [(15, 5, 0.5, 2), (4, 4, 0.25, 1), (10, 0, 0.5, 1), (2, 2, 0.5, 1), (3, 3, 0.1, 1)]
ALLOCS = [al([0, 1], [10, 5], [5, 0]),   # rack A, both access links
          al([2], [4], [4]),             # one server: no link
          al([2], [10], [0]),            # all of server 2: needs request 1 released at step 2
          al([1, 2], [1, 1], [1, 1]),    # racks A and B: 2 access + 2 rack-fabric links
          None]                          # dropped


def test_metrics_of_a_hand_timeline():
    ev = nara.evaluate(episode(REQS), nara.Solution(allocations=ALLOCS))
    assert ev.feasible, ev.violations
    assert ev.objective == 4
    # (CPU, memory, tier-1 bandwidth, tier-2 bandwidth) in use after each step's allocation
    # step 0: r0; 1: r0 + r1; 2: r0 (t=2) and r1 (t=1) released, r2; 3: r2 released, r3;
    # 4: r3 released, nothing
    use = [(15, 5, 2 * 0.5, 0), (19, 9, 2 * 0.5, 0), (10, 0, 0, 0), (2, 2, 2 * 0.5, 2 * 0.5),
           (0, 0, 0, 0)]
    n = len(REQS)
    m = ev.metrics
    assert m["accepted"] == 4 and m["requests"] == 5
    assert m["acceptance_ratio"] == pytest.approx(4 / 5)
    assert m["cpu_util"] == pytest.approx(sum(u[0] for u in use) / TOTAL_CPU / n)
    assert m["mem_util"] == pytest.approx(sum(u[1] for u in use) / TOTAL_MEM / n)
    assert m["bw_util_tier1"] == pytest.approx(sum(u[2] for u in use) / TIER1_CAP / n)
    assert m["bw_util_tier2"] == pytest.approx(sum(u[3] for u in use) / TIER2_CAP / n)
    assert m["bw_util_tier3"] == 0  # no spine: a zero-capacity tier adds nothing
    assert m["single_server"] == pytest.approx(2 / 4)
    assert m["intra_rack"] == pytest.approx(1 / 4)
    assert m["neighbouring_racks"] == pytest.approx(1 / 4)
    assert m["non_neighbouring_racks"] == 0
    assert m["rack_locality"] == pytest.approx(3 / 4)
    assert m["servers_per_allocation"] == pytest.approx((2 + 1 + 1 + 2) / 4)


def test_release_happens_exactly_at_arrival_plus_holding_time():
    # request 1 (t = 2 instead of 1) still holds 4 CPU of server 2 at step 2
    reqs = [REQS[0], (4, 4, 0.25, 2), *REQS[2:]]
    ev = nara.evaluate(episode(reqs), nara.Solution(allocations=ALLOCS))
    assert not ev.feasible
    assert ev.violations == ("allocations[2]: server 2 gives 10 CPU but has 6 free",)


def test_bandwidth_is_charged_once_per_link_and_checked_with_its_tier():
    # step 0 holds 0.5 on access links 0 and 1; a second cross-rack request with b = 0.6
    # through server 1 exceeds access link 1 (0.5 free) but no rack-fabric link (2.0)
    reqs = [(2, 2, 0.5, 3), (2, 2, 0.6, 3)]
    ev = nara.evaluate(episode(reqs), nara.Solution(allocations=[
        al([0, 1], [1, 1], [1, 1]), al([1, 3], [1, 1], [1, 1])]))
    assert ev.violations == ("allocations[1]: link 1 has 0.5 free, the request needs 0.6",)
    ok = nara.evaluate(episode([(2, 2, 0.5, 3), (2, 2, 0.5, 3)]), nara.Solution(allocations=[
        al([0, 1], [1, 1], [1, 1]), al([1, 3], [1, 1], [1, 1])]))
    assert ok.feasible and ok.objective == 2
    # tier 2 after step 1: links 4 and 5 carry 0.5 each: (0 + 1.0) / 4 / 2 steps
    assert ok.metrics["bw_util_tier2"] == pytest.approx((0 + 1.0) / TIER2_CAP / 2)
    assert ok.metrics["bw_util_tier1"] == pytest.approx((1.0 + 2.0) / TIER1_CAP / 2)


def test_an_over_capacity_allocation_still_holds_its_resources():
    # 12 CPU on a 10-CPU server: infeasible, but the replay keeps charging it (the metrics
    # describe what the solution claims)
    ev = nara.evaluate(episode([(12, 1, 0.1, 2), (1, 1, 0.1, 1)]), nara.Solution(
        allocations=[al([0], [12], [1]), None]))
    assert not ev.feasible
    assert ev.violations == ("allocations[0]: server 0 gives 12 CPU but has 10 free",)
    assert ev.metrics["cpu_util"] == pytest.approx((12 + 12) / TOTAL_CPU / 2)
    # a structural error (wrong sum) is not charged
    ev = nara.evaluate(episode([(12, 1, 0.1, 2), (1, 1, 0.1, 1)]), nara.Solution(
        allocations=[al([0], [9], [1]), None]))
    assert ev.violations == ("allocations[0].cpu: sums to 9, the request needs 12",)
    assert ev.metrics["cpu_util"] == 0


def test_racks_in_different_pods_are_not_neighbours():
    two_pods = {
        "name": "two-pods",
        "nodes": [*[{"kind": "server", "cpu": 10, "mem": 10}] * 4, {"kind": "rack"},
                  {"kind": "rack"}, {"kind": "fabric"}, {"kind": "fabric"}, {"kind": "spine"}],
        "links": [{"u": 0, "v": 4, "capacity": 1.0}, {"u": 1, "v": 4, "capacity": 1.0},
                  {"u": 2, "v": 5, "capacity": 1.0}, {"u": 3, "v": 5, "capacity": 1.0},
                  {"u": 4, "v": 6, "capacity": 1.0}, {"u": 5, "v": 7, "capacity": 1.0},
                  {"u": 6, "v": 8, "capacity": 1.0}, {"u": 7, "v": 8, "capacity": 1.0}],
    }
    ev = nara.evaluate(episode([(2, 2, 0.5, 1)], two_pods), nara.Solution(
        allocations=[al([0, 3], [1, 1], [1, 1])]))
    assert ev.feasible
    assert ev.metrics["non_neighbouring_racks"] == 1 and ev.metrics["rack_locality"] == 0
    # tier 3 (fabric-spine, capacity 2 in all): both links carry 0.5 during the only step
    assert ev.metrics["bw_util_tier3"] == pytest.approx(1.0 / 2.0)


def test_nothing_accepted_and_the_length_rule():
    ev = nara.evaluate(episode(REQS), nara.Solution(allocations=[None] * 5))
    assert ev.feasible and ev.objective == 0
    assert ev.metrics["rack_locality"] == 0 and ev.metrics["servers_per_allocation"] == 0
    assert ev.metrics["cpu_util"] == 0
    ev = nara.evaluate(episode(REQS), nara.Solution(allocations=[None] * 4))
    assert not ev.feasible and ev.objective == -math.inf
    assert ev.violations == ("allocations: 4 entries, the episode has 5 requests",)


def test_violations_are_capped_at_fifty():
    reqs = [(1, 1, 0.1, 1)] * 60
    ev = nara.evaluate(episode(reqs), nara.Solution(allocations=[al([0], [2], [1])] * 60))
    assert len(ev.violations) == 50
    assert ev.violations[49] == "allocations[49].cpu: sums to 2, the request needs 1"


def test_fractional_holding_time_releases_at_the_first_step_past_it():
    # t = 1.5: request 0 holds server 0 at step 1 and is gone at step 2 (1.5 <= 2)
    inst = episode([(10, 10, 0.1, 1.5), (1, 1, 0.1, 1), (10, 10, 0.1, 1)])
    sol = [al([0], [10], [10]), al([1], [1], [1]), al([0], [10], [10])]
    assert nara.evaluate(inst, nara.Solution(allocations=sol)).feasible
    sol[1] = al([0], [1], [1])  # at step 1 server 0 is still full
    ev = nara.evaluate(inst, nara.Solution(allocations=sol))
    assert ev.violations == ("allocations[1]: server 0 gives 1 CPU but has 0 free",
                             "allocations[1]: server 0 gives 1 memory but has 0 free")


def test_locality_and_servers_per_allocation_with_one_of_each_class():
    # one single-server and one intra-rack allocation, one dropped: locality 2/2, 3/2 servers
    inst = episode([(1, 1, 0.1, 1), (2, 2, 0.1, 1), (1, 1, 0.1, 1)])
    ev = nara.evaluate(inst, nara.Solution(allocations=[
        al([0], [1], [1]), al([2, 3], [1, 1], [1, 1]), None]))
    assert ev.feasible
    assert ev.metrics["rack_locality"] == 1.0
    assert ev.metrics["servers_per_allocation"] == pytest.approx(3 / 2)
    assert ev.metrics["single_server"] == ev.metrics["intra_rack"] == pytest.approx(1 / 2)


def test_one_allocation_of_two_servers_in_a_three_request_episode():
    two_pods = {**ONE_POD, "nodes": [*ONE_POD["nodes"], {"kind": "fabric"}, {"kind": "spine"}],
                "links": [*ONE_POD["links"][:4], {"u": 4, "v": 6, "capacity": 1.0},
                          {"u": 5, "v": 7, "capacity": 1.0}, {"u": 6, "v": 8, "capacity": 1.0},
                          {"u": 7, "v": 8, "capacity": 1.0}]}
    ev = nara.evaluate(episode([(2, 2, 0.5, 5), (1, 1, 0.1, 1), (1, 1, 0.1, 1)], two_pods),
                       nara.Solution(allocations=[al([0, 3], [1, 1], [1, 1]), None, None]))
    assert ev.feasible
    assert ev.metrics["servers_per_allocation"] == 2.0
    # tier 3 (capacity 2): 1.0 in use at each of the 3 steps
    assert ev.metrics["bw_util_tier3"] == pytest.approx(3 * 1.0 / 2.0 / 3)


@pytest.mark.parametrize("none, some", [("cpu", "mem"), ("mem", "cpu")])
def test_a_topology_without_cpu_or_memory_has_zero_utilisation_of_it(none, some):
    """Servers with no CPU (or no memory) at all: that utilisation is 0, not a division by 0."""
    no_res = {**ONE_POD, "nodes": [*[{"kind": "server", none: 0, some: 10}] * 4,
                                   *ONE_POD["nodes"][4:]]}
    c, m = (0, 5) if none == "cpu" else (5, 0)
    ev = nara.evaluate(episode([(c, m, 0.1, 1)], no_res),
                       nara.Solution(allocations=[al([0], [c], [m])]))
    assert ev.feasible and ev.metrics[f"{none}_util"] == 0
    assert ev.metrics[f"{some}_util"] == pytest.approx(5 / 40)
    assert ev.metrics["rack_locality"] == 1.0  # one accepted, on one server


def test_more_entries_than_requests_and_large_episodes():
    ev = nara.evaluate(episode(REQS), nara.Solution(allocations=[None] * 6))
    assert ev.violations == ("allocations: 6 entries, the episode has 5 requests",)
    # 300 requests and entries (beyond CPython's small-int cache): the lengths match
    ev = nara.evaluate(episode([(1, 1, 0.1, 1)] * 300), nara.Solution(allocations=[None] * 300))
    assert ev.feasible and ev.objective == 0
