"""Limits that hold at every size (issue 51, item 3), RAR's default bound ``energy``: its size
estimate covers the matrix it builds (the energetic rows grow with arrivals times end slots,
not with the options), is computed without building anything, refuses 1,000 requests over
2,000 slots before the build, and the build checks its deadline inside its loops ("no bound"
past it)."""

from __future__ import annotations

import math
import time

import pytest

import dmlopt
from dmlopt.errors import ModelTooLargeError, SolverError
from dmlopt.models.rar import bounds as B

SCHEMES = ("MinCU", "MinT", "MinW", "MaxR")


def _cpn38(requests: int, slots: int, scheme: str = "MinCU"):
    return dmlopt.generate("rar", {"generator": "cpn38", "requests": requests, "slots": slots,
                                   "scheme": scheme}, seed=0, size_limit=(10**9,) * 4)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_estimate_covers_the_matrix_built(scheme, seed):
    inst = dmlopt.generate("rar", {"generator": "random", "nodes": 6, "requests": 8,
                                   "slots": 10, "scheme": scheme, "flexible": True}, seed=seed)
    opts = B.EnergyOptions()
    lp = B.build_energy_lp(inst)
    size = B._estimate_energy(inst, opts)
    assert size.memory >= 200.0 * lp["rows"].nnz
    assert size.work >= 20.0 * lp["rows"].nnz


def test_estimate_grows_with_slots_and_builds_nothing(monkeypatch):
    def boom(*_a, **_k):
        raise AssertionError("built")

    monkeypatch.setattr(B, "_options", boom)
    monkeypatch.setattr(B, "build_energy_lp", boom)
    sizes = [B._estimate_energy(_cpn38(200, slots), B.EnergyOptions()).memory
             for slots in (48, 200, 800)]
    assert sizes == sorted(sizes) and sizes[-1] > 4 * sizes[0]


def test_large_instance_refused_before_the_build(monkeypatch):
    """1,000 requests over 2,000 slots (4.6 GB and a MemoryError before the estimate counted
    the energetic rows) is refused by the default size limit, nothing built."""
    inst = _cpn38(1000, 2000)

    def boom(*_a, **_k):
        raise AssertionError("built")

    monkeypatch.setattr(B, "build_energy_lp", boom)
    with pytest.raises(ModelTooLargeError, match="energy bound"):
        dmlopt.bound(inst, "energy", time_limit=5)


def test_build_checks_its_deadline():
    inst = _cpn38(100, 48)
    with pytest.raises(SolverError, match="no bound"):
        B.build_energy_lp(inst, deadline=time.perf_counter() - 1.0)
    # through the bound: a limit the build cannot meet says "no bound", never runs on
    with pytest.raises(SolverError, match="no bound"):
        B.energy_bound(inst, time_limit=1e-6)
    assert math.isfinite(B.energy_bound(inst, time_limit=None).bound)
