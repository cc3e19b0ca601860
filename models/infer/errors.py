"""Errors of the topology-inference package (bad input: exit code 2 on the command line)."""

from __future__ import annotations

from dmlopt.errors import DmloptError


class InferenceError(DmloptError, ValueError):
    """Bad inference input: a path that is not a walk of the graph, no paths, too many paths
    for the 2^n category system, an unknown routing strategy, ... The message names the field,
    the value and the rule."""


class TooManyPathsError(InferenceError):
    """The 2^n - 1 cast weights / categories of n paths are not tractable for this method."""
