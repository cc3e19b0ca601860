"""Nara (paper 001): names and tolerances."""

from __future__ import annotations

NAME = "nara"
TITLE = "Network-aware online resource allocation (Nara)"
PAPER = "001 (Shabka, Zervas)"
SENSE = "max"

#: bandwidth tolerance (the generators use multiples of 0.01)
BW_TOL = 1e-6

#: largest CPU, memory and bandwidth figure accepted (of a server, a link or a request): HiGHS
#: drops coefficients of 1e15 and more from a model (the offline MILP then accepted a request
#: whose memory no server holds, and called that optimal); 1e12 leaves a margin
MAX_UNITS = 10**12
