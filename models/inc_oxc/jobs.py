"""INC/OXC (paper 002): dual bounds, i.e. upper bounds on f = 1 / longest JCT.

The objective is the bottleneck f = min over workers of b_ij / a_ij (eq. 16-17), so f can be no
larger than what any single job could reach if it had the whole DCN to itself. For one job i,
every worker needs a rate r_i >= a_i f with a_i = 2 d_i (1 + alpha_i) when its PS runs on a
server and a_i = 2 d_i on a PDP switch, and

* PS on a server of rack t: all m_i flows end on the PS-side pool link of t (12), so
  m_i a_i f <= N_ToR B;
* PS on the PDP switch of rack t: the workers placed in t reach it over t's pool link (10) and
  are at most H_it (the number of job i's workers rack t's CPU / GPU / memory can hold, (2));
  every other worker reaches t over OXC circuits s -> t (13). Rack t has N_ToR OXC ports, so
  the circuits into t are at most N_ToR in all; a rack s holding n_s workers of the job needs
  n_s r_i <= B c_st, n_s <= H_is and n_s r_i <= N_ToR B.

For a static port pairing (the paper's L_nm, both MILPs, every heuristic that returns ``oxc``)
the circuit counts c_st are integers: the most workers a switch PS in t can then serve at rate r
is H'_it + max { sum_s min(H'_is, floor(c_s B / r)) : sum_s c_s <= N_ToR }, H' = min(H,
floor(N_ToR B / r)), a small knapsack over the circuit budget solved by dynamic programming; the
largest f at which it reaches m_i is found by bisection (the count is non-increasing in f), and
the upper end of the final bracket is returned. A time-shared OXC (``Solution.oxc_schedule``)
gives fractional time-averaged circuit counts; its bound lets the circuits into t carry
N_ToR B in total. Further valid rules: at most sum_k C_k jobs hold a switch slot (1), and the
worker-side pool links of all racks carry every worker's rate (10).

Every capacity is taken with the evaluator's tolerance (relative :data:`TOL` plus 1e-9), so a
solution the evaluator accepts never exceeds the bound; the result is moved by
:func:`dmlopt.bounds.safe` as well.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any

import numpy as np

from dmlopt.bounds import safe
from dmlopt.contract import BoundValue, Options, Size
from dmlopt.models.inc_oxc.constants import SENSE, TOL
from dmlopt.models.inc_oxc.hosting import check_hostable
from dmlopt.models.inc_oxc.instance import Instance

#: bisection stops when the bracket is this small relative to its upper end
_BISECT_REL = 1e-10

#: at most this many bisection steps per job
_BISECT_STEPS = 200

#: absolute slack of the evaluator's capacity checks
_ABS = 1e-9


class JobsOptions(Options):
    """Options of the per-job bounds (none: the bound is deterministic and exact per job)."""


def fit_counts(instance: Instance, i: int) -> np.ndarray:
    """Most workers of job i each rack's pool can hold, other jobs and PS aside (rule (2)).

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    i : int
        A job index.

    Returns
    -------
    numpy.ndarray
        (R,) integers H_ik <= m_i: for each resource the largest n whose n smallest worker
        demands of job i fit into the rack's capacity (with the evaluator's tolerance), the
        minimum over CPU, GPU and memory. Exact for identical workers, an upper bound otherwise.

    References
    ----------
    Paper 002, section II-B, eq. (2) (pool resources).
    """
    A = instance.arrays
    dem = np.sort(A["wdem"][A["job_of"] == i], axis=0)          # (m, 3) ascending per column
    prefix = np.cumsum(dem, axis=0)                              # n smallest, per resource
    cap = A["cap"] * (1 + TOL) + _ABS                            # (R, 3)
    counts = np.stack([np.searchsorted(prefix[:, r], cap[:, r], side="right")
                       for r in range(3)], axis=1)
    return counts.min(axis=1).astype(np.int64)


def _remote_static(others: list[int], per_link: int, P: int, r: float, B: float) -> int:
    """Most workers the circuits into one rack can carry at rate r from racks holding at most
    ``others[s]`` workers each: a knapsack over the integer circuit budget P (DP)."""
    caps = [min(h, per_link) for h in others]
    by_cap = Counter(h for h in caps if h > 0)
    circ = np.arange(P + 1, dtype=float)
    carried = np.floor((circ * B * (1 + TOL) + _ABS) / r)       # workers c circuits carry
    best = np.zeros(P + 1)                                       # best[c]: <= c circuits used
    for h, count in sorted(by_cap.items()):
        val = np.minimum(carried, h)
        for _ in range(min(count, P)):
            new = best.copy()
            for c in range(1, P + 1):
                if val[c] <= 0:
                    continue
                np.maximum(new[c:], best[:P + 1 - c] + val[c], out=new[c:])
            if np.array_equal(new, best):
                break
            best = new
    return int(best[P])


class _Job:
    """The single-job relaxation of job i (see the module docstring)."""

    def __init__(self, instance: Instance, i: int) -> None:
        A = instance.arrays
        self.m = int(A["size"][i])
        self.d = float(A["data"][i])
        self.alpha = float(A["alpha"][i])
        self.R, self.P, self.B = instance.n_racks, instance.n_tor, instance.port_bw
        self.NB = instance.capacity * (1 + TOL) + _ABS
        self.H = fit_counts(instance, i)
        self.pdp = [int(k) for k in np.flatnonzero(A["slots"] > 0)]
        self._cache: dict[tuple[int, int], int] = {}
        self._pdp_of: list[int] | None = None   # the list self._pdp_idx was made from
        self._pdp_idx = np.zeros(0, dtype=np.int64)

    def server(self) -> float:
        """Bound with the PS on a server: m a f <= N_ToR B on the PS-side link (12)."""
        return self.NB / (self.m * 2 * self.d * (1 + self.alpha))

    def served(self, f: float, static: bool) -> int:
        """Most workers a switch PS (best PDP rack) can serve at f."""
        r = 2 * self.d * f
        per = self.NB / r   # compared before flooring: a tiny r makes it inf
        per_link = self.m if per >= self.m else math.floor(per)
        if per_link <= 0:
            return 0
        total = int(np.minimum(self.H, per_link).sum())
        best = 0
        if not static:
            # time-shared: circuits into t average at most P (1 + TOL), each load within
            # B c (1 + TOL) + 1e-9; best over the PDP racks t of own + min(total - own, into)
            into_f = (self.P * (1 + TOL) * self.B * (1 + TOL) + (self.R - 1) * _ABS) / r
            into = total if into_f >= total else math.floor(into_f)
            if not self.pdp:
                return 0
            if self._pdp_of is not self.pdp:  # the PDP racks as an index array, once per list
                self._pdp_of, self._pdp_idx = self.pdp, np.asarray(self.pdp, dtype=np.int64)
            own = np.minimum(self.H[self._pdp_idx], per_link)
            return int((own + np.minimum(total - own, into)).max())
        self._cache.clear()
        for t in self.pdp:
            own = min(int(self.H[t]), per_link)
            key = (own, per_link)
            if key not in self._cache:
                others = [int(h) for k, h in enumerate(self.H) if k != t]
                self._cache[key] = _remote_static(others, per_link, self.P, r, self.B)
            best = max(best, own + self._cache[key])
            if best >= self.m:
                break
        return best

    def switch(self, static: bool, hi: float | None = None,
               deadline: float | None = None) -> float:
        """Bound with the PS on a switch: the upper end of a bisection on ``served >= m``
        (starting below ``hi`` when given, which must be a valid bound itself)."""
        if not self.pdp:
            return 0.0
        top = 2 * self.NB / (2 * self.d)                         # per_link = 0 there
        hi = top if hi is None else min(hi, top)
        lo = 0.0
        if self.served(hi, static) >= self.m:
            return hi
        for _ in range(_BISECT_STEPS):
            if hi - lo <= _BISECT_REL * hi:
                break
            if deadline is not None and time.perf_counter() > deadline:
                break
            mid = 0.5 * (lo + hi)
            if self.served(mid, static) >= self.m:
                lo = mid
            else:
                hi = mid
        return hi


def job_bounds(instance: Instance, i: int, *, static: bool = True) -> tuple[float,
                                                                              dict[int, float]]:
    """Upper bounds on f by where job i's PS runs: on a server (any rack), on each PDP switch.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    i : int
        A job index.
    static : bool
        True: integer circuit counts (static port pairing); False: time-shared OXC allowed.

    Returns
    -------
    tuple
        (bound with the PS on a server, {PDP rack t: bound with the PS on the switch of t}),
        without the safety margin. With job i's PS at a place, f is at most the bound of that
        place, so ``f <= srv * sum_k ps_ik + sum_t sw[t] * pc_it`` is a valid inequality.

    References
    ----------
    Paper 002, section II-B, eqs. (2), (10), (12), (13); this module's docstring.
    """
    job = _Job(instance, i)
    every = job.pdp
    switch: dict[int, float] = {}
    for t in every:
        job.pdp = [t]
        switch[t] = job.switch(static)
    job.pdp = every
    return job.server(), switch


def jobs_bound(instance: Instance, *, static: bool = True,
               time_limit: float | None = None) -> tuple[float, dict[str, float]]:
    """Upper bound on f from the single-job relaxations, PDP slots and pool links.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    static : bool
        True: integer circuit counts (a static OXC pairing, the paper's model); False: also
        valid for a time-shared OXC schedule (fractional time-averaged circuits).
    time_limit : float or None
        Seconds; when reached the static refinement stops and the bound so far (still valid)
        is returned.

    Returns
    -------
    tuple
        (bound on f before the safety margin, metrics). An instance whose PS cannot all be
        hosted (:func:`dmlopt.models.inc_oxc.hosting.unhostable`) raises InstanceError.

    References
    ----------
    Paper 002, section II-B: eqs. (1), (2), (10), (12), (13), (16)-(17). The bound relaxes
    the coupling between jobs (each job alone in the DCN), as in Lagrangian decomposition with
    zero multipliers; Wolsey, *Integer Programming* (2nd ed., 2020), section 2.2.
    """
    check_hostable(instance)  # no PS placement at all: InstanceError, not a bound
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    A = instance.arrays
    J = len(instance.jobs)
    jobs = [_Job(instance, i) for i in range(J)]
    srv = np.array([job.server() for job in jobs])
    shared = np.array([job.switch(False) for job in jobs])
    per_job = np.maximum(srv, shared)
    # (1): jobs beyond the switch slots run their PS on a server
    slots = int(A["slots"].sum())
    slot_bound = float(np.sort(srv)[slots]) if slots < J else math.inf
    # (10) summed over all racks: every worker carries at least 2 d_i f
    NB = instance.capacity * (1 + TOL) + _ABS
    pool_bound = instance.n_racks * NB / float(2 * A["data"] @ A["size"])
    timeshared = float(min(per_job.min(), slot_bound, pool_bound))
    value, refined, stopped = timeshared, 0, 0.0
    if static:
        # refine the binding jobs first (a stop by the time limit keeps the bound valid); a
        # job's refined bound is at least its server bound, so a job whose server bound is
        # not below the current value cannot lower it
        for i in np.argsort(per_job, kind="stable"):
            if srv[i] >= value or shared[i] <= srv[i]:
                continue
            if deadline is not None and time.perf_counter() > deadline:
                stopped = 1.0
                break
            sw = jobs[i].switch(True, hi=float(shared[i]), deadline=deadline)
            value = min(value, max(float(srv[i]), sw))
            refined += 1
    metrics = {"bound_f": value, "longest_jct_lower": 1.0 / value if value > 0 else math.inf,
               "timeshared_bound_f": timeshared, "slot_bound_f": slot_bound,
               "pool_bound_f": pool_bound, "jobs_refined": float(refined),
               "stopped_by_time_limit": stopped,
               "binding_job": float(np.argmin(per_job))}
    return value, {k: v for k, v in metrics.items() if math.isfinite(v)}




#: bisection steps a job's time-shared bound takes in practice (38 on average on 4,096 racks
#: and on 64; the rule stops at a relative width of 1e-10 of f, :data:`_BISECT_STEPS` at most)
_TYPICAL_STEPS = 60


def _jobs_estimate(static: bool) -> Any:
    def estimate(instance: Instance, _options: Any) -> Size:
        R, P = instance.n_racks, instance.n_tor
        W = float(instance.arrays["size"].sum())
        J = float(len(instance.jobs))
        # every job's time-shared bisection (no clock: it runs to the end), one call of
        # ``served`` per step: a few numpy passes over the racks and its fixed cost
        # (measured 28 us per call on 4,096 racks, 11.5 us on 1,024, 7.3 us on 64)
        work = 3 * W + J * _TYPICAL_STEPS * (6.0 * R + 7e3)
        if static:   # then the static refinement (clock-checked): a DP over 0..P per rack
            work += J * _BISECT_STEPS * R * (P * P + 1.0)
        return Size(64.0 * (R + P + W), work)

    return estimate


def _jobs_function(static: bool) -> Any:
    def function(instance: Instance, *, time_limit: float | None = None) -> BoundValue:
        """Upper bound on f from each job alone in the DCN (:func:`jobs_bound`).

        ``jobs`` counts integer circuits (static port pairings only); ``jobs-timeshared``
        fractional ones (every solution the evaluator accepts).

        Parameters
        ----------
        instance : Instance
            The INC/OXC instance.
        time_limit : float or None, optional
            Seconds; when reached the static refinement stops with a valid bound (default
            None: no limit).

        Returns
        -------
        BoundValue
            The bound on f (1/s), moved by :func:`dmlopt.bounds.safe`; metrics of
            :func:`jobs_bound`; no solution.

        References
        ----------
        Paper 002 (Dong et al.), section II-B, eqs. (1), (2), (10), (12), (13), (16)-(17);
        ours: the per-job relaxation (Lagrangian decomposition with zero multipliers, Wolsey,
        *Integer Programming*, 2nd ed., 2020, section 2.2).
        """
        value, metrics = jobs_bound(instance, static=static, time_limit=time_limit)
        return BoundValue(safe(value, SENSE), metrics=metrics)

    return function
