"""Topology inference, Flow Tracking (paper 000, An, Wu, Huang, sections II-III, V-A/B).

The package holds the inference toolkit and wraps it in the problem contract, so that the
benchmark harness runs the experiments of Figs. 5-10 unchanged:

- ``measurement``: underlay weights, routing strategies, exact and k-cast category weights;
- ``ft``: Flow Tracking (Algorithm 1); ``baselines``: RNJ and CE;
- ``metrics``: hops error, GDE, PDE, NGED, H2;
- ``pipeline``: inferred topology -> TAP allocation -> cost on the ground truth;
- ``cli``: ``dmlopt infer`` (contributed through :data:`COMMANDS`);
- this module: the problem (``Instance``, ``Solution``, ``evaluate``, ``GENERATORS``) and the
  toolkit's public names (``from dmlopt.models.infer import measure, flow_tracking``), loaded
  on first use.

The problem It is not an optimisation problem with an exact model:
an instance is a *measurement* (a ground-truth underlay, a routing strategy, a number of
measurement paths and the seed that draws the source, the destinations, the edge weights and the
routes); a solution is an *inferred topology*; the evaluator scores it by the metrics of section
V-B against the ground truth.

Instance
--------
``topology`` is ``"fat-tree"`` (arity ``k``), ``"dcell"`` (``dcell_n`` servers per DCell_0,
level ``dcell_level``), ``"leaf-spine"`` (``leaves``, ``spines``, ``servers_per_leaf``) from
:mod:`dmlopt.topology`, or ``"graph"`` with explicit undirected ``edges`` (and optionally the
``servers``; default: every node). ``routing`` is one of section V-A's four strategies
(:data:`dmlopt.models.infer.measurement.ROUTINGS`); ``paths`` the number of measurement paths
(distinct
random destination servers; ``None``: every server but the source); ``seed`` the measurement
seed (:func:`dmlopt.models.infer.measurement.measure`: edge ``alpha`` uniform on ``alpha``, the
source,
the destinations, the routes). The category weights the inference methods see are the exact ones
of eqs. 2-6 (amended for non-simple paths); with ``kcast = true`` they are recovered instead from
simulated k-cast measurements ``phi_C`` (eq. 7) with Gaussian ``noise`` by ``kcast_method``
(``mobius``, ``lstsq``, ``nnls``; at most 20 / 11 paths, else a validation error saying so),
categories at most ``threshold`` dropped. The measurement is drawn once, when the instance is
validated, and kept privately (never serialised: the JSON stays a few lines).

Solution
--------
The inferred graph: its directed ``edges`` (as the method built them; the metrics use the
undirected simple graph), optional edge ``weights``, the ``source`` node, one ``endpoint`` per
path (the node standing for its destination) and one ``route`` per path (the inferred node
sequence of path ``i``, source to endpoint). Every inference method of the toolkit
returns exactly this (:func:`solution_from_inference`).

Evaluation
----------
Feasible when there is one route per measurement path, each a walk of the inferred graph from
``source`` to its endpoint. Objective: the hops error (minimise), the metrics of
:func:`dmlopt.models.infer.metrics.evaluate_inference` against the measured subgraph of the ground
truth
(``hops_ratio``, ``gde``, ``pde``, ``ged`` / ``nged`` with ``ged_exact`` 1 when the GED is exact,
0 when it is the upper bound, ``h2``, ``h2_precision``, graph sizes), plus
``hops_error_underlay`` (the hops error against the whole underlay), ``paths`` and ``path_hops``
(mean measured path length). Definitions and choices are in :mod:`dmlopt.models.infer.metrics`.

Formulations: none (:data:`FORMULATIONS` is empty); ``dmlopt.solve`` says so. Heuristics:
:mod:`dmlopt.heuristics.infer` (FT, FT with weights transfer, RNJ, CE).

Examples
--------
Flow Tracking on four measurement paths of a fat-tree; the objective is the hops error:

>>> import dmlopt
>>> spec = {"generator": "dc", "topology": "fat-tree", "routing": "dijkstra", "paths": 4}
>>> inst = dmlopt.generate("infer", spec, seed=0)
>>> result = dmlopt.heuristic(inst, "ft", seed=0)
>>> result.status, round(result.objective, 3), dmlopt.evaluate(inst, result.solution).feasible
('feasible', 0.433, True)
"""

from __future__ import annotations

import importlib
import math
from typing import Any, Literal

import numpy as np
import pydantic
from pydantic import PrivateAttr

from dmlopt.contract import (
    Bound,
    BoundValue,
    Command,
    Formulation,
    Generator,
    NoOptions,
    Options,
    Size,
    unbounded,
)
from dmlopt.evaluation import Evaluation
from dmlopt.models.infer.errors import InferenceError as InferenceError
from dmlopt.models.infer.errors import TooManyPathsError as TooManyPathsError
from dmlopt.validation import Frozen, parse, rule

NAME = "infer"
TITLE = "Topology inference from end-to-end measurements (Flow Tracking)"
PAPER = "000 (An, Wu, Huang)"
SENSE = "min"

#: largest underlay accepted (nodes) and largest explicit edge list
MAX_NODES = 20_000
#: largest routing work drawn at validation: paths x (nodes + edges), or paths x 50 nodes for
#: random walks (their step limit); about a minute of networkx at the limit
MAX_MEASURE_STEPS = 50_000_000
#: largest graph the evaluator scores: its graph edit distance bound solves quadratic assignment
#: problems on dense N x N matrices (N^3 per iteration; measured 6.5 s at N = 517)
MAX_SCORED_NODES = 1000
#: largest inferred graph (edges) the evaluator scores: one breadth-first search per path
MAX_SCORED_EDGES = 20_000
TOPOLOGIES = ("fat-tree", "dcell", "leaf-spine", "graph")
KCAST_METHODS = ("mobius", "lstsq", "nnls")

Node = int | str


class Measured(Frozen):
    """A ground-truth underlay and a measurement drawn on it (shared with ``infer_tap``)."""

    name: str = ""
    topology: str = "fat-tree"
    k: int = pydantic.Field(default=4, description="fat-tree arity")
    dcell_n: int = pydantic.Field(default=4, description="servers per DCell_0")
    dcell_level: int = pydantic.Field(default=1, description="DCell level")
    leaves: int = 4
    spines: int = 2
    servers_per_leaf: int = 4
    edges: list[tuple[Node, Node]] | None = pydantic.Field(
        default=None, description="explicit undirected edges (topology = 'graph')")
    servers: list[Node] | None = pydantic.Field(
        default=None, description="server nodes of an explicit graph (default: every node)")
    routing: str = "dijkstra"
    seed: int = pydantic.Field(default=0, ge=0, description="measurement seed")
    alpha: tuple[float, float] = (0.9, 0.999)

    _measurement: Any = PrivateAttr(default=None)

    def _draw(self, n_paths: int | None) -> Any:
        """Build the underlay and draw the measurement (raises ``rule`` errors)."""
        from dmlopt import topology as topo
        from dmlopt.models.infer.measurement import ROUTINGS, measure

        if self.topology not in TOPOLOGIES:
            raise rule("topology", self.topology, f"is not one of {', '.join(TOPOLOGIES)}")
        if self.routing not in ROUTINGS:
            raise rule("routing", self.routing, f"is not one of {', '.join(ROUTINGS)}")
        lo, hi = self.alpha
        if not 0 < lo <= hi < 1:
            raise rule("alpha", list(self.alpha), "must satisfy 0 < low <= high < 1")
        g = self._graph(topo)
        if g.number_of_nodes() > MAX_NODES:
            raise rule("topology", self.topology, f"has {g.number_of_nodes()} nodes, above the "
                       f"limit {MAX_NODES}")
        cands = topo.servers(g) or list(g.nodes)
        if n_paths is not None and not 1 <= n_paths <= len(cands) - 1:
            raise rule("paths", n_paths, f"must lie in 1..{len(cands) - 1} (distinct destination "
                       f"servers other than the source; the underlay has {len(cands)} servers)")
        import networkx as nx

        if not nx.is_connected(g):
            raise rule("edges", f"{nx.number_connected_components(g)} components",
                       "must form a connected graph")
        count = len(cands) - 1 if n_paths is None else n_paths
        per_path = (50 * g.number_of_nodes() if self.routing == "random-walk"
                    else g.number_of_nodes() + g.number_of_edges())
        if count * per_path > MAX_MEASURE_STEPS:
            raise rule("paths", count, f"paths by {self.routing} on {g.number_of_nodes()} nodes "
                       f"need up to {count * per_path} routing steps, above the limit "
                       f"{MAX_MEASURE_STEPS} (measure fewer paths)")
        try:
            m = measure(g, self.routing, n_paths=n_paths, seed=self.seed, alpha=self.alpha,
                        candidates=cands)
        except InferenceError as exc:
            raise rule("routing", self.routing, f"failed on this underlay ({exc})") from None
        return m

    def _graph(self, topo: Any) -> Any:
        import networkx as nx

        if self.topology == "graph":
            if not self.edges:
                raise rule("edges", self.edges, "must list the edges when topology = 'graph'")
            if len(self.edges) > 5 * MAX_NODES:
                raise rule("edges", f"{len(self.edges)} edges", "is above the limit")
            g = nx.Graph()
            for i, (u, v) in enumerate(self.edges):
                if u == v:
                    raise rule(f"edges[{i}]", [u, v], "is a self-loop")
                g.add_edge(u, v)
            for s in self.servers or ():
                if s not in g:
                    raise rule("servers", s, "is not a node of the edges")
            for v in g:
                g.nodes[v]["kind"] = "server" if (self.servers is None
                                                  or v in set(self.servers)) else "switch"
            return g
        if self.edges is not None or self.servers is not None:
            raise rule("edges", "given", f"must be omitted for topology {self.topology!r}")
        build = {"fat-tree": lambda: topo.fat_tree(self.k),
                 "dcell": lambda: topo.dcell(self.dcell_n, self.dcell_level),
                 "leaf-spine": lambda: topo.leaf_spine(self.leaves, self.spines,
                                                       self.servers_per_leaf)}
        try:
            return build[self.topology]()
        except ValueError as exc:
            raise rule("topology", self.topology, f"parameters rejected ({exc})") from None

    @property
    def measurement(self) -> Any:
        """The drawn :class:`dmlopt.models.infer.measurement.Measurement` (ground truth and
        paths)."""
        return self._measurement

    def __eq__(self, other: object) -> bool:  # private caches are not compared
        if not isinstance(other, type(self)):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]


class Instance(Measured):
    """A measurement to infer a topology from (see the module docstring)."""

    problem: Literal["infer"] = "infer"
    paths: int | None = pydantic.Field(default=None, description="measurement paths (None: all)")
    kcast: bool = False
    noise: float = pydantic.Field(default=0.0, ge=0, description="k-cast noise std (kcast only)")
    kcast_method: str = "mobius"
    threshold: float | None = pydantic.Field(default=None, ge=0)

    _categories: Any = PrivateAttr(default=None)

    @pydantic.model_validator(mode="after")
    def _rules(self) -> Instance:
        if self.noise > 0 and not self.kcast:
            raise rule("noise", self.noise, "needs kcast = true (noise is on k-cast measurements)")
        if self.kcast_method not in KCAST_METHODS:
            raise rule("kcast_method", self.kcast_method, f"is not one of "
                       f"{', '.join(KCAST_METHODS)}")
        m = self._draw(self.paths)
        crossed = len({v for path in m.paths for v in path})
        if crossed > MAX_SCORED_NODES:
            raise rule("paths", m.n, f"paths cross {crossed} nodes, above the {MAX_SCORED_NODES} "
                       "the evaluator scores (its graph edit distance is cubic in the nodes; "
                       "measure fewer paths)")
        self._measurement = m
        self._categories = self._category_weights(m)
        return self

    def _category_weights(self, m: Any) -> dict:
        from dmlopt.models.infer.measurement import cast_weights, solve_category_weights

        if not self.kcast:
            return m.categories()
        try:
            phi = cast_weights(m.graph, m.paths, noise=self.noise, seed=self.seed)
            return solve_category_weights(phi, m.n, method=self.kcast_method,
                                          threshold=self.threshold)
        except TooManyPathsError as exc:
            raise rule("paths", m.n, f"is too many for kcast ({exc})") from None

    @property
    def n(self) -> int:
        """Number of measurement paths."""
        return self._measurement.n

    @property
    def categories(self) -> dict:
        """The non-zero category weights the inference methods see (``frozenset -> w``)."""
        return self._categories


class Solution(Frozen):
    """An inferred topology: directed edges, the source, one endpoint and route per path."""

    problem: Literal["infer"] = "infer"
    method: str = ""
    source: Node
    endpoints: list[Node]
    routes: list[list[Node]]
    edges: list[tuple[Node, Node]]
    weights: list[float] | None = None


def solution_from_inference(inference: Any) -> Solution:
    """The :class:`Solution` of an :class:`dmlopt.models.infer.ft.Inference`."""
    edges = [(u, v) for u, v in inference.graph.edges()]
    w = [inference.graph.edges[e].get("weight") for e in edges]
    weights = [float(x) for x in w] if all(x is not None for x in w) and w else None
    return parse(Solution, {"method": inference.method, "source": inference.source,
                            "endpoints": list(inference.endpoints),
                            "routes": [list(r) for r in inference.routes],
                            "edges": edges, "weights": weights})


def to_inference(solution: Solution) -> Any:
    """The :class:`dmlopt.models.infer.ft.Inference` of a solution (its graph as a DiGraph)."""
    import networkx as nx

    from dmlopt.models.infer.ft import Inference

    g = nx.DiGraph()
    g.add_node(solution.source)
    for i, (u, v) in enumerate(solution.edges):
        g.add_edge(u, v)
        if solution.weights is not None:
            g.edges[u, v]["weight"] = solution.weights[i]
    return Inference(g, solution.source, tuple(solution.endpoints),
                     tuple(tuple(r) for r in solution.routes), solution.method)


def _violations(instance: Instance, solution: Solution) -> list[str]:
    n = instance.n
    out = []
    if len(solution.routes) != n:
        out.append(f"routes: {len(solution.routes)} routes, the measurement has {n} paths")
    if len(solution.endpoints) != len(solution.routes):
        out.append(f"endpoints: {len(solution.endpoints)} endpoints for "
                   f"{len(solution.routes)} routes")
    if solution.weights is not None and len(solution.weights) != len(solution.edges):
        out.append(f"weights: {len(solution.weights)} weights for {len(solution.edges)} edges")
    if out:
        return out
    adj = {frozenset(e) for e in solution.edges}
    for i, (r, end) in enumerate(zip(solution.routes, solution.endpoints, strict=True)):
        if len(r) < 2 or r[0] != solution.source or r[-1] != end:
            out.append(f"routes[{i}]: {r!r} must run from the source {solution.source!r} to "
                       f"endpoints[{i}] = {end!r} over at least one edge")
            continue
        bad = next((k for k in range(len(r) - 1) if frozenset((r[k], r[k + 1])) not in adj),
                   None)
        if bad is not None:
            out.append(f"routes[{i}][{bad}]: {r[bad]!r} -> {r[bad + 1]!r} is not an edge of the "
                       "inferred graph")
    return out


def _check_scorable(solution: Solution) -> None:
    """Refuse an inferred graph above what the evaluator scores in reasonable time."""
    from dmlopt.errors import InstanceError

    if len(solution.edges) > MAX_SCORED_EDGES:
        raise InstanceError("solution.edges", f"{len(solution.edges)} edges",
                            f"is above the {MAX_SCORED_EDGES} the evaluator scores")
    nodes = len({v for e in solution.edges for v in e} | {solution.source})
    if nodes > MAX_SCORED_NODES:
        raise InstanceError("solution.edges", f"{nodes} nodes", f"is above the "
                            f"{MAX_SCORED_NODES} the evaluator scores (graph edit distance)")


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    """Section V-B's metrics of an inferred topology; objective: the hops error."""
    from dmlopt.models.infer.metrics import evaluate_inference

    _check_scorable(solution)
    viol = _violations(instance, solution)
    if viol:
        return Evaluation(math.inf, False, tuple(viol[:10]))
    m = instance.measurement
    inf = to_inference(solution)
    ev = evaluate_inference(inf, m)
    under = evaluate_inference(inf, m, reference="underlay", with_ged=False)
    metrics = {k: float(v) for k, v in ev.items()}
    metrics["hops_error_underlay"] = float(under["hops_error"])
    metrics["paths"] = float(m.n)
    metrics["path_hops"] = float(np.mean([len(p) - 1 for p in m.paths]))
    return Evaluation(float(ev["hops_error"]), True, (), metrics)


#: no exact formulation: inference is scored, not optimised (so no build / estimate_size /
#: decode / warm_start: dmlopt.api refuses a formulation before it would call them)
FORMULATIONS: dict[str, Formulation] = {}


def zero_bound(instance: Instance, *, time_limit: float | None = None) -> BoundValue:
    """The trivial lower bound of the hops error: 0.

    Parameters
    ----------
    instance : Instance
        A measurement.
    time_limit : float, optional
        Unused (the bound is immediate).

    Returns
    -------
    BoundValue
        0: the hops error is a mean of relative absolute hop errors. It is tight whenever some
        method infers every path length exactly, as Flow Tracking does on tree routings.

    References
    ----------
    Paper 000, section V-B (the hops error metric).
    """
    return BoundValue(0.0)


#: inference is scored, not optimised: the only bound is the metric's own floor
BOUNDS: dict[str, Bound] = {
    "zero": Bound(zero_bound, NoOptions, unbounded,
                  "hops error >= 0 (the metric's floor; tight where an inference is exact)"),
}

#: the bound to use (the only one)
RECOMMENDED_BOUND = "zero"


def generate_dc(*, seed: int = 0, topology: str = "fat-tree", routing: str = "dijkstra",
                paths: int | None = None, k: int = 4, dcell_n: int = 4, dcell_level: int = 1,
                kcast: bool = False, noise: float = 0.0,
                kcast_method: str = "mobius") -> Instance:
    """Figs. 5-10's setting: a measurement on a fat-tree or DCell with ``paths`` paths.

    Parameters
    ----------
    seed : int, optional
        The Monte Carlo run: the measurement seed (edge weights, source, destinations, routes);
        default 0.
    topology : {"fat-tree", "dcell", "leaf-spine"}, optional
        The ground-truth underlay (:mod:`dmlopt.topology`; default ``"fat-tree"``).
    routing : {"dijkstra", "random-walk", "random-simple", "random-shortest"}, optional
        Routing strategy of section V-A (default ``"dijkstra"``).
    paths : int or None, optional
        Measurement paths (distinct destination servers); None (default): every server but the
        source.
    k : int, optional
        Fat-tree arity, even (default 4).
    dcell_n, dcell_level : int, optional
        Servers per DCell_0 (default 4) and DCell level (default 1).
    kcast : bool, optional
        Recover the category weights from simulated k-cast measurements (eq. 7) instead of the
        exact ones (eqs. 2-6); default False.
    noise : float, optional
        Standard deviation of the Gaussian noise on the k-cast measurements (default 0).
    kcast_method : {"mobius", "lstsq", "nnls"}, optional
        How the category weights are recovered from the k-casts (default ``"mobius"``).

    Returns
    -------
    Instance
        Named ``<topology>-<routing>-p<paths>[-kcast]-s<seed>``; the measurement is drawn when
        it is validated.

    References
    ----------
    Paper 000 (An, Wu, Huang), sections II-B (measurement model, eqs. 2-7) and V-A (setup of
    Figs. 5-10).
    """
    tag = f"{topology}-{routing}-p{'all' if paths is None else paths}" + ("-kcast" if kcast
                                                                           else "")
    return parse(Instance, {"name": f"{tag}-s{seed}", "topology": topology, "routing": routing,
                            "paths": paths, "k": k, "dcell_n": dcell_n,
                            "dcell_level": dcell_level, "seed": seed, "kcast": kcast,
                            "noise": noise, "kcast_method": kcast_method})


class DcParams(Options):
    """Parameters of the ``dc`` generator (Figs. 5-10)."""

    topology: Literal["fat-tree", "dcell", "leaf-spine"] = pydantic.Field(
        default="fat-tree", description="the ground-truth underlay (dmlopt.topology)")
    routing: Literal["random-walk", "random-simple", "random-shortest", "dijkstra"] = \
        pydantic.Field(default="dijkstra", description="routing strategy of section V-A")
    paths: int | None = pydantic.Field(
        default=None, ge=1, description="measurement paths (distinct destination servers; None: "
        "every server but the source)")
    k: int = pydantic.Field(default=4, ge=2, description="fat-tree arity (even)")
    dcell_n: int = pydantic.Field(default=4, ge=2, description="servers per DCell_0")
    dcell_level: int = pydantic.Field(default=1, ge=0, description="DCell level")
    kcast: bool = pydantic.Field(default=False, description="recover the category weights from "
                                 "simulated k-cast measurements (eq. 7)")
    noise: float = pydantic.Field(default=0.0, ge=0, description="Gaussian noise std of the "
                                  "k-cast measurements (kcast only)")
    kcast_method: Literal["mobius", "lstsq", "nnls"] = pydantic.Field(
        default="mobius", description="how the category weights are recovered from k-casts")


def underlay_nodes(topology: str, k: int, dcell_n: int, dcell_level: int, leaves: int = 4,
                   spines: int = 2, servers_per_leaf: int = 4) -> float:
    """Nodes of a generated underlay, from its parameters (no graph built)."""
    if topology == "fat-tree":
        return 5 * float(k) ** 2 / 4 + float(k) ** 3 / 4
    if topology == "leaf-spine":
        return float(leaves) * (1 + servers_per_leaf) + spines
    servers = float(dcell_n)
    for _ in range(min(dcell_level, 64)):
        servers = servers * (servers + 1)
        if servers > 1e30:
            break
    return servers * (1 + 1 / dcell_n)


def estimate_dc(params: DcParams) -> Size:
    """The underlay (refused by the topology above its node limit), one route per path, and
    2^paths k-cast weights when ``kcast``."""
    nodes = underlay_nodes(params.topology, params.k, params.dcell_n, params.dcell_level)
    paths = float(params.paths) if params.paths is not None else nodes
    casts = 2.0 ** min(paths, 1000) if params.kcast else 0.0
    return Size(500 * nodes + 16 * casts, 1000 * nodes * (1 + paths) + 100 * casts * paths)


GENERATORS: dict[str, Generator] = {
    "dc": Generator(generate_dc, DcParams, estimate_dc,
                    "a measurement on a fat-tree, DCell or leaf-spine (Figs. 5-10)"),
}


#: a tiny ``dmlopt.generate`` spec, a k=4 fat-tree measured along 4 paths (no formulation:
#: heuristics only); tests/core/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "dc", "topology": "fat-tree", "routing": "dijkstra",
                           "paths": 4}


# --------------------------------------------------------------------------------------------
# the command (dmlopt infer) and the toolkit's public names


def _configure_infer(parser: Any) -> None:
    from dmlopt.models.infer import cli

    cli.configure(parser)


def _run_infer(args: Any) -> int:
    from dmlopt.models.infer import cli

    return cli.cmd_infer(args)


COMMANDS = {"infer": Command("infer", "infer a topology from end-to-end measurements (FT, RNJ, "
                                      "CE; paper 000): dmlopt infer --topology fat-tree -p k=4",
                             _configure_infer, _run_infer)}

#: public names of the toolkit -> their module, imported on first use
_TOOLKIT = {
    "ROUTINGS": "measurement",
    "Measurement": "measurement",
    "cast_weights": "measurement",
    "category_weights": "measurement",
    "check_paths": "measurement",
    "measure": "measurement",
    "route": "measurement",
    "solve_category_weights": "measurement",
    "with_weights": "measurement",
    "Inference": "ft",
    "flow_tracking": "ft",
    "clique_embedding": "baselines",
    "infer": "baselines",
    "rooted_neighbor_joining": "baselines",
    "evaluate_inference": "metrics",
    "ged": "metrics",
    "measured_subgraph": "metrics",
    "allocation_gap": "pipeline",
}



def __getattr__(name: str) -> Any:
    try:
        module = _TOOLKIT[name]
    except KeyError:
        raise AttributeError(f"module 'dmlopt.models.infer' has no attribute {name!r}") from None
    return getattr(importlib.import_module(f"dmlopt.models.infer.{module}"), name)
