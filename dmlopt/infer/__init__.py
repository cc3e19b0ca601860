"""Topology inference from end-to-end measurements (paper 000, sections II, III and V).

``measurement``: underlay weights, routing strategies, exact and k-cast category weights;
``ft``: Flow Tracking (Algorithm 1); ``baselines``: RNJ and CE; ``metrics``: hops error, GDE,
PDE, NGED, H2; ``pipeline``: inferred topology -> TAP allocation -> cost on the ground truth.

>>> from dmlopt.infer import measure, flow_tracking, evaluate_inference
"""

from dmlopt.infer.baselines import clique_embedding, infer, rooted_neighbor_joining
from dmlopt.infer.errors import InferenceError, TooManyPathsError
from dmlopt.infer.ft import Inference, flow_tracking
from dmlopt.infer.measurement import (
    ROUTINGS,
    Measurement,
    cast_weights,
    category_weights,
    check_paths,
    measure,
    route,
    solve_category_weights,
    with_weights,
)
from dmlopt.infer.metrics import evaluate_inference, ged, measured_subgraph

__all__ = [
    "ROUTINGS",
    "Inference",
    "InferenceError",
    "Measurement",
    "TooManyPathsError",
    "cast_weights",
    "category_weights",
    "check_paths",
    "clique_embedding",
    "evaluate_inference",
    "flow_tracking",
    "ged",
    "infer",
    "measure",
    "measured_subgraph",
    "rooted_neighbor_joining",
    "route",
    "solve_category_weights",
    "with_weights",
]
