"""TAP (paper 000): the generators (dc: section V-C; random; qaplib)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pydantic

from dmlopt.contract import Generator, Options, Size
from dmlopt.errors import DmloptError
from dmlopt.models.tap.constants import MAX_MODULES, MAX_VMS, Node
from dmlopt.models.tap.instance import Instance
from dmlopt.validation import parse, spec_error

# --------------------------------------------------------------------------------------------
# generators


#: overlay kinds of :func:`overlay_matrix`
OVERLAYS = ("ps", "allreduce", "ring", "random")


def overlay_matrix(kind: str, modules: int, *, weight: float = 1.0, p: float = 0.5,
                   max_weight: int = 10, rng: np.random.Generator | None = None) -> np.ndarray:
    """Traffic M of an overlay (section V-C), each link's weight once (``M[i][i'], i < i'``).

    ``ps``: module 0 is the parameter server, linked to every worker 1..m-1; ``allreduce``: every
    module with every other; ``ring``: module i with i+1 (mod m); ``random``: each pair with
    probability p, integer weight uniform in 1..max_weight.
    """
    if modules < 1:
        raise spec_error("modules", modules, "must be >= 1")
    if modules > MAX_MODULES:
        raise spec_error("modules", modules, f"is above the limit {MAX_MODULES}")
    mm = np.zeros((modules, modules))
    if kind == "ps":
        mm[0, 1:] = weight
    elif kind == "allreduce":
        mm[np.triu_indices(modules, 1)] = weight
    elif kind == "ring":
        for i in range(modules if modules > 2 else modules - 1):
            a, b = sorted((i, (i + 1) % modules))
            mm[a, b] = weight
    elif kind == "random":
        if not 0 <= p <= 1:
            raise spec_error("p", p, "must be in [0, 1]")
        rng = rng or np.random.default_rng(0)
        iu = np.triu_indices(modules, 1)
        keep = rng.random(iu[0].size) < p
        mm[iu[0][keep], iu[1][keep]] = rng.integers(1, max_weight + 1, int(keep.sum()))
    else:
        raise spec_error("overlay", kind, f"is not an overlay (one of {', '.join(OVERLAYS)})")
    return mm


def generate_dc(
    *, seed: int = 0, topology: str = "fat-tree", overlay: str = "ps", modules: int = 8,
    vms: int | list[Node] | None = None, K: int = 1, weight: float = 1.0, p: float = 0.5,
    max_weight: int = 10, k: int = 4, dcell_n: int = 4, dcell_level: int = 1, leaves: int = 4,
    spines: int = 2, servers_per_leaf: int = 4,
) -> Instance:
    """An overlay on a data-centre underlay (section V-C: 8 modules, K = 1, fat-tree or DCell).

    D is the shortest hop count between the chosen VMs in the underlay (computed when the
    instance is validated).

    Parameters
    ----------
    seed : int, optional
        Seed of the VM subset and the random overlay (default 0).
    topology : {"fat-tree", "dcell", "leaf-spine"}, optional
        The underlay (:mod:`dmlopt.topology`; default ``"fat-tree"``).
    overlay : {"ps", "allreduce", "ring", "random"}, optional
        The traffic pattern (:func:`overlay_matrix`; default ``"ps"``).
    modules : int, optional
        ML modules m (default 8).
    vms : int or list or None, optional
        None (default: every server is a VM), a count (a random subset of the servers, drawn
        with ``seed``) or a list of server names.
    K : int, optional
        Modules per VM at most (default 1).
    weight : float, optional
        Traffic of one overlay link of ``ps``, ``allreduce``, ``ring`` (default 1.0, data units).
    p : float, optional
        Link probability of the ``random`` overlay (default 0.5).
    max_weight : int, optional
        Largest link traffic of the ``random`` overlay, uniform in 1..max_weight (default 10).
    k : int, optional
        Fat-tree arity, even (default 4).
    dcell_n, dcell_level : int, optional
        Servers per DCell_0 (default 4) and DCell level (default 1).
    leaves, spines, servers_per_leaf : int, optional
        Leaf-spine shape (defaults 4, 2, 4).

    Returns
    -------
    Instance
        Named ``<topology>-<overlay>-m<m>-n<VMs>-K<K>-s<seed>``, with its underlay and VMs.

    References
    ----------
    Paper 000 (An, Wu, Huang), section V-C (the settings of Fig. 11: 8 modules, K = 1,
    fat-tree and DCell underlays, parameter-server and all-reduce overlays); leaf-spine and
    the ring and random overlays are ours.

    Examples
    --------
    >>> inst = generate_dc(modules=4, overlay="ring", vms=4, seed=1)
    >>> inst.m, inst.n, inst.K
    (4, 4, 1)
    """
    from dmlopt import topology as topo

    builders = {"fat-tree": lambda: topo.fat_tree(k),
                "dcell": lambda: topo.dcell(dcell_n, dcell_level),
                "leaf-spine": lambda: topo.leaf_spine(leaves, spines, servers_per_leaf)}
    if topology not in builders:
        raise spec_error("topology", topology, f"is not a topology (one of {', '.join(builders)})")
    try:
        g = builders[topology]()
    except ValueError as exc:
        raise spec_error("topology", topology, f"parameters rejected ({exc})") from None
    rng = np.random.default_rng(seed)
    servers = topo.servers(g)
    if vms is None:
        chosen = servers
    elif isinstance(vms, int):
        if not 1 <= vms <= len(servers):
            raise spec_error("vms", vms, f"must be in 1..{len(servers)} (servers of the "
                              f"{topology})")
        pick = set(rng.choice(len(servers), size=vms, replace=False).tolist())
        chosen = [s for t, s in enumerate(servers) if t in pick]
    else:
        chosen = list(vms)
    mm = overlay_matrix(overlay, modules, weight=weight, p=p, max_weight=max_weight, rng=rng)
    name = f"{topology}-{overlay}-m{modules}-n{len(chosen)}-K{K}-s{seed}"
    return parse(Instance, {"name": name, "M": mm.tolist(), "K": K, "vms": chosen, "underlay": {
        "edges": [(u, v) for u, v in g.edges()], "servers": servers}})


def generate_random(*, seed: int = 0, m: int = 6, n: int = 6, K: int = 1, density: float = 0.6,
                    max_weight: int = 10, max_dist: int = 5) -> Instance:
    """Random integer traffic and a random symmetric integer distance matrix (tests).

    Parameters
    ----------
    seed : int, optional
        Seed of the draw (default 0).
    m, n : int, optional
        Modules and VMs (defaults 6 and 6).
    K : int, optional
        Modules per VM at most (default 1).
    density : float, optional
        Probability that module i sends to module i' (default 0.6).
    max_weight : int, optional
        Largest traffic, uniform in 1..max_weight (default 10).
    max_dist : int, optional
        Largest VM distance, uniform in 1..max_dist (default 5; the diagonal is 0).

    Returns
    -------
    Instance
        Named ``random-m<m>-n<n>-K<K>-s<seed>``, with an explicit D (no underlay).

    References
    ----------
    Ours: small unstructured instances for the tests and the contract checks.
    """
    if m < 1 or n < 1 or max_dist < 1 or max_weight < 1:
        raise spec_error("m/n/max_dist/max_weight", (m, n, max_dist, max_weight),
                          "must be positive")
    if max(m, n) > MAX_VMS:
        raise spec_error("m/n", (m, n), f"is above the limit {MAX_VMS}")
    rng = np.random.default_rng(seed)
    mm = rng.integers(1, max_weight + 1, (m, m)) * (rng.random((m, m)) < density)
    np.fill_diagonal(mm, 0)
    d = np.triu(rng.integers(1, max_dist + 1, (n, n)), 1)
    d = d + d.T
    return parse(Instance, {"name": f"random-m{m}-n{n}-K{K}-s{seed}", "M": mm.tolist(),
                            "D": d.tolist(), "K": K})


def generate_qaplib(*, seed: int = 0, name: str = "nug12", path: str | None = None) -> Instance:
    """A QAPLIB instance as a TAP with K = 1: flows as the traffic M, distances as D.

    Parameters
    ----------
    seed : int, optional
        Unused (the instance is a file); default 0.
    name : str, optional
        A shipped QAPLIB instance (76 in ``data/qaplib``, n = 12..100; default ``"nug12"``).
    path : str or None, optional
        Any QAPLIB ``.dat`` file, read through the bounded reader (then ``name`` is ignored).

    Returns
    -------
    Instance
        m = n, K = 1: a plain QAP, its objective the QAPLIB one.

    References
    ----------
    R. E. Burkard, S. E. Karisch and F. Rendl, QAPLIB - A quadratic assignment problem library,
    Journal of Global Optimization 10 (1997) 391-403. TAP with K = 1 and m = n is the QAP
    (paper 000, section IV-A).
    """
    from dmlopt.models.tap import qaplib

    if path is not None:
        if not str(path).endswith(".dat"):
            raise spec_error("path", path, "must be a QAPLIB .dat file")
        return qaplib.load(path)
    return qaplib.load(name)


class DcParams(Options):
    """Parameters of the ``dc`` generator (section V-C)."""

    topology: Literal["fat-tree", "dcell", "leaf-spine"] = pydantic.Field(
        default="fat-tree", description="the underlay (dmlopt.topology)")
    overlay: Literal["ps", "allreduce", "ring", "random"] = pydantic.Field(
        default="ps", description="the overlay: parameter server, all-reduce, ring or random")
    modules: int = pydantic.Field(default=8, ge=1, le=MAX_MODULES,
                                  description="number of ML modules m")
    vms: int | list[Node] | None = pydantic.Field(
        default=None, description="the VMs: None (every server), a count (a random subset "
        "drawn with the seed) or a list of server names")
    K: int = pydantic.Field(default=1, ge=1, description="modules per VM at most")
    weight: float = pydantic.Field(default=1.0, ge=0, description="traffic of an overlay link "
                                   "(ps, allreduce, ring)")
    p: float = pydantic.Field(default=0.5, ge=0, le=1, description="link probability of the "
                              "random overlay")
    max_weight: int = pydantic.Field(default=10, ge=1, description="largest link traffic of "
                                     "the random overlay (uniform 1..max_weight)")
    k: int = pydantic.Field(default=4, ge=2, description="fat-tree arity (even)")
    dcell_n: int = pydantic.Field(default=4, ge=2, description="servers per DCell_0")
    dcell_level: int = pydantic.Field(default=1, ge=0, description="DCell level")
    leaves: int = pydantic.Field(default=4, ge=1, description="leaf switches (leaf-spine)")
    spines: int = pydantic.Field(default=2, ge=1, description="spine switches (leaf-spine)")
    servers_per_leaf: int = pydantic.Field(default=4, ge=1,
                                           description="servers per leaf (leaf-spine)")


class RandomParams(Options):
    """Parameters of the ``random`` generator (tests)."""

    m: int = pydantic.Field(default=6, ge=1, le=MAX_MODULES, description="number of modules")
    n: int = pydantic.Field(default=6, ge=1, le=MAX_VMS, description="number of VMs")
    K: int = pydantic.Field(default=1, ge=1, description="modules per VM at most")
    density: float = pydantic.Field(default=0.6, ge=0, le=1, description="probability of "
                                    "traffic between two modules")
    max_weight: int = pydantic.Field(default=10, ge=1, description="largest traffic "
                                     "(uniform 1..max_weight)")
    max_dist: int = pydantic.Field(default=5, ge=1, description="largest VM distance "
                                   "(uniform 1..max_dist)")


class QaplibParams(Options):
    """Parameters of the ``qaplib`` generator."""

    name: str = pydantic.Field(default="nug12", description="a shipped QAPLIB name (data/"
                               "qaplib: 76 instances, n = 12..100)")
    path: str | None = pydantic.Field(default=None, description="any QAPLIB .dat file (then "
                                      "name is ignored), read through the bounded reader")


#: bytes and interpreted operations per matrix entry of an instance (a Python float in a list,
#: validated into numpy)
_ENTRY_BYTES, _ENTRY_OPS = 100.0, 200.0
#: interpreted operations per node or edge visited by a networkx breadth-first search
_BFS_OPS = 1000.0


def _underlay_size(params: DcParams) -> tuple[float, float, float]:
    """(nodes, edges, servers) of the underlay, from the parameters alone."""
    if params.topology == "fat-tree":
        k = float(params.k)
        return 5 * k * k / 4 + k**3 / 4, 3 * k**3 / 4, k**3 / 4
    if params.topology == "leaf-spine":
        leaves = float(params.leaves)
        servers = leaves * params.servers_per_leaf
        return leaves + params.spines + servers, servers + leaves * params.spines, servers
    servers = float(params.dcell_n)
    for _ in range(min(params.dcell_level, 64)):  # t_l = t_{l-1} (t_{l-1} + 1)
        servers = servers * (servers + 1)
        if servers > 1e30:
            break
    return servers * (1 + 1 / params.dcell_n), servers * (1 + params.dcell_level / 2), servers


def estimate_dc(params: DcParams) -> Size:
    """The underlay graph, M (m x m), D (VMs x VMs) by one breadth-first search per VM."""
    nodes, edges, servers = _underlay_size(params)
    if isinstance(params.vms, int):
        vms = float(params.vms)
    elif params.vms is None:
        vms = servers
    else:
        vms = float(len(params.vms))
    m = float(params.modules)
    entries = m * m + vms * vms
    return Size(300 * (nodes + edges) + _ENTRY_BYTES * entries,
                _BFS_OPS * (nodes + edges) * (1 + vms) + _ENTRY_OPS * entries)


def estimate_random(params: RandomParams) -> Size:
    """Random M (m x m) and D (n x n), as numpy arrays and as lists."""
    entries = float(params.m) ** 2 + float(params.n) ** 2
    return Size((_ENTRY_BYTES + 40) * entries, (_ENTRY_OPS + 20) * entries)


def estimate_qaplib(params: QaplibParams) -> Size:
    """The .dat file's tokens (its size, capped by the QAPLIB reader) and the instance."""
    from dmlopt.models.tap import qaplib

    try:
        source = params.path if params.path is not None else params.name
        size = min(float(qaplib._resolve(source, ".dat").stat().st_size),
                   float(qaplib.MAX_FILE_BYTES))
    except (OSError, ValueError, DmloptError):
        size = 0.0  # the reader refuses it with its own message
    return Size(60 * size, 100 * size)


GENERATORS: dict[str, Generator] = {
    "dc": Generator(generate_dc, DcParams, estimate_dc,
                    "an overlay on a data-centre underlay (fat-tree, DCell, leaf-spine)"),
    "qaplib": Generator(generate_qaplib, QaplibParams, estimate_qaplib,
                        "a QAPLIB instance (shipped name or .dat path) as a TAP with K = 1"),
    "random": Generator(generate_random, RandomParams, estimate_random,
                        "random integer traffic and a random symmetric integer D (tests)"),
}


#: a tiny ``dmlopt.generate`` spec, 4 modules on 4 VMs: solves in about a second with
#: every formulation; tests/core/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "random", "m": 4, "n": 4}
