"""Why an online Nara allocator drops requests (paper 001, sections 3.2 and 5.1).

:func:`drop_causes` replays an allocator through the simulator and classifies every dropped
request by the state it met:

``capacity``   the DC's total free CPU or memory is below the request's (no allocator could
               place it, whatever the network);
``path``       the allocator picked a server whose pairs with the servers already picked have no
               candidate path with >= b free (transition (i) of section 3.2: constraint 3
               broken, the request is dropped);
``exhausted``  the allocator stopped without a failing pick (its search found no further server
               it was willing to pick: Tetris with path check, NALB's filtered search, netfit);
``placeable``  (only with ``exact=True``) how many of the ``path`` and ``exhausted`` drops had an
               allocation in that state, by the per-request MILP (formulation "request" with the
               free capacities of the step, HiGHS): drops a better allocator could have avoided
               *at that moment*.

It also reports servers per accepted request and the accepted count. The classification uses
the same :class:`~dmlopt.models.nara.sim.State` as the allocators, so the counts are those of
the allocator's real run (the solution is returned and can be re-evaluated).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dmlopt.heuristics import nara as alloc
from dmlopt.heuristics.nara import netfit as _nara_netfit
from dmlopt.models import nara
from dmlopt.models.nara.sim import State


class _Counting(State):
    """A :class:`State` that remembers whether a pick broke constraint 3."""

    failed_pick = False

    def begin(self, j: int) -> nara.Request:
        self.failed_pick = False
        return super().begin(j)

    def add(self, s: int) -> bool:
        ok = super().add(s)
        if not ok:
            self.failed_pick = True
        return ok


def _chooser(instance: nara.Instance, name: str, options: dict[str, Any]) -> tuple[Any, str]:
    """(choose function, route mode) of a heuristic of :data:`heuristics.nara.HEURISTICS`."""
    hops = alloc._rack_hops(instance.net)
    if name == "random":
        return alloc._random, "first"
    if name == "tetris":
        return alloc._tetris_choose(options.get("penalty", 0.9),
                                    options.get("check_paths", True)), "first"
    if name == "nalb":
        return alloc._bfs_choose(True, hops), "widest"
    if name == "nulb":
        return alloc._bfs_choose(False, hops), "widest"
    if name == "netfit":
        return _nara_netfit.chooser(instance), "first"
    if name == "netfit-probe":  # its admission-control rejections count as "exhausted"
        from dmlopt.heuristics.nara import probe as _nara_probe

        return _nara_probe.chooser(instance, **options), "first"
    raise ValueError(f"name: {name!r} is not random, tetris, nalb, nulb, netfit or netfit-probe")


def _placeable(instance: nara.Instance, state: State, time_limit: float) -> bool:
    from dmlopt import solvers

    model = nara.build_request_model(instance, state.step, state.cpu_free, state.mem_free,
                                     state.bw[:-1], objective="count")
    run = solvers.run(model, "highs", time_limit=time_limit, threads=1)
    return bool(run.has_solution and (model.acc[0].value or 0) > 0.5)


def drop_causes(instance: nara.Instance, name: str, *, seed: int = 0, exact: bool = False,
                time_limit: float = 10.0, **options: Any) -> dict[str, Any]:
    """Replay allocator ``name`` on ``instance`` and count its drops by cause (module doc).

    Returns a dict with ``accepted``, ``capacity``, ``path``, ``exhausted``, ``placeable``
    (None unless ``exact``), ``servers_per_accepted`` and ``solution``.
    """
    choose, route = _chooser(instance, name, options)
    state = _Counting(instance, route=route)
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"accepted": 0, "capacity": 0, "path": 0, "exhausted": 0,
                           "placeable": 0 if exact else None}
    n_servers = 0
    for j in range(len(instance.requests)):
        req = state.begin(j)
        short = req.c > int(state.cpu_free.sum()) or req.m > int(state.mem_free.sum())
        snap = (state.cpu_free.copy(), state.mem_free.copy(), state.bw.copy())
        result = choose(state, rng)
        if state.req is not None:
            if result is False:
                state.drop()
            else:
                state.finish()
        al = state.allocations[j]
        if al is not None:
            out["accepted"] += 1
            n_servers += len(al.servers)
            continue
        cause = "capacity" if short else "path" if state.failed_pick else "exhausted"
        out[cause] += 1
        if exact and cause != "capacity":
            probe = State(instance)
            probe.cpu_free, probe.mem_free, probe.bw = snap
            probe.step = j
            out["placeable"] += _placeable(instance, probe, time_limit)
    out["servers_per_accepted"] = n_servers / max(out["accepted"], 1)
    out["solution"] = state.solution()
    return out
