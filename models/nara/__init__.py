"""Nara: network-aware online multi-resource allocation in a DCN (paper 001, Shabka & Zervas).

Problem (section 3.1). A DCN graph whose servers hold CPU and memory units and whose links hold
bandwidth. Requests <c, m, b, t> arrive one per time step (section 3.2: the step index is the
arrival index) and are served in arrival order. A request is *allocated* to a set V' of servers
with enough CPU and memory in total and, for every pair of servers in V', a path whose links all
have at least b free (constraint 3); its resources return when its holding period t ends; a
request that cannot be allocated is dropped and never revisited. The objective is the number of
accepted requests (the paper's acceptance ratio times the episode length).

Exact rules of this implementation (the same in the evaluator, the simulator and the MILPs)
---------------------------------------------------------------------------------------------
* Time. Request i arrives at step i and holds its resources at the steps j with
  i <= j < i + t_i; at step j the requests with i + t_i <= j are released *before* request j is
  allocated (state transition (iv)).
* CPU and memory. An allocation lists its servers with the integer CPU and memory taken from
  each; every listed server gives something (CPU + memory > 0), the amounts sum exactly to c and
  m, and no server gives more than it has free. The online allocators take min(free, remaining)
  from each server in the order they pick them (transition (ii)); the evaluator and the offline
  MILP accept any split (a relaxation that keeps the offline MILP an upper bound).
* Paths. Servers are leaves (one link, to their rack switch). For each unordered pair of listed
  servers the allocation names one of the k = 3 candidate paths (``topology``: the k shortest
  simple paths by hops, ties lexicographic); two servers in one rack have one path.
* Bandwidth charging (constraint 3 read literally). The links of a request are the *union* L(r)
  of the links of its pairs' paths. Every link of L(r) must have at least b free before the
  request is placed, and b is then reserved ONCE on every link of L(r) (not once per pair that
  crosses it). A single-server request uses no link. Consequences: the pairs never compete with
  each other inside one request, so a server set is feasible iff (a) every listed server's
  access link has >= b free (when there are >= 2 servers) and (b) every pair of distinct racks
  used has a candidate path with >= b free on each link. Bandwidth is compared with a tolerance
  of 1e-6; the generators draw b in steps of 0.01.
* Objective: accepted requests (SENSE max). Metrics: acceptance ratio, CPU and memory
  utilisation and bandwidth utilisation per tier (time averages over the steps, after each
  step's allocation), rack locality (share of accepted requests inside one rack), the
  distribution classes of Fig. 2 (single server, intra-rack, neighbouring racks = racks
  attached to the same fabric switches, non-neighbouring) and servers per allocation.

Exact models (:data:`FORMULATIONS`)
-----------------------------------
``"offline"``: all requests of a (short) episode known in advance, maximise the number
accepted subject to the capacities at every step: an upper bound on every online allocator
(none of the papers has one). Rack-level routing: since the union rule charges a link once,
one path per rack pair is never worse than several, so path binaries z are per (request, rack
pair, candidate), y (link charged) and v (access link charged) follow from them.
Valid cuts (no evaluator-feasible solution is cut off; tested by putting allocator solutions into
the model): a request no single server can hold uses >= ceil(c / max free) servers and charges
the access link of each (v >= x); identical servers of a rack are numbered by first use (server
k+1 serves request i only if server k served a request <= i), which removes the 10! relabellings
per rack (``warm_start`` renumbers a start accordingly, :func:`canonical`). Formulation
"offline" adds the cuts of :func:`_strong_cuts` (v = x for multi-server requests, per-server
cliques of requests whose bandwidths cannot share an access link, per-step CPU/memory/clique
knapsack rows in the acceptance binaries, racks needed); "offline-basic" is the model with only
the server-count cuts and the symmetry constraints, "offline-plain" the model with neither (the
reference the tests compare optima with). Measured on 32-request alpha episodes the cuts do not
move the LP bound (the per-step CPU/memory knapsack is what binds there; the LP spreads requests
fractionally), see the README.
``"request"``: the per-request MILP (same constraints, one request, the free capacities of the
current state, only candidate paths whose links all have >= b free). As a formulation it is
built for the first request on the empty DC with objective "accept it" (1 if it fits, the
evaluator then sees one accepted request and the rest dropped), which is what
``dmlopt.solve``/``export`` can check. The allocator ``milp`` (heuristics.nara) builds the
same model at every arrival with the state's free capacities and the objective
"accept, then fewest links charged, then fewest servers" and solves it with HiGHS.

Requests (Appendix H; the traces are not available here, stand-ins documented in
:data:`DISTRIBUTIONS`): CPU and memory up to 100 units (10 servers) for the trace stand-ins
and up to 50 units for the uniform set (:data:`UNIFORM_MAX`: the paper does not give the
uniform bound and its section 5.3 statistics exclude 100), bandwidth uniform on
{0.10, 0.11, ..., 1.00} (10-100 % of a server-rack link), holding periods uniform on
{1, ..., 2T-1} with mean T set for the average load (95 % uniform, 90 % Azure/Alibaba):
T = load * min(total CPU / E[c], total memory / E[m]) (Little's law, one arrival per step, the
awaiting request counted, i.e. the larger of the two resources' loads equals ``load``).
"""

from __future__ import annotations

import heapq
import math
from functools import cached_property
from itertools import combinations
from typing import Any, Literal

import numpy as np
import pydantic

from dmlopt.contract import Command, Formulation, Generator, Options, Size
from dmlopt.evaluation import Evaluation
from dmlopt.models.nara import topology as topo
from dmlopt.validation import Frozen, rule

NAME = "nara"
TITLE = "Network-aware online resource allocation (Nara)"
PAPER = "001 (Shabka, Zervas)"
SENSE = "max"

#: bandwidth tolerance (the generators use multiples of 0.01)
BW_TOL = 1e-6


class Node(Frozen):
    """A DCN node: a server (with CPU and memory) or a switch (rack, fabric, spine)."""

    kind: Literal["server", "rack", "fabric", "spine"]
    cpu: int = pydantic.Field(default=0, ge=0)
    mem: int = pydantic.Field(default=0, ge=0)


class Link(Frozen):
    """An undirected link with its bandwidth capacity."""

    u: int = pydantic.Field(ge=0)
    v: int = pydantic.Field(ge=0)
    capacity: float = pydantic.Field(gt=0, allow_inf_nan=False)


class Topology(Frozen):
    """A DCN: nodes and links; servers are leaves attached to exactly one rack switch."""

    name: str = ""
    nodes: list[Node] = pydantic.Field(min_length=2)
    links: list[Link] = pydantic.Field(min_length=1)

    def check(self, prefix: str = "topology.") -> Topology:
        """Cross-field rules (run by :class:`Instance`, where the field path is known)."""
        n = len(self.nodes)
        degree = [0] * n
        seen: dict[tuple[int, int], int] = {}
        for j, lk in enumerate(self.links):
            for end in ("u", "v"):
                if getattr(lk, end) >= n:
                    raise rule(f"{prefix}links[{j}].{end}", getattr(lk, end),
                               f"names a node outside 0..{n - 1}")
            if lk.u == lk.v:
                raise rule(f"{prefix}links[{j}]", (lk.u, lk.v), "is a self loop")
            key = (min(lk.u, lk.v), max(lk.u, lk.v))
            if key in seen:
                raise rule(f"{prefix}links[{j}]", key, f"duplicates links[{seen[key]}]")
            seen[key] = j
            degree[lk.u] += 1
            degree[lk.v] += 1
            ku, kv = self.nodes[lk.u].kind, self.nodes[lk.v].kind
            if "server" in (ku, kv) and {ku, kv} != {"server", "rack"}:
                raise rule(f"{prefix}links[{j}]", (lk.u, lk.v),
                           f"joins a {ku} and a {kv}: a server links to a rack switch only")
        n_srv = 0
        for i, node in enumerate(self.nodes):
            if node.kind == "server":
                n_srv += 1
                if degree[i] != 1:
                    raise rule(f"{prefix}nodes[{i}]", f"server with {degree[i]} links",
                               "must have exactly one link (to its rack switch)")
                if node.cpu + node.mem == 0:
                    raise rule(f"{prefix}nodes[{i}].cpu", 0, "and mem are both 0 on a server")
            elif node.cpu or node.mem:
                raise rule(f"{prefix}nodes[{i}].cpu", node.cpu or node.mem,
                           f"must be 0 on a {node.kind} switch (mem too)")
        if n_srv == 0:
            raise rule(f"{prefix}nodes", f"{n} nodes", "contain no server")
        # every rack switch must reach every other through the switch graph
        racks = [i for i, nd in enumerate(self.nodes) if nd.kind == "rack"]
        adj: dict[int, list[int]] = {}
        for lk in self.links:
            if self.nodes[lk.u].kind != "server" and self.nodes[lk.v].kind != "server":
                adj.setdefault(lk.u, []).append(lk.v)
                adj.setdefault(lk.v, []).append(lk.u)
        reach = {racks[0]}
        todo = [racks[0]]
        while todo:
            a = todo.pop()
            for b in adj.get(a, []):
                if b not in reach:
                    reach.add(b)
                    todo.append(b)
        cut_off = [r for r in racks if r not in reach]
        if cut_off:
            raise rule(f"{prefix}links", f"rack switch {cut_off[0]}",
                       f"is not connected to rack switch {racks[0]} (disconnected DCN)")
        return self

    def totals(self) -> tuple[int, int]:
        """(total CPU, total memory) of the servers."""
        return (sum(nd.cpu for nd in self.nodes), sum(nd.mem for nd in self.nodes))


class Request(Frozen):
    """A request <c, m, b, t> (section 3.1): CPU, memory, bandwidth, holding period (steps)."""

    c: int = pydantic.Field(ge=0)
    m: int = pydantic.Field(ge=0)
    b: float = pydantic.Field(ge=0, allow_inf_nan=False)
    t: float = pydantic.Field(gt=0, allow_inf_nan=False)



class Instance(Frozen):
    """A Nara episode: a topology and the requests in arrival order (request i at step i)."""

    problem: Literal["nara"] = "nara"
    name: str = ""
    topology: Topology
    requests: list[Request] = pydantic.Field(min_length=1)
    k_paths: int = pydantic.Field(default=3, ge=1, le=16,
                                  description="candidate paths per server pair (paper: 3)")

    @pydantic.model_validator(mode="after")
    def _rules(self) -> Instance:
        self.topology.check("topology.")
        for i, r in enumerate(self.requests):
            if r.c + r.m == 0:
                raise rule(f"requests[{i}].c", 0, "and m are both 0 (an empty request)")
        return self

    @cached_property
    def net(self) -> topo.Net:
        """Arrays of the topology and the candidate paths (see :mod:`.topology`).

        Raises
        ------
        ModelTooLargeError
            When :func:`net_size` is above the size limit in force (``DMLOPT_SIZE_LIMIT``):
            the candidate paths of every rack pair grow with racks^2 and the path search
            with the switch graph, whatever the number of requests.
        """
        _check_net_size(self)
        return topo.build_net(
            [(nd.kind, nd.cpu, nd.mem) for nd in self.topology.nodes],
            [(lk.u, lk.v, lk.capacity) for lk in self.topology.links], self.k_paths)

    @cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(c, m, b, t) of the requests as numpy arrays."""
        c = np.array([r.c for r in self.requests], dtype=np.int64)
        m = np.array([r.m for r in self.requests], dtype=np.int64)
        b = np.array([r.b for r in self.requests], dtype=float)
        t = np.array([r.t for r in self.requests], dtype=float)
        return c, m, b, t

    def active_sets(self) -> list[list[int]]:
        """Requests holding resources at each step j (i <= j < i + t_i) if all were accepted."""
        n = len(self.requests)
        out: list[list[int]] = [[] for _ in range(n)]
        for i, r in enumerate(self.requests):
            for j in range(i, n):
                if i + r.t <= j:
                    break
                out[j].append(i)
        return out


class Allocation(Frozen):
    """Servers (server indices 0..S-1, in node order), the CPU and memory taken from each, and
    the candidate path index of every server pair (0,1), (0,2), ..., (n-2, n-1)."""

    servers: list[int] = pydantic.Field(min_length=1)
    cpu: list[int]
    mem: list[int]
    routes: list[int] = pydantic.Field(default_factory=list)


class Solution(Frozen):
    """One entry per request in arrival order: its allocation, or None when dropped."""

    problem: Literal["nara"] = "nara"
    allocations: list[Allocation | None]

    @property
    def accepted(self) -> int:
        return sum(a is not None for a in self.allocations)


# --------------------------------------------------------------------------------------------
# size estimates (dmlopt.contract.Size), from the instance fields alone


def topology_counts(topology: Topology) -> tuple[int, int, int, int]:
    """(servers, racks, switches, switch-to-switch links) of a topology, without building
    :class:`.topology.Net`."""
    kinds = [nd.kind for nd in topology.nodes]
    n_srv = kinds.count("server")
    n_rack = kinds.count("rack")
    return n_srv, n_rack, len(kinds) - n_srv, len(topology.links) - n_srv


def _check_net_size(instance: Instance) -> None:
    """Refuse a topology whose :func:`net_size` is above the limits in force: the
    ``size_limit`` of the API call in progress (``dmlopt.contract.limits_in_force``), else
    ``DMLOPT_SIZE_LIMIT``, else the defaults. The paths are built lazily, wherever the instance
    is used (evaluator, models, allocators)."""
    from dmlopt.contract import limits_from
    from dmlopt.errors import ModelTooLargeError

    size = net_size(instance)
    lim = limits_from(None)
    if size.memory > lim.memory or size.work > lim.work:
        raise ModelTooLargeError(
            f"too large: the candidate paths of this nara topology need about "
            f"{size.memory / 2**30:.3g} GiB and {size.work:.3g} operations, above the limit "
            f"{lim.memory / 2**30:.3g} GiB / {lim.work:.3g}; pass --size-limit V,C,MEMORY,WORK "
            "(Python: size_limit=, or DMLOPT_SIZE_LIMIT) to build them anyway")


def net_size(instance: Instance) -> Size:
    """What :attr:`Instance.net` allocates and computes (Appendix G's candidate paths).

    Memory: the padded path array (R, R, k, L) and the candidate lists, with the path length
    L bounded by the switch graph (switches - 1 and switch links); work: the hop-limited path
    search of every rack (stopped, with an InstanceError, after
    :data:`.topology.MAX_PATH_STEPS` steps per rack over all its hop limits; at most the
    switch-graph links squared per hop limit), plus the (R, R) neighbour table.
    """
    _, R, n_sw, l_sw = topology_counts(instance.topology)
    k = instance.k_paths
    max_len = max(1, min(n_sw - 1, l_sw))
    memory = R * R * k * (8.0 * max_len + 64.0) + 64.0 * len(instance.topology.nodes)
    search = min(float(topo.MAX_PATH_STEPS), (n_sw / 2 + 1) * (float(l_sw) ** 2 + 1.0))
    work = R * search + R * R * (k + 1)
    return Size(memory, work)


# --------------------------------------------------------------------------------------------
# evaluator


def _check_alloc(net: topo.Net, req: Request, al: Allocation, cpu_free: list[int],
                 mem_free: list[int], bw_free: list[float], where: str
                 ) -> tuple[list[str], set[int]]:
    """Rule violations of one allocation against the free capacities; and its links."""
    out: list[str] = []
    S = net.n_servers
    n = len(al.servers)
    if len(al.cpu) != n or len(al.mem) != n:
        return [f"{where}: {n} servers but {len(al.cpu)} cpu and {len(al.mem)} mem amounts"], set()
    if len(set(al.servers)) != n:
        return [f"{where}.servers: {al.servers} lists a server twice"], set()
    for s, c, m in zip(al.servers, al.cpu, al.mem, strict=True):
        if not 0 <= s < S:
            return [f"{where}.servers: {s} is not a server 0..{S - 1}"], set()
        if c < 0 or m < 0:
            out.append(f"{where}: negative amount ({c}, {m}) on server {s}")
        elif c + m == 0:
            out.append(f"{where}: server {s} gives neither CPU nor memory")
        if c > cpu_free[s]:
            out.append(f"{where}: server {s} gives {c} CPU but has {cpu_free[s]} free")
        if m > mem_free[s]:
            out.append(f"{where}: server {s} gives {m} memory but has {mem_free[s]} free")
    if sum(al.cpu) != req.c:
        out.append(f"{where}.cpu: sums to {sum(al.cpu)}, the request needs {req.c}")
    if sum(al.mem) != req.m:
        out.append(f"{where}.mem: sums to {sum(al.mem)}, the request needs {req.m}")
    n_pairs = n * (n - 1) // 2
    if len(al.routes) != n_pairs:  # checked before the pairs are listed (n is data, not a count)
        out.append(f"{where}.routes: {len(al.routes)} routes for {n_pairs} server pairs")
        return out, set()
    pairs = list(combinations(al.servers, 2))
    links: set[int] = set()
    for (s, t), idx in zip(pairs, al.routes, strict=True):
        n_cand = len(net.candidates(int(net.rack[s]), int(net.rack[t])))
        if not 0 <= idx < n_cand:
            out.append(f"{where}.routes: {idx} is not a candidate path of servers {s}, {t} "
                       f"(0..{n_cand - 1})")
            continue
        links.update(net.pair_links(s, t, idx))
    for e in sorted(links):
        if bw_free[e] < req.b - BW_TOL:
            out.append(f"{where}: link {e} has {bw_free[e]:.6g} free, the request needs "
                       f"{req.b:.6g}")
    return out, links


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    """Replay the episode: check every allocation against the free capacities of its step.

    Objective: the number of accepted (non-dropped) requests. See the module docstring for the
    exact rules (release before arrival, union bandwidth charging, candidate paths).
    """
    net = instance.net
    n = len(instance.requests)
    allocs = solution.allocations
    if len(allocs) != n:
        return Evaluation(-math.inf, False, (f"allocations: {len(allocs)} entries, the episode "
                                             f"has {n} requests",))
    cpu_free = net.cpu.tolist()
    mem_free = net.mem.tolist()
    bw_free = net.cap.tolist()
    held: dict[int, tuple[Allocation, set[int]]] = {}
    heap: list[tuple[float, int]] = []
    violations: list[str] = []
    tot_cpu, tot_mem = max(int(net.cpu.sum()), 1), max(int(net.mem.sum()), 1)
    tier_cap = {k: float(net.cap[net.tier == k].sum()) for k in (1, 2, 3)}
    util = {"cpu": 0.0, "mem": 0.0, 1: 0.0, 2: 0.0, 3: 0.0}
    used: dict[Any, float] = {"cpu": 0, "mem": 0, 0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0}
    tier = net.tier.tolist()
    classes = {"single_server": 0, "intra_rack": 0, "neighbouring_racks": 0,
               "non_neighbouring_racks": 0}
    n_servers_sum = 0
    for j, (req, al) in enumerate(zip(instance.requests, allocs, strict=True)):
        while heap and heap[0][0] <= j:
            _, i = heapq.heappop(heap)
            a_i, links = held.pop(i)
            for s, c, m in zip(a_i.servers, a_i.cpu, a_i.mem, strict=True):
                cpu_free[s] += c
                mem_free[s] += m
                used["cpu"] -= c
                used["mem"] -= m
            for e in links:
                bw_free[e] += instance.requests[i].b
                used[tier[e]] -= instance.requests[i].b
        if al is not None:
            errs, links = _check_alloc(net, req, al, cpu_free, mem_free, bw_free,
                                       f"allocations[{j}]")
            if errs:
                violations.extend(errs)
            if not errs or all("free" in x for x in errs):
                for s, c, m in zip(al.servers, al.cpu, al.mem, strict=True):
                    cpu_free[s] -= c
                    mem_free[s] -= m
                    used["cpu"] += c
                    used["mem"] += m
                for e in links:
                    bw_free[e] -= req.b
                    used[tier[e]] += req.b
                held[j] = (al, links)
                heapq.heappush(heap, (j + req.t, j))
            classes[_distribution(net, al.servers)] += 1
            n_servers_sum += len(al.servers)
        util["cpu"] += used["cpu"] / tot_cpu
        util["mem"] += used["mem"] / tot_mem
        for k in (1, 2, 3):
            if tier_cap[k]:
                util[k] += used[k] / tier_cap[k]
    accepted = solution.accepted
    metrics = {
        "accepted": float(accepted),
        "requests": float(n),
        "acceptance_ratio": accepted / n,
        "cpu_util": util["cpu"] / n,
        "mem_util": util["mem"] / n,
        "bw_util_tier1": util[1] / n,
        "bw_util_tier2": util[2] / n,
        "bw_util_tier3": util[3] / n,
        "rack_locality": (classes["single_server"] + classes["intra_rack"]) / max(accepted, 1),
        "servers_per_allocation": n_servers_sum / max(accepted, 1),
    }
    metrics.update({k: v / max(accepted, 1) for k, v in classes.items()})
    return Evaluation(float(accepted), not violations, tuple(violations[:50]), metrics)


def _distribution(net: topo.Net, servers: list[int]) -> str:
    """Fig. 2's distribution class of an allocation."""
    if len(servers) == 1:
        return "single_server"
    racks = sorted({int(net.rack[s]) for s in servers if 0 <= s < net.n_servers})
    if len(racks) <= 1:
        return "intra_rack"
    if all(net.neighbour[a, b] for a, b in combinations(racks, 2)):
        return "neighbouring_racks"
    return "non_neighbouring_racks"


# --------------------------------------------------------------------------------------------
# exact formulations


def _model(net: topo.Net, reqs: list[Request], active: list[list[int]], cpu_free: np.ndarray,
           mem_free: np.ndarray, bw_free: np.ndarray, objective: str, name: str,
           symmetry: bool = False, cuts: str = "basic") -> Any:
    """The MILP over requests ``reqs`` (indexed 0..len-1) with capacities checked at every set
    of ``active`` requests; ``objective`` "count" (maximise accepted) or "cost" (one request:
    accept, then fewest charged links, then fewest servers). ``cuts``: "none" (the plain
    model), "basic" (server-count cuts) or "strong" (also the cuts of :func:`_strong_cuts`).
    """
    import pyomo.environ as pyo

    S, R = net.n_servers, net.n_racks
    n = len(reqs)
    m = pyo.ConcreteModel(name=name)
    m.I = pyo.RangeSet(0, n - 1)
    m.S = pyo.RangeSet(0, S - 1)
    m.R = pyo.RangeSet(0, R - 1)
    # candidate paths usable: all of them offline; those with >= b free on every link online
    single = objective == "cost"
    pz = []
    for i, r in enumerate(reqs):
        for (ra, rb), plist in net.cand.items():
            for p, links in enumerate(plist):
                if single and any(bw_free[e] < r.b - BW_TOL for e in links):
                    continue
                pz.append((i, ra, rb, p))
    m.Z = pyo.Set(initialize=pz, dimen=4)
    m.PAIR = pyo.Set(initialize=[(i, ra, rb) for i in range(n) for (ra, rb) in net.cand],
                     dimen=3)
    z_of: dict[tuple[int, int, int], list[int]] = {}
    link_users: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
    for i, ra, rb, p in pz:
        z_of.setdefault((i, ra, rb), []).append(p)
        for e in net.cand[(ra, rb)][p]:
            link_users.setdefault((i, e), []).append((i, ra, rb, p))
    m.Y = pyo.Set(initialize=sorted(link_users), dimen=2)

    def cpu_ub(m, i, s):
        return (0, int(min(cpu_free[s], reqs[i].c)))

    def mem_ub(m, i, s):
        return (0, int(min(mem_free[s], reqs[i].m)))

    # acc_i: request i accepted; x_{i,s}: server s serves i; a, g: CPU and memory taken
    m.acc = pyo.Var(m.I, domain=pyo.Binary)
    m.x = pyo.Var(m.I, m.S, domain=pyo.Binary)
    m.a = pyo.Var(m.I, m.S, domain=pyo.NonNegativeIntegers, bounds=cpu_ub)
    m.g = pyo.Var(m.I, m.S, domain=pyo.NonNegativeIntegers, bounds=mem_ub)
    # u_i: i uses >= 2 servers (then its access links are charged); v_{i,s}: access link of s
    # charged; w_{i,r}: rack r used; z: candidate path p serves rack pair (ra, rb); y_{i,e}:
    # link e charged (union rule: once per request)
    m.u = pyo.Var(m.I, domain=pyo.Binary)
    m.v = pyo.Var(m.I, m.S, bounds=(0, 1))
    m.w = pyo.Var(m.I, m.R, bounds=(0, 1))
    m.z = pyo.Var(m.Z, domain=pyo.Binary)
    m.y = pyo.Var(m.Y, bounds=(0, 1))

    # (3.1 constraints 1-2) the amounts cover the request exactly when accepted
    m.cover_cpu = pyo.Constraint(m.I, rule=lambda m, i: sum(m.a[i, s] for s in m.S)
                                 == reqs[i].c * m.acc[i])
    m.cover_mem = pyo.Constraint(m.I, rule=lambda m, i: sum(m.g[i, s] for s in m.S)
                                 == reqs[i].m * m.acc[i])
    m.take_cpu = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.a[i, s]
                                <= int(min(cpu_free[s], reqs[i].c)) * m.x[i, s])
    m.take_mem = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.g[i, s]
                                <= int(min(mem_free[s], reqs[i].m)) * m.x[i, s])
    m.gives = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.x[i, s] <= m.a[i, s] + m.g[i, s])
    m.only_acc = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.x[i, s] <= m.acc[i])
    m.multi = pyo.Constraint(m.I, rule=lambda m, i: sum(m.x[i, s] for s in m.S)
                             <= 1 + (S - 1) * m.u[i])
    m.access = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.v[i, s] >= m.x[i, s] + m.u[i] - 1)
    # valid cuts: a request no single server can hold uses >= ceil(c / max free) servers
    max_c, max_m = max(int(np.max(cpu_free)), 1), max(int(np.max(mem_free)), 1)
    need = [max(-(-r.c // max_c), -(-r.m // max_m), 1) for r in reqs]
    if cuts == "none":
        need = [1] * n
    m.must_multi = pyo.Constraint(
        [i for i in range(n) if need[i] >= 2], rule=lambda m, i: m.u[i] == m.acc[i])
    # ... and charges every chosen server's access link (v >= x: tighter than v >= x + u - 1)
    m.must_access = pyo.Constraint(
        [(i, s) for i in range(n) if need[i] >= 2 for s in range(S)],
        rule=lambda m, i, s: m.v[i, s] >= m.x[i, s])
    m.min_servers = pyo.Constraint(
        [i for i in range(n) if need[i] >= 2],
        rule=lambda m, i: sum(m.x[i, s] for s in m.S) >= need[i] * m.acc[i])
    m.rack = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.w[i, int(net.rack[s])] >= m.x[i, s])

    # (3.1 constraint 3) a candidate path for every pair of racks used
    def pair_rule(m, i, ra, rb):
        ps = z_of.get((i, ra, rb), [])
        return sum(m.z[i, ra, rb, p] for p in ps) >= m.w[i, ra] + m.w[i, rb] - 1

    m.pair = pyo.Constraint(m.PAIR, rule=pair_rule)
    m.charge = pyo.Constraint(
        [(i, e, ra, rb, p) for (i, e), us in link_users.items() for (_, ra, rb, p) in us],
        rule=lambda m, i, e, ra, rb, p: m.y[i, e] >= m.z[i, ra, rb, p])

    # capacities at every step: CPU, memory, access links, other links
    steps = [j for j, act in enumerate(active) if act]
    m.J = pyo.Set(initialize=steps)
    m.cap_cpu = pyo.Constraint(m.J, m.S, rule=lambda m, j, s: sum(m.a[i, s] for i in active[j])
                               <= int(cpu_free[s]))
    m.cap_mem = pyo.Constraint(m.J, m.S, rule=lambda m, j, s: sum(m.g[i, s] for i in active[j])
                               <= int(mem_free[s]))

    def cap_access(m, j, s):
        e = int(net.access[s])
        terms = [reqs[i].b * m.v[i, s] for i in active[j] if reqs[i].b > 0]
        return sum(terms) <= float(bw_free[e]) + BW_TOL if terms else pyo.Constraint.Skip

    m.cap_access = pyo.Constraint(m.J, m.S, rule=cap_access)
    links = sorted({e for (_, e) in link_users})
    m.L = pyo.Set(initialize=links)

    def cap_link(m, j, e):
        terms = [reqs[i].b * m.y[i, e] for i in active[j] if (i, e) in link_users
                 and reqs[i].b > 0]
        return sum(terms) <= float(bw_free[e]) + BW_TOL if terms else pyo.Constraint.Skip

    m.cap_link = pyo.Constraint(m.J, m.L, rule=cap_link)
    if cuts == "strong":
        _strong_cuts(m, net, reqs, active, need, cpu_free, mem_free, bw_free)

    if symmetry:
        # identical servers of a rack (same free CPU, memory, access bandwidth) are
        # interchangeable over the whole episode: number them by first use, so server k+1 of a
        # rack serves request i only if server k served some request <= i
        chain = []
        for r in range(R):
            srv = net.rack_servers[r]
            for s0, s1 in zip(srv[:-1], srv[1:], strict=True):
                e0, e1 = int(net.access[s0]), int(net.access[s1])
                if (cpu_free[s0], mem_free[s0], bw_free[e0]) == (cpu_free[s1], mem_free[s1],
                                                                  bw_free[e1]):
                    chain.append((int(s0), int(s1)))
        m.CHAIN = pyo.Set(initialize=[(i, a, b) for i in range(n) for a, b in chain], dimen=3)
        m.first_use = pyo.Constraint(
            m.CHAIN, rule=lambda m, i, a, b: m.x[i, b] <= sum(m.x[h, a] for h in range(i + 1)))

    if objective == "count":
        m.obj = pyo.Objective(expr=sum(m.acc[i] for i in m.I), sense=pyo.maximize)
    else:
        n_links = S + len(links)
        big = (S + 1) * (n_links + 1)
        m.obj = pyo.Objective(
            expr=big * (1 - sum(m.acc[i] for i in m.I))
            + (S + 1) * (sum(m.v[i, s] for i in m.I for s in m.S)
                         + sum(m.y[i, e] for i, e in m.Y))
            + sum(m.x[i, s] for i in m.I for s in m.S),
            sense=pyo.minimize)
    m._nara = {"reqs": reqs}
    return m


def _conflict_cliques(bs: dict[int, float], cap: float) -> list[list[int]]:
    """Maximal cliques of the conflict graph "b_i + b_k > cap" (a threshold graph): the
    requests with b > cap / 2, and for each l with b_l <= cap / 2 the set {l} plus the
    requests with b > cap - b_l; only cliques of >= 2 requests, each once."""
    big = sorted(i for i, b in bs.items() if b > cap / 2 + BW_TOL)
    out = {tuple(big)} if len(big) >= 2 else set()
    for l_, bl in bs.items():
        if bl > cap / 2 + BW_TOL:
            continue
        k = tuple(sorted([l_] + [i for i, b in bs.items() if i != l_ and b + bl > cap + BW_TOL]))
        if len(k) >= 2:
            out.add(k)
    # drop cliques contained in another
    keep = [set(k) for k in out]
    return [sorted(k) for k in keep if not any(k < o for o in keep)]


def _strong_cuts(m: Any, net: topo.Net, reqs: list[Request], active: list[list[int]],
                 need: list[int], cpu_free: np.ndarray, mem_free: np.ndarray,
                 bw_free: np.ndarray) -> None:
    """Valid inequalities of the "strong" offline model (module docstring, each one holds for
    every evaluator-feasible allocation with v at its least value):

    * ``v_eq``: a request that needs >= 2 servers charges exactly its servers' access links
      (v = x; v >= x is already a cut), so v inherits x's integrality;
    * ``bw_clique``: at each step and server, requests whose bandwidths pairwise exceed the
      access link's capacity (b_i + b_k > cap) cannot both use its access link:
      sum_{i in K} v_{i,s} <= 1 for every maximal clique K of that conflict graph;
    * ``agg_cpu``/``agg_mem``: per step, the total CPU (memory) of the accepted active requests
      is at most the DC's (implied by the per-server rows in the LP, but as a knapsack row in
      the binaries acc it lets the solver derive cover cuts);
    * ``agg_clique``: per step and clique K of requests needing >= 2 servers (all servers having
      the same access capacity): the servers of the requests of K are disjoint, so
      sum_{i in K} need_i acc_i <= number of servers with a useful access link;
    * ``racks_needed``: a request larger than any rack's free CPU or memory uses >= 2 racks.
    """
    import pyomo.environ as pyo

    S, R = net.n_servers, net.n_racks
    n = len(reqs)
    multi = [i for i in range(n) if need[i] >= 2]
    m.v_eq = pyo.Constraint([(i, s) for i in multi for s in range(S)],
                            rule=lambda m, i, s: m.v[i, s] <= m.x[i, s])
    steps = [j for j, act in enumerate(active) if len(act) >= 2]
    cap_of = [float(bw_free[int(net.access[s])]) for s in range(S)]
    caps = sorted(set(cap_of))
    clq: list[tuple[int, ...]] = []  # each clique once (consecutive steps repeat them)
    seen: set[tuple[float, tuple[int, ...]]] = set()
    bw_rows: list[tuple[int, int]] = []
    aggs: list[list[int]] = []
    for j in steps:
        bs = {i: reqs[i].b for i in active[j] if reqs[i].b > 0}
        for cap in caps:
            for k in map(tuple, _conflict_cliques(bs, cap)):
                if (cap, k) in seen:
                    continue
                seen.add((cap, k))
                clq.append(k)
                bw_rows += [(len(clq) - 1, s) for s in range(S)
                            if abs(cap_of[s] - cap) <= BW_TOL]
                km = [i for i in k if need[i] >= 2]
                if len(caps) == 1 and len(km) >= 2:
                    aggs.append(km)
    m.bw_clique = pyo.Constraint(
        bw_rows, rule=lambda m, q, s: sum(m.v[i, s] for i in clq[q]) <= 1)
    n_ok = sum(1 for s in range(S) if cpu_free[s] + mem_free[s] > 0)
    m.agg_clique = pyo.Constraint(
        range(len(aggs)), rule=lambda m, q: sum(need[i] * m.acc[i] for i in aggs[q]) <= n_ok)
    tot_c, tot_m = int(np.sum(cpu_free)), int(np.sum(mem_free))
    m.agg_cpu = pyo.Constraint(
        steps, rule=lambda m, j: sum(reqs[i].c * m.acc[i] for i in active[j]) <= tot_c)
    m.agg_mem = pyo.Constraint(
        steps, rule=lambda m, j: sum(reqs[i].m * m.acc[i] for i in active[j]) <= tot_m)
    rack_c = [int(sum(cpu_free[s] for s in net.rack_servers[r])) for r in range(R)]
    rack_m = [int(sum(mem_free[s] for s in net.rack_servers[r])) for r in range(R)]
    wide = [i for i in range(n) if reqs[i].c > max(rack_c) or reqs[i].m > max(rack_m)]
    m.racks_needed = pyo.Constraint(
        wide, rule=lambda m, i: sum(m.w[i, r] for r in m.R) >= 2 * m.acc[i])


def build_offline(instance: Instance, cuts: str = "strong") -> Any:
    """The offline MILP: maximise accepted requests of the whole episode (an upper bound).
    ``cuts``: "strong" (formulation "offline"), "basic" ("offline-basic": the server-count cuts
    and the symmetry constraints) or "none" ("offline-plain": neither)."""
    net = instance.net
    return _model(net, list(instance.requests), instance.active_sets(), net.cpu, net.mem,
                  net.cap, "count", f"nara_offline_{instance.name}", symmetry=cuts != "none",
                  cuts=cuts)


def build_offline_basic(instance: Instance) -> Any:
    """Formulation "offline-basic" (see :func:`build_offline`)."""
    return build_offline(instance, "basic")


def build_offline_plain(instance: Instance) -> Any:
    """Formulation "offline-plain": no valid inequality, no symmetry constraint."""
    return build_offline(instance, "none")


def build_request_model(instance: Instance, index: int, cpu_free: np.ndarray,
                        mem_free: np.ndarray, bw_free: np.ndarray,
                        objective: str = "cost") -> Any:
    """The per-request MILP for request ``index`` given the free capacities of a state."""
    return _model(instance.net, [instance.requests[index]], [[0]], cpu_free, mem_free, bw_free,
                  objective, f"nara_request_{instance.name}_{index}")


def build_request(instance: Instance) -> Any:
    """Formulation "request": the per-request MILP of request 0 on the empty DC, objective
    "accept it" (see the module docstring)."""
    net = instance.net
    return build_request_model(instance, 0, net.cpu, net.mem, net.cap, objective="count")


def _size(instance: Instance, n_req: int, active_terms: int, steps: int) -> tuple[int, int]:
    net = instance.net
    S, R = net.n_servers, net.n_racks
    n_pairs = len(net.cand)
    n_z = sum(len(v) for v in net.cand.values())
    path_links = sum(len(p) for v in net.cand.values() for p in v)
    n_links = len({e for v in net.cand.values() for p in v for e in p})
    n_vars = n_req * (1 + 4 * S + 1 + R + n_z + n_links)
    n_cons = n_req * (2 + 6 * S + 1 + n_pairs + path_links) + steps * (3 * S + n_links)
    del active_terms
    return n_vars, n_cons


def _size_offline(instance: Instance) -> tuple[int, int]:
    # every step holds at least its own request (t > 0), so all n steps have capacity rows;
    # the active sets themselves (up to n^2 / 2 entries) are not listed here
    n = len(instance.requests)
    return _size(instance, n, n, n)


def _size_request(instance: Instance) -> tuple[int, int]:
    return _size(instance, 1, 1, 1)


#: the exact models (module docstring, "Exact models")
FORMULATIONS: dict[str, Formulation] = {
    "offline": Formulation(
        build_offline, _size_offline,
        "offline MILP of the whole episode with the strong valid cuts (upper bound on every "
        "online allocator)"),
    "offline-basic": Formulation(
        build_offline_basic, _size_offline,
        "offline MILP with only the server-count cuts and the rack symmetry constraints"),
    "offline-plain": Formulation(
        build_offline_plain, _size_offline,
        "offline MILP without valid cuts or symmetry constraints (the reference model)"),
    "request": Formulation(
        build_request, _size_request,
        "per-request MILP of section 3.1: request 0 on the empty DC, accept it if it fits"),
}


def build(instance: Instance, formulation: str = "offline") -> Any:
    """The Pyomo model of ``instance`` in ``formulation`` (see :data:`FORMULATIONS`)."""
    return FORMULATIONS[formulation].build(instance)


def estimate_size(instance: Instance, formulation: str = "offline") -> tuple[int, int]:
    """(variables, constraints) of the model, computed without building it."""
    return FORMULATIONS[formulation].estimate_size(instance)


def decode_allocations(model: Any, net: topo.Net) -> list[Allocation | None]:
    """One allocation (or None) per request of the model, from acc, x, a, g and z."""
    out: list[Allocation | None] = []
    for i in model.I:
        if (model.acc[i].value or 0) < 0.5:
            out.append(None)
            continue
        servers, cpu, mem = [], [], []
        for s in model.S:
            c = int(round(model.a[i, s].value or 0))
            g = int(round(model.g[i, s].value or 0))
            if (model.x[i, s].value or 0) > 0.5 and c + g > 0:
                servers.append(int(s))
                cpu.append(c)
                mem.append(g)
        routes = []
        for s, t in combinations(servers, 2):
            ra, rb = int(net.rack[s]), int(net.rack[t])
            if ra == rb:
                routes.append(0)
                continue
            key = (min(ra, rb), max(ra, rb))
            ps = [p for p in range(len(net.cand[key]))
                  if (i, *key, p) in model.z and (model.z[i, *key, p].value or 0) > 0.5]
            routes.append(ps[0] if ps else 0)
        out.append(Allocation(servers=servers, cpu=cpu, mem=mem, routes=routes))
    return out


def decode(model: Any, instance: Instance) -> Solution:
    """The allocations of the model's requests; requests not in the model are dropped."""
    allocs = decode_allocations(model, instance.net)
    allocs += [None] * (len(instance.requests) - len(allocs))
    return Solution(allocations=allocs)


def canonical(model: Any, instance: Instance, solution: Solution) -> Solution:
    """``solution`` with the identical servers of each chain of the model's symmetry
    constraints renumbered by first use (the same allocation up to a relabelling)."""
    if not hasattr(model, "CHAIN"):
        return solution
    groups: list[list[int]] = []
    for _, a, b in model.CHAIN:
        if groups and groups[-1][-1] == a:
            if b not in groups[-1]:
                groups[-1].append(b)
        elif not any(a in g for g in groups):
            groups.append([a, b])
    first = {}
    for i, al in enumerate(solution.allocations):
        for s in al.servers if al is not None else []:
            first.setdefault(s, i)
    n = len(solution.allocations)
    relabel: dict[int, int] = {}
    for g in groups:
        order = sorted(g, key=lambda s: (first.get(s, n), s))
        relabel.update(dict(zip(order, g, strict=True)))
    allocs = []
    for al in solution.allocations:
        if al is None:
            allocs.append(None)
            continue
        allocs.append(Allocation(servers=[relabel.get(s, s) for s in al.servers], cpu=al.cpu,
                                 mem=al.mem, routes=al.routes))
    return Solution(allocations=allocs)


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    """Set every variable of an offline/request model from ``solution`` (a feasible start;
    servers are renumbered first to satisfy the symmetry constraints, see :func:`canonical`)."""
    net = instance.net
    solution = canonical(model, instance, solution)
    for i in model.I:
        al = solution.allocations[i] if i < len(solution.allocations) else None
        chosen = {} if al is None else {s: (c, g) for s, c, g in
                                        zip(al.servers, al.cpu, al.mem, strict=True)}
        multi = al is not None and len(al.servers) >= 2
        model.acc[i].set_value(int(al is not None))
        model.u[i].set_value(int(multi))
        for s in model.S:
            c, g = chosen.get(s, (0, 0))
            model.x[i, s].set_value(int(s in chosen))
            model.a[i, s].set_value(c)
            model.g[i, s].set_value(g)
            model.v[i, s].set_value(int(multi and s in chosen))
        racks = {int(net.rack[s]) for s in chosen}
        for r in model.R:
            model.w[i, r].set_value(int(r in racks))
        used: set[tuple[int, int, int]] = set()
        if al is not None:
            for (s, t), p in zip(combinations(al.servers, 2), al.routes, strict=True):
                ra, rb = int(net.rack[s]), int(net.rack[t])
                if ra != rb:
                    used.add((min(ra, rb), max(ra, rb), p))
        links: set[int] = set()
        for (ii, ra, rb, p), var in model.z.items():
            if ii == i:
                on = (ra, rb, p) in used
                var.set_value(int(on))
                if on:
                    links.update(net.cand[(ra, rb)][p])
        for (ii, e), var in model.y.items():
            if ii == i:
                var.set_value(int(e in links))


# --------------------------------------------------------------------------------------------
# generators

#: request distributions (Appendix H). Values are pmfs {value: probability}.
#: uniform: c, m uniform on 1..UNIFORM_MAX (50, see below). Azure-like (stand-in for the
#: Azure/Protean VM trace [11]):
#: a VM's CPU is a fraction f of a 48-core machine, f in {1,2,4,8,16,24,48}/48, scaled by 50
#: (Appendix H) to 1, 2, 4, 8, 17, 25, 50 units; its memory is f * ratio * 50 with ratio in
#: {0.5, 1, 2} (memory-light, balanced, memory-heavy VM families). Alibaba-like (stand-in for the
#: Alibaba 2018 batch trace [32]): CPU in cores {0.5, 1, 2, 4} scaled by 50 and bounded to 100
#: units; memory in percent of a machine {1, 2, 4, 8} scaled by 5 (memory-light, as Table 2's
#: 0.24 memory utilisation shows).
DISTRIBUTIONS: dict[str, dict[str, Any]] = {
    "uniform": {"load": 0.95},
    "azure": {
        "load": 0.90,
        "cpu_fraction": {1 / 48: 0.10, 2 / 48: 0.30, 4 / 48: 0.25, 8 / 48: 0.17, 16 / 48: 0.10,
                         24 / 48: 0.05, 48 / 48: 0.03},
        "mem_ratio": {0.5: 0.5, 1.0: 0.4, 2.0: 0.1},
        "scale": 50,
    },
    "alibaba": {
        "load": 0.90,
        "cpu_cores": {0.5: 0.25, 1.0: 0.40, 2.0: 0.25, 4.0: 0.10},
        "mem_percent": {1.0: 0.25, 2.0: 0.30, 4.0: 0.30, 8.0: 0.15},
        "cpu_scale": 50,
        "mem_scale": 5,
    },
}

#: upper end of the uniform distribution's CPU and memory (units; a server has 10). The paper
#: does not state it (Appendix H bounds only the trace-derived sets, to 100 = 10 servers). Its
#: own statistics rule out 1..100: with c, m uniform on 1..100 only 25 % of requests fit in <= 5
#: servers even on an empty DC (max(ceil(c/10), ceil(m/10)) <= 5), yet section 5.3 says Tetris
#: spreads 1 % and Nara 17 % of their accepted requests over more than 5 servers at acceptance
#: 0.61 and 0.71, i.e. 0.60 and 0.59 of all requests placed on <= 5 servers, more than 0.25.
#: 1..50 (<= 5 servers' worth, every request fits 5 empty servers) is the largest round bound
#: consistent with that; ``max_units=100`` reproduces the earlier reading.
UNIFORM_MAX = 50

#: default episode length per shipped topology (section 5)
EPISODE = {"alpha": 128, "beta": 128, "gamma": 896, "delta": 4096}


def _pmf(rng: np.random.Generator, pmf: dict[float, float], size: int) -> np.ndarray:
    vals = np.array(list(pmf), dtype=float)
    p = np.array(list(pmf.values()), dtype=float)
    return vals[rng.choice(len(vals), size=size, p=p / p.sum())]


def _units(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x), 1, 100).astype(np.int64)


def _sizes(dist: str, rng: np.random.Generator, n: int, max_units: int = 50
           ) -> tuple[np.ndarray, np.ndarray]:
    d = DISTRIBUTIONS[dist]
    if dist == "uniform":
        return rng.integers(1, max_units + 1, n), rng.integers(1, max_units + 1, n)
    if dist == "azure":
        f = _pmf(rng, d["cpu_fraction"], n)
        ratio = _pmf(rng, d["mem_ratio"], n)
        return _units(f * d["scale"]), _units(f * ratio * d["scale"])
    cores = _pmf(rng, d["cpu_cores"], n)
    mem = _pmf(rng, d["mem_percent"], n)
    return _units(cores * d["cpu_scale"]), _units(mem * d["mem_scale"])


def mean_sizes(dist: str, max_units: int = 50) -> tuple[float, float]:
    """E[c], E[m] of a distribution, exactly (the pmfs enumerated; ``max_units`` is the
    uniform distribution's upper end)."""
    d = DISTRIBUTIONS[dist]
    if dist == "uniform":
        return (1 + max_units) / 2, (1 + max_units) / 2
    if dist == "azure":
        ec = sum(p * _units(np.array([f * d["scale"]]))[0] for f, p in d["cpu_fraction"].items())
        em = sum(p * q * _units(np.array([f * r * d["scale"]]))[0]
                 for f, p in d["cpu_fraction"].items() for r, q in d["mem_ratio"].items())
        return float(ec), float(em)
    ec = sum(p * _units(np.array([c * d["cpu_scale"]]))[0] for c, p in d["cpu_cores"].items())
    em = sum(p * _units(np.array([x * d["mem_scale"]]))[0] for x, p in d["mem_percent"].items())
    return float(ec), float(em)


def holding_mean(topology: Topology, dist: str, load: float, max_units: int = 50) -> float:
    """Mean holding period T giving average load ``load`` (module docstring)."""
    tc, tm = topology.totals()
    ec, em = mean_sizes(dist, max_units)
    return load * min(tc / ec if ec else math.inf, tm / em if em else math.inf)


def load_topology(name: str) -> Topology:
    """A shipped topology (``data/nara/topology-<name>.json``) or a preset built by
    :func:`.topology.fabric` when the data file is missing."""
    from dmlopt.errors import InstanceError
    from dmlopt.io import data_path, read_json
    from dmlopt.validation import parse

    path = data_path(f"nara/topology-{name}")
    data = read_json(path) if path is not None else \
        topo.preset(name) if name in topo.PRESETS else None
    if data is not None:
        t = parse(Topology, data, prefix="topology")
        try:
            return t.check()
        except ValueError as exc:
            raise InstanceError("", message=str(exc)) from None
    raise InstanceError("spec.topology", name,
                        f"is not a shipped topology ({', '.join(topo.PRESETS)})")


def _generate(dist: str, *, seed: int, topology: str, n_requests: int | None,
              load: float | None, k: int, max_units: int = UNIFORM_MAX) -> Instance:
    from dmlopt.errors import InstanceError

    topo_m = load_topology(topology)
    n = n_requests if n_requests is not None else EPISODE.get(topology, 128)
    if n < 1:
        raise InstanceError("spec.n_requests", n, "must be >= 1")
    load = DISTRIBUTIONS[dist]["load"] if load is None else load
    if not 0 < load <= 10:
        raise InstanceError("spec.load", load, "must be in (0, 10]")
    if not 1 <= max_units <= 100:
        raise InstanceError("spec.max_units", max_units, "must be in 1..100")
    rng = np.random.default_rng(seed)
    c, m = _sizes(dist, rng, n, max_units)
    b = rng.integers(10, 101, n) / 100.0
    T = holding_mean(topo_m, dist, load, max_units)
    hi = max(1, int(round(2 * T - 1)))
    t = rng.integers(1, hi + 1, n)
    reqs = [Request(c=int(c[i]), m=int(m[i]), b=float(b[i]), t=float(t[i])) for i in range(n)]
    return Instance(name=f"{topology}-{dist}-n{n}-s{seed}", topology=topo_m, requests=reqs,
                    k_paths=k)


def generate_uniform(*, seed: int = 0, topology: str = "alpha", n_requests: int | None = None,
                     load: float | None = None, k: int = 3,
                     max_units: int = UNIFORM_MAX) -> Instance:
    """Uniform requests (Appendix H): c, m on 1..``max_units`` (default 50, see
    :data:`UNIFORM_MAX`), b on 0.10..1.00, load 95 %."""
    return _generate("uniform", seed=seed, topology=topology, n_requests=n_requests, load=load,
                     k=k, max_units=max_units)


def generate_azure(*, seed: int = 0, topology: str = "alpha", n_requests: int | None = None,
                   load: float | None = None, k: int = 3) -> Instance:
    """Azure-like requests (stand-in, :data:`DISTRIBUTIONS`), load 90 %."""
    return _generate("azure", seed=seed, topology=topology, n_requests=n_requests, load=load,
                     k=k)


def generate_alibaba(*, seed: int = 0, topology: str = "alpha", n_requests: int | None = None,
                     load: float | None = None, k: int = 3) -> Instance:
    """Alibaba-like requests (stand-in, :data:`DISTRIBUTIONS`), load 90 %."""
    return _generate("alibaba", seed=seed, topology=topology, n_requests=n_requests,
                     load=load, k=k)


class TraceParams(Options):
    """Parameters of the trace-like generators (Appendix H, stand-ins of
    :data:`DISTRIBUTIONS`)."""

    topology: Literal["alpha", "beta", "gamma", "delta"] = pydantic.Field(
        default="alpha", description="shipped DCN of Table 8 (alpha, beta: 40 servers; gamma: "
        "640; delta: 2560)")
    n_requests: int | None = pydantic.Field(
        default=None, ge=1, description="episode length (requests, one per step); default: "
        "the paper's per topology (alpha, beta 128, gamma 896, delta 4096)")
    load: float | None = pydantic.Field(
        default=None, gt=0, le=10, description="average load setting the mean holding period "
        "(Little's law); default: the distribution's (0.95 uniform, 0.90 trace-like)")
    k: int = pydantic.Field(default=3, ge=1, le=16,
                            description="candidate paths per rack pair (Appendix G: 3)")


class UniformParams(TraceParams):
    """Parameters of the uniform generator (Appendix H)."""

    max_units: int = pydantic.Field(
        default=UNIFORM_MAX, ge=1, le=100, description="upper end of the uniform CPU and "
        "memory units per request (the paper leaves it open; 50, see UNIFORM_MAX)")


def generator_size(params: TraceParams) -> Size:
    """What a generator allocates and computes: the topology, then per request a few numpy
    draws and a validated :class:`Request` (about 1 KiB of Python objects with its JSON)."""
    n = params.n_requests if params.n_requests is not None else EPISODE[params.topology]
    p = topo.PRESETS[params.topology]
    nodes = int(p["racks"]) * (int(p["servers_per_rack"]) + int(p["fabrics_per_pod"])) + 256
    return Size(1024.0 * (n + nodes), 100.0 * (n + nodes))


GENERATORS: dict[str, Generator] = {
    "uniform": Generator(generate_uniform, UniformParams, generator_size,
                         "uniform requests (Appendix H): c, m on 1..max_units, load 95 %"),
    "azure": Generator(generate_azure, TraceParams, generator_size,
                       "Azure-like requests (stand-in for the Azure VM trace), load 90 %"),
    "alibaba": Generator(generate_alibaba, TraceParams, generator_size,
                         "Alibaba-like requests (stand-in for the Alibaba 2018 trace), load 90 %"),
}


def __getattr__(name: str) -> Any:
    """``NaraEnv`` (the Gymnasium environment of section 3.2, :mod:`.env`), imported on
    first use (it imports this module)."""
    if name == "NaraEnv":
        from dmlopt.models.nara.env import NaraEnv

        return NaraEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _configure_train(parser: Any) -> None:
    from dmlopt.heuristics.nara import learn as nara_learn

    parser.add_argument("problem", choices=["nara"], help="the problem whose policy is trained")
    nara_learn.configure(parser)


def _run_train(args: Any) -> int:
    from dmlopt.heuristics.nara import learn as nara_learn

    return nara_learn.run(args)


#: ``dmlopt train nara ...``: PPO training of the learned allocator (section 3.3, appendix E)
COMMANDS = {"train": Command("train", "train Nara's GNN policy with PPO (paper 001, section "
                             "3.3): dmlopt train nara --topology alpha --dataset uniform "
                             "--steps N --seed S -o policy.npz", _configure_train, _run_train)}


#: a tiny ``dmlopt.generate`` spec, 4 requests on the alpha topology: solves in about a
#: second with every formulation; tests/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "uniform", "n_requests": 4}
