"""TAP (paper 000): names and limits."""

from __future__ import annotations

NAME = "tap"
TITLE = "Task allocation of ML modules to VMs"
PAPER = "000 (An, Wu, Huang)"
SENSE = "min"

#: largest number of modules, of VMs, and of underlay nodes accepted
MAX_MODULES = 2000
MAX_VMS = 5000
MAX_UNDERLAY_NODES = 200_000
#: largest breadth-first work accepted to derive D from an underlay: VMs x (nodes + edges)
#: (one search per VM; about 20 s of networkx at the limit)
MAX_HOP_WORK = 50_000_000

Node = int | str
#: largest sum(M) x max(D) accepted: every objective (8) lies below it, and up to 2^53 every
#: integer objective and bound is exact in a 64-bit float
MAX_OBJECTIVE = float(2**53)
