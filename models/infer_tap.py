"""Task allocation on an inferred topology (paper 000, section V-C, Fig. 11) as a problem.

An instance is a TAP setting whose VM distances the allocator does not know: a ground-truth
underlay (fat-tree, DCell, ... as in :mod:`dmlopt.models.infer`), ``vms`` servers drawn with
``seed`` (one is the measurement source, the others the destinations), a routing strategy, an
overlay of ``modules`` ML modules (``ps``, ``allreduce``, ``ring``, ``random``:
:func:`dmlopt.models.tap.overlay_matrix`) and the capacity ``K``. When the instance is validated,
the topology is inferred from the exact category weights of the measurement by ``inference``
(``ft`` by default; ``rnj``, ``ce``) and two TAP instances are kept: :attr:`Instance.inferred`
(the VM hop matrix of the inferred topology, clusters by TAP's rule for a bare D) and
:attr:`Instance.truth` (the true underlay and the same VMs, VM ``j`` = ``[source,
*destinations][j]``).

A solution is a TAP assignment (module -> VM index). The evaluator is TAP's on the *truth*: the
objective is the communication cost (eq. 8) the allocation really incurs; ``cost_on_inferred``
(the cost the allocator believed) and ``hop_corr`` (Pearson correlation of inferred and true VM
hop counts) are metrics.

Methods. Heuristics (:mod:`dmlopt.heuristics.infer_tap`) allocate on the inferred instance by
default: ``exact`` (TAP's ``class`` formulation solved by HiGHS, one thread: the paper's "MINLP
on the inferred topology"), ``cle``, ``abm``, ``random``, ``local-search``, ``abm-ls``; the option
``on = "truth"`` runs the same method on the true instance (the reference allocator). The one
exact formulation, ``truth``, is TAP's ``class`` model of the true instance: its optimum is the
best cost any allocation can reach, so the benchmark report's gap to the proven optimum of a
heuristic run *is* Fig. 11's price of allocating on the inferred topology.

Examples
--------
Four all-reduce modules on five DCell servers, allocated by ABM on the inferred topology; the
objective is the cost on the true one:

>>> import dmlopt
>>> inst = dmlopt.generate("infer_tap", {"generator": "dc", "topology": "dcell", "vms": 5,
...                                     "modules": 4, "overlay": "allreduce"}, seed=0)
>>> result = dmlopt.heuristic(inst, "abm", seed=0)
>>> result.status, round(result.objective, 3), dmlopt.evaluate(inst, result.solution).feasible
('feasible', 19.0, True)
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic
from pydantic import PrivateAttr

from dmlopt.contract import Bound, BoundValue, Formulation, Generator, Options, Size
from dmlopt.evaluation import Evaluation
from dmlopt.models.infer import Measured, underlay_nodes
from dmlopt.models.tap import MAX_MODULES
from dmlopt.validation import Frozen, parse, rule

NAME = "infer_tap"
TITLE = "Task allocation on an inferred topology"
PAPER = "000 (An, Wu, Huang)"
SENSE = "min"

INFERENCE = ("ft", "rnj", "ce")


#: largest inference run at validation, in interpreted steps (about a minute at the limit)
MAX_INFERENCE_STEPS = 5e7


#: largest hop-correlation work at validation: VM pairs x (nodes + edges) of the underlay
MAX_HOP_PAIR_STEPS = 2e8


def _hop_pair_steps(measurement: Any) -> float:
    """Bound on the steps of :func:`dmlopt.models.infer.pipeline.hop_correlation`: one
    (bidirectional) breadth-first search per pair of VMs on the underlay."""
    g = measurement.graph
    vms = measurement.n + 1
    return vms * (vms - 1) / 2 * float(g.number_of_nodes() + g.number_of_edges())


def _inference_steps(method: str, paths: int, categories: int) -> float:
    """Steps of FT / CE (per path its categories) or RNJ (up to n merges over all pairs)."""
    if method == "rnj":
        return float(paths) ** 3 + categories
    return float(paths) * categories + categories


class Instance(Measured):
    """A TAP overlay on VMs whose topology is inferred (see the module docstring)."""

    problem: Literal["infer_tap"] = "infer_tap"
    vms: int = pydantic.Field(default=8, ge=2, description="VMs: the source + vms-1 destinations")
    overlay: str = "ps"
    modules: int = pydantic.Field(default=8, ge=2)
    K: int = pydantic.Field(default=1, ge=1)
    inference: str = "ft"

    _truth: Any = PrivateAttr(default=None)
    _inferred: Any = PrivateAttr(default=None)
    _hop_corr: float = PrivateAttr(default=float("nan"))

    @pydantic.model_validator(mode="after")
    def _rules(self) -> Instance:
        from dmlopt.models.infer import InferenceError, infer
        from dmlopt.models.infer.pipeline import (
            hop_correlation,
            tap_instance,
            true_instance,
            vm_hops,
        )
        from dmlopt.models.tap import overlay_matrix

        if self.inference not in INFERENCE:
            raise rule("inference", self.inference, f"is not one of {', '.join(INFERENCE)}")
        if self.modules > self.vms * self.K:
            raise rule("K", self.K, f"is too small: {self.modules} modules > vms*K = "
                       f"{self.vms * self.K} (paper 000, condition 10)")
        try:
            traffic = overlay_matrix(self.overlay, self.modules)
        except Exception as exc:  # noqa: BLE001 - TAP's own message names the rule
            raise rule("overlay", self.overlay, f"rejected ({exc})") from None
        m = self._draw(self.vms - 1)
        self._measurement = m
        pair_steps = _hop_pair_steps(m)
        if pair_steps > MAX_HOP_PAIR_STEPS:
            raise rule("vms", self.vms, f"is too many on this underlay: the hop correlation "
                       f"takes up to {pair_steps:.3g} search steps (one search per VM pair), "
                       f"above the limit {MAX_HOP_PAIR_STEPS:.3g}")
        categories = m.categories()
        steps = _inference_steps(self.inference, m.n, len(categories))
        if steps > MAX_INFERENCE_STEPS:
            raise rule("vms", self.vms, f"is too many for {self.inference}: inferring the "
                       f"topology takes about {steps:.3g} interpreted steps, above the limit "
                       f"{MAX_INFERENCE_STEPS:.3g}")
        inf = infer(categories, m.n, self.inference,
                    **({"seed": self.seed} if self.inference == "ce" else {}))
        try:
            d = vm_hops(inf)
        except InferenceError as exc:
            raise rule("inference", self.inference, f"gave no usable topology ({exc})") from None
        self._inferred = tap_instance(d, traffic, K=self.K, name=f"{self.name}@inferred")
        self._truth = true_instance(m, traffic, K=self.K, name=f"{self.name}@truth")
        self._hop_corr = hop_correlation(inf, m)
        return self

    @property
    def truth(self) -> Any:
        """The TAP instance on the true underlay (what allocations are scored on)."""
        return self._truth

    @property
    def inferred(self) -> Any:
        """The TAP instance on the inferred VM hop matrix (what the allocator sees)."""
        return self._inferred


class Solution(Frozen):
    """VM index of every module (VM ``j`` = ``[source, *destinations][j]``)."""

    problem: Literal["infer_tap"] = "infer_tap"
    assignment: list[int]


def _tap_solution(solution: Solution) -> Any:
    from dmlopt.models.tap import Solution as TapSolution

    return TapSolution(assignment=list(solution.assignment))


def evaluate(instance: Instance, solution: Solution) -> Evaluation:
    """TAP's evaluator on the truth; ``cost_on_inferred`` and ``hop_corr`` as metrics."""
    from dmlopt.models import tap

    ev = tap.evaluate(instance.truth, _tap_solution(solution))
    if not ev.feasible:
        return ev
    believed = tap.evaluate(instance.inferred, _tap_solution(solution)).objective
    metrics = dict(ev.metrics)
    metrics.update({"cost_on_inferred": float(believed), "hop_corr": instance._hop_corr,
                    "vms": float(instance.vms)})
    return Evaluation(ev.objective, True, (), metrics)


def _build_truth(instance: Instance) -> Any:
    """TAP's ``class`` model of the true instance: its optimum is the best cost any
    allocation can reach, so a heuristic's gap to it is Fig. 11's price of inference.

    Parameters
    ----------
    instance : Instance
        An ``infer_tap`` instance.

    Returns
    -------
    pyomo.environ.ConcreteModel
        :func:`dmlopt.models.tap.build_class` of :attr:`Instance.truth`.

    References
    ----------
    Paper 000, section V-C, Fig. 11 and equations (8)-(12); the class aggregation is ours
    (:func:`dmlopt.models.tap.build_class`).
    """
    from dmlopt.models import tap

    return tap.build(instance.truth, "class")


def _size_truth(instance: Instance) -> tuple[int, int]:
    from dmlopt.models import tap

    return tap.estimate_size(instance.truth, "class")


FORMULATIONS: dict[str, Formulation] = {
    "truth": Formulation(_build_truth, _size_truth,
                         "TAP's class formulation on the true hop matrix (the optimum)"),
}


def build(instance: Instance, formulation: str = "truth") -> Any:
    """TAP's ``class`` model of the true instance."""
    return FORMULATIONS[formulation].build(instance)


def estimate_size(instance: Instance, formulation: str = "truth") -> tuple[int, int]:
    """(variables, constraints) of the model, computed without building it."""
    return FORMULATIONS[formulation].estimate_size(instance)


def decode(model: Any, instance: Instance) -> Solution:
    from dmlopt.models import tap

    return Solution(assignment=list(tap.decode(model, instance.truth).assignment))


def warm_start(model: Any, instance: Instance, solution: Solution) -> None:
    from dmlopt.models import tap

    tap.warm_start(model, instance.truth, _tap_solution(solution))


def generate_dc(*, seed: int = 0, topology: str = "fat-tree", routing: str = "random-walk",
                vms: int = 8, overlay: str = "ps", modules: int = 8, K: int = 1, k: int = 4,
                dcell_n: int = 4, dcell_level: int = 1, inference: str = "ft") -> Instance:
    """Fig. 11's setting: 8 modules, K = 1, PS or all-reduce on a fat-tree or DCell.

    The topology is inferred when the instance is validated (exact category weights).

    Parameters
    ----------
    seed : int, optional
        The Monte Carlo run: VMs, edge weights, routes (default 0).
    topology : {"fat-tree", "dcell", "leaf-spine"}, optional
        The ground-truth underlay (default ``"fat-tree"``).
    routing : {"random-walk", "random-simple", "random-shortest", "dijkstra"}, optional
        Routing strategy of section V-A (default ``"random-walk"``).
    vms : int, optional
        VMs: the measurement source and ``vms - 1`` destinations (default 8).
    overlay : {"ps", "allreduce", "ring", "random"}, optional
        The traffic between the modules (:func:`dmlopt.models.tap.overlay_matrix`; default
        ``"ps"``).
    modules : int, optional
        ML modules (default 8).
    K : int, optional
        Modules per VM at most (default 1).
    k : int, optional
        Fat-tree arity, even (default 4).
    dcell_n, dcell_level : int, optional
        Servers per DCell_0 (default 4) and DCell level (default 1).
    inference : {"ft", "rnj", "ce"}, optional
        The inference method whose topology the allocator sees (default ``"ft"``).

    Returns
    -------
    Instance
        Named ``<topology>-<overlay>-<routing>-v<vms>-<inference>-s<seed>``.

    References
    ----------
    Paper 000 (An, Wu, Huang), section V-C, Fig. 11.
    """
    return parse(Instance, {
        "name": f"{topology}-{overlay}-{routing}-v{vms}-{inference}-s{seed}",
        "topology": topology, "routing": routing, "vms": vms, "overlay": overlay,
        "modules": modules, "K": K, "k": k, "dcell_n": dcell_n, "dcell_level": dcell_level,
        "seed": seed, "inference": inference})


class DcParams(Options):
    """Parameters of the ``dc`` generator (Fig. 11)."""

    topology: Literal["fat-tree", "dcell", "leaf-spine"] = pydantic.Field(
        default="fat-tree", description="the ground-truth underlay (dmlopt.topology)")
    routing: Literal["random-walk", "random-simple", "random-shortest", "dijkstra"] = \
        pydantic.Field(default="random-walk", description="routing strategy of section V-A")
    vms: int = pydantic.Field(default=8, ge=2, description="VMs: the source and vms - 1 "
                              "destinations")
    overlay: Literal["ps", "allreduce", "ring", "random"] = pydantic.Field(
        default="ps", description="the overlay between the modules")
    modules: int = pydantic.Field(default=8, ge=2, le=MAX_MODULES,
                                  description="number of ML modules")
    K: int = pydantic.Field(default=1, ge=1, description="modules per VM at most")
    k: int = pydantic.Field(default=4, ge=2, description="fat-tree arity (even)")
    dcell_n: int = pydantic.Field(default=4, ge=2, description="servers per DCell_0")
    dcell_level: int = pydantic.Field(default=1, ge=0, description="DCell level")
    inference: Literal["ft", "rnj", "ce"] = pydantic.Field(
        default="ft", description="the inference method whose topology the allocator sees")


def estimate_dc(params: DcParams) -> Size:
    """The underlay, vms - 1 routes, the inference (bounded at validation) and two vms x vms
    hop matrices."""
    nodes = underlay_nodes(params.topology, params.k, params.dcell_n, params.dcell_level)
    vms, m = float(params.vms), float(params.modules)
    return Size(500 * nodes + 300 * (vms * vms + m * m),
                1000 * nodes * (1 + vms) + 1000 * (vms * vms + m * m))


GENERATORS: dict[str, Generator] = {
    "dc": Generator(generate_dc, DcParams, estimate_dc,
                    "Fig. 11's setting: an overlay allocated on an inferred fat-tree or DCell"),
}


#: a tiny ``dmlopt.generate`` spec, 4 modules on 5 DCell VMs: solves in about a second with
#: every formulation; tests/core/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "dc", "topology": "dcell", "routing": "random-walk",
                           "vms": 5, "modules": 4, "overlay": "allreduce"}


def _truth_bound(name: str) -> Bound:
    """TAP's bound ``name`` on the true instance: the evaluator scores an allocation on the
    truth, so a lower bound of the true TAP bounds every allocation, wherever it was found."""
    from dmlopt.models.tap.bounds import BOUNDS as TAP_BOUNDS

    entry = TAP_BOUNDS[name]

    def function(instance: Instance, *, time_limit: float | None = None,
                 **options: Any) -> BoundValue:
        """TAP's bound on the true instance: a lower bound on every allocation's true cost.

        Parameters
        ----------
        instance : Instance
            An ``infer_tap`` instance.
        time_limit : float or None, optional
            Seconds, as TAP's bound takes them (default None: its own default).
        **options
            TAP's bound options (:class:`dmlopt.models.tap.bounds.HahnGrantOptions` for
            ``hahn-grant``; none for ``glb``).

        Returns
        -------
        BoundValue
            TAP's bound value, its assignment as a solution, its metrics.

        References
        ----------
        Gilmore (1962) and Lawler (1963) for ``glb``, Hahn and Grant (1998) for
        ``hahn-grant`` (:mod:`dmlopt.models.tap.bounds`), on paper 000's (8)-(12).
        """
        value = entry.function(instance.truth, time_limit=time_limit, **options)
        sol = None if value.solution is None else \
            Solution(assignment=list(value.solution.assignment))
        return BoundValue(value.bound, solution=sol, metrics=dict(value.metrics))

    return Bound(function=function, Options=entry.Options,
                 estimate=lambda inst, opts: entry.estimate(inst.truth, opts),
                 description=f"TAP's {name!r} bound on the true hop matrix")


#: TAP's bounds on the truth (strongest first), as in :mod:`dmlopt.models.tap.bounds`
BOUNDS: dict[str, Bound] = {name: _truth_bound(name) for name in ("hahn-grant", "glb")}

#: the bound to use (docs/infer_tap.md)
RECOMMENDED_BOUND = "glb"
