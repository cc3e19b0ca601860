"""Reliable RAR-based distributed model training in a computing power network, RAR (paper 003).

Chen et al., "Reliable and efficient RAR-based distributed model training in computing power
network", JOCN 16(5), 2024. A batch of ring-all-reduce (RAR) training requests
R_j(D_j, s_j, t_a, t_d, theta_j, r_j) is scheduled on a network of computing nodes (CUs) and
fiber links (wavelengths) over time slots (TSs). Each deployed request gets a ring through its
source s_j (a simple cycle of 3..6 nodes), N_j computing nodes on that ring (the source among
them), a number of CUs per computing node held for a contiguous window [start, end] inside
[t_a, t_d], and one wavelength on every link of the ring for the same window. A CU serves one
request per TS; a wavelength carries at most rho requests per TS. The ring's reliability
(eq. 3) must reach r_j. Objective (eq. 4): blocking rate + alpha * zeta with the scheme's zeta
and alpha of section 4.C (MinCU, MinW, MinT, MaxR).

Physics: how many slots a node needs (eqs. 1, 2 and 5)
-----------------------------------------------------
Eq. (1) T_com = D lambda / (v N) is the time ONE CU needs for a node's share D/N of the data in
one iteration; eq. (2) T_tran = 2 (N-1) Delta / (N omega) is the ring exchange of one iteration.
A node computing with k identical CUs splits its share over them, so one iteration takes
T_com / k + T_tran seconds (the k CUs stay allocated while the gradients travel: the window is
contiguous and shared by the whole ring). With I(theta) = beta log(1/theta) iterations
(section 6, beta = D_j) the node needs the wall time I (T_com / k + T_tran), i.e.

    duration(N, k) = ceil( I (T_com(N) / k + T_tran(N)) / tau )     slots, tau in seconds,

and it occupies k * duration CU-slots. Eq. (5), sum_{t,c} C_{t,n,c} >= I (T_com O_n +
T_tran ON_n) / tau, is exactly "k * window >= I (T_com + k T_tran) / tau" once every CU is held
for the whole window (ON_n = k): its two addends are CU-seconds (T_com on one CU; T_tran on each
of the ON_n CUs) - this is how we read its mixed units - and tau must be in seconds (the paper
gives it in minutes). Units: D and Delta in GB (Delta * 8 Gbit), lambda in FLOP per GB, v in
TFLOPS, omega in Gbit/s, tau in minutes (x 60). :func:`node_work` returns the two coefficients
(a, b) = (I T_com / tau, I T_tran / tau) and :func:`duration` = ceil(a / k + b); the paper ILP
(eq. 5 uses a and b), the aggregated ILP, RDDA and the evaluator all use these two functions.
Fig. 2 comes out (tests): with 1 CU on each of 3 nodes the request needs 4 slots, with 3 CUs on
each of 4 nodes 1 slot: both 12 CU-slot blocks; the 3-node ring is the more reliable one.

Choices and deviations (each tested)
------------------------------------
* The scheme is an ``Instance`` field (``scheme``: MinCU, MinW, MinT, MaxR), so eq. (4) is
  defined by the instance alone: ``solve`` optimises it and ``evaluate`` scores it (and reports
  the four schemes' objectives as metrics); RDDA follows it unless its ``scheme`` option asks
  for another ordering.
* Log base. I(theta) = beta log(1/theta) does not name the base; we use log10 (``log_base``):
  with it the 6-node network serves 12 requests without blocking and the 38-node network
  approaches CU saturation at 500 requests, as section 6 reports; the natural log would block
  on the small network.
* Reliability (eq. 3) is a property of the ring (all nodes and links it passes), as eq. (12)'s
  gamma_k and Algorithm 1 line 4 use it; in Fig. 2 every ring node computes, so the two readings
  of "participating nodes" agree there.
* Held CUs. The paper's per-CU binaries let a CU work only part of the node's window; Fig. 2 and
  section 6 ("the number of CUs provided to the request by nodes in each TS is the same") hold
  every CU for the whole window, which we require (paper formulation: C_{t,n,c} >= O_{n,c} +
  O_{n,t} - 1). A solution gives the CU ids per computing node; nodes may use different counts
  (ON_n is per node in the paper), although equal counts are without loss of generality.
* One wavelength per request on every link of its ring (Fig. 2, the issue). Eq. (25) taken
  literally (all b1, b2) forces every wavelength on or off; with b1 = b2 it only ties the links
  around pass-through nodes. We enforce O_{l1,b} = O_{l2,b} for consecutive ring links l1, l2
  when the ring is selected, plus sum_b O_{l,b}^j <= 1.
* Computing nodes lie on the selected ring: (21)-(24) do not forbid O_n^j = 1 off the ring (nor
  a source off the ring); we add O_n^j = sum_k y_{k,n}^j.
* Eq. (30) reads "if O_n^j = 1" for all t, which would force the whole horizon; we use
  "if O_{n,t}^j = 1" as in (31). A blocked request's end slot is 0 (Te_{s_j} <= |T| eta_j), so
  MinT's zeta_3 sums deployed requests only, as eq. (42) does with eta_j.
* chi is replaced by the smallest valid constant of each big-M constraint (same feasible set,
  better numerics); rings through the source only are offered to a request (P_j), and rings
  below its reliability are fixed to 0 (what (12)-(13) imply, without tolerance issues).
* Eq. (4) as written is not lexicographic: with alpha_1 = 1 / sum |C_n| blocking a request
  may pay when it would activate more than sum|C_n| / |R| new CUs (MinT ties a request ending at
  its deadline with blocking it). We keep eq. (4) and its alphas; ``alpha`` overrides alpha
  (a small value makes it lexicographic).
* N_j: each request lists its allowed computing-node counts ``node_counts``. The ILP
  simplification of section 6 is one value in {3, 4} (generator ``cpn6``); RDDA's flexible
  count is several values (generator ``cpn38``: 3..6). Both formulations accept either.
* Slots are numbered 1..|T| as in the paper (t_a in [1, 3], t_d in [10, 12] for |T| = 12).

Exact formulations
------------------
``"paper"``: eqs. (4)-(41) with per-CU and per-wavelength binaries over time and the fixes
above. ``"aggregated"``: identical CUs make per-CU binaries symmetric; per request a mode
(N, k, duration) and a start, per node a binary "computes in this mode and start", integer CU
usage per node and slot, activated CUs as the peak usage (an interval multicolouring needs
exactly the peak number of CUs; :func:`assign_cu_ids` builds it), one wavelength per request
with usage linearised per link and slot, wavelength symmetry broken when all links have the
same count. It only offers k = the fewest CUs for each duration and windows of exactly that
duration, which loses no optimum (fewer CUs and a shorter window never worsen eq. 4).
``"config"`` (:mod:`dmlopt.models.rar.config`): one binary per request and configuration (ring,
node set, CUs, start) over the same modes; exact, but its LP bound equals the aggregated one on
the MinCU instances measured (README), so ``"aggregated"`` stays the best measured. Tests prove
the three formulations and a brute force equal on random instances.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pydantic

from dmlopt.contract import Formulation, Generator, Options, Size
from dmlopt.evaluation import Evaluation
from dmlopt.models.rar import config as _rar_config
from dmlopt.validation import Frozen, rule

NAME = "rar"
TITLE = "Reliable RAR-based DMT scheduling in a computing power network"
PAPER = "003 (Chen et al.)"
SENSE = "min"

SCHEMES = ("MinCU", "MinW", "MinT", "MaxR")
EPS = 1e-9

#: largest ``ring_cap``: 100,000 rings take about 2 s and 100 MB to enumerate (a complete graph
#: of 20 nodes reaches it); the candidate rings P of every model are these
MAX_RING_CAP = 100_000
#: most DFS steps of the ring enumeration (a sparse network with long paths but few cycles
#: would otherwise be searched for hours): 2e6 steps take about 2 s; cpn38 with rings of up to
#: 12 nodes takes 16,007
MAX_RING_STEPS = 2_000_000


# --------------------------------------------------------------------------------------------
# instance


class Node(Frozen):
    """A computing node: ``cus`` identical CUs, failure probability e_n."""

    cus: int = pydantic.Field(ge=1, le=100_000, description="number of CUs |C_n|")
    failure: float = pydantic.Field(default=1e-6, ge=0, lt=1, description="e_n")


class Link(Frozen):
    """An undirected fiber link between nodes ``u`` and ``v``."""

    u: int = pydantic.Field(ge=0)
    v: int = pydantic.Field(ge=0)
    length_km: float = pydantic.Field(gt=0, allow_inf_nan=False, description="zeta_l")
    wavelengths: int = pydantic.Field(ge=1, le=10_000, description="|W_l|")
    failure_per_km: float = pydantic.Field(default=1e-5, ge=0, description="e_l per km")


class Request(Frozen):
    """A RAR training request R_j(D_j, s_j, t_a, t_d, theta_j, r_j) and its allowed N_j."""

    data_gb: float = pydantic.Field(gt=0, allow_inf_nan=False, description="D_j (GB)")
    source: int = pydantic.Field(ge=0, description="s_j")
    arrival: int = pydantic.Field(ge=1, description="t_a (slot, 1-based)")
    deadline: int = pydantic.Field(ge=1, description="t_d (slot, 1-based, inclusive)")
    theta: float = pydantic.Field(gt=0, lt=1, description="gradient change threshold")
    reliability: float = pydantic.Field(gt=0, le=1, description="r_j")
    node_counts: list[int] = pydantic.Field(min_length=1, description="allowed N_j")
    beta: float | None = pydantic.Field(default=None, gt=0, description="beta (default D_j)")


class Instance(Frozen):
    """A RAR instance (section 3, Table 1). Nodes 0..n-1, slots 1..slots."""

    problem: Literal["rar"] = "rar"
    name: str = ""
    scheme: Literal["MinCU", "MinW", "MinT", "MaxR"] = "MinCU"
    nodes: list[Node] = pydantic.Field(min_length=3)
    links: list[Link] = pydantic.Field(min_length=3)
    slots: int = pydantic.Field(ge=1, le=10_000, description="|T|")
    slot_minutes: float = pydantic.Field(default=30.0, gt=0, allow_inf_nan=False,
                                         description="tau (minutes)")
    cu_tflops: float = pydantic.Field(gt=0, allow_inf_nan=False, description="v (TFLOPS)")
    flop_per_gb: float = pydantic.Field(default=1e15, gt=0, allow_inf_nan=False,
                                        description="lambda (FLOP per GB of data)")
    rate_gbps: float = pydantic.Field(default=10.0, gt=0, allow_inf_nan=False,
                                      description="omega (Gbit/s)")
    gradient_gb: float = pydantic.Field(default=1.0, ge=0, allow_inf_nan=False,
                                        description="Delta (GB)")
    rho: int = pydantic.Field(default=3, ge=1, description="requests per wavelength and slot")
    log_base: float = pydantic.Field(default=10.0, gt=1, allow_inf_nan=False)
    ring_min_nodes: int = pydantic.Field(default=3, ge=3)
    ring_max_nodes: int = pydantic.Field(default=6, ge=3, le=12)
    ring_cap: int = pydantic.Field(default=20_000, ge=1, le=MAX_RING_CAP,
                                   description="most rings enumerated before refusing (at "
                                   f"most {MAX_RING_CAP:,}: rings are held in memory and every "
                                   "model and RDDA scan them per request)")
    alpha: float | None = pydantic.Field(default=None, ge=0, allow_inf_nan=False,
                                         description="override of section 4.C's alpha")
    requests: list[Request] = pydantic.Field(min_length=1)

    @pydantic.model_validator(mode="after")
    def _rules(self) -> Instance:
        n = len(self.nodes)
        if self.ring_max_nodes < self.ring_min_nodes:
            raise rule("ring_max_nodes", self.ring_max_nodes,
                       f"is below ring_min_nodes = {self.ring_min_nodes}")
        seen: dict[tuple[int, int], int] = {}
        for i, link in enumerate(self.links):
            for end in ("u", "v"):
                x = getattr(link, end)
                if x >= n:
                    raise rule(f"links[{i}].{end}", x, f"is not a node 0..{n - 1}")
            if link.u == link.v:
                raise rule(f"links[{i}]", (link.u, link.v), "is a self loop")
            key = (min(link.u, link.v), max(link.u, link.v))
            if key in seen:
                raise rule(f"links[{i}]", key, f"duplicates links[{seen[key]}] "
                           "(links are undirected)")
            seen[key] = i
            if link.failure_per_km * link.length_km >= 1:
                raise rule(f"links[{i}].failure_per_km", link.failure_per_km,
                           f"times length_km = {link.length_km} must be below 1 (eq. 3)")
        for j, r in enumerate(self.requests):
            if r.source >= n:
                raise rule(f"requests[{j}].source", r.source, f"is not a node 0..{n - 1}")
            if r.arrival > self.slots:
                raise rule(f"requests[{j}].arrival", r.arrival,
                           f"is after the horizon (slots = {self.slots})")
            if r.deadline > self.slots:
                raise rule(f"requests[{j}].deadline", r.deadline,
                           f"is after the horizon (slots = {self.slots})")
            if r.deadline < r.arrival:
                raise rule(f"requests[{j}].deadline", r.deadline,
                           f"is before the arrival {r.arrival}")
            if len(set(r.node_counts)) != len(r.node_counts):
                raise rule(f"requests[{j}].node_counts", r.node_counts, "has duplicates")
            for c in r.node_counts:
                if not 1 <= c <= self.ring_max_nodes:
                    raise rule(f"requests[{j}].node_counts", r.node_counts,
                               f"must lie in 1..ring_max_nodes = {self.ring_max_nodes}")
        rings = self.rings  # enumerates with the cap (raises on overflow)
        on_ring = set()
        for ring in rings:
            on_ring.update(ring.nodes)
        for j, r in enumerate(self.requests):
            if r.source not in on_ring:
                raise rule(f"requests[{j}].source", r.source,
                           f"lies on no simple cycle of {self.ring_min_nodes}.."
                           f"{self.ring_max_nodes} nodes (no ring can serve it)")
        return self

    # -- derived data -------------------------------------------------------------------------

    @cached_property
    def adjacency(self) -> dict[tuple[int, int], int]:
        """(u, v) and (v, u) -> link index."""
        out = {}
        for i, link in enumerate(self.links):
            out[(link.u, link.v)] = i
            out[(link.v, link.u)] = i
        return out

    @cached_property
    def rings(self) -> list[Ring]:
        """Every simple cycle with ring_min_nodes..ring_max_nodes nodes (candidate rings P)."""
        return enumerate_rings(self)

    @cached_property
    def rings_through(self) -> list[list[int]]:
        """Per node, the indices of the rings through it."""
        out: list[list[int]] = [[] for _ in self.nodes]
        for k, ring in enumerate(self.rings):
            for v in ring.nodes:
                out[v].append(k)
        return out

    @property
    def total_cus(self) -> int:
        return sum(nd.cus for nd in self.nodes)

    @property
    def total_wavelengths(self) -> int:
        return sum(lk.wavelengths for lk in self.links)

    def alpha_of(self, scheme: str | None = None) -> float:
        """Section 4.C's alpha of ``scheme`` (the instance's by default), or the override."""
        scheme = scheme or self.scheme
        if self.alpha is not None and scheme == self.scheme:
            return self.alpha
        return {"MinCU": 1.0 / self.total_cus, "MinW": 1.0 / self.total_wavelengths,
                "MinT": 1.0 / len(self.requests), "MaxR": 100.0 / len(self.requests)}[scheme]

    def candidate_rings(self, j: int) -> list[int]:
        """Rings through s_j reaching r_j (eq. 13) with room for the fewest allowed nodes."""
        r = self.requests[j]
        need = min(r.node_counts)
        return [k for k in self.rings_through[r.source]
                if self.rings[k].reliability >= r.reliability and self.rings[k].size >= need]


class Ring(Frozen):
    """A candidate ring: its nodes in cyclic order, its links, and its reliability (eq. 3)."""

    nodes: tuple[int, ...]
    links: tuple[int, ...]
    reliability: float

    @property
    def size(self) -> int:
        return len(self.nodes)


def ring_reliability(instance: Instance, nodes: tuple[int, ...] | list[int],
                     links: tuple[int, ...] | list[int]) -> float:
    """Eq. (3): gamma = prod_n (1 - e_n) * prod_l (1 - e_l zeta_l)."""
    g = 1.0
    for v in nodes:
        g *= 1.0 - instance.nodes[v].failure
    for i in links:
        lk = instance.links[i]
        g *= 1.0 - lk.failure_per_km * lk.length_km
    return g


def ring_links(instance: Instance, nodes: tuple[int, ...] | list[int]) -> tuple[int, ...] | None:
    """Links of the closed walk through ``nodes`` (None if two consecutive are not adjacent)."""
    out = []
    for a, b in zip(nodes, (*nodes[1:], nodes[0]), strict=True):
        i = instance.adjacency.get((a, b))
        if i is None:
            return None
        out.append(i)
    return tuple(out)


def enumerate_rings(instance: Instance) -> list[Ring]:
    """Simple cycles with ring_min_nodes..ring_max_nodes nodes, each once.

    A cycle is found from its smallest node, through larger nodes only, and kept in the
    direction whose second node is smaller than its last. Raises ``ValueError`` (an instance
    error) naming ``ring_cap`` when there are more cycles than the cap.
    """
    n = len(instance.nodes)
    nbrs: list[list[int]] = [[] for _ in range(n)]
    for lk in instance.links:
        nbrs[lk.u].append(lk.v)
        nbrs[lk.v].append(lk.u)
    for lst in nbrs:
        lst.sort()
    lo, hi, cap = instance.ring_min_nodes, instance.ring_max_nodes, instance.ring_cap
    found: list[tuple[int, ...]] = []
    steps = [0]
    for start in range(n):
        path = [start]
        on_path = {start}

        def dfs(v: int, start: int = start, path: list[int] = path,
                on_path: set[int] = on_path) -> None:
            steps[0] += len(nbrs[v])
            if steps[0] > MAX_RING_STEPS:
                raise rule("ring_max_nodes", hi,
                           f"makes the ring search explore more than {MAX_RING_STEPS:,} paths "
                           "of this network; lower ring_max_nodes")
            for w in nbrs[v]:
                if w == start and len(path) >= lo and path[1] < path[-1]:
                    found.append(tuple(path))
                    if len(found) > cap:
                        raise rule("ring_cap", cap,
                                   f"is exceeded: more than {cap} simple cycles of {lo}..{hi} "
                                   "nodes; raise ring_cap or lower ring_max_nodes")
                elif w > start and w not in on_path and len(path) < hi:
                    path.append(w)
                    on_path.add(w)
                    dfs(w)
                    path.pop()
                    on_path.discard(w)

        dfs(start)
    out = []
    for cyc in found:
        links = ring_links(instance, cyc)
        assert links is not None
        out.append(Ring(nodes=cyc, links=links,
                        reliability=ring_reliability(instance, cyc, links)))
    return out


# --------------------------------------------------------------------------------------------
# physics: eqs. (1), (2), (5) and I(theta) of section 6


def iterations(instance: Instance, j: int) -> float:
    """I(theta_j) = beta log(1/theta_j), beta = D_j unless given (section 6)."""
    r = instance.requests[j]
    beta = r.data_gb if r.beta is None else r.beta
    return beta * math.log(1.0 / r.theta) / math.log(instance.log_base)


def node_work(instance: Instance, j: int, n_nodes: int) -> tuple[float, float]:
    """(a, b): a computing node with k CUs needs a + b k CU-slots (eq. 5), a / k + b slots.

    a = I T_com / tau with T_com = D lambda / (v N) (eq. 1), b = I T_tran / tau with
    T_tran = 2 (N - 1) Delta / (N omega) (eq. 2), tau in seconds.
    """
    r = instance.requests[j]
    it = iterations(instance, j)
    tau = instance.slot_minutes * 60.0
    t_com = r.data_gb * instance.flop_per_gb / (instance.cu_tflops * 1e12 * n_nodes)
    t_tran = 2.0 * (n_nodes - 1) * instance.gradient_gb * 8.0 / (n_nodes * instance.rate_gbps)
    return it * t_com / tau, it * t_tran / tau


def duration(instance: Instance, j: int, n_nodes: int, k: Any) -> Any:
    """Slots a computing node with ``k`` CUs needs: ceil(a / k + b) (module docstring).

    ``k`` may be an int (returns an int) or an integer numpy array (returns an array).
    """
    a, b = node_work(instance, j, n_nodes)
    d = np.maximum(1, np.ceil(a / np.asarray(k, dtype=float) + b - EPS)).astype(np.int64)
    return int(d) if d.ndim == 0 else d


def fewest_cus_table(instance: Instance, j: int, n_nodes: int, max_slots: int,
                     k_max: int) -> np.ndarray:
    """For d = 0..max_slots the fewest CUs k <= k_max with duration(k) <= d (k_max + 1: none).

    The closed form ceil(a / (d - b)) is corrected by :func:`duration` itself (non-increasing
    in k), so the table agrees with it exactly.
    """
    a, b = node_work(instance, j, n_nodes)
    d = np.arange(max_slots + 1)
    room = d - b
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(room > EPS, np.ceil(a / np.where(room > EPS, room, 1.0) - 1e-6), k_max + 1)
    k = np.clip(k, 1, k_max + 1).astype(np.int64)
    for _ in range(3):  # fix rounding at the boundary: duration(k) <= d < duration(k - 1)
        up = (k <= k_max) & (duration(instance, j, n_nodes, np.minimum(k, k_max)) > d)
        down = (k > 1) & (duration(instance, j, n_nodes, np.maximum(k - 1, 1)) <= d)
        k = np.where(up, k + 1, np.where(down & ~up, k - 1, k))
    return np.minimum(k, k_max + 1)


def fewest_cus(instance: Instance, j: int, n_nodes: int, slots: int, k_max: int) -> int | None:
    """The fewest CUs (<= k_max) with duration <= ``slots``, or None."""
    k = int(fewest_cus_table(instance, j, n_nodes, slots, k_max)[slots])
    return k if k <= k_max else None


def modes(instance: Instance, j: int, k_max: int) -> list[tuple[int, int, int]]:
    """(N, k, d): per allowed N and window length d the fewest CUs k (distinct d only)."""
    r = instance.requests[j]
    window = r.deadline - r.arrival + 1
    out = []
    for nn in sorted(r.node_counts):
        table = fewest_cus_table(instance, j, nn, window, k_max)
        for k in sorted({int(x) for x in table if x <= k_max}):
            out.append((nn, k, duration(instance, j, nn, k)))
    return sorted(set(out))


# --------------------------------------------------------------------------------------------
# solution and evaluator


class Assignment(Frozen):
    """A deployed request: ring, computing nodes, CU ids per node, wavelength, window."""

    ring: list[int] = pydantic.Field(min_length=3, description="ring nodes in cyclic order")
    nodes: list[int] = pydantic.Field(min_length=1, description="computing nodes")
    cus: list[list[int]] = pydantic.Field(description="CU ids used on each computing node")
    wavelength: int = pydantic.Field(ge=0, description="wavelength on every ring link")
    start: int = pydantic.Field(ge=1, description="first slot (1-based)")
    end: int = pydantic.Field(ge=1, description="last slot (inclusive)")


class Solution(Frozen):
    """One entry per request: an :class:`Assignment`, or None if the request is blocked."""

    problem: Literal["rar"] = "rar"
    requests: list[Assignment | None]


def _check_assignment(instance: Instance, j: int, a: Assignment) -> list[str]:
    """Structural rules of one deployed request (section 4.D), empty if it is fine."""
    r = instance.requests[j]
    p = f"requests[{j}]"
    out = []
    n = len(instance.nodes)
    ring = a.ring
    if any(not 0 <= v < n for v in ring):
        return [f"{p}.ring: {ring} names a node outside 0..{n - 1}"]
    if len(set(ring)) != len(ring):
        return [f"{p}.ring: {ring} repeats a node (not a simple cycle)"]
    if not instance.ring_min_nodes <= len(ring) <= instance.ring_max_nodes:
        out.append(f"{p}.ring: {len(ring)} nodes, outside {instance.ring_min_nodes}.."
                   f"{instance.ring_max_nodes}")
    links = ring_links(instance, ring)
    if links is None:
        return out + [f"{p}.ring: {ring} is not a cycle of the network"]
    if r.source not in ring:
        out.append(f"{p}.ring: {ring} does not pass the source {r.source} (eq. 17)")
    if len(set(a.nodes)) != len(a.nodes) or any(v not in ring for v in a.nodes):
        # the per-node rules below index the network by these nodes: stop here
        return out + [f"{p}.nodes: {a.nodes} must be distinct nodes of the ring (eqs. 21-24)"]
    if r.source not in a.nodes:
        out.append(f"{p}.nodes: {a.nodes} lack the source {r.source} (eq. 17)")
    if len(a.nodes) not in r.node_counts:
        out.append(f"{p}.nodes: {len(a.nodes)} computing nodes, allowed {r.node_counts} "
                   "(eqs. 11, 24)")
    if len(a.cus) != len(a.nodes):
        return out + [f"{p}.cus: {len(a.cus)} lists for {len(a.nodes)} computing nodes"]
    if not (r.arrival <= a.start <= a.end <= r.deadline):
        out.append(f"{p}: window [{a.start}, {a.end}] is not inside [t_a, t_d] = "
                   f"[{r.arrival}, {r.deadline}] (eqs. 36-38)")
    gamma = ring_reliability(instance, ring, links)
    if gamma < r.reliability:
        out.append(f"{p}.ring: reliability {gamma:.6f} below r_j = {r.reliability} (eq. 13)")
    for i in links:
        if a.wavelength >= instance.links[i].wavelengths:
            out.append(f"{p}.wavelength: {a.wavelength} does not exist on link {i} "
                       f"({instance.links[i].wavelengths} wavelengths)")
    span = a.end - a.start + 1
    for v, ids in zip(a.nodes, a.cus, strict=True):
        if not ids:
            out.append(f"{p}.cus: node {v} computes with no CU (eq. 16)")
            continue
        if len(set(ids)) != len(ids) or any(not 0 <= c < instance.nodes[v].cus for c in ids):
            out.append(f"{p}.cus: {ids} on node {v} must be distinct ids in "
                       f"0..{instance.nodes[v].cus - 1}")
            continue
        need = duration(instance, j, len(a.nodes), len(ids))
        if span < need:
            out.append(f"{p}: {len(ids)} CUs on node {v} need {need} slots, the window has "
                       f"{span} (eq. 5)")
    return out


def _overloaded(windows: list[tuple[int, int]], limit: int, first: int
                ) -> list[tuple[int, int]]:
    """The first ``first`` slots (ascending) covered by more than ``limit`` of the inclusive
    ``windows`` [start, end], with their counts (a sweep over the window ends)."""
    events: dict[int, int] = {}
    for s_, e_ in windows:
        events[s_] = events.get(s_, 0) + 1
        events[e_ + 1] = events.get(e_ + 1, 0) - 1
    out: list[tuple[int, int]] = []
    times = sorted(events)
    count = 0
    for t0, t1 in zip(times, times[1:], strict=False):
        count += events[t0]
        if count > limit:
            out += [(t, count) for t in range(t0, min(t1, t0 + first - len(out)))]
            if len(out) >= first:
                break
    return out


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    """Feasibility (every constraint family of section 4.D), eq. (4) and the paper's metrics.

    Metrics: blocking rate, activated CU ratio, activated wavelength ratio, AOT ratio (eq. 42),
    average reliability and reliability gain (r_ring - r_j) / r_j over deployed requests,
    ``deployed``, ``activated_cus``, ``activated_wavelengths`` and ``objective_<scheme>`` for
    the four schemes of section 4.C.
    """
    nr = len(instance.requests)
    if len(solution.requests) != nr:
        return Evaluation(math.inf, False, (f"requests: {len(solution.requests)} entries, the "
                                            f"instance has {nr}",))
    violations: list[str] = []
    # busy windows per (node, CU id) and per (link, wavelength): what the solution lists, not
    # (CUs x slots) arrays, so the cost follows the file and not the instance's counts
    cu_use: dict[tuple[int, int], list[tuple[int, int]]] = {}
    wl_use: dict[tuple[int, int], list[tuple[int, int]]] = {}
    deployed = 0
    te_ratio = 0.0
    aot = 0.0
    rel_sum = 0.0
    gain_sum = 0.0
    one_minus_gamma = 0.0
    for j, a in enumerate(solution.requests):
        r = instance.requests[j]
        if a is None:
            one_minus_gamma += 1.0  # Gamma_j = 0 for a blocked request (eq. 12)
            continue
        bad = _check_assignment(instance, j, a)
        if bad:
            violations.extend(bad)
            continue
        deployed += 1
        links = ring_links(instance, a.ring)
        assert links is not None
        gamma = ring_reliability(instance, a.ring, links)
        rel_sum += gamma
        gain_sum += (gamma - r.reliability) / r.reliability
        one_minus_gamma += 1.0 - gamma
        te_ratio += a.end / r.deadline
        aot += (r.deadline - a.end) / r.deadline
        for v, ids in zip(a.nodes, a.cus, strict=True):
            for c in ids:
                cu_use.setdefault((v, c), []).append((a.start, a.end))
        for i in links:
            wl_use.setdefault((i, a.wavelength), []).append((a.start, a.end))
    shown: dict[int, int] = {}
    for (v, c), windows in sorted(cu_use.items()):
        left = 5 - shown.get(v, 0)  # the first 5 (CU, slot) cells per node
        for t, k in _overloaded(windows, 1, left) if left > 0 else []:
            violations.append(f"node {v} CU {c} serves {k} requests in slot {t} (eq. 8)")
            shown[v] = shown.get(v, 0) + 1
    for (i, b), windows in sorted(wl_use.items()):
        for t, k in _overloaded(windows, instance.rho, 1):
            violations.append(f"link {i} wavelength {b} carries {k} requests "
                              f"in slot {t}, above rho = {instance.rho} (eq. 9)")
    act_cus = len(cu_use)
    act_wl = len(wl_use)
    blocking = 1.0 - deployed / nr
    zeta = {"MinCU": float(act_cus), "MinW": float(act_wl), "MinT": te_ratio,
            "MaxR": one_minus_gamma}
    objectives = {s: blocking + instance.alpha_of(s) * zeta[s] for s in SCHEMES}
    metrics = {
        "blocking_rate": blocking,
        "deployed": float(deployed),
        "activated_cus": float(act_cus),
        "activated_cu_ratio": act_cus / instance.total_cus,
        "activated_wavelengths": float(act_wl),
        "activated_wavelength_ratio": act_wl / instance.total_wavelengths,
        "aot_ratio": aot / nr,
        "avg_reliability": rel_sum / deployed if deployed else 0.0,
        "reliability_gain": gain_sum / deployed if deployed else 0.0,
    }
    metrics.update({f"objective_{s}": v for s, v in objectives.items()})
    feasible = not violations
    return Evaluation(objectives[instance.scheme] if feasible else math.inf, feasible,
                      tuple(violations), metrics)


Plan = tuple[list[int], list[int], int, int]


def assign_cu_ids(instance: Instance, plans: list[Plan | None]) -> list[list[list[int]]]:
    """CU ids for count-based plans: per request (nodes, counts, start, end) or None.

    Per node, requests in order of start take the lowest free ids (interval multicolouring:
    the number of distinct ids equals the peak usage). Raises ``ValueError`` if a node's peak
    exceeds its CUs.
    """
    out: list[list[list[int]]] = [[] for _ in plans]
    per_node: dict[int, list[tuple[int, int, int, int]]] = {}
    for j, plan in enumerate(plans):
        if plan is None:
            continue
        nodes, counts, s, e = plan
        out[j] = [[] for _ in nodes]
        for pos, (v, k) in enumerate(zip(nodes, counts, strict=True)):
            per_node.setdefault(v, []).append((s, e, j, pos, k))  # type: ignore[arg-type]
    for v, items in per_node.items():
        free_at = np.zeros(instance.nodes[v].cus, dtype=np.int64)  # first free slot per CU
        for s, e, j, pos, k in sorted(items):  # type: ignore[misc]
            ids = np.flatnonzero(free_at <= s)[:k]
            if ids.size < k:
                raise ValueError(f"node {v}: more than {instance.nodes[v].cus} CUs in use")
            free_at[ids] = e + 1
            out[j][pos] = [int(c) for c in ids]
    return out


# --------------------------------------------------------------------------------------------
# exact formulations


def _ring_sets(instance: Instance) -> dict[int, list[int]]:
    """Request -> rings offered (through s_j with room for the fewest nodes; P_j)."""
    out = {}
    for j, r in enumerate(instance.requests):
        need = min(r.node_counts)
        out[j] = [k for k in instance.rings_through[r.source] if instance.rings[k].size >= need]
    return out


def _objective_expr(instance: Instance, eta, zeta):
    """Eq. (4): (1 - sum eta / |R|) + alpha zeta."""
    nr = len(instance.requests)
    return (1 - sum(eta[j] for j in range(nr)) / nr) + instance.alpha_of() * zeta


def build_paper(instance: Instance) -> Any:
    """Eqs. (4)-(41) with per-CU and per-wavelength binaries over time (module docstring)."""
    import pyomo.environ as pyo

    inst = instance
    nr, T = len(inst.requests), inst.slots
    J = range(nr)
    TT = range(1, T + 1)
    Nn = range(len(inst.nodes))
    Ll = range(len(inst.links))
    P = _ring_sets(inst)
    m = pyo.ConcreteModel(name=f"rar_paper_{inst.name}")
    JNC = [(j, n, c) for j in J for n in Nn for c in range(inst.nodes[n].cus)]
    JLB = [(j, l, b) for j in J for l in Ll for b in range(inst.links[l].wavelengths)]
    NC = [(n, c) for n in Nn for c in range(inst.nodes[n].cus)]
    LB = [(l, b) for l in Ll for b in range(inst.links[l].wavelengths)]
    JK = [(j, k) for j in J for k in P[j]]
    JKN = [(j, k, n) for j, k in JK for n in inst.rings[k].nodes]
    JM = [(j, nn) for j in J for nn in inst.requests[j].node_counts]
    m.eta = pyo.Var(J, domain=pyo.Binary)
    m.C = pyo.Var([(j, t, n, c) for j, n, c in JNC for t in TT], domain=pyo.Binary)
    m.f = pyo.Var([(j, t, l, b) for j, l, b in JLB for t in TT], domain=pyo.Binary)
    m.S = pyo.Var(JK, domain=pyo.Binary)
    m.On = pyo.Var(J, Nn, domain=pyo.Binary)  # O_n^j
    m.Oc = pyo.Var(NC, domain=pyo.Binary)  # O_{n,c}
    m.Ow = pyo.Var(LB, domain=pyo.Binary)  # O_{l,b}
    m.Ojc = pyo.Var(JNC, domain=pyo.Binary)  # O_{n,c}^j
    m.Ojw = pyo.Var(JLB, domain=pyo.Binary)  # O_{l,b}^j
    m.Ont = pyo.Var(J, Nn, TT, domain=pyo.Binary)  # O_{n,t}^j
    m.Olt = pyo.Var(J, Ll, TT, domain=pyo.Binary)  # O_{l,t}^j
    m.y = pyo.Var(JKN, domain=pyo.Binary)  # y_{k,n}^j (eq. 21: only n in k)
    m.Gamma = pyo.Var(J, bounds=(0, 1))
    m.ON = pyo.Var(J, Nn, domain=pyo.NonNegativeIntegers,
                   bounds=lambda m, j, n: (0, inst.nodes[n].cus))
    m.Tsn = pyo.Var(J, Nn, domain=pyo.NonNegativeIntegers, bounds=(0, T))
    m.Ten = pyo.Var(J, Nn, domain=pyo.NonNegativeIntegers, bounds=(0, T))
    m.Tsl = pyo.Var(J, Ll, domain=pyo.NonNegativeIntegers, bounds=(0, T))
    m.Tel = pyo.Var(J, Ll, domain=pyo.NonNegativeIntegers, bounds=(0, T))
    multi = {j: len(inst.requests[j].node_counts) > 1 for j in J}
    m.mode = pyo.Var(JM, domain=pyo.Binary)  # N_j choice (one value: equals eta_j)

    def n_expr(j):  # N_j eta_j, or sum_N N mode_{j,N}
        return sum(nn * m.mode[j, nn] for nn in inst.requests[j].node_counts)

    m.mode_sum = pyo.Constraint(J, rule=lambda m, j: sum(
        m.mode[j, nn] for nn in inst.requests[j].node_counts) == m.eta[j])

    # (4) objective, zeta and alpha of section 4.C
    if inst.scheme == "MinCU":
        zeta = sum(m.Oc[n, c] for n, c in NC)
    elif inst.scheme == "MinW":
        zeta = sum(m.Ow[l, b] for l, b in LB)
    elif inst.scheme == "MinT":
        zeta = sum(m.Ten[j, inst.requests[j].source] / inst.requests[j].deadline for j in J)
    else:
        zeta = sum(1 - m.Gamma[j] for j in J)
    m.obj = pyo.Objective(expr=_objective_expr(inst, m.eta, zeta), sense=pyo.minimize)

    # (5) CU-slots per node (module docstring); one row per allowed N
    m.c5 = pyo.ConstraintList()
    for j in J:
        for n in Nn:
            used = sum(m.C[j, t, n, c] for t in TT for c in range(inst.nodes[n].cus))
            for nn in inst.requests[j].node_counts:
                a, b = node_work(inst, j, nn)
                if multi[j]:
                    big = a + b * inst.nodes[n].cus
                    m.c5.add(used >= a * m.On[j, n] + b * m.ON[j, n]
                             - big * (1 - m.mode[j, nn]))
                else:
                    m.c5.add(used >= a * m.On[j, n] + b * m.ON[j, n])
    # (6) wavelength resources on the selected ring
    m.c6 = pyo.Constraint(JK, rule=lambda m, j, k: sum(
        m.Ojw[j, l, b] for l in Ll for b in range(inst.links[l].wavelengths))
        >= m.S[j, k] * inst.rings[k].size)
    # (7) one ring per deployed request
    m.c7 = pyo.Constraint(J, rule=lambda m, j: sum(m.S[j, k] for k in P[j]) == m.eta[j])
    # (8) a CU serves one request per slot
    m.c8 = pyo.Constraint(NC, TT, rule=lambda m, n, c, t: sum(m.C[j, t, n, c] for j in J) <= 1)
    # (9) a wavelength carries at most rho requests per slot
    m.c9 = pyo.Constraint(LB, TT, rule=lambda m, l, b, t: sum(
        m.f[j, t, l, b] for j in J) <= inst.rho)
    # (10) one wavelength per request, link and slot
    m.c10 = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: sum(
        m.f[j, t, l, b] for b in range(inst.links[l].wavelengths)) <= 1)
    # (11) ring size >= N_j
    m.c11 = pyo.Constraint(J, rule=lambda m, j: sum(
        m.S[j, k] * inst.rings[k].size for k in P[j]) >= n_expr(j))
    # (12)-(13) reliability; rings below r_j fixed to 0 (implied by 12-13)
    m.c12 = pyo.Constraint(J, rule=lambda m, j: m.Gamma[j] == sum(
        m.S[j, k] * inst.rings[k].reliability for k in P[j]))
    m.c13 = pyo.Constraint(J, rule=lambda m, j: m.Gamma[j] >= m.eta[j]
                           * inst.requests[j].reliability)
    for j, k in JK:
        if inst.rings[k].reliability < inst.requests[j].reliability:
            m.S[j, k].fix(0)
    # (14) O_{n,c}^j
    m.c14a = pyo.Constraint(JNC, rule=lambda m, j, n, c: m.Ojc[j, n, c] <= sum(
        m.C[j, t, n, c] for t in TT))
    m.c14b = pyo.Constraint(JNC, rule=lambda m, j, n, c: sum(
        m.C[j, t, n, c] for t in TT) <= T * m.Ojc[j, n, c])
    # (15) ON_n^j
    m.c15 = pyo.Constraint(J, Nn, rule=lambda m, j, n: m.ON[j, n] == sum(
        m.Ojc[j, n, c] for c in range(inst.nodes[n].cus)))
    # (16) O_n^j
    m.c16a = pyo.Constraint(J, Nn, rule=lambda m, j, n: m.On[j, n] <= m.ON[j, n])
    m.c16b = pyo.Constraint(J, Nn, rule=lambda m, j, n: m.ON[j, n]
                            <= inst.nodes[n].cus * m.On[j, n])
    # (17) the source computes
    m.c17 = pyo.Constraint(J, rule=lambda m, j: m.On[j, inst.requests[j].source] == m.eta[j])
    # (18) O_{l,b}^j
    m.c18a = pyo.Constraint(JLB, rule=lambda m, j, l, b: m.Ojw[j, l, b] <= sum(
        m.f[j, t, l, b] for t in TT))
    m.c18b = pyo.Constraint(JLB, rule=lambda m, j, l, b: sum(
        m.f[j, t, l, b] for t in TT) <= T * m.Ojw[j, l, b])
    # (19) no wavelength off the selected ring; (20) one on each ring link
    m.c19 = pyo.ConstraintList()
    m.c20 = pyo.ConstraintList()
    for j, k in JK:
        on = set(inst.rings[k].links)
        for l in Ll:
            w = sum(m.Ojw[j, l, b] for b in range(inst.links[l].wavelengths))
            if l in on:
                m.c20.add(m.S[j, k] <= w)
            else:
                m.c19.add(w <= inst.links[l].wavelengths * (1 - m.S[j, k]))
    # one wavelength per request and link (fix of 25, see docstring)
    m.c10b = pyo.Constraint(J, Ll, rule=lambda m, j, l: sum(
        m.Ojw[j, l, b] for b in range(inst.links[l].wavelengths)) <= 1)
    # (22)-(24) nodes of the ring; computing nodes are the y's (fix)
    m.c22 = pyo.Constraint(JKN, rule=lambda m, j, k, n: m.y[j, k, n] <= m.S[j, k])
    m.c23 = pyo.Constraint(JKN, rule=lambda m, j, k, n: m.y[j, k, n] <= m.On[j, n])
    if all(not multi[j] for j in J):
        m.c24 = pyo.Constraint(JK, rule=lambda m, j, k: sum(
            m.y[j, k, n] for n in inst.rings[k].nodes)
            == m.S[j, k] * inst.requests[j].node_counts[0])
    else:
        m.c24 = pyo.Constraint(J, rule=lambda m, j: sum(
            m.y[j, k, n] for k in P[j] for n in inst.rings[k].nodes) == n_expr(j))
    m.c24b = pyo.Constraint(J, Nn, rule=lambda m, j, n: m.On[j, n] == sum(
        m.y[j, k, n] for k in P[j] if n in inst.rings[k].nodes))
    # (25) wavelength continuity along the ring (fix: one wavelength on all its links)
    m.c25 = pyo.ConstraintList()
    for j, k in JK:
        lk = inst.rings[k].links
        for l1, l2 in zip(lk, (*lk[1:], lk[0]), strict=True):
            for b in range(max(inst.links[l1].wavelengths, inst.links[l2].wavelengths)):
                x1 = m.Ojw[j, l1, b] if b < inst.links[l1].wavelengths else 0
                x2 = m.Ojw[j, l2, b] if b < inst.links[l2].wavelengths else 0
                m.c25.add(x1 - x2 <= 1 - m.S[j, k])
                m.c25.add(x2 - x1 <= 1 - m.S[j, k])
    # (26)-(27) activated CUs and wavelengths
    m.c26a = pyo.Constraint(NC, rule=lambda m, n, c: m.Oc[n, c] <= sum(
        m.Ojc[j, n, c] for j in J))
    m.c26b = pyo.Constraint(NC, rule=lambda m, n, c: sum(
        m.Ojc[j, n, c] for j in J) <= nr * m.Oc[n, c])
    m.c27a = pyo.Constraint(LB, rule=lambda m, l, b: m.Ow[l, b] <= sum(
        m.Ojw[j, l, b] for j in J))
    m.c27b = pyo.Constraint(LB, rule=lambda m, l, b: sum(
        m.Ojw[j, l, b] for j in J) <= nr * m.Ow[l, b])
    # (28)-(29) occupancy of nodes and links per slot
    m.c28a = pyo.Constraint(J, Nn, TT, rule=lambda m, j, n, t: m.Ont[j, n, t] <= sum(
        m.C[j, t, n, c] for c in range(inst.nodes[n].cus)))
    m.c28b = pyo.Constraint(J, Nn, TT, rule=lambda m, j, n, t: sum(
        m.C[j, t, n, c] for c in range(inst.nodes[n].cus))
        <= inst.nodes[n].cus * m.Ont[j, n, t])
    m.c29a = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: m.Olt[j, l, t] <= sum(
        m.f[j, t, l, b] for b in range(inst.links[l].wavelengths)))
    m.c29b = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: sum(
        m.f[j, t, l, b] for b in range(inst.links[l].wavelengths)) <= m.Olt[j, l, t])
    # held CUs (fix, see docstring): a used CU serves every slot of the node's window
    m.held = pyo.Constraint([(j, t, n, c) for j, n, c in JNC for t in TT],
                            rule=lambda m, j, t, n, c: m.C[j, t, n, c]
                            >= m.Ojc[j, n, c] + m.Ont[j, n, t] - 1)
    # (30)-(31) window bounds where occupied
    m.c30a = pyo.Constraint(J, Nn, TT, rule=lambda m, j, n, t: m.Tsn[j, n]
                            <= t + T * (1 - m.Ont[j, n, t]))
    m.c30b = pyo.Constraint(J, Nn, TT, rule=lambda m, j, n, t: m.Ten[j, n]
                            >= t - T * (1 - m.Ont[j, n, t]))
    m.c31a = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: m.Tsl[j, l]
                            <= t + T * (1 - m.Olt[j, l, t]))
    m.c31b = pyo.Constraint(J, Ll, TT, rule=lambda m, j, l, t: m.Tel[j, l]
                            >= t - T * (1 - m.Olt[j, l, t]))

    # (32)-(33) contiguity per CU and per wavelength
    def c32(m, j, t, n, c):
        later = sum(m.C[j, t1, n, c] for t1 in range(t + 2, T + 1))
        return later <= (1 - m.C[j, t, n, c] + m.C[j, t + 1, n, c]) * (T - t - 1)

    def c33(m, j, t, l, b):
        later = sum(m.f[j, t1, l, b] for t1 in range(t + 2, T + 1))
        return later <= (1 - m.f[j, t, l, b] + m.f[j, t + 1, l, b]) * (T - t - 1)

    T2 = range(1, T - 1)
    m.c32 = pyo.Constraint([(j, t, n, c) for j, n, c in JNC for t in T2], rule=c32)
    m.c33 = pyo.Constraint([(j, t, l, b) for j, l, b in JLB for t in T2], rule=c33)
    # (34)-(35) window length equals the occupied slots
    big = 2 * T + 1
    m.c34 = pyo.ConstraintList()
    for j in J:
        for n in Nn:
            d = sum(m.Ont[j, n, t] for t in TT) - (m.Ten[j, n] - m.Tsn[j, n] + 1)
            m.c34.add(d <= big * (1 - m.On[j, n]))
            m.c34.add(d >= -big * (1 - m.On[j, n]))
    m.c35 = pyo.ConstraintList()
    for j, k in JK:
        for l in inst.rings[k].links:
            d = sum(m.Olt[j, l, t] for t in TT) - (m.Tel[j, l] - m.Tsl[j, l] + 1)
            m.c35.add(d <= big * (1 - m.S[j, k]))
            m.c35.add(d >= -big * (1 - m.S[j, k]))
    # (36)-(37) nothing outside [t_a, t_d]
    for j in J:
        r = inst.requests[j]
        for t in TT:
            if not r.arrival <= t <= r.deadline:
                for n in Nn:
                    m.Ont[j, n, t].fix(0)
                for l in Ll:
                    m.Olt[j, l, t].fix(0)
    # (38) window of the source inside [t_a, t_d]; a blocked request ends at 0
    m.c38 = pyo.ConstraintList()
    for j in J:
        r, s = inst.requests[j], inst.requests[j].source
        m.c38.add(m.Tsn[j, s] >= r.arrival * m.eta[j])
        m.c38.add(m.Tsn[j, s] <= m.Ten[j, s])
        m.c38.add(m.Ten[j, s] <= r.deadline + T * (1 - m.eta[j]))
        m.c38.add(m.Ten[j, s] <= T * m.eta[j])
    # (39)-(40) every computing node and ring link shares the source's window
    m.c39 = pyo.ConstraintList()
    for j in J:
        s = inst.requests[j].source
        for n in Nn:
            if n == s:
                continue
            for var_n, var_s in ((m.Tsn[j, n], m.Tsn[j, s]), (m.Ten[j, n], m.Ten[j, s])):
                m.c39.add(var_n - var_s <= T * (1 - m.On[j, n]))
                m.c39.add(var_s - var_n <= T * (1 - m.On[j, n]))
    m.c40 = pyo.ConstraintList()
    m.c41 = pyo.ConstraintList()
    for j, k in JK:
        s = inst.requests[j].source
        for l in inst.rings[k].links:
            for var_l, var_s in ((m.Tsl[j, l], m.Tsn[j, s]), (m.Tel[j, l], m.Ten[j, s])):
                m.c40.add(var_l - var_s <= T * (1 - m.S[j, k]))
                m.c40.add(var_s - var_l <= T * (1 - m.S[j, k]))
            # (41) ring links are lit whenever the source computes
            for t in TT:
                m.c41.add(m.S[j, k] + m.Ont[j, s, t] - 1 <= m.Olt[j, l, t])
    m._rar = "paper"
    return m


def _size_paper(instance: Instance) -> tuple[int, int]:
    inst = instance
    nr, T = len(inst.requests), inst.slots
    nn, nl = len(inst.nodes), len(inst.links)
    sc, sw = inst.total_cus, inst.total_wavelengths
    P = _ring_sets(inst)
    nk = sum(len(v) for v in P.values())
    nkn = sum(inst.rings[k].size for v in P.values() for k in v)
    n_vars = (nr * T * (sc + sw) + nr * (sc + sw) + sc + sw + nr * T * (nn + nl)
              + nk + nkn + nr * (2 + 4 * nn + 2 * nl)
              + sum(len(r.node_counts) for r in inst.requests))
    n_cons = (3 * nr * T * sc + 2 * nr * T * sw + T * (sc + sw) + 2 * nr * (sc + sw)
              + 6 * nr * T * (nn + nl) + nk * (nl + 4 * T + 4 * nl) + 2 * nk * 20
              + 3 * nkn + nr * (10 + 8 * nn) + 2 * (sc + sw))
    return n_vars, n_cons


def _mode_starts(instance: Instance, j: int) -> list[tuple[int, int, int, int]]:
    """(N, k, d, start) of request j: every mode whose window fits in [t_a, t_d]."""
    r = instance.requests[j]
    k_max = max(nd.cus for nd in instance.nodes)
    out = []
    for nn, k, d in modes(instance, j, k_max):
        for s in range(r.arrival, r.deadline - d + 2):
            out.append((nn, k, d, s))
    return out


def build_aggregated(instance: Instance) -> Any:
    """Integer CU counts per node and slot, modes (N, k, d) and starts (module docstring)."""
    import pyomo.environ as pyo

    inst = instance
    nr, T = len(inst.requests), inst.slots
    J = range(nr)
    TT = range(1, T + 1)
    P = {j: inst.candidate_rings(j) for j in J}
    ms = {j: _mode_starts(inst, j) for j in J}
    ring_nodes = {j: sorted({v for k in P[j] for v in inst.rings[k].nodes}) for j in J}
    ring_links_ = {j: sorted({i for k in P[j] for i in inst.rings[k].links}) for j in J}
    m = pyo.ConcreteModel(name=f"rar_aggregated_{inst.name}")
    JK = [(j, k) for j in J for k in P[j]]
    JQ = [(j, q) for j in J for q in range(len(ms[j]))]
    JNQ = [(j, n, q) for j in J for q, (nn, k, d, s) in enumerate(ms[j])
           for n in ring_nodes[j] if inst.nodes[n].cus >= k]
    uniform_w = len({lk.wavelengths for lk in inst.links}) == 1
    w_min = min(lk.wavelengths for lk in inst.links)
    free_wl = _wavelengths_never_bind(inst)
    JB = [(j, b) for j in J for b in range(w_min)
          if (not uniform_w or b <= j) and not free_wl]
    m.eta = pyo.Var(J, domain=pyo.Binary)
    m.a = pyo.Var(JK, domain=pyo.Binary)  # ring choice (S_k^j)
    m.q = pyo.Var(JQ, domain=pyo.Binary)  # mode and start
    m.w = pyo.Var(JNQ, domain=pyo.Binary)  # node n computes in mode/start q
    m.g = pyo.Var(JB, domain=pyo.Binary)  # wavelength b (same on every ring link)
    m.eta_def = pyo.Constraint(J, rule=lambda m, j: sum(
        m.q[j, q] for q in range(len(ms[j]))) == m.eta[j])
    m.ring_one = pyo.Constraint(J, rule=lambda m, j: sum(m.a[j, k] for k in P[j]) == m.eta[j])
    if not free_wl:
        m.wl_one = pyo.Constraint(J, rule=lambda m, j: sum(
            m.g[jj, b] for jj, b in JB if jj == j) == m.eta[j])
    w_by_jq: dict[tuple[int, int], list[int]] = {}
    w_by_jn: dict[tuple[int, int], list[int]] = {}
    for j, n, q in JNQ:
        w_by_jq.setdefault((j, q), []).append(n)
        w_by_jn.setdefault((j, n), []).append(q)
    # N computing nodes in the chosen mode (eq. 24)
    m.n_nodes = pyo.Constraint(JQ, rule=lambda m, j, q: sum(
        m.w[j, n, q] for n in w_by_jq.get((j, q), [])) == ms[j][q][0] * m.q[j, q])

    # explicit node choice y_{j,n} = sum_q w (a better branching variable than the w's)
    JN = [(j, n) for j in J for n in ring_nodes[j]]
    m.y = pyo.Var(JN, domain=pyo.Binary)
    m.y_def = pyo.Constraint(JN, rule=lambda m, j, n: m.y[j, n] == sum(
        m.w[j, n, q] for q in w_by_jn.get((j, n), [])))

    def y(j, n):
        return m.y[j, n] if (j, n) in m.y else 0  # noqa: SIM401 (pyomo component)

    # computing nodes on the chosen ring (eqs. 21-23), the source computes (eq. 17)
    m.on_ring = pyo.Constraint([(j, n) for j in J for n in ring_nodes[j]],
                               rule=lambda m, j, n: y(j, n) <= sum(
                                   m.a[j, k] for k in P[j] if n in inst.rings[k].nodes))
    m.source = pyo.Constraint(J, rule=lambda m, j: y(j, inst.requests[j].source) == m.eta[j])
    # CU capacity per node and slot (eq. 8 aggregated) and activated CUs as peak usage
    usage: dict[tuple[int, int], list] = {}
    for j, n, q in JNQ:
        _, k, d, s = ms[j][q]
        for t in range(s, s + d):
            usage.setdefault((n, t), []).append(k * m.w[j, n, q])
    NT = sorted(usage)
    m.cap = pyo.Constraint(NT, rule=lambda m, n, t: sum(usage[n, t]) <= inst.nodes[n].cus)
    # occupancy of request j at slot t
    occ: dict[tuple[int, int], list] = {}
    for j, q in JQ:
        _, _, d, s = ms[j][q]
        for t in range(s, s + d):
            occ.setdefault((j, t), []).append(m.q[j, q])
    # h_{j,l,b} = g_{j,b} * [l on the ring of j], linearised by sum_b h = on-ring, h <= g
    def on_link(j, l):
        return sum(m.a[j, k] for k in P[j] if l in inst.rings[k].links)

    JLB = [(j, l, b) for j, b in JB for l in ring_links_[j]]
    m.h = pyo.Var(JLB, bounds=(0, 1))
    m.h_g = pyo.Constraint(JLB, rule=lambda m, j, l, b: m.h[j, l, b] <= m.g[j, b])
    JL = sorted({(j, l) for j, l, _ in JLB})
    bs_of = {j: [b for jj, b in JB if jj == j] for j in J}
    m.h_on = pyo.Constraint(JL, rule=lambda m, j, l: sum(
        m.h[j, l, b] for b in bs_of[j]) == on_link(j, l))
    # wavelength load per link, wavelength and slot (eq. 9): f >= h + occ - 1
    JLBT = [(j, l, b, t) for j, l, b in JLB for t in TT if (j, t) in occ]
    m.f = pyo.Var(JLBT, bounds=(0, 1))
    m.f_def = pyo.Constraint(JLBT, rule=lambda m, j, l, b, t: m.f[j, l, b, t]
                             >= m.h[j, l, b] + sum(occ[j, t]) - 1)
    load: dict[tuple[int, int, int], list] = {}
    for j, l, b, t in JLBT:
        load.setdefault((l, b, t), []).append(m.f[j, l, b, t])
    m.rho = pyo.Constraint(
        [key for key, v in load.items() if len(v) > inst.rho],
        rule=lambda m, l, b, t: sum(load[l, b, t]) <= inst.rho)
    # objective (4)
    if inst.scheme == "MinCU":
        per_jn: dict[tuple[int, int], list] = {}
        for j, n, q in JNQ:
            per_jn.setdefault((j, n), []).append(ms[j][q][1] * m.w[j, n, q])
        zeta = activated_cus(m, inst, usage, per_jn)
    elif inst.scheme == "MinW":
        zeta = activated_wavelengths(m, JLB)
    elif inst.scheme == "MinT":
        zeta = sum((ms[j][q][3] + ms[j][q][2] - 1) / inst.requests[j].deadline * m.q[j, q]
                   for j, q in JQ)
    else:
        zeta = sum(1 - sum(inst.rings[k].reliability * m.a[j, k] for k in P[j]) for j in J)
    m.obj = pyo.Objective(expr=_objective_expr(inst, m.eta, zeta), sense=pyo.minimize)
    m._rar = "aggregated"
    m._rar_modes = ms
    return m


def activated_cus(m: Any, inst: Instance, usage: dict[tuple[int, int], list],
                  per_jn: dict[tuple[int, int], list]) -> Any:
    """MinCU's zeta_1 (eq. 4): integer activated CUs ``m.A[n]`` >= the usage of node n in every
    slot (``usage[n, t]``: CU terms), plus the valid cut ``m.A[n]`` >= the CUs request j takes
    on node n, whatever its window (``per_jn[j, n]``). Shared by ``aggregated`` and ``config``.
    """
    import pyomo.environ as pyo

    m.A = pyo.Var(range(len(inst.nodes)), domain=pyo.NonNegativeIntegers,
                  bounds=lambda m, n: (0, inst.nodes[n].cus))
    m.peak = pyo.Constraint(sorted(usage), rule=lambda m, n, t: m.A[n] >= sum(usage[n, t]))
    m.peak_j = pyo.Constraint(sorted(per_jn), rule=lambda m, j, n: m.A[n] >= sum(per_jn[j, n]))
    return sum(m.A[n] for n in range(len(inst.nodes)))


def activated_wavelengths(m: Any, JLB: list[tuple[int, int, int]]) -> Any:
    """MinW's zeta_2 (eq. 4): ``m.Ow[l, b]`` >= ``m.h[j, l, b]`` (request j holds wavelength b on
    link l) for the (j, l, b) in ``JLB``. Shared by ``aggregated`` and ``config``."""
    import pyomo.environ as pyo

    LB = sorted({(l, b) for _, l, b in JLB})
    m.Ow = pyo.Var(LB, bounds=(0, 1))
    m.ow_def = pyo.Constraint(JLB, rule=lambda m, j, l, b: m.Ow[l, b] >= m.h[j, l, b])
    return sum(m.Ow[l, b] for l, b in LB)


def _wavelengths_never_bind(instance: Instance) -> bool:
    """True if wavelengths cannot matter: not MinW and |R| <= rho min_l |W_l|.

    Then wavelength floor(i / rho) for the i-th deployed request loads no (link, wavelength,
    slot) above rho, whatever the rings and windows, and no other term of eq. (4) sees
    wavelengths; the aggregated model then has no wavelength variables (decode assigns them).
    """
    w_min = min(lk.wavelengths for lk in instance.links)
    return instance.scheme != "MinW" and len(instance.requests) <= instance.rho * w_min


def _size_aggregated(instance: Instance) -> tuple[int, int]:
    inst = instance
    nr, T = len(inst.requests), inst.slots
    n_vars = n_cons = 0
    wmin = min(lk.wavelengths for lk in inst.links)
    for j in range(nr):
        r = inst.requests[j]
        window = r.deadline - r.arrival + 1
        nq = len(r.node_counts) * window * (window + 1) // 2  # upper bound on mode-starts
        rings = inst.candidate_rings(j)
        nodes = len({v for k in rings for v in inst.rings[k].nodes})
        links = len({i for k in rings for i in inst.rings[k].links})
        nb = min(wmin, j + 1)
        n_vars += 1 + len(rings) + nq + nq * nodes + nodes + nb + links * nb * (window + 1)
        n_cons += 4 + nq + 2 * nodes + links * nb * (window + 2) + links
    n_cons += len(inst.nodes) * T * 2 + inst.total_wavelengths * T
    n_vars += len(inst.nodes) + inst.total_wavelengths
    return n_vars, n_cons


#: the exact models (module docstring); "config" decodes and warm-starts with its own
FORMULATIONS: dict[str, Formulation] = {
    "paper": Formulation(build_paper, _size_paper,
                         "the ILP of section 4.D (eqs. 4-38) over the enumerated rings"),
    "aggregated": Formulation(build_aggregated, _size_aggregated,
                              "ours: modes (node count, CUs, duration) and start slots instead "
                              "of per-slot CU variables, symmetry breaking"),
    "config": Formulation(_rar_config.build_config, _rar_config.size_config,
                          "ours: one binary per (ring, node set, CUs, window) configuration",
                          decode=_rar_config.decode_config,
                          warm_start=_rar_config.warm_start_config),
}


def build(instance: Instance, formulation: str = "paper") -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (see :data:`FORMULATIONS`)."""
    return FORMULATIONS[formulation].build(instance)


def estimate_size(instance: Instance, formulation: str = "paper") -> tuple[int, int]:
    """(variables, constraints) of the model, computed without building it (upper bounds)."""
    return FORMULATIONS[formulation].estimate_size(instance)


def _val(var: Any) -> float:
    v = var.value
    return 0.0 if v is None else float(v)


def decode(model: Any, instance: Instance) -> Solution:
    """The Solution of a solved paper or aggregated model."""
    inst = instance
    out: list[Assignment | None] = []
    if model._rar == "config":
        return _rar_config.decode_config(model, instance)
    if model._rar == "paper":
        for j, r in enumerate(inst.requests):
            if _val(model.eta[j]) < 0.5:
                out.append(None)
                continue
            k = next(k for k in inst.candidate_rings(j) if _val(model.S[j, k]) > 0.5)
            ring = inst.rings[k]
            nodes = [v for v in ring.nodes if _val(model.On[j, v]) > 0.5]
            cus = [[c for c in range(inst.nodes[v].cus) if _val(model.Ojc[j, v, c]) > 0.5]
                   for v in nodes]
            l0 = ring.links[0]
            b = next(b for b in range(inst.links[l0].wavelengths)
                     if _val(model.Ojw[j, l0, b]) > 0.5)
            busy = [t for t in range(1, inst.slots + 1) if _val(model.Ont[j, r.source, t]) > 0.5]
            out.append(Assignment(ring=list(ring.nodes), nodes=nodes, cus=cus, wavelength=b,
                                  start=min(busy), end=max(busy)))
        return Solution(requests=out)
    ms = model._rar_modes
    plans: list[tuple[list[int], list[int], int, int] | None] = []
    rings: list[tuple[int, ...] | None] = []
    waves: list[int] = []
    for j in range(len(inst.requests)):
        if _val(model.eta[j]) < 0.5:
            plans.append(None)
            rings.append(None)
            waves.append(-1)
            continue
        k = next(k for k in inst.candidate_rings(j) if _val(model.a[j, k]) > 0.5)
        q = next(q for q in range(len(ms[j])) if _val(model.q[j, q]) > 0.5)
        _, kk, d, s = ms[j][q]
        nodes = [v for v in inst.rings[k].nodes
                 if (j, v, q) in model.w and _val(model.w[j, v, q]) > 0.5]
        if _wavelengths_never_bind(inst):
            b = sum(1 for p in plans if p is not None) // inst.rho
        else:
            b = next(b for (jj, b) in model.g if jj == j and _val(model.g[jj, b]) > 0.5)
        plans.append((nodes, [kk] * len(nodes), s, s + d - 1))
        rings.append(inst.rings[k].nodes)
        waves.append(b)
    ids = assign_cu_ids(inst, plans)
    for j, plan in enumerate(plans):
        if plan is None:
            out.append(None)
            continue
        nodes, _, s, e = plan
        out.append(Assignment(ring=list(rings[j]), nodes=nodes, cus=ids[j],  # type: ignore[arg-type]
                              wavelength=waves[j], start=s, end=e))
    return Solution(requests=out)


def _canon_ring(nodes: list[int]) -> tuple[int, ...]:
    """The cyclic order of ``nodes`` as :func:`enumerate_rings` stores it."""
    i = nodes.index(min(nodes))
    rot = nodes[i:] + nodes[:i]
    if rot[1] > rot[-1]:
        rot = [rot[0]] + rot[1:][::-1]
    return tuple(rot)


def wavelength_relabel(instance: Instance, solution: Solution) -> dict[int, int]:
    """Wavelengths renumbered in order of first use (b <= j, the symmetry breaking of the
    ``aggregated`` and ``config`` models) when all links have the same count; else empty."""
    relabel: dict[int, int] = {}
    if len({lk.wavelengths for lk in instance.links}) == 1:
        for a in solution.requests:
            if a is not None and a.wavelength not in relabel:
                relabel[a.wavelength] = len(relabel)
    return relabel


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    """Set the model's variables from ``solution`` (paper model: eta and S only).

    Aggregated model: every variable is set (rings, modes, nodes, wavelengths relabelled in
    order of first use when the symmetry breaking is on, the linearised loads, activated CUs and
    wavelengths). A request whose window is longer than its mode's duration or whose CU counts
    are not the fewest for it cannot be expressed and is left unset (the start is then partial).
    """
    inst = instance
    if model._rar == "config":
        _rar_config.warm_start_config(model, instance, solution)
        return
    ring_index = {ring.nodes: k for k, ring in enumerate(inst.rings)}
    if model._rar == "paper":
        for j, a in enumerate(solution.requests):
            model.eta[j].set_value(0.0 if a is None else 1.0)
            k = None if a is None else ring_index.get(_canon_ring(a.ring))
            for (jj, kk), var in model.S.items():
                if jj == j and not var.fixed:
                    var.set_value(1.0 if kk == k else 0.0)
        return
    ms = model._rar_modes
    relabel = wavelength_relabel(inst, solution)
    import pyomo.environ as pyo

    for var in model.component_data_objects(pyo.Var):
        var.set_value(0.0)
    occ: dict[tuple[int, int], int] = {}
    on_link: dict[tuple[int, int], int] = {}
    for j, a in enumerate(solution.requests):
        if a is None:
            continue
        k = ring_index.get(_canon_ring(a.ring))
        hit = None
        ks = {len(c) for c in a.cus}
        for q, (nn, kk, d, st) in enumerate(ms[j]):
            if nn == len(a.nodes) and ks == {kk} and st == a.start and st + d - 1 == a.end:
                hit = q
        if k is None or (j, k) not in model.a or hit is None:
            continue
        model.eta[j].set_value(1.0)
        model.a[j, k].set_value(1.0)
        model.q[j, hit].set_value(1.0)
        for n in a.nodes:
            model.w[j, n, hit].set_value(1.0)
            model.y[j, n].set_value(1.0)
        b = relabel.get(a.wavelength, a.wavelength)
        if (j, b) in model.g:
            model.g[j, b].set_value(1.0)
        for t in range(a.start, a.end + 1):
            occ[j, t] = 1
        for i in inst.rings[k].links:
            on_link[j, i] = b
    for (j, l, b), var in model.h.items():
        var.set_value(1.0 if on_link.get((j, l)) == b else 0.0)
    if hasattr(model, "f"):
        for (j, l, b, t), var in model.f.items():
            var.set_value(1.0 if on_link.get((j, l)) == b and occ.get((j, t)) else 0.0)
    if hasattr(model, "Ow"):
        for (l, b), var in model.Ow.items():
            var.set_value(1.0 if any(on_link.get((j, l)) == b
                                     for j in range(len(inst.requests))) else 0.0)
    if hasattr(model, "A"):
        use = np.zeros((len(inst.nodes), inst.slots + 1), dtype=np.int64)
        for (j, n, q), var in model.w.items():
            if var.value:
                _, kk, d, st = ms[j][q]
                use[n, st:st + d] += kk
        for n, var in model.A.items():
            var.set_value(float(use[n].max()))


# --------------------------------------------------------------------------------------------
# generators


def _topology(name: str) -> dict[str, Any]:
    import json
    from importlib import resources

    text = resources.files("dmlopt.data").joinpath(f"rar/topology/{name}.json").read_text()
    return json.loads(text)


def _spec_error(field: str, value: object, text: str):
    from dmlopt.errors import InstanceError

    return InstanceError(f"spec.{field}", value, text)


def _requests(rng: np.random.Generator, n: int, nodes: int, arrival: tuple[int, int],
              deadline: tuple[int, int], counts: str) -> list[dict[str, Any]]:
    """Table 1: D in [100, 200] GB, theta in [0.1, 0.4], r in [0.99, 0.999], uniform."""
    out = []
    for _ in range(n):
        nc = [int(rng.integers(3, 5))] if counts == "fixed34" else [3, 4, 5, 6]
        out.append({
            "data_gb": float(rng.integers(100, 201)),
            "source": int(rng.integers(0, nodes)),
            "arrival": int(rng.integers(arrival[0], arrival[1] + 1)),
            "deadline": int(rng.integers(deadline[0], deadline[1] + 1)),
            "theta": round(float(rng.uniform(0.1, 0.4)), 3),
            "reliability": round(float(rng.uniform(0.99, 0.999)), 4),
            "node_counts": nc,
        })
    return out


def _from_topology(topo: dict[str, Any], **fields: Any) -> Instance:
    return Instance(nodes=topo["nodes"], links=topo["links"], **fields)


def generate_cpn6(*, seed: int = 0, requests: int = 10, scheme: str = "MinCU",
                  slots: int = 12) -> Instance:
    """The 6-node, 10-link network (section 6) and Table 1's small settings.

    ILP simplifications of section 6: N_j fixed in {3, 4}, arrivals in the first 3 slots,
    deadlines in the last 3; v = 200 TFLOPS, 10 wavelengths, rho = 3.
    """
    if requests < 1 or slots < 6:
        raise _spec_error("requests/slots", (requests, slots), "need requests >= 1, slots >= 6")
    if scheme not in SCHEMES:
        raise _spec_error("scheme", scheme, f"is not one of {', '.join(SCHEMES)}")
    rng = np.random.default_rng(seed)
    topo = _topology("cpn6")
    reqs = _requests(rng, requests, len(topo["nodes"]), (1, 3), (slots - 2, slots), "fixed34")
    return _from_topology(topo, name=f"cpn6-r{requests}-{scheme}-s{seed}", scheme=scheme,
                          slots=slots, cu_tflops=200.0, rho=3, requests=reqs)


def generate_cpn38(*, seed: int = 0, requests: int = 100, scheme: str = "MinCU",
                   slots: int = 48) -> Instance:
    """The 38-node, 59-link network (section 6) and Table 1's large settings.

    t_a in [1, 10], t_d in [39, 48] (scaled to ``slots``), v = 10 TFLOPS, 20 wavelengths,
    flexible node count N_j in 3..6 (RDDA).
    """
    if requests < 1 or slots < 12:
        raise _spec_error("requests/slots", (requests, slots), "need requests >= 1, slots >= 12")
    if scheme not in SCHEMES:
        raise _spec_error("scheme", scheme, f"is not one of {', '.join(SCHEMES)}")
    rng = np.random.default_rng(seed)
    topo = _topology("cpn38")
    a_hi = max(1, round(slots * 10 / 48))
    d_lo = min(slots, round(slots * 39 / 48))
    reqs = _requests(rng, requests, len(topo["nodes"]), (1, a_hi), (d_lo, slots), "flex")
    return _from_topology(topo, name=f"cpn38-r{requests}-{scheme}-s{seed}", scheme=scheme,
                          slots=slots, cu_tflops=10.0, rho=3, requests=reqs)


def generate_random(*, seed: int = 0, nodes: int = 4, extra_links: int = 1, requests: int = 2,
                    slots: int = 4, cus: int = 3, wavelengths: int = 2, rho: int = 1,
                    scheme: str = "MinCU", flexible: bool = False) -> Instance:
    """Tiny random instances for tests: a ring of ``nodes`` plus chords, small demands.

    Demands are scaled so that one request needs about a third of a node's CU-slots.
    """
    if nodes < 3 or requests < 1 or slots < 1 or cus < 1 or wavelengths < 1 or rho < 1:
        raise _spec_error("nodes/requests/slots/cus", (nodes, requests, slots, cus),
                          "too small")
    if scheme not in SCHEMES:
        raise _spec_error("scheme", scheme, f"is not one of {', '.join(SCHEMES)}")
    rng = np.random.default_rng(seed)
    links = [(i, (i + 1) % nodes) for i in range(nodes)]
    chords = [(u, v) for u in range(nodes) for v in range(u + 2, nodes)
              if not (u == 0 and v == nodes - 1)]
    rng.shuffle(chords)
    links += chords[:extra_links]
    link_objs = [{"u": u, "v": v, "length_km": float(rng.integers(20, 51)),
                  "wavelengths": wavelengths} for u, v in links]
    reqs = []
    for _ in range(requests):
        ta = int(rng.integers(1, max(1, slots // 3) + 1))
        td = int(rng.integers(max(ta, slots - slots // 3), slots + 1))
        # X = total CU-slots of computation; choose D so that X ~ U[1, cus * slots / 2]
        target = float(rng.uniform(1.0, cus * slots / 2))
        theta = 0.1
        data = math.sqrt(target * 360.0)  # X = D^2 log10(1/theta) / 360 at v = 200 TFLOPS
        reqs.append({"data_gb": round(data, 3), "source": int(rng.integers(0, nodes)),
                     "arrival": ta, "deadline": td, "theta": theta,
                     "reliability": round(float(rng.uniform(0.997, 0.9995)), 5),
                     "node_counts": [2, 3] if flexible else [int(rng.integers(2, 4))]})
    return Instance(name=f"random-n{nodes}-r{requests}-s{seed}", scheme=scheme,
                    nodes=[{"cus": cus} for _ in range(nodes)], links=link_objs, slots=slots,
                    cu_tflops=200.0, rho=rho, requests=reqs)


_Scheme = Literal["MinCU", "MinW", "MinT", "MaxR"]


class Cpn6Params(Options):
    """Parameters of the 6-node network's generator (section 6, Table 1 small settings)."""

    requests: int = pydantic.Field(default=10, ge=1, description="training requests |R|")
    scheme: _Scheme = pydantic.Field(default="MinCU", description="objective scheme of "
                                     "section 4.C (MinCU, MinW, MinT, MaxR)")
    slots: int = pydantic.Field(default=12, ge=6, le=10_000,
                                description="time slots |T| (30 minutes each)")


class Cpn38Params(Cpn6Params):
    """Parameters of the 38-node network's generator (section 6, Table 1 large settings)."""

    requests: int = pydantic.Field(default=100, ge=1, description="training requests |R|")
    slots: int = pydantic.Field(default=48, ge=12, le=10_000,
                                description="time slots |T| (arrivals and deadlines scale)")


class RandomParams(Options):
    """Parameters of the tiny random generator (tests)."""

    nodes: int = pydantic.Field(default=4, ge=3, description="nodes on the base ring")
    extra_links: int = pydantic.Field(default=1, ge=0, description="chords added to the ring")
    requests: int = pydantic.Field(default=2, ge=1, description="training requests")
    slots: int = pydantic.Field(default=4, ge=1, le=10_000, description="time slots")
    cus: int = pydantic.Field(default=3, ge=1, le=100_000, description="CUs per node")
    wavelengths: int = pydantic.Field(default=2, ge=1, le=10_000,
                                      description="wavelengths per link")
    rho: int = pydantic.Field(default=1, ge=1, description="requests per wavelength and slot")
    scheme: _Scheme = pydantic.Field(default="MinCU", description="objective scheme of "
                                     "section 4.C")
    flexible: bool = pydantic.Field(default=False, description="allow 2 or 3 computing nodes "
                                    "per request (else one of them, drawn)")


def generator_size(params: Options) -> Size:
    """What a generator allocates and computes: the requests (about 1 KiB each), the network
    (the random one lists its n^2 / 2 candidate chords) and the validation, whose ring
    enumeration is bounded by :data:`MAX_RING_STEPS` and the rings by ``ring_cap``."""
    n = float(getattr(params, "nodes", 38))
    req = float(params.requests)
    memory = 1024.0 * req + 64.0 * n * n + 1024.0 * 20_000
    work = 1000.0 * req + 10.0 * n * n + MAX_RING_STEPS
    return Size(memory, work)


GENERATORS: dict[str, Generator] = {
    "cpn6": Generator(generate_cpn6, Cpn6Params, generator_size,
                      "the 6-node, 10-link network (section 6), N_j in {3, 4}"),
    "cpn38": Generator(generate_cpn38, Cpn38Params, generator_size,
                       "the 38-node, 59-link network (section 6), flexible N_j in 3..6"),
    "random": Generator(generate_random, RandomParams, generator_size,
                        "tiny random instances for tests: a ring plus chords"),
}


#: a tiny ``dmlopt.generate`` spec, a 4-node ring, 3 requests, 2 CUs per node (seed 0: RDDA
#: 1.0417 above the optimum 1): solves in about a second with every formulation;
#: tests/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "random", "requests": 3, "cus": 2}
