"""Nara: network-aware online multi-resource allocation in a DCN (paper 001, Shabka & Zervas).

Problem (section 3.1). A DCN graph whose servers hold CPU and memory units and whose links hold
bandwidth. Requests <c, m, b, t> arrive one per time step (section 3.2: the step index is the
arrival index) and are served in arrival order. A request is *allocated* to a set V' of servers
with enough CPU and memory in total and, for every pair of servers in V', a path whose links all
have at least b free (constraint 3); its resources return when its holding period t ends; a
request that cannot be allocated is dropped and never revisited. The objective is the number of
accepted requests (the paper's acceptance ratio times the episode length).

Exact rules of this implementation (the same in the evaluator, the simulator and the MILPs)
---------------------------------------------------------------------------------------------
* Time. Request i arrives at step i and holds its resources at the steps j with
  i <= j < i + t_i; at step j the requests with i + t_i <= j are released *before* request j is
  allocated (state transition (iv)).
* CPU and memory. An allocation lists its servers with the integer CPU and memory taken from
  each; every listed server gives something (CPU + memory > 0), the amounts sum exactly to c and
  m, and no server gives more than it has free. The online allocators take min(free, remaining)
  from each server in the order they pick them (transition (ii)); the evaluator and the offline
  MILP accept any split (a relaxation that keeps the offline MILP an upper bound).
* Paths. Servers are leaves (one link, to their rack switch). For each unordered pair of listed
  servers the allocation names one of the k = 3 candidate paths (``topology``: the k shortest
  simple paths by hops, ties lexicographic); two servers in one rack have one path.
* Bandwidth charging (constraint 3 read literally). The links of a request are the *union* L(r)
  of the links of its pairs' paths. Every link of L(r) must have at least b free before the
  request is placed, and b is then reserved ONCE on every link of L(r) (not once per pair that
  crosses it). A single-server request uses no link. Consequences: the pairs never compete with
  each other inside one request, so a server set is feasible iff (a) every listed server's
  access link has >= b free (when there are >= 2 servers) and (b) every pair of distinct racks
  used has a candidate path with >= b free on each link. Bandwidth is compared with a tolerance
  of 1e-6; the generators draw b in steps of 0.01.
* Objective: accepted requests (SENSE max). Metrics: acceptance ratio, CPU and memory
  utilisation and bandwidth utilisation per tier (time averages over the steps, after each
  step's allocation), rack locality (share of accepted requests inside one rack), the
  distribution classes of Fig. 2 (single server, intra-rack, neighbouring racks = racks
  attached to the same fabric switches, non-neighbouring) and servers per allocation.

Exact models (:data:`FORMULATIONS`)
-----------------------------------
``"offline"``: all requests of a (short) episode known in advance, maximise the number
accepted subject to the capacities at every step: an upper bound on every online allocator
(none of the papers has one). Rack-level routing: since the union rule charges a link once,
one path per rack pair is never worse than several, so path binaries z are per (request, rack
pair, candidate), y (link charged) and v (access link charged) follow from them.
Valid cuts (no evaluator-feasible solution is cut off; tested by putting allocator solutions into
the model): a request no single server can hold uses >= ceil(c / max free) servers and charges
the access link of each (v >= x); identical servers of a rack are numbered by first use (server
k+1 serves request i only if server k served a request <= i), which removes the 10! relabellings
per rack (``warm_start`` renumbers a start accordingly, :func:`canonical`). Formulation
"offline" adds the cuts of :func:`_strong_cuts` (v = x for multi-server requests, per-server
cliques of requests whose bandwidths cannot share an access link, per-step CPU/memory/clique
knapsack rows in the acceptance binaries, racks needed); "offline-basic" is the model with only
the server-count cuts and the symmetry constraints, "offline-plain" the model with neither (the
reference the tests compare optima with). Measured on 32-request alpha episodes the cuts do not
move the LP bound (the per-step CPU/memory knapsack is what binds there; the LP spreads requests
fractionally), see the README.
``"request"``: the per-request MILP (same constraints, one request, the free capacities of the
current state, only candidate paths whose links all have >= b free). As a formulation it is
built for the first request on the empty DC with objective "accept it" (1 if it fits, the
evaluator then sees one accepted request and the rest dropped), which is what
``dmlopt.solve``/``export`` can check. The allocator ``milp`` (heuristics.nara) builds the
same model at every arrival with the state's free capacities and the objective
"accept, then fewest links charged, then fewest servers" and solves it with HiGHS.

Requests (Appendix H; the traces are not available here, stand-ins documented in
:data:`DISTRIBUTIONS`): CPU and memory up to 100 units (10 servers) for the trace stand-ins
and up to 50 units for the uniform set (:data:`UNIFORM_MAX`: the paper does not give the
uniform bound and its section 5.3 statistics exclude 100), bandwidth uniform on
{0.10, 0.11, ..., 1.00} (10-100 % of a server-rack link), holding periods uniform on
{1, ..., 2T-1} with mean T set for the average load (95 % uniform, 90 % Azure/Alibaba):
T = load * min(total CPU / E[c], total memory / E[m]) (Little's law, one arrival per step, the
awaiting request counted, i.e. the larger of the two resources' loads equals ``load``).

Examples
--------
Four requests on the paper's DCN, allocated online by Tetris; the objective is the number
accepted:

>>> import dmlopt
>>> inst = dmlopt.generate("nara", {"generator": "uniform", "n_requests": 4}, seed=0)
>>> result = dmlopt.heuristic(inst, "tetris", seed=0)
>>> result.status, round(result.objective, 3), dmlopt.evaluate(inst, result.solution).feasible
('feasible', 4.0, True)
"""

from __future__ import annotations

from typing import Any

from dmlopt.models.nara.bounds import BOUNDS as _BOUNDS
from dmlopt.models.nara.constants import BW_TOL, NAME, PAPER, SENSE, TITLE
from dmlopt.models.nara.evaluation import evaluate
from dmlopt.models.nara.exact import ACCEPTANCE_SETS, acceptance_sets
from dmlopt.models.nara.formulations import (
    FORMULATIONS,
    build,
    build_offline,
    build_offline_basic,
    build_offline_plain,
    build_request,
    build_request_model,
    canonical,
    decode,
    decode_allocations,
    estimate_size,
    warm_start,
)
from dmlopt.models.nara.generators import (
    DISTRIBUTIONS,
    EPISODE,
    GENERATORS,
    UNIFORM_MAX,
    TraceParams,
    UniformParams,
    generate_alibaba,
    generate_azure,
    generate_uniform,
    generator_size,
    holding_mean,
    load_topology,
    mean_sizes,
)
from dmlopt.models.nara.instance import (
    Allocation,
    Instance,
    Link,
    Node,
    Request,
    Solution,
    Topology,
    net_size,
    topology_counts,
)


def __getattr__(name: str) -> Any:
    """``NaraEnv`` (the Gymnasium environment of section 3.2, :mod:`.env`), imported on
    first use (it imports this module)."""
    if name == "NaraEnv":
        from dmlopt.models.nara.env import NaraEnv

        return NaraEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: every bound method, strongest first: those of :mod:`.bounds`, then the exact method
#: ``acceptance-sets`` of :mod:`.exact` (what ``dmlopt.solve`` runs first by default)
BOUNDS = {**_BOUNDS, "acceptance-sets": ACCEPTANCE_SETS}

#: the bound to use (docs/nara.md): ``cover``, ``aggregate`` with cover cuts, the exact side
#: on every proven episode of the loose table; where its size estimate is above the limits
#: (the largest episodes) ``dmlopt.bound`` falls back to ``aggregate``
RECOMMENDED_BOUND = "cover"

#: a tiny ``dmlopt.generate`` spec, 4 requests on the alpha topology: solves in about a
#: second with every formulation; tests/core/test_contract.py checks the problem contract on it
EXAMPLE: dict[str, Any] = {"generator": "uniform", "n_requests": 4}

__all__ = [
    'NAME', 'TITLE', 'PAPER', 'SENSE', 'BW_TOL', 'Node', 'Link', 'Topology', 'Request',
    'Instance', 'Allocation', 'Solution', 'topology_counts', 'net_size', 'evaluate',
    'build_offline', 'build_offline_basic', 'build_offline_plain', 'build_request_model',
    'build_request', 'FORMULATIONS', 'build', 'estimate_size', 'decode_allocations', 'decode',
    'canonical', 'warm_start', 'DISTRIBUTIONS', 'UNIFORM_MAX', 'EPISODE', 'mean_sizes',
    'holding_mean', 'load_topology', 'generate_uniform', 'generate_azure', 'generate_alibaba',
    'TraceParams', 'UniformParams', 'generator_size', 'GENERATORS', 'EXAMPLE',
    'BOUNDS', 'RECOMMENDED_BOUND', 'ACCEPTANCE_SETS', 'acceptance_sets',
]
