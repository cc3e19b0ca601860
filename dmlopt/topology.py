"""Data-centre underlay topologies as networkx graphs, shared by every problem that needs one.

Each generator returns an undirected :class:`networkx.Graph` whose nodes carry two attributes:

``kind``
    ``"server"`` or ``"switch"`` (servers host VMs; switches only forward).
``layer``
    where the node sits: ``"core"``, ``"aggregation"``, ``"edge"`` (fat-tree), ``"leaf"``,
    ``"spine"`` (leaf-spine), ``"dcell0"`` (the switch of a DCell_0 unit) or ``"server"``.

Node names are short strings that spell the position (``"h1.0.1"`` is server 1 under edge switch
0 of pod 1), so a graph exported to JSON stays readable. The graph attribute ``name`` describes
the topology. Helpers: :func:`servers` (the server nodes in a stable order), :func:`hop_matrix`
(shortest hop counts between chosen nodes), :func:`clusters` (servers grouped by the switch they
attach to, the "cluster" of paper 000, section IV-B) and :func:`edge_list`.

References
----------
* Al-Fares, Loukissas, Vahdat: A scalable, commodity data center network architecture
  (SIGCOMM 2008): the k-ary fat-tree, k^3/4 servers and 5k^2/4 switches.
* Guo et al.: DCell: a scalable and fault-tolerant network structure for data centers
  (SIGCOMM 2008): DCell_k built recursively from DCell_0 (n servers on one switch).
* Paper 000 (An, Wu, Huang), section V-A: the 4-ary fat-tree and "DCell 1-4" (DCell_1 with n = 4:
  five DCell_0 units of four servers and a switch, 20 servers) used as ground truth.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import networkx as nx
import numpy as np

#: largest topology built (servers + switches), so a typo cannot exhaust memory
MAX_NODES = 200_000


def _check_size(total: int, what: str) -> None:
    if total > MAX_NODES:
        raise ValueError(f"{what}: {total} nodes is above the limit {MAX_NODES}")


def fat_tree(k: int = 4) -> nx.Graph:
    """The k-ary fat-tree of Al-Fares et al.

    ``(k/2)^2`` core switches, ``k`` pods of ``k/2`` aggregation and ``k/2`` edge switches, and
    ``k/2`` servers under each edge switch: ``k^3/4`` servers and ``5k^2/4`` switches (k = 4: 16
    servers, 20 switches). Aggregation switch ``i`` of every pod connects to core switches
    ``i*k/2 .. i*k/2 + k/2 - 1``. Hop counts between servers: 2 under the same edge switch, 4 in
    the same pod, 6 across pods.

    Parameters
    ----------
    k : even integer >= 2, the switch port count.

    Returns
    -------
    networkx.Graph with nodes ``c{j}`` (core), ``a{pod}.{i}``, ``e{pod}.{i}``, ``h{pod}.{e}.{s}``.
    """
    if not isinstance(k, int) or k < 2 or k % 2:
        raise ValueError(f"k: {k!r} must be an even integer >= 2")
    h = k // 2
    _check_size(k**3 // 4 + 5 * k * k // 4, "fat_tree")
    g = nx.Graph(name=f"fat-tree k={k}")
    for j in range(h * h):
        g.add_node(f"c{j}", kind="switch", layer="core")
    for pod in range(k):
        for i in range(h):
            agg, edge = f"a{pod}.{i}", f"e{pod}.{i}"
            g.add_node(agg, kind="switch", layer="aggregation")
            g.add_node(edge, kind="switch", layer="edge")
            for j in range(h):
                g.add_edge(agg, f"c{i * h + j}")
        for i in range(h):
            for j in range(h):
                g.add_edge(f"e{pod}.{i}", f"a{pod}.{j}")
            for s in range(h):
                host = f"h{pod}.{i}.{s}"
                g.add_node(host, kind="server", layer="server")
                g.add_edge(host, f"e{pod}.{i}")
    return g


def dcell(n: int = 4, level: int = 1) -> nx.Graph:
    """DCell_level built from DCell_0 units of ``n`` servers on one switch (Guo et al.).

    DCell_l consists of ``g_l = t_{l-1} + 1`` copies of DCell_{l-1} (``t_{l-1}`` servers each);
    for every pair of copies ``i < j`` server ``j - 1`` of copy ``i`` is linked directly to server
    ``i`` of copy ``j``. DCell_1 with ``n = 4`` (paper 000's "DCell 1-4") has 5 units, 20 servers
    and 5 switches; servers in one unit are 2 hops apart, directly linked servers 1 hop.

    Parameters
    ----------
    n : servers per DCell_0 (>= 2).
    level : recursion level (>= 0; DCell_0 is one switch with its n servers).

    Returns
    -------
    networkx.Graph with servers ``s{a_l}.....{a_0}`` and switches ``w{a_l}.....{a_1}`` (``w`` for
    level 0).
    """
    if not isinstance(n, int) or n < 2:
        raise ValueError(f"n: {n!r} must be an integer >= 2")
    if not isinstance(level, int) or level < 0:
        raise ValueError(f"level: {level!r} must be an integer >= 0")
    t = n
    for _ in range(level):
        t = t * (t + 1)
        _check_size(t, "dcell")
    g = nx.Graph(name=f"dcell n={n} level={level}")

    def build(prefix: tuple[int, ...], lev: int) -> list[str]:
        tag = ".".join(map(str, prefix))
        if lev == 0:
            switch = f"w{tag}"
            g.add_node(switch, kind="switch", layer="dcell0")
            hosts = [f"s{tag}.{a}" if tag else f"s{a}" for a in range(n)]
            for host in hosts:
                g.add_node(host, kind="server", layer="server")
                g.add_edge(host, switch)
            return hosts
        sub = build(prefix + (0,), lev - 1)
        copies = [sub] + [build(prefix + (i,), lev - 1) for i in range(1, len(sub) + 1)]
        for i in range(len(copies)):
            for j in range(i + 1, len(copies)):
                g.add_edge(copies[i][j - 1], copies[j][i])
        return [host for copy in copies for host in copy]

    build((), level)
    return g


def leaf_spine(leaves: int = 4, spines: int = 2, servers_per_leaf: int = 4) -> nx.Graph:
    """A two-tier leaf-spine (folded Clos): every leaf switch links to every spine switch.

    Servers are 2 hops apart under the same leaf and 4 hops apart otherwise.

    Returns
    -------
    networkx.Graph with nodes ``s{i}`` (spines), ``l{i}`` (leaves), ``h{leaf}.{i}`` (servers).
    """
    for name, val in (("leaves", leaves), ("spines", spines),
                      ("servers_per_leaf", servers_per_leaf)):
        if not isinstance(val, int) or val < 1:
            raise ValueError(f"{name}: {val!r} must be a positive integer")
    _check_size(leaves * (servers_per_leaf + 1) + spines, "leaf_spine")
    g = nx.Graph(name=f"leaf-spine {leaves}x{spines}x{servers_per_leaf}")
    for s in range(spines):
        g.add_node(f"s{s}", kind="switch", layer="spine")
    for leaf in range(leaves):
        g.add_node(f"l{leaf}", kind="switch", layer="leaf")
        for s in range(spines):
            g.add_edge(f"l{leaf}", f"s{s}")
        for i in range(servers_per_leaf):
            host = f"h{leaf}.{i}"
            g.add_node(host, kind="server", layer="server")
            g.add_edge(host, f"l{leaf}")
    return g


#: name -> generator, for specs such as ``{"topology": "fat-tree", "k": 4}``
TOPOLOGIES = {"fat-tree": fat_tree, "dcell": dcell, "leaf-spine": leaf_spine}


def is_server(g: nx.Graph, node: Hashable) -> bool:
    """True if ``node`` is a server (``kind == "server"``)."""
    return g.nodes[node].get("kind") == "server"


def servers(g: nx.Graph) -> list[Hashable]:
    """The server nodes in insertion order (the generators add them in position order)."""
    return [v for v, kind in g.nodes(data="kind") if kind == "server"]


def hop_matrix(g: nx.Graph, nodes: Sequence[Hashable]) -> np.ndarray:
    """Shortest hop counts between ``nodes`` (breadth-first search from each).

    Returns
    -------
    float array ``d[a, b]``; ``inf`` where ``nodes[b]`` is unreachable from ``nodes[a]``.
    """
    index = {v: a for a, v in enumerate(nodes)}
    d = np.full((len(nodes), len(nodes)), np.inf)
    for a, v in enumerate(nodes):
        for u, hops in nx.single_source_shortest_path_length(g, v).items():
            b = index.get(u)
            if b is not None:
                d[a, b] = hops
    return d


def clusters(g: nx.Graph, nodes: Sequence[Hashable],
             is_switch: set[Hashable] | None = None) -> list[int]:
    """Cluster label of each node: nodes attached to the same switch share a label.

    Paper 000, section IV-B: "We treat VMs connecting to the same intermediate router as a
    cluster". A node's router is its first switch neighbour in sorted order (servers of the
    generators here have exactly one); a node without a switch neighbour is a cluster of its own.

    Parameters
    ----------
    is_switch : the switch nodes; default: every node whose ``kind`` is not ``"server"``.

    Returns
    -------
    labels 0, 1, ... numbered in order of first appearance in ``nodes``.
    """
    if is_switch is None:
        is_switch = {v for v, kind in g.nodes(data="kind") if kind != "server"}
    labels: dict[Hashable, int] = {}
    out = []
    for v in nodes:
        routers = sorted((u for u in g.neighbors(v) if u in is_switch), key=str)
        key = ("router", routers[0]) if routers else ("self", v)
        out.append(labels.setdefault(key, len(labels)))
    return out


def edge_list(g: nx.Graph) -> list[tuple[Hashable, Hashable]]:
    """The edges as a list of pairs (e.g. for a JSON instance)."""
    return [(u, v) for u, v in g.edges()]
