"""RAR (paper 003): instance generators (section 6, Table 1) and their parameters."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pydantic

from dmlopt.contract import Generator, Options, Size
from dmlopt.models.rar.constants import MAX_RING_STEPS, SCHEMES
from dmlopt.models.rar.instance import Instance
from dmlopt.validation import spec_error

# --------------------------------------------------------------------------------------------
# generators


def _topology(name: str) -> dict[str, Any]:
    import json
    from importlib import resources

    text = resources.files("dmlopt.data").joinpath(f"rar/topology/{name}.json").read_text()
    return json.loads(text)


def _requests(rng: np.random.Generator, n: int, nodes: int, arrival: tuple[int, int],
              deadline: tuple[int, int], counts: str) -> list[dict[str, Any]]:
    """Table 1: D in [100, 200] GB, theta in [0.1, 0.4], r in [0.99, 0.999], uniform."""
    out = []
    for _ in range(n):
        nc = [int(rng.integers(3, 5))] if counts == "fixed34" else [3, 4, 5, 6]
        out.append({
            "data_gb": float(rng.integers(100, 201)),
            "source": int(rng.integers(0, nodes)),
            "arrival": int(rng.integers(arrival[0], arrival[1] + 1)),
            "deadline": int(rng.integers(deadline[0], deadline[1] + 1)),
            "theta": round(float(rng.uniform(0.1, 0.4)), 3),
            "reliability": round(float(rng.uniform(0.99, 0.999)), 4),
            "node_counts": nc,
        })
    return out


def _from_topology(topo: dict[str, Any], **fields: Any) -> Instance:
    return Instance(nodes=topo["nodes"], links=topo["links"], **fields)


def generate_cpn6(*, seed: int = 0, requests: int = 10, scheme: str = "MinCU",
                  slots: int = 12) -> Instance:
    """The 6-node, 10-link network (section 6) and Table 1's small settings.

    Requests as Table 1: data D in [100, 200] GB, theta in [0.1, 0.4], reliability r in
    [0.99, 0.999], source uniform, all uniform. The ILP simplifications of section 6: N_j
    fixed, drawn in {3, 4}; arrivals in the first 3 slots, deadlines in the last 3;
    v = 200 TFLOPS per CU, 10 wavelengths, rho = 3.

    Parameters
    ----------
    seed : int, optional
        Seed of the requests (default 0).
    requests : int, optional
        Training requests |R| (default 10).
    scheme : {"MinCU", "MinW", "MinT", "MaxR"}, optional
        Objective scheme of section 4.C (default ``"MinCU"``).
    slots : int, optional
        Time slots |T| of 30 minutes, >= 6 (default 12).

    Returns
    -------
    Instance
        Named ``cpn6-r<requests>-<scheme>-s<seed>`` on the shipped ``cpn6`` topology.

    References
    ----------
    Paper 003 (Chen et al.), section 6 and Table 1 (small topology).

    Examples
    --------
    >>> inst = generate_cpn6(requests=4, seed=0)
    >>> len(inst.nodes), len(inst.links), len(inst.requests), inst.slots
    (6, 10, 4, 12)
    """
    if requests < 1 or slots < 6:
        raise spec_error("requests/slots", (requests, slots), "need requests >= 1, slots >= 6")
    if scheme not in SCHEMES:
        raise spec_error("scheme", scheme, f"is not one of {', '.join(SCHEMES)}")
    rng = np.random.default_rng(seed)
    topo = _topology("cpn6")
    reqs = _requests(rng, requests, len(topo["nodes"]), (1, 3), (slots - 2, slots), "fixed34")
    return _from_topology(topo, name=f"cpn6-r{requests}-{scheme}-s{seed}", scheme=scheme,
                          slots=slots, cu_tflops=200.0, rho=3, requests=reqs)


def generate_cpn38(*, seed: int = 0, requests: int = 100, scheme: str = "MinCU",
                   slots: int = 48, cu_scale: float = 1.0) -> Instance:
    """The 38-node, 59-link network (section 6) and Table 1's large settings.

    Requests as Table 1: data D in [100, 200] GB, theta in [0.1, 0.4], reliability r in
    [0.99, 0.999], source uniform, all uniform. Arrivals t_a in [1, 10], deadlines t_d in
    [39, 48] (scaled to ``slots``), v = 10 TFLOPS per CU, 20 wavelengths, flexible node count
    N_j in 3..6 (RDDA's setting).

    Parameters
    ----------
    seed : int, optional
        Seed of the requests (default 0).
    requests : int, optional
        Training requests |R| (default 100; the paper sweeps 100..500).
    scheme : {"MinCU", "MinW", "MinT", "MaxR"}, optional
        Objective scheme of section 4.C (default ``"MinCU"``).
    slots : int, optional
        Time slots |T| of 30 minutes, >= 12 (default 48); arrivals and deadlines scale.
    cu_scale : float, optional
        Each node's CUs times this factor, rounded, at least 1 (default 1: the shipped
        topology's 160-320). With ``slots`` and ``requests`` scaled down by about the same
        factor, the fewest CU-slots of the requests stay near the network's CU-slots, as at
        500 requests and 48 slots (scaled-down settings an exact formulation can prove).

    Returns
    -------
    Instance
        Named ``cpn38-r<requests>-<scheme>-s<seed>`` on the shipped ``cpn38`` topology
        (``cpn38-r<requests>-<scheme>-c<cu_scale>-s<seed>`` with a ``cu_scale`` other than 1).

    References
    ----------
    Paper 003 (Chen et al.), section 6 and Table 1 (large topology).
    """
    if requests < 1 or slots < 12:
        raise spec_error("requests/slots", (requests, slots), "need requests >= 1, slots >= 12")
    if not (isinstance(cu_scale, int | float) and 0 < cu_scale <= 1):
        raise spec_error("cu_scale", cu_scale, "must be a number in (0, 1]")
    if scheme not in SCHEMES:
        raise spec_error("scheme", scheme, f"is not one of {', '.join(SCHEMES)}")
    rng = np.random.default_rng(seed)
    topo = _topology("cpn38")
    a_hi = max(1, round(slots * 10 / 48))
    d_lo = min(slots, round(slots * 39 / 48))
    reqs = _requests(rng, requests, len(topo["nodes"]), (1, a_hi), (d_lo, slots), "flex")
    name = f"cpn38-r{requests}-{scheme}-s{seed}"
    if cu_scale != 1.0:
        topo["nodes"] = [{**nd, "cus": max(1, round(nd["cus"] * cu_scale))}
                         for nd in topo["nodes"]]
        name = f"cpn38-r{requests}-{scheme}-c{cu_scale:g}-s{seed}"
    return _from_topology(topo, name=name, scheme=scheme, slots=slots, cu_tflops=10.0, rho=3,
                          requests=reqs)


def generate_random(*, seed: int = 0, nodes: int = 4, extra_links: int = 1, requests: int = 2,
                    slots: int = 4, cus: int = 3, wavelengths: int = 2, rho: int = 1,
                    scheme: str = "MinCU", flexible: bool = False) -> Instance:
    """Tiny random instances for tests: a ring of ``nodes`` plus chords, small demands.

    Demands are scaled so that one request needs between 1 and ``cus * slots / 2`` CU-slots;
    links are 20-50 km, reliabilities in [0.997, 0.9995], v = 200 TFLOPS per CU.

    Parameters
    ----------
    seed : int, optional
        Seed of the chords, lengths and requests (default 0).
    nodes : int, optional
        Nodes on the base ring, >= 3 (default 4).
    extra_links : int, optional
        Chords added to the ring (default 1).
    requests : int, optional
        Training requests (default 2).
    slots : int, optional
        Time slots (default 4).
    cus : int, optional
        CUs per node (default 3).
    wavelengths : int, optional
        Wavelengths per link (default 2).
    rho : int, optional
        Requests per wavelength and slot (default 1).
    scheme : {"MinCU", "MinW", "MinT", "MaxR"}, optional
        Objective scheme of section 4.C (default ``"MinCU"``).
    flexible : bool, optional
        Allow 2 or 3 computing nodes per request (default False: one count, drawn in {2, 3}).

    Returns
    -------
    Instance
        Named ``random-n<nodes>-r<requests>-s<seed>``, small enough for brute force.

    References
    ----------
    Ours: instances for the tests (brute force, formulations equal), on paper 003's model
    (section 4).
    """
    if nodes < 3 or requests < 1 or slots < 1 or cus < 1 or wavelengths < 1 or rho < 1:
        raise spec_error("nodes/requests/slots/cus", (nodes, requests, slots, cus),
                          "too small")
    if scheme not in SCHEMES:
        raise spec_error("scheme", scheme, f"is not one of {', '.join(SCHEMES)}")
    rng = np.random.default_rng(seed)
    links = [(i, (i + 1) % nodes) for i in range(nodes)]
    chords = [(u, v) for u in range(nodes) for v in range(u + 2, nodes)
              if not (u == 0 and v == nodes - 1)]
    rng.shuffle(chords)
    links += chords[:extra_links]
    link_objs = [{"u": u, "v": v, "length_km": float(rng.integers(20, 51)),
                  "wavelengths": wavelengths} for u, v in links]
    reqs = []
    for _ in range(requests):
        ta = int(rng.integers(1, max(1, slots // 3) + 1))
        td = int(rng.integers(max(ta, slots - slots // 3), slots + 1))
        # X = total CU-slots of computation; choose D so that X ~ U[1, cus * slots / 2]
        target = float(rng.uniform(1.0, cus * slots / 2))
        theta = 0.1
        data = math.sqrt(target * 360.0)  # X = D^2 log10(1/theta) / 360 at v = 200 TFLOPS
        reqs.append({"data_gb": round(data, 3), "source": int(rng.integers(0, nodes)),
                     "arrival": ta, "deadline": td, "theta": theta,
                     "reliability": round(float(rng.uniform(0.997, 0.9995)), 5),
                     "node_counts": [2, 3] if flexible else [int(rng.integers(2, 4))]})
    return Instance(name=f"random-n{nodes}-r{requests}-s{seed}", scheme=scheme,
                    nodes=[{"cus": cus} for _ in range(nodes)], links=link_objs, slots=slots,
                    cu_tflops=200.0, rho=rho, requests=reqs)


_Scheme = Literal["MinCU", "MinW", "MinT", "MaxR"]


class Cpn6Params(Options):
    """Parameters of the 6-node network's generator (section 6, Table 1 small settings)."""

    requests: int = pydantic.Field(default=10, ge=1, description="training requests |R|")
    scheme: _Scheme = pydantic.Field(default="MinCU", description="objective scheme of "
                                     "section 4.C (MinCU, MinW, MinT, MaxR)")
    slots: int = pydantic.Field(default=12, ge=6, le=10_000,
                                description="time slots |T| (30 minutes each)")


class Cpn38Params(Cpn6Params):
    """Parameters of the 38-node network's generator (section 6, Table 1 large settings)."""

    requests: int = pydantic.Field(default=100, ge=1, description="training requests |R|")
    slots: int = pydantic.Field(default=48, ge=12, le=10_000,
                                description="time slots |T| (arrivals and deadlines scale)")
    cu_scale: float = pydantic.Field(default=1.0, gt=0, le=1, description="each node's CUs "
                                     "times this factor (rounded, at least 1): scaled-down "
                                     "settings with demand above capacity")


class RandomParams(Options):
    """Parameters of the tiny random generator (tests)."""

    nodes: int = pydantic.Field(default=4, ge=3, le=6, description="nodes on the base ring "
                                "(at most 6: the ring itself is then a ring of 3..6 nodes "
                                "through every source)")
    extra_links: int = pydantic.Field(default=1, ge=0, description="chords added to the ring")
    requests: int = pydantic.Field(default=2, ge=1, description="training requests")
    slots: int = pydantic.Field(default=4, ge=1, le=10_000, description="time slots")
    cus: int = pydantic.Field(default=3, ge=1, le=100_000, description="CUs per node")
    wavelengths: int = pydantic.Field(default=2, ge=1, le=10_000,
                                      description="wavelengths per link")
    rho: int = pydantic.Field(default=1, ge=1, description="requests per wavelength and slot")
    scheme: _Scheme = pydantic.Field(default="MinCU", description="objective scheme of "
                                     "section 4.C")
    flexible: bool = pydantic.Field(default=False, description="allow 2 or 3 computing nodes "
                                    "per request (else one of them, drawn)")


def generator_size(params: Options) -> Size:
    """What a generator allocates and computes: the requests (about 1 KiB each), the network
    (the random one lists its n^2 / 2 candidate chords) and the validation, whose ring
    enumeration is bounded by :data:`MAX_RING_STEPS` and the rings by ``ring_cap``."""
    n = float(getattr(params, "nodes", 38))
    req = float(params.requests)
    memory = 1024.0 * req + 64.0 * n * n + 1024.0 * 20_000
    work = 1000.0 * req + 10.0 * n * n + MAX_RING_STEPS
    return Size(memory, work)


GENERATORS: dict[str, Generator] = {
    "cpn6": Generator(generate_cpn6, Cpn6Params, generator_size,
                      "the 6-node, 10-link network (section 6), N_j in {3, 4}"),
    "cpn38": Generator(generate_cpn38, Cpn38Params, generator_size,
                       "the 38-node, 59-link network (section 6), flexible N_j in 3..6"),
    "random": Generator(generate_random, RandomParams, generator_size,
                        "tiny random instances for tests: a ring plus chords"),
}


#: a tiny ``dmlopt.generate`` spec, a 4-node ring, 3 requests, 2 CUs per node (seed 0: RDDA
#: 1.0417 above the optimum 1): solves in about a second with every formulation;
#: tests/core/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "random", "requests": 3, "cus": 2}
