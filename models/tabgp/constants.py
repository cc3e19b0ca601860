"""TABGP (paper 004): names."""

from __future__ import annotations

NAME = "tabgp"
TITLE = "Temporal balanced graph partitioning"
PAPER = "004 (Figiel, Nichterlein, Schmid)"
SENSE = "min"

#: largest edge weight and migration cost accepted: with weights of 1e16 beside weights of 1
#: the MILP solvers proved nothing (HiGHS) or mispriced the model (SCIP); at 1e12 every
#: formulation still proves the optimum of a 4-cycle mixing both
MAX_WEIGHT = 1e12
