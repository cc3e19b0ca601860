"""Underlay generators of dmlopt.topology: sizes and hop counts checked by hand."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from dmlopt import topology as topo


def _hops(g, a, b):
    return int(topo.hop_matrix(g, [a, b])[0, 1])


def test_fat_tree_k4_sizes_and_layers():
    g = topo.fat_tree(4)
    servers = topo.servers(g)
    assert len(servers) == 16
    assert g.number_of_nodes() - len(servers) == 20
    layers = [layer for _, layer in g.nodes(data="layer")]
    assert layers.count("core") == 4 and layers.count("aggregation") == 8
    assert layers.count("edge") == 8
    # 16 host links + 16 edge-aggregation + 16 aggregation-core
    assert g.number_of_edges() == 48
    assert all(g.degree(s) == 1 for s in servers)
    assert all(g.degree(v) == 4 for v in g if not topo.is_server(g, v))


def test_fat_tree_k6_counts():
    g = topo.fat_tree(6)
    assert len(topo.servers(g)) == 54
    assert g.number_of_nodes() - 54 == 45


def test_fat_tree_hops_by_hand():
    g = topo.fat_tree(4)
    assert _hops(g, "h0.0.0", "h0.0.1") == 2  # host - edge - host
    assert _hops(g, "h0.0.0", "h0.1.0") == 4  # host - edge - agg - edge - host
    assert _hops(g, "h0.0.0", "h3.1.1") == 6  # through a core switch
    d = topo.hop_matrix(g, topo.servers(g))
    values, counts = np.unique(d, return_counts=True)
    assert values.tolist() == [0, 2, 4, 6]
    # per server: 1 at distance 2, 2 at 4, 12 at 6
    assert counts.tolist() == [16, 16, 32, 192]


def test_dcell_1_4_sizes_and_links():
    g = topo.dcell(4, 1)
    servers = topo.servers(g)
    assert len(servers) == 20
    assert g.number_of_nodes() - 20 == 5
    # 20 server-switch links and one link per pair of the 5 units
    assert g.number_of_edges() == 20 + 10
    assert all(g.degree(s) == 2 for s in servers)
    # unit i, server j-1 <-> unit j, server i (i < j)
    assert g.has_edge("s0.0", "s1.0") and g.has_edge("s0.3", "s4.0")
    assert g.has_edge("s1.1", "s2.1") and g.has_edge("s3.3", "s4.3")


def test_dcell_hops_by_hand():
    g = topo.dcell(4, 1)
    assert _hops(g, "s0.0", "s1.0") == 1  # direct link
    assert _hops(g, "s0.0", "s0.1") == 2  # same DCell_0 switch
    assert _hops(g, "s0.0", "s1.1") == 3  # s0.0 - s1.0 - w1 - s1.1
    assert _hops(g, "s0.1", "s1.1") == 4  # s0.1 - s2.0 - w2 - s2.1 - s1.1
    assert _hops(g, "s0.1", "s1.2") == 5  # s0.1 - w0 - s0.0 - s1.0 - w1 - s1.2
    d = topo.hop_matrix(g, topo.servers(g))
    assert d.max() == 5 and (d == d.T).all()


def test_dcell_level_0_and_2():
    star = topo.dcell(3, 0)
    assert len(topo.servers(star)) == 3 and star.number_of_nodes() == 4
    g = topo.dcell(2, 2)  # t1 = 2 * 3 = 6, t2 = 6 * 7 = 42
    assert len(topo.servers(g)) == 42
    assert nx.is_connected(g)


def test_leaf_spine():
    g = topo.leaf_spine(4, 2, 4)
    assert len(topo.servers(g)) == 16 and g.number_of_nodes() == 22
    assert _hops(g, "h0.0", "h0.1") == 2
    assert _hops(g, "h0.0", "h3.3") == 4


def test_clusters_follow_the_router():
    g = topo.fat_tree(4)
    labels = topo.clusters(g, topo.servers(g))
    assert labels == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]
    g = topo.dcell(4, 1)
    assert topo.clusters(g, topo.servers(g)) == [c for c in range(5) for _ in range(4)]
    # a subset keeps the grouping and renumbers by first appearance
    assert topo.clusters(g, ["s3.0", "s0.1", "s3.2"]) == [0, 1, 0]


def test_hop_matrix_unreachable_is_inf():
    g = nx.Graph([(0, 1), (2, 3)])
    d = topo.hop_matrix(g, [0, 1, 2])
    assert d[0, 1] == 1 and np.isinf(d[0, 2])


@pytest.mark.parametrize("call", [lambda: topo.fat_tree(3), lambda: topo.dcell(1),
                                  lambda: topo.dcell(4, -1), lambda: topo.leaf_spine(0)])
def test_bad_parameters(call):
    with pytest.raises(ValueError):
        call()
