"""INC/OXC (paper 002): circuits, link loads, times and the evaluator (eqs. 1-17)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dmlopt.evaluation import Evaluation
from dmlopt.models.inc_oxc.constants import TOL
from dmlopt.models.inc_oxc.instance import Instance, Solution

# ------------------------------------------------------------------------------------------
# evaluation


def _rack_pairs(instance: Instance, pairs: list[tuple[int, int]]) -> tuple[
        list[tuple[int, int]], list[str]]:
    """The rack pairs (s, t), s != t, of the circuits of a port pairing, and the rules it
    breaks; no (R, R) matrix, so a long OXC schedule costs what it lists."""
    R, P = instance.n_racks, instance.n_tor
    out: list[tuple[int, int]] = []
    used: dict[int, int] = {}
    bad: list[str] = []
    for q, (n, m) in enumerate(pairs):
        for port in (n, m):
            if not 0 <= port < R * P:
                bad.append(f"oxc[{q}]: port {port} is not an OXC port 0..{R * P - 1}")
            elif port in used:
                bad.append(f"oxc[{q}]: port {port} already connected by oxc[{used[port]}] "
                           "(13: a port connects to one other port)")
            else:
                used[port] = q
        if n == m:
            bad.append(f"oxc[{q}]: port {n} paired with itself")
        elif 0 <= n < R * P and 0 <= m < R * P:
            s, t = n // P, m // P
            if s != t:
                out.append((s, t))
    return out, bad


def _add_circuits(c: np.ndarray, racks: list[tuple[int, int]], weight: float = 1) -> None:
    """c[s, t] and c[t, s] += weight x (circuits between s and t) for the rack pairs of
    ``racks`` (in place; one addition per cell, as ``c += weight * counts`` would do)."""
    arr = np.asarray(racks, np.int64).reshape(-1, 2)
    _add_circuit_arrays(c, arr[:, 0], arr[:, 1], weight)


def _add_circuit_arrays(c: np.ndarray, s: np.ndarray, t: np.ndarray, weight: float = 1) -> None:
    """:func:`_add_circuits` on arrays of rack pairs: O(len(s) log len(s)), no (R, R) pass."""
    if not s.size:
        return
    R = c.shape[0]
    keys, n = np.unique(np.concatenate([s * R + t, t * R + s]), return_counts=True)
    flat = c.reshape(-1)
    flat[keys] += weight * n


def _repeats(ports: np.ndarray, n_ports: int) -> bool:
    """Whether a port (all in 0..n_ports-1) occurs twice: one count per port when the ports
    listed are a fair share of all (linear), else a sort (no array of every port)."""
    if n_ports <= 4 * ports.size + 1024:
        return bool(np.bincount(ports, minlength=n_ports).max() > 1)
    return bool(np.unique(ports).size != ports.size)


def _rack_arrays(instance: Instance, pairs) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:func:`_rack_pairs` as two arrays (s, t), vectorised: a valid pairing (every port on the
    OXC, used once, never paired with itself) costs O(len(pairs)) (a sort when the pairs are
    few against all R N_ToR ports); an invalid one goes through :func:`_rack_pairs` for its
    messages."""
    R, P = instance.n_racks, instance.n_tor
    arr = np.asarray(pairs, np.int64).reshape(-1, 2)
    ports = arr.reshape(-1)
    if (ports.size and (ports.min() < 0 or ports.max() >= R * P
                        or (arr[:, 0] == arr[:, 1]).any() or _repeats(ports, R * P))):
        racks, bad = _rack_pairs(instance, [tuple(map(int, q)) for q in arr])
        out = np.asarray(racks, np.int64).reshape(-1, 2)
        return out[:, 0], out[:, 1], bad
    s, t = arr[:, 0] // P, arr[:, 1] // P
    keep = s != t
    return s[keep], t[keep], []


def circuits_from_ports(instance: Instance, pairs: list[tuple[int, int]]) -> tuple[
        np.ndarray, list[str]]:
    """The symmetric circuit-count matrix c_st of a port pairing, and the rules it breaks."""
    R = instance.n_racks
    c = np.zeros((R, R), np.int64)
    s, t, bad = _rack_arrays(instance, pairs)
    _add_circuit_arrays(c, s, t)
    return c, bad


def circuits(instance: Instance, sol: Solution) -> tuple[np.ndarray, list[str]]:
    """The circuit matrix c_st the capacity rule (13) uses, and the rules the OXC part breaks.

    A static configuration (``oxc``) gives integer counts. A time-shared one (``oxc_schedule``,
    ours: the OXC cycles through configurations k for a fraction theta_k of the time, as a
    Birkhoff-von Neumann schedule does; reconfiguration time neglected) gives the time average
    c_st = sum_k theta_k c^k_st: each configuration must be a valid pairing and the shares must
    be >= 0 and add up to at most 1. A solution uses one of the two, not both.
    """
    if not sol.oxc_schedule:
        return circuits_from_ports(instance, list(sol.oxc))
    R = instance.n_racks
    c = np.zeros((R, R))
    bad: list[str] = []
    if sol.oxc:
        bad.append("oxc: a solution has either oxc or oxc_schedule, not both")
    total = 0.0
    for q, (share, pairs) in enumerate(sol.oxc_schedule):
        if not (math.isfinite(share) and share >= 0):
            bad.append(f"oxc_schedule[{q}]: share {share} must be finite and >= 0")
            continue
        s, t, bk = _rack_arrays(instance, pairs)
        bad += [f"oxc_schedule[{q}]." + b for b in bk]
        _add_circuit_arrays(c, s, t, share)
        total += share
    if total > 1 + TOL:
        bad.append(f"oxc_schedule: time shares add up to {total:g} > 1")
    return c, bad


def ports_from_circuits(instance: Instance, c: np.ndarray) -> list[tuple[int, int]]:
    """A port pairing realising the symmetric circuit counts ``c`` (ports taken in order).

    Parameters
    ----------
    instance : Instance
        Gives R and N_ToR (rack k owns the OXC ports k N_ToR .. (k + 1) N_ToR - 1).
    c : numpy.ndarray
        (R, R) circuit counts; the upper triangle is read, rounded to integers.

    Returns
    -------
    list of (int, int)
        One port pair per circuit, rack pairs (s, t), s < t, in lexicographic order, each rack's
        ports in increasing order.
    """
    upper = np.triu(np.asarray(c, float), 1)
    if not np.isfinite(upper).all():
        raise ValueError("c: circuit counts must be finite")
    counts = np.rint(upper).astype(np.int64)
    s, t = np.nonzero(counts > 0)
    return ports_from_pair_counts(instance, s, t, counts[s, t])


def ports_from_pair_counts(instance: Instance, s: np.ndarray, t: np.ndarray,
                           counts: np.ndarray) -> list[tuple[int, int]]:
    """A port pairing with ``counts[q]`` circuits between racks ``s[q]`` and ``t[q]``.

    The sparse form of :func:`ports_from_circuits` (same pairing for the same circuits): cost
    O(len(s) log len(s) + circuits), so a permutation of R racks costs O(R log R), not O(R^2).

    Parameters
    ----------
    instance : Instance
        Gives N_ToR.
    s, t : numpy.ndarray
        Rack pairs, s < t, in lexicographic order, each pair once.
    counts : numpy.ndarray
        Circuits per pair (>= 0).

    Returns
    -------
    list of (int, int)
        As :func:`ports_from_circuits`: pairs in the given order, each rack's ports in
        increasing order.
    """
    P = instance.n_tor
    counts = np.asarray(counts, np.int64)
    rs = np.repeat(np.asarray(s, np.int64), counts)
    rt = np.repeat(np.asarray(t, np.int64), counts)
    m = rs.size
    if not m:
        return []
    racks = np.concatenate([rs, rt])
    order = np.lexsort((np.tile(np.arange(m), 2), racks))    # per rack, by circuit index
    rk = racks[order]
    first = np.concatenate([[True], rk[1:] != rk[:-1]])
    start = np.maximum.accumulate(np.where(first, np.arange(rk.size), 0))
    port = np.empty(2 * m, np.int64)
    port[order] = rk * P + np.arange(rk.size) - start
    return list(zip(port[:m].tolist(), port[m:].tolist(), strict=True))


def flow_coefficients(instance: Instance, ps_server: np.ndarray) -> np.ndarray:
    """a_ij = 2 d_i (1 + alpha_i [PS on server]) per worker: JCT_ij = a_ij / b_ij."""
    A = instance.arrays
    per_job = 2 * A["data"] * (1 + A["alpha"] * ps_server)
    return per_job[A["job_of"]]


def link_loads(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray,
               ps_server: np.ndarray, rate: np.ndarray) -> tuple[np.ndarray, ...]:
    """(worker-side load per rack, PS-side load per rack, push load matrix s -> t).

    ``rate`` is per worker (flattened); the matrix has a zero diagonal (intra-rack flows use no
    circuit).
    """
    R = instance.n_racks
    job_of = instance.arrays["job_of"]
    prack = ps_rack[job_of]
    wside = np.bincount(wrack, weights=rate, minlength=R)
    srv = ps_server[job_of].astype(bool)
    pside = np.bincount(prack[srv], weights=rate[srv], minlength=R)
    mat = np.zeros((R, R))
    inter = wrack != prack
    np.add.at(mat, (wrack[inter], prack[inter]), rate[inter])
    return wside, pside, mat


def best_f(instance: Instance, wrack: np.ndarray, ps_rack: np.ndarray, ps_server: np.ndarray,
           c: np.ndarray) -> float:
    """Largest f this placement and these circuits allow (closed form, see module docstring)."""
    a = flow_coefficients(instance, ps_server)
    wside, pside, mat = link_loads(instance, wrack, ps_rack, ps_server, a)
    both = np.maximum(mat, mat.T)
    cap = instance.capacity
    best = math.inf
    for load, capa in ((wside, cap), (pside, cap)):
        pos = load > 0
        if pos.any():
            best = min(best, float((capa / load[pos]).min()))
    pos = both > 0
    if pos.any():
        best = min(best, float((instance.port_bw * c[pos] / both[pos]).min()))
    return best


def _decision_arrays(instance: Instance, sol: Solution) -> tuple[Any, list[str]]:
    bad: list[str] = []
    J, R = len(instance.jobs), instance.n_racks
    if len(sol.workers) != J:
        bad.append(f"workers: {len(sol.workers)} jobs, the instance has {J}")
    if len(sol.ps) != J:
        bad.append(f"ps: {len(sol.ps)} jobs, the instance has {J}")
    if len(sol.bandwidth) != J:
        bad.append(f"bandwidth: {len(sol.bandwidth)} jobs, the instance has {J}")
    if bad:
        return None, bad
    for i, job in enumerate(instance.jobs):
        m = len(job.workers)
        if len(sol.workers[i]) != m:
            bad.append(f"workers[{i}]: {len(sol.workers[i])} workers, job {i} has {m} (3)")
        if len(sol.bandwidth[i]) != m:
            bad.append(f"bandwidth[{i}]: {len(sol.bandwidth[i])} values, job {i} has {m}")
        for j, k in enumerate(sol.workers[i]):
            if not 0 <= k < R:
                bad.append(f"workers[{i}][{j}]: {k} is not a rack 0..{R - 1} (3)")
        k, kind = sol.ps[i]
        if not 0 <= k < R:
            bad.append(f"ps[{i}]: rack {k} is not a rack 0..{R - 1} (4)")
        for j, b in enumerate(sol.bandwidth[i]):
            if not (math.isfinite(b) and b >= 0):
                bad.append(f"bandwidth[{i}][{j}]: {b} must be finite and >= 0")
    if bad:
        return None, bad
    wrack = np.array([k for row in sol.workers for k in row], np.int64)
    ps_rack = np.array([k for k, _ in sol.ps], np.int64)
    ps_server = np.array([kind == "server" for _, kind in sol.ps], float)
    rate = np.array([b for row in sol.bandwidth for b in row], float)
    return (wrack, ps_rack, ps_server, rate), bad


def times(instance: Instance, solution: Solution) -> dict[str, list]:
    """Per worker: pull/push time d_i / b_ij and update time; per job: the JCT (seconds).

    ``pull_push[i][j]`` is one pull (= one push) step, ``update[i][j]`` is alpha_i * 2 d_i / b_ij
    on a server and 0 on a PDP switch, ``jct[i]`` = max_j (2 pull_push + update) (eqs. 14-16).
    A worker without bandwidth gets ``inf``. The solution must have the instance's shape.
    """
    out: dict[str, list] = {"pull_push": [], "update": [], "jct": []}
    for i, job in enumerate(instance.jobs):
        srv = solution.ps[i][1] == "server"
        pp = [job.data / b if b > 0 else math.inf for b in solution.bandwidth[i]]
        up = [job.alpha * 2 * t if srv else 0.0 for t in pp]
        out["pull_push"].append(pp)
        out["update"].append(up)
        out["jct"].append(max(2 * t + u for t, u in zip(pp, up, strict=True)))
    return out


def best_bandwidth(instance: Instance, solution: Solution) -> list[list[float]]:
    """The bandwidth allocation maximising f for the solution's placement and circuits.

    Closed form: b_ij = a_ij * best_f (module docstring); every worker of the bottleneck job
    then finishes at the same time and no link is over its capacity.
    """
    wrack = np.array([k for row in solution.workers for k in row], np.int64)
    ps_rack = np.array([k for k, _ in solution.ps], np.int64)
    server = np.array([kind == "server" for _, kind in solution.ps], float)
    c, _ = circuits(instance, solution)
    f = best_f(instance, wrack, ps_rack, server, c)
    b = flow_coefficients(instance, server) * (0.0 if math.isinf(f) else f)
    offs = np.concatenate([[0], np.cumsum(instance.arrays["size"])])
    return [b[offs[i]:offs[i + 1]].tolist() for i in range(len(instance.jobs))]


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    """f (eq. 17), feasibility under (1)-(13) and the JCT metrics of a solution."""
    arrays, bad = _decision_arrays(instance, solution)
    if arrays is None:
        return Evaluation(0.0, False, tuple(bad))
    wrack, ps_rack, ps_server, rate = arrays
    A = instance.arrays
    R, cap, tol = instance.n_racks, instance.capacity, TOL
    viol: list[str] = []
    # (1), (5): PS on switches
    on_switch = np.bincount(ps_rack[ps_server == 0], minlength=R)
    for k in np.flatnonzero(on_switch > A["slots"]):
        why = ("is not a PDP switch" if instance.racks[k].ps_slots == 0
               else "INC is off in this instance" if not instance.inc
               else f"holds at most C_k = {A['slots'][k]} PS")
        viol.append(f"ps: {int(on_switch[k])} PS on the ToR of rack {int(k)}, which {why} "
                    "(1, 5)")
    # (2): pool resources
    use = np.zeros((R, 3))
    np.add.at(use, wrack, A["wdem"])
    np.add.at(use, ps_rack[ps_server == 1], A["psdem"][ps_server == 1])
    for k, r in zip(*np.nonzero(use > A["cap"] * (1 + tol) + 1e-9), strict=True):
        name = ("cpu", "gpu", "mem")[r]
        viol.append(f"rack {int(k)}: {name} used {use[k, r]:g} > capacity {A['cap'][k, r]:g} (2)")
    # (13): port pairing
    c, bad_ports = circuits(instance, solution)
    viol += bad_ports
    # (10)-(13): link capacities
    wside, pside, mat = link_loads(instance, wrack, ps_rack, ps_server, rate)
    for k in np.flatnonzero(wside > cap * (1 + tol) + 1e-9):
        viol.append(f"rack {int(k)}: worker-side load {wside[k]:g} > N_ToR*B = {cap:g} (10)")
    for k in np.flatnonzero(pside > cap * (1 + tol) + 1e-9):
        viol.append(f"rack {int(k)}: PS-side load {pside[k]:g} > N_ToR*B = {cap:g} (12)")
    over = mat > instance.port_bw * c * (1 + tol) + 1e-9
    for s, t in zip(*np.nonzero(over), strict=True):
        viol.append(f"racks {int(s)}->{int(t)}: load {mat[s, t]:g} > B * {c[s, t]:g} "
                    "circuits (13)")
    # JCT (14)-(16)
    a = flow_coefficients(instance, ps_server)
    with np.errstate(divide="ignore"):
        jct_w = np.where(rate > 0, a / np.where(rate > 0, rate, 1), math.inf)
    jct = np.full(len(instance.jobs), 0.0)
    np.maximum.at(jct, A["job_of"], jct_w)
    longest = float(jct.max())
    f = 0.0 if math.isinf(longest) else 1.0 / longest
    bf = best_f(instance, wrack, ps_rack, ps_server, c)
    inter = wrack != ps_rack[A["job_of"]]
    metrics = {
        "f": f,
        "longest_jct": longest,
        "mean_jct": float(jct.mean()),
        "best_f": bf,
        "best_longest_jct": math.inf if bf <= 0 else 1.0 / bf,
        "ps_on_switch": float((ps_server == 0).sum()),
        "inter_rack_flows": float(inter.sum()),
        "inter_rack_data": float(A["data"][A["job_of"]][inter].sum()),
        "circuits": float(np.triu(c, 1).sum()),
        "time_shared_oxc": float(bool(solution.oxc_schedule)),
    }
    return Evaluation(objective=f, feasible=not viol, violations=tuple(viol), metrics=metrics)
