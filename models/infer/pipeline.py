"""Task allocation on an inferred topology (paper 000, section V-C, Fig. 11).

The VMs are the measured servers (the source and the destinations). The pipeline:

1. hop matrix among the VMs in the *inferred* topology (undirected shortest hop counts,
   :meth:`~dmlopt.models.infer.ft.Inference.hop_matrix`);
2. a TAP instance (:mod:`dmlopt.models.tap`) with that matrix, the overlay traffic ``M`` and
   ``K``; clusters for Cluster Embedding are derived from the matrix by TAP's rule for a bare D
   (VMs at the smallest positive distance, single linkage), since the inferred graph has no
   switch labels;
3. an allocation by an exact solver (:func:`dmlopt.solve`) or a heuristic
   (:func:`dmlopt.heuristic`: CLE, ABM, random, local search, ...);
4. its cost re-evaluated by TAP's evaluator on the *ground-truth* instance (the true underlay and
   the same VMs): the communication cost the allocation really incurs.

:func:`allocation_gap` runs the same method on the true instance too, so the price of not
knowing the topology is ``cost(inferred allocation) / cost(true allocation) - 1``. For an exact
method it is >= 0 (the optimum on the truth is a lower bound); a heuristic can be lucky on the
inferred matrix, so its gap can be negative.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np

from dmlopt.models.infer.errors import InferenceError
from dmlopt.models.infer.ft import Inference
from dmlopt.models.infer.measurement import Measurement

#: "exact" solves TAP's "class" formulation with HiGHS; the others are TAP heuristic names
DEFAULT_METHODS = ("exact", "cle", "abm", "random", "abm-ls")


def vm_hops(inference: Inference) -> np.ndarray:
    """Symmetric hop matrix among ``[source, *endpoints]`` in the inferred topology."""
    d = inference.hop_matrix()
    if not np.all(np.isfinite(d)):
        raise InferenceError("inference: the inferred topology does not connect every VM")
    return np.minimum(d, d.T)


def tap_instance(d: np.ndarray, traffic: np.ndarray, *, K: int = 1, name: str = ""):
    """A TAP instance from a VM hop matrix and an overlay traffic matrix."""
    from dmlopt.models.tap import Instance
    from dmlopt.validation import parse

    return parse(Instance, {"name": name, "M": np.asarray(traffic, float).tolist(),
                            "D": np.asarray(d, float).tolist(), "K": K})


def true_instance(measurement: Measurement, traffic: np.ndarray, *, K: int = 1,
                  name: str = ""):
    """The ground-truth TAP instance: the whole underlay, VMs = source + destinations."""
    from dmlopt.models.tap import Instance
    from dmlopt.validation import parse

    g = measurement.graph
    servers = [v for v, k in g.nodes(data="kind") if k == "server"] or None
    vms = [measurement.source, *measurement.destinations]
    if len(set(vms)) != len(vms):
        raise InferenceError("destinations: repeated servers cannot be distinct VMs")
    return parse(Instance, {"name": name, "M": np.asarray(traffic, float).tolist(), "K": K,
                            "vms": vms, "underlay": {"edges": [list(e) for e in g.edges()],
                                                     "servers": servers}})


def allocate(instance, method: str, *, seed: int = 0, time_limit: float = 60.0):
    """A TAP solution by ``method``: ``"exact"`` (HiGHS on the ``class`` formulation, one
    thread) or a TAP heuristic name. Returns the :class:`dmlopt.Result`."""
    import dmlopt

    if method == "exact":
        return dmlopt.solve(instance, "highs", formulation="class", time_limit=time_limit,
                            threads=1)
    return dmlopt.heuristic(instance, method, seed=seed)


def allocation_gap(measurement: Measurement, inference: Inference, traffic: np.ndarray, *,
                   K: int = 1, methods: Sequence[str] = DEFAULT_METHODS, seed: int = 0,
                   time_limit: float = 60.0) -> list[dict]:
    """For each method: the true cost of allocating on the inferred topology and on the truth.

    Returns
    -------
    one row per method: ``method``, ``cost_inferred`` (allocation computed on the inferred hop
    matrix, cost evaluated on the true one), ``cost_true`` (allocation computed on the truth),
    ``gap`` (``cost_inferred / cost_true - 1``), ``status`` of both runs and their seconds.
    """
    from dmlopt.models.tap import evaluate

    truth = true_instance(measurement, traffic, K=K)
    guess = tap_instance(vm_hops(inference), traffic, K=K)
    rows = []
    for method in methods:
        on_guess = allocate(guess, method, seed=seed, time_limit=time_limit)
        on_truth = allocate(truth, method, seed=seed, time_limit=time_limit)
        real = evaluate(truth, on_guess.solution)
        if not real.feasible:  # same VMs and K, so never; guard the invariant anyway
            raise InferenceError(f"{method}: allocation infeasible on the truth: "
                                 f"{real.violations[0]}")
        c_true = on_truth.objective
        rows.append({
            "method": method,
            "cost_inferred": real.objective,
            "cost_true": c_true,
            "gap": real.objective / c_true - 1 if c_true else 0.0,
            "status_inferred": on_guess.status,
            "status_true": on_truth.status,
            "seconds_inferred": on_guess.seconds,
            "seconds_true": on_truth.seconds,
        })
    return rows


def hop_correlation(inference: Inference, measurement: Measurement) -> float:
    """Pearson correlation between inferred and true (underlay) VM hop counts (section II-C's
    criterion 1: at least a positive correlation), over distinct VM pairs."""
    d_inf = vm_hops(inference)
    vms = [measurement.source, *measurement.destinations]
    d_true = np.array([[nx.shortest_path_length(measurement.graph, a, b) for b in vms]
                       for a in vms], dtype=float)
    iu = np.triu_indices(len(vms), 1)
    x, y = d_inf[iu], d_true[iu]
    if x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])
