"""The CP-SAT models of MinCU (models/rar/cpsat.py): the fixed-capacity check agrees with a
brute force written here and with the HiGHS check of capacity Benders on feasible and
infeasible capacity vectors; capacity Benders with ``check="cpsat"`` reaches the optimum; an
UNKNOWN taken as a proof of infeasibility is caught; time limits hold; without ortools the
HiGHS path runs and the user sees no ImportError."""

from __future__ import annotations

import itertools
import random
import sys
import time

import numpy as np
import pytest

import dmlopt
from dmlopt.errors import InstanceError, SolverError
from dmlopt.models import rar
from dmlopt.models.rar import benders, cpsat
from tests.helpers.rar import TINY

pytest.importorskip("ortools")

#: tiny MinCU instances whose wavelengths cannot bind (3 requests, 4 wavelengths, rho 1)
FAMILY = [dict(seed=s, requests=3, slots=5, cus=3) for s in (1, 2, 3, 4, 6, 7)]


def _inst(spec: dict) -> rar.Instance:
    return rar.generate_random(scheme="MinCU", nodes=4, extra_links=1, wavelengths=4, rho=1,
                               **spec)


def _footprints(inst: rar.Instance, j: int) -> list[np.ndarray]:
    """Every CU usage (node x slot) one deployment of request j can have, independently of
    the package's modes: any ring through the source above r_j, any computing nodes on it,
    any CU count per node, any window long enough; only the minimal ones (a usage pointwise
    above another is never needed for feasibility)."""
    r, T = inst.requests[j], inst.slots
    seen: set[bytes] = set()
    out = []
    for ring in inst.rings:
        if r.source not in ring.nodes or ring.reliability < r.reliability:
            continue
        others = [v for v in ring.nodes if v != r.source]
        for nn in r.node_counts:
            for rest in itertools.combinations(others, nn - 1):
                nodes = (r.source, *rest)
                for ks in itertools.product(*(range(1, inst.nodes[v].cus + 1) for v in nodes)):
                    need = max(rar.duration(inst, j, nn, k) for k in ks)
                    for s in range(r.arrival, r.deadline - need + 2):
                        use = np.zeros((len(inst.nodes), T + 1), dtype=int)
                        for v, k in zip(nodes, ks, strict=True):
                            use[v, s:s + need] += k
                        if use.tobytes() not in seen:
                            seen.add(use.tobytes())
                            out.append(use)
    return [u for u in out if not any((w <= u).all() and (w != u).any() for w in out)]


def _brute_check(inst: rar.Instance, cap: list[int], deployed: list[int]) -> bool:
    """Is there a schedule deploying exactly ``deployed`` with per-node peak <= cap? (depth
    first over the requests' footprints)."""
    limit = np.asarray(cap)[:, None]
    options = [_footprints(inst, j) for j in deployed]

    def extend(i: int, use: np.ndarray) -> bool:
        if i == len(options):
            return True
        for f in options[i]:
            nxt = use + f
            if (nxt <= limit).all() and extend(i + 1, nxt):
                return True
        return False

    return extend(0, np.zeros((len(inst.nodes), inst.slots + 1), dtype=int))


def _brute_min(inst: rar.Instance) -> float:
    """min eq. (4) (MinCU) over every deployed set and every combination of footprints."""
    nr = len(inst.requests)
    caps = np.asarray([nd.cus for nd in inst.nodes])
    options = [_footprints(inst, j) for j in range(nr)]
    best = 1.0  # all blocked
    for size in range(1, nr + 1):
        for deployed in itertools.combinations(range(nr), size):
            for combo in itertools.product(*(options[j] for j in deployed)):
                peak = sum(combo).max(axis=1)
                if (peak <= caps).all():
                    best = min(best, 1 - size / nr + inst.alpha_of() * peak.sum())
    return best


def _vectors(inst: rar.Instance, count: int, rng: random.Random) -> list[list[int]]:
    """``count`` capacity vectors: half any counts, half at least one CU on every node."""
    caps = [nd.cus for nd in inst.nodes]
    return [[rng.randint(0 if i % 2 else 1, c) for c in caps] for i in range(count)]


@pytest.mark.parametrize("spec", FAMILY)
def test_check_agrees_with_the_brute_force(spec):
    # catches a wrong node set, mode, window bound or cumulative capacity in the model and a
    # decode that loses the schedule: every verdict is the brute force's, every schedule is
    # feasible for the evaluator and within the capacities
    inst = _inst(spec)
    rng = random.Random(spec["seed"])
    verdicts = set()
    for cap in _vectors(inst, 40, rng):
        deployed = sorted(rng.sample(range(len(inst.requests)), rng.choice([2, 3])))
        res = cpsat.check(inst, cap, deployed, seconds=20)
        assert res.status in (cpsat.FEASIBLE, cpsat.INFEASIBLE)
        assert (res.status == cpsat.FEASIBLE) == _brute_check(inst, cap, deployed), (cap,
                                                                                     deployed)
        if res.solution is not None:
            ev = rar.evaluate(inst, res.solution)
            assert ev.feasible
            assert [a is not None for a in res.solution.requests] == [
                j in deployed for j in range(len(inst.requests))]
            for n, c in enumerate(cap):
                used = {cu for a in res.solution.requests if a is not None
                        for v, ids in zip(a.nodes, a.cus, strict=True) if v == n for cu in ids}
                assert len(used) <= c
        verdicts.add(res.status)
    assert verdicts == {cpsat.FEASIBLE, cpsat.INFEASIBLE}  # both sides are exercised


def test_check_agrees_with_the_highs_check():
    # the two checks of capacity Benders decide the same vectors (4 requests, 4 nodes)
    inst = _inst(dict(seed=3, requests=4, slots=5, cus=3))
    caps = [nd.cus for nd in inst.nodes]
    mip = benders._compile(inst)
    sub = benders._Sub(inst, mip, caps, 1)
    rng = random.Random(7)
    verdicts = set()
    for cap in _vectors(inst, 30, rng):
        deployed = set(range(len(inst.requests)))
        mine = cpsat.check(inst, cap, deployed, seconds=20).status
        theirs, _ = sub.check(dict(enumerate(cap)), deployed, 20)
        assert mine == theirs, cap
        verdicts.add(mine)
    assert verdicts == {cpsat.FEASIBLE, cpsat.INFEASIBLE}


@pytest.mark.parametrize("spec", FAMILY[:3])
def test_solve_mincu_equals_the_brute_force(spec):
    # the whole-problem model: its proven optimum is the brute force's (a wrong objective
    # scale, a missing blocking term or a wrong cumulative shows here)
    inst = _inst(spec)
    res = cpsat.solve_mincu(inst, seconds=60)
    assert res.status == "OPTIMAL"
    ref = _brute_min(inst)
    assert res.objective == pytest.approx(ref, abs=1e-9)
    assert res.bound == pytest.approx(ref, abs=1e-9)
    # a valid lower bound and a hint change nothing
    again = cpsat.solve_mincu(inst, seconds=60, lower_bound=ref - 0.01, hint=res.solution)
    assert again.status == "OPTIMAL" and again.objective == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("spec", [dict(seed=3, requests=4, slots=4, cus=2),
                                  dict(seed=6, requests=4, slots=5, cus=3)])
@pytest.mark.parametrize("options", [{}, {"core": True}, {"core": True, "neighbours": 10}])
def test_benders_with_the_cpsat_check_equals_aggregated(spec, options):
    # the Benders instances that need cuts (tests/rar/test_benders.py): same optimum, also
    # with the cuts lifted from CP-SAT's cores (a core naming too few nodes cuts a schedule)
    # and with the neighbours refuted in the same round
    inst = _inst(spec)
    bv = benders.capacity_benders(inst, time_limit=60, check="cpsat", **options)
    assert bv.metrics["cpsat"] == 1.0 and bv.metrics["proven"] == 1.0
    assert bv.metrics["cuts"] >= 1  # the cuts and the filter are exercised
    ref = dmlopt.solve(inst, formulation="aggregated", threads=1, time_limit=60, mip_gap=0.0)
    assert ref.status == "optimal"
    ev = rar.evaluate(inst, bv.solution)
    assert ev.feasible and ev.objective == pytest.approx(ref.objective, abs=1e-9)
    assert bv.bound == pytest.approx(ref.objective, abs=1e-5)


class _Unknown:
    """A CP-SAT solver whose every solve ends UNKNOWN, as at a time limit."""

    def __init__(self, solver) -> None:
        self.parameters = solver.parameters

    def Solve(self, model):  # noqa: N802 (CP-SAT's name)
        from ortools.sat.python import cp_model

        return cp_model.UNKNOWN


def test_unknown_is_never_a_proof(monkeypatch):
    # with every CP-SAT check UNKNOWN the method stops at the master's first bound, below the
    # optimum, with no cut; the mutant reading UNKNOWN as INFEASIBLE cuts capacity vectors
    # that have schedules and its bound passes the optimum (or the master runs dry)
    inst = _inst(dict(seed=3, requests=4, slots=5, cus=3))
    opt = benders.capacity_benders(inst, time_limit=60, check="cpsat").bound
    make = cpsat._solver
    monkeypatch.setattr(cpsat, "_solver", lambda s, w: _Unknown(make(s, w)))
    assert cpsat.check(inst, [nd.cus for nd in inst.nodes], {0}, seconds=5).status == \
        cpsat.UNDECIDED
    bv = benders.capacity_benders(inst, time_limit=60, check="cpsat")
    assert bv.bound <= opt + 1e-9 and bv.metrics["cuts"] == 0 and bv.solution is None
    monkeypatch.setattr(cpsat, "UNDECIDED", cpsat.INFEASIBLE)
    try:
        bad = benders.capacity_benders(inst, time_limit=10, check="cpsat").bound
    except SolverError:
        bad = float("inf")
    assert bad > opt + 1e-6


def test_time_limits_hold():
    # a vector on the boundary of seed 3 (CP-SAT needs 2.5-3.6 s of CPU to prove it
    # infeasible): with 0.3 s the check returns undecided (a check ignoring its limit would
    # return the proof), and the whole-problem model stops too (it runs for hours otherwise)
    inst = dmlopt.load("rar/cpn6-r10-mincu-s3")
    t0 = time.perf_counter()
    res = cpsat.check(inst, [6, 6, 8, 3, 6, 5], range(10), seconds=0.3)
    assert time.perf_counter() - t0 < 0.3 + 10  # slack for the build on a loaded machine
    assert res.status == cpsat.UNDECIDED
    t0 = time.perf_counter()
    bv = benders.capacity_benders(inst, time_limit=8, check="cpsat")
    assert time.perf_counter() - t0 < 8 + 20
    assert bv.bound <= 34 / 60 + 1e-9 and bv.metrics["proven"] == 0.0
    t0 = time.perf_counter()
    whole = cpsat.solve_mincu(inst, seconds=2)
    assert time.perf_counter() - t0 < 2 + 15
    assert whole.bound <= 34 / 60 + 1e-9


def test_without_ortools_the_highs_check_runs(monkeypatch):
    # "auto" falls back to HiGHS; "cpsat" says what is missing; no ImportError escapes
    inst = _inst(dict(seed=3, requests=4, slots=4, cus=2))
    monkeypatch.setitem(sys.modules, "ortools", None)  # import ortools -> ImportError
    monkeypatch.setitem(sys.modules, "ortools.sat.python", None)
    assert not cpsat.available()
    bv = benders.capacity_benders(inst, time_limit=60, check="auto")
    assert bv.metrics["cpsat"] == 0.0 and bv.metrics["proven"] == 1.0
    with pytest.raises(SolverError, match="ortools"):
        benders.capacity_benders(inst, time_limit=60, check="cpsat")


def test_bad_arguments_are_refused_naming_the_field():
    inst = _inst(FAMILY[0])
    bind = rar.generate_random(scheme="MinCU", **TINY[0])  # one wavelength: it can bind
    assert cpsat.available() and not cpsat.applicable(bind)
    with pytest.raises(InstanceError, match="check"):
        benders.capacity_benders(inst, check="gurobi")
    with pytest.raises(InstanceError, match="check"):
        benders.capacity_benders(bind, check="cpsat")
    assert benders.capacity_benders(bind, time_limit=60, check="auto").metrics["cpsat"] == 0.0
    caps = [nd.cus for nd in inst.nodes]
    for kw, field in [({"seconds": 0}, "seconds"), ({"seconds": float("nan")}, "seconds"),
                      ({"workers": 0}, "workers")]:
        with pytest.raises(InstanceError, match=field):
            cpsat.check(inst, caps, {0}, **kw)
    with pytest.raises(InstanceError, match="capacity"):
        cpsat.check(inst, caps[:-1], {0})
    for bad in (-1, 1.5, True):  # a negative count was read as "no CUs" and answered
        with pytest.raises(InstanceError, match="capacity"):
            cpsat.check(inst, [bad, *caps[1:]], {0})
    with pytest.raises(InstanceError, match="deployed"):
        cpsat.check(inst, caps, {7})
    with pytest.raises(InstanceError, match="instance"):
        cpsat.check(bind, [nd.cus for nd in bind.nodes], {0})


def _brute_region(inst: rar.Instance, upper: list[int], deployed: list[int], total: int) -> bool:
    """Is there a schedule deploying exactly ``deployed`` whose per-node peaks are at most
    ``upper`` and sum to at most ``total``? (depth first over the requests' footprints, the
    peaks only grow along a branch)."""
    limit = np.asarray([min(u, nd.cus) for u, nd in zip(upper, inst.nodes, strict=True)])
    options = [_footprints(inst, j) for j in deployed]

    def extend(i: int, use: np.ndarray) -> bool:
        if i == len(options):
            return True
        for f in options[i]:
            nxt = use + f
            peak = nxt.max(axis=1)
            if (peak <= limit).all() and peak.sum() <= total and extend(i + 1, nxt):
                return True
        return False

    return extend(0, np.zeros((len(inst.nodes), inst.slots + 1), dtype=int))


def _region_cases(spec: dict) -> int:
    """Region checks on random boxes of one instance, each against the brute force; returns
    how many infeasible regions the core read the wrong way round (the nodes the proof used
    raised to their CU counts) lifts into a region with a schedule."""
    inst = _inst(spec)
    full = [nd.cus for nd in inst.nodes]
    rng = random.Random(spec["seed"] + 100)
    verdicts, caught = set(), 0
    for upper in _vectors(inst, 12, rng):
        deployed = sorted(rng.sample(range(len(inst.requests)), rng.choice([2, 3])))
        total = rng.randint(max(0, sum(upper) - 4), sum(upper))
        res = cpsat.region_check(inst, upper, deployed, total, seconds=20)
        assert res.status in (cpsat.FEASIBLE, cpsat.INFEASIBLE)
        truth = _brute_region(inst, upper, deployed, total)
        assert (res.status == cpsat.FEASIBLE) == truth, (upper, deployed, total)
        verdicts.add(res.status)
        if res.solution is not None:
            assert rar.evaluate(inst, res.solution).feasible
        core = cpsat.region_check(inst, upper, deployed, total, seconds=20, core=True)
        assert core.status == res.status
        if core.status != cpsat.INFEASIBLE:
            continue
        lifted = [u if n in core.core else full[n] for n, u in enumerate(upper)]
        assert not _brute_region(inst, lifted, deployed, total)
        wrong = [full[n] if n in core.core else u for n, u in enumerate(upper)]
        caught += _brute_region(inst, wrong, deployed, total)
    assert cpsat.INFEASIBLE in verdicts
    return caught


def test_region_check_agrees_with_the_brute_force():
    # a box of capacity vectors with a sum budget: INFEASIBLE exactly when no vector of the
    # box within the budget has a schedule (catches a sum row that is missing or too tight
    # and an upper bound not applied); with the core, the box with every node outside the
    # core raised to its CU count has no schedule either (catches a core that names too few
    # nodes); the mutant that reads the core the wrong way round (raises the nodes the proof
    # used) lifts some region into one with a schedule, so it is caught too
    assert sum(_region_cases(spec) for spec in FAMILY[:4]) >= 1
