"""Nara (paper 001): the topology, requests, instance and solution (section 3.1, appendix H)."""

from __future__ import annotations

from functools import cached_property
from typing import Literal

import numpy as np
import pydantic

from dmlopt.contract import Size
from dmlopt.models.nara import topology as topo
from dmlopt.models.nara.constants import MAX_UNITS
from dmlopt.validation import Frozen, rule


class Node(Frozen):
    """A DCN node: a server (with CPU and memory) or a switch (rack, fabric, spine)."""

    kind: Literal["server", "rack", "fabric", "spine"]
    cpu: int = pydantic.Field(default=0, ge=0, le=MAX_UNITS)
    mem: int = pydantic.Field(default=0, ge=0, le=MAX_UNITS)


class Link(Frozen):
    """An undirected link with its bandwidth capacity."""

    u: int = pydantic.Field(ge=0)
    v: int = pydantic.Field(ge=0)
    capacity: float = pydantic.Field(gt=0, le=MAX_UNITS, allow_inf_nan=False)


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

    c: int = pydantic.Field(ge=0, le=MAX_UNITS)
    m: int = pydantic.Field(ge=0, le=MAX_UNITS)
    b: float = pydantic.Field(ge=0, le=MAX_UNITS, allow_inf_nan=False)
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
