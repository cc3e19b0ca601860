"""INC/OXC (paper 002): names and limits."""

from __future__ import annotations

import pydantic

NAME = "inc_oxc"
TITLE = "DML job scheduling in all-optical DCNs with in-network computing"
PAPER = "002 (Dong, Yang, Zhang, Xie, Zhu)"
SENSE = "max"

#: relative tolerance of the capacity checks
TOL = 1e-6

#: most racks of an instance (paper: 64). The evaluator and every model hold R x R matrices
#: (circuits c_st, loads), so R is what bounds them: 4096 racks are 128 MiB per matrix.
MAX_RACKS = 4096
#: most ports per ToR (paper: 4-12 per ToR; a switch has at most a few hundred): the bounds hold
#: arrays over 0..N_ToR circuits per rack pair, so a larger count is refused, not allocated
MAX_PORTS = 65536

_Num = pydantic.Field(ge=0, allow_inf_nan=False)
