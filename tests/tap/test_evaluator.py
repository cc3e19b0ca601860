"""TAP evaluator (paper 000, objective (8), constraints (11)-(12)) on hand-made instances: the
objective and metrics by hand, and the infeasible assignments it must refuse with their
messages. Written from mutation testing (``make mutation TARGETS=tap``)."""

from __future__ import annotations

import itertools
import math

from dmlopt.models.tap import Instance, Solution, evaluate

# traffic with a non-zero diagonal (a module's traffic to itself costs nothing: D has a zero
# diagonal, and it is no traffic between modules)
M = [[1, 2, 0], [2, 0, 3], [0, 3, 0]]
D = [[0, 1, 2, 5], [1, 0, 3, 4], [2, 3, 0, 6], [5, 4, 6, 0]]
INST = Instance(M=M, D=D, K=2)


def by_hand(assign: list[int]) -> float:
    return float(sum(M[i][j] * D[assign[i]][assign[j]] for i, j in
                     itertools.product(range(3), repeat=2)))


def test_objective_and_metrics_by_hand():
    """Kills every mutant of ``total = sum(M) - trace(M)`` and of ``mean_hops`` (a diagonal
    entry M[0][0] = 1 makes the trace matter) and ``vms_used``/``max_load``."""
    for assign in ([0, 1, 2], [3, 3, 1], [2, 0, 0]):
        ev = evaluate(INST, Solution(assignment=assign))
        assert ev.feasible and ev.objective == by_hand(assign)
        between = sum(M[i][j] for i in range(3) for j in range(3) if i != j)  # 10
        assert ev.metrics["mean_hops"] == by_hand(assign) / between
        assert ev.metrics["max_load"] == max(assign.count(v) for v in range(4))
        assert ev.metrics["vms_used"] == len(set(assign))


def test_mean_hops_without_traffic_is_zero():
    quiet = Instance(M=[[0, 0], [0, 0]], D=[[0, 1], [1, 0]], K=1)
    ev = evaluate(quiet, Solution(assignment=[0, 1]))
    assert ev.feasible and ev.objective == 0 and ev.metrics["mean_hops"] == 0.0


def test_wrong_length_is_infeasible():
    """Kills ``len(a) != m`` -> ``<`` and the ``False`` of the early return."""
    for assign in ([0, 1], [0, 1, 2, 3]):
        ev = evaluate(INST, Solution(assignment=assign))
        assert ev.feasible is False and math.isinf(ev.objective)
        assert ev.violations == (f"assignment: {len(assign)} modules, the instance has 3 (12)",)


def test_vm_out_of_range_is_named():
    """Kills ``arr >= n`` -> ``> n`` (VM n), ``arr < 0`` -> ``< -1`` (VM -1) and every operator
    on the message's ``n - 1`` (n = 4)."""
    ev = evaluate(INST, Solution(assignment=[0, 4, 1]))
    assert not ev.feasible and ev.violations == ("assignment[1]: 4 is not a VM 0..3 (12)",)
    ev = evaluate(INST, Solution(assignment=[-1, 0, 1]))
    assert not ev.feasible and ev.violations == ("assignment[0]: -1 is not a VM 0..3 (12)",)


def test_at_most_ten_violations_of_each_kind_are_listed():
    """Kills the ``[:10]`` caps turned into 9 or 11 (VM range and capacity)."""
    m = 24
    big = Instance(M=[[0] * m for _ in range(m)], D=[[0 if i == j else 1 for j in range(m)]
                                                      for i in range(m)], K=1)
    ev = evaluate(big, Solution(assignment=[m + 5] * m))
    assert not ev.feasible and len(ev.violations) == 10
    ev = evaluate(big, Solution(assignment=[v // 2 for v in range(m)]))  # 12 VMs hold 2 > K
    assert not ev.feasible and len(ev.violations) == 10
    assert ev.violations[0] == "VM 0 holds 2 modules, above K = 1 (11)"


def test_length_rule_compares_values_not_objects():
    """Kills ``len(a) != m`` -> ``is not``: 300 modules (beyond CPython's small-int cache)."""
    m = 300
    big = Instance(M=[[0.0] * m for _ in range(m)],
                   D=[[float(i != j) for j in range(m)] for i in range(m)], K=1)
    ev = evaluate(big, Solution(assignment=list(range(m))))
    assert ev.feasible and ev.objective == 0


def test_mean_hops_with_less_than_one_unit_of_traffic():
    """Kills ``total > 0`` -> ``total > 1``: 0.25 + 0.25 units between two modules 3 hops
    apart give (0.25 + 0.25) * 3 / 0.5 = 3 hops on average."""
    light = Instance(M=[[0, 0.25], [0.25, 0]], D=[[0, 3], [3, 0]], K=1)
    ev = evaluate(light, Solution(assignment=[0, 1]))
    assert ev.objective == 1.5 and ev.metrics["mean_hops"] == 3.0
