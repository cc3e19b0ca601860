"""Build the two CPN stand-in topologies of paper 003, section 6, in data/rar/topology/.

The paper's Figs. 3 and 4 are not in its text, so we build fixed, documented stand-ins with the
published counts and parameter ranges:

* ``cpn6``: 6 nodes, 10 links, link lengths 20-50 km, 8-12 CUs per node, 10 wavelengths.
* ``cpn38``: 38 nodes, 59 links of 20 km, 160-320 CUs per node, 20 wavelengths.

Both are 2-connected (a Hamiltonian ring plus chords), so every node lies on rings of 3..6
nodes. e_n = 1e-6 and e_l = 1e-5 per km (Table 1). Deterministic: ``python -m
benchmarks.studies.rar.topologies -o DIR`` writes ``DIR/cpn6.json`` and
``DIR/cpn38.json`` byte for byte as shipped in data/rar/topology/ (a test checks it).
"""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np

from .. import ArgumentParser, output_dir


def cpn6() -> dict:
    rng = np.random.default_rng(6)
    # every node lies on a triangle and on a 4-node ring of at most 97 km, so even r_j = 0.999
    # (Table 1's upper end) has rings of 3 and 4 nodes (N_j in {3, 4}); section 6 reports no
    # blocking on this network
    km = {(0, 1): 20, (1, 2): 22, (0, 2): 24, (3, 4): 20, (4, 5): 22, (3, 5): 24,
          (2, 3): 20, (2, 5): 25, (0, 5): 30, (1, 4): 50}
    nodes = [{"cus": int(rng.integers(8, 13)), "failure": 1e-6} for _ in range(6)]
    links = [{"u": u, "v": v, "length_km": float(d), "wavelengths": 10,
              "failure_per_km": 1e-5} for (u, v), d in km.items()]
    return {"description": "stand-in for paper 003 Fig. 3: 6 nodes, 10 links (20-50 km), "
            "8-12 CUs per node, 10 wavelengths per link; a 6-ring plus 4 chords; every node on "
            "a triangle and on a 4-node ring of <= 97 km", "nodes": nodes, "links": links}


def cpn38() -> dict:
    rng = np.random.default_rng(38)
    n, m = 38, 59
    pts = rng.random((n, 2))
    c = pts.mean(axis=0)
    order = np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))
    edges = {tuple(sorted((int(order[i]), int(order[(i + 1) % n])))) for i in range(n)}
    deg = np.full(n, 2)
    cand = sorted((math.dist(pts[u], pts[v]), u, v) for u in range(n) for v in range(u + 1, n))
    g = nx.Graph(list(edges))

    def short_cycle(v: int) -> bool:  # v on a cycle of <= 6 nodes
        return any(len(c) <= 6 for c in nx.simple_cycles(g, length_bound=6) if v in c)

    def add(u: int, v: int) -> None:
        edges.add((u, v))
        g.add_edge(u, v)
        deg[u] += 1
        deg[v] += 1

    def ok(u: int, v: int) -> bool:
        return ((u, v) not in edges and deg[u] < 4 and deg[v] < 4
                and nx.shortest_path_length(g, u, v) <= 5)

    # first every node on a short ring (shortest suitable chord at an uncovered node) ...
    for v in [int(x) for x in order]:
        if len(edges) < m and not short_cycle(v):
            best = next(((u2, v2) for _, u2, v2 in cand if v in (u2, v2) and ok(u2, v2)), None)
            if best is not None:
                add(*best)
    # ... then the shortest remaining chords
    for _, u, v in cand:
        if len(edges) == m:
            break
        if ok(u, v):
            add(u, v)
    assert all(short_cycle(v) for v in range(n))
    assert len(edges) == m and nx.is_biconnected(g)
    nodes = [{"cus": int(rng.integers(160, 321)), "failure": 1e-6} for _ in range(n)]
    links = [{"u": u, "v": v, "length_km": 20.0, "wavelengths": 20, "failure_per_km": 1e-5}
             for u, v in sorted(edges)]
    return {"description": "stand-in for paper 003 Fig. 4: 38 nodes, 59 links of 20 km, "
            "160-320 CUs per node, 20 wavelengths per link; a Hamiltonian ring through 38 "
            "random points (by angle) plus the 21 shortest chords closing rings of <= 6 nodes "
            "(degree <= 4)", "nodes": nodes, "links": links}


def main(argv: list[str] | None = None) -> None:
    ap = ArgumentParser(prog="python -m benchmarks.studies.rar.topologies",
                        description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True, metavar="DIR",
                    help="directory for cpn6.json and cpn38.json (created)")
    out = output_dir(ap.parse_args(argv).out)
    for name, topo in (("cpn6", cpn6()), ("cpn38", cpn38())):
        (out / f"{name}.json").write_text(json.dumps(topo, indent=1) + "\n")
        print(name, len(topo["nodes"]), "nodes", len(topo["links"]), "links")


if __name__ == "__main__":
    main()
