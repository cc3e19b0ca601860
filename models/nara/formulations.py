"""Nara (paper 001): the offline MILPs (an upper bound on any online allocator) and the
per-request MILP."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from dmlopt.contract import Formulation
from dmlopt.models.nara import topology as topo
from dmlopt.models.nara.constants import BW_TOL
from dmlopt.models.nara.instance import Allocation, Instance, Request, Solution

# --------------------------------------------------------------------------------------------
# exact formulations


def _model(net: topo.Net, reqs: list[Request], active: list[list[int]], cpu_free: np.ndarray,
           mem_free: np.ndarray, bw_free: np.ndarray, objective: str, name: str,
           symmetry: bool = False, cuts: str = "basic") -> Any:
    """The MILP over requests ``reqs`` (indexed 0..len-1) with capacities checked at every set
    of ``active`` requests; ``objective`` "count" (maximise accepted) or "cost" (one request:
    accept, then fewest charged links, then fewest servers). ``cuts``: "none" (the plain
    model), "basic" (server-count cuts) or "strong" (also the cuts of :func:`_strong_cuts`).

    Built in the order of section 3.1: index sets and variables (:func:`_variables`), the
    servers' CPU and memory (constraints 1-2, :func:`_server_rows`, with the server-count cuts
    of :func:`_server_count_cuts`), the paths between the racks used (constraint 3,
    :func:`_path_rows`), the capacities at every step (:func:`_capacity_rows`), then the
    optional cuts, symmetry constraints (:func:`_symmetry_rows`) and the objective
    (:func:`_objective`).
    """
    import pyomo.environ as pyo

    m = pyo.ConcreteModel(name=name)
    link_users, z_of = _variables(m, net, reqs, cpu_free, mem_free, bw_free,
                                  single=objective == "cost")
    need = _server_rows(m, net, reqs, cpu_free, mem_free, cuts)
    _path_rows(m, link_users, z_of)
    links = _capacity_rows(m, net, reqs, active, cpu_free, mem_free, bw_free, link_users)
    if cuts == "strong":
        _strong_cuts(m, net, reqs, active, need, cpu_free, mem_free, bw_free)
    if symmetry:
        _symmetry_rows(m, net, len(reqs), cpu_free, mem_free, bw_free)
    _objective(m, objective, net.n_servers, len(links))
    m._nara = {"reqs": reqs}
    return m


def _variables(m: Any, net: topo.Net, reqs: list[Request], cpu_free: np.ndarray,
               mem_free: np.ndarray, bw_free: np.ndarray, single: bool
               ) -> tuple[dict[tuple[int, int], list[tuple[int, int, int, int]]],
                          dict[tuple[int, int, int], list[int]]]:
    """Index sets and variables of :func:`_model` on ``m``; returns (link_users, z_of): the
    path binaries charging link e for request i, and the candidate paths of (i, ra, rb)."""
    import pyomo.environ as pyo

    S, R = net.n_servers, net.n_racks
    n = len(reqs)
    m.I = pyo.RangeSet(0, n - 1)
    m.S = pyo.RangeSet(0, S - 1)
    m.R = pyo.RangeSet(0, R - 1)
    # candidate paths usable: all of them offline; those with >= b free on every link online
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
    return link_users, z_of


def _server_rows(m: Any, net: topo.Net, reqs: list[Request], cpu_free: np.ndarray,
                 mem_free: np.ndarray, cuts: str) -> list[int]:
    """Section 3.1 constraints 1-2 (the servers' CPU and memory cover an accepted request),
    multi-server requests and their access links, the server-count cuts and the racks used;
    returns need_i, the fewest servers request i can use (1 throughout when ``cuts`` is
    "none")."""
    import pyomo.environ as pyo

    S = net.n_servers
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
    need = _server_count_cuts(m, reqs, cpu_free, mem_free, cuts)
    m.rack = pyo.Constraint(m.I, m.S, rule=lambda m, i, s: m.w[i, int(net.rack[s])] >= m.x[i, s])
    return need


def _server_count_cuts(m: Any, reqs: list[Request], cpu_free: np.ndarray,
                       mem_free: np.ndarray, cuts: str) -> list[int]:
    """Valid cuts: a request no single server can hold uses >= ceil(c / max free) servers (and
    is multi-server, charging each chosen server's access link); returns those counts."""
    import pyomo.environ as pyo

    n, S = len(reqs), len(m.S)
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
    return need


def _path_rows(m: Any, link_users: dict[tuple[int, int], list[tuple[int, int, int, int]]],
               z_of: dict[tuple[int, int, int], list[int]]) -> None:
    """Section 3.1 constraint 3: a candidate path for every pair of racks used, and every link
    of a chosen path charged (once per request: the union rule)."""
    import pyomo.environ as pyo

    def pair_rule(m, i, ra, rb):
        ps = z_of.get((i, ra, rb), [])
        return sum(m.z[i, ra, rb, p] for p in ps) >= m.w[i, ra] + m.w[i, rb] - 1

    m.pair = pyo.Constraint(m.PAIR, rule=pair_rule)
    m.charge = pyo.Constraint(
        [(i, e, ra, rb, p) for (i, e), us in link_users.items() for (_, ra, rb, p) in us],
        rule=lambda m, i, e, ra, rb, p: m.y[i, e] >= m.z[i, ra, rb, p])


def _capacity_rows(m: Any, net: topo.Net, reqs: list[Request], active: list[list[int]],
                   cpu_free: np.ndarray, mem_free: np.ndarray, bw_free: np.ndarray,
                   link_users: dict[tuple[int, int], list[tuple[int, int, int, int]]]
                   ) -> list[int]:
    """The capacities at every step with active requests: CPU and memory per server, bandwidth
    per access link and per other link (section 3.1's "enough free"); returns the links
    (other than access links) that some path may charge."""
    import pyomo.environ as pyo

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
    return links


def _symmetry_rows(m: Any, net: topo.Net, n: int, cpu_free: np.ndarray, mem_free: np.ndarray,
                   bw_free: np.ndarray) -> None:
    """Identical servers of a rack (same free CPU, memory, access bandwidth) are
    interchangeable over the whole episode: number them by first use, so server k+1 of a rack
    serves request i only if server k served some request <= i."""
    import pyomo.environ as pyo

    chain = []
    for r in range(net.n_racks):
        srv = net.rack_servers[r]
        for s0, s1 in zip(srv[:-1], srv[1:], strict=True):
            e0, e1 = int(net.access[s0]), int(net.access[s1])
            if (cpu_free[s0], mem_free[s0], bw_free[e0]) == (cpu_free[s1], mem_free[s1],
                                                              bw_free[e1]):
                chain.append((int(s0), int(s1)))
    m.CHAIN = pyo.Set(initialize=[(i, a, b) for i in range(n) for a, b in chain], dimen=3)
    m.first_use = pyo.Constraint(
        m.CHAIN, rule=lambda m, i, a, b: m.x[i, b] <= sum(m.x[h, a] for h in range(i + 1)))


def _objective(m: Any, objective: str, S: int, n_links: int) -> None:
    """The objective: "count" maximises the accepted requests (section 3.1's objective over
    the episode); "cost" (one request, ours for the allocator ``milp``) accepts first, then
    charges the fewest links, then uses the fewest servers, as one weighted sum (each level
    outweighs the next)."""
    import pyomo.environ as pyo

    if objective == "count":
        m.obj = pyo.Objective(expr=sum(m.acc[i] for i in m.I), sense=pyo.maximize)
    else:
        big = (S + 1) * (S + n_links + 1)
        m.obj = pyo.Objective(
            expr=big * (1 - sum(m.acc[i] for i in m.I))
            + (S + 1) * (sum(m.v[i, s] for i in m.I for s in m.S)
                         + sum(m.y[i, e] for i, e in m.Y))
            + sum(m.x[i, s] for i in m.I for s in m.S),
            sense=pyo.minimize)


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


#: episodes of at most this many requests get the ``schedule`` bound as the objective cut of
#: formulation "offline"; longer ones the ``aggregate`` bound
CUT_SCHEDULE_REQUESTS = 64

#: seconds of the bound computed for the objective cut (a stopped bound is still valid)
CUT_SECONDS = 30.0


def objective_cut(instance: Instance) -> float:
    """An upper bound on the accepted requests of ``instance``, for the objective cut
    ``sum_i acc_i <= U`` of formulation "offline".

    Parameters
    ----------
    instance : Instance
        A Nara episode.

    Returns
    -------
    float
        U: the ``schedule`` bound (per-server schedules, column generation) for episodes of at
        most :data:`CUT_SCHEDULE_REQUESTS` requests, else the ``aggregate`` bound, each with
        :data:`CUT_SECONDS` seconds and one thread (:mod:`dmlopt.models.nara.bounds`; both
        are valid at any stop, moved up by the safety margin of :func:`dmlopt.bounds.safe` and
        rounded down to an integer). Under ``dmlopt.solve``'s time limit the bound gets at
        most half the time left (:func:`dmlopt.solvers.build_seconds`).

    References
    ----------
    Ours: a valid objective cut from a relaxation (L. A. Wolsey, *Integer Programming*, 2nd
    ed., 2020, section 2.2): the MILP's own LP relaxation does not see the per-server schedules
    over time (its LP value on the 32-request alpha episodes is about 29.5), the cut gives
    its branch and bound the stronger bound from the start.
    """
    from dmlopt import solvers
    from dmlopt.models.nara import bounds as nb

    seconds = solvers.build_seconds(CUT_SECONDS)
    if len(instance.requests) <= CUT_SCHEDULE_REQUESTS:
        return nb.schedule_bound(instance, time_limit=seconds, primal=False).bound
    return nb.aggregate_bound(instance, time_limit=seconds, primal=False).bound


def build_offline(instance: Instance, cuts: str = "strong") -> Any:
    """The offline MILP: maximise the accepted requests of the whole episode (formulation
    "offline"; an upper bound on every online allocator).

    All requests are known in advance; the capacities of section 3.1 hold at every step (the
    requests active at that step share them), the union rule charges a link once per request,
    one candidate path per rack pair used.

    Parameters
    ----------
    instance : Instance
        A Nara episode (its DCN and requests; every server and link starts free).
    cuts : {"strong", "basic", "none"}, default "strong"
        "strong" (formulation "offline"): the server-count cuts, the symmetry constraints, the
        cuts of :func:`_strong_cuts` and the objective cut ``sum_i acc_i <= U`` of
        :func:`objective_cut` (up to :data:`CUT_SECONDS` seconds of bound computation while
        building); "basic" ("offline-basic"): the server-count cuts and the symmetry
        constraints only; "none" ("offline-plain"): neither.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Binaries ``acc[i]`` (accepted), ``x[i, s]`` (server s serves i), ``u[i]``
        (multi-server), ``z[i, ra, rb, p]`` (path p between racks ra, rb); integers ``a[i, s]``,
        ``g[i, s]`` (CPU, memory taken); ``v[i, s]``, ``w[i, r]``, ``y[i, e]`` (access link,
        rack, link used) in [0, 1]; objective ``obj`` = sum_i acc_i (maximised).

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1: the allocation problem, constraints 1-2 (CPU and
    memory) and 3 (a path with b free between every pair of servers). Ours: the offline model
    itself (the paper has no offline optimum), the rack-level routing, the valid cuts and the
    symmetry constraints (module docstring of :mod:`dmlopt.models.nara`, "Exact models";
    tests/nara/test_offline.py proves the three cut levels reach the same optimum).
    """
    import pyomo.environ as pyo

    net = instance.net
    m = _model(net, list(instance.requests), instance.active_sets(), net.cpu, net.mem,
               net.cap, "count", f"nara_offline_{instance.name}", symmetry=cuts != "none",
               cuts=cuts)
    if cuts == "strong":
        m.bound_cut = pyo.Constraint(expr=sum(m.acc[i] for i in m.I) <= objective_cut(instance))
    return m


def build_offline_basic(instance: Instance) -> Any:
    """The offline MILP with the server-count cuts and the rack symmetry constraints only
    (formulation "offline-basic").

    Parameters
    ----------
    instance : Instance
        A Nara episode (every server and link starts free).

    Returns
    -------
    pyomo.environ.ConcreteModel
        :func:`build_offline` with ``cuts="basic"``: no strong cuts, no objective cut.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1, constraints 1-3. Ours: the offline model, the
    cuts "a request no single server holds uses >= ceil(c / max free) servers and charges
    their access links" and the first-use numbering of identical servers of a rack.
    """
    return build_offline(instance, "basic")


def build_offline_plain(instance: Instance) -> Any:
    """The offline MILP without any valid inequality or symmetry constraint (formulation
    "offline-plain": the reference the other offline formulations are tested against).

    Parameters
    ----------
    instance : Instance
        A Nara episode (every server and link starts free).

    Returns
    -------
    pyomo.environ.ConcreteModel
        :func:`build_offline` with ``cuts="none"``.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1, constraints 1-3 over the whole episode. Ours:
    the offline model and its rack-level routing (one candidate path per rack pair, which the
    union charging rule makes lossless).
    """
    return build_offline(instance, "none")


def build_request_model(instance: Instance, index: int, cpu_free: np.ndarray,
                        mem_free: np.ndarray, bw_free: np.ndarray,
                        objective: str = "cost") -> Any:
    """The per-request MILP of section 3.1 for request ``index`` in a state.

    Parameters
    ----------
    instance : Instance
        The Nara episode.
    index : int
        The request (0-based arrival index).
    cpu_free, mem_free : numpy.ndarray
        Free CPU and memory units per server in the state.
    bw_free : numpy.ndarray
        Free bandwidth per link (fraction of a server-rack link); candidate paths with less
        than the request's b on a link are left out.
    objective : {"cost", "count"}, default "cost"
        "cost": accept it, then fewest charged links, then fewest servers (what the allocator
        ``milp`` minimises); "count": maximise acceptance only.

    Returns
    -------
    pyomo.environ.ConcreteModel
        The model of :func:`build_offline` over this one request, capacities the state's.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1, constraints 1-3 for one request. Ours: the
    lexicographic "cost" objective as one weighted sum.
    """
    return _model(instance.net, [instance.requests[index]], [[0]], cpu_free, mem_free, bw_free,
                  objective, f"nara_request_{instance.name}_{index}")


def build_request(instance: Instance) -> Any:
    """The per-request MILP of request 0 on the empty DC, objective "accept it" (formulation
    "request").

    Its optimum is 1 if request 0 fits the empty DC, else 0; the evaluator then sees that
    request accepted and the others dropped. The allocator ``milp`` builds the same model at
    every arrival with the state's free capacities (:func:`build_request_model`).

    Parameters
    ----------
    instance : Instance
        A Nara episode; only its DCN and first request enter the model.

    Returns
    -------
    pyomo.environ.ConcreteModel
        :func:`build_request_model` for request 0 with every server and link free and
        objective "count".

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1: the per-request allocation problem, constraints
    1-3.
    """
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
        "offline MILP of the whole episode with the strong valid cuts and the schedule "
        "(or aggregate) bound as objective cut (upper bound on every online allocator)"),
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
