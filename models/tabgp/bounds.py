"""Dual bounds of TABGP (paper 004): lower bounds on the total cut and migration cost."""

from __future__ import annotations

from dmlopt.bounds import lp_relaxation, mip_bound
from dmlopt.contract import Bound

BOUNDS: dict[str, Bound] = {
    "mip": mip_bound("pairs"),
    "lp": lp_relaxation("pairs"),
}
