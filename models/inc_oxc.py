"""DML job scheduling in an all-optical leaf-spine DCN with in-network computing (paper 002).

Dong, Yang, Zhang, Xie, Zhu, "On Scheduling DML Jobs in All-Optical DCNs with In-Network
Computing". A batch of parameter-server (PS) jobs is placed in racks whose ToR switches meet in
one OXC; some ToRs are programmable (PDP) and can host a PS ("INC"). Decide where every worker
runs (a rack's server pool), where every PS runs (a rack's server pool or a PDP ToR), how the OXC
ports are paired (circuits between racks) and the bandwidth of every worker-PS flow, so that the
longest job completion time (JCT) is minimal, i.e. f = 1 / longest JCT is maximal (eq. 17).

System model (section II-A, as implemented)
-------------------------------------------
* Rack k: server pool with CPU/GPU/memory S_k, a ToR with N_ToR ports of capacity B towards the
  server pool and N_ToR ports (the set N_k) of capacity B towards the OXC; ``ps_slots`` = C_k > 0
  marks a PDP ToR that can hold C_k PS (eq. 1). OXC ports are numbered ``k * n_tor + p``.
* An OXC circuit pairs two ports of different racks and carries B in each direction (duplex).
  Deviation (ours, for the baselines at 64 racks): a solution may give a time-shared OXC
  (``oxc_schedule``: configurations with time shares theta_k >= 0, sum <= 1, as a
  Birkhoff-von Neumann schedule cycles through permutations; reconfiguration time neglected)
  instead of one static pairing; rule (13) then uses the time-averaged circuit counts
  sum_k theta_k c^k_st (:func:`circuits`). The MILPs only produce static pairings.
* Pull and push are two successive phases with the same flow size d_i and, as the paper says, the
  same bandwidth setting; one bandwidth b_ij per worker serves both. In the push phase a worker in
  rack s sends through its pool link (s, up), the circuits s -> t and, if the PS is on a server of
  rack t, the pool link (t, down); the pull phase is the mirror image. Hence, per phase, the link
  loads are the same, and the capacity rules are
    (10) worker side:  sum of b_ij over the workers in rack k            <= N_ToR * B
    (12) PS side:      sum of b_ij over the workers whose PS is on a server of rack k <= N_ToR * B
    (13) circuits:     sum of b_ij over the workers in s whose PS is in t <= B * c_st  (s != t)
  where c_st = c_ts is the number of circuits between racks s and t. A PS on a PDP switch uses no
  pool link (its flows end at the ToR).
* Job completion time per iteration, worker (i, j) (eqs. 14-15 and the same for a worker in its
  PS's rack, see below): JCT_ij = 2 d_i / b_ij * (1 + alpha_i) on a server, 2 d_i / b_ij on a PDP
  switch (PS update time alpha x communication on a server, 0 with INC). JCT_i = max_j JCT_ij, the
  longest JCT = max_i JCT_i = 1 / f, f = min_ij f_ij, f_ij = 1 / JCT_ij (eq. 16).

This reproduces Fig. 2: 4 workers, B = 100, d = 500, N_ToR = 4: (a) all workers in rack 1, PS on
a server of rack 2 -> b = 100 (worker side of rack 1), 5 s; (b) 2 + 2 workers, PS on a server of
rack 2 -> b = 100 (PS side of rack 2), 5 s; (c) as (b), PS on the switch of rack 1 -> b = 200,
2.5 s.

Objective
---------
dmlopt's objective is the paper's f (SENSE = "max", unit 1/s); ``metrics["longest_jct"]`` is
1 / f in seconds. f is what the MILP maximises and is linear in its variables; the longest JCT is
not, so f keeps "solver objective == evaluator objective" exact for every formulation. The
evaluator computes f = min_ij b_ij / (2 d_i (1 + alpha_i [PS on server])) from the solution's own
bandwidths; ``metrics["best_f"]`` is the best f the same placement and circuits allow (closed form:
with b_ij = a_ij f, a_ij = 2 d_i (1 + alpha_i [server]), every rule above reads f * load <= cap, so
best f = min over links of cap / load), so any placement can be scored fairly;
:func:`best_bandwidth` returns that allocation and :func:`times` every worker's pull/push and
update time and every job's JCT.

Decoding: the MILPs only maximise the smallest f_ij, so bandwidth a worker gets beyond what f
needs is arbitrary; :func:`decode` caps every worker's bandwidth at a_ij * f (the evaluated
objective then equals the solver's f; per-job JCTs of an exact solution are therefore all equal
to the longest one, and ``best_f`` = f at an optimum).

Formulation ``"paper"`` (section II-B, eqs. 1-17), with the corrections it needs
------------------------------------------------------------------------------------
Variables p^c_ik (k in R_c only: eq. 5), p^s_ik, w_ijk, L_nm, z / b for every worker, rack pair
(s != t) and PS kind (eqs. 6-7), z / b for a worker in its PS's rack (eqs. 8-9), f_ij, f; one M.
  (1) sum_i p^c_ik <= C_k;  (2) CPU / GPU / memory of each pool;  (3) sum_k w_ijk = 1;
  (4) sum_k p^s_ik + p^c_ik = 1;  (5) p^c_ik = 0 outside R_c (variables not created);
  (6)-(9) z >= w + p - 1, z <= (w + p) / 2, b <= M z (z binary);
  (10) worker side as above;  (11) the same sum for the pull phase (kept; it is implied);
  (12) PS side as above;  (13) L_nm = L_mn, sum_n L_nm <= 1, circuit capacity for every ordered
  pair (s, t), s != t;  (14)-(15) f_ij = b / (2 d_i (1 + alpha)) resp. b / (2 d_i) when z = 1
  (two big-M inequalities each);  (16) 0 <= f <= f_ij;  (17) max f.
Deviations, each needed for the model to mean what the text says:
* b^p2w = b^w2p (one variable). The paper states that pull and push get the same setting; with
  separate p2w variables nothing bounds them from below and (11)-(13) for the pull phase would be
  void (Fig. 2(b) would then come out at 2.5 s instead of 5 s).
* (12) is read as the PS's pool link: for a PS rack t it sums the flows of the workers in every
  rack s to a PS on a server of t (plus the local ones). Read literally (sum over PS racks t of a
  worker rack s) it repeats part of (10)/(11) and no rule would limit the PS's own link, again
  contradicting Fig. 2(b).
* (14')-(15'): (14)-(15) only define f_ij for a worker in another rack than its PS; a worker in
  its PS's rack gets the same two inequalities with b^s_ijk / b^c_ijk and z^s_ijk / z^c_ijk of
  eqs. (8)-(9) (otherwise its f_ij would be free and such workers would not count in the JCT).
* Alpha is per job (Table I has one alpha; a per-job value is more general and the generators
  give every job the same).
* M: one constant as in the paper, M = N_ToR * B * max(1, 1 / (2 d_min)), which bounds every
  bandwidth and every f_ij.
* Non-INC: ``Instance.inc = False`` (or a generator's ``inc=False``) makes R_c empty (Fig. 4's
  MILP_Non_INC); the PDP ToRs then act as plain ToRs.

Formulation ``"strong"`` (ours; equal optimum, proven by tests)
--------------------------------------------------------------
* Circuits aggregated per rack pair: integer c_st (s < t), sum_t c_st <= N_ToR replaces the
  N_OXC^2 port binaries (any such c is realised by a port pairing; ports of a rack are identical).
* Identical workers of a job (same CPU/GPU/memory) are one class; unary count binaries
  y_iqku = [at least u workers of class q of job i in rack k] (y_iqku >= y_iqk(u+1)) replace the
  per-worker binaries, which removes the symmetry between identical workers.
* Bandwidth: every worker of job i gets exactly its requirement r_i = 2 d_i (f + alpha_i phi_i),
  phi_i = f * [PS on server] (exact disaggregation f = phi^s_i + phi^c_i, phi^s_i <= F sigma_i,
  phi^c_i <= F (1 - sigma_i)); giving a worker more than the bottleneck needs never raises f.
  Rates per rack and per (rack, PS rack) are disaggregated instead of big-M products:
  sum_{k,u} g_iqku = m_iq r_i, g_iqku <= r_i, g_iqku <= Rmax_i y_iqku (so every active slot carries
  r_i);  x_ikt >= 0, sum_t x_ikt = G_ik = sum g, x_ikt <= U_ik (p^s_it + p^c_it);
  v_it (inflow into the PS rack) with sum_t v_it = m_i r_i, v_it <= m_i Rmax_i (p^s_it + p^c_it),
  sum_k x_ikt = v_it;  pi_it (the PS-side load) with sum_t pi_it = m_i rho_i,
  rho_i = 2 d_i (1 + alpha_i) phi^s_i, pi_it <= m_i Rmax_i p^s_it, pi_it <= v_it.
  Big-M values come from the data: F = N_ToR B / (2 max_i d_i) (a
  worker's own pool link), Rmax_i = 2 d_i (1 + alpha_i) F, U_ik = min(N_ToR B, m_i Rmax_i).
* Identical racks (same resources, C_k): worker counts non-increasing along the rack order.

Generators (section IV-A)
-------------------------
``"small"``: {2, 4, 6} racks, half of them PDP holding 2 PS each, 4 ports of 10 Gb/s per ToR,
pools with GPU in [50, 80], CPU in [20, 30], memory in [1.5, 2] GB, [1, 4] workers per job.
``"large"``: 64 racks, half PDP holding 5 PS, 12 ports per ToR (384-port OXC), 200 GPUs, 130 CPUs,
60 GB per rack, [4, 16] (or ``workers=(16, 64)``) workers per job. (The paper's "384 x 384 OXC,
thus 12 ports per ToR" only adds up at 64 racks if the 384 inputs and 384 outputs are counted
separately; we keep the stated 12 ports per ToR.) Both: data d_i uniform in
[92, 552] MB; per-worker demands proportional to d_i (GPU = round(32 d / 552) in [1, 32],
CPU = round(8 d / 552) in [1, 8], memory d / 1000 GB), so workers of one job are identical; the
PS needs the CPU and memory of one of its workers (the paper gives no PS demand). Units: data in
MB, bandwidth in MB/s (10 Gb/s = 1250 MB/s), time in s. alpha = 0.5 for every job (the paper gives
no value). Number of jobs (not given by the paper): by default the expected GPU demand is 65 % of
the total GPU capacity (2 / 4 / 5 jobs at 2 / 4 / 6 racks; 45 jobs of [4, 16] and 11 of
[16, 64] workers at 64 racks), which loads every resource at about 60-65 %; an instance a greedy
packing cannot place is redrawn (deterministically) so every generated instance is feasible.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pydantic

from dmlopt.contract import Formulation, Generator, Options, Size
from dmlopt.evaluation import Evaluation
from dmlopt.validation import Frozen, rule

NAME = "inc_oxc"
TITLE = "DML job scheduling in all-optical DCNs with in-network computing"
PAPER = "002 (Dong, Yang, Zhang, Xie, Zhu)"
SENSE = "max"

#: relative tolerance of the capacity checks
TOL = 1e-6

#: most racks of an instance (paper: 64). The evaluator and every model hold R x R matrices
#: (circuits c_st, loads), so R is what bounds them: 4096 racks are 128 MiB per matrix.
MAX_RACKS = 4096

_Num = pydantic.Field(ge=0, allow_inf_nan=False)


class Rack(Frozen):
    """A rack: server-pool resources and the number of PS its ToR can hold (0: not PDP)."""

    cpu: float = pydantic.Field(ge=0, allow_inf_nan=False, description="S_k^CPU")
    gpu: float = pydantic.Field(ge=0, allow_inf_nan=False, description="S_k^GPU")
    mem: float = pydantic.Field(ge=0, allow_inf_nan=False, description="S_k^MEM (GB)")
    ps_slots: int = pydantic.Field(default=0, ge=0, description="C_k; > 0 means a PDP ToR")


class Worker(Frozen):
    """Resources one worker needs (W_ij^CPU, W_ij^GPU, W_ij^MEM)."""

    cpu: float = pydantic.Field(ge=0, allow_inf_nan=False)
    gpu: float = pydantic.Field(ge=0, allow_inf_nan=False)
    mem: float = pydantic.Field(ge=0, allow_inf_nan=False)


class Job(Frozen):
    """A PS job: data size per pull/push d_i (MB), alpha, the PS's demand, the workers."""

    data: float = pydantic.Field(gt=0, allow_inf_nan=False, description="d_i (MB)")
    alpha: float = pydantic.Field(default=0.5, ge=0, allow_inf_nan=False,
                                  description="PS update / communication time on a server")
    ps_cpu: float = pydantic.Field(ge=0, allow_inf_nan=False, description="P_i^CPU")
    ps_mem: float = pydantic.Field(ge=0, allow_inf_nan=False, description="P_i^MEM (GB)")
    workers: list[Worker] = pydantic.Field(min_length=1)


class Instance(Frozen):
    """An INC/OXC instance (Table I). Racks 0..R-1, jobs 0..J-1, workers per job 0..|W_i|-1."""

    problem: Literal["inc_oxc"] = "inc_oxc"
    name: str = ""
    racks: list[Rack] = pydantic.Field(
        min_length=1, max_length=MAX_RACKS,
        description=f"racks 0..R-1 (at most {MAX_RACKS}: the evaluator's circuit and load "
        "matrices are R x R)")
    n_tor: int = pydantic.Field(ge=1, description="N_ToR: ToR ports to the pool and to the OXC")
    port_bw: float = pydantic.Field(gt=0, allow_inf_nan=False, description="B (MB/s)")
    inc: bool = pydantic.Field(default=True, description="False: no INC (R_c empty)")
    jobs: list[Job] = pydantic.Field(min_length=1)

    @pydantic.model_validator(mode="after")
    def _rules(self) -> Instance:
        cap = np.array([[r.cpu, r.gpu, r.mem] for r in self.racks])
        names = ("cpu", "gpu", "mem")
        pdp = self.inc and any(r.ps_slots > 0 for r in self.racks)
        wd = np.array([[w.cpu, w.gpu, w.mem] for job in self.jobs for w in job.workers],
                      float).reshape(-1, 3)
        fits = _fits_some_rack(wd, cap)
        ps = np.array([[job.ps_cpu, 0.0, job.ps_mem] for job in self.jobs], float)
        ps_fits = np.ones(len(self.jobs), bool) if pdp else _fits_some_rack(ps, cap)
        start = 0
        for i, job in enumerate(self.jobs):
            m = len(job.workers)
            bad = np.flatnonzero(~fits[start:start + m])
            if bad.size:
                j = int(bad[0])
                worst = [n for n, x, c in zip(names, wd[start + j], cap.max(axis=0), strict=True)
                         if x > c]
                what = ", ".join(worst) if worst else "cpu+gpu+mem together"
                raise rule(f"jobs[{i}].workers[{j}]", job.workers[j].model_dump(),
                           f"fits in no rack ({what} above every rack's capacity)")
            start += m
            if not ps_fits[i]:
                raise rule(f"jobs[{i}]", {"ps_cpu": job.ps_cpu, "ps_mem": job.ps_mem},
                           "PS fits on no server and there is no PDP switch (INC off or no "
                           "rack with ps_slots > 0)")
        # sequential sums, as worker by worker (np.add.accumulate does not pair terms)
        total = np.add.accumulate(wd, axis=0)[-1] if len(wd) else np.zeros(3)
        for r, name in enumerate(names):
            if total[r] > cap[:, r].sum() * (1 + TOL) + 1e-12:
                raise rule("jobs", f"{name} demand {total[r]:g}",
                           f"exceeds the total rack {name} capacity {cap[:, r].sum():g} "
                           "(the batch cannot be placed)")
        return self

    # ---- derived data -----------------------------------------------------------------------
    @property
    def n_racks(self) -> int:
        return len(self.racks)

    @property
    def capacity(self) -> float:
        """N_ToR * B: capacity of a pool link (each direction)."""
        return self.n_tor * self.port_bw

    @cached_property
    def arrays(self) -> dict[str, np.ndarray]:
        """Per worker (flattened, job-major) and per rack numpy arrays."""
        job_of = np.concatenate([np.full(len(j.workers), i) for i, j in enumerate(self.jobs)])
        wd = np.array([[w.cpu, w.gpu, w.mem] for j in self.jobs for w in j.workers], float)
        return {
            "job_of": job_of.astype(np.int64),
            "wdem": wd,
            "data": np.array([j.data for j in self.jobs], float),
            "alpha": np.array([j.alpha for j in self.jobs], float),
            "psdem": np.array([[j.ps_cpu, 0.0, j.ps_mem] for j in self.jobs], float),
            "cap": np.array([[r.cpu, r.gpu, r.mem] for r in self.racks], float),
            "slots": np.array([r.ps_slots if self.inc else 0 for r in self.racks], np.int64),
            "size": np.array([len(j.workers) for j in self.jobs], np.int64),
        }

    def pdp_racks(self) -> list[int]:
        """R_c: racks whose ToR can hold a PS (empty without INC)."""
        return [k for k, r in enumerate(self.racks) if r.ps_slots > 0] if self.inc else []

    def worker_classes(self, i: int) -> list[list[int]]:
        """Workers of job i grouped by identical demands (order of first appearance)."""
        groups: dict[tuple[float, float, float], list[int]] = {}
        for j, w in enumerate(self.jobs[i].workers):
            groups.setdefault((w.cpu, w.gpu, w.mem), []).append(j)
        return list(groups.values())


def _fits_some_rack(need: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """(N,) bool: demand row n is within some rack's capacity (rule (2) for one item, with
    the tolerance of :data:`TOL`).

    A demand fits some rack iff it fits some rack whose capacity no other rack dominates, so
    the distinct demands are compared with those racks only, in blocks of about 4M cells: a
    long worker list costs numpy work, not a Python loop over the racks.
    """
    if not len(need):
        return np.zeros(0, bool)
    top = _undominated(np.unique(cap * (1 + TOL) + 1e-12, axis=0))
    rows, inverse = np.unique(need, axis=0, return_inverse=True)
    ok = np.zeros(len(rows), bool)
    block = max(1, 2**22 // len(top))
    for b in range(0, len(rows), block):
        r = rows[b:b + block]
        ok[b:b + block] = ((r[:, 0, None] <= top[None, :, 0]) & (r[:, 1, None] <= top[None, :, 1])
                           & (r[:, 2, None] <= top[None, :, 2])).any(axis=1)
    return ok[inverse.reshape(-1)]


def _undominated(top: np.ndarray) -> np.ndarray:
    """The distinct rows of ``top`` that no other row is >= in every column."""
    keep = np.ones(len(top), bool)
    block = max(1, 2**22 // len(top))
    for b in range(0, len(top), block):
        r = top[b:b + block]
        geq = (top[None, :, 0] >= r[:, 0, None]) & (top[None, :, 1] >= r[:, 1, None]) \
            & (top[None, :, 2] >= r[:, 2, None])
        keep[b:b + block] = geq.sum(axis=1) == 1  # only the row itself (rows are distinct)
    return top[keep]


class Solution(Frozen):
    """Worker -> rack, PS -> (rack, "server" | "switch"), OXC port pairs, bandwidth per worker.

    ``oxc`` lists connected port pairs (global port numbers ``rack * n_tor + p``);
    ``bandwidth[i][j]`` (MB/s) serves the pull and the push of worker j of job i.
    """

    problem: Literal["inc_oxc"] = "inc_oxc"
    workers: list[list[int]]
    ps: list[tuple[int, Literal["server", "switch"]]]
    oxc: list[tuple[int, int]] = []
    bandwidth: list[list[float]]
    #: optional time-shared OXC (ours, see ``circuits``): [(time share, port pairs), ...]
    oxc_schedule: list[tuple[float, list[tuple[int, int]]]] = []


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
    counts: dict[tuple[int, int], int] = {}
    for s, t in racks:
        counts[(s, t)] = counts.get((s, t), 0) + 1
        counts[(t, s)] = counts.get((t, s), 0) + 1
    for key, n in counts.items():
        c[key] += weight * n


def circuits_from_ports(instance: Instance, pairs: list[tuple[int, int]]) -> tuple[
        np.ndarray, list[str]]:
    """The symmetric circuit-count matrix c_st of a port pairing, and the rules it breaks."""
    R = instance.n_racks
    c = np.zeros((R, R), np.int64)
    racks, bad = _rack_pairs(instance, pairs)
    _add_circuits(c, racks)
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
        racks, bk = _rack_pairs(instance, list(pairs))
        bad += [f"oxc_schedule[{q}]." + b for b in bk]
        _add_circuits(c, racks, share)
        total += share
    if total > 1 + TOL:
        bad.append(f"oxc_schedule: time shares add up to {total:g} > 1")
    return c, bad


def ports_from_circuits(instance: Instance, c: np.ndarray) -> list[tuple[int, int]]:
    """A port pairing realising the symmetric circuit counts ``c`` (ports taken in order)."""
    P = instance.n_tor
    nxt = [k * P for k in range(instance.n_racks)]
    pairs = []
    R = instance.n_racks
    for s in range(R):
        for t in range(s + 1, R):
            for _ in range(int(round(c[s, t]))):
                pairs.append((nxt[s], nxt[t]))
                nxt[s] += 1
                nxt[t] += 1
    return pairs


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


# ------------------------------------------------------------------------------------------
# exact formulations


def _big_m(instance: Instance) -> float:
    dmin = float(instance.arrays["data"].min())
    return instance.capacity * max(1.0, 1.0 / (2 * dmin))


def _workers(instance: Instance) -> list[tuple[int, int]]:
    return [(i, j) for i, job in enumerate(instance.jobs) for j in range(len(job.workers))]


def build_paper(instance: Instance) -> Any:
    """Eqs. (1)-(17) of section II-B with the corrections listed in the module docstring."""
    import pyomo.environ as pyo

    R, P, B = instance.n_racks, instance.n_tor, instance.port_bw
    NB, M = instance.capacity, _big_m(instance)
    jobs = instance.jobs
    m = pyo.ConcreteModel(name=f"inc_oxc_paper_{instance.name}")
    m.J = pyo.RangeSet(0, len(jobs) - 1)
    m.W = pyo.Set(initialize=_workers(instance), dimen=2)
    m.R = pyo.RangeSet(0, R - 1)
    m.Rc = pyo.Set(initialize=instance.pdp_racks())
    m.Pairs = pyo.Set(initialize=[(s, t) for s in range(R) for t in range(R) if s != t], dimen=2)
    m.N = pyo.RangeSet(0, R * P - 1)
    m.NN = pyo.Set(initialize=[(n, q) for n in range(R * P) for q in range(R * P) if n != q],
                   dimen=2)
    m.pc = pyo.Var(m.J, m.Rc, domain=pyo.Binary)          # p^c_ik, k in R_c only (5)
    m.ps = pyo.Var(m.J, m.R, domain=pyo.Binary)           # p^s_ik
    m.w = pyo.Var(m.W, m.R, domain=pyo.Binary)            # w_ijk
    m.L = pyo.Var(m.NN, domain=pyo.Binary)                # L_nm
    m.zs = pyo.Var(m.W, m.Pairs, domain=pyo.Binary)       # z^{w2p,s}_ijst
    m.zc = pyo.Var(m.W, m.Pairs, domain=pyo.Binary)       # z^{w2p,c}_ijst
    m.bs = pyo.Var(m.W, m.Pairs, domain=pyo.NonNegativeReals)  # b^{w2p,s} = b^{p2w,s}
    m.bc = pyo.Var(m.W, m.Pairs, domain=pyo.NonNegativeReals)  # b^{w2p,c} = b^{p2w,c}
    m.zsi = pyo.Var(m.W, m.R, domain=pyo.Binary)          # z^s_ijk
    m.zci = pyo.Var(m.W, m.R, domain=pyo.Binary)          # z^c_ijk
    m.bsi = pyo.Var(m.W, m.R, domain=pyo.NonNegativeReals)  # b^s_ijk
    m.bci = pyo.Var(m.W, m.R, domain=pyo.NonNegativeReals)  # b^c_ijk
    m.fij = pyo.Var(m.W, domain=pyo.NonNegativeReals)
    m.f = pyo.Var(domain=pyo.NonNegativeReals)             # (16) f >= 0

    def pc(i, k):
        return m.pc[i, k] if k in m.Rc else 0

    m.obj = pyo.Objective(expr=m.f, sense=pyo.maximize)  # (17)
    # (1)
    m.c1 = pyo.Constraint(m.Rc, rule=lambda m, k: sum(m.pc[i, k] for i in m.J)
                          <= instance.racks[k].ps_slots)
    # (2)
    def res(attr_w, attr_p):
        def r(m, k):
            lhs = sum(getattr(jobs[i].workers[j], attr_w) * m.w[i, j, k] for i, j in m.W)
            if attr_p:
                lhs += sum(getattr(jobs[i], attr_p) * m.ps[i, k] for i in m.J)
            return lhs <= getattr(instance.racks[k], attr_w)
        return r
    m.c2cpu = pyo.Constraint(m.R, rule=res("cpu", "ps_cpu"))
    m.c2gpu = pyo.Constraint(m.R, rule=res("gpu", None))
    m.c2mem = pyo.Constraint(m.R, rule=res("mem", "ps_mem"))
    # (3), (4)
    m.c3 = pyo.Constraint(m.W, rule=lambda m, i, j: sum(m.w[i, j, k] for k in m.R) == 1)
    m.c4 = pyo.Constraint(m.J, rule=lambda m, i: sum(m.ps[i, k] + pc(i, k) for k in m.R) == 1)

    # (6)-(7) inter-rack, (8)-(9) intra-rack linearisation
    def lin(z, w_, p_, b):
        return [z >= w_ + p_ - 1, z <= 0.5 * (w_ + p_), b <= M * z]

    m.c6 = pyo.ConstraintList()
    for i, j in m.W:
        for s, t in m.Pairs:
            for e in lin(m.zs[i, j, s, t], m.w[i, j, s], m.ps[i, t], m.bs[i, j, s, t]):
                m.c6.add(e)
            for e in lin(m.zc[i, j, s, t], m.w[i, j, s], pc(i, t), m.bc[i, j, s, t]):
                m.c6.add(e)
        for k in m.R:
            for e in lin(m.zsi[i, j, k], m.w[i, j, k], m.ps[i, k], m.bsi[i, j, k]):
                m.c6.add(e)
            for e in lin(m.zci[i, j, k], m.w[i, j, k], pc(i, k), m.bci[i, j, k]):
                m.c6.add(e)
    others = {s: [t for t in range(R) if t != s] for s in range(R)}
    # (10) worker side of rack s
    m.c10 = pyo.Constraint(m.R, rule=lambda m, s: sum(
        m.bs[i, j, s, t] + m.bc[i, j, s, t] for t in others[s] for i, j in m.W)
        + sum(m.bci[i, j, s] + m.bsi[i, j, s] for i, j in m.W) <= NB)
    # (11) pull phase of the workers of rack s from other racks (implied by (10))
    m.c11 = pyo.Constraint(m.R, rule=lambda m, s: sum(
        m.bs[i, j, s, t] + m.bc[i, j, s, t] for t in others[s] for i, j in m.W) <= NB)
    # (12) PS side: pool link of rack t carrying the flows of its server PS
    m.c12 = pyo.Constraint(m.R, rule=lambda m, t: sum(
        m.bs[i, j, s, t] for s in others[t] for i, j in m.W)
        + sum(m.bsi[i, j, t] for i, j in m.W) <= NB)
    # (13) OXC ports and circuits
    m.c13sym = pyo.Constraint(m.NN, rule=lambda m, n, q: m.L[n, q] == m.L[q, n]
                              if n < q else pyo.Constraint.Skip)
    m.c13one = pyo.Constraint(m.N, rule=lambda m, q: sum(m.L[n, q] for n in m.N if n != q) <= 1)
    ports = {k: range(k * P, (k + 1) * P) for k in range(R)}
    m.c13cap = pyo.Constraint(m.Pairs, rule=lambda m, s, t: sum(
        m.bs[i, j, s, t] + m.bc[i, j, s, t] for i, j in m.W)
        <= B * sum(m.L[n, q] for n in ports[s] for q in ports[t]))

    # (14)-(15) and (14')-(15') for a worker in its PS's rack
    def den(i, server):
        return 2 * jobs[i].data * ((1 + jobs[i].alpha) if server else 1)

    m.c14 = pyo.ConstraintList()
    for i, j in m.W:
        terms = [(m.bs[i, j, s, t], m.zs[i, j, s, t], True) for s, t in m.Pairs]
        terms += [(m.bc[i, j, s, t], m.zc[i, j, s, t], False) for s, t in m.Pairs
                  if t in m.Rc]
        terms += [(m.bsi[i, j, k], m.zsi[i, j, k], True) for k in m.R]
        terms += [(m.bci[i, j, k], m.zci[i, j, k], False) for k in m.R if k in m.Rc]
        for b, z, server in terms:
            m.c14.add(m.fij[i, j] - b / den(i, server) <= M * (1 - z))
            m.c14.add(b / den(i, server) - m.fij[i, j] <= M * (1 - z))
    # (16)
    m.c16 = pyo.Constraint(m.W, rule=lambda m, i, j: m.f <= m.fij[i, j])
    return m


def _size_paper(instance: Instance) -> tuple[int, int]:
    R, P = instance.n_racks, instance.n_tor
    W, J = sum(len(j.workers) for j in instance.jobs), len(instance.jobs)
    pairs, nports = R * (R - 1), R * P
    n_vars = J * (R + len(instance.pdp_racks())) + W * R + nports * (nports - 1) \
        + 4 * W * pairs + 4 * W * R + W + 1
    n_cons = len(instance.pdp_racks()) + 3 * R + W + J + 6 * W * (pairs + R) + 3 * R \
        + nports * (nports - 1) // 2 + nports + pairs + 2 * W * (pairs + R) * 2 + W
    return n_vars, n_cons


def _bounds(instance: Instance) -> tuple[float, np.ndarray, np.ndarray]:
    """F (bound on f), Rmax_i (bound on a worker's rate), m_i."""
    A = instance.arrays
    F = instance.capacity / (2 * float(A["data"].max()))
    rmax = np.minimum(2 * A["data"] * (1 + A["alpha"]) * F, instance.capacity)
    return F, rmax, A["size"]


def _identical_rack_chains(instance: Instance) -> list[list[int]]:
    groups: dict[tuple, list[int]] = {}
    for k, r in enumerate(instance.racks):
        groups.setdefault((r.cpu, r.gpu, r.mem, r.ps_slots if instance.inc else 0), []).append(k)
    return [g for g in groups.values() if len(g) > 1]


def build_strong(instance: Instance) -> Any:
    """The aggregated, disaggregated-linearisation formulation (module docstring)."""
    import pyomo.environ as pyo

    R, P, B, NB = instance.n_racks, instance.n_tor, instance.port_bw, instance.capacity
    jobs = instance.jobs
    F, rmax, msize = _bounds(instance)
    classes = {i: instance.worker_classes(i) for i in range(len(jobs))}
    m = pyo.ConcreteModel(name=f"inc_oxc_strong_{instance.name}")
    m.J = pyo.RangeSet(0, len(jobs) - 1)
    m.R = pyo.RangeSet(0, R - 1)
    m.Rc = pyo.Set(initialize=instance.pdp_racks())
    m.Q = pyo.Set(initialize=[(i, q) for i in classes for q in range(len(classes[i]))], dimen=2)
    m.Y = pyo.Set(initialize=[(i, q, k, u) for i, q in m.Q for k in range(R)
                              for u in range(1, len(classes[i][q]) + 1)], dimen=4)
    m.Up = pyo.Set(initialize=[(s, t) for s in range(R) for t in range(s + 1, R)], dimen=2)
    m.y = pyo.Var(m.Y, domain=pyo.Binary)
    m.g = pyo.Var(m.Y, domain=pyo.NonNegativeReals)
    m.ps = pyo.Var(m.J, m.R, domain=pyo.Binary)
    m.pc = pyo.Var(m.J, m.Rc, domain=pyo.Binary)
    m.c = pyo.Var(m.Up, domain=pyo.NonNegativeIntegers, bounds=(0, P))
    m.f = pyo.Var(bounds=(0, F))
    m.phis = pyo.Var(m.J, bounds=(0, F))
    m.phic = pyo.Var(m.J, bounds=(0, F))
    m.x = pyo.Var(m.J, m.R, m.R, domain=pyo.NonNegativeReals)
    m.pi = pyo.Var(m.J, m.R, domain=pyo.NonNegativeReals)

    def pc(i, k):
        return m.pc[i, k] if k in m.Rc else 0

    def sigma(i):
        return sum(m.ps[i, k] for k in m.R)

    def r(i):  # required rate of every worker of job i
        return 2 * jobs[i].data * (m.f + jobs[i].alpha * m.phis[i])

    def count(i, q, k):
        return sum(m.y[i, q, k, u] for u in range(1, len(classes[i][q]) + 1))

    def G(i, k):
        return sum(m.g[i, q, k, u] for q in range(len(classes[i]))
                   for u in range(1, len(classes[i][q]) + 1))

    m.obj = pyo.Objective(expr=m.f, sense=pyo.maximize)
    m.slots = pyo.Constraint(m.Rc, rule=lambda m, k: sum(m.pc[i, k] for i in m.J)
                             <= instance.racks[k].ps_slots)                      # (1)

    def res(attr, attr_p):
        def rl(m, k):
            lhs = sum(getattr(jobs[i].workers[classes[i][q][0]], attr) * count(i, q, k)
                      for i, q in m.Q)
            if attr_p:
                lhs += sum(getattr(jobs[i], attr_p) * m.ps[i, k] for i in m.J)
            return lhs <= getattr(instance.racks[k], attr)
        return rl
    m.cpu = pyo.Constraint(m.R, rule=res("cpu", "ps_cpu"))                       # (2)
    m.gpu = pyo.Constraint(m.R, rule=res("gpu", None))
    m.mem = pyo.Constraint(m.R, rule=res("mem", "ps_mem"))
    m.assign = pyo.Constraint(m.Q, rule=lambda m, i, q: sum(
        count(i, q, k) for k in m.R) == len(classes[i][q]))                      # (3)
    m.order = pyo.Constraint(m.Y, rule=lambda m, i, q, k, u: m.y[i, q, k, u + 1]
                             <= m.y[i, q, k, u] if u < len(classes[i][q])
                             else pyo.Constraint.Skip)
    m.place_ps = pyo.Constraint(m.J, rule=lambda m, i: sum(
        m.ps[i, k] + pc(i, k) for k in m.R) == 1)                                # (4)
    # f = phi^s + phi^c, phi^s <= F sigma, phi^c <= F (1 - sigma)
    m.phi = pyo.Constraint(m.J, rule=lambda m, i: m.f == m.phis[i] + m.phic[i])
    m.phis_ub = pyo.Constraint(m.J, rule=lambda m, i: m.phis[i] <= F * sigma(i))
    m.phic_ub = pyo.Constraint(m.J, rule=lambda m, i: m.phic[i] <= F * (1 - sigma(i)))
    # rates: every active worker slot carries r_i
    m.g_sum = pyo.Constraint(m.Q, rule=lambda m, i, q: sum(
        m.g[i, q, k, u] for k in m.R for u in range(1, len(classes[i][q]) + 1))
        == len(classes[i][q]) * r(i))
    m.g_r = pyo.Constraint(m.Y, rule=lambda m, i, q, k, u: m.g[i, q, k, u] <= r(i))
    m.g_y = pyo.Constraint(m.Y, rule=lambda m, i, q, k, u: m.g[i, q, k, u]
                           <= rmax[i] * m.y[i, q, k, u])
    # flows to the PS rack
    m.x_sum = pyo.Constraint(m.J, m.R, rule=lambda m, i, k: sum(m.x[i, k, t] for t in m.R)
                             == G(i, k))
    m.x_ub = pyo.Constraint(m.J, m.R, m.R, rule=lambda m, i, k, t: m.x[i, k, t] <= min(
        NB, msize[i] * rmax[i]) * (m.ps[i, t] + pc(i, t)))
    # inflow into the PS rack: v_it = m_i r_i p_it (disaggregated), sum_k x_ikt = v_it
    m.v = pyo.Var(m.J, m.R, domain=pyo.NonNegativeReals)
    m.v_sum = pyo.Constraint(m.J, rule=lambda m, i: sum(m.v[i, t] for t in m.R)
                             == msize[i] * r(i))
    m.v_ub = pyo.Constraint(m.J, m.R, rule=lambda m, i, t: m.v[i, t] <= min(
        msize[i] * rmax[i], R * NB) * (m.ps[i, t] + pc(i, t)))
    m.v_x = pyo.Constraint(m.J, m.R, rule=lambda m, i, t: sum(m.x[i, k, t] for k in m.R)
                           == m.v[i, t])
    m.pi_v = pyo.Constraint(m.J, m.R, rule=lambda m, i, t: m.pi[i, t] <= m.v[i, t])
    # PS-side load of a server PS
    m.pi_sum = pyo.Constraint(m.J, rule=lambda m, i: sum(m.pi[i, t] for t in m.R) == msize[i]
                              * 2 * jobs[i].data * (1 + jobs[i].alpha) * m.phis[i])
    m.pi_ub = pyo.Constraint(m.J, m.R, rule=lambda m, i, t: m.pi[i, t]
                             <= min(NB, msize[i] * rmax[i]) * m.ps[i, t])
    m.wside = pyo.Constraint(m.R, rule=lambda m, k: sum(G(i, k) for i in m.J) <= NB)  # (10)
    m.pside = pyo.Constraint(m.R, rule=lambda m, t: sum(m.pi[i, t] for i in m.J) <= NB)  # (12)
    # (13) circuits
    m.ports = pyo.Constraint(m.R, rule=lambda m, s: sum(
        m.c[min(s, t), max(s, t)] for t in m.R if t != s) <= P)
    m.st = pyo.Constraint(m.Up, rule=lambda m, s, t: sum(m.x[i, s, t] for i in m.J)
                          <= B * m.c[s, t])
    m.ts = pyo.Constraint(m.Up, rule=lambda m, s, t: sum(m.x[i, t, s] for i in m.J)
                          <= B * m.c[s, t])
    # identical racks: non-increasing worker counts
    m.sym = pyo.ConstraintList()
    for chain in _identical_rack_chains(instance):
        for k, k2 in zip(chain, chain[1:], strict=False):
            m.sym.add(sum(count(i, q, k) for i, q in m.Q) >= sum(count(i, q, k2) for i, q in m.Q))
    m._classes = classes
    return m


def _size_strong(instance: Instance) -> tuple[int, int]:
    R = instance.n_racks
    W, J = sum(len(j.workers) for j in instance.jobs), len(instance.jobs)
    n_vars = 2 * W * R + J * (R + len(instance.pdp_racks())) + R * (R - 1) // 2 + 1 + 2 * J \
        + J * R * R + 2 * J * R
    n_cons = 4 * R + 3 * W * R + 5 * J + 4 * J * R + J * R * R + J * R + 2 * R + R * (R - 1)
    return n_vars, n_cons


#: the exact models (module docstring)
FORMULATIONS: dict[str, Formulation] = {
    "paper": Formulation(build_paper, _size_paper,
                         "the MILP of section II-B, eqs. (1)-(17), with the documented "
                         "corrections (OXC ports paired explicitly)"),
    "strong": Formulation(build_strong, _size_strong,
                          "ours: aggregated workers, circuit counts per rack pair, "
                          "disaggregated linearisation (same optimum, far smaller)"),
}


def build(instance: Instance, formulation: str = "paper") -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (see :data:`FORMULATIONS`)."""
    return FORMULATIONS[formulation].build(instance)


def estimate_size(instance: Instance, formulation: str = "paper") -> tuple[int, int]:
    """(variables, constraints) of the model, computed without building it."""
    return FORMULATIONS[formulation].estimate_size(instance)


def _val(v: Any) -> float:
    return float(v.value) if v.value is not None else 0.0


def _finish(instance: Instance, wrack: list[list[int]], ps: list[tuple[int, str]],
            c: np.ndarray, rates: list[list[float]], f: float) -> Solution:
    """Solution with each worker's bandwidth capped at what f needs (objective == f exactly)."""
    server = np.array([kind == "server" for _, kind in ps], float)
    a_job = 2 * instance.arrays["data"] * (1 + instance.arrays["alpha"] * server)
    bw = [[max(0.0, min(b, a_job[i] * f)) for b in row] for i, row in enumerate(rates)]
    return Solution(workers=wrack, ps=ps, oxc=ports_from_circuits(instance, c), bandwidth=bw)


def decode(model: Any, instance: Instance) -> Solution:
    """Placement, circuits and bandwidths from either formulation.

    The MILPs only maximise the smallest f_ij; bandwidth a worker gets beyond what f needs is
    arbitrary, so each worker's bandwidth is capped at a_ij * f (the objective then equals the
    model's f exactly; ``best_f`` reports what the placement and circuits allow).
    """
    R, P = instance.n_racks, instance.n_tor
    J = len(instance.jobs)
    ps: list[tuple[int, str]] = []
    for i in range(J):
        best = max(((_val(model.ps[i, k]), k, "server") for k in range(R)), default=(0, 0, ""))
        for k in instance.pdp_racks():
            if _val(model.pc[i, k]) > best[0]:
                best = (_val(model.pc[i, k]), k, "switch")
        ps.append((best[1], best[2]))
    f = _val(model.f)
    c = np.zeros((R, R))
    if hasattr(model, "L"):  # paper
        wrack = [[max(range(R), key=lambda k, i=i, j=j: _val(model.w[i, j, k]))
                  for j in range(len(job.workers))] for i, job in enumerate(instance.jobs)]
        for (n, q), var in model.L.items():
            if n < q and _val(var) > 0.5 and n // P != q // P:
                c[n // P, q // P] += 1
                c[q // P, n // P] += 1
        rates = []
        for i, job in enumerate(instance.jobs):
            row = []
            for j in range(len(job.workers)):
                s, (t, kind) = wrack[i][j], ps[i]
                if s == t:
                    b = model.bsi[i, j, s] if kind == "server" else model.bci[i, j, s]
                else:
                    b = model.bs[i, j, s, t] if kind == "server" else model.bc[i, j, s, t]
                row.append(_val(b))
            rates.append(row)
    else:  # strong
        classes = model._classes
        wrack = []
        for i, job in enumerate(instance.jobs):
            row = [0] * len(job.workers)
            for q, members in enumerate(classes[i]):
                racks: list[int] = []
                for k in range(R):
                    n = sum(round(_val(model.y[i, q, k, u])) for u in range(1, len(members) + 1))
                    racks += [k] * n
                racks += [racks[-1] if racks else 0] * (len(members) - len(racks))
                for j, k in zip(members, racks, strict=False):
                    row[j] = k
            wrack.append(row)
        for (s, t), var in model.c.items():
            c[s, t] = c[t, s] = round(_val(var))
        rates = [[math.inf] * len(job.workers) for job in instance.jobs]
    return _finish(instance, wrack, ps, c, rates, f)


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    """Set every variable of either formulation from ``solution`` (bandwidth a_ij * f).

    A time-shared OXC (``oxc_schedule``) has no static counterpart: nothing is set then.
    """
    if solution.oxc_schedule:
        return
    ev = evaluate(instance, solution)
    f = ev.objective
    R = instance.n_racks
    wrack = np.array([k for row in solution.workers for k in row], np.int64)
    ps_rack = np.array([k for k, _ in solution.ps], np.int64)
    server = np.array([kind == "server" for _, kind in solution.ps], float)
    c, _ = circuits_from_ports(instance, list(solution.oxc))
    a = flow_coefficients(instance, server)
    rate = a * f
    for (i, k), var in model.ps.items():
        var.set_value(float(ps_rack[i] == k and server[i] == 1))
    for (i, k), var in model.pc.items():
        var.set_value(float(ps_rack[i] == k and server[i] == 0))
    model.f.set_value(f)
    if hasattr(model, "L"):
        idx = {(i, j): n for n, (i, j) in enumerate(_workers(instance))}
        for (i, j, k), var in model.w.items():
            var.set_value(float(wrack[idx[i, j]] == k))
        for var in model.L.values():
            var.set_value(0.0)
        for n, q in ports_from_circuits(instance, c):
            model.L[n, q].set_value(1.0)
            model.L[q, n].set_value(1.0)
        for comp in (model.zs, model.zc, model.bs, model.bc, model.zsi, model.zci, model.bsi,
                     model.bci):
            for var in comp.values():
                var.set_value(0.0)
        for (i, j), n in idx.items():
            s, t, srv = wrack[n], ps_rack[i], server[i] == 1
            if s == t:
                (model.zsi if srv else model.zci)[i, j, s].set_value(1.0)
                (model.bsi if srv else model.bci)[i, j, s].set_value(rate[n])
            else:
                (model.zs if srv else model.zc)[i, j, s, t].set_value(1.0)
                (model.bs if srv else model.bc)[i, j, s, t].set_value(rate[n])
            model.fij[i, j].set_value(f)
        return
    classes = model._classes
    sizes = instance.arrays["size"]
    offs = np.concatenate([[0], np.cumsum(sizes)])
    for i in range(len(instance.jobs)):
        model.phis[i].set_value(f if server[i] else 0.0)
        model.phic[i].set_value(0.0 if server[i] else f)
        r_i = 2 * instance.jobs[i].data * (1 + instance.jobs[i].alpha * server[i]) * f
        for q, members in enumerate(classes[i]):
            for k in range(R):
                n = int(sum(wrack[offs[i] + j] == k for j in members))
                for u in range(1, len(members) + 1):
                    model.y[i, q, k, u].set_value(float(u <= n))
                    model.g[i, q, k, u].set_value(r_i if u <= n else 0.0)
        for k in range(R):
            for t in range(R):
                model.x[i, k, t].set_value(0.0)
            model.pi[i, k].set_value(0.0)
        for k in range(R):
            n = int((wrack[offs[i]:offs[i + 1]] == k).sum())
            model.x[i, k, ps_rack[i]].set_value(n * r_i)
        if server[i]:
            model.pi[i, ps_rack[i]].set_value(sizes[i] * r_i)
        for t in range(R):
            model.v[i, t].set_value(sizes[i] * r_i if t == ps_rack[i] else 0.0)
    for (s, t), var in model.c.items():
        var.set_value(float(c[s, t]))


# ------------------------------------------------------------------------------------------
# generators


def _spec_error(field: str, value: object, text: str):
    from dmlopt.errors import InstanceError

    return InstanceError(f"spec.{field}", value, text)


def _greedy_fits(instance: Instance) -> bool:
    """First-fit decreasing of all workers, then every PS on a switch slot or a server."""
    A = instance.arrays
    free = A["cap"].copy()
    order = np.argsort(-A["wdem"][:, 1], kind="stable")
    for n in order:
        need = A["wdem"][n]
        ok = np.flatnonzero((free >= need - 1e-9).all(axis=1))
        if not ok.size:
            return False
        k = ok[np.argmax(free[ok, 1])]
        free[k] -= need
    slots = A["slots"].copy()
    for i in range(len(instance.jobs)):
        sw = np.flatnonzero(slots > 0)
        if sw.size:
            slots[sw[0]] -= 1
            continue
        ok = np.flatnonzero((free >= A["psdem"][i] - 1e-9).all(axis=1))
        if not ok.size:
            return False
        free[ok[0]] -= A["psdem"][i]
    return True


def generate_dcn(
    *, seed: int = 0, racks: int = 6, jobs: int | None = None, workers: tuple[int, int] = (1, 4),
    pdp_fraction: float = 0.5, ps_per_switch: int = 2, ports: int = 4, port_gbps: float = 10.0,
    gpu: tuple[float, float] = (50, 80), cpu: tuple[float, float] = (20, 30),
    mem: tuple[float, float] = (1.5, 2.0), data: tuple[float, float] = (92, 552),
    alpha: float = 0.5, inc: bool = True, load: float = 0.65,
) -> Instance:
    """Section IV-A's simulation setting (defaults: small scale); see the module docstring."""
    workers = tuple(workers)
    for name, rng_ in (("workers", workers), ("gpu", gpu), ("cpu", cpu), ("mem", mem),
                       ("data", data)):
        if len(rng_) != 2 or not 0 <= rng_[0] <= rng_[1]:
            raise _spec_error(name, rng_, "must be [low, high] with 0 <= low <= high")
    if racks < 1 or ports < 1 or ps_per_switch < 0 or workers[0] < 1 or data[0] <= 0:
        raise _spec_error("racks/ports/ps_per_switch/workers/data",
                          (racks, ports, ps_per_switch, workers, data),
                          "racks, ports, workers and data must be positive")
    if not 0 <= pdp_fraction <= 1 or not 0 < load <= 1 or alpha < 0:
        raise _spec_error("pdp_fraction/load/alpha", (pdp_fraction, load, alpha),
                          "pdp_fraction in [0, 1], load in (0, 1], alpha >= 0")
    if jobs is not None and jobs < 1:
        raise _spec_error("jobs", jobs, "must be positive")
    rng = np.random.default_rng(seed)
    dmax = data[1]
    if jobs is None:
        e_gpu = max(1.0, 32 * (data[0] + data[1]) / 2 / dmax)
        e_job = (workers[0] + workers[1]) / 2 * e_gpu
        jobs = max(1, round(load * racks * (gpu[0] + gpu[1]) / 2 / e_job))
    n_pdp = int(round(pdp_fraction * racks))
    for _ in range(200):
        pdp = set(rng.choice(racks, n_pdp, replace=False).tolist()) if n_pdp else set()
        rk = [Rack(gpu=float(round(rng.uniform(*gpu))), cpu=float(round(rng.uniform(*cpu))),
                   mem=round(float(rng.uniform(*mem)), 3),
                   ps_slots=ps_per_switch if k in pdp else 0) for k in range(racks)]
        js = []
        for _i in range(jobs):
            d = float(round(rng.uniform(*data)))
            m_ = int(rng.integers(workers[0], workers[1] + 1))
            w = Worker(cpu=float(max(1, round(8 * d / dmax))),
                       gpu=float(max(1, round(32 * d / dmax))), mem=round(d / 1000, 3))
            js.append(Job(data=d, alpha=alpha, ps_cpu=w.cpu, ps_mem=w.mem, workers=[w] * m_))
        name = f"dcn-r{racks}-j{jobs}-w{workers[0]}_{workers[1]}{'' if inc else '-noinc'}-s{seed}"
        try:
            inst = Instance(name=name, racks=rk, n_tor=ports, port_bw=port_gbps * 125.0,
                            inc=inc, jobs=js)
        except Exception:  # noqa: BLE001 - redraw an impossible batch
            continue
        if _greedy_fits(inst):
            return inst
    raise _spec_error("jobs", jobs, "too many jobs: no feasible batch drawn in 200 attempts")


def generate_small(*, seed: int = 0, racks: int = 6, jobs: int | None = None,
                   inc: bool = True, alpha: float = 0.5) -> Instance:
    """Small scale (section IV-A): {2, 4, 6} racks, [1, 4] workers per job."""
    return generate_dcn(seed=seed, racks=racks, jobs=jobs, inc=inc, alpha=alpha)


def generate_large(*, seed: int = 0, racks: int = 64, jobs: int | None = None,
                   workers: tuple[int, int] = (4, 16), inc: bool = True,
                   alpha: float = 0.5) -> Instance:
    """Large scale (section IV-A): 64 racks, 12 ports per ToR, [4, 16] or [16, 64] workers."""
    return generate_dcn(seed=seed, racks=racks, jobs=jobs, workers=workers, ps_per_switch=5,
                        ports=12, gpu=(200, 200), cpu=(130, 130), mem=(60, 60), inc=inc,
                        alpha=alpha)


def _low_high(value: tuple[float, float], low: float, strict: bool = False
              ) -> tuple[float, float]:
    """A [low, high] range parameter: ``low`` <= (or <) its first entry <= its second."""
    first_ok = value[0] > low if strict else value[0] >= low
    if not (first_ok and value[0] <= value[1]):
        raise ValueError(f"must be [low, high] with {low} {'<' if strict else '<='} low <= "
                         "high")
    return value


class SmallParams(Options):
    """Parameters of the small-scale generator (section IV-A)."""

    racks: int = pydantic.Field(default=6, ge=1, description="racks R (paper: 2, 4, 6)")
    jobs: int | None = pydantic.Field(
        default=None, ge=1, description="jobs in the batch; default: about 65 % of the GPUs "
        "used (load)")
    inc: bool = pydantic.Field(default=True, description="in-network computing on (PS may run "
                               "on a PDP ToR switch); false: MILP_Non_INC's setting")
    alpha: float = pydantic.Field(default=0.5, ge=0, description="PS update time as a "
                                  "fraction of the communication time (alpha_i)")


class LargeParams(SmallParams):
    """Parameters of the large-scale generator (section IV-A: 64 racks, 12 ports per ToR)."""

    racks: int = pydantic.Field(default=64, ge=1, description="racks R (paper: 64)")
    workers: tuple[int, int] = pydantic.Field(
        default=(4, 16), description="[low, high] workers per job, uniform (paper: [4, 16] "
        "or [16, 64])")

    @pydantic.field_validator("workers")
    @classmethod
    def _workers(cls, value: tuple[int, int]) -> tuple[int, int]:
        return _low_high(value, 1)


class DcnParams(LargeParams):
    """Parameters of the general generator (section IV-A's simulation setting)."""

    racks: int = pydantic.Field(default=6, ge=1, description="racks R")
    workers: tuple[int, int] = pydantic.Field(
        default=(1, 4), description="[low, high] workers per job, uniform")
    pdp_fraction: float = pydantic.Field(default=0.5, ge=0, le=1,
                                         description="share of racks with a PDP ToR switch")
    ps_per_switch: int = pydantic.Field(default=2, ge=0,
                                        description="PS slots C_k of a PDP switch")
    ports: int = pydantic.Field(default=4, ge=1, le=1024,
                                description="N_ToR: ToR ports to the pool and to the OXC")
    port_gbps: float = pydantic.Field(default=10.0, gt=0, description="port bandwidth B "
                                      "(Gbit/s)")
    gpu: tuple[float, float] = pydantic.Field(default=(50, 80), description="[low, high] "
                                                  "GPU units of a rack, uniform")
    cpu: tuple[float, float] = pydantic.Field(default=(20, 30), description="[low, high] "
                                                  "CPU units of a rack, uniform")
    mem: tuple[float, float] = pydantic.Field(default=(1.5, 2.0), description="[low, high] "
                                                  "memory (GB) of a rack, uniform")
    data: tuple[float, float] = pydantic.Field(default=(92, 552), description="[low, high] data "
                                             "size d_i (MB) of a job, uniform")
    load: float = pydantic.Field(default=0.65, gt=0, le=1, description="share of the GPUs the "
                                 "default number of jobs uses")

    @pydantic.field_validator("gpu", "cpu", "mem")
    @classmethod
    def _resources(cls, value: tuple[float, float]) -> tuple[float, float]:
        return _low_high(value, 0)

    @pydantic.field_validator("data")
    @classmethod
    def _data(cls, value: tuple[float, float]) -> tuple[float, float]:
        return _low_high(value, 0, strict=True)


def _default_jobs(racks: int, workers: tuple[int, int], gpu: tuple[float, float],
                  data: tuple[float, float], load: float) -> int:
    """The number of jobs :func:`generate_dcn` draws when ``jobs`` is not given."""
    dmax = data[1]
    e_gpu = max(1.0, 32 * (data[0] + data[1]) / 2 / dmax)
    e_job = (workers[0] + workers[1]) / 2 * e_gpu
    return max(1, round(load * racks * (gpu[0] + gpu[1]) / 2 / e_job))


def generator_size(params: SmallParams) -> Size:
    """What :func:`generate_dcn` allocates and computes: per attempt (at most 200) the racks,
    the jobs and the validation of every worker against every rack (Instance, then the
    first-fit check), about 1 KiB per rack and job."""
    p = DcnParams().model_copy(update=dict(params))
    if isinstance(params, LargeParams) and not isinstance(params, DcnParams):
        p = p.model_copy(update=dict(gpu=(200, 200), data=DcnParams().data))
    R = float(p.racks)
    J = float(p.jobs if p.jobs is not None else
              _default_jobs(p.racks, p.workers, p.gpu, p.data, p.load))
    W = J * p.workers[1]
    memory = 1024.0 * (R + J) + 128.0 * W
    work = 200.0 * (10 * (R + J) + 6 * W * R)
    return Size(memory, work)


GENERATORS: dict[str, Generator] = {
    "small": Generator(generate_small, SmallParams, generator_size,
                       "small scale (section IV-A): 6 racks, 4 ports, [1, 4] workers per job"),
    "large": Generator(generate_large, LargeParams, generator_size,
                       "large scale (section IV-A): 64 racks, 12 ports, [4, 16] workers"),
    "dcn": Generator(generate_dcn, DcnParams, generator_size,
                     "section IV-A's simulation setting, every parameter open"),
}


#: a tiny ``dmlopt.generate`` spec, 2 racks, 2 jobs: solves in about a second with
#: every formulation; tests/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "small", "racks": 2, "jobs": 2}
