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
#: largest resource, data, alpha and port-bandwidth figure accepted: HiGHS drops coefficients of
#: 1e15 and more from a model (a PS memory of 1e15 made it call a feasible instance infeasible);
#: 1e12 (and N_ToR x B at most 65,536 x 1e9) leaves a margin
MAX_VALUE = 1e12
MAX_PORT_BW = 1e9
#: smallest job data accepted, relative to the largest job's: a job of 1e-9 MB beside jobs of
#: hundreds had its loads within the solvers' feasibility tolerance, so every MILP routed it
#: over rack pairs without a circuit
MIN_DATA_RATIO = 1e-6

_Num = pydantic.Field(ge=0, allow_inf_nan=False)
