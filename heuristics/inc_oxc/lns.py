"""INC/OXC (paper 002): large neighbourhood search over placements with a restricted MILP (ours).

Starting from ``wcg-ls``'s placement, each step frees a few jobs (their workers and PS) and asks
a MILP whether the freed jobs can be re-placed, with every other job where it is and all OXC
circuits free, so that the whole batch reaches a target f above the best so far. At a fixed f
every worker's rate is a_i f, so the model is linear: it is the fixed-f feasibility model of the
``placements`` bounds (:func:`dmlopt.models.inc_oxc.bounds.fixed_f_model`, eqs. (1)-(13) of
the paper at fixed f) with the fixed jobs' resources, link loads and PDP slots moved to the
right-hand sides and the exact capacities (no tolerance). A placement the MILP returns is
re-scored exactly (:func:`placement_f`, the best f over all circuit configurations) and kept
when it beats the best.

Choice of the freed jobs: the jobs with a flow on a link that the target f overloads (a pool
link above N_ToR B, or a rack whose circuits needed at the target exceed its N_ToR OXC ports),
a random subset of at most ``jobs`` of them, filled up with random jobs sharing a rack with
them. Target: best f (1 + step); the step grows by half after a success and halves after
``3`` neighbourhoods in a row without one (from 5 %, at least 0.1 %).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from dmlopt import solvers
from dmlopt.heuristics.inc_oxc.circuits import placement_f
from dmlopt.heuristics.inc_oxc.placement import _EPS
from dmlopt.models.inc_oxc import Instance, flow_coefficients, link_loads
from dmlopt.models.inc_oxc.bounds import fit_counts

#: first relative step of the target above the best f, its bounds, misses before halving
_STEP0, _STEP_MIN, _STEP_MAX, _MISSES = 0.05, 1e-3, 0.5, 3
#: the best f counts as at the ceiling within this relative distance (the per-job bound takes
#: capacities with the evaluator's tolerance 1e-6 and bisects to 1e-10)
_AT_CEILING = 1e-5


class _Model:
    """Columns, rows and (row, column, value) entries of a HiGHS model being built."""

    def __init__(self) -> None:
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.integ: list[int] = []
        self.rlo: list[float] = []
        self.rhi: list[float] = []
        self.ent: list[tuple[int, int, float]] = []

    def var(self, lo: float, hi: float, integer: bool = True) -> int:
        self.lo.append(lo)
        self.hi.append(hi)
        self.integ.append(1 if integer else 0)
        return len(self.lo) - 1

    def row(self, lo: float, hi: float) -> int:
        self.rlo.append(lo)
        self.rhi.append(hi)
        return len(self.rlo) - 1

    def highs(self, time_limit: float) -> Any:
        """A silent one-thread HiGHS model (:func:`dmlopt.solvers.triplet_model`)."""
        return solvers.triplet_model(self.lo, self.hi, self.integ, self.rlo, self.rhi,
                                     self.ent, time_limit=time_limit)


def _fixed_use(instance: Instance, f: float, wrack: np.ndarray, ps_rack: np.ndarray,
               server: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """What the fixed jobs leave at f: resources (R, 3), worker-side and PS-side pool link
    capacity (R,), PDP slots (R,) and the circuit load matrix they need (R, R); None when a
    fixed job alone already overloads a pool link or a rack's resources."""
    A = instance.arrays
    job_of = A["job_of"]
    R = instance.n_racks
    fixed_w = ~free[job_of]
    fixed_j = ~free
    rate = flow_coefficients(instance, server) * f * fixed_w
    ws, pss, load = link_loads(instance, wrack, ps_rack, server, rate)
    res = A["cap"].copy()
    np.subtract.at(res, wrack[fixed_w], A["wdem"][fixed_w])
    on_srv = fixed_j & (server == 1)
    np.subtract.at(res, ps_rack[on_srv], A["psdem"][on_srv])
    slots = A["slots"] - np.bincount(ps_rack[fixed_j & (server == 0)], minlength=R)
    NB = instance.capacity
    wside, pside = NB - ws, NB - pss
    if (wside < -_EPS * NB).any() or (pside < -_EPS * NB).any() or (res < -_EPS).any():
        return None
    return res, wside, pside, slots, load


def _neighbourhood(instance: Instance, f: float, wrack: np.ndarray, ps_rack: np.ndarray,
                   server: np.ndarray, free: np.ndarray, cand: np.ndarray
                   ) -> tuple[_Model, list] | None:
    """The fixed-f feasibility model of the freed jobs placed in the racks ``cand`` (module
    docstring), or None when the fixed jobs alone cannot reach f. Only circuits between two
    racks of ``cand`` are variables: every other pair carries fixed jobs' traffic only and keeps
    the fewest circuits it needs at f. Layout: per freed job (i, [(t, server, y column, [(s,
    x column), ...]), ...])."""
    A = instance.arrays
    R, P, B = instance.n_racks, instance.n_tor, instance.port_bw
    use = _fixed_use(instance, f, wrack, ps_rack, server, free)
    if use is None:
        return None
    res_hi, wside_hi, pside_hi, slots_hi, fixed_load = use
    inside = np.zeros(R, bool)
    inside[cand] = True
    least = np.ceil(np.maximum(fixed_load, fixed_load.T) / B - 1e-9)
    least[np.ix_(inside, inside)] = 0
    np.fill_diagonal(least, 0)
    ports_hi = P - least.sum(axis=1)
    if (ports_hi < 0).any():
        return None
    NB = instance.capacity
    m_ = _Model()
    res = {k: [m_.row(-math.inf, float(res_hi[k, q]) + _EPS) for q in range(3)] for k in cand}
    wside = {k: m_.row(-math.inf, float(wside_hi[k])) for k in cand}
    pside = {k: m_.row(-math.inf, float(pside_hi[k])) for k in cand}
    slot = {k: m_.row(-math.inf, float(slots_hi[k])) for k in cand}
    port = {k: m_.row(-math.inf, float(ports_hi[k])) for k in cand}
    load = {(s, t): m_.row(-math.inf, -float(fixed_load[s, t])) for s in cand for t in cand
            if s != t}
    for a, s in enumerate(cand):
        for t in cand[a + 1:]:
            c = m_.var(0, P)
            m_.ent += [(load[(s, t)], c, -B), (load[(t, s)], c, -B), (port[s], c, 1.0),
                       (port[t], c, 1.0)]
    layout: list = []
    for i in np.flatnonzero(free):
        m = int(A["size"][i])
        w = A["wdem"][A["job_of"] == i][0]
        H = fit_counts(instance, int(i))
        places: list = []
        layout.append((int(i), places))
        one = m_.row(1, 1)
        for srv in (True, False):
            r = 2 * A["data"][i] * (1 + A["alpha"][i] * srv) * f
            per_link = math.floor(NB / r * (1 + 1e-12))
            if per_link <= 0 or (srv and per_link < m):
                continue
            for t in cand:
                if srv and not (A["psdem"][i] <= A["cap"][t]).all():
                    continue
                if not srv and A["slots"][t] <= 0:
                    continue
                y = m_.var(0, 1)
                xs: list[tuple[int, int]] = []
                places.append((int(t), srv, y, xs))
                assign = m_.row(0, 0)
                m_.ent += [(one, y, 1.0), (assign, y, -float(m))]
                if srv:
                    m_.ent += [(res[t][q], y, float(A["psdem"][i, q])) for q in range(3)]
                    m_.ent.append((pside[t], y, m * r))
                else:
                    m_.ent.append((slot[t], y, 1.0))
                for s in cand:
                    ub = min(int(H[s]), per_link, m)
                    if ub <= 0:
                        continue
                    x = m_.var(0, ub)
                    xs.append((int(s), x))
                    m_.ent += [(assign, x, 1.0), (wside[s], x, r)]
                    m_.ent += [(res[s][q], x, float(w[q])) for q in range(3) if w[q]]
                    if s != t:
                        m_.ent.append((load[(s, t)], x, r))
    return m_, layout


def _candidates(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray,
                free: np.ndarray, extra: int, rng: np.random.Generator) -> np.ndarray:
    """The racks the freed jobs may use: theirs (workers and PS) and ``extra`` more, drawn
    with probability proportional to the GPUs left free by the other jobs."""
    A = instance.arrays
    R = instance.n_racks
    job_of = A["job_of"]
    own = set(wrack[free[job_of]].tolist()) | set(ps_rack[free].tolist())
    left = A["cap"][:, 1].copy()
    np.subtract.at(left, wrack[~free[job_of]], A["wdem"][~free[job_of], 1])
    others = np.array([k for k in range(R) if k not in own], np.int64)
    weight = np.clip(left[others], 0, None) + 1e-9
    n = min(extra, others.size)
    more = rng.choice(others, n, replace=False, p=weight / weight.sum()) if n else []
    return np.array(sorted(own | set(np.asarray(more).tolist())), np.int64)


def _apply(instance: Instance, h: Any, layout: list, wrack: np.ndarray, ps_rack: np.ndarray,
           server: np.ndarray) -> bool:
    """Write the freed jobs' placement of a solved model into the arrays (False, arrays
    untouched, when a job's placement does not decode)."""
    v = np.asarray(h.getSolution().col_value)
    offs = np.concatenate([[0], np.cumsum(instance.arrays["size"])])
    new = []
    for i, places in layout:
        chosen = [p for p in places if v[p[2]] > 0.5]
        if len(chosen) != 1:
            return False
        t, srv, _, xs = chosen[0]
        racks = [s for s, x in xs for _ in range(int(round(v[x])))]
        if len(racks) != offs[i + 1] - offs[i]:
            return False
        new.append((i, t, srv, racks))
    for i, t, srv, racks in new:
        wrack[offs[i]:offs[i + 1]] = racks
        ps_rack[i], server[i] = t, 1.0 if srv else 0.0
    return True


def _overloaded_jobs(instance: Instance, f: float, wrack: np.ndarray, ps_rack: np.ndarray,
                     server: np.ndarray) -> np.ndarray:
    """Jobs with a flow on a pool link above capacity at f, or between racks one of which
    needs more circuits at f than it has OXC ports."""
    A = instance.arrays
    job_of = A["job_of"]
    a = flow_coefficients(instance, server)
    ws, pss, mat = link_loads(instance, wrack, ps_rack, server, a)
    NB, B, P = instance.capacity, instance.port_bw, instance.n_tor
    need = np.ceil(f * np.maximum(mat, mat.T) / B - 1e-9)
    bad_r = need.sum(axis=1) > P
    prack = ps_rack[job_of]
    srv = server[job_of] == 1
    hit = (ws[wrack] * f > NB) | (srv & (pss[prack] * f > NB))
    hit |= (wrack != prack) & (bad_r[wrack] | bad_r[prack])
    out = np.zeros(len(instance.jobs), bool)
    out[job_of[hit]] = True
    return out


def _pick(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray, hot: np.ndarray,
          movable: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """At most k movable jobs: random hot ones first, then random jobs sharing a rack (worker
    or PS) with them, then any."""
    job_of = instance.arrays["job_of"]
    J = len(instance.jobs)
    cand = np.flatnonzero(hot & movable)
    pick = list(rng.permutation(cand)[:k])
    if len(pick) < k:
        racks = set(wrack[np.isin(job_of, pick)].tolist()) | set(ps_rack[pick].tolist())
        near = np.zeros(J, bool)
        near[job_of[np.isin(wrack, list(racks))]] = True
        near[np.isin(ps_rack, list(racks))] = True
        rest = np.flatnonzero(near & movable & ~np.isin(np.arange(J), pick))
        pick += list(rng.permutation(rest)[:k - len(pick)])
    if len(pick) < k:
        rest = np.flatnonzero(movable & ~np.isin(np.arange(J), pick))
        pick += list(rng.permutation(rest)[:k - len(pick)])
    free = np.zeros(J, bool)
    free[np.asarray(pick, np.int64)] = True
    return free


def large_neighbourhood_search(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray,
                               server: np.ndarray, rng: np.random.Generator, time_limit: float,
                               jobs: int, extra: int, milp_time: float, ceiling: float,
                               keep: list) -> dict[str, float]:
    """Improve the placement in place for ``time_limit`` seconds (module docstring).

    Targets never exceed ``ceiling`` (an upper bound on f; the search stops when the best
    reaches it within :data:`_AT_CEILING` relative, the bound's own tolerance). ``keep``
    holds the best placement (three arrays) from the start, so that a caller interrupted by
    Ctrl-C can return it. Returns counters.
    """
    t_end = time.perf_counter() + time_limit
    movable = np.array([len(instance.worker_classes(i)) == 1 for i in range(len(instance.jobs))])
    best = placement_f(instance, wrack, ps_rack, server)
    keep[:] = [wrack.copy(), ps_rack.copy(), server.copy()]
    step, misses, milps, better = _STEP0, 0, 0, 0
    k = max(1, min(jobs, int(movable.sum())))
    while (time.perf_counter() < t_end and movable.any()
           and best < ceiling * (1 - _AT_CEILING)):
        # from f = 0 (no placement found lets every job finish) a relative step asks for
        # nothing more: ask for a fraction of the ceiling instead
        target = min(best * (1 + step), ceiling) if best > 0 else ceiling * step
        hot = _overloaded_jobs(instance, target, wrack, ps_rack, server)
        free = _pick(instance, wrack, ps_rack, hot, movable, k, rng)
        cand = _candidates(instance, wrack, ps_rack, free, extra, rng)
        built = _neighbourhood(instance, target, wrack, ps_rack, server, free, cand)
        found = False
        if built is not None:
            left = t_end - time.perf_counter()
            if left <= 0:
                break
            h = built[0].highs(min(milp_time, left))
            solvers.run_highspy(h)
            milps += 1
            if h.getInfo().primal_solution_status == 2:     # a feasible solution
                w, p, s = wrack.copy(), ps_rack.copy(), server.copy()
                if _apply(instance, h, built[1], w, p, s):
                    f_new = placement_f(instance, w, p, s)
                    if f_new > best * (1 + 1e-12):
                        best, found = f_new, True
                        wrack[:], ps_rack[:], server[:] = w, p, s
                        keep[:] = [w.copy(), p.copy(), s.copy()]
        if found:
            better += 1
            misses, step = 0, min(step * 1.5, _STEP_MAX)
        else:
            misses += 1
            if misses >= _MISSES:
                misses, step = 0, max(step / 2, _STEP_MIN)
    return {"milps": float(milps), "improvements": float(better)}
