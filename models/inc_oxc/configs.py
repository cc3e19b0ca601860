"""INC/OXC (paper 002): the configuration LP bound (``configs``), an upper bound on f.

A column-generation LP over the shared resources at a fixed f, bisection on f; valid for every
solution the evaluator accepts, time-shared OXC schedules included. Registered in
:data:`dmlopt.models.inc_oxc.bounds.BOUNDS`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pydantic

from dmlopt import solvers
from dmlopt.bounds import safe
from dmlopt.contract import BoundValue, Options, Size
from dmlopt.models.inc_oxc.constants import SENSE, TOL
from dmlopt.models.inc_oxc.hosting import capped_count
from dmlopt.models.inc_oxc.instance import Instance
from dmlopt.models.inc_oxc.jobs import (
    _ABS,
    fit_counts,
    jobs_bound,
)


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
        per_link = capped_count(self.NB, r, m)      # finite as r goes to 0
        U = np.minimum(self.H[i], per_link)
        K = capped_count(self.circ, r, m)
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
