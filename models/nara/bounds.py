"""Upper bounds on the accepted requests of a Nara episode (paper 001), all requests known.

Every online allocator, and the offline optimum of formulation ``"offline"``, accepts at most
what these bounds say.

``"aggregate"`` (the default, the strongest that scales): a 0-1 program in the acceptance
variables only (one per request), solved by HiGHS's branch and bound. At every step (section
3.2: request j arrives at step j; the requests with i <= j < i + t_i hold their resources) the
accepted active requests must fit the data centre *as a whole*:

* CPU and memory: sum c_i <= total CPU, sum m_i <= total memory (constraints 1-2 of section
  3.1 summed over the servers);
* server access links: a request that no single server can hold uses at least
  need_i = max(ceil(c_i / max CPU), ceil(m_i / max memory)) servers and charges b_i on the
  access link of each (constraint 3, charging rule of :mod:`dmlopt.models.nara`). On one server
  the charges sum to at most its capacity, so for every dual-feasible function f (a function
  f: [0, 1] -> [0, 1] with sum f(x_k) <= 1 whenever sum x_k <= 1) the sum over accepted active
  requests of need_i f(b_i / capacity) is at most the number of servers (Fekete and Schepers'
  f_0^eps and u^(k); f(x) = x gives the plain bandwidth row);
* rack uplinks: a request larger than any rack (CPU or memory) uses at least
  ceil(c_i / max rack CPU) (or memory) racks and charges b_i on at least one uplink of each
  (a link of the rack switch that does not go to a server): sum of racks_i b_i <= the summed
  uplink capacity.

Relaxed: which server holds what, migration over time (a request may "move" between steps),
paths. Valid at any stop: HiGHS's dual bound of the 0-1 program is an upper bound on its
optimum, which is an upper bound on the episode's. Objective values are integers, so the bound
is rounded down after the safety margin of :func:`dmlopt.bounds.safe`.

``"cover"``: the same 0-1 program with cover cuts, sum of acc_i over S <= |S| - 1 for sets S of
its selection's active requests that are proven not to fit the empty data centre at once; it is
solved again until no set of the selection is proven infeasible or the time is spent
(:mod:`dmlopt.models.nara.fitcuts`). Never above ``"aggregate"`` (its first round).
``"aggregate-lp"``: the LP relaxation of the same rows (no branching; weaker, milliseconds).
``"mip"`` and ``"lp"``: the generic dual bound and LP relaxation of formulation ``"offline"``
(:mod:`dmlopt.bounds`); the MILP grows with requests x servers x candidate paths and is only
practical for short episodes.
"""

from __future__ import annotations

from typing import Any

import pydantic

from dmlopt.bounds import lp_relaxation, mip_bound
from dmlopt.contract import Bound, Size
from dmlopt.models.nara.aggregate import (  # noqa: F401 (re-exported)
    _SHIFT,
    _SLACK,
    AGGREGATE_SECONDS,
    DFFS,
    MAX_TERMS,
    PRIMAL,
    AggregateOptions,
    _aggregate_estimate,
    _count_bound,
    _primal,
    _solve_rows,
    aggregate_bound,
    aggregate_lp_bound,
    aggregate_rows,
    binary_program,
)
from dmlopt.models.nara.fitcuts import cover_bound
from dmlopt.models.nara.instance import Instance
from dmlopt.models.nara.schedule import (  # noqa: F401 (re-exported)
    SCHEDULE_HEURISTICS,
    SCHEDULE_SECONDS,
    ScheduleOptions,
    _lagrangian,
    _maximal_steps,
    _price,
    _schedule_estimate,
    _server_types,
    _spans,
    schedule_bound,
)


class CoverOptions(AggregateOptions):
    """Options of the cover bound (:mod:`dmlopt.models.nara.fitcuts`)."""

    fit_seconds: float = pydantic.Field(
        5.0, gt=0, le=3600, description="seconds of one fit proof (the schedule bound of the "
        "one-step episode of a set; a stopped proof only proves less)")
    shrink: bool = pydantic.Field(
        True, description="shrink every set proven not to fit to a minimal cover (deletion "
        "filter) before its cut is added")


def _cover_estimate(instance: Instance, options: Any) -> Size:
    # rounds of the aggregate 0-1 program plus one small schedule bound per set checked
    base = _aggregate_estimate(instance, options)
    n = float(len(instance.requests))
    return Size(memory=base.memory + 2000.0 * n * n, work=20.0 * base.work + 1e5 * n * n)


#: the bound methods, strongest first (module docstring)
BOUNDS: dict[str, Bound] = {
    "aggregate": Bound(aggregate_bound, AggregateOptions, _aggregate_estimate,
                       "0-1 program in the acceptances: per-step total CPU, memory, access-link "
                       "(dual-feasible functions) and rack-uplink rows (HiGHS)",
                       heuristics=(PRIMAL,)),
    "schedule": Bound(schedule_bound, ScheduleOptions, _schedule_estimate,
                      "per-server schedules over time (Dantzig-Wolfe column generation, "
                      "Lagrangian bound at any stop) with the aggregate rows (HiGHS)",
                      heuristics=SCHEDULE_HEURISTICS),
    "cover": Bound(cover_bound, CoverOptions, _cover_estimate,
                   "aggregate with cover cuts of the selected sets proven not to fit the data "
                   "centre at once (fit proofs by the schedule bound of a one-step episode)",
                   heuristics=(PRIMAL,)),
    "mip": mip_bound("offline"),
    "lp": lp_relaxation("offline"),
    "aggregate-lp": Bound(aggregate_lp_bound, AggregateOptions, _aggregate_estimate,
                          "LP relaxation of the aggregate bound's rows (HiGHS)",
                          heuristics=(PRIMAL,)),
}
