"""Hostile but schema-valid instances and options of each problem: refused quickly by the
instance rules or the estimates, or evaluated cheaply; bad option values name the option.

Papers: 000 (TAP and topology inference), 001 (Nara, Shabka and Zervas), 002 (INC/OXC, Dong et
al.), 003 (RAR, Chen et al.), 004 (TABGP). The checks every problem gets are in
tests/core/test_contract_entries.py.
"""

from __future__ import annotations

import dataclasses
import time
import tracemalloc

import numpy as np
import pytest

import dmlopt
from dmlopt import registry
from dmlopt.cli import main
from dmlopt.contract import DEFAULT_LIMITS, Heuristic
from dmlopt.errors import InstanceError, ModelTooLargeError
from dmlopt.heuristics import inc_oxc as HI
from dmlopt.heuristics import rar as HR
from dmlopt.models import inc_oxc as MI
from dmlopt.models import nara as MN
from dmlopt.models import rar as MR
from dmlopt.models.inc_oxc import instance as MI_I
from dmlopt.models.nara import formulations as MN_F
from dmlopt.models.nara import topology as _nara_topo
from dmlopt.models.rar import evaluation as MR_E
from dmlopt.models.rar import formulations as MR_F
from dmlopt.validation import parse


def _boom(*_args, **_kwargs):
    raise AssertionError("ran although the estimate should have refused it")


# --------------------------------------------------------------------------------------------
# hostile instances: refused quickly or evaluated cheaply


def _nara_star(racks: int) -> dict:
    """One server per rack, every rack on one fabric switch: a few hundred KB of JSON."""
    nodes = [{"kind": "server", "cpu": 10, "mem": 10}] * racks + [{"kind": "rack"}] * racks
    nodes += [{"kind": "fabric"}]
    links = [{"u": s, "v": racks + s, "capacity": 1.0} for s in range(racks)]
    links += [{"u": racks + r, "v": 2 * racks, "capacity": 1.0} for r in range(racks)]
    return {"problem": "nara", "topology": {"nodes": nodes, "links": links},
            "requests": [{"c": 1, "m": 1, "b": 0.1, "t": 1}]}


def test_nara_many_racks_refused_before_the_paths_are_built(monkeypatch):
    inst = MN.Instance.model_validate(_nara_star(3000))
    monkeypatch.setattr(_nara_topo, "build_net", _boom)
    t0 = time.perf_counter()
    with pytest.raises(ModelTooLargeError, match="candidate paths"):
        dmlopt.heuristic(inst, "netfit")
    sol = MN.Solution(allocations=[None])
    with pytest.raises(ModelTooLargeError):
        dmlopt.evaluate(inst, sol)
    with pytest.raises(ModelTooLargeError):
        dmlopt.solve(inst, formulation="offline")
    assert time.perf_counter() - t0 < 5


def test_nara_net_estimate_grows_with_racks():
    a, b = (MN.net_size(MN.Instance.model_validate(_nara_star(r))) for r in (10, 100))
    assert a.memory < b.memory and a.work < b.work


def test_nara_path_search_budget_is_per_rack_over_all_hop_limits(monkeypatch):
    # two racks joined by a chain of 400 switches: one hop limit per pass, 200 passes of up
    # to 400 steps each; a budget of 5,000 steps per rack over all passes refuses it
    n = 400
    nodes = [{"kind": "server", "cpu": 10, "mem": 10}] * 2 + [{"kind": "rack"}] * 2
    nodes += [{"kind": "fabric"}] * n
    links = [{"u": 0, "v": 2, "capacity": 1.0}, {"u": 1, "v": 3, "capacity": 1.0},
             {"u": 2, "v": 4, "capacity": 1.0}]
    links += [{"u": 4 + i, "v": 5 + i, "capacity": 1.0} for i in range(n - 1)]
    links += [{"u": 3 + n, "v": 3, "capacity": 1.0}]
    data = {"problem": "nara", "topology": {"nodes": nodes, "links": links},
            "requests": [{"c": 1, "m": 1, "b": 0.1, "t": 1}]}
    monkeypatch.setattr(_nara_topo, "MAX_PATH_STEPS", 5_000)
    with pytest.raises(InstanceError, match="too many candidate paths"):
        dmlopt.heuristic(MN.Instance.model_validate(data), "netfit")
    monkeypatch.setattr(_nara_topo, "MAX_PATH_STEPS", 200_000)
    res = dmlopt.heuristic(MN.Instance.model_validate(data), "netfit")
    assert res.feasible


def test_nara_evaluator_counts_route_pairs_before_listing_them(monkeypatch):
    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 1}, seed=0)
    from itertools import combinations as real

    def small_only(items, r):
        items = list(items)
        assert len(items) <= 8, "listed the pairs of a long server list"
        return real(items, r)

    from dmlopt.models.nara import evaluation as nara_evaluation  # where evaluate lists pairs

    monkeypatch.setattr(nara_evaluation, "combinations", small_only)
    S = inst.net.n_servers
    al = MN.Allocation(servers=list(range(S)), cpu=[1] * S, mem=[1] * S, routes=[])
    ev = MN.evaluate(inst, MN.Solution(allocations=[al]))
    assert not ev.feasible
    assert any(f"0 routes for {S * (S - 1) // 2} server pairs" in v for v in ev.violations)


def test_nara_offline_size_does_not_list_active_sets(monkeypatch):
    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 20}, seed=0)
    expected = MN_F._size(inst, 20, 0, sum(1 for a in inst.active_sets() if a))
    monkeypatch.setattr(MN.Instance, "active_sets", _boom)
    assert MN.estimate_size(inst, "offline") == expected


def _inc_oxc(racks: int) -> dict:
    rack = {"cpu": 10, "gpu": 10, "mem": 10}
    job = {"data": 100, "ps_cpu": 1, "ps_mem": 1, "workers": [{"cpu": 1, "gpu": 1, "mem": 1}]}
    return {"problem": "inc_oxc", "racks": [rack] * racks, "n_tor": 4, "port_bw": 100.0,
            "jobs": [job]}


def test_inc_oxc_racks_bounded_by_the_instance():
    with pytest.raises(InstanceError, match="racks"):
        parse(MI.Instance, _inc_oxc(MI.MAX_RACKS + 1))
    assert parse(MI.Instance, _inc_oxc(8)).n_racks == 8


def test_inc_oxc_time_shared_oxc_costs_what_it_lists(monkeypatch):
    inst = MI.Instance.model_validate(_inc_oxc(4))
    from dmlopt.models.inc_oxc import evaluation as inc_evaluate  # where circuits() calls it

    monkeypatch.setattr(inc_evaluate, "circuits_from_ports", _boom)  # no (R, R) per entry
    sched = [(0.25, [(0, 4), (8, 12)]), (0.25, [(1, 5)])] + [(0.0, [])] * 10_000
    sol = MI.Solution(workers=[[0]], ps=[(1, "server")], bandwidth=[[1.0]], oxc_schedule=sched)
    c, bad = MI.circuits(inst, sol)
    assert not bad
    assert c[0, 1] == c[1, 0] == 0.5 and c[2, 3] == 0.25 and c.sum() == 1.5


def test_inc_oxc_heuristics_refused_on_huge_port_counts(monkeypatch):
    # 1e9 ports per ToR are refused by the instance (the bounds allocated arrays over 0..N_ToR
    # circuits); at the limit, 65,536, swg's (R x N_ToR)-port estimate refuses it unrun
    with pytest.raises(InstanceError, match="n_tor: .*less than or equal to 65536"):
        parse(MI.Instance, {**_inc_oxc(64), "n_tor": 10**9})
    inst = MI.Instance.model_validate({**_inc_oxc(64), "n_tor": 65536})
    monkeypatch.setitem(HI.HEURISTICS, "swg",
                        dataclasses.replace(HI.HEURISTICS["swg"], function=_boom))
    with pytest.raises(ModelTooLargeError, match="swg"):
        dmlopt.heuristic(inst, "swg")


def _rar_complete(n: int, **fields) -> dict:
    nodes = [{"cus": 2} for _ in range(n)]
    links = [{"u": u, "v": v, "length_km": 1.0, "wavelengths": 2}
             for u in range(n) for v in range(u + 1, n)]
    req = {"data_gb": 1.0, "source": 0, "arrival": 1, "deadline": 2, "theta": 0.5,
           "reliability": 0.5, "node_counts": [3]}
    return {"problem": "rar", "nodes": nodes, "links": links, "slots": 2, "cu_tflops": 1.0,
            "requests": [req], **fields}


def test_rar_large_ring_cap_refused_by_the_instance():
    t0 = time.perf_counter()
    with pytest.raises(InstanceError, match="ring_cap"):
        parse(MR.Instance, _rar_complete(20, ring_cap=10**9, ring_max_nodes=12))
    assert time.perf_counter() - t0 < 1


def test_rar_ring_search_is_bounded(monkeypatch):
    from dmlopt.models.rar import instance as rar_instance  # where the ring search reads it

    monkeypatch.setattr(rar_instance, "MAX_RING_STEPS", 1_000)
    with pytest.raises(InstanceError, match="ring_max_nodes"):
        parse(MR.Instance, _rar_complete(10, ring_max_nodes=10))
    monkeypatch.setattr(rar_instance, "MAX_RING_STEPS", 2_000_000)
    assert len(parse(MR.Instance, _rar_complete(6)).rings) > 0


def test_rar_rdda_refused_before_it_runs(monkeypatch):
    """Long windows alone no longer make rdda too large (it scores a batch of window lengths,
    not every (start, end) pair); its wavelength loads (links x W x slots, 2 GB here) do."""
    inst = dmlopt.generate("rar", {"generator": "random", "slots": 10_000,
                                   "wavelengths": 5_000}, seed=0)
    monkeypatch.setitem(HR.HEURISTICS, "rdda",
                        dataclasses.replace(HR.HEURISTICS["rdda"], function=_boom))
    with pytest.raises(ModelTooLargeError, match="rdda"):
        dmlopt.heuristic(inst, "rdda")


def test_rar_evaluator_memory_follows_the_solution_not_the_counts():
    inst = dmlopt.generate("rar", {"generator": "random", "cus": 5_000, "slots": 1_000}, seed=0)
    sol = HR.rdda(inst)
    tracemalloc.start()
    try:
        ev = MR.evaluate(inst, sol)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ev.feasible
    assert peak < 5 * 2**20  # a (CUs x slots) array per node would be 40 MB each


def test_rar_overload_sweep_matches_dense_counting():
    rng = np.random.default_rng(0)
    for _ in range(200):
        T = int(rng.integers(1, 30))
        k = int(rng.integers(1, 8))
        starts = rng.integers(1, T + 1, k)
        windows = [(int(s), int(rng.integers(s, T + 1))) for s in starts]
        limit, first = int(rng.integers(1, 3)), int(rng.integers(1, 6))
        use = np.zeros(T + 2, np.int64)
        for s, e in windows:
            use[s:e + 1] += 1
        over = np.flatnonzero(use > limit)[:first]
        assert MR_E._overloaded(windows, limit, first) == [(int(t), int(use[t])) for t in over]


@pytest.mark.parametrize("gen, seed", [("random", 2), ("cpn6", 1)])
def test_rar_evaluator_reports_overlaps_as_before(gen, seed):
    # two identical requests given the same assignment: every CU and the wavelength are used
    # twice in every slot of the window; at most 5 (CU, slot) cells are listed per node
    base = dmlopt.generate("rar", {"generator": gen, "requests": 1}, seed=seed)
    inst = MR.Instance.model_validate({**base.model_dump(), "requests": [
        base.requests[0].model_dump()] * 2})
    a = HR.rdda(base).requests[0]
    assert a is not None
    ev = MR.evaluate(inst, MR.Solution(requests=[a, a]))
    assert not ev.feasible
    span = a.end - a.start + 1
    cells = sum(min(5, len(ids) * span) for ids in a.cus)
    assert sum("serves 2 requests" in v for v in ev.violations) == cells
    first = f"node {a.nodes[0]} CU {a.cus[0][0]} serves 2 requests in slot {a.start} (eq. 8)"
    assert first in ev.violations
    carries = [v for v in ev.violations if "carries 2 requests" in v]
    assert len(carries) == (len(a.ring) if inst.rho < 2 else 0)
    assert all(f"in slot {a.start}," in v for v in carries)
    assert ev.metrics["activated_cus"] == sum(len(ids) for ids in a.cus)


def test_rar_config_size_counts_configurations_without_listing_them(monkeypatch):
    from dmlopt.models.rar import config as _rar_config

    small = dmlopt.generate("rar", {"generator": "cpn38", "requests": 4}, seed=0)
    for j in range(4):
        for free in (True, False):
            assert _rar_config.count_configurations(small, j, free) == len(
                _rar_config.configurations(small, j, free))
    inst = dmlopt.generate("rar", {"generator": "cpn38", "requests": 3, "slots": 10_000}, seed=0)
    monkeypatch.setattr(MR_F, "_mode_starts", _boom)  # about 5e7 mode-starts per request
    with pytest.raises(ModelTooLargeError, match="config"):
        dmlopt.solve(inst, formulation="config")


def test_inc_oxc_worker_fit_is_checked_without_a_loop_over_racks(monkeypatch):
    # many distinct workers and racks: the fit of rule (2) per worker is numpy work over the
    # undominated racks; the first worker that fits nowhere is still the one named
    rng = np.random.default_rng(0)
    racks = [{"cpu": float(c), "gpu": float(g), "mem": 4.0}
             for c, g in rng.integers(5, 20, (2000, 2))]
    workers = [{"cpu": 1 + i * 1e-6, "gpu": 1.0, "mem": 0.001} for i in range(5000)]
    data = {**_inc_oxc(1), "racks": racks, "jobs": [{**_inc_oxc(1)["jobs"][0],
                                                      "workers": workers}]}
    t0 = time.perf_counter()
    assert len(parse(MI.Instance, data).jobs[0].workers) == 5000
    assert time.perf_counter() - t0 < 10
    workers[3000] = {"cpu": 50.0, "gpu": 1.0, "mem": 0.001}
    with pytest.raises(InstanceError, match=r"jobs\[0\]\.workers\[3000\].*fits in no rack \(cpu"):
        parse(MI.Instance, data)
    for _ in range(50):
        cap = rng.integers(0, 6, (int(rng.integers(1, 20)), 3)).astype(float)
        need = rng.integers(0, 7, (int(rng.integers(1, 30)), 3)).astype(float)
        naive = [(x <= cap * (1 + MI.TOL) + 1e-12).all(axis=1).any() for x in need]
        assert MI_I._fits_some_rack(need, cap).tolist() == naive


def test_nara_path_guard_follows_dmlopt_size_limit(monkeypatch):
    data = _nara_star(50)
    monkeypatch.setenv("DMLOPT_SIZE_LIMIT", "1e6,2e6,1MiB,1e12")
    with pytest.raises(ModelTooLargeError, match="DMLOPT_SIZE_LIMIT"):
        dmlopt.evaluate(MN.Instance.model_validate(data), MN.Solution(allocations=[None]))
    monkeypatch.delenv("DMLOPT_SIZE_LIMIT")
    ev = dmlopt.evaluate(MN.Instance.model_validate(data), MN.Solution(allocations=[None]))
    assert ev.feasible and ev.objective == 0


# --------------------------------------------------------------------------------------------
# tabgp, tap, infer and infer_tap


def test_tap_paper_formulation_refuses_highs():
    # a nonconvex MIQP: SCIP and the commercial solvers take it, HiGHS does not
    from dmlopt.models import tap

    assert set(tap.FORMULATIONS["paper"].solvers) == {"scip", "gurobi", "cplex", "xpress",
                                                      "copt"}
    inst = dmlopt.generate("tap", {"generator": "random", "m": 3, "n": 3})
    with pytest.raises(dmlopt.SolverError, match="scip"):
        dmlopt.solve(inst, "highs", formulation="paper")


# --------------------------------------------------------------------------------------------
# hostile sizes are refused before any work


def test_er_with_a_billion_vertices_is_refused():
    with pytest.raises(dmlopt.ModelTooLargeError, match="er"):
        dmlopt.generate("tabgp", {"generator": "er", "n": 10**9}, 0)


def test_drift_with_huge_cluster_count_is_refused():
    with pytest.raises(dmlopt.ModelTooLargeError):
        dmlopt.generate("tabgp", {"generator": "drift", "l": 10**12}, 0)


def _tabgp(n: int, l: int = 2):
    from dmlopt.models.tabgp import Instance

    return Instance(n=n, edges=[[(0, 1)]], l=l, k=n, alpha=1.0)


def _never(*args, **kwargs):
    raise AssertionError("the heuristic ran although its estimate is above the limit")


@pytest.mark.parametrize("n, name", [(10**7, "dense"), (10**7, "dense-ls"),
                                     (10**7, "dense-refine"), (10**8, "metis"),
                                     (10**7, "best"), (10**7, "local-search"), (10**7, "ils")])
def test_millions_of_vertices_refused_before_the_heuristic_runs(n, name, monkeypatch):
    """The issue's 200-byte file with n = 10^7 vertices: the dense-matrix heuristics need about
    3 GiB there (above the 2 GiB default); METIS's CSR arrays need 1.9 GiB at 10^7 (a finite
    run of about a minute, accepted) and ten times that at 10^8."""
    problem = registry.get("tabgp")
    # the function is replaced: it returns within the test only if the boundary refuses first
    monkeypatch.setitem(problem.heuristics, name,
                        Heuristic(_never, problem.heuristics[name].Options,
                                  problem.heuristics[name].estimate, "stub"))
    with pytest.raises(dmlopt.ModelTooLargeError, match=name):
        dmlopt.heuristic(_tabgp(n), name)


def test_huge_cluster_count_refused_by_the_local_search_estimate(monkeypatch):
    problem = registry.get("tabgp")
    monkeypatch.setitem(problem.heuristics, "dense-ls",
                        Heuristic(_never, problem.heuristics["dense-ls"].Options,
                                  problem.heuristics["dense-ls"].estimate, "stub"))
    with pytest.raises(dmlopt.ModelTooLargeError):
        dmlopt.heuristic(_tabgp(4, l=10**15), "dense-ls")


def test_evaluator_does_not_allocate_per_cluster():
    inst = _tabgp(4, l=10**15)
    ev = dmlopt.evaluate(inst, {"assignment": [[0, 0, 10**14, 1]]})
    assert ev.feasible and ev.objective == 0


def test_duplicate_edges_found_beyond_int64_keys():
    from dmlopt.models.tabgp import Instance

    n = 10**12  # min * n + max would overflow int64
    with pytest.raises(dmlopt.InstanceError, match="duplicates"):
        parse(Instance, {"n": n, "edges": [[(n - 2, n - 1), (n - 1, n - 2)]], "l": 1, "k": n,
                         "alpha": 0})
    Instance(n=n, edges=[[(n - 2, n - 1), (n - 3, n - 1)]], l=1, k=n, alpha=0)


def test_clusters_model_size_is_cheap_for_any_k():
    from dmlopt.models.tabgp import estimate_size

    n_vars, _ = estimate_size(_tabgp(10**6), "clusters")  # sums at most a few binomials
    assert n_vars > DEFAULT_LIMITS.variables


@pytest.mark.parametrize("name", ["dense", "dense-ls", "local-search", "ils", "metis"])
def test_tabgp_estimates_grow_with_n(name):
    entry = registry.get("tabgp").heuristics[name]
    sizes = [entry.estimate(_tabgp(n), entry.Options()) for n in (10, 1000, 100_000)]
    assert sizes[0].work < sizes[1].work < sizes[2].work
    assert sizes[0].memory < sizes[1].memory < sizes[2].memory


def test_tap_estimates_grow_with_slots():
    from dmlopt.models.tap import Instance

    def uniform(n: int) -> Instance:  # the same traffic, n VMs one hop apart (one cluster)
        return Instance(M=[[0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1], [1, 0, 0, 0]],
                        D=[[0 if a == b else 1 for b in range(n)] for a in range(n)])

    problem = registry.get("tap")
    small, large = uniform(4), uniform(40)
    for name, entry in problem.heuristics.items():
        a, b = (entry.estimate(i, entry.Options()) for i in (small, large))
        assert a.work < b.work, name


def test_tap_search_on_too_many_slots_is_refused(monkeypatch):
    from dmlopt.models.tap import Instance

    n = 600  # N = n * min(K, m) = 3000 slots: dense N x N matrices, N^3 per descent step
    # (fractional traffic: the exact incremental swap gains need integral data, so the search
    # recomputes the N x N gain table after every swap)
    inst = Instance(M=[[0, 0.5, 0, 0, 0]] * 5, D=[[0 if a == b else 1 for b in range(n)]
                                                   for a in range(n)], K=5)
    problem = registry.get("tap")
    for name in ("local-search", "tabu", "random-ls"):
        monkeypatch.setitem(problem.heuristics, name,
                            Heuristic(_never, problem.heuristics[name].Options,
                                      problem.heuristics[name].estimate, "stub"))
        with pytest.raises(dmlopt.ModelTooLargeError):
            dmlopt.heuristic(inst, name)


def test_tap_time_limit_bounds_the_restarts():
    entry = registry.get("tap").heuristics["local-search"]
    inst = dmlopt.generate("tap", {"generator": "random", "m": 6, "n": 6})
    free = entry.estimate(inst, entry.Options(restarts=1000))
    capped = entry.estimate(inst, entry.Options(restarts=1000, time_limit=1.0))
    assert capped.work < free.work / 100


def test_tap_cle_with_huge_cluster_labels_runs():
    from dmlopt.models.tap import Instance

    inst = Instance(M=[[0, 1], [0, 0]], D=[[0, 1], [1, 0]], clusters=[0, 10**15])
    assert dmlopt.heuristic(inst, "cle").feasible


def test_tap_underlay_breadth_first_work_is_bounded():
    from dmlopt.models import tap

    # a path of many nodes, every node a VM: VMs x (nodes + edges) breadth-first steps
    count = 8000
    edges = [[f"v{i}", f"v{i + 1}"] for i in range(count - 1)]
    vms = [f"v{i}" for i in range(tap.MAX_VMS)]  # 5000 x 15999 steps
    with pytest.raises(dmlopt.InstanceError, match="breadth-first"):
        parse(tap.Instance, {"M": [[0, 1], [0, 0]], "underlay": {"edges": edges}, "vms": vms})


def test_qaplib_generator_refuses_a_fifo(tmp_path):
    import os

    fifo = tmp_path / "x.dat"
    os.mkfifo(fifo)
    with pytest.raises(dmlopt.InstanceError, match="regular file"):
        dmlopt.generate("tap", {"generator": "qaplib", "name": str(fifo)})


def test_infer_routing_work_is_bounded_at_validation():
    from dmlopt.models.infer import Instance

    with pytest.raises(dmlopt.InstanceError, match="routing steps"):
        parse(Instance, {"topology": "leaf-spine", "leaves": 300, "servers_per_leaf": 10,
                         "routing": "random-walk"})


def test_infer_scored_graph_is_bounded_at_validation():
    from dmlopt.models.infer import Instance

    with pytest.raises(dmlopt.InstanceError, match="evaluator scores"):
        parse(Instance, {"topology": "leaf-spine", "leaves": 100, "servers_per_leaf": 11,
                         "routing": "dijkstra"})


def test_infer_evaluator_refuses_a_huge_inferred_graph():
    inst = dmlopt.generate("infer", {}, 0)
    edges = [[f"x{i}", f"x{i + 1}"] for i in range(5000)]
    sol = {"source": "x0", "endpoints": ["x1"] * inst.n, "routes": [["x0", "x1"]] * inst.n,
           "edges": edges}
    with pytest.raises(dmlopt.InstanceError, match="solution.edges"):
        dmlopt.evaluate(inst, sol)


def test_infer_tap_inference_work_is_bounded_at_validation():
    from dmlopt.models.infer_tap import Instance

    with pytest.raises(dmlopt.InstanceError, match="too many for rnj"):
        parse(Instance, {"topology": "leaf-spine", "leaves": 20, "servers_per_leaf": 20,
                         "vms": 400, "routing": "dijkstra", "inference": "rnj"})


def test_infer_tap_hop_correlation_work_is_bounded_at_validation():
    from dmlopt.models.infer_tap import Instance

    with pytest.raises(dmlopt.InstanceError, match="hop correlation"):
        parse(Instance, {"topology": "fat-tree", "k": 16, "vms": 400, "routing": "dijkstra"})


def test_rnj_estimate_is_cubic_in_paths():
    entry = registry.get("infer").heuristics["rnj"]
    a = dmlopt.generate("infer", {"paths": 4}, 0)
    b = dmlopt.generate("infer", {"paths": 8}, 0)
    assert entry.estimate(b, entry.Options()).work > 4 * entry.estimate(a, entry.Options()).work


# --------------------------------------------------------------------------------------------
# bad option and parameter values name the option


@pytest.mark.parametrize(("name", "options", "field"), [
    ("dense-roll", {"x": "abc"}, "x"),
    ("dense-roll", {"x": -1}, "x"),
    ("ils", {"iterations": -3}, "iterations"),
    ("ils", {"strength": float("nan")}, "strength"),
    ("ils", {"strength": 0}, "strength"),
    ("local-search", {"start": "best"}, "start"),
    ("local-search", {"start": "nosuch"}, "start"),
    ("best", {"iterations": 1.5}, "iterations"),
])
def test_tabgp_bad_options_name_the_option(name, options, field):
    inst = dmlopt.generate("tabgp", {"n": 6, "tau": 2, "l": 2}, 0)
    with pytest.raises(dmlopt.InstanceError, match=f"^{field}"):
        dmlopt.heuristic(inst, name, **options)


@pytest.mark.parametrize(("name", "options", "field"), [
    ("local-search", {"restarts": -1}, "restarts"),
    ("local-search", {"start": "tabu"}, "start"),
    ("tabu", {"kick": 2}, "kick"),
    ("tabu", {"iterations": 0}, "iterations"),
    ("tabu", {"engine": "gpu"}, "engine"),
    ("tabu", {"time_limit": float("inf")}, "time_limit"),
    ("abm-ls", {"time_limit": -1}, "time_limit"),
])
def test_tap_bad_options_name_the_option(name, options, field):
    inst = dmlopt.generate("tap", {"generator": "random", "m": 4, "n": 4})
    with pytest.raises(dmlopt.InstanceError, match=f"^{field}"):
        dmlopt.heuristic(inst, name, **options)


def test_option_start_may_still_be_a_solution():
    inst = dmlopt.generate("tabgp", {"n": 6, "tau": 2, "l": 2}, 0)
    start = dmlopt.heuristic(inst, "random", seed=1).solution
    for given in (start, start.model_dump()):
        res = dmlopt.heuristic(inst, "local-search", start=given)
        assert res.feasible and res.objective <= dmlopt.evaluate(inst, start).objective


def test_same_solution_through_the_boundary_and_directly():
    from dmlopt.heuristics import tabgp, tap

    inst = dmlopt.generate("tabgp", {"n": 10, "tau": 3, "l": 3}, 2)
    assert dmlopt.heuristic(inst, "dense-roll", seed=3, x=2).solution == \
        tabgp.dense_roll(inst, seed=3, x=2)
    q = dmlopt.generate("tap", {"generator": "random", "m": 5, "n": 5}, 1)
    assert dmlopt.heuristic(q, "tabu", seed=4, rounds=2).solution == tap.tabu(q, seed=4, rounds=2)


# --------------------------------------------------------------------------------------------
# the command line


@pytest.mark.parametrize("value", ["ten", "10.5"])
def test_cli_bad_integer_param_exits_2_with_one_line(value, capsys):
    code = main(["generate", "tabgp", "-p", f"n={value}"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "n:" in err and "http" not in err


def test_cli_billion_vertices_exits_2(capsys):
    code = main(["generate", "tabgp", "-g", "er", "-p", "n=1000000000"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "too large" in err
