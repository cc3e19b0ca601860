"""Nara (paper 001): names and tolerances."""

from __future__ import annotations

NAME = "nara"
TITLE = "Network-aware online resource allocation (Nara)"
PAPER = "001 (Shabka, Zervas)"
SENSE = "max"

#: bandwidth tolerance (the generators use multiples of 0.01)
BW_TOL = 1e-6
