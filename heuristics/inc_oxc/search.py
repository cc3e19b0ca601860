"""INC/OXC heuristics (paper 002): the schedule of a placement and our local search (wcg-ls)."""

from __future__ import annotations

import time

import numpy as np

from dmlopt.heuristics.inc_oxc.bvn import bvn_decompose, stuff
from dmlopt.heuristics.inc_oxc.circuits import (
    _bandwidth,
    _circuits_bvn,
    _optimal,
    optimal_circuits,
    placement_f,
)
from dmlopt.heuristics.inc_oxc.placement import _BIG_NEIGHBOURHOOD, _EPS, _place_ps, _State
from dmlopt.models.inc_oxc import (
    Instance,
    Solution,
    flow_coefficients,
    link_loads,
    ports_from_circuits,
)
from dmlopt.models.inc_oxc.evaluation import ports_from_pair_counts


def _schedule(instance: Instance, placer, seed: int, circuits: str, bandwidth: str,
              search: tuple[float, int] | None = None, rounding: str = "pairs") -> Solution:
    if circuits not in ("bvn", "optimal"):
        from dmlopt.errors import InstanceError

        raise InstanceError("circuits", circuits, "must be 'bvn' or 'optimal'")
    if bandwidth not in ("proportional", "optimal"):
        from dmlopt.errors import InstanceError

        raise InstanceError("bandwidth", bandwidth, "must be 'proportional' or 'optimal'")
    rng = np.random.default_rng(seed)
    st = _State(instance)
    wrack = placer(instance, st, rng)
    ps_rack, server = _place_ps(instance, st, wrack)
    if search is not None:
        _iterated_search(instance, wrack, ps_rack, server, rng, *search)
    return _solution(instance, wrack, ps_rack, server, circuits, bandwidth, rounding)


def _solution(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray, server: np.ndarray,
              circuits: str, bandwidth: str, rounding: str = "pairs") -> Solution:
    """The solution of a placement: its circuits (BvN or optimal; time-shared if a pair with
    traffic stays without a circuit) and bandwidth (proportional or optimal)."""
    if circuits == "bvn":
        c = _circuits_bvn(instance, wrack, ps_rack, server, rounding)
    else:
        c = optimal_circuits(instance, wrack, ps_rack, server)
    schedule = []
    if not _covered(instance, wrack, ps_rack, server, c):
        c, schedule = _time_shared(instance, wrack, ps_rack, server)
    b = _bandwidth(instance, wrack, ps_rack, server, c, bandwidth)
    offs = np.concatenate([[0], np.cumsum(instance.arrays["size"])])
    return Solution(
        workers=[wrack[offs[i]:offs[i + 1]].tolist() for i in range(len(instance.jobs))],
        ps=[(int(k), "server" if s else "switch") for k, s in zip(ps_rack, server, strict=True)],
        oxc=[] if schedule else ports_from_circuits(instance, c),
        bandwidth=[b[offs[i]:offs[i + 1]].tolist() for i in range(len(instance.jobs))],
        oxc_schedule=schedule,
    )


def _covered(instance: Instance, wrack, ps_rack, server, c) -> bool:
    """Every rack pair with inter-rack traffic has a circuit."""
    _, _, D = link_loads(instance, wrack, ps_rack, server, np.ones(wrack.size))
    return bool((c[(D + D.T) > 0] > 0).all())


def _time_shared(instance: Instance, wrack, ps_rack, server) -> tuple[np.ndarray, list]:
    """The time-shared BvN schedule (module docstring): configuration k = floor(N_ToR / 2)
    copies of permutation P_k for a time share theta_k / sigma.

    Returns the time-averaged circuits sum_k share_k c^k (R, R) and [(share_k, port pairs)].
    Each term is sparse: its R rack pairs are counted and wired in O(R log R)
    (:func:`ports_from_pair_counts`), never as an (R, R) matrix.
    """
    R, P = instance.n_racks, instance.n_tor
    d = instance.arrays["data"][instance.arrays["job_of"]]
    _, _, D = link_loads(instance, wrack, ps_rack, server, d)              # line 25
    Dp, sigma = stuff(D)                                                   # line 26
    c = np.zeros((R, R))
    flat = c.reshape(-1)
    out = []
    rows = np.arange(R)
    for theta, perm in bvn_decompose(Dp):                                  # line 27
        share = float(theta / sigma)
        perm = np.asarray(perm, np.int64)
        moved = perm != rows
        a, b = rows[moved], perm[moved]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        keys, n = np.unique(lo * R + hi, return_counts=True)   # lexicographic (s, t), s < t
        s_, t_ = keys // R, keys % R
        k = n * (P // 2)
        flat[s_ * R + t_] += share * k
        flat[t_ * R + s_] += share * k
        out.append((share, ports_from_pair_counts(instance, s_, t_, k)))
    return c, out


class _Moves:
    """The moves of :func:`_local_search` as index ranges, decoded on demand (no list of
    tuples): worker n to rack k, PS of job i to rack k on a switch or a server, workers n < q
    of different jobs swapped, PS locations of jobs i < i2 swapped, gather of job i at rack k,
    in this order (the order of the move list they replace)."""

    def __init__(self, instance: Instance):
        W, J, R = instance.arrays["job_of"].size, len(instance.jobs), instance.n_racks
        self.job_of = instance.arrays["job_of"]
        self.R = R
        n, q = np.triu_indices(W, 1)
        keep = self.job_of[n] != self.job_of[q]
        self.xn, self.xq = n[keep], q[keep]
        self.si, self.si2 = np.triu_indices(J, 1)
        sizes = [W * R, J * R * 2, self.xn.size, self.si.size, J * R]
        self.ends = np.cumsum(sizes).tolist()
        self.size = self.ends[-1]

    def move(self, mi: int) -> tuple:
        """Move number ``mi`` as the tuple the search applies."""
        R, e = self.R, self.ends
        if mi < e[0]:
            return ("w", mi // R, mi % R)
        if mi < e[1]:
            i, rest = divmod(mi - e[0], 2 * R)
            return ("p", i, rest // 2, float(rest % 2))
        if mi < e[2]:
            j = mi - e[1]
            return ("x", int(self.xn[j]), int(self.xq[j]))
        if mi < e[3]:
            j = mi - e[2]
            return ("s", int(self.si[j]), int(self.si2[j]))
        return ("g", *divmod(mi - e[3], R))

    def hot(self, crit: np.ndarray) -> np.ndarray:
        """Per move: does it touch a critical job (a job of any worker or PS it moves)."""
        R, jo = self.R, self.job_of
        return np.concatenate([np.repeat(crit[jo], R), np.repeat(crit, 2 * R),
                               crit[jo[self.xn]] | crit[jo[self.xq]],
                               crit[self.si] | crit[self.si2], np.repeat(crit, R)])


class _Descent:
    """The state of one descent of :func:`_local_search`: the placement arrays (changed in
    place), the free pool resources and PDP slots per rack, and the best score so far.

    Each ``try_*`` method applies one move if it is feasible and keeps it when the score
    improves (then returns True), else restores the placement and returns False.
    """

    def __init__(self, instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray,
                 server: np.ndarray) -> None:
        A = instance.arrays
        self.instance, self.A = instance, A
        self.wrack, self.ps_rack, self.server = wrack, ps_rack, server
        self.free = A["cap"].copy()
        np.subtract.at(self.free, wrack, A["wdem"])
        np.subtract.at(self.free, ps_rack[server == 1], A["psdem"][server == 1])
        self.slots = A["slots"] - np.bincount(ps_rack[server == 0], minlength=instance.n_racks)
        self.best: tuple[float, float] = (0.0, 0.0)

    def score(self) -> tuple[float, float]:
        """(f, -sum of squared pool-link utilisations) of the current placement."""
        inst, cap = self.instance, self.instance.capacity
        f = placement_f(inst, self.wrack, self.ps_rack, self.server)
        a = flow_coefficients(inst, self.server)
        ws, ps_, _ = link_loads(inst, self.wrack, self.ps_rack, self.server, a)
        return f, -float(((ws / cap) ** 2).sum() + ((ps_ / cap) ** 2).sum())

    def _better(self) -> bool:
        new = self.score()
        if new > self.best:
            self.best = new
            return True
        return False

    def try_worker(self, n: int, k: int) -> bool:
        """Worker n to rack k."""
        wrack, free, dem = self.wrack, self.free, self.A["wdem"][n]
        old = wrack[n]
        if k == old or (free[k] < dem - _EPS).any():
            return False
        wrack[n] = k
        if self._better():
            free[old] += dem
            free[k] -= dem
            return True
        wrack[n] = old
        return False

    def try_ps(self, i: int, k: int, sv: float) -> bool:
        """The PS of job i to rack k, on its switch (sv = 0) or a server (sv = 1)."""
        ps_rack, server, free, slots = self.ps_rack, self.server, self.free, self.slots
        ok_, os_ = ps_rack[i], server[i]
        if (k, sv) == (ok_, os_):
            return False
        need = self.A["psdem"][i]
        if sv == 0.0 and slots[k] - (1 if (ok_ == k and os_ == 0) else 0) < 1:
            return False
        back = need if (os_ == 1 and ok_ == k) else 0
        if sv == 1.0 and (free[k] + back < need - _EPS).any():
            return False
        ps_rack[i], server[i] = k, sv
        if self._better():
            if os_ == 1:
                free[ok_] += need
            else:
                slots[ok_] += 1
            if sv == 1:
                free[k] -= need
            else:
                slots[k] -= 1
            return True
        ps_rack[i], server[i] = ok_, os_
        return False

    def try_gather(self, i: int, k: int) -> bool:
        """The PS of job i to rack k (switch if a slot is free, else server), then as many of
        its workers as fit into k."""
        A, wrack, ps_rack, server = self.A, self.wrack, self.ps_rack, self.server
        free, slots = self.free, self.slots
        snap = (wrack.copy(), ps_rack.copy(), server.copy(), free.copy(), slots.copy())
        if server[i] == 1:
            free[ps_rack[i]] += A["psdem"][i]
        else:
            slots[ps_rack[i]] += 1
        if slots[k] > 0:
            ps_rack[i], server[i] = k, 0.0
            slots[k] -= 1
        elif (free[k] >= A["psdem"][i] - _EPS).all():
            ps_rack[i], server[i] = k, 1.0
            free[k] -= A["psdem"][i]
        else:
            wrack[:], ps_rack[:], server[:], free[:], slots[:] = snap
            return False
        for n in np.flatnonzero((A["job_of"] == i) & (wrack != k)):
            if (free[k] >= A["wdem"][n] - _EPS).all():
                free[wrack[n]] += A["wdem"][n]
                free[k] -= A["wdem"][n]
                wrack[n] = k
        if self._better():
            return True
        wrack[:], ps_rack[:], server[:], free[:], slots[:] = snap
        return False

    def try_swap_ps(self, i: int, i2: int) -> bool:
        """The PS locations of jobs i and i2 swapped."""
        A, ps_rack, server = self.A, self.ps_rack, self.server
        loc1, loc2 = (ps_rack[i], server[i]), (ps_rack[i2], server[i2])
        if loc1 == loc2:
            return False
        f2 = self.free.copy()
        for (k, sv), out, into in ((loc1, i, i2), (loc2, i2, i)):
            if sv == 1:
                f2[k] += A["psdem"][out] - A["psdem"][into]
        if (f2 < -_EPS).any():
            return False
        ps_rack[i], server[i] = loc2
        ps_rack[i2], server[i2] = loc1
        if self._better():
            self.free[:] = f2
            return True
        ps_rack[i], server[i] = loc1
        ps_rack[i2], server[i2] = loc2
        return False

    def try_swap_workers(self, n: int, q: int) -> bool:
        """Workers n and q (of different jobs) swap racks."""
        wrack, free = self.wrack, self.free
        kn, kq = wrack[n], wrack[q]
        if kn == kq:
            return False
        dn, dq = self.A["wdem"][n], self.A["wdem"][q]
        if (free[kn] + dn - dq < -_EPS).any() or (free[kq] + dq - dn < -_EPS).any():
            return False
        wrack[n], wrack[q] = kq, kn
        if self._better():
            free[kn] += dn - dq
            free[kq] += dq - dn
            return True
        wrack[n], wrack[q] = kn, kq
        return False


def _local_search(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray,
                  server: np.ndarray, rng: np.random.Generator, time_limit: float,
                  max_rounds: int, cache: dict | None = None) -> tuple[float, float]:
    """First-improvement search on (f, -sum of squared pool-link utilisations), in place.

    Moves (:class:`_Moves`, each tried by a :class:`_Descent` method): one worker to another
    rack, one PS to another switch slot or server, two workers of different jobs swap racks,
    two PS swap locations, gather (a PS and as many of its workers as fit into one rack). f of
    a placement is exact (:func:`placement_f`). The clock is read before the O(workers^2)
    move table is built and between every setup step (``cache``: a dict keeping the move
    table for the next call).
    """
    state = _Descent(instance, wrack, ps_rack, server)
    tries = {"w": state.try_worker, "p": state.try_ps, "g": state.try_gather,
             "s": state.try_swap_ps, "x": state.try_swap_workers}
    t_end = time.perf_counter() + time_limit
    state.best = state.score()
    cache = {} if cache is None else cache
    for _ in range(max_rounds):
        improved = False
        if time.perf_counter() > t_end:     # nothing quadratic before a clock check
            return state.best
        moves = cache.get("moves")
        if moves is None:
            moves = cache["moves"] = _Moves(instance)
        order = rng.permutation(moves.size)
        if moves.size > _BIG_NEIGHBOURHOOD:  # large instances: bottleneck jobs' moves first
            if time.perf_counter() > t_end:
                return state.best
            crit = _critical_jobs(instance, wrack, ps_rack, server)
            order = order[np.argsort(~moves.hot(crit)[order], kind="stable")]
        for mi in order:
            if time.perf_counter() > t_end:
                return state.best
            mv = moves.move(int(mi))
            if tries[mv[0]](*mv[1:]):
                improved = True
        if not improved:
            break
    return state.best


def _critical_jobs(instance: Instance, wrack, ps_rack, server) -> np.ndarray:
    """Jobs with a flow on a bottleneck link (optimal circuits): only moving them, or flows
    sharing their links, can raise f."""
    A = instance.arrays
    job_of = A["job_of"]
    f, c = _optimal(instance, wrack, ps_rack, server)
    a = flow_coefficients(instance, server)
    ws, pss, mat = link_loads(instance, wrack, ps_rack, server, a)
    tight = f * (1 + 1e-9)
    cap = instance.capacity
    with np.errstate(divide="ignore"):
        bad_w = (ws > 0) & (cap / np.where(ws > 0, ws, 1) <= tight)
        bad_p = (pss > 0) & (cap / np.where(pss > 0, pss, 1) <= tight)
        need = np.maximum(mat, mat.T)
        bad_c = (need > 0) & (instance.port_bw * c / np.where(need > 0, need, 1) <= tight)
    prack = ps_rack[job_of]
    hit = bad_w[wrack] | (bad_p[prack] & (server[job_of] == 1)) | bad_c[wrack, prack]
    crit = np.zeros(len(instance.jobs), bool)
    crit[job_of[hit]] = True
    return crit


def _iterated_search(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray,
                     server: np.ndarray, rng: np.random.Generator, time_limit: float,
                     max_rounds: int, kick: int = 3) -> None:
    """Local search, then kicks (``kick`` random feasible worker moves) and local search again
    until ``time_limit``; the best placement is left in the arrays."""
    A = instance.arrays
    t_end = time.perf_counter() + time_limit
    cache: dict = {}
    best = _local_search(instance, wrack, ps_rack, server, rng, time_limit, max_rounds, cache)
    keep = (wrack.copy(), ps_rack.copy(), server.copy())
    while time.perf_counter() < t_end and wrack.size > 1:
        w, p, sv = keep[0].copy(), keep[1].copy(), keep[2].copy()
        free = A["cap"].copy()
        np.subtract.at(free, w, A["wdem"])
        np.subtract.at(free, p[sv == 1], A["psdem"][sv == 1])
        for n in rng.choice(w.size, min(kick, w.size), replace=False):
            ok = np.flatnonzero((free >= A["wdem"][n] - _EPS).all(axis=1))
            if ok.size:
                k = int(rng.choice(ok))
                free[w[n]] += A["wdem"][n]
                free[k] -= A["wdem"][n]
                w[n] = k
        left = t_end - time.perf_counter()
        if left <= 0:
            break
        new = _local_search(instance, w, p, sv, rng, left, max_rounds, cache)
        if new > best:
            best, keep = new, (w, p, sv)
    wrack[:], ps_rack[:], server[:] = keep
