"""The Nara MILP builder split by section 3.1's structure writes the same model as the single
function it replaced: the LP files of both agree character for character on seeded episodes,
for every objective, cut level and symmetry setting.

``_old_model`` is the previous implementation, kept verbatim as the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dmlopt
from dmlopt.models.nara import topology as topo
from dmlopt.models.nara.constants import BW_TOL
from dmlopt.models.nara.formulations import _model, _strong_cuts
from dmlopt.models.nara.instance import Request


def _old_model(net: topo.Net, reqs: list[Request], active: list[list[int]], cpu_free: np.ndarray,
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


def _lp(model: Any, path) -> str:
    model.write(str(path), format="lp", io_options={"symbolic_solver_labels": True})
    return path.read_text()


def _episode(generator: str, seed: int, n: int) -> Any:
    return dmlopt.generate("nara", {"generator": generator, "n_requests": n}, seed=seed)


@pytest.mark.parametrize(("generator", "seed"), [("uniform", 0), ("azure", 3), ("alibaba", 5)])
@pytest.mark.parametrize(("cuts", "symmetry"), [("none", False), ("basic", True),
                                                ("strong", True), ("strong", False)])
def test_offline_model_is_unchanged(tmp_path, generator, seed, cuts, symmetry):
    inst = _episode(generator, seed, 5)
    net = inst.net
    args = (net, list(inst.requests), inst.active_sets(), net.cpu, net.mem, net.cap, "count",
            "nara_offline_t")
    new = _lp(_model(*args, symmetry=symmetry, cuts=cuts), tmp_path / "new.lp")
    old = _lp(_old_model(*args, symmetry=symmetry, cuts=cuts), tmp_path / "old.lp")
    assert new == old
    assert "cap_cpu" in new and "pair" in new


@pytest.mark.parametrize("seed", [1, 2])
def test_request_model_is_unchanged_on_a_loaded_state(tmp_path, seed):
    """The per-request model ("cost" objective) on free capacities a random state left: paths
    with too little free bandwidth are dropped (links at exactly b kept), capacities are the
    state's."""
    inst = _episode("uniform", seed, 3)
    net = inst.net
    rng = np.random.default_rng(seed)
    cpu = np.maximum(net.cpu - rng.integers(0, 8, size=net.cpu.shape), 0)
    mem = np.maximum(net.mem - rng.integers(0, 8, size=net.mem.shape), 0)
    draw = rng.uniform(size=net.cap.shape)
    for index in range(len(inst.requests)):
        b = inst.requests[index].b
        # a third of the links with exactly b free (kept), a third just below (dropped)
        bw = np.where(draw < 1 / 3, b, np.where(draw < 2 / 3, b - 0.01, net.cap))
        args = ([inst.requests[index]], [[0]], cpu, mem, bw, "cost", f"nara_request_{index}")
        new = _lp(_model(net, *args), tmp_path / "new.lp")
        old = _lp(_old_model(net, *args), tmp_path / "old.lp")
        assert new == old
