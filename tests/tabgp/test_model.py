"""TABGP model (paper 004): evaluator, instance rules, exact formulations, export, generators.

Every expected value is obtained independently of the code under test: by hand, by brute-force
enumeration scored with the evaluator, or by HiGHS reading an exported file.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyomo.environ as pyo
import pytest

import dmlopt
from dmlopt import solvers
from dmlopt.errors import InstanceError, ModelTooLargeError
from dmlopt.models import tabgp as M

FORMS = list(M.FORMULATIONS)


def make(**kw) -> M.Instance:
    base = {"problem": "tabgp", "n": 4, "edges": [[(0, 1), (1, 2), (2, 3)], [(0, 2)]], "l": 2,
            "k": 2, "alpha": 3.0}
    base.update(kw)
    return dmlopt.load(base)


def sol(rows) -> M.Solution:
    return M.Solution(assignment=rows)


# ------------------------------------------------------------------------------------------
# evaluator, hand-computed


def test_evaluate_unweighted_cut_and_migration():
    inst = make()
    # step 0: {0,1} | {2,3} cuts edge (1,2); step 1: {0,2} | {1,3}, edge (0,2) inside
    # vertices 1 (0 -> 1) and 2 (1 -> 0) migrate: 2 * alpha = 6
    ev = M.evaluate(inst, sol([[0, 0, 1, 1], [0, 1, 0, 1]]))
    assert ev.feasible and ev.violations == ()
    assert ev.metrics["cut_cost"] == 1
    assert ev.metrics["migrations"] == 2
    assert ev.metrics["migration_cost"] == 6
    assert ev.objective == 7


def test_evaluate_weighted_cut_and_alpha():
    inst = make(weights=[[2.5, 1.0, 4.0], [0.5]], alpha=1.5)
    # step 0: {0,3} | {1,2}: cuts (0,1) 2.5 and (2,3) 4.0; step 1: {0,3} | {1,2}: cuts (0,2) 0.5
    ev = M.evaluate(inst, sol([[0, 1, 1, 0], [0, 1, 1, 0]]))
    assert ev.metrics["cut_cost"] == pytest.approx(7.0)
    assert ev.metrics["migrations"] == 0
    assert ev.objective == pytest.approx(7.0)
    # relabelling step 1 ({1,2} is cluster 0 now) moves all four vertices: 4 * 1.5 more
    ev = M.evaluate(inst, sol([[0, 1, 1, 0], [1, 0, 0, 1]]))
    assert ev.metrics["migrations"] == 4
    assert ev.objective == pytest.approx(7.0 + 6.0)


def test_evaluate_alpha_zero_and_single_step():
    inst = make(alpha=0.0)
    ev = M.evaluate(inst, sol([[0, 0, 1, 1], [1, 1, 0, 0]]))
    assert ev.metrics["migrations"] == 4 and ev.metrics["migration_cost"] == 0
    assert ev.objective == 1 + 1  # (1,2) cut at step 0, (0,2) cut at step 1
    one = make(edges=[[(0, 1), (2, 3), (0, 3)]])
    assert M.evaluate(one, sol([[0, 0, 1, 1]])).objective == 1


def test_evaluate_capacity_violation():
    inst = make()
    ev = M.evaluate(inst, sol([[0, 0, 0, 1], [0, 0, 1, 1]]))
    assert not ev.feasible
    assert any("cluster 0 holds 3" in v and "k = 2" in v for v in ev.violations)
    assert ev.metrics["max_cluster_size"] == 3


@pytest.mark.parametrize(
    "rows, text",
    [
        ([[0, 0, 1, 1]], "1 steps"),
        ([[0, 0, 1, 1], [0, 1, 0]], "3 vertices"),
        ([[0, 0, 1, 2], [0, 0, 1, 1]], "2 is not a cluster"),
        ([[0, 0, 1, 1], [-1, 0, 1, 1]], "-1 is not a cluster"),
    ],
)
def test_evaluate_bad_shapes_and_labels(rows, text):
    ev = M.evaluate(make(), sol(rows))
    assert not ev.feasible and math.isinf(ev.objective)
    assert any(text in v for v in ev.violations), ev.violations


# ------------------------------------------------------------------------------------------
# instance rules: InstanceError naming field, value and rule


@pytest.mark.parametrize(
    "kw, field, value, text",
    [
        ({"k": 1}, "k", "1", "k*l = 2 < n = 4"),
        ({"edges": [[(0, 1), (1, 7)], []]}, "edges[0][1]", "7", "outside 0..3"),
        ({"edges": [[(0, 1)], [(-1, 2)]]}, "edges[1][0]", "-1", "outside 0..3"),
        ({"edges": [[(0, 1), (2, 2)], []]}, "edges[0][1]", "2", "self loop"),
        ({"edges": [[(0, 1), (1, 0)], []]}, "edges[0][1]", "1", "duplicates edges[0][0]"),
        ({"edges": [[(0, 1), (2, 3), (0, 1)], []]}, "edges[0][2]", "0", "duplicates edges[0][0]"),
        ({"weights": [[1.0, 0.0, 1.0], [1.0]]}, "weights[0][1]", "0", "positive"),
        ({"weights": [[1.0, 2.0, 1.0], [-3.0]]}, "weights[1][0]", "-3", "positive"),
        ({"alpha": -1.0}, "alpha", "-1", "greater than or equal to 0"),
        # weights of 1e16 beside 1: the MILP solvers proved nothing or mispriced the model
        ({"weights": [[1.0, 1e16, 1.0], [1.0]]}, "weights[0][1]", "1e+16", "at most 1e+12"),
        ({"alpha": 1e13}, "alpha", "1", "less than or equal to 1000000000000"),
        ({"weights": [[1.0, 1.0, 1.0]]}, "weights", "1 steps", "one list per step (2)"),
        ({"weights": [[1.0, 1.0], [1.0]]}, "weights[0]", "2 weights", "one weight per edge (3)"),
        ({"l": 0}, "l", "0", "greater than or equal to 1"),
    ],
)
def test_instance_rules(kw, field, value, text):
    with pytest.raises(InstanceError) as exc:
        make(**kw)
    msg = str(exc.value)
    assert msg.startswith(field + ":"), msg
    assert value in msg and text in msg, msg


# ------------------------------------------------------------------------------------------
# exact formulations against brute force


def brute_force(inst: M.Instance) -> float:
    """Minimum of the evaluator over every labelled assignment (tiny instances only)."""
    best = math.inf
    for flat in itertools.product(range(inst.l), repeat=inst.n * inst.tau):
        rows = [list(flat[t * inst.n:(t + 1) * inst.n]) for t in range(inst.tau)]
        if any(max(np.bincount(r, minlength=inst.l)) > inst.k for r in rows):
            continue
        ev = M.evaluate(inst, sol(rows))
        assert ev.feasible
        best = min(best, ev.objective)
    return best


def random_instance(rng: np.random.Generator, n: int, tau: int, l: int, p: float,
                    weighted: bool, alpha: float) -> M.Instance:
    edges, weights = [], []
    for _ in range(tau):
        es = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p]
        edges.append(es)
        weights.append([float(rng.integers(1, 6)) for _ in es])
    k = math.ceil(n / l) + int(rng.integers(0, 2))
    return dmlopt.load({"problem": "tabgp", "n": n, "edges": edges, "l": l, "k": k,
                        "alpha": alpha, "weights": weights if weighted else None})


TINY = [  # (n, tau, l, p, weighted, alpha): at most 3**8 = 6561 labelled assignments
    (5, 2, 2, 0.6, False, 3.0),
    (6, 1, 3, 0.5, True, 3.0),
    (4, 2, 3, 0.8, True, 1.5),
    (5, 2, 2, 0.5, True, 0.5),
]


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(7)
    out = []
    for spec in TINY:
        inst = random_instance(rng, *spec)
        out.append((inst, brute_force(inst)))
    return out


@pytest.mark.parametrize("formulation", FORMS)
def test_exact_equals_brute_force_highs(tiny, formulation):
    for inst, best in tiny:
        res = dmlopt.solve(inst, "highs", formulation=formulation, threads=1)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(best), (inst, formulation)


@pytest.mark.parametrize("formulation", ["paper", "strong"])
def test_exact_equals_brute_force_scip(tiny, formulation):
    for inst, best in tiny[:2]:
        res = dmlopt.solve(inst, "scip", formulation=formulation, threads=1)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(best)


def test_formulations_agree_on_random_instances():
    rng = np.random.default_rng(2024)
    for case in range(6):
        n = int(rng.integers(5, 8))
        tau = int(rng.integers(1, 4))
        l = int(rng.integers(2, 4))
        inst = random_instance(rng, n, tau, l, float(rng.uniform(0.2, 0.8)), case % 2 == 1,
                               float(rng.choice([0.0, 1.0, 3.0])))
        values = {f: dmlopt.solve(inst, "highs", formulation=f, threads=1) for f in FORMS}
        assert all(r.status == "optimal" for r in values.values())
        objs = {f: r.objective for f, r in values.items()}
        assert max(objs.values()) - min(objs.values()) < 1e-6, (case, objs)


# ------------------------------------------------------------------------------------------
# warm start, export, size


def _violated(model) -> list[str]:
    bad = []
    for c in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(c.body)
        if (c.has_lb() and body < pyo.value(c.lower) - 1e-9) or (
                c.has_ub() and body > pyo.value(c.upper) + 1e-9):
            bad.append(c.name)
    return bad


@pytest.mark.parametrize("formulation", FORMS)
def test_warm_start_is_complete_and_feasible(formulation):
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 7, "p": 0.5, "tau": 3, "l": 3},
                           seed=3)
    # labels deliberately out of canonical order: warm_start must relabel them jointly
    start = M.Solution(assignment=[[2, 2, 1, 1, 0, 0, 2], [2, 1, 1, 0, 0, 2, 2],
                                   [0, 2, 1, 1, 0, 2, 1]])
    model = M.build(inst, formulation)
    M.warm_start(model, inst, start)
    unset = [v.name for v in model.component_data_objects(pyo.Var) if v.value is None]
    assert unset == []
    assert _violated(model) == []
    assert pyo.value(model.obj) == pytest.approx(M.evaluate(inst, start).objective)
    small = random_instance(np.random.default_rng(3), 6, 2, 2, 0.5, False, 3.0)
    start = M.Solution(assignment=[[1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]])
    res = dmlopt.solve(small, "highs", formulation=formulation, threads=1, warm_start=start)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(brute_force(small))
    assert res.objective <= M.evaluate(small, start).objective


def test_warm_start_infeasible_is_refused():
    inst = make()
    with pytest.raises(InstanceError, match="warm_start: .*cluster 0 holds 3.*not a feasible"):
        dmlopt.solve(inst, "highs", formulation="strong",
                     warm_start=sol([[0, 0, 0, 1], [0, 0, 1, 1]]))


def test_warm_start_by_heuristic_name():
    inst = dmlopt.load("tabgp/er12-p03-tau1-s0")
    a = dmlopt.solve(inst, "highs", formulation="strong", threads=1, warm_start="random")
    b = dmlopt.solve(inst, "highs", formulation="strong", threads=1)
    assert a.status == b.status == "optimal" and a.objective == pytest.approx(b.objective)


def test_canonical_labels_keep_cost_and_order():
    rng = np.random.default_rng(1)
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 9, "p": 0.4, "tau": 3, "l": 4},
                           seed=1)
    for _ in range(20):
        a = np.array([rng.permutation(np.arange(9) % 4) for _ in range(3)])
        c = M.canonical_labels(a, 4)
        assert M.evaluate(inst, sol(c.tolist())).objective == pytest.approx(
            M.evaluate(inst, sol(a.tolist())).objective)
        firsts = [int(np.flatnonzero(c[0] == i)[0]) for i in range(4)]
        assert firsts == sorted(firsts)


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
@pytest.mark.parametrize("formulation", ["paper", "strong"])
def test_export_read_back_by_highspy(tmp_path, suffix, formulation):
    import highspy

    rng = np.random.default_rng(11)
    inst = random_instance(rng, 6, 2, 2, 0.5, True, 2.0)
    path = dmlopt.export(inst, tmp_path / f"m{suffix}", formulation=formulation)
    h = solvers.highspy_model()
    h.setOptionValue("threads", 1)
    solvers.prepare_highs(1)  # an earlier test of this process may have used other threads
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == pytest.approx(brute_force(inst))


@pytest.mark.parametrize("formulation", FORMS)
def test_estimate_size_is_exact(formulation):
    rng = np.random.default_rng(5)
    for inst in (random_instance(rng, 7, 3, 3, 0.4, False, 3.0),
                 make(edges=[[(0, 1)], [], [(2, 3), (1, 3)]]),
                 make(l=4, k=1)):
        model = M.build(inst, formulation)
        n_vars = sum(1 for _ in model.component_data_objects(pyo.Var))
        n_cons = sum(1 for _ in model.component_data_objects(pyo.Constraint))
        assert M.estimate_size(inst, formulation) == (n_vars, n_cons)


def test_size_guard_refuses_with_estimate():
    inst = dmlopt.load("tabgp/er12-p06-tau3-s0")
    n_vars, n_cons = M.estimate_size(inst, "strong")
    with pytest.raises(ModelTooLargeError) as exc:
        dmlopt.solve(inst, "highs", formulation="strong", size_limit=(100, 100))
    assert f"{n_vars:,}" in str(exc.value) and f"{n_cons:,}" in str(exc.value)
    big = dmlopt.generate("tabgp", {"generator": "er", "n": 40, "p": 0.1, "tau": 2, "l": 4},
                          seed=0)
    with pytest.raises(ModelTooLargeError):  # C(40, 10) vertex sets: refused before building
        dmlopt.solve(big, "highs", formulation="clusters")


# ------------------------------------------------------------------------------------------
# generators and shipped data


def test_er_generator_deterministic_and_capacity():
    spec = {"generator": "er", "n": 12, "p": 0.4, "tau": 3, "l": 5}
    a, b = dmlopt.generate("tabgp", spec, seed=4), dmlopt.generate("tabgp", spec, seed=4)
    assert a == b and a != dmlopt.generate("tabgp", spec, seed=5)
    assert a.k == 3 and a.alpha == 3.0 and a.tau == 3  # ceil(12 / 5)
    assert dmlopt.generate("tabgp", {**spec, "a": 2.1}, seed=0).k == 6  # ceil(25.2 / 5)
    # a capacity above n is n: a = 4.5 gives ceil(10.8) = 11 < 12, a = 4.9 ceil(11.76) = 12,
    # a = 6 and a = 1e308 (a n overflowed a float: OverflowError) both n
    for aug, k in ((4.5, 11), (4.9, 12), (6, 12), (1e308, 12)):
        assert dmlopt.generate("tabgp", {**spec, "a": aug}, seed=0).k == k, aug
    big = dmlopt.generate("tabgp", {"generator": "drift", "n": 30, "tau": 2, "l": 3, "m": 40,
                                    "a": 1e308}, seed=0)
    assert big.k == 30
    m = [len(e) for e in dmlopt.generate("tabgp", {**spec, "p": 1.0}, seed=0).edges]
    assert m == [66, 66, 66]
    assert all(len(e) == 0 for e in dmlopt.generate("tabgp", {**spec, "p": 0.0}, seed=0).edges)


def test_drift_generator_deterministic_and_capacity():
    spec = {"generator": "drift", "n": 60, "tau": 3, "l": 7, "m": 150, "weighted": True}
    a, b = dmlopt.generate("tabgp", spec, seed=1), dmlopt.generate("tabgp", spec, seed=1)
    assert a == b and a != dmlopt.generate("tabgp", spec, seed=2)
    assert a.k == math.ceil(60 / 7) and [len(e) for e in a.edges] == [150] * 3
    assert all(w >= 1 for ws in a.weights for w in ws)


def test_shipped_instances_are_the_paper_generator():
    for p in (0.3, 0.6):
        for tau in (1, 3):
            name = f"er12-p{int(p * 10):02d}-tau{tau}-s0"
            got = dmlopt.load(f"tabgp/{name}")
            want = dmlopt.generate("tabgp", {"generator": "er", "n": 12, "p": p, "tau": tau,
                                             "l": 4}, seed=0)
            assert got.edges == want.edges and (got.n, got.l, got.k, got.alpha) == (12, 4, 3, 3)
