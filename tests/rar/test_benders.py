"""Capacity Benders for MinCU (models/rar/benders.py): its bound and schedule equal the brute
force and ``aggregated`` optima on random tiny instances; a time-out is never a cut and the cut
keeps its deployment part (both mutants are run here and caught); the time limit holds."""

from __future__ import annotations

import time

import pytest

import dmlopt
from dmlopt.errors import InstanceError, SolverError
from dmlopt.models import rar
from dmlopt.models.rar import benders
from tests.helpers.rar import TINY, _brute_force

#: random MinCU instances (4 nodes, 4 wavelengths per link) on which the master's first
#: capacity vector has no schedule, so the result depends on the cuts: the first needs a cut
#: whose deployment part matters (its optimum blocks a request), the others 1-4 cuts
CUT = [dict(seed=3, requests=4, slots=4, cus=2), dict(seed=3, requests=4, slots=5, cus=3),
       dict(seed=6, requests=4, slots=5, cus=3), dict(seed=12, requests=4, slots=4, cus=2)]


def _inst(spec: dict) -> rar.Instance:
    return rar.generate_random(scheme="MinCU", nodes=4, extra_links=1, wavelengths=4, rho=1,
                               **spec)


def _checked(inst: rar.Instance, bv) -> float:
    """The evaluated objective of the method's schedule, which must meet its bound."""
    assert bv.solution is not None
    ev = rar.evaluate(inst, bv.solution)
    assert ev.feasible
    assert ev.objective == pytest.approx(bv.bound, abs=1e-5)
    return ev.objective


@pytest.mark.parametrize("spec", TINY)
def test_equals_the_brute_force(spec):
    # catches a cut that removes a schedule (bound above the optimum) and a decode that loses
    # the subproblem's schedule (objective above the bound)
    inst = rar.generate_random(scheme="MinCU", **spec)
    bv = benders.capacity_benders(inst, time_limit=60)
    assert _checked(inst, bv) == pytest.approx(_brute_force(inst)["MinCU"], abs=1e-9)
    assert bv.metrics["proven"] == 1.0


@pytest.mark.parametrize("spec", CUT)
def test_equals_aggregated_where_cuts_are_needed(spec):
    # the same with cuts: the method's optimum is aggregated's (HiGHS, gap 0)
    inst = _inst(spec)
    bv = benders.capacity_benders(inst, time_limit=60)
    assert bv.metrics["cuts"] >= 1  # the family exercises the cuts and the filter
    ref = dmlopt.solve(inst, formulation="aggregated", threads=1, time_limit=60, mip_gap=0.0)
    assert ref.status == "optimal"
    assert _checked(inst, bv) == pytest.approx(ref.objective, abs=1e-9)


def test_a_cut_without_its_deployment_part_is_caught(monkeypatch):
    # the mutant "capacity only" cut (drops sum (1 - eta_j)) forbids blocking a request at the
    # cut capacities: on CUT[0], whose optimum blocks one, its bound passes the optimum
    inst = _inst(CUT[0])
    good = benders.capacity_benders(inst, time_limit=60)
    assert sum(a is None for a in good.solution.requests) >= 1
    add = benders._Master.add_cut
    monkeypatch.setattr(benders._Master, "add_cut",
                        lambda self, capacity, deployed: add(self, capacity, []))
    bad = benders.capacity_benders(inst, time_limit=60)
    assert bad.bound > good.bound + 0.05


#: the mutant below runs until its limit (it keeps cutting vectors that have schedules)
MUTANT_SECONDS = 10


def _time_outs(monkeypatch) -> None:
    """Every subproblem check ends undecided, as at a time limit."""
    check = benders._Sub.check

    def undecided(self, capacity, deployed, seconds):
        check(self, capacity, deployed, seconds)
        return "undecided", None

    monkeypatch.setattr(benders._Sub, "check", undecided)


@pytest.mark.parametrize("spec", CUT[:2])
def test_a_time_out_is_never_a_cut(monkeypatch, spec):
    # with every check timed out, the method stops at the master's first bound: still at most
    # the optimum, no cut, no schedule
    inst = _inst(spec)
    opt = benders.capacity_benders(inst, time_limit=60).bound
    _time_outs(monkeypatch)
    bv = benders.capacity_benders(inst, time_limit=60)
    assert bv.bound <= opt + 1e-9
    assert bv.metrics["cuts"] == 0 and bv.solution is None
    # the mutant that treats the time-out as a proof of infeasibility cuts a capacity vector
    # that has a schedule: its bound passes the optimum (or the master runs dry)
    monkeypatch.setattr(benders, "UNDECIDED", "mutant")
    try:
        bad = benders.capacity_benders(inst, time_limit=MUTANT_SECONDS).bound
    except SolverError:
        bad = float("inf")
    assert bad > opt + 1e-6


def test_the_time_limit_holds():
    # a 10-request instance the method does not finish: it returns within the limit (plus the
    # model build and a HiGHS stop) with a valid bound, at most the library's best schedule
    inst = dmlopt.load("rar/cpn6-r10-mincu-s3")
    t0 = time.perf_counter()
    bv = benders.capacity_benders(inst, time_limit=8)
    assert time.perf_counter() - t0 < 8 + 20  # slack for a loaded machine; no limit: hours
    assert bv.bound <= 34 / 60 + 1e-9
    assert bv.metrics["proven"] == 0.0


def test_other_schemes_are_refused():
    inst = rar.generate_random(scheme="MinT", **TINY[0])
    with pytest.raises(InstanceError, match="scheme"):
        benders.capacity_benders(inst, time_limit=10)


@pytest.mark.parametrize(("kw", "field"), [
    ({"time_limit": -1}, "time_limit"), ({"time_limit": float("nan")}, "time_limit"),
    ({"time_limit": True}, "time_limit"), ({"check_seconds": 0}, "check_seconds"),
    ({"check_seconds": "x"}, "check_seconds"), ({"check_seconds": float("inf")}, "check_seconds"),
    ({"threads": 0}, "threads"), ({"filter": "yes"}, "filter")])
def test_bad_arguments_are_refused_naming_the_field(kw, field):
    # catches a nan or negative limit taken as "no limit" (the method then runs for hours)
    inst = dmlopt.load("rar/cpn6-r10-mincu-s3")
    with pytest.raises(InstanceError, match=field):
        benders.capacity_benders(inst, **kw)


@pytest.mark.parametrize("spec", CUT)
@pytest.mark.parametrize("check", ["highs", "cpsat"])
def test_neighbour_cuts_keep_the_optimum(spec, check):
    # many cuts per master solve (the refuted vector's neighbours of the same total): the
    # bound and the evaluated schedule still equal aggregated's optimum; catches a neighbour
    # cut that removes a schedule (bound above the optimum) and a feasible neighbour lost
    # (no schedule meeting the bound)
    if check == "cpsat":
        pytest.importorskip("ortools")
    inst = _inst(spec)
    bv = benders.capacity_benders(inst, time_limit=60, neighbours=10, check=check)
    ref = dmlopt.solve(inst, formulation="aggregated", threads=1, time_limit=60, mip_gap=0.0)
    assert ref.status == "optimal"
    assert _checked(inst, bv) == pytest.approx(ref.objective, abs=1e-9)
    assert bv.metrics["proven"] == 1.0


def test_neighbours_save_master_solves():
    # on CUT[1] the plain method needs 4 cuts, one master solve each; with the neighbours
    # checked in the same round it needs fewer master solves (catches a neighbour loop that
    # checks nothing or adds no cut)
    inst = _inst(CUT[1])
    plain = benders.capacity_benders(inst, time_limit=60)
    many = benders.capacity_benders(inst, time_limit=60, neighbours=10)
    assert many.metrics["neighbour_checks"] >= 1
    assert many.metrics["iterations"] < plain.metrics["iterations"]


def _neighbour_time_outs(monkeypatch) -> None:
    """Every check made while refuting neighbours ends undecided, as at a time limit."""
    run = benders._neighbours

    def timed_out(sub, *args):
        real = sub.check

        def undecided(capacity, deployed, seconds):
            real(capacity, deployed, seconds)
            return "undecided", None

        sub.check = undecided
        try:
            run(sub, *args)
        finally:
            del sub.check

    monkeypatch.setattr(benders, "_neighbours", timed_out)


def test_a_neighbour_time_out_is_never_a_cut(monkeypatch):
    # timed-out neighbour checks add no cut: the bound stays the optimum; the mutant that
    # takes such a time-out as a refutation cuts a neighbour that has a schedule, and its
    # bound passes the optimum (on CUT[2], where the optimum's capacity vector is a neighbour
    # of a refuted one; or the master runs dry)
    inst = _inst(CUT[2])
    opt = benders.capacity_benders(inst, time_limit=60).bound
    _neighbour_time_outs(monkeypatch)
    bv = benders.capacity_benders(inst, time_limit=60, neighbours=10)
    assert bv.bound == pytest.approx(opt, abs=1e-9)
    monkeypatch.setattr(benders, "UNDECIDED", "mutant")
    try:
        bad = benders.capacity_benders(inst, time_limit=MUTANT_SECONDS, neighbours=10).bound
    except SolverError:
        bad = float("inf")
    assert bad > opt + 1e-6


@pytest.mark.parametrize(("kw", "field"), [
    ({"neighbours": -1}, "neighbours"), ({"neighbours": True}, "neighbours"),
    ({"neighbours": 1.5}, "neighbours"), ({"core": "yes"}, "core")])
def test_bad_neighbour_arguments_are_refused_naming_the_field(kw, field):
    inst = dmlopt.load("rar/cpn6-r10-mincu-s3")
    with pytest.raises(InstanceError, match=field):
        benders.capacity_benders(inst, **kw)
