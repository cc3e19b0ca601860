"""Topology inference from end-to-end measurements (paper 000, sections II, III and V).

``measurement``: underlay weights, routing strategies, exact and k-cast category weights;
``ft``: Flow Tracking (Algorithm 1); ``baselines``: RNJ and CE; ``metrics``: hops error, GDE,
PDE, NGED, H2; ``pipeline``: inferred topology -> TAP allocation -> cost on the ground truth;
``cli``: ``dmlopt infer``.

Names are loaded on first use (``from dmlopt.infer import measure``), so the command line does
not pay for numpy, scipy and networkx unless it runs ``dmlopt infer``.
"""

from __future__ import annotations

import importlib
from typing import Any

from dmlopt.infer.errors import InferenceError, TooManyPathsError

_EXPORTS = {
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

__all__ = ["InferenceError", "TooManyPathsError", *_EXPORTS]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'dmlopt.infer' has no attribute {name!r}") from None
    return getattr(importlib.import_module(f"dmlopt.infer.{module}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
