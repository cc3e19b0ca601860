"""Heuristics for TABGP (paper 004, section 3)."""

from __future__ import annotations

import numpy as np
from dmlopt.models.tabgp import Instance, Solution


def random_partition(instance: Instance, *, seed: int = 0) -> Solution:
    """A uniformly random balanced partition, the same at every step (no migration)."""
    rng = np.random.default_rng(seed)
    labels = np.arange(instance.n) % instance.l
    rng.shuffle(labels)
    return Solution(assignment=[labels.tolist()] * instance.tau)


HEURISTICS = {"random": random_partition}
