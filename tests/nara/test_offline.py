"""Nara (paper 001): the strengthened offline MILP has the plain model's optimum.

Independent checks: the plain model (no valid inequality, no symmetry constraint) solved to
optimality on tiny random episodes, every online allocator's accepted count (re-evaluated), and
the threshold-graph cliques against a brute-force enumeration of pairwise-conflicting sets.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import nara as H
from dmlopt.models import nara
from dmlopt.models.nara import formulations as nara_formulations
from dmlopt.models.nara import topology as topo

FAST = ["random", "tetris", "nalb", "nulb", "netfit"]


def tiny_episode(seed: int, n: int) -> nara.Instance:
    """4 racks x 2 servers, requests large enough to need 2-3 servers, overlapping in time."""
    t = topo.fabric(racks=4, servers_per_rack=2, pods=2, fabrics_per_pod=1, spines_per_plane=1,
                    name="tiny")
    rng = np.random.default_rng(seed)
    reqs = [{"c": int(rng.integers(5, 26)), "m": int(rng.integers(5, 26)),
             "b": float(rng.integers(20, 101) / 100), "t": float(rng.integers(3, 8))}
            for _ in range(n)]
    return nara.Instance(topology=t, requests=reqs)


@pytest.mark.parametrize("seed", range(4))
def test_strong_offline_equals_plain_and_bounds_allocators(seed):
    inst = tiny_episode(seed, 7)
    opt = {}
    for form in ("offline-plain", "offline-basic", "offline"):
        res = dmlopt.solve(inst, "highs", formulation=form, threads=1, time_limit=120)
        assert res.status == "optimal" and res.feasible, form
        opt[form] = res.objective
    assert opt["offline"] == opt["offline-plain"] == opt["offline-basic"]
    for name in FAST:
        assert dmlopt.heuristic(inst, name).objective <= opt["offline"] + 1e-9


def test_strong_cuts_are_present_and_keep_allocator_solutions():
    # the cuts exist on a real episode and every allocator's solution satisfies all of them
    import pyomo.environ as pyo

    inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 14}, seed=2)
    model = nara.build(inst, "offline")
    assert len(model.bw_clique) > 0 and len(model.agg_cpu) > 0 and len(model.v_eq) > 0
    for name in FAST:
        sol = H.HEURISTICS[name].function(inst)
        nara.warm_start(model, inst, sol)
        for c in model.component_data_objects(pyo.Constraint, active=True):
            body = pyo.value(c.body)
            assert c.lower is None or body >= pyo.value(c.lower) - 1e-6, (name, c.name)
            assert c.upper is None or body <= pyo.value(c.upper) + 1e-6, (name, c.name)


@pytest.mark.parametrize("seed", range(5))
def test_conflict_cliques_are_the_maximal_cliques(seed):
    rng = np.random.default_rng(seed)
    bs = {i: float(rng.integers(5, 101) / 100) for i in range(8)}
    got = {tuple(k) for k in nara_formulations._conflict_cliques(bs, 1.0)}

    def clique(k):
        return all(bs[a] + bs[b] > 1 + 1e-6 for a, b in itertools.combinations(k, 2))

    cliques = [set(k) for r in range(2, 9) for k in itertools.combinations(bs, r) if clique(k)]
    maximal = {tuple(sorted(k)) for k in cliques if not any(k < o for o in cliques)}
    assert got == maximal


def test_plain_formulation_exports(tmp_path):
    inst = tiny_episode(0, 3)
    for form in ("offline-plain", "offline"):
        text = dmlopt.export(inst, tmp_path / f"{form}.lp", formulation=form).read_text()
        assert "acc" in text
    assert "bw_clique" not in (tmp_path / "offline-plain.lp").read_text()


def test_objective_cut_is_a_bound_and_keeps_the_optimum(monkeypatch):
    # catches a cut taken from the wrong bound (or the wrong side of its safety margin): the
    # cut must be the schedule bound on short episodes, the aggregate bound on long ones, and
    # never below the proven optimum of the plain model (which has no cut)
    import pyomo.environ as pyo

    for seed in (1, 2):
        inst = tiny_episode(seed, 7)
        model = nara.build(inst, "offline")
        cut = pyo.value(model.bound_cut.upper)
        assert cut == dmlopt.bound(inst, "schedule", time_limit=30, primal=False).bound
        plain = dmlopt.solve(inst, "highs", formulation="offline-plain", threads=1,
                             time_limit=120)
        assert plain.status == "optimal" and plain.objective <= cut
        assert "bound_cut" not in {c.local_name for c in nara.build(
            inst, "offline-plain").component_objects(pyo.Constraint)}
    monkeypatch.setattr(nara_formulations, "CUT_SCHEDULE_REQUESTS", 3)
    assert nara_formulations.objective_cut(inst) == dmlopt.bound(
        inst, "aggregate", primal=False).bound
