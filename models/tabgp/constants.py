"""TABGP (paper 004): names."""

from __future__ import annotations

NAME = "tabgp"
TITLE = "Temporal balanced graph partitioning"
PAPER = "004 (Figiel, Nichterlein, Schmid)"
SENSE = "min"
