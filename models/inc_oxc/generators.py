"""INC/OXC (paper 002): the generators of section IV-A (small, large) and dcn."""

from __future__ import annotations

from typing import Any

import numpy as np
import pydantic

from dmlopt.contract import Generator, Options, Size
from dmlopt.models.inc_oxc.instance import Instance, Job, Rack, Worker
from dmlopt.validation import spec_error

# ------------------------------------------------------------------------------------------
# generators


def _greedy_fits(instance: Instance) -> bool:
    """First-fit decreasing of all workers, then every PS on a switch slot or a server."""
    A = instance.arrays
    free = A["cap"].copy()
    order = np.argsort(-A["wdem"][:, 1], kind="stable")
    for n in order:
        need = A["wdem"][n]
        ok = np.flatnonzero((free >= need - 1e-9).all(axis=1))
        if not ok.size:
            return False
        k = ok[np.argmax(free[ok, 1])]
        free[k] -= need
    slots = A["slots"].copy()
    for i in range(len(instance.jobs)):
        sw = np.flatnonzero(slots > 0)
        if sw.size:
            slots[sw[0]] -= 1
            continue
        ok = np.flatnonzero((free >= A["psdem"][i] - 1e-9).all(axis=1))
        if not ok.size:
            return False
        free[ok[0]] -= A["psdem"][i]
    return True


def generate_dcn(
    *, seed: int = 0, racks: int = 6, jobs: int | None = None, workers: tuple[int, int] = (1, 4),
    pdp_fraction: float = 0.5, ps_per_switch: int = 2, ports: int = 4, port_gbps: float = 10.0,
    gpu: tuple[float, float] = (50, 80), cpu: tuple[float, float] = (20, 30),
    mem: tuple[float, float] = (1.5, 2.0), data: tuple[float, float] = (92, 552),
    alpha: float = 0.5, inc: bool = True, load: float = 0.65,
) -> Instance:
    """Section IV-A's simulation setting, every number a parameter (defaults: small scale).

    Per-worker demands are proportional to the job's data size d (GPU = round(32 d / max d),
    CPU = round(8 d / max d), memory d / 1000 GB), so the workers of a job are identical; a PS
    needs the CPU and memory of one of its workers. A batch a greedy first-fit packing cannot
    place is redrawn (deterministically, at most 200 times), so every instance is feasible.

    Parameters
    ----------
    seed : int, optional
        Seed of the racks, the PDP racks and the jobs (default 0).
    racks : int, optional
        Racks R (default 6).
    jobs : int or None, optional
        Jobs in the batch; None (default): the expected GPU demand is ``load`` of the total.
    workers : (int, int), optional
        [low, high] workers per job, uniform (default (1, 4)).
    pdp_fraction : float, optional
        Share of racks with a programmable (PDP) ToR switch (default 0.5).
    ps_per_switch : int, optional
        PS slots C_k of a PDP switch (default 2).
    ports : int, optional
        N_ToR: ToR ports to the pool and to the OXC (default 4).
    port_gbps : float, optional
        Port bandwidth B in Gbit/s (default 10; stored as MB/s).
    gpu, cpu : (float, float), optional
        [low, high] GPU and CPU units of a rack's pool, uniform (defaults (50, 80), (20, 30)).
    mem : (float, float), optional
        [low, high] memory of a rack's pool in GB, uniform (default (1.5, 2.0)).
    data : (float, float), optional
        [low, high] data size d_i of a job in MB, uniform (default (92, 552)).
    alpha : float, optional
        PS update time as a fraction of the communication time, every job (default 0.5).
    inc : bool, optional
        In-network computing on (default True); False: MILP_Non_INC's setting.
    load : float, optional
        Share of the GPUs the default number of jobs uses, in (0, 1] (default 0.65).

    Returns
    -------
    Instance
        Named ``dcn-r<racks>-j<jobs>-w<low>_<high>[-noinc]-s<seed>``.

    References
    ----------
    Paper 002 (Dong et al.), section IV-A "Simulation Setup" (racks, PDP share, ports, pool
    resources, workers per job). The data sizes, demands, alpha and the number of jobs are not
    given by the paper: ours (module docstring of :mod:`dmlopt.models.inc_oxc`).
    """
    workers = tuple(workers)
    for name, rng_ in (("workers", workers), ("gpu", gpu), ("cpu", cpu), ("mem", mem),
                       ("data", data)):
        if len(rng_) != 2 or not 0 <= rng_[0] <= rng_[1]:
            raise spec_error(name, rng_, "must be [low, high] with 0 <= low <= high")
    if racks < 1 or ports < 1 or ps_per_switch < 0 or workers[0] < 1 or data[0] <= 0:
        raise spec_error("racks/ports/ps_per_switch/workers/data",
                          (racks, ports, ps_per_switch, workers, data),
                          "racks, ports, workers and data must be positive")
    if not 0 <= pdp_fraction <= 1 or not 0 < load <= 1 or alpha < 0:
        raise spec_error("pdp_fraction/load/alpha", (pdp_fraction, load, alpha),
                          "pdp_fraction in [0, 1], load in (0, 1], alpha >= 0")
    if jobs is not None and jobs < 1:
        raise spec_error("jobs", jobs, "must be positive")
    rng = np.random.default_rng(seed)
    dmax = data[1]
    if jobs is None:
        e_gpu = max(1.0, 32 * (data[0] + data[1]) / 2 / dmax)
        e_job = (workers[0] + workers[1]) / 2 * e_gpu
        jobs = max(1, round(load * racks * (gpu[0] + gpu[1]) / 2 / e_job))
    # every worker takes at least max(1, round(32 d_min / d_max)) GPUs: a batch needing more
    # than the racks can hold at the top of their range is refused before any attempt
    least = jobs * workers[0] * max(1, round(32 * data[0] / dmax))
    if least > racks * gpu[1]:
        raise spec_error("jobs", jobs, f"too many jobs: they need at least {least:,} GPUs, "
                         f"above the {racks * gpu[1]:,g} that {racks} racks of at most "
                         f"{gpu[1]:g} hold")
    n_pdp = int(round(pdp_fraction * racks))
    for _ in range(200):
        pdp = set(rng.choice(racks, n_pdp, replace=False).tolist()) if n_pdp else set()
        rk = [Rack(gpu=float(round(rng.uniform(*gpu))), cpu=float(round(rng.uniform(*cpu))),
                   mem=round(float(rng.uniform(*mem)), 3),
                   ps_slots=ps_per_switch if k in pdp else 0) for k in range(racks)]
        js = []
        for _i in range(jobs):
            d = float(round(rng.uniform(*data)))
            m_ = int(rng.integers(workers[0], workers[1] + 1))
            w = Worker(cpu=float(max(1, round(8 * d / dmax))),
                       gpu=float(max(1, round(32 * d / dmax))), mem=round(d / 1000, 3))
            js.append(Job(data=d, alpha=alpha, ps_cpu=w.cpu, ps_mem=w.mem, workers=[w] * m_))
        name = f"dcn-r{racks}-j{jobs}-w{workers[0]}_{workers[1]}{'' if inc else '-noinc'}-s{seed}"
        try:
            inst = Instance(name=name, racks=rk, n_tor=ports, port_bw=port_gbps * 125.0,
                            inc=inc, jobs=js)
        except Exception:  # noqa: BLE001 - redraw an impossible batch
            continue
        if _greedy_fits(inst):
            return inst
    raise spec_error("jobs", jobs, "too many jobs: no feasible batch drawn in 200 attempts")


def generate_small(*, seed: int = 0, racks: int = 6, jobs: int | None = None,
                   inc: bool = True, alpha: float = 0.5) -> Instance:
    """Small scale (section IV-A): {2, 4, 6} racks, [1, 4] workers per job.

    Parameters
    ----------
    seed : int, optional
        Seed of the draw (default 0).
    racks : int, optional
        Racks R (default 6; the paper: 2, 4, 6).
    jobs : int or None, optional
        Jobs; None (default): about 65 % of the GPUs used (2 / 4 / 5 jobs at 2 / 4 / 6 racks).
    inc : bool, optional
        In-network computing on (default True); False: MILP_Non_INC's setting.
    alpha : float, optional
        PS update time as a fraction of the communication time (default 0.5).

    Returns
    -------
    Instance
        :func:`generate_dcn` with half the racks PDP (2 PS each), 4 ports of 10 Gb/s per ToR,
        pools of [50, 80] GPUs, [20, 30] CPUs, [1.5, 2] GB.

    References
    ----------
    Paper 002 (Dong et al.), section IV-A "Simulation Setup", small-scale scenario.

    Examples
    --------
    >>> inst = generate_small(racks=2, jobs=2, seed=0)
    >>> len(inst.racks), len(inst.jobs), inst.n_tor
    (2, 2, 4)
    """
    return generate_dcn(seed=seed, racks=racks, jobs=jobs, inc=inc, alpha=alpha)


def generate_large(*, seed: int = 0, racks: int = 64, jobs: int | None = None,
                   workers: tuple[int, int] = (4, 16), inc: bool = True,
                   alpha: float = 0.5) -> Instance:
    """Large scale (section IV-A): 64 racks, 12 ports per ToR, [4, 16] or [16, 64] workers.

    Parameters
    ----------
    seed : int, optional
        Seed of the draw (default 0).
    racks : int, optional
        Racks R (default 64, the paper's).
    jobs : int or None, optional
        Jobs; None (default): about 65 % of the GPUs used (45 jobs of [4, 16] workers, 11 of
        [16, 64], at 64 racks).
    workers : (int, int), optional
        [low, high] workers per job, uniform (default (4, 16); the paper also runs (16, 64)).
    inc : bool, optional
        In-network computing on (default True).
    alpha : float, optional
        PS update time as a fraction of the communication time (default 0.5).

    Returns
    -------
    Instance
        :func:`generate_dcn` with half the racks PDP (5 PS each), 12 ports per ToR, pools of
        200 GPUs, 130 CPUs, 60 GB.

    References
    ----------
    Paper 002, section IV-A, large-scale scenario (the "384 x 384 OXC, thus 12 ports per ToR"
    adds up at 64 racks only with inputs and outputs counted separately; we keep 12 ports).
    """
    return generate_dcn(seed=seed, racks=racks, jobs=jobs, workers=workers, ps_per_switch=5,
                        ports=12, gpu=(200, 200), cpu=(130, 130), mem=(60, 60), inc=inc,
                        alpha=alpha)


def _low_high(value: tuple[float, float], low: float, strict: bool = False
              ) -> tuple[float, float]:
    """A [low, high] range parameter: ``low`` <= (or <) its first entry <= its second."""
    first_ok = value[0] > low if strict else value[0] >= low
    if not (first_ok and value[0] <= value[1]):
        raise ValueError(f"must be [low, high] with {low} {'<' if strict else '<='} low <= "
                         "high")
    return value


class SmallParams(Options):
    """Parameters of the small-scale generator (section IV-A)."""

    racks: int = pydantic.Field(default=6, ge=1, description="racks R (paper: 2, 4, 6)")
    jobs: int | None = pydantic.Field(
        default=None, ge=1, description="jobs in the batch; default: about 65 % of the GPUs "
        "used (load)")
    inc: bool = pydantic.Field(default=True, description="in-network computing on (PS may run "
                               "on a PDP ToR switch); false: MILP_Non_INC's setting")
    alpha: float = pydantic.Field(default=0.5, ge=0, description="PS update time as a "
                                  "fraction of the communication time (alpha_i)")


class LargeParams(SmallParams):
    """Parameters of the large-scale generator (section IV-A: 64 racks, 12 ports per ToR)."""

    racks: int = pydantic.Field(default=64, ge=1, description="racks R (paper: 64)")
    workers: tuple[int, int] = pydantic.Field(
        default=(4, 16), description="[low, high] workers per job, uniform (paper: [4, 16] "
        "or [16, 64])")

    @pydantic.field_validator("workers")
    @classmethod
    def _workers(cls, value: tuple[int, int]) -> tuple[int, int]:
        return _low_high(value, 1)


class DcnParams(LargeParams):
    """Parameters of the general generator (section IV-A's simulation setting)."""

    racks: int = pydantic.Field(default=6, ge=1, description="racks R")
    workers: tuple[int, int] = pydantic.Field(
        default=(1, 4), description="[low, high] workers per job, uniform")
    pdp_fraction: float = pydantic.Field(default=0.5, ge=0, le=1,
                                         description="share of racks with a PDP ToR switch")
    ps_per_switch: int = pydantic.Field(default=2, ge=0,
                                        description="PS slots C_k of a PDP switch")
    ports: int = pydantic.Field(default=4, ge=1, le=1024,
                                description="N_ToR: ToR ports to the pool and to the OXC")
    port_gbps: float = pydantic.Field(default=10.0, gt=0, description="port bandwidth B "
                                      "(Gbit/s)")
    gpu: tuple[float, float] = pydantic.Field(default=(50, 80), description="[low, high] "
                                                  "GPU units of a rack, uniform")
    cpu: tuple[float, float] = pydantic.Field(default=(20, 30), description="[low, high] "
                                                  "CPU units of a rack, uniform")
    mem: tuple[float, float] = pydantic.Field(default=(1.5, 2.0), description="[low, high] "
                                                  "memory (GB) of a rack, uniform")
    data: tuple[float, float] = pydantic.Field(default=(92, 552), description="[low, high] data "
                                             "size d_i (MB) of a job, uniform")
    load: float = pydantic.Field(default=0.65, gt=0, le=1, description="share of the GPUs the "
                                 "default number of jobs uses")

    @pydantic.field_validator("gpu", "cpu", "mem")
    @classmethod
    def _resources(cls, value: tuple[float, float]) -> tuple[float, float]:
        return _low_high(value, 0)

    @pydantic.field_validator("data")
    @classmethod
    def _data(cls, value: tuple[float, float]) -> tuple[float, float]:
        return _low_high(value, 0, strict=True)


def _default_jobs(racks: int, workers: tuple[int, int], gpu: tuple[float, float],
                  data: tuple[float, float], load: float) -> int:
    """The number of jobs :func:`generate_dcn` draws when ``jobs`` is not given."""
    dmax = data[1]
    e_gpu = max(1.0, 32 * (data[0] + data[1]) / 2 / dmax)
    e_job = (workers[0] + workers[1]) / 2 * e_gpu
    return max(1, round(load * racks * (gpu[0] + gpu[1]) / 2 / e_job))


def generator_size(params: SmallParams) -> Size:
    """What :func:`generate_dcn` allocates and computes: per attempt (at most 200) the racks,
    the jobs and the validation of every worker against every rack (Instance, then the
    first-fit check), about 1 KiB per rack and job."""
    p = DcnParams().model_copy(update=dict(params))
    if isinstance(params, LargeParams) and not isinstance(params, DcnParams):
        p = p.model_copy(update=dict(gpu=(200, 200), data=DcnParams().data))
    R = float(p.racks)
    J = float(p.jobs if p.jobs is not None else
              _default_jobs(p.racks, p.workers, p.gpu, p.data, p.load))
    W = J * p.workers[1]
    memory = 1024.0 * (R + J) + 128.0 * W
    work = 200.0 * (10 * (R + J) + 6 * W * R)
    return Size(memory, work)


GENERATORS: dict[str, Generator] = {
    "small": Generator(generate_small, SmallParams, generator_size,
                       "small scale (section IV-A): 6 racks, 4 ports, [1, 4] workers per job"),
    "large": Generator(generate_large, LargeParams, generator_size,
                       "large scale (section IV-A): 64 racks, 12 ports, [4, 16] workers"),
    "dcn": Generator(generate_dcn, DcnParams, generator_size,
                     "section IV-A's simulation setting, every parameter open"),
}


#: a tiny ``dmlopt.generate`` spec, 2 racks, 2 jobs: solves in about a second with
#: every formulation; tests/core/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "small", "racks": 2, "jobs": 2}
