"""RAR (paper 003): names and limits."""

from __future__ import annotations

NAME = "rar"
TITLE = "Reliable RAR-based DMT scheduling in a computing power network"
PAPER = "003 (Chen et al.)"
SENSE = "min"

SCHEMES = ("MinCU", "MinW", "MinT", "MaxR")
EPS = 1e-9

#: largest ``ring_cap``: 100,000 rings take about 2 s and 100 MB to enumerate (a complete graph
#: of 20 nodes reaches it); the candidate rings P of every model are these
MAX_RING_CAP = 100_000
#: most DFS steps of the ring enumeration (a sparse network with long paths but few cycles
#: would otherwise be searched for hours): 2e6 steps take about 2 s; cpn38 with rings of up to
#: 12 nodes takes 16,007
MAX_RING_STEPS = 2_000_000
