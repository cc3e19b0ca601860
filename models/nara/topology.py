"""Fabric-style 3-tier DCN topologies and their candidate paths for Nara (paper 001).

Paper 001, section 4.2 and Appendices F-G: servers -> rack switches (tier 1) -> fabric switches
(tier 2) -> spine switches (tier 3), after Facebook's Fabric design [13]. A *pod* is a group of
racks connected to the same set of fabric switches ("neighbouring racks"); fabric switch i of every
pod connects to the spine switches of spine plane i.

Switch counts (not given in the paper; chosen to match Table 8's oversubscription, every server
10 CPU and 10 memory units, Appendix G's link bandwidths):

=========  =====  ============  ====  ===========  ===========  ============  =============
topology   racks  servers/rack  pods  fabric/pod   spine/plane  link bw       oversub.
                                                                (t1, t2, t3)  (srv-rack,
                                                                              rack-fabric)
=========  =====  ============  ====  ===========  ===========  ============  =============
alpha      4      10            2     2            1            (1, 1, 1)     10:2 = 5:1,
                                                                              2:1 = 2:1
beta       8      5             2     2            1            (1, 1, 1)     5:2, 4:1
gamma      16     40            4     4            2            (1, 2, 2)     40:8 = 5:1,
                                                                              8:4 = 2:1
delta      64     40            16    4            2            (1, 2, 2)     5:1, 2:1
=========  =====  ============  ====  ===========  ===========  ============  =============

Server-rack oversubscription = (sum of a rack's server links) / (sum of its uplinks); rack-fabric
oversubscription = (sum of a fabric switch's rack links) / (sum of its spine links).

Candidate paths (Appendix G, k-shortest paths with k = 3). Servers are leaves (one link, to their
rack switch), so every simple path between two servers in different racks is
``server link + a simple rack-to-rack path in the switch graph + server link``; two servers in the
same rack have exactly one simple path (through their rack switch). The candidates of a rack pair
are therefore computed once in the switch graph: the k shortest simple paths by hop count, ties
broken by the lexicographic order of the node-id sequence (deterministic, independent of any
library's internal order). Paths may transit other rack switches (plain k-shortest paths, as the
paper states; no valley-free routing rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: node kinds in tier order
KINDS = ("server", "rack", "fabric", "spine")

#: tier of a link by the kinds of its ends (1 server-rack, 2 rack-fabric, 3 fabric-spine, 0 other)
TIER = {
    frozenset(("server", "rack")): 1,
    frozenset(("rack", "fabric")): 2,
    frozenset(("fabric", "spine")): 3,
}

#: the paper's topologies (Table 8) with our switch counts (module docstring)
PRESETS: dict[str, dict[str, float | int]] = {
    "alpha": dict(racks=4, servers_per_rack=10, pods=2, fabrics_per_pod=2, spines_per_plane=1,
                  server_bw=1.0, rack_bw=1.0, spine_bw=1.0),
    "beta": dict(racks=8, servers_per_rack=5, pods=2, fabrics_per_pod=2, spines_per_plane=1,
                 server_bw=1.0, rack_bw=1.0, spine_bw=1.0),
    "gamma": dict(racks=16, servers_per_rack=40, pods=4, fabrics_per_pod=4, spines_per_plane=2,
                  server_bw=1.0, rack_bw=2.0, spine_bw=2.0),
    "delta": dict(racks=64, servers_per_rack=40, pods=16, fabrics_per_pod=4, spines_per_plane=2,
                  server_bw=1.0, rack_bw=2.0, spine_bw=2.0),
}

#: maximum number of path prefixes explored per source rack, over all its hop limits (guards
#: exotic topologies: a chain of switches needs one pass per hop limit; delta uses 924 with
#: k = 3, 25,944 with k = 16)
MAX_PATH_STEPS = 2_000_000


def fabric(
    *, racks: int, servers_per_rack: int, pods: int, fabrics_per_pod: int,
    spines_per_plane: int, server_bw: float = 1.0, rack_bw: float = 1.0, spine_bw: float = 1.0,
    cpu: int = 10, mem: int = 10, name: str = "",
) -> dict:
    """A Fabric-style 3-tier topology as a plain dict (the ``Topology`` schema of models.nara).

    Node order: servers (rack by rack), rack switches, fabric switches (pod by pod), spine
    switches (plane by plane). Links: every server to its rack; every rack to every fabric switch
    of its pod; fabric switch i of every pod to every spine of plane i.
    """
    if racks < 1 or servers_per_rack < 1 or pods < 1 or fabrics_per_pod < 1 \
            or spines_per_plane < 0 or racks % pods:
        from dmlopt.errors import InstanceError

        raise InstanceError("spec.racks/pods", (racks, pods),
                            "must be positive with racks a multiple of pods")
    n_srv = racks * servers_per_rack
    rack0 = n_srv
    fab0 = rack0 + racks
    n_fab = pods * fabrics_per_pod
    spine0 = fab0 + n_fab
    n_spine = fabrics_per_pod * spines_per_plane if pods > 1 else 0
    nodes = [{"kind": "server", "cpu": cpu, "mem": mem} for _ in range(n_srv)]
    nodes += [{"kind": "rack"} for _ in range(racks)]
    nodes += [{"kind": "fabric"} for _ in range(n_fab)]
    nodes += [{"kind": "spine"} for _ in range(n_spine)]
    links = []
    for s in range(n_srv):
        links.append({"u": s, "v": rack0 + s // servers_per_rack, "capacity": server_bw})
    per_pod = racks // pods
    for r in range(racks):
        p = r // per_pod
        for i in range(fabrics_per_pod):
            links.append({"u": rack0 + r, "v": fab0 + p * fabrics_per_pod + i,
                          "capacity": rack_bw})
    if n_spine:
        for p in range(pods):
            for i in range(fabrics_per_pod):
                for j in range(spines_per_plane):
                    links.append({"u": fab0 + p * fabrics_per_pod + i,
                                  "v": spine0 + i * spines_per_plane + j, "capacity": spine_bw})
    return {"name": name, "nodes": nodes, "links": links}


def preset(name: str) -> dict:
    """The topology ``name`` (alpha, beta, gamma, delta) built by :func:`fabric`."""
    return fabric(name=name, **PRESETS[name])  # type: ignore[arg-type]


@dataclass
class Net:
    """Arrays derived from a validated topology (servers and racks renumbered from 0).

    ``server_node[s]`` is the node id of server s; ``rack[s]`` its rack index; ``access[s]`` the
    index of its link; ``cand[(ra, rb)]`` (ra < rb) the candidate rack-to-rack paths as tuples of
    link indices; ``paths`` the same padded into an array of shape (R, R, k, maxlen) with the
    sentinel link index ``n_links`` (whose free bandwidth is +inf) and ``n_cand[ra, rb]`` the
    number of candidates.
    """

    n_nodes: int
    kind: list[str]
    server_node: np.ndarray
    cpu: np.ndarray
    mem: np.ndarray
    rack_node: np.ndarray
    rack: np.ndarray
    access: np.ndarray
    link_u: np.ndarray
    link_v: np.ndarray
    cap: np.ndarray
    tier: np.ndarray
    k: int
    cand: dict[tuple[int, int], list[tuple[int, ...]]] = field(default_factory=dict)
    paths: np.ndarray = field(default_factory=lambda: np.zeros(0))
    n_cand: np.ndarray = field(default_factory=lambda: np.zeros(0))
    neighbour: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rack_servers: list[np.ndarray] = field(default_factory=list)

    @property
    def n_servers(self) -> int:
        return len(self.server_node)

    @property
    def n_racks(self) -> int:
        return len(self.rack_node)

    @property
    def n_links(self) -> int:
        return len(self.cap)

    def candidates(self, ra: int, rb: int) -> list[tuple[int, ...]]:
        """Candidate rack-level paths (link indices) between racks ``ra`` and ``rb``."""
        if ra == rb:
            return [()]
        return self.cand[(ra, rb) if ra < rb else (rb, ra)]

    def pair_links(self, s: int, t: int, idx: int) -> tuple[int, ...]:
        """Links of candidate ``idx`` between servers s and t (access links included)."""
        mid = self.candidates(int(self.rack[s]), int(self.rack[t]))[idx]
        return (int(self.access[s]), *mid, int(self.access[t]))


def build_net(nodes: list[tuple[str, int, int]], links: list[tuple[int, int, float]],
              k: int) -> Net:
    """Derive :class:`Net` from (kind, cpu, mem) nodes and (u, v, capacity) links.

    The topology must already be validated (servers are leaves attached to a rack switch).
    """
    kind = [n[0] for n in nodes]
    server_node = np.array([i for i, kd in enumerate(kind) if kd == "server"], dtype=np.int64)
    rack_node = np.array([i for i, kd in enumerate(kind) if kd == "rack"], dtype=np.int64)
    rack_of_node = {int(v): r for r, v in enumerate(rack_node)}
    lu = np.array([lk[0] for lk in links], dtype=np.int64)
    lv = np.array([lk[1] for lk in links], dtype=np.int64)
    cap = np.array([lk[2] for lk in links], dtype=float)
    tier = np.array([TIER.get(frozenset((kind[a], kind[b])), 0) for a, b in zip(lu, lv,
                                                                                 strict=True)],
                    dtype=np.int64)
    srv_index = {int(v): s for s, v in enumerate(server_node)}
    access = np.zeros(len(server_node), dtype=np.int64)
    rack = np.zeros(len(server_node), dtype=np.int64)
    adj: dict[int, list[tuple[int, int]]] = {}
    for e, (a, b) in enumerate(zip(lu.tolist(), lv.tolist(), strict=True)):
        if a in srv_index or b in srv_index:
            s_node, sw = (a, b) if a in srv_index else (b, a)
            access[srv_index[s_node]] = e
            rack[srv_index[s_node]] = rack_of_node[sw]
            continue
        adj.setdefault(a, []).append((b, e))
        adj.setdefault(b, []).append((a, e))
    for a in adj:
        adj[a].sort()
    net = Net(
        n_nodes=len(nodes), kind=kind, server_node=server_node,
        cpu=np.array([nodes[v][1] for v in server_node], dtype=np.int64),
        mem=np.array([nodes[v][2] for v in server_node], dtype=np.int64),
        rack_node=rack_node, rack=rack, access=access, link_u=lu, link_v=lv, cap=cap,
        tier=tier, k=k,
    )
    net.rack_servers = [np.flatnonzero(rack == r) for r in range(len(rack_node))]
    _candidate_paths(net, adj, rack_of_node)
    # neighbouring racks: connected to the same (non-empty) set of switches (section 4.2)
    ups = [frozenset(b for b, _ in adj.get(int(v), [])) for v in rack_node]
    R = len(rack_node)
    net.neighbour = np.array([[bool(ups[a]) and ups[a] == ups[b] for b in range(R)]
                              for a in range(R)], dtype=bool).reshape(R, R)
    return net


def _candidate_paths(net: Net, adj: dict[int, list[tuple[int, int]]],
                     rack_of_node: dict[int, int]) -> None:
    R, k = net.n_racks, net.k
    found: dict[tuple[int, int], list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = {}
    for ra in range(R):
        src = int(net.rack_node[ra])
        targets = {rb for rb in range(ra + 1, R)}
        if not targets:
            continue
        per: dict[int, list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = {
            rb: [] for rb in targets}
        limit = 0
        max_len = max(len(adj), 1)
        budget = [MAX_PATH_STEPS]
        while limit < max_len:
            limit = _next_limit(limit)
            for rb in targets:
                per[rb].clear()
            exhausted = _enumerate(src, adj, rack_of_node, limit, per, ra, budget)
            if exhausted or all(len(per[rb]) >= k for rb in targets):
                break
        for rb in targets:
            paths = sorted(per[rb])
            found[(ra, rb)] = paths[:k]
    net.cand = {key: [p[2] for p in v] for key, v in found.items()}
    maxlen = max((len(p) for v in net.cand.values() for p in v), default=0)
    L = net.n_links
    arr = np.full((R, R, max(k, 1), max(maxlen, 1)), L, dtype=np.int64)
    n_cand = np.zeros((R, R), dtype=np.int64)
    for (a, b), plist in net.cand.items():
        n_cand[a, b] = n_cand[b, a] = len(plist)
        for i, p in enumerate(plist):
            arr[a, b, i, :len(p)] = p
            arr[b, a, i, :len(p)] = p
    net.paths = arr
    net.n_cand = n_cand


def _next_limit(limit: int) -> int:
    return 4 if limit == 0 else limit + 2


def _enumerate(src: int, adj: dict[int, list[tuple[int, int]]], rack_of_node: dict[int, int],
               limit: int, per: dict, ra: int, budget: list[int] | None = None) -> bool:
    """All simple paths from ``src`` of at most ``limit`` hops ending at a rack switch.

    Returns True when the enumeration was exhaustive (no path was cut by the limit).
    ``budget``: the steps left to this source rack (:data:`MAX_PATH_STEPS` over all its hop
    limits), decreased in place.
    """
    exhaustive = True
    budget = budget if budget is not None else [MAX_PATH_STEPS]
    steps = MAX_PATH_STEPS - budget[0]
    stack: list[tuple[int, list[int], list[int]]] = [(src, [src], [])]
    on_path = {src}
    # iterative DFS with explicit on-path bookkeeping
    it_stack = [iter(adj.get(src, []))]
    nodes_path = [src]
    links_path: list[int] = []
    del stack
    while it_stack:
        nxt = next(it_stack[-1], None)
        if nxt is None:
            it_stack.pop()
            on_path.discard(nodes_path.pop())
            if links_path:
                links_path.pop()
            continue
        b, e = nxt
        if b in on_path:
            continue
        steps += 1
        if steps > MAX_PATH_STEPS:
            from dmlopt.errors import InstanceError

            raise InstanceError("topology.links", f"{len(adj)} switches",
                                "has too many candidate paths to enumerate")
        budget[0] -= 1
        nodes_path.append(b)
        links_path.append(e)
        on_path.add(b)
        rb = rack_of_node.get(b)
        if rb is not None and rb in per:
            per[rb].append((len(links_path), tuple(nodes_path), tuple(links_path)))
        if len(links_path) < limit:
            it_stack.append(iter(adj.get(b, [])))
        else:
            if any(c not in on_path for c, _ in adj.get(b, [])):
                exhaustive = False
            on_path.discard(nodes_path.pop())
            links_path.pop()
    return exhaustive
