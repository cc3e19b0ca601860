"""INC/OXC: the sparse time-shared schedule and port wiring give the old dense results exactly.

golden/scaling.json holds the outputs of the previous implementations (dense, O(R^2) per
Birkhoff-von Neumann term; the bottleneck matching by bisection with one assignment per step),
computed once by that code on the inputs below: port wirings, the heuristics' solutions
(sha256 of their JSON), objectives and metrics, the evaluator's circuit matrices and messages,
and the decompositions' terms (time share, permutation).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.inc_oxc.bvn import stuff
from dmlopt.models import inc_oxc as m
from dmlopt.models.inc_oxc import evaluation as ev


@cache
def _golden() -> dict:
    return json.loads((Path(__file__).parent / "golden" / "scaling.json").read_text())


def _sha(x) -> str:
    return hashlib.sha256(json.dumps(x, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _pairs(pairs) -> list:
    return [list(p) for p in pairs]


def _instances():
    for racks, seed in ((16, 0), (24, 1), (32, 2)):
        yield dmlopt.generate("inc_oxc", {"generator": "large", "racks": racks}, seed=seed)
    yield m.generate_dcn(seed=0, racks=10, jobs=3, workers=(8, 12), ports=2, ps_per_switch=2,
                         gpu=(60, 60), cpu=(30, 30), mem=(4, 4))


@pytest.mark.parametrize("seed", range(6))
def test_ports_from_circuits_equals_the_dense_loop(seed):
    rng = np.random.default_rng(seed)
    R = int(rng.integers(2, 30))
    inst = dmlopt.generate("inc_oxc", {"generator": "dcn", "racks": R, "ports": 12}, seed=0)
    up = np.triu(rng.integers(0, 3, (R, R)) * (rng.random((R, R)) < 0.3), 1)
    c = up + up.T
    want = _golden()["ports"][str(seed)]
    assert _pairs(ev.ports_from_circuits(inst, c)) == want[0]
    cf = c + rng.choice([0.0, 0.4, 0.5, -0.4], (R, R))        # rounding, half to even
    cf = np.triu(cf, 1) + np.triu(cf, 1).T
    assert _pairs(ev.ports_from_circuits(inst, cf)) == want[1]


@pytest.mark.parametrize("method", ["swg", "rwp", "wcg"])
def test_schedules_identical_to_the_dense_code(method):
    """Same seed, same solution: the whole heuristic with the new sparse schedule against the
    same heuristic with the old dense schedule and wiring."""
    for k, inst in enumerate(_instances()):
        new = dmlopt.heuristic(inst, method, seed=k)
        old = _golden()["schedules"][f"{method}/{k}"]
        assert _sha(new.solution.model_dump(mode="json")) == old["solution_sha256"], k
        assert new.objective == old["objective"]
        assert json.loads(json.dumps(new.metrics)) == old["metrics"]
        if method != "wcg":
            assert new.metrics["time_shared_oxc"] == 1.0


def test_evaluator_circuits_identical_to_the_dense_code():
    want = iter(_golden()["circuits"])
    for k, inst in enumerate(_instances()):
        for method in ("rwp", "wcg-opt"):
            sol = dmlopt.heuristic(inst, method, seed=k).solution
            old = next(want)
            # the input the golden circuits were computed from (else regenerate the golden)
            assert _sha(sol.model_dump(mode="json")) == old["solution_sha256"], (k, method)
            c_new, bad_new = m.circuits(inst, sol)
            assert c_new.tolist() == old["c"] and str(c_new.dtype) == old["dtype"]
            assert bad_new == old["bad"] == []


def test_evaluator_messages_identical_on_broken_pairings():
    inst = dmlopt.generate("inc_oxc", {"generator": "dcn", "racks": 4, "ports": 3}, seed=0)
    broken = [[(0, 3), (3, 6)], [(0, 0)], [(-1, 4)], [(0, 12), (1, 2)], [(0, 4), (5, 4)],
              [(0, 1)], []]
    for pairs, old in zip(broken, _golden()["broken"], strict=True):
        sol = m.Solution(workers=[[0] * len(j.workers) for j in inst.jobs],
                         ps=[(0, "server")] * len(inst.jobs),
                         bandwidth=[[0.0] * len(j.workers) for j in inst.jobs], oxc=pairs)
        assert m.circuits(inst, sol)[1] == old["bad"]
        sched = sol.model_copy(update={"oxc": [], "oxc_schedule": [(0.5, pairs), (0.25, pairs)]})
        new = m.circuits(inst, sched)
        assert new[1] == old["sched_bad"] and new[0].tolist() == old["sched_c"]


def _terms(terms) -> list:
    return [[float(t[0]), np.asarray(t[1]).tolist()] for t in terms]


def test_bvn_decomposition_identical_to_the_bisection_per_term():
    """The bottleneck matching tries the smallest line maximum first: same terms, same order
    as the bisection with one assignment per step, on random and on generated matrices (those
    of swg's solutions on the instances, kept in the golden file)."""
    from dmlopt.heuristics.inc_oxc import bvn

    rng = np.random.default_rng(5)
    mats = []
    for _ in range(30):
        n = int(rng.integers(2, 25))
        M = rng.integers(0, 5, (n, n)) * (rng.random((n, n)) < 0.4).astype(float)
        np.fill_diagonal(M, 0)
        mats += [stuff(M)[0], M + np.eye(n)]
    assert [_terms(bvn.bvn_decompose(M)) for M in mats] == _golden()["bvn"]
    for old in _golden()["bvn_instances"]:
        assert _terms(bvn.bvn_decompose(np.array(old["matrix"]))) == old["terms"]


def test_bisection_by_matching_existence_gives_the_assignment_terms(monkeypatch):
    """The bisection steps decide existence by Hopcroft-Karp and one assignment is made at the
    bottleneck: the same terms as an assignment at every step (a program returning the
    Hopcroft-Karp matching, or stopping the bisection one value early, differs), and the
    Hopcroft-Karp steps are taken (the matrices reach the bisection). The golden terms are the
    previous matching's (smallest line maximum first, then a bisection with one assignment per
    step)."""
    from dmlopt.heuristics.inc_oxc import bvn

    rng = np.random.default_rng(11)
    mats = []
    for _ in range(40):
        n = int(rng.integers(3, 30))
        M = rng.integers(0, 4, (n, n)) * (rng.random((n, n)) < 0.5).astype(float)
        np.fill_diagonal(M, 0)
        mats.append(stuff(M)[0])
    calls = []
    perfect = bvn._perfect
    monkeypatch.setattr(bvn, "_perfect", lambda mat, v: calls.append(v) or perfect(mat, v))
    new = [bvn.bvn_decompose(M) for M in mats]
    assert len(calls) > 20
    assert [_terms(t) for t in new] == _golden()["bisection"]


@pytest.mark.parametrize("n_ports", [10, 2000, 10**7])
def test_a_port_used_twice_is_found_either_way(n_ports):
    """Both ways of finding a repeated port (a count per port when the ports listed are many
    against all, a sort when they are few) agree with a set; the count never makes an array
    of all 10**7 ports for 40 listed."""
    rng = np.random.default_rng(n_ports)
    for size in (1, 2, 5, 40):
        for _ in range(20):
            ports = rng.integers(0, n_ports, size)
            assert ev._repeats(ports, n_ports) == (len(set(ports.tolist())) < size)
