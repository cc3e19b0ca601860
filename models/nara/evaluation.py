"""Nara (paper 001): the evaluator (constraints 1-3 of section 3.1, acceptance ratio)."""

from __future__ import annotations

import heapq
import math
from itertools import combinations
from typing import Any

from dmlopt.evaluation import Evaluation
from dmlopt.models.nara import topology as topo
from dmlopt.models.nara.constants import BW_TOL
from dmlopt.models.nara.instance import Allocation, Instance, Request, Solution

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
