"""RAR (paper 003): the instance (network, requests), rings and the work of a request (eqs. 1-3)."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pydantic

from dmlopt.models.rar.constants import EPS, MAX_RING_CAP, MAX_RING_STEPS
from dmlopt.validation import Frozen, rule

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
    d = _duration_ab(a, b, k)
    return int(d) if d.ndim == 0 else d


def _duration_ab(a: float, b: float, k: Any) -> np.ndarray:
    """:func:`duration` from ``node_work``'s (a, b): an int64 array (0-d for a scalar k)."""
    # capped at 2^53 before the cast (a duration that long fits no horizon; a float beyond
    # the int64 range would cast to garbage); minimum / maximum: np.clip, without its
    # dispatch cost (the table below calls this six times per request and node count)
    d = np.minimum(np.maximum(np.ceil(a / np.asarray(k, dtype=float) + b - EPS), 1.0),
                   _LONGEST)
    return d.astype(np.int64)


#: the longest duration :func:`duration` returns (slots); any longer one fits no horizon either
_LONGEST = float(2**53)


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
        up = (k <= k_max) & (_duration_ab(a, b, np.minimum(k, k_max)) > d)
        down = (k > 1) & (_duration_ab(a, b, np.maximum(k - 1, 1)) <= d)
        if not (up.any() or down.any()):
            break  # nothing to fix: a further pass would change nothing either
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
