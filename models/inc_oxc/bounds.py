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
import pydantic

from dmlopt import solvers
from dmlopt.bounds import lp_relaxation, safe
from dmlopt.contract import Bound, BoundValue, Options, Size
from dmlopt.models.inc_oxc.constants import SENSE, TOL
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
        (bound on f before the safety margin, metrics).

    References
    ----------
    Paper 002, section II-B: eqs. (1), (2), (10), (12), (13), (16)-(17). The bound relaxes
    the coupling between jobs (each job alone in the DCN), as in Lagrangian decomposition with
    zero multipliers; Wolsey, *Integer Programming* (2nd ed., 2020), section 2.2.
    """
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



# ------------------------------------------------------------------------------------------
# configurations: a column-generation LP over the shared resources, bisection on f


class ConfigsOptions(Options):
    """Options of the configuration LP bound (``configs``)."""

    precision: float = pydantic.Field(
        default=1e-4, gt=0, le=0.5,
        description="relative width of the final bisection bracket on f")


class ConfigurationLP:
    """The master LP of the configuration bound at one f, and the pricing of its columns.

    Rows, each scaled so that its right-hand side is about 1 (``rhs``):

    * ``conv_i``: sum_q lambda_iq <= 1 (job i takes at most one configuration in all);
    * ``res_kd``: demand d (CPU, GPU, memory) of workers and server PS in rack k (2);
    * ``wside_k``: the rates of the workers in rack k (10); ``pside_t``: the rates into a
      server PS in rack t (12); ``slot_t``: switch PS in rack t <= C_t (1);
    * ``load_st``: rates from workers in s to a PS in t <= B c_st, with c_st = c_ts >= 0
      fractional, and ``port_s``: sum_t c_st <= N_ToR (13).

    Every capacity carries the evaluator's tolerance (relative :data:`TOL`, plus 1e-9).
    """

    def __init__(self, instance: Instance) -> None:
        A = instance.arrays
        self.R, self.P, self.B = instance.n_racks, instance.n_tor, instance.port_bw
        self.J = len(instance.jobs)
        R = self.R
        self.NB = instance.capacity * (1 + TOL) + _ABS
        self.capres = A["cap"] * (1 + TOL) + _ABS                  # (R, 3)
        self.slots = A["slots"].astype(float)
        self.m = A["size"].astype(np.int64)
        self.d = A["data"].astype(float)
        self.alpha = A["alpha"].astype(float)
        self.psdem = A["psdem"].astype(float)
        # the componentwise smallest worker of each job (each of its workers needs that much)
        self.wmin = np.stack([A["wdem"][A["job_of"] == i].min(axis=0) for i in range(self.J)])
        self.H = np.stack([fit_counts(instance, i) for i in range(self.J)])    # (J, R)
        self.ps_fits = (self.psdem[:, None, :] <= self.capres[None, :, :]).all(axis=2)
        # most rate the (time-averaged) circuits of one rack carry in one direction
        self.circ = self.B * (1 + TOL) * self.P * (1 + TOL) + (R - 1) * _ABS
        self.o_res = self.J
        self.o_w = self.o_res + 3 * R
        self.o_p = self.o_w + R
        self.o_slot = self.o_p + R
        self.o_load = self.o_slot + R                               # s * R + t
        self.o_port = self.o_load + R * R
        self.n_rows = self.o_port + R
        rhs = np.ones(self.n_rows)
        rhs[self.o_slot:self.o_load] = self.slots
        rhs[self.o_load:self.o_port] = _ABS / self.B
        rhs[self.o_port:] = self.P * (1 + TOL)
        self.rhs = rhs

    def rate(self, i: int, server: bool, f: float) -> float:
        """The least rate of a worker of job i at f: a_i f (eqs. 14-16)."""
        return 2 * self.d[i] * (1 + self.alpha[i] * server) * f

    def places(self, i: int, server: bool, f: float) -> tuple[np.ndarray, np.ndarray, int]:
        """(racks where job i's PS may run, most workers per rack, most remote workers) at f."""
        r = self.rate(i, server, f)
        m = int(self.m[i])
        per_link = math.floor(self.NB / r * (1 + 1e-12))
        U = np.minimum(self.H[i], min(per_link, m))
        K = min(math.floor(self.circ / r * (1 + 1e-12)), m)
        if server:
            where = self.ps_fits[i] if per_link >= m else np.zeros(self.R, bool)
        else:
            where = self.slots > 0
        return np.flatnonzero(where), U, K

    def column(self, i: int, t: int, server: bool, n: np.ndarray, f: float
               ) -> tuple[np.ndarray, np.ndarray]:
        """The sparse master column (row indices, values) of a configuration at f."""
        R = self.R
        r = self.rate(i, server, f)
        use = np.zeros((R, 3))
        use += n[:, None] * self.wmin[i][None, :]
        rows = {self.o_res + 3 * k + q: use[k, q] / self.capres[k, q]
                for k in np.flatnonzero(n) for q in range(3)}
        if server:
            for q in range(3):
                key = self.o_res + 3 * t + q
                rows[key] = rows.get(key, 0.0) + self.psdem[i, q] / self.capres[t, q]
            rows[self.o_p + t] = float(self.m[i]) * r / self.NB
        else:
            rows[self.o_slot + t] = 1.0
        for k in np.flatnonzero(n):
            rows[self.o_w + k] = n[k] * r / self.NB
            if k != t:
                rows[self.o_load + k * R + t] = n[k] * r / self.B
        rows[i] = 1.0
        idx = np.array([k for k, v in rows.items() if v != 0], np.int64)
        return idx, np.array([rows[k] for k in idx])

    def price(self, i: int, server: bool, f: float, pi: np.ndarray, every: bool = False
              ) -> Any:
        """The least priced configuration of job i with its PS kind, exactly (or None).

        A configuration places n_s >= 0 workers in each rack s (sum m_i, n_s at most what
        one rack's pool resources and pool link hold, the remote ones at most what the
        circuits of one rack carry) and the PS in rack t; its price pi . column is linear in
        n, so for each t the remote workers fill the cheapest racks first and the number kept
        in t is the best of all (a convex function of it). Returns (price, t, n), or with
        ``every`` the list of the least priced configuration for each PS rack t."""
        where, U, K = self.places(i, server, f)
        if not where.size:
            return None
        R, m = self.R, int(self.m[i])
        r = self.rate(i, server, f)
        res = pi[self.o_res:self.o_w].reshape(R, 3)
        base = (res * (self.wmin[i][None, :] / self.capres)).sum(axis=1) \
            + pi[self.o_w:self.o_p] * r / self.NB                                      # (R,)
        load = pi[self.o_load:self.o_port].reshape(R, R).copy()                   # [s, t]
        np.fill_diagonal(load, 0.0)                     # workers in t use no circuit
        unit = base[None, :] + load.T[where] * (r / self.B)                      # [t, s]
        if server:
            fixed = (res[where] * (self.psdem[i][None, :] / self.capres[where])).sum(axis=1) \
                + pi[self.o_p + where] * m * r / self.NB
        else:
            fixed = pi[self.o_slot + where]
        T = len(where)
        rows = np.arange(T)
        own = unit[rows, where].copy()
        off = unit.copy()
        off[rows, where] = np.inf
        cap = np.broadcast_to(U, (T, R)).copy()
        cap[rows, where] = 0
        order = np.argsort(off, axis=1, kind="stable")
        scost = np.take_along_axis(off, order, axis=1)
        scap = np.take_along_axis(cap, order, axis=1)
        cum = np.cumsum(scap, axis=1)                                          # (T, R)
        ks = np.arange(1, m + 1)
        pos = (cum[:, :, None] < ks[None, None, :]).sum(axis=1)               # (T, m)
        pos = np.minimum(pos, R - 1)
        step = np.take_along_axis(scost, pos, axis=1)
        G = np.concatenate([np.zeros((T, 1)), np.cumsum(step, axis=1)], axis=1)  # (T, m + 1)
        reach = np.minimum(cum[:, -1], K)                                       # remote at most
        keep = np.arange(m + 1)                                                 # n_t
        total = fixed[:, None] + own[:, None] * keep[None, :] + G[:, m - keep]
        bad = (keep[None, :] > U[where][:, None]) | ((m - keep)[None, :] > reach[:, None])
        total[bad] = np.inf
        def config(a: int, nt: int) -> tuple[float, int, np.ndarray]:
            take = np.clip(m - nt - (cum[a] - scap[a]), 0, scap[a])
            n = np.zeros(R, np.int64)
            n[order[a]] = take
            n[where[a]] = nt
            return float(total[a, nt]), int(where[a]), n

        if every:
            nts = np.argmin(total, axis=1)
            return [config(a, int(nt)) for a, nt in enumerate(nts)
                    if math.isfinite(total[a, nt])]
        flat = int(np.argmin(total))
        a, nt = divmod(flat, m + 1)
        return config(a, nt) if math.isfinite(total[a, nt]) else None

    def lagrangian(self, f: float, pi: np.ndarray) -> tuple[float, list]:
        """An upper bound on the master LP's value with every configuration, from any row
        prices pi >= 0 (weak LP duality), and each job's least priced configurations.

        The circuit variables c_st need port prices sigma_s + sigma_t >= (1 + TOL) (rho_st +
        rho_ts); the ports' prices are raised where they fall short, which keeps the bound
        valid for any pi."""
        R = self.R
        pi = np.maximum(pi, 0.0)
        load = pi[self.o_load:self.o_port].reshape(R, R)
        w = (1 + TOL) * (load + load.T)
        np.fill_diagonal(w, 0.0)
        sig = pi[self.o_port:].copy()
        need = (w - sig[None, :]).max(axis=1)
        pi = pi.copy()
        pi[self.o_port:] = np.maximum(sig, need)
        value = float(pi[self.J:] @ self.rhs[self.J:])
        best = []
        for i in range(self.J):
            cands = [(p[0], p[1], srv, p[2]) for srv in (True, False)
                     if (p := self.price(i, srv, f, pi)) is not None]
            best.append(cands)
            low = min((c[0] for c in cands), default=math.inf)
            value += max(0.0, 1.0 - low)
        return value, best


def _master(cfg: ConfigurationLP, f: float, pool: dict) -> tuple[Any, list]:
    """The HiGHS master LP at f with the circuit columns and every pooled configuration that
    is still a configuration at f."""
    import highspy

    h = solvers.highspy_model()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    inf = highspy.kHighsInf
    h.addRows(cfg.n_rows, np.full(cfg.n_rows, -inf), cfg.rhs, 0,
              np.zeros(cfg.n_rows, np.int32), np.zeros(0, np.int32), np.zeros(0))
    R = cfg.R
    s, t = np.triu_indices(R, 1)
    n = len(s)
    idx = np.stack([cfg.o_load + s * R + t, cfg.o_load + t * R + s,
                    cfg.o_port + s, cfg.o_port + t], axis=1).reshape(-1)
    val = np.tile([-(1 + TOL), -(1 + TOL), 1.0, 1.0], n)
    h.addCols(n, np.zeros(n), np.zeros(n), np.full(n, inf), 4 * n,
              np.arange(0, 4 * n, 4, dtype=np.int32), idx.astype(np.int32), val)
    cols = []
    for key in list(pool):
        i, t_, srv, n_ = key
        where, U, K = cfg.places(i, srv, f)
        nv = np.asarray(n_)
        remote = int(nv.sum() - nv[t_])
        if t_ not in where or (nv > U).any() or remote > K:
            continue
        cols.append(key)
    _add(cfg, h, f, cols)
    return h, cols


def _add(cfg: ConfigurationLP, h: Any, f: float, keys: list) -> None:
    if not keys:
        return
    starts, idx, val = [], [], []
    nz = 0
    for i, t, srv, n in keys:
        ii, vv = cfg.column(i, t, srv, np.asarray(n), f)
        starts.append(nz)
        idx.append(ii)
        val.append(vv)
        nz += len(ii)
    k = len(keys)
    h.addCols(k, -np.ones(k), np.zeros(k), np.full(k, 1.0), nz, np.array(starts, np.int32),
              np.concatenate(idx).astype(np.int32), np.concatenate(val))


def _infeasible(cfg: ConfigurationLP, f: float, pool: dict, deadline: float | None,
                stats: dict) -> bool | None:
    """True: no fractional combination of configurations fits at f (proven by a Lagrangian
    bound below J); False: the LP has one (or the proof was not found); None: time is up."""
    J = cfg.J
    if not pool:
        # a start for every job and PS place, so that no rack is left unpriced: the
        # configuration of least (randomly perturbed) resource use
        rng = np.random.default_rng(0)
        pi0 = rng.uniform(0.5, 1.5, cfg.n_rows) / cfg.n_rows
        for i in range(J):
            for srv in (True, False):
                for _p, t, n in cfg.price(i, srv, f, pi0, every=True) or []:
                    pool[(i, t, srv, tuple(int(x) for x in n))] = None
    h, cols = _master(cfg, f, pool)
    while True:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        solvers.run_highspy(h)
        stats["lp_solves"] += 1
        if -h.getInfo().objective_function_value >= J - 1e-6:
            return False
        pi = -np.asarray(h.getSolution().row_dual)
        value, best = cfg.lagrangian(f, pi)
        if value < J - 1e-6:
            return True
        mu = np.maximum(pi[:J], 0.0)
        new = []
        for i, cands in enumerate(best):
            for p, t, srv, n in cands:
                key = (i, t, srv, tuple(int(x) for x in n))
                if 1.0 - mu[i] - p > 1e-9 and key not in pool:
                    pool[key] = None
                    new.append(key)
        if not new:
            return False
        stats["columns"] += len(new)
        _add(cfg, h, f, new)


def configs_bound(instance: Instance, *, precision: float = 1e-4,
                  time_limit: float | None = None) -> tuple[float, dict[str, float]]:
    """Upper bound on f from a configuration LP over the resources the jobs share.

    Each job takes one configuration: where its PS runs (a server or the PDP switch of a
    rack) and how many of its workers each rack holds, within what one rack's pool resources
    and pool link hold and what one rack's OXC ports carry at f. At a given f, the master
    LP asks for a fractional combination of configurations, at most one in all per job, within
    every shared capacity: pool resources (2), PDP slots (1), worker- and PS-side pool links
    (10), (12), and fractional circuits c_st = c_ts between every pair of racks with at most
    N_ToR per rack (13). Its columns are generated by exact pricing (:meth:`ConfigurationLP.price`);
    any row prices give a Lagrangian bound on the LP's value, and a value below the number of
    jobs proves that no solution reaches f. f is bisected between the best f proven that way
    and the largest one the LP admits. Fractional circuits are time-averaged circuits, so the
    bound holds for every solution the evaluator accepts, time-shared OXC schedules included.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    precision : float
        Relative width of the final bracket.
    time_limit : float or None
        Seconds; when reached, the smallest f proven so far (at most the ``jobs-timeshared``
        bound) is returned.

    Returns
    -------
    tuple
        (bound on f before the safety margin, metrics).

    References
    ----------
    Paper 002, section II-B, eqs. (1), (2), (10), (12), (13), (16)-(17). Dantzig-Wolfe
    decomposition and column generation: Desrosiers and Luebbecke, "A primer in column
    generation", in *Column Generation* (Springer, 2005); Lagrangian bounds from any dual
    prices: Wolsey, *Integer Programming* (2nd ed., 2020), sections 10.2-10.3.
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    start, base = jobs_bound(instance, static=False)
    cfg = ConfigurationLP(instance)
    pool: dict = {}
    stats = {"lp_solves": 0, "columns": 0, "steps": 0}
    hi, lo = start, None
    stopped = 0.0
    while True:
        if lo is None:
            f = 0.5 * hi if stats["steps"] else hi * (1 - 0.5 * precision)
        else:
            if hi - lo <= precision * hi:
                break
            f = math.sqrt(lo * hi)
        if f <= 0:
            break
        stats["steps"] += 1
        out = _infeasible(cfg, f, pool, deadline, stats)
        if out is None:
            stopped = 1.0
            break
        if out:
            hi = f
        else:
            lo = f
    metrics = {"bound_f": hi, "longest_jct_lower": 1.0 / hi if hi > 0 else math.inf,
               "jobs_timeshared_bound_f": start, "lp_admits_f": lo if lo is not None else 0.0,
               "bisection_steps": float(stats["steps"]), "lp_solves": float(stats["lp_solves"]),
               "columns": float(stats["columns"]), "stopped_by_time_limit": stopped,
               "seconds": time.perf_counter() - t0}
    return hi, {k: v for k, v in metrics.items() if math.isfinite(v)}



# ------------------------------------------------------------------------------------------
# placements at a fixed f: a feasibility MILP, bisection on f


def fixed_f_model(instance: Instance, f: float, *, static: bool = True) -> Any:
    """The feasibility MILP "some solution reaches f" (HiGHS model), linear because f is fixed.

    Variables: y_itk = 1 when job i's PS runs in rack t on a server (k = 0) or on the PDP
    switch (k = 1); x_istk >= 0 integer, job i's workers in rack s with that PS place
    (sum_s x_istk = m_i y_itk); c_st = c_ts circuits (integer when ``static``, else
    time-averaged). Every worker carries its least rate a_ik f, so (1), (2), (10), (12), (13)
    are linear. Workers of a job must be identical (the generators' jobs are).

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance, every job's workers identical.
    f : float
        The throughput rate to reach.
    static : bool
        True: integer circuit counts (static port pairings); False: fractional ones (also a
        time-shared OXC).

    Returns
    -------
    tuple
        (highspy.Highs model, one thread, no output, not yet run; its layout: per job a list
        of (t, server, y column, [(s, x column), ...]), and the circuit columns of the rack
        pairs s < t in lexicographic order first).

    References
    ----------
    Paper 002, section II-B, eqs. (1)-(13); at a fixed f the products r_i x of eqs. (10)-(13)
    are linear.
    """
    import highspy

    A = instance.arrays
    R, P, B = instance.n_racks, instance.n_tor, instance.port_bw
    J = len(instance.jobs)
    NB = instance.capacity * (1 + TOL) + _ABS
    capres = A["cap"] * (1 + TOL) + _ABS
    for i in range(J):
        if len(instance.worker_classes(i)) != 1:
            from dmlopt.errors import InstanceError

            raise InstanceError(f"jobs[{i}].workers", f"{len(instance.worker_classes(i))} "
                                "kinds", "the fixed-f model (placements bounds) needs "
                                "identical workers per job")
    inf = highspy.kHighsInf
    cols_lo, cols_hi, integ = [], [], []
    entries: list[tuple[int, int, float]] = []          # (row, col, value)
    rows_lo: list[float] = []
    rows_hi: list[float] = []

    def var(lo: float, hi: float, integer: bool) -> int:
        cols_lo.append(lo)
        cols_hi.append(hi)
        integ.append(integer)
        return len(cols_lo) - 1

    def row(lo: float, hi: float) -> int:
        rows_lo.append(lo)
        rows_hi.append(hi)
        return len(rows_lo) - 1

    res = np.array([[row(-inf, float(capres[k, q])) for q in range(3)] for k in range(R)])
    wside = [row(-inf, NB) for _ in range(R)]
    pside = [row(-inf, NB) for _ in range(R)]
    slot = [row(-inf, float(A["slots"][k])) for k in range(R)]
    load = {(s, t): row(-inf, _ABS) for s in range(R) for t in range(R) if s != t}
    port = [row(-inf, P if static else P * (1 + TOL)) for _ in range(R)]
    for s in range(R):
        for t in range(s + 1, R):
            c = var(0, P, static)
            for key in ((s, t), (t, s)):
                entries.append((load[key], c, -B * (1 + TOL)))
            entries.append((port[s], c, 1.0))
            entries.append((port[t], c, 1.0))
    H = np.stack([fit_counts(instance, i) for i in range(J)])
    layout: list[list] = []
    for i in range(J):
        layout.append([])
        m = int(A["size"][i])
        w = A["wdem"][A["job_of"] == i][0]
        one = row(1, 1)
        for server in (True, False):
            r = 2 * A["data"][i] * (1 + A["alpha"][i] * server) * f
            per_link = math.floor(NB / r * (1 + 1e-12))
            if per_link <= 0 or (server and per_link < m):
                continue
            for t in range(R):
                if server and not (A["psdem"][i] <= capres[t]).all():
                    continue
                if not server and A["slots"][t] <= 0:
                    continue
                y = var(0, 1, True)
                xs: list[tuple[int, int]] = []
                layout[i].append((t, server, y, xs))
                entries.append((one, y, 1.0))
                assign = row(0, 0)
                entries.append((assign, y, -float(m)))
                if server:
                    for q in range(3):
                        entries.append((int(res[t, q]), y, float(A["psdem"][i, q])))
                    entries.append((pside[t], y, m * r))
                else:
                    entries.append((slot[t], y, 1.0))
                for s in range(R):
                    ub = min(int(H[i, s]), per_link, m)
                    if ub <= 0:
                        continue
                    x = var(0, ub, True)
                    xs.append((s, x))
                    entries.append((assign, x, 1.0))
                    for q in range(3):
                        if w[q]:
                            entries.append((int(res[s, q]), x, float(w[q])))
                    entries.append((wside[s], x, r))
                    if s != t:
                        entries.append((load[(s, t)], x, r))
    return solvers.triplet_model(cols_lo, cols_hi, integ, rows_lo, rows_hi, entries), layout


class PlacementsOptions(Options):
    """Options of the fixed-f MILP bound (``placements``, ``placements-static``)."""

    precision: float = pydantic.Field(
        default=1e-5, gt=0, le=0.5,
        description="relative width of the final bracket on f")


def _reached(instance: Instance, h: Any, layout: list, static: bool) -> tuple[float, Any]:
    """(the f the placement of a solved fixed-f model reaches, the solution when the circuits
    are static and the evaluator accepts it, else None).

    Integer values are rounded; the rate of every worker is the best for the placement and
    its circuits (closed form, ``best_bandwidth``); the f is the evaluator's."""
    from dmlopt.models.inc_oxc.evaluation import best_bandwidth, best_f, evaluate
    from dmlopt.models.inc_oxc.instance import Solution

    R, J = instance.n_racks, len(instance.jobs)
    v = np.asarray(h.getSolution().col_value)
    c = np.zeros((R, R))
    col = 0
    for s in range(R):
        for t in range(s + 1, R):
            c[s, t] = c[t, s] = round(v[col]) if static else max(v[col], 0.0)
            col += 1
    workers: list[list[int]] = []
    ps: list[tuple[int, str]] = []
    for i in range(J):
        racks: list[int] = []
        for t, server, y, xs in layout[i]:
            if v[y] > 0.5:
                ps.append((t, "server" if server else "switch"))
                for s, x in xs:
                    racks += [s] * int(round(v[x]))
        workers.append(racks)
    if len(ps) != J or any(len(w) != len(job.workers) for w, job in zip(workers, instance.jobs,
                                                                         strict=True)):
        return 0.0, None
    wrack = np.array([k for w in workers for k in w], np.int64)
    ps_rack = np.array([t for t, _ in ps], np.int64)
    server = np.array([kind == "server" for _, kind in ps], float)
    reached = best_f(instance, wrack, ps_rack, server, c)
    if not static:
        return reached, None
    from dmlopt.models.inc_oxc.evaluation import ports_from_circuits

    sol = Solution(workers=workers, ps=ps, oxc=ports_from_circuits(instance, c),
                   bandwidth=[[0.0] * len(job.workers) for job in instance.jobs])
    sol = sol.model_copy(update={"bandwidth": best_bandwidth(instance, sol)})
    ev = evaluate(instance, sol)
    return (ev.objective, sol) if ev.feasible else (reached, None)


def placements_bound(instance: Instance, *, static: bool = False, precision: float = 1e-5,
                     time_limit: float | None = None,
                     start: Any = None) -> tuple[float, dict[str, float], Any]:
    """Upper bound on f by bisection with the fixed-f feasibility MILP (:func:`fixed_f_model`).

    The bracket starts at the ``jobs`` bound (``jobs-timeshared`` unless ``static``); f is
    infeasible when HiGHS proves the fixed-f model infeasible, and a feasible model moves the
    lower end to what its placement and circuits reach (closed form), so an optimal solution
    found early ends the search in one more step. Exact for the model, with HiGHS's
    tolerances (the capacities carry the evaluator's own).

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance, every job's workers identical.
    static : bool
        True: integer circuits (static port pairings only); False: fractional ones, valid
        for every solution the evaluator accepts.
    precision : float
        Relative width of the final bracket.
    time_limit : float or None
        Seconds; when reached, the smallest f proven infeasible so far is returned.
        Ctrl-C stops it the same way (metric ``interrupted``), with the best solution so far.
    start : Solution or None
        A solution to begin from: when the evaluator accepts it and it has static circuits
        (no ``oxc_schedule``), the f it reaches is the first lower end (the bisection then
        tests just above it) and it is the best solution until one beats it. It only steers
        the search: the bound comes from infeasibility proofs alone.

    Returns
    -------
    tuple
        (bound on f before the safety margin, metrics: ``reached_f`` is the best f a
        placement found on the way reaches, the best solution found on the way when
        ``static`` (a static port pairing the evaluator accepts) or None).

    References
    ----------
    Paper 002, section II-B, eqs. (1)-(17).
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    hi, _ = jobs_bound(instance, static=static, time_limit=time_limit)
    lo = 0.0
    steps, stopped, jumped, interrupted = 0, 0.0, True, 0.0
    best_obj, best_sol = -math.inf, None
    if start is not None and static and not start.oxc_schedule:
        from dmlopt.models.inc_oxc.evaluation import evaluate

        ev = evaluate(instance, start)
        if ev.feasible and ev.objective > 0:
            best_obj, best_sol = ev.objective, start
            lo = min(hi, ev.objective)
            steps = -1  # the start is the first step: test just above it next
    while hi - lo > precision * hi:
        # the first step tests the start; then downwards by 10 % until a placement is found,
        # then just above what the best placement reaches (usually the optimum: one more
        # step) when the last placement reached more than asked, else the geometric middle
        if steps == 0:
            f = hi * (1 - 0.5 * precision)
        elif steps < 0:
            f = min(lo * (1 + 0.5 * precision), 0.5 * (lo + hi))
            steps = 0
        elif lo <= 0:
            f = 0.9 * hi
        elif jumped:
            f = min(lo * (1 + 0.5 * precision), 0.5 * (lo + hi))
        else:
            f = math.sqrt(lo * hi)
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            stopped = 1.0
            break
        h, layout = fixed_f_model(instance, f, static=static)
        if left is not None:
            h.setOptionValue("time_limit", float(left))
        try:
            solvers.run_highspy(h)
        except KeyboardInterrupt:  # Ctrl-C: the bracket so far holds
            interrupted = 1.0
            break
        steps += 1
        status = h.modelStatusToString(h.getModelStatus())
        if status == "Infeasible":
            hi = f
        elif h.getInfo().primal_solution_status == 2:            # a feasible point
            reached, sol = _reached(instance, h, layout, static)
            if sol is not None and reached > best_obj:
                best_obj, best_sol = reached, sol
            reached = min(hi, reached)
            jumped = reached > f * (1 + precision)
            lo = max(lo, f, reached)
        else:
            stopped = 1.0
            break
    metrics = {"bound_f": hi, "longest_jct_lower": 1.0 / hi if hi > 0 else math.inf,
               "reached_f": lo, "milps": float(steps), "stopped_by_time_limit": stopped,
               "seconds": time.perf_counter() - t0}
    if interrupted:
        metrics["interrupted"] = interrupted
    return hi, {k: v for k, v in metrics.items() if math.isfinite(v)}, best_sol


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


def _configs_function(instance: Instance, *, time_limit: float | None = None,
                      precision: float = 1e-4) -> BoundValue:
    """Upper bound on f from the configuration LP over shared resources (:func:`configs_bound`).

    Valid for every solution the evaluator accepts, time-shared OXC schedules included.

    Parameters
    ----------
    instance : Instance
        The INC/OXC instance.
    time_limit : float or None, optional
        Seconds; when reached, the smallest f proven so far is returned (default None).
    precision : float, optional
        Relative width of the final bisection bracket on f (default 1e-4).

    Returns
    -------
    BoundValue
        The bound on f (1/s), moved by :func:`dmlopt.bounds.safe`; metrics of
        :func:`configs_bound` (LP solves, columns, bisection steps).

    References
    ----------
    Paper 002, section II-B, eqs. (1), (2), (10), (12), (13), (16)-(17); ours: the
    configuration LP by column generation (Desrosiers and Luebbecke, "A primer in column
    generation", 2005) and Lagrangian bounds from any dual prices (Wolsey 2020, 10.2-10.3).
    """
    value, metrics = configs_bound(instance, precision=precision, time_limit=time_limit)
    return BoundValue(safe(value, SENSE), metrics=metrics)


def _configs_estimate(instance: Instance, _options: Any) -> Size:
    R, J = instance.n_racks, len(instance.jobs)
    m = float(instance.arrays["size"].max())
    return Size(8.0 * (J * R * R * 4 + 10 * R * R), 50.0 * J * R * R * (m + 1) * 20)


def _placements_function(static: bool) -> Any:
    def function(instance: Instance, *, time_limit: float | None = None,
                 precision: float = 1e-5, start: Any = None) -> BoundValue:
        """Upper bound on f by bisection with the fixed-f feasibility MILP
        (:func:`placements_bound`; small instances).

        ``placements`` uses fractional circuits (every solution the evaluator accepts);
        ``placements-static`` integer ones (static port pairings only).

        Parameters
        ----------
        instance : Instance
            The INC/OXC instance, every job's workers identical.
        time_limit : float or None, optional
            Seconds; when reached, the smallest f proven infeasible so far is returned
            (default None).
        precision : float, optional
            Relative width of the final bracket on f (default 1e-5).
        start : Solution or None, optional
            A solution to begin from (``dmlopt.solve``'s warm start): a static one the
            evaluator accepts is the bisection's first lower end (default None).

        Returns
        -------
        BoundValue
            The bound on f (1/s), moved by :func:`dmlopt.bounds.safe`; with ``static`` the
            best static placement found on the way as the solution (the core evaluates it);
            metrics ``bound_f``, ``reached_f``, ``milps`` ...

        References
        ----------
        Paper 002, section II-B, eqs. (1)-(17); ours: the bisection on f over the fixed-f
        feasibility model, with the evaluator's tolerances on every capacity.
        """
        value, metrics, sol = placements_bound(instance, static=static, precision=precision,
                                               time_limit=time_limit, start=start)
        return BoundValue(safe(value, SENSE), solution=sol, metrics=metrics)

    return function


def _placements_estimate(instance: Instance, _options: Any) -> Size:
    R, J = instance.n_racks, len(instance.jobs)
    n = 2.0 * J * R * (R + 1) + R * R
    return Size(200.0 * n, 10.0 * n * n)


#: bound methods, strongest first (``dmlopt.bound``)
BOUNDS: dict[str, Bound] = {
    # first (the default): valid for every solution the evaluator accepts, time-shared OXC
    # schedules included; "jobs" is stronger but holds only for static port pairings
    "jobs-timeshared": Bound(_jobs_function(False), JobsOptions, _jobs_estimate(False),
                             "each job alone in the DCN with fractional (time-shared) OXC "
                             "circuits, PDP slots, pool links: valid for every solution"),
    "jobs": Bound(_jobs_function(True), JobsOptions, _jobs_estimate(True),
                  "as 'jobs-timeshared' with integer OXC circuits: valid for static port "
                  "pairings only (the paper's model, both MILPs, every heuristic returning "
                  "`oxc`)"),
    "configs": Bound(_configs_function, ConfigsOptions, _configs_estimate,
                     "configuration LP over the shared resources (column generation), "
                     "bisection on f: valid for every solution"),
    "placements": Bound(_placements_function(False), PlacementsOptions,
                        _placements_estimate, "fixed-f feasibility MILP, bisection on f, "
                        "fractional circuits: valid for every solution (small instances)"),
    "placements-static": Bound(_placements_function(True), PlacementsOptions,
                               _placements_estimate, "as 'placements' with integer circuits: "
                               "static port pairings only; exact for the paper's model "
                               "(each MILP to its end; dmlopt.solve runs 'bisection')",
                               exact=("paper", "strong")),
    "lp": lp_relaxation("strong"),
}
