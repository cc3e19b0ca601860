"""INC/OXC evaluator (paper 002, eqs. 1-17) on hand-made solutions: every capacity rule at its
boundary, the metrics by hand with JCTs below one second, and the messages of the PS rules.
Written from mutation testing (``make mutation TARGETS=inc_oxc``: 88 of 322 mutants of the
evaluator survived the earlier tests, then 42, now 27, all equivalent: docs/development.md)."""

from __future__ import annotations

import numpy as np
import pytest

from dmlopt.models import inc_oxc as M

BIG = {"cpu": 100.0, "gpu": 100.0, "mem": 100.0}
W = {"cpu": 1.0, "gpu": 1.0, "mem": 1.0}


def two_jobs(racks=None, n_tor: int = 4, inc: bool = True, data0: float = 25.0):
    """Job 0: two workers (d = data0, alpha = 0); job 1: one worker (d = 20, alpha = 0.5)."""
    jobs = [{"data": data0, "alpha": 0.0, "ps_cpu": 1.0, "ps_mem": 1.0, "workers": [W, W]},
            {"data": 20.0, "alpha": 0.5, "ps_cpu": 1.0, "ps_mem": 1.0, "workers": [W]}]
    return M.Instance(racks=racks or [BIG, BIG], n_tor=n_tor, port_bw=100.0, inc=inc,
                      jobs=jobs)


def solution(inst, ps=((0, "server"), (0, "server")), c=((0, 4), (4, 0)),
             bw=((100.0, 100.0), (100.0,)), workers=((0, 0), (1,))):
    return M.Solution(workers=[list(w) for w in workers], ps=[tuple(p) for p in ps],
                      oxc=M.ports_from_circuits(inst, np.array(c)),
                      bandwidth=[list(b) for b in bw])


def test_metrics_by_hand_below_one_second():
    """JCT = 2 d / b (1 + alpha): job 0 2 * 25 / 100 = 0.5 s; job 1 2 * 20 / 100 * 1.5 = 0.6 s.
    Kills the JCT array starting at 1 instead of 0, f's 1 / longest, the inter-rack flow and
    data counts (job 1's worker in rack 1, its PS in rack 0), PS on switches and circuits."""
    inst = two_jobs()
    ev = M.evaluate(inst, solution(inst))
    assert ev.feasible, ev.violations
    assert ev.metrics["longest_jct"] == pytest.approx(0.6)
    assert ev.objective == pytest.approx(1 / 0.6)
    assert ev.metrics["mean_jct"] == pytest.approx((0.5 + 0.6) / 2)
    assert ev.metrics["inter_rack_flows"] == 1 and ev.metrics["inter_rack_data"] == 20
    assert ev.metrics["ps_on_switch"] == 0 and ev.metrics["circuits"] == 4
    assert ev.metrics["time_shared_oxc"] == 0


def test_pool_capacity_boundary():
    """Eq. (2): a rack holding exactly its capacity is feasible, one unit more is not."""
    tight = {"cpu": 4.0, "gpu": 2.0, "mem": 100.0}  # rack 0: 2 workers + 2 PS servers = 4 cpu
    inst = two_jobs(racks=[tight, BIG])
    assert M.evaluate(inst, solution(inst)).feasible
    inst = two_jobs(racks=[{**tight, "gpu": 1.999}, BIG])
    ev = M.evaluate(inst, solution(inst))
    assert not ev.feasible and any("gpu used 2 > capacity 1.999 (2)" in v for v in ev.violations)


def test_worker_side_link_boundary():
    """Eq. (10): rack 0's two workers pull at 100 + 100 = 200 = N_ToR * B with N_ToR = 2 (job
    1 keeps its PS in its own rack 1); at 100.001 the link is over."""
    inst = two_jobs(n_tor=2)
    ps = ((0, "server"), (1, "server"))
    sol = solution(inst, ps=ps, c=((0, 2), (2, 0)))
    assert M.evaluate(inst, sol).feasible, M.evaluate(inst, sol).violations
    ev = M.evaluate(inst, solution(inst, ps=ps, c=((0, 2), (2, 0)),
                                   bw=((100.0, 100.001), (100.0,))))
    assert not ev.feasible
    assert any("worker-side load" in v and "(10)" in v for v in ev.violations)


def test_circuit_load_boundary():
    """Eq. (13): job 1's flow crosses from rack 1 to rack 0 at 100 on one circuit of B = 100:
    exactly full is feasible, 100.001 is over; no circuit at all is over too."""
    inst = two_jobs()
    assert M.evaluate(inst, solution(inst, c=((0, 1), (1, 0)))).feasible
    over = solution(inst, c=((0, 1), (1, 0)), bw=((100.0, 100.0), (100.001,)))
    ev = M.evaluate(inst, over)
    assert not ev.feasible and any("circuits (13)" in v for v in ev.violations)


def test_ps_on_a_switch_messages():
    """Eqs. (1), (5): a PS on a ToR that is not PDP, or with INC off, is refused and the
    message says which."""
    inst = two_jobs()
    ev = M.evaluate(inst, solution(inst, ps=((0, "switch"), (0, "server"))))
    assert not ev.feasible and "which is not a PDP switch (1, 5)" in ev.violations[0]
    pdp = [{**BIG, "ps_slots": 1}, BIG]
    inst = two_jobs(racks=pdp, inc=False)
    ev = M.evaluate(inst, solution(inst, ps=((0, "switch"), (0, "server"))))
    assert not ev.feasible and "INC is off in this instance" in ev.violations[0]
    inst = two_jobs(racks=pdp)
    ev = M.evaluate(inst, solution(inst, ps=((0, "switch"), (0, "switch"))))
    assert not ev.feasible and "holds at most C_k = 1 PS" in ev.violations[0]
    ok = M.evaluate(inst, solution(inst, ps=((0, "switch"), (0, "server"))))
    assert ok.feasible and ok.metrics["ps_on_switch"] == 1


def test_malformed_decisions_are_infeasible_with_objective_zero():
    inst = two_jobs()
    bad = M.Solution(workers=[[0], [1]], ps=[(0, "server"), (0, "server")], oxc=[],
                     bandwidth=[[100.0], [100.0]])  # job 0 has two workers
    ev = M.evaluate(inst, bad)
    assert ev.feasible is False and ev.objective == 0.0 and ev.violations


def test_inter_rack_flow_from_a_lower_rack_counts():
    """Job 1's worker in rack 0 and its PS in rack 1 (the mirror of the metrics test): one
    inter-rack flow of d = 20 either way round (kills ``wrack != ps_rack`` as ``>``)."""
    inst = two_jobs()
    ev = M.evaluate(inst, solution(inst, ps=((0, "server"), (1, "server")),
                                   workers=((0, 0), (0,))))
    assert ev.feasible, ev.violations
    assert ev.metrics["inter_rack_flows"] == 1 and ev.metrics["inter_rack_data"] == 20


def test_slow_and_stopped_workers_by_hand():
    """JCT = 2 d / b (1 + alpha): job 1 at b = 0.5 takes 2 * 20 / 0.5 * 1.5 = 120 s (a rate
    below 1 is a rate, not a stopped worker); at b = 0 its JCT is infinite and f = 0."""
    inst = two_jobs()
    slow = M.evaluate(inst, solution(inst, bw=((100.0, 100.0), (0.5,))))
    assert slow.metrics["longest_jct"] == pytest.approx(120.0)
    assert slow.objective == pytest.approx(1 / 120.0)
    stopped = M.evaluate(inst, solution(inst, bw=((100.0, 100.0), (0.0,))))
    assert stopped.metrics["longest_jct"] == float("inf")
    assert stopped.objective == 0.0


def test_best_f_without_a_circuit_is_zero():
    """Job 1's flow crosses racks with no circuit: no rate fits it, so the best f of this
    placement and these circuits is 0 and its longest JCT infinite (and eq. 13 is broken)."""
    inst = two_jobs()
    ev = M.evaluate(inst, solution(inst, c=((0, 0), (0, 0))))
    assert not ev.feasible and any("circuits (13)" in v for v in ev.violations)
    assert ev.metrics["best_f"] == 0.0
    assert ev.metrics["best_longest_jct"] == float("inf")


def test_best_f_below_one_is_a_rate():
    """best_f = min over links of capacity / load at unit rate: job 1's coefficient
    2 * 20 * 1.5 = 60 on one circuit of B = 100 gives 100 / 60 (> 1, then the JCT 0.6 s); with
    port_bw = 0.5 it is 0.5 / 60 < 1, the longest JCT 120 s, not infinite."""
    inst = M.Instance(racks=[BIG, BIG], n_tor=4, port_bw=0.5, inc=True,
                      jobs=two_jobs().model_dump()["jobs"])
    ev = M.evaluate(inst, solution(inst, bw=((0.5, 0.5), (0.5,))))
    assert ev.metrics["best_f"] > 0
    assert ev.metrics["best_longest_jct"] == pytest.approx(1 / ev.metrics["best_f"])
    assert ev.metrics["best_longest_jct"] < float("inf")


@pytest.mark.parametrize("where", ["pool", "worker_link", "circuit"])
def test_loads_within_the_relative_tolerance_are_feasible(where):
    """Capacities are compared with a relative tolerance TOL = 1e-6 (constants.TOL): a load
    TOL / 2 above a capacity is accepted, 2 TOL above is not (kills the tolerance written as
    ``1 ** tol``, ``1 - tol`` or dropped)."""
    from dmlopt.models.inc_oxc.constants import TOL

    def evaluate(scale):
        if where == "pool":
            tight = {"cpu": 4.0 / scale, "gpu": 100.0, "mem": 100.0}
            inst = two_jobs(racks=[tight, BIG])
            return M.evaluate(inst, solution(inst))
        if where == "worker_link":
            inst = two_jobs(n_tor=2)
            bw = 100.0 * scale
            return M.evaluate(inst, solution(inst, ps=((0, "server"), (1, "server")),
                                             c=((0, 2), (2, 0)), bw=((bw, bw), (100.0,))))
        inst = two_jobs()
        return M.evaluate(inst, solution(inst, c=((0, 1), (1, 0)),
                                         bw=((100.0, 100.0), (100.0 * scale,))))

    assert evaluate(1 + TOL / 2).feasible
    assert not evaluate(1 + 2 * TOL).feasible
