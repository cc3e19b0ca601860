"""TAP (paper 000, section IV): instance rules, evaluator, formulations vs brute force,
heuristics, QAPLIB reader, LP export."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import dmlopt
from dmlopt.errors import InstanceError, SolverError
from dmlopt.heuristics import tap as heur
from dmlopt.heuristics.tap import search as ts
from dmlopt.models import tap
from dmlopt.models.tap import qaplib

HEURISTICS = sorted(heur.HEURISTICS)


def brute_force(inst: tap.Instance) -> float:
    """Optimum of (8)-(12) by enumerating every assignment with the capacity (11)."""
    m, n = inst.m, inst.n
    best = math.inf
    mm, d = inst.traffic, inst.distance
    for a in itertools.product(range(n), repeat=m):
        if max(np.bincount(a, minlength=n)) > inst.K:
            continue
        a = np.asarray(a)
        best = min(best, float((mm * d[np.ix_(a, a)]).sum()))
    return best


def make(M, D, K=1, **kw):
    return dmlopt.load({"problem": "tap", "M": M, "D": D, "K": K, **kw})


def tiny_instances():
    out = [dmlopt.generate("tap", {"generator": "random", "m": m, "n": n, "K": K}, seed=s)
           for s, (m, n, K) in enumerate([(4, 5, 1), (5, 5, 1), (4, 3, 2), (5, 3, 2)])]
    # identical modules (the class formulation aggregates them)
    out.append(dmlopt.generate("tap", {"generator": "dc", "topology": "leaf-spine", "leaves": 3,
                                       "spines": 1, "servers_per_leaf": 2, "overlay": "allreduce",
                                       "modules": 4}, seed=0))
    out.append(dmlopt.generate("tap", {"generator": "dc", "topology": "dcell", "dcell_n": 2,
                                       "overlay": "ps", "modules": 4, "vms": 6}, seed=1))
    out.append(dmlopt.generate("tap", {"generator": "dc", "topology": "leaf-spine", "leaves": 3,
                                       "spines": 1, "servers_per_leaf": 2, "overlay": "ps",
                                       "modules": 5, "K": 2}, seed=0))
    return out


TINY = tiny_instances()
OPT = [brute_force(inst) for inst in TINY]


# ---------------------------------------------------------------------------- instance rules


def test_m_above_nK_is_an_error_that_says_so():
    with pytest.raises(InstanceError, match=r"m = 3 modules > n\*K = 2.*no solution"):
        make([[0, 1, 1], [0, 0, 1], [0, 0, 0]], [[0, 1], [1, 0]], K=1)


@pytest.mark.parametrize("data, text", [
    ({"K": 0}, "K"),
    ({"M": [[0, -1], [0, 0]]}, "M[0][1]"),
    ({"M": [[0, 1]]}, "M[0]"),
    ({"D": [[0, 1], [2, 0]]}, "symmetric"),
    ({"D": [[1, 1], [1, 0]]}, "D[0][0]"),
    ({"D": [[0, float("nan")], [1, 0]]}, "finite"),
    ({"D": None}, "D"),
    ({"clusters": [0]}, "clusters"),
    # finite entries whose objective would not be exact (or finite) in a float: 1e308 x 2
    ({"M": [[0, 1e308], [0, 0]], "D": [[0, 2], [2, 0]]}, "above 2^53"),
    ({"M": [[0, 2.0**52], [2.0**52, 0]], "D": [[0, 2], [2, 0]]}, "above 2^53"),
])
def test_bad_instances(data, text):
    base = {"problem": "tap", "M": [[0, 1], [0, 0]], "D": [[0, 1], [1, 0]], "K": 1}
    base.update(data)
    with pytest.raises(InstanceError) as err:
        dmlopt.load(base)
    assert text in str(err.value)


def test_objective_limit_is_inclusive():
    # sum(M) x max(D) = 2^52 x 2 = 2^53 exactly: accepted, and the objective of either
    # assignment is 2^52 x 2 = 2^53, exact in a float
    inst = dmlopt.load({"problem": "tap", "M": [[0, 2.0**52], [0, 0]], "D": [[0, 2], [2, 0]],
                        "K": 1})
    assert tap.cost(inst, np.array([0, 1])) == 2.0**53


def test_underlay_json_derives_hop_counts():
    inst = dmlopt.load({
        "problem": "tap", "M": [[0, 2, 0], [0, 0, 1], [0, 0, 0]], "K": 1,
        "underlay": {"edges": [["a", "s"], ["b", "s"], ["s", "t"], ["t", "c"]],
                     "servers": ["a", "b", "c"]},
        "vms": ["a", "b", "c"]})
    assert inst.distance.tolist() == [[0, 2, 3], [2, 0, 3], [3, 3, 0]]
    assert inst.cluster_labels.tolist() == [0, 0, 1]
    # round trip through JSON keeps the underlay, not D
    data = json.loads(inst.model_dump_json(exclude_none=True))
    assert "D" not in data
    assert dmlopt.load(data).distance.tolist() == inst.distance.tolist()


def test_disconnected_vms_are_named():
    with pytest.raises(InstanceError, match=r"\['c', 'd'\] cannot reach VM 'a'"):
        dmlopt.load({"problem": "tap", "M": [[0, 1], [0, 0]], "vms": ["a", "b", "c", "d"],
                     "underlay": {"edges": [["a", "b"], ["c", "d"]]}})


@pytest.mark.parametrize("data, text", [
    ({"vms": ["a", "zz"]}, "vms[1]: 'zz' is not a node"),
    ({"vms": ["a", "a"]}, "repeats"),
    ({"vms": None}, "vms"),
    ({"D": [[0, 1], [1, 0]]}, "must be omitted"),
])
def test_bad_underlay(data, text):
    base = {"problem": "tap", "M": [[0, 1], [0, 0]], "vms": ["a", "b"],
            "underlay": {"edges": [["a", "s"], ["s", "b"]]}}
    base.update(data)
    with pytest.raises(InstanceError) as err:
        dmlopt.load(base)
    assert text in str(err.value)


# ------------------------------------------------------------------------------- evaluator


def test_evaluate_is_equation_8_over_ordered_pairs():
    inst = make([[0, 3, 0], [1, 0, 2], [0, 0, 0]], [[0, 1, 4], [1, 0, 2], [4, 2, 0]], K=2)
    # modules 0, 1 on VM 0 and module 2 on VM 2: M01 D00 + M10 D00 + M12 D02 = 2 * 4
    ev = dmlopt.evaluate(inst, {"assignment": [0, 0, 2]})
    assert ev.feasible and ev.objective == 8.0
    assert ev.metrics["max_load"] == 2 and ev.metrics["vms_used"] == 2
    ev = dmlopt.evaluate(inst, {"assignment": [0, 1, 2]})
    assert ev.objective == 3 * 1 + 1 * 1 + 2 * 2


def test_evaluate_flags_capacity_and_range():
    inst = make([[0, 1], [0, 0]], [[0, 1], [1, 0]], K=1)
    ev = dmlopt.evaluate(inst, {"assignment": [1, 1]})
    assert not ev.feasible and "above K = 1 (11)" in ev.violations[0]
    ev = dmlopt.evaluate(inst, {"assignment": [0, 5]})
    assert not ev.feasible and "not a VM" in ev.violations[0]
    ev = dmlopt.evaluate(inst, {"assignment": [0]})
    assert not ev.feasible and "(12)" in ev.violations[0]


# ------------------------------------------------------------------------- exact formulations


@pytest.mark.parametrize("k", range(len(TINY)))
@pytest.mark.parametrize("formulation, solver", [
    ("paper", "scip"), ("rlt", "highs"), ("rlt", "scip"), ("class", "highs"), ("class", "scip"),
])
def test_formulations_equal_brute_force(k, formulation, solver):
    res = dmlopt.solve(TINY[k], solver, formulation=formulation, threads=1, time_limit=60)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(OPT[k])


def test_paper_formulation_refuses_highs():
    with pytest.raises(SolverError, match="cannot solve the tap 'paper' formulation"):
        dmlopt.solve(TINY[0], "highs", formulation="paper")


def test_module_classes():
    ar = dmlopt.generate("tap", {"generator": "dc", "overlay": "allreduce"}, seed=0)
    ps = dmlopt.generate("tap", {"generator": "dc", "overlay": "ps"}, seed=0)
    assert tap.module_classes(ar) == [list(range(8))]
    assert tap.module_classes(ps) == [[0], list(range(1, 8))]
    ring = dmlopt.generate("tap", {"generator": "dc", "overlay": "ring", "modules": 5}, seed=0)
    assert all(len(c) == 1 for c in tap.module_classes(ring))


def test_module_classes_are_interchangeable():
    rng = np.random.default_rng(0)
    for _ in range(5):
        w = rng.integers(0, 3, (7, 7)).astype(float)
        w[:, 4] = w[:, 5] = w[:, 6] = 2.0  # modules 4, 5, 6 look alike to every other module
        w = np.triu(w, 1)
        d = np.triu(rng.integers(1, 6, (8, 8)), 1)
        inst = make(w.tolist(), (d + d.T).tolist(), K=1)
        classes = tap.module_classes(inst)
        assert any({4, 5, 6} <= set(c) for c in classes)
        assert sorted(i for c in classes for i in c) == list(range(7))
        for members in classes:
            for a, b in itertools.combinations(members, 2):
                for _ in range(5):
                    p = rng.permutation(8)[:7]
                    q = p.copy()
                    q[a], q[b] = p[b], p[a]
                    assert tap.cost(inst, p) == tap.cost(inst, q)


def test_warm_start_sets_a_feasible_point():
    import pyomo.environ as pyo

    inst = TINY[-2]
    sol = heur.abm(inst)
    for formulation in ("rlt", "class"):
        model = tap.build(inst, formulation)
        tap.warm_start(model, inst, sol)
        obj = next(model.component_data_objects(pyo.Objective))
        assert pyo.value(obj) == pytest.approx(dmlopt.evaluate(inst, sol).objective)
        assert tap.decode(model, inst).assignment is not None


def test_export_lp_files_reproduce_the_optimum(tmp_path):
    import highspy
    import pyscipopt

    inst, opt = TINY[1], OPT[1]
    minlp = dmlopt.export(inst, tmp_path / "tap_paper.lp", formulation="paper")
    scip = pyscipopt.Model()
    scip.hideOutput()
    scip.readProblem(str(minlp))
    scip.optimize()
    assert scip.getObjVal() == pytest.approx(opt)
    for suffix in ("lp", "mps"):
        lin = dmlopt.export(inst, tmp_path / f"tap_rlt.{suffix}", formulation="rlt")
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.readModel(str(lin))
        h.run()
        assert h.getInfo().objective_function_value == pytest.approx(opt)


# ------------------------------------------------------------------------------ heuristics


@pytest.mark.parametrize("name", HEURISTICS)
def test_heuristics_feasible_and_never_below_optimum(name):
    for inst, opt in zip(TINY, OPT, strict=True):
        for seed in (0, 1):
            res = dmlopt.heuristic(inst, name, seed=seed)
            assert res.status == "feasible", res.message
            assert res.objective >= opt - 1e-9


def test_search_heuristics_find_tiny_optima():
    for inst, opt in zip(TINY, OPT, strict=True):
        assert dmlopt.heuristic(inst, "tabu").objective == pytest.approx(opt)
        assert dmlopt.heuristic(inst, "tabu", engine="numpy", rounds=2).objective == (
            pytest.approx(opt))


def test_local_search_takes_any_start():
    inst = TINY[0]
    start = heur.cle(inst)
    res = dmlopt.heuristic(inst, "local-search", start=start.assignment, restarts=0)
    assert res.objective <= dmlopt.evaluate(inst, start).objective
    with pytest.raises(InstanceError, match="start"):
        heur.local_search(inst, start="nope")
    with pytest.raises(InstanceError, match="infeasible"):
        heur.local_search(inst, start=[0] * inst.m)


def test_swap_deltas_match_recomputation():
    inst = TINY[3]  # K = 2: padded with dummies and same-VM slots
    qap = ts.padded(inst.traffic, inst.distance, inst.K)
    rng = np.random.default_rng(0)
    perm = rng.permutation(qap.size)
    d = ts.deltas(qap.F, qap.B, perm)
    base = ts.total(qap, perm)
    for r in range(qap.size):
        for s in range(qap.size):
            p2 = perm.copy()
            p2[r], p2[s] = p2[s], p2[r]
            # the diagonal (a module swapped with itself) changes nothing: delta 0
            assert d[r, s] == pytest.approx(ts.total(qap, p2) - base, abs=1e-9)
    a = ts.to_assignment(qap, perm)
    assert ts.total(qap, perm) == pytest.approx(dmlopt.evaluate(inst, {"assignment": a}).objective)


def test_abm_and_cle_by_hand():
    # fat-tree k=4; VMs: two under edge e0.0 (cluster A), two under e1.0 (cluster B), one under
    # e0.1 (cluster C); all-reduce over 4 modules, every pair weight 1.
    vms = ["h0.0.0", "h0.0.1", "h1.0.0", "h1.0.1", "h0.1.0"]
    inst = dmlopt.generate("tap", {"generator": "dc", "overlay": "allreduce", "modules": 4,
                                   "vms": vms}, seed=0)
    assert inst.cluster_labels.tolist() == [0, 0, 1, 1, 2]
    # ABM: average hops 4.5, 4.5, 5, 5, 5 -> the first four VMs in order
    assert heur.abm(inst).assignment == [0, 1, 2, 3]
    # CLE: link (0,1) fills cluster A; (0,2) and (0,3) go to the next cluster with room, B
    assert heur.cle(inst).assignment == [0, 1, 2, 3]
    assert dmlopt.evaluate(inst, heur.cle(inst)).objective == 2 + 2 + 4 * 6
    # PS: module 0 has the largest average traffic and gets the VM with the smallest average
    ps = dmlopt.generate("tap", {"generator": "dc", "overlay": "ps", "modules": 3,
                                 "vms": ["h1.0.0", "h0.0.0", "h0.0.1", "h0.1.0"]}, seed=0)
    # averages: h1.0.0 6, h0.0.0 (6+2+4)/3 = 4, h0.0.1 4, h0.1.0 (6+4+4)/3 = 4.67
    assert heur.abm(ps).assignment == [1, 2, 3]


# --------------------------------------------------------------------------------- QAPLIB


def test_nug12_published_permutation_is_578():
    inst = qaplib.load("nug12")
    obj, perm = qaplib.solution("nug12")
    assert obj == 578
    assert dmlopt.evaluate(inst, {"assignment": perm}).objective == 578


def test_every_shipped_solution_evaluates_to_its_value():
    names = qaplib.names()
    assert len(names) == 76
    # published quirks (data/qaplib/README.md): inverse permutations, kra32's listed value
    inverse, kra32 = {"kra30a", "tai80a", "tho30"}, "kra32"
    for name in names:
        inst = qaplib.load(name)
        obj, perm = qaplib.solution(name)
        assert inst.K == 1 and inst.m == inst.n
        if name in inverse:
            perm = np.argsort(perm).tolist()
        value = dmlopt.evaluate(inst, {"assignment": perm}).objective
        if name == kra32:
            assert (obj, value) == (88900, 88700)
        else:
            assert value == obj, name
        assert qaplib.best_known(name) == min(obj, value)


def test_qaplib_generator_and_swapped_roles(tmp_path):
    assert dmlopt.generate("tap", {"generator": "qaplib", "name": "had12"}).m == 12
    # B asymmetric, A symmetric: roles swap and the permutation is inverted
    a = np.array([[0, 2, 1], [2, 0, 5], [1, 5, 0]])
    b = np.array([[0, 1, 7], [3, 0, 1], [2, 4, 0]])
    text = "3\n" + "\n".join(" ".join(map(str, r)) for r in [*a, *b])
    (tmp_path / "x.dat").write_text(text)
    perm = [2, 0, 1]
    value = int(sum(a[i, j] * b[perm[i], perm[j]] for i in range(3) for j in range(3)))
    (tmp_path / "x.sln").write_text(f"3 {value}\n 3 1 2\n")
    inst = qaplib.load(tmp_path / "x.dat")
    assert inst.name.endswith("swapped")
    obj, assign = qaplib.solution(tmp_path / "x.sln")
    assert dmlopt.evaluate(inst, {"assignment": assign}).objective == obj == value


@pytest.mark.parametrize("text, rule", [
    ("2\n0 1 1 0\n0 1 1", r"expected 2\*n\*n"),
    ("x\n", "must start with the size"),
    ("2\n0 1 1 0\n0 a 1 0", "non-numeric"),
    ("99999\n", "too large"),
    ("", "is empty"),
])
def test_qaplib_bad_files(tmp_path, text, rule):
    from dmlopt.errors import DmloptError

    path = tmp_path / "bad.dat"
    path.write_text(text)
    with pytest.raises(DmloptError, match=rule):  # InstanceError, or a size refused
        qaplib.read_dat(path)


# ----------------------------------------------------------------------------- generators


def test_dc_generator():
    a = dmlopt.generate("tap", {"generator": "dc", "topology": "dcell", "overlay": "allreduce",
                                "vms": 12}, seed=3)
    b = dmlopt.generate("tap", {"generator": "dc", "topology": "dcell", "overlay": "allreduce",
                                "vms": 12}, seed=3)
    assert a == b and a.n == 12 and a.m == 8
    assert a.distance.max() <= 5
    full = dmlopt.generate("tap", {"generator": "dc"}, seed=0)
    assert full.n == 16 and set(np.unique(full.distance)) == {0, 2, 4, 6}
    assert int((full.traffic > 0).sum()) == 7  # PS: one link per worker, counted once
    with pytest.raises(InstanceError, match="spec.vms"):
        dmlopt.generate("tap", {"generator": "dc", "vms": 99})
    with pytest.raises(InstanceError, match="topology"):
        dmlopt.generate("tap", {"generator": "dc", "topology": "torus"})
    with pytest.raises(InstanceError, match="overlay"):
        dmlopt.generate("tap", {"generator": "dc", "overlay": "mesh"})
    with pytest.raises(InstanceError, match="K"):
        dmlopt.generate("tap", {"generator": "dc", "vms": 4})


def test_overlay_matrices():
    assert int((tap.overlay_matrix("allreduce", 8) > 0).sum()) == 28
    assert int((tap.overlay_matrix("ring", 5) > 0).sum()) == 5
    assert int((tap.overlay_matrix("ring", 2) > 0).sum()) == 1
    r = tap.overlay_matrix("random", 6, p=1.0, rng=np.random.default_rng(0))
    assert int((r > 0).sum()) == 15 and r.max() <= 10


def test_a_capacity_above_m_is_capacity_m():
    # K = 2^53 made Cluster Embedding build an array of K entries per VM (MemoryError); no VM
    # ever holds more than the m modules, so every heuristic gives what it gives for K = m
    spec = json.loads(dmlopt.io.to_json(dmlopt.generate("tap", {"generator": "random", "m": 6,
                                                                "n": 6}, seed=3)))
    wide = dmlopt.load({**spec, "K": 2**53})
    tight = dmlopt.load({**spec, "K": 6})
    for name in ("cle", "abm", "random", "local-search"):
        a = dmlopt.heuristic(wide, name, seed=0)
        b = dmlopt.heuristic(tight, name, seed=0)
        assert a.solution.assignment == b.solution.assignment, name


def test_a_traffic_sum_beyond_the_float_range_is_refused_without_a_warning():
    # entries of 1e308 sum to inf: numpy's overflow warning reached the CLI's stderr beside
    # the one-line refusal
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InstanceError, match="above 2\\^53"):
            dmlopt.load({"problem": "tap", "M": [[0, 1e308], [1e308, 0]],
                         "D": [[0, 1], [1, 0]], "K": 1})
