"""TABGP evaluator (paper 004, section 1) on hand-made solutions: the infeasible shapes and
labels it must refuse, the messages it gives, and the cap on listed violations. Written from
mutation testing (``make mutation TARGETS=tabgp``): each test names the mutant it kills."""

from __future__ import annotations

from dmlopt.models.tabgp import Instance, Solution, evaluate

# 4 vertices, 2 steps, l = 2 clusters of at most k = 2, alpha = 3: step 0 edges (0,1), (2,3);
# step 1 edge (0,2)
INST = Instance(n=4, edges=[[[0, 1], [2, 3]], [[0, 2]]], l=2, k=2, alpha=3.0)


def test_hand_computed_objective():
    # step 0: {0,1} {2,3}: no cut; step 1: {0,2} together: 0 and 2 move -> 2 migrations
    ev = evaluate(INST, Solution(assignment=[[0, 0, 1, 1], [0, 1, 0, 1]]))
    assert ev.feasible and ev.objective == 3.0 * 2
    assert ev.metrics["cut_cost"] == 0 and ev.metrics["migrations"] == 2
    assert ev.metrics["max_cluster_size"] == 2


def test_too_many_steps_or_vertices_is_infeasible():
    """Kills ``len(rows) != tau`` -> ``<`` and ``len(row) != n`` -> ``<``."""
    ev = evaluate(INST, Solution(assignment=[[0, 0, 1, 1]] * 3))
    assert not ev.feasible and "3 steps, the instance has 2" in ev.violations[0]
    ev = evaluate(INST, Solution(assignment=[[0, 0, 1, 1, 1], [0, 0, 1, 1]]))
    assert not ev.feasible and "5 vertices, the instance has 4" in ev.violations[0]


def test_a_label_above_l_is_refused_and_named():
    """Kills ``assign >= l`` -> ``== l`` (label l + 1) and every operator on the ``l - 1`` of
    the message (l = 4: ``l >> 1`` would equal ``l - 1`` at l = 2)."""
    four = Instance(n=4, edges=[[[0, 1]]], l=4, k=1, alpha=1.0)
    ev = evaluate(four, Solution(assignment=[[0, 1, 2, 5]]))
    assert not ev.feasible
    assert ev.violations == ("assignment[0][3]: 5 is not a cluster 0..3",)


def test_at_most_ten_violations_of_each_kind_are_listed():
    """Kills the ``[:10]`` caps turned into 9 or 11 (labels and capacities)."""
    big = Instance(n=24, edges=[[], []], l=2, k=12, alpha=1.0)
    labels = evaluate(big, Solution(assignment=[[5] * 24, [0] * 24]))
    assert not labels.feasible and len(labels.violations) == 10
    # 12 steps x 2 clusters over capacity: 24 violations found, 10 listed per step
    cap = Instance(n=24, edges=[[]] * 2, l=24, k=1, alpha=1.0)
    rows = [[v // 2 for v in range(24)]] * 2  # 12 clusters of 2 > k = 1 in each step
    ev = evaluate(cap, Solution(assignment=rows))
    assert not ev.feasible and len(ev.violations) == 20
    assert ev.violations[0] == "assignment[0]: cluster 0 holds 2 vertices, above k = 1"
