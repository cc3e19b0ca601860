"""INC/OXC (paper 002): the instance (racks, jobs, workers) and the solution."""

from __future__ import annotations

from functools import cached_property
from typing import Literal

import numpy as np
import pydantic

from dmlopt.models.inc_oxc.constants import (
    MAX_PORT_BW,
    MAX_PORTS,
    MAX_RACKS,
    MAX_VALUE,
    MIN_DATA_RATIO,
    TOL,
)
from dmlopt.validation import Frozen, rule


class Rack(Frozen):
    """A rack: server-pool resources and the number of PS its ToR can hold (0: not PDP)."""

    cpu: float = pydantic.Field(ge=0, le=MAX_VALUE, allow_inf_nan=False, description="S_k^CPU")
    gpu: float = pydantic.Field(ge=0, le=MAX_VALUE, allow_inf_nan=False, description="S_k^GPU")
    mem: float = pydantic.Field(ge=0, le=MAX_VALUE, allow_inf_nan=False,
                                description="S_k^MEM (GB)")
    ps_slots: int = pydantic.Field(default=0, ge=0, description="C_k; > 0 means a PDP ToR")


class Worker(Frozen):
    """Resources one worker needs (W_ij^CPU, W_ij^GPU, W_ij^MEM)."""

    cpu: float = pydantic.Field(ge=0, le=MAX_VALUE, allow_inf_nan=False)
    gpu: float = pydantic.Field(ge=0, le=MAX_VALUE, allow_inf_nan=False)
    mem: float = pydantic.Field(ge=0, le=MAX_VALUE, allow_inf_nan=False)


class Job(Frozen):
    """A PS job: data size per pull/push d_i (MB), alpha, the PS's demand, the workers."""

    data: float = pydantic.Field(gt=0, le=MAX_VALUE, allow_inf_nan=False, description="d_i (MB)")
    alpha: float = pydantic.Field(default=0.5, ge=0, le=MAX_VALUE, allow_inf_nan=False,
                                  description="PS update / communication time on a server")
    ps_cpu: float = pydantic.Field(ge=0, le=MAX_VALUE, allow_inf_nan=False,
                                   description="P_i^CPU")
    ps_mem: float = pydantic.Field(ge=0, le=MAX_VALUE, allow_inf_nan=False,
                                   description="P_i^MEM (GB)")
    workers: list[Worker] = pydantic.Field(min_length=1)


class Instance(Frozen):
    """An INC/OXC instance (Table I). Racks 0..R-1, jobs 0..J-1, workers per job 0..|W_i|-1."""

    problem: Literal["inc_oxc"] = "inc_oxc"
    name: str = ""
    racks: list[Rack] = pydantic.Field(
        min_length=1, max_length=MAX_RACKS,
        description=f"racks 0..R-1 (at most {MAX_RACKS}: the evaluator's circuit and load "
        "matrices are R x R)")
    n_tor: int = pydantic.Field(ge=1, le=MAX_PORTS, description="N_ToR: ToR ports to the "
                                f"pool and to the OXC (at most {MAX_PORTS})")
    port_bw: float = pydantic.Field(gt=0, le=MAX_PORT_BW, allow_inf_nan=False,
                                   description="B (MB/s)")
    inc: bool = pydantic.Field(default=True, description="False: no INC (R_c empty)")
    jobs: list[Job] = pydantic.Field(min_length=1)

    @pydantic.model_validator(mode="after")
    def _rules(self) -> Instance:
        data = [job.data for job in self.jobs]
        small = min(range(len(data)), key=data.__getitem__)
        if data[small] < MIN_DATA_RATIO * max(data):
            raise rule(f"jobs[{small}].data", data[small], f"is below {MIN_DATA_RATIO:g} times "
                       f"the largest job's data ({max(data):g}): its loads would lie within "
                       "the MILP solvers' feasibility tolerances")
        cap = np.array([[r.cpu, r.gpu, r.mem] for r in self.racks])
        names = ("cpu", "gpu", "mem")
        pdp = self.inc and any(r.ps_slots > 0 for r in self.racks)
        wd = np.array([[w.cpu, w.gpu, w.mem] for job in self.jobs for w in job.workers],
                      float).reshape(-1, 3)
        fits = _fits_some_rack(wd, cap)
        ps = np.array([[job.ps_cpu, 0.0, job.ps_mem] for job in self.jobs], float)
        ps_fits = np.ones(len(self.jobs), bool) if pdp else _fits_some_rack(ps, cap)
        start = 0
        for i, job in enumerate(self.jobs):
            m = len(job.workers)
            bad = np.flatnonzero(~fits[start:start + m])
            if bad.size:
                j = int(bad[0])
                worst = [n for n, x, c in zip(names, wd[start + j], cap.max(axis=0), strict=True)
                         if x > c]
                what = ", ".join(worst) if worst else "cpu+gpu+mem together"
                raise rule(f"jobs[{i}].workers[{j}]", job.workers[j].model_dump(),
                           f"fits in no rack ({what} above every rack's capacity)")
            start += m
            if not ps_fits[i]:
                raise rule(f"jobs[{i}]", {"ps_cpu": job.ps_cpu, "ps_mem": job.ps_mem},
                           "PS fits on no server and there is no PDP switch (INC off or no "
                           "rack with ps_slots > 0)")
        # sequential sums, as worker by worker (np.add.accumulate does not pair terms)
        total = np.add.accumulate(wd, axis=0)[-1] if len(wd) else np.zeros(3)
        for r, name in enumerate(names):
            if total[r] > cap[:, r].sum() * (1 + TOL) + 1e-12:
                raise rule("jobs", f"{name} demand {total[r]:g}",
                           f"exceeds the total rack {name} capacity {cap[:, r].sum():g} "
                           "(the batch cannot be placed)")
        return self

    # ---- derived data -----------------------------------------------------------------------
    @property
    def n_racks(self) -> int:
        return len(self.racks)

    @property
    def capacity(self) -> float:
        """N_ToR * B: capacity of a pool link (each direction)."""
        return self.n_tor * self.port_bw

    @cached_property
    def arrays(self) -> dict[str, np.ndarray]:
        """Per worker (flattened, job-major) and per rack numpy arrays."""
        job_of = np.concatenate([np.full(len(j.workers), i) for i, j in enumerate(self.jobs)])
        wd = np.array([[w.cpu, w.gpu, w.mem] for j in self.jobs for w in j.workers], float)
        return {
            "job_of": job_of.astype(np.int64),
            "wdem": wd,
            "data": np.array([j.data for j in self.jobs], float),
            "alpha": np.array([j.alpha for j in self.jobs], float),
            "psdem": np.array([[j.ps_cpu, 0.0, j.ps_mem] for j in self.jobs], float),
            "cap": np.array([[r.cpu, r.gpu, r.mem] for r in self.racks], float),
            "slots": np.array([r.ps_slots if self.inc else 0 for r in self.racks], np.int64),
            "size": np.array([len(j.workers) for j in self.jobs], np.int64),
        }

    def pdp_racks(self) -> list[int]:
        """R_c: racks whose ToR can hold a PS (empty without INC)."""
        return [k for k, r in enumerate(self.racks) if r.ps_slots > 0] if self.inc else []

    def worker_classes(self, i: int) -> list[list[int]]:
        """Workers of job i grouped by identical demands (order of first appearance)."""
        groups: dict[tuple[float, float, float], list[int]] = {}
        for j, w in enumerate(self.jobs[i].workers):
            groups.setdefault((w.cpu, w.gpu, w.mem), []).append(j)
        return list(groups.values())


def _fits_some_rack(need: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """(N,) bool: demand row n is within some rack's capacity (rule (2) for one item, with
    the tolerance of :data:`TOL`).

    A demand fits some rack iff it fits some rack whose capacity no other rack dominates, so
    the distinct demands are compared with those racks only, in blocks of about 4M cells: a
    long worker list costs numpy work, not a Python loop over the racks.
    """
    if not len(need):
        return np.zeros(0, bool)
    top = _undominated(np.unique(cap * (1 + TOL) + 1e-12, axis=0))
    rows, inverse = np.unique(need, axis=0, return_inverse=True)
    ok = np.zeros(len(rows), bool)
    block = max(1, 2**22 // len(top))
    for b in range(0, len(rows), block):
        r = rows[b:b + block]
        ok[b:b + block] = ((r[:, 0, None] <= top[None, :, 0]) & (r[:, 1, None] <= top[None, :, 1])
                           & (r[:, 2, None] <= top[None, :, 2])).any(axis=1)
    return ok[inverse.reshape(-1)]


def _undominated(top: np.ndarray) -> np.ndarray:
    """The distinct rows of ``top`` that no other row is >= in every column."""
    keep = np.ones(len(top), bool)
    block = max(1, 2**22 // len(top))
    for b in range(0, len(top), block):
        r = top[b:b + block]
        geq = (top[None, :, 0] >= r[:, 0, None]) & (top[None, :, 1] >= r[:, 1, None]) \
            & (top[None, :, 2] >= r[:, 2, None])
        keep[b:b + block] = geq.sum(axis=1) == 1  # only the row itself (rows are distinct)
    return top[keep]


class Solution(Frozen):
    """Worker -> rack, PS -> (rack, "server" | "switch"), OXC port pairs, bandwidth per worker.

    ``oxc`` lists connected port pairs (global port numbers ``rack * n_tor + p``);
    ``bandwidth[i][j]`` (MB/s) serves the pull and the push of worker j of job i.
    """

    problem: Literal["inc_oxc"] = "inc_oxc"
    workers: list[list[int]]
    ps: list[tuple[int, Literal["server", "switch"]]]
    oxc: list[tuple[int, int]] = []
    bandwidth: list[list[float]]
    #: optional time-shared OXC (ours, see ``circuits``): [(time share, port pairs), ...]
    oxc_schedule: list[tuple[float, list[tuple[int, int]]]] = []
