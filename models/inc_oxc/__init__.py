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
needs is arbitrary; :func:`decode` gives every worker a_ij * f (the evaluated objective then
equals the solver's f; per-job JCTs of an exact solution are therefore all equal to the longest
one, and ``best_f`` = f at an optimum). It reads the placement, the circuits and f, never the
paper formulation's b variables, and the evaluator checks every link at a_ij * f.

Solver tolerance: with SCIP's default feasibility tolerance (1e-6) the big M of the paper
formulation's eqs. (14)-(15) lets f exceed what the circuits carry by up to 0.06 % (found on
3-rack instances, where SCIP then reports that f as optimal; the evaluator refuses it). The
``paper`` formulation therefore runs SCIP with ``numerics/feastol`` 1e-9 by default (the user's
own ``solver_options`` win). HiGHS overstates f by less (5e-6 relative, a `dcn` instance of 3
racks); :func:`decode` lowers any f above what the decoded placement and circuits allow
(``best_f``) to that value, and ``dmlopt.solve`` grades the lowered f against the solver's
objective and bound as usual (within ``OBJECTIVE_TOL`` and the optimality gap).

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

Examples
--------
Two jobs on two racks scheduled by WCG; the objective is f = 1 / longest JCT (1/s):

>>> import dmlopt
>>> inst = dmlopt.generate("inc_oxc", {"generator": "small", "racks": 2, "jobs": 2}, seed=0)
>>> result = dmlopt.heuristic(inst, "wcg", seed=0)
>>> result.status, round(result.objective, 3), dmlopt.evaluate(inst, result.solution).feasible
('feasible', 3.623, True)
"""

from __future__ import annotations

from dmlopt.models.inc_oxc.constants import MAX_RACKS, NAME, PAPER, SENSE, TITLE, TOL
from dmlopt.models.inc_oxc.evaluation import (
    best_bandwidth,
    best_f,
    circuits,
    circuits_from_ports,
    evaluate,
    flow_coefficients,
    link_loads,
    ports_from_circuits,
    times,
)
from dmlopt.models.inc_oxc.exact import BOUNDS
from dmlopt.models.inc_oxc.formulations import (
    FORMULATIONS,
    build,
    build_paper,
    build_strong,
    decode,
    estimate_size,
    warm_start,
)
from dmlopt.models.inc_oxc.generators import (
    EXAMPLE,
    GENERATORS,
    DcnParams,
    LargeParams,
    SmallParams,
    generate_dcn,
    generate_large,
    generate_small,
    generator_size,
)
from dmlopt.models.inc_oxc.instance import Instance, Job, Rack, Solution, Worker

#: the formulation dmlopt.solve uses when none is named, the fastest proven equal to the
#: paper's (strong: 0.10-0.22 s against paper 0.44-0.82 s on the shipped fig4-r2
#: instances, equal optima in the tests)
DEFAULT_FORMULATION = "strong"
#: the bound to use (docs/inc_oxc.md: it holds for every solution, time-shared OXC included)
RECOMMENDED_BOUND = "jobs-timeshared"

__all__ = [
    'DEFAULT_FORMULATION', 'RECOMMENDED_BOUND', 'NAME', 'TITLE', 'PAPER', 'SENSE', 'TOL',
    'MAX_RACKS', 'Rack',
    'Worker', 'Job', 'Instance', 'Solution', 'circuits_from_ports', 'circuits',
    'ports_from_circuits', 'flow_coefficients', 'link_loads', 'best_f', 'times',
    'best_bandwidth', 'evaluate', 'build_paper', 'build_strong', 'FORMULATIONS', 'build',
    'estimate_size', 'decode', 'warm_start', 'generate_dcn', 'generate_small',
    'generate_large', 'SmallParams', 'LargeParams', 'DcnParams', 'generator_size',
    'GENERATORS', 'EXAMPLE', 'BOUNDS',
]
