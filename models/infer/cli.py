"""``dmlopt infer``: topology inference on the command line (paper 000, sections II-III, V).

Input, one of:

* ``--measurements FILE.json`` with ``{"n": 3, "categories": {"1,2,3": 0.1, "1": 0.2, ...}}``
  (category weights, 1-based path numbers), or ``{"n": 3, "cast_weights": {"1": ..., "1,2":
  ..., ...}}`` (every non-empty subset; solved by eq. 7), or ``{"paths": [[...], ...]}``
  together with ``--graph`` (walks in a ground truth);
* ``--graph FILE`` (GraphML, or networkx node-link JSON; edge attribute ``alpha`` or ``u``
  used when present, else drawn with ``--seed``) or ``--topology fat-tree|dcell|leaf-spine``
  (``-p k=4``), with ``--routing`` and ``--paths N`` (or ``--source``/``--destinations``).

Output: the inferred graph (``-o FILE.graphml`` or ``FILE.json``, written atomically), a summary,
and the metrics of section V-B when a ground truth is known. Bad input: exit 2, one line.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from dmlopt import io
from dmlopt.models.infer.errors import InferenceError

#: the routing strategies (``dmlopt.models.infer.measurement.ROUTINGS``; repeated here so that
#: building
#: the command line does not import numpy and networkx; a test checks they agree)
ROUTINGS = ("random-walk", "random-simple", "random-shortest", "dijkstra")
MAX_GRAPH_BYTES = 64 * 2**20
#: ``--param`` names per topology, as the ``dc`` generators of infer and tap name them, mapped
#: to the keyword of :mod:`dmlopt.topology`
TOPOLOGY_PARAMS = {
    "fat-tree": {"k": "k"},
    "dcell": {"dcell_n": "n", "dcell_level": "level"},
    "leaf-spine": {"leaves": "leaves", "spines": "spines", "servers_per_leaf": "servers_per_leaf"},
}


def _read_graph(path: str) -> Any:
    import networkx as nx

    p = Path(path)
    if not p.exists():
        raise InferenceError(f"--graph: {path!r} does not exist")
    if p.stat().st_size > MAX_GRAPH_BYTES:
        raise InferenceError(f"--graph: {path!r} is above {MAX_GRAPH_BYTES} bytes")
    try:
        if p.suffix.lower() == ".graphml":
            g = nx.read_graphml(p)
        else:
            data = io.read_json(p)
            g = nx.node_link_graph(data, edges="edges" if "edges" in data else "links")
    except InferenceError:
        raise
    except Exception as exc:  # noqa: BLE001 - any parse error is bad input
        raise InferenceError(f"--graph: {path!r} is not a GraphML or node-link JSON graph "
                             f"({type(exc).__name__}: {exc})") from None
    if g.is_directed() or g.is_multigraph():
        g = nx.Graph(g)
    for _, _, d in g.edges(data=True):
        if "alpha" not in d and "u" in d:
            d["alpha"] = math.exp(-float(d["u"]))
    return g


def _node(g: Any, name: str) -> Any:
    """A node named on the command line (strings; integers for integer-labelled graphs)."""
    if name in g:
        return name
    try:
        if int(name) in g:
            return int(name)
    except ValueError:
        pass
    raise InferenceError(f"node: {name!r} is not a node of the graph")


def _kv(items: list[str] | None) -> dict[str, Any]:
    from dmlopt.cli import key_values

    return key_values(items, "--param")


def _ground_truth(args: argparse.Namespace) -> Any:
    from dmlopt import topology

    if args.topology:
        if args.topology not in topology.TOPOLOGIES:
            raise InferenceError(f"--topology: {args.topology!r} is not one of "
                                 f"{', '.join(topology.TOPOLOGIES)}")
        names = TOPOLOGY_PARAMS[args.topology]
        given = _kv(args.param)
        for key in given:
            if key not in names:
                raise InferenceError(f"--param: {key!r} is not a {args.topology} parameter "
                                     f"(valid: {', '.join(names)})")
        try:
            return topology.TOPOLOGIES[args.topology](**{names[k]: v for k, v in given.items()})
        except (TypeError, ValueError) as exc:
            raise InferenceError(f"--param: {exc}") from None
    if args.graph:
        return _read_graph(args.graph)
    return None


def _categories_from_file(data: dict, args) -> tuple[dict, int]:
    from dmlopt.models.infer.measurement import parse_label, solve_category_weights

    n = data.get("n")
    if not isinstance(n, int) or n < 1:
        raise InferenceError(f"n: {n!r} must be the number of paths (a positive integer)")
    if "categories" in data:
        raw = data["categories"]
        if not isinstance(raw, dict):
            raise InferenceError("categories: must map '1,2' labels to weights")
        return {parse_label(k): float(v) for k, v in raw.items()}, n
    if "cast_weights" in data:
        raw = data["cast_weights"]
        if not isinstance(raw, dict):
            raise InferenceError("cast_weights: must map '1,2' labels to weights")
        phi = {parse_label(k): float(v) for k, v in raw.items()}
        if any(max(c) >= n for c in phi):
            raise InferenceError(f"cast_weights: a subset names a path above n = {n}")
        return solve_category_weights(phi, n, method=args.solve, threshold=args.threshold), n
    raise InferenceError("measurements: needs 'categories', 'cast_weights' or 'paths'")


def _measurement(args: argparse.Namespace) -> tuple[dict, int, Any]:
    from dmlopt.models.infer.measurement import (
        Measurement,
        cast_weights,
        category_weights,
        check_paths,
        measure,
        solve_category_weights,
        with_weights,
    )

    truth = _ground_truth(args)
    data = io.read_json(args.measurements) if args.measurements else None
    if data is not None and not isinstance(data, dict):
        raise InferenceError(f"--measurements: {args.measurements!r} must hold a JSON object")
    if data is not None and "paths" not in data:
        cats, n = _categories_from_file(data, args)
        return cats, n, None
    if truth is None:
        raise InferenceError("input: give --measurements (categories or cast weights), or a "
                             "ground truth (--graph or --topology)")
    if data is not None:  # paths measured in the given ground truth
        g = with_weights(truth, seed=args.seed)
        raw = data["paths"]
        if not isinstance(raw, list):
            raise InferenceError("paths: must be a list of node lists")
        paths = check_paths(g, [[_node(g, str(v)) for v in p] if isinstance(p, list) else p
                                for p in raw])
        src = paths[0][0]
        check_paths(g, paths, source=src)
        m = Measurement(g, src, tuple(p[-1] for p in paths), paths, "given")
    else:
        if args.routing is None:
            raise InferenceError(f"--routing: required with a ground truth (one of "
                                 f"{', '.join(ROUTINGS)})")
        source = _node(truth, args.source) if args.source else None
        dests = ([_node(truth, d) for d in args.destinations.split(",") if d]
                 if args.destinations else None)
        m = measure(truth, args.routing, n_paths=args.paths, source=source, destinations=dests,
                    seed=args.seed)
    if args.kcast or args.noise:
        phi = cast_weights(m.graph, m.paths, noise=args.noise, seed=args.seed)
        cats = solve_category_weights(phi, m.n, method=args.solve, threshold=args.threshold)
    else:
        cats = category_weights(m.graph, m.paths)
    return cats, m.n, m


def _write(inf: Any, path: str) -> None:
    import networkx as nx

    g = nx.DiGraph(inf.graph)
    for _, d in g.nodes(data=True):
        d.setdefault("weight", 0.0)
    for e, v in enumerate(inf.endpoints):
        g.nodes[v]["endpoint_of"] = ",".join(
            x for x in [g.nodes[v].get("endpoint_of", ""), str(e + 1)] if x)
    g.nodes[inf.source]["source"] = True
    suffix = Path(path).suffix.lower()
    if suffix == ".graphml":
        with io.atomic_path(path) as tmp:
            nx.write_graphml(g, tmp)
    elif suffix == ".json":
        doc = {"method": inf.method, "source": inf.source, "endpoints": list(inf.endpoints),
               "routes": [list(r) for r in inf.routes],
               "graph": nx.node_link_data(g, edges="edges")}
        io.atomic_write_text(path, json.dumps(doc, indent=1, default=str))
    else:
        raise InferenceError(f"--output: {path!r} must end in .graphml or .json")


def _check_numbers(args: argparse.Namespace) -> None:
    """--seed in [0, 2^63 - 1], --noise and --threshold finite and >= 0, -o not a directory."""
    from dmlopt.api import check_seed

    check_seed(args.seed)
    for flag, value in (("--noise", args.noise), ("--threshold", args.threshold)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise InferenceError(f"{flag}: {value!r} must be a finite number >= 0")
    if args.output:
        io.check_output(args.output, "--output")


def cmd_infer(args: argparse.Namespace) -> int:
    from dmlopt.models.infer.baselines import infer
    from dmlopt.models.infer.measurement import label
    from dmlopt.models.infer.metrics import evaluate_inference

    if args.output and Path(args.output).suffix.lower() not in (".graphml", ".json"):
        raise InferenceError(f"--output: {args.output!r} must end in .graphml or .json")
    _check_numbers(args)
    cats, n, m = _measurement(args)
    opts: dict[str, Any] = {}
    if args.method == "ft":
        opts["weights_transfer"] = args.weights_transfer
    elif args.method == "ce":
        opts["seed"] = args.seed
    inf = infer(cats, n, args.method, **opts)
    if args.output:
        _write(inf, args.output)
    out: dict[str, Any] = {"method": inf.method, "paths": n, "categories": len(cats),
                           "nodes": inf.graph.number_of_nodes(),
                           "edges": inf.graph.number_of_edges()}
    if m is not None:
        out["routing"] = m.routing
        out["source"] = m.source
        out.update({k: v for k, v in evaluate_inference(inf, m).items()
                    if k not in ("nodes", "edges")})
    if args.json:
        print(json.dumps(out, default=str))
    else:
        width = max(map(len, out))
        for k, v in out.items():
            shown = f"{v:.6g}" if isinstance(v, float) else str(v)
            print(f"{k:<{width}}  {shown}")
        if args.verbose:
            for a in sorted(cats, key=lambda a: (-len(a), sorted(a))):
                print(f"category {label(a)}: {cats[a]:.6g}")
        if args.output:
            print(f"wrote {args.output}")
    return 0


HELP = "infer a topology from end-to-end measurements (FT, RNJ, CE; paper 000)"


def configure(p: argparse.ArgumentParser) -> None:
    """The arguments of ``dmlopt infer`` (the problem's :class:`~dmlopt.contract.Command`)."""
    p.description = __doc__.split("\n\n")[0]
    src = p.add_argument_group("input")
    src.add_argument("--measurements", "-m", default=None, metavar="FILE.json",
                     help="categories, cast_weights (with n) or paths (with --graph)")
    src.add_argument("--graph", default=None, metavar="FILE",
                     help="ground-truth graph (.graphml or node-link .json)")
    src.add_argument("--topology", default=None, help="ground truth from dmlopt.topology: "
                     "fat-tree, dcell, leaf-spine")
    src.add_argument("--param", "-p", action="append", metavar="KEY=VALUE",
                     help="topology parameter, repeatable, named as the dc generators name "
                     "them: k=4 (fat-tree); dcell_n=4 dcell_level=1 (dcell); leaves=4 spines=2 "
                     "servers_per_leaf=4 (leaf-spine)")
    src.add_argument("--routing", choices=ROUTINGS, default=None,
                     help="how the paths are routed on the ground truth (default: shortest "
                     "paths)")
    src.add_argument("--paths", type=int, default=None, metavar="N",
                     help="number of measurement paths (default: every other server)")
    src.add_argument("--source", default=None, help="source server (default: random)")
    src.add_argument("--destinations", default=None, metavar="A,B,...",
                     help="destination servers, comma separated (default: drawn with --seed)")
    src.add_argument("--seed", type=int, default=0,
                     help="seed of the drawn source, destinations and noise (default: 0)")
    src.add_argument("--kcast", action="store_true", help="simulate the k-cast measurements "
                     "phi_C and solve eq. 7 instead of using the exact category weights")
    src.add_argument("--noise", type=float, default=0.0, help="Gaussian noise on each phi_C "
                     "(implies --kcast)")
    src.add_argument("--solve", choices=("mobius", "lstsq", "nnls"), default="mobius",
                     help="how eq. 7 is solved for the category weights with --kcast "
                     "(default: mobius)")
    src.add_argument("--threshold", type=float, default=None,
                     help="category weights at most this are zero")
    p.add_argument("--method", choices=("ft", "rnj", "ce"), default="ft",
                   help="Flow Tracking (Algorithm 1) or a section V-B baseline (default: ft)")
    p.add_argument("--weights-transfer", action="store_true", help="FT lines 10-13")
    p.add_argument("-o", "--output", default=None, metavar="FILE.graphml|FILE.json",
                   help="write the inferred topology here (default: not written)")
    p.add_argument("--json", action="store_true", help="summary and metrics as one JSON line")
    p.add_argument("-v", "--verbose", action="store_true", help="list the category weights")
