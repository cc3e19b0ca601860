"""Topology inference (paper 000, sections II, III, V): measurement model, category weights with
the amendment (Fig. 2), Flow Tracking (Algorithm 1, a Fig. 3-style walk-through), exact
reconstruction under Dijkstra routing, k-cast recovery, baselines, metrics and bad input."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlopt.models.infer import (
    InferenceError,
    TooManyPathsError,
    cast_weights,
    category_weights,
    check_paths,
    clique_embedding,
    evaluate_inference,
    flow_tracking,
    measure,
    rooted_neighbor_joining,
    route,
    solve_category_weights,
    with_weights,
)
from dmlopt.models.infer.measurement import ROUTINGS, Measurement, cast_weight, phi_from_categories
from dmlopt.models.infer.metrics import ged, ged_lower_bound, measured_subgraph

F = frozenset


def weighted(edges: dict[tuple[str, str], float]) -> nx.Graph:
    g = nx.Graph()
    for (a, b), u in edges.items():
        g.add_edge(a, b, u=u)
    return g


# --------------------------------------------------------------------------- Fig. 2

def fig2():
    """Fig. 2 as described in section III-A: p1 crosses e1, e2 twice, e3, e4; p2 crosses e1,
    e2, e5 (the figure itself is not in our text copy; this walk realises its description)."""
    u = {"e1": 0.1, "e2": 0.2, "e3": 0.3, "e4": 0.4, "e5": 0.5}
    g = weighted({("s", "a"): u["e1"], ("a", "b"): u["e2"], ("a", "c"): u["e3"],
                  ("c", "d"): u["e4"], ("b", "f"): u["e5"]})
    p1 = ("s", "a", "b", "a", "c", "d")  # e1, e2, e2 (back), e3, e4
    p2 = ("s", "a", "b", "f")  # e1, e2, e5
    return g, (p1, p2), u


def test_fig2_categories_follow_definition_2_and_amendment_5_6():
    g, paths, u = fig2()
    plain = category_weights(g, paths, amended=False)
    assert plain == pytest.approx({F({0, 1}): u["e1"] + u["e2"], F({0}): u["e3"] + u["e4"],
                                   F({1}): u["e5"]})
    amended = category_weights(g, paths)
    assert amended == pytest.approx({F({0, 1}): u["e1"] + u["e2"],
                                     F({0}): u["e2"] + u["e3"] + u["e4"],  # delta_1 = u_e2
                                     F({1}): u["e5"]})


def test_fig2_amended_weights_reproduce_phi_and_unamended_do_not():
    g, paths, u = fig2()
    phi1 = cast_weight(g, paths, [0])
    assert phi1 == pytest.approx(u["e1"] + 2 * u["e2"] + u["e3"] + u["e4"])  # the paper's phi_1
    phi = cast_weights(g, paths)
    assert phi_from_categories(category_weights(g, paths), 2) == pytest.approx(phi)  # eq. 7
    wrong = phi_from_categories(category_weights(g, paths, amended=False), 2)  # eq. 4
    assert wrong[1] == pytest.approx(phi1 - u["e2"])  # the inconsistency the paper points out


# --------------------------------------------------------------------------- Algorithm 1

def small_tree():
    """s - x - d1, x - y - d2, y - d3: every internal node branches."""
    return weighted({("s", "x"): 1.0, ("x", "d1"): 2.0, ("x", "y"): 3.0, ("y", "d2"): 4.0,
                     ("y", "d3"): 5.0})


def test_flow_tracking_walkthrough():
    g = small_tree()
    paths = [("s", "x", "d1"), ("s", "x", "y", "d2"), ("s", "x", "y", "d3")]
    cats = category_weights(g, paths)
    assert cats == {F({0, 1, 2}): 1.0, F({0}): 2.0, F({1, 2}): 3.0, F({1}): 4.0, F({2}): 5.0}
    inf = flow_tracking(cats, 3, weights_transfer=True)
    assert inf.routes == (("s", "c1,2,3", "c1"), ("s", "c1,2,3", "c2,3", "c2"),
                          ("s", "c1,2,3", "c2,3", "c3"))
    assert set(inf.graph.edges) == {("s", "c1,2,3"), ("c1,2,3", "c1"), ("c1,2,3", "c2,3"),
                                    ("c2,3", "c2"), ("c2,3", "c3")}
    assert inf.endpoints == ("c1", "c2", "c3")
    # weights transfer: each edge carries the weight of the node it flows into, so the route
    # lengths restore every single-path measurement phi_i
    phi = cast_weights(g, paths)
    for i, r in enumerate(inf.routes):
        total = sum(inf.graph.edges[a, b]["weight"] for a, b in zip(r, r[1:], strict=False))
        assert total == pytest.approx(phi[1 << i])
    assert nx.is_isomorphic(inf.undirected(), g)


def test_flow_tracking_shares_edges_and_breaks_size_ties_by_indices():
    cats = {F({0, 1}): 1.0, F({0, 2}): 1.0, F({0}): 1.0, F({1}): 1.0, F({2}): 1.0}
    inf = flow_tracking(cats, 3)
    assert inf.routes[0] == ("s", "c1,2", "c1,3", "c1")
    assert inf.routes[1] == ("s", "c1,2", "c2")
    assert inf.routes[2] == ("s", "c1,3", "c3")
    assert inf.graph.number_of_edges() == 6


def test_flow_tracking_rejects_bad_categories():
    with pytest.raises(InferenceError, match="empty"):
        flow_tracking({}, 2)
    with pytest.raises(InferenceError, match="hits no non-zero category"):
        flow_tracking({F({0}): 1.0}, 2)
    with pytest.raises(InferenceError, match="subset"):
        flow_tracking({F({5}): 1.0}, 2)
    with pytest.raises(InferenceError, match="finite"):
        flow_tracking({F({0}): math.nan}, 1)


# --------------------------------------------------------------------------- exact reconstruction

def test_small_tree_reconstructed_exactly_under_dijkstra():
    g = small_tree()
    m = Measurement(g, "s", ("d1", "d2", "d3"), route(g, "s", ["d1", "d2", "d3"], "dijkstra"))
    for method in (flow_tracking, rooted_neighbor_joining):
        inf = method(m.categories(), m.n)
        assert nx.is_isomorphic(inf.undirected(), g)
        ev = evaluate_inference(inf, m)
        assert ev["nged"] == 0 and ev["ged_exact"]
        assert ev["hops_error"] == 0 and ev["h2"] == 1.0 and ev["gde"] == 0 and ev["pde"] == 0


@pytest.mark.parametrize("topo", ["fat-tree", "dcell"])
def test_paper_topologies_reconstructed_exactly_under_dijkstra_all_paths(topo):
    from dmlopt import topology

    g = topology.fat_tree(4) if topo == "fat-tree" else topology.dcell(4, 1)
    for seed in range(3):
        m = measure(g, "dijkstra", seed=seed)  # random source, every other server
        assert m.n == len(topology.servers(g)) - 1
        inf = flow_tracking(m.categories(), m.n)
        ev = evaluate_inference(inf, m)
        assert nx.is_isomorphic(inf.undirected(), measured_subgraph(m.graph, m.paths))
        assert ev["nged"] == 0 and ev["ged_exact"] and ev["h2"] == 1.0
        assert ev["hops_error"] == 0 and ev["gde"] == 0 and ev["pde"] == 0
        # the server positions agree too: inferred VM hop matrix = measured-subgraph hops
        sub = measured_subgraph(m.graph, m.paths)
        pts = [m.source, *m.destinations]
        true = np.array([[nx.shortest_path_length(sub, a, b) for b in pts] for a in pts])
        assert np.array_equal(inf.hop_matrix(), true)


# --------------------------------------------------------------------------- routing and k-cast

def test_routing_strategies_produce_walks_to_the_destinations():
    from dmlopt import topology

    g = with_weights(topology.fat_tree(4), seed=1)
    servers = topology.servers(g)
    s, dests = servers[0], servers[1:]
    hops = dict(nx.single_source_shortest_path_length(g, s))
    for routing in ROUTINGS:
        paths = route(g, s, dests, routing, seed=3)
        check_paths(g, paths, source=s)
        assert [p[-1] for p in paths] == dests
        if routing in ("random-shortest", "dijkstra"):
            assert all(len(p) - 1 == hops[p[-1]] for p in paths)
        if routing == "random-simple":
            assert all(len(set(p)) == len(p) for p in paths)
        # no walk passes through a server (degree-1 node) it does not end at
        assert all(g.degree(v) > 1 for p in paths for v in p[1:-1])
    walks = route(g, s, dests, "random-walk", seed=3)
    assert any(len(set(p)) < len(p) for p in walks)  # random walks repeat nodes


@pytest.mark.parametrize("routing", ROUTINGS)
def test_noiseless_kcast_recovers_the_exact_category_weights(routing):
    from dmlopt import topology

    m = measure(topology.dcell(4, 1), routing, n_paths=6, seed=7)
    exact = m.categories()
    phi = cast_weights(m.graph, m.paths)
    assert phi_from_categories(exact, m.n) == pytest.approx(phi, abs=1e-12)
    for method in ("mobius", "lstsq", "nnls"):
        rec = solve_category_weights(phi, m.n, method=method, threshold=1e-7)
        assert set(rec) == set(exact), method
        assert all(rec[a] == pytest.approx(exact[a], abs=1e-7) for a in exact)


def test_noisy_kcast_with_threshold_is_close():
    g = small_tree()
    paths = route(g, "s", ["d1", "d2", "d3"], "dijkstra")
    exact = category_weights(g, paths)
    phi = cast_weights(g, paths, noise=1e-3, seed=0)
    rec = solve_category_weights(phi, 3, method="nnls", threshold=0.05)
    assert set(rec) == set(exact)
    assert all(abs(rec[a] - exact[a]) < 0.02 for a in exact)


# --------------------------------------------------------------------------- baselines

def test_rnj_merges_a_destination_that_is_a_branching_point():
    # d1 relays to d2: path 1 is a prefix of path 2
    g = weighted({("s", "x"): 1.0, ("x", "d1"): 1.0, ("d1", "d2"): 1.0, ("x", "d3"): 1.0})
    paths = [("s", "x", "d1"), ("s", "x", "d1", "d2"), ("s", "x", "d3")]
    cats = category_weights(g, paths)
    for inf in (rooted_neighbor_joining(cats, 3), flow_tracking(cats, 3)):
        assert nx.is_isomorphic(inf.undirected(), g)


@pytest.mark.parametrize("delta", [2.5, 1e6])
def test_rnj_with_a_delta_above_every_length_keeps_a_route_to_every_destination(delta):
    # with delta / 2 above every shared length, every branching node merges into the root;
    # the destinations used to lose their link to the source (NetworkXNoPath on the routes)
    g = small_tree()
    paths = [("s", "x", "d1"), ("s", "x", "y", "d2"), ("s", "x", "y", "d3")]
    inf = rooted_neighbor_joining(category_weights(g, paths), 3, delta=delta)
    assert nx.is_tree(inf.undirected())
    for i, r in enumerate(inf.routes):
        assert r[0] == "s" and r[-1] == f"d{i + 1}"
        assert all(inf.graph.has_edge(a, b) for a, b in zip(r, r[1:], strict=False))
    if delta > 13:   # above every path length: the source and three leaves
        assert sorted(inf.graph.edges) == [("s", "d1"), ("s", "d2"), ("s", "d3")]
    else:            # x (shared length 1) merges into the source, y (shared length 4) stays
        assert len(inf.graph.edges) == 4 and inf.graph.out_degree("s") == 2


def test_clique_embedding_uses_the_smallest_clique_and_valid_routes():
    g = small_tree()
    paths = [("s", "x", "d1"), ("s", "x", "y", "d2"), ("s", "x", "y", "d3")]
    cats = category_weights(g, paths)
    inf = clique_embedding(cats, 3, seed=0)
    clique = [v for v in inf.graph if v != "s"]
    assert len(clique) <= 4  # K_4 has 6 >= 5 edges, K_3 only 3
    cat_edges = [(a, b) for a, b, w in inf.graph.edges(data="weight") if w > 0]
    assert sorted(inf.graph.edges[e]["weight"] for e in cat_edges) == sorted(cats.values())
    for i, r in enumerate(inf.routes):
        assert all(inf.graph.has_edge(a, b) for a, b in zip(r, r[1:], strict=False))
        w = sum(inf.graph.edges[a, b]["weight"] for a, b in zip(r, r[1:], strict=False))
        assert w == pytest.approx(sum(v for a, v in cats.items() if i in a))


# --------------------------------------------------------------------------- metrics

def test_ged_on_hand_made_pairs():
    assert ged(nx.path_graph(4), nx.star_graph(3)) == (2, True)  # delete one edge, add one
    assert ged(nx.path_graph(3), nx.complete_graph(3)) == (1, True)
    assert ged(nx.cycle_graph(5), nx.cycle_graph(5)) == (0, True)
    assert ged(nx.path_graph(2), nx.path_graph(4)) == (4, True)  # two nodes, two edges
    assert ged_lower_bound(nx.path_graph(4), nx.star_graph(3)) == 1
    # brute-force check of the exact search on small random pairs
    rng = np.random.default_rng(0)
    for _ in range(3):
        a = nx.gnp_random_graph(5, 0.5, seed=int(rng.integers(1000)))
        b = nx.gnp_random_graph(6, 0.4, seed=int(rng.integers(1000)))
        value, exact = ged(a, b)
        assert exact and value == nx.graph_edit_distance(a, b)
    # large graphs: an upper bound, flagged as such unless the bounds meet
    big1, big2 = nx.random_regular_graph(3, 30, seed=1), nx.random_regular_graph(3, 30, seed=2)
    value, exact = ged(big1, big2)
    assert value >= ged_lower_bound(big1, big2)


def test_metrics_on_a_hand_made_inference():
    # ground truth: s - x - {d1, d2}; inferred: a path s - c - d1 - d2 (d2 one hop too far)
    g = weighted({("s", "x"): 1.0, ("x", "d1"): 1.0, ("x", "d2"): 1.0})
    m = Measurement(g, "s", ("d1", "d2"), (("s", "x", "d1"), ("s", "x", "d2")))
    from dmlopt.models.infer.ft import Inference

    dg = nx.DiGraph([("s", "c"), ("c", "e1"), ("e1", "e2")])
    inf = Inference(dg, "s", ("e1", "e2"), (("s", "c", "e1"), ("s", "c", "e1", "e2")), "hand")
    ev = evaluate_inference(inf, m)
    # pairs (s,d1): 2 vs 2; (s,d2): 3 vs 2; (d1,d2): 1 vs 2
    assert ev["hops_error"] == pytest.approx((0 + 0.5 + 0.5) / 3)
    assert ev["hops_ratio"] == pytest.approx((1 + 1.5 + 0.5) / 3)
    assert ev["gde"] == pytest.approx(abs(6 / 4 - 6 / 4))
    # path 1: inferred degrees (1, 2, 2) vs true (1, 3, 1); path 2: (1,2,2,1) vs (1,3,1)
    assert ev["pde"] == pytest.approx((abs(5 / 3 - 5 / 3) + abs(6 / 4 - 5 / 3)) / 2)
    assert ev["h2"] == pytest.approx(2 / 3)  # (s,d1) and (d1,d2) kept, (s,d2) lost
    assert (ev["ged"], ev["ged_exact"]) == (2, True)  # star K1,3 vs path P4
    assert ev["nged"] == pytest.approx(2 / 7)


# --------------------------------------------------------------------------- bad input

def test_bad_paths_give_clear_errors():
    g = small_tree()
    with pytest.raises(InferenceError, match="is not an edge"):
        category_weights(g, [("s", "d1")])
    with pytest.raises(InferenceError, match="empty"):
        category_weights(g, [])
    with pytest.raises(InferenceError, match="not in the graph"):
        check_paths(g, [("s", "zz")])
    with pytest.raises(InferenceError, match="fewer than two"):
        check_paths(g, [("s",)])
    with pytest.raises(InferenceError, match="not at the source"):
        check_paths(g, [("x", "y")], source="s")
    with pytest.raises(InferenceError, match="routing"):
        route(g, "s", ["d1"], "teleport")
    with pytest.raises(InferenceError, match="is the source"):
        route(g, "s", ["s"], "dijkstra")
    with pytest.raises(TooManyPathsError, match="2\\^12"):
        solve_category_weights(np.zeros(1 << 12), 12, method="nnls")
    with pytest.raises(InferenceError, match="shape"):
        solve_category_weights(np.zeros(5), 3)
    with pytest.raises(InferenceError, match="alpha"):
        with_weights(g, alpha=(0.5, 1.0))


# --------------------------------------------------------------------------- properties


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_paths=st.integers(1, 6),
       routing=st.sampled_from(ROUTINGS))
def test_eq7_and_weights_transfer_hold_on_random_graphs(seed, n_paths, routing):
    g = nx.connected_watts_strogatz_graph(12, 4, 0.3, seed=seed)
    m = measure(g, routing, n_paths=n_paths, seed=seed)
    cats = m.categories()
    phi = cast_weights(m.graph, m.paths)
    assert phi_from_categories(cats, m.n) == pytest.approx(phi, abs=1e-12)  # eq. 7
    inf = flow_tracking(cats, m.n, weights_transfer=True)
    for i, r in enumerate(inf.routes):  # every category of path i is on its route once
        total = sum(inf.graph.edges[a, b]["weight"] for a, b in zip(r, r[1:], strict=False))
        assert total == pytest.approx(phi[1 << i])
        assert len(r) - 1 == sum(1 for a in cats if i in a)  # c_2: hops of the route
