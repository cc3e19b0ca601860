"""RAR (paper 003): ``rdda-pack``, RDDA for the schemes whose eq. (4) is driven by blocking.

Why (ours)
----------
Under MinW, MinT and MaxR a blocked request costs more than anything a deployed one adds in
most cases: 1 / |R| against at most alpha (t_e / t_d) < 1 / |R| under MinT, 1 / |R| + alpha
against alpha (1 - gamma), gamma > 0.999 on the 38-node network, under MaxR (eq. 12), and
1 / |R| against alpha per wavelength a request newly activates under MinW. RDDA's keys for these
schemes (earliest end, the most reliable ring, the fewest new wavelengths) ignore how much room
a placement leaves to the requests still to come: on the 38-node network with 500 requests the
requests' fewest CU-slots add up to about the network's CU-slots, and RDDA blocks a fifth of
them.

What
----
:func:`rdda_pack` keeps the lowest eq. (4) of these steps, each of which only accepts a change
that lowers eq. (4) (computed from the packer's state as the evaluator does):

1. starts: RDDA with the instance's scheme, and RDDA's MinCU placement (``rdda`` key: fewest
   newly activated CUs, then fewest nodes and CUs; ``valley`` key: fewest new CUs, then the
   emptiest window) in the request orders of :data:`dmlopt.heuristics.rar.ORDERS`; the start
   with the lowest eq. (4) is kept. The MinCU keys fill the CUs already in use before opening
   new ones, which leaves room for later requests;
2. insertion with one ejection: every blocked request, smallest fewest CU-slots first, is
   placed if it fits; otherwise each of up to ``ejections`` deployed requests that compute on
   its source node during its window [t_a, t_d] (most CU-slots there first) is taken out, the
   blocked request placed and the one taken out placed again anywhere (same scheme key);
   kept only if eq. (4) drops;
3. the scheme's moves: each deployed request is taken out and put back at RDDA's best
   placement for the instance's scheme (the most reliable ring for MaxR, the earliest end for
   MinT, the fewest new wavelengths for MinW) if that lowers eq. (4); then, under MinW, a
   deployed request whose removal saves more wavelengths than blocking it costs is blocked.

Steps 2-3 repeat for at most ``rounds`` rounds while eq. (4) drops. The result is never worse
than RDDA (its first start; tested).

A caller with a clock (:func:`dmlopt.heuristics.rar_lns.rdda_lns`) passes a deadline to
:func:`pack_until`: it is checked before each request every step places, a start cut short is
dropped (the first, RDDA itself, keeps the requests placed so far and blocks the rest), and
steps 2-3 stop where they are; every state between two requests is a feasible solution.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal

import pydantic

from dmlopt.contract import Options, Size
from dmlopt.models.rar import Instance, Solution

#: placement keys of the starts: the instance's own RDDA key, or RDDA's MinCU key
#: (``rdda``) or the emptiest-window MinCU key (``valley``)
PACK_KEYS = ("scheme", "rdda", "valley")


def _cost(pk) -> float:
    """Eq. (4) of the packer's state, as :func:`dmlopt.models.rar.evaluate` computes it."""
    inst = pk.inst
    nr = len(inst.requests)
    blocked = nr - len(pk.placed)
    alpha = inst.alpha_of()
    scheme = inst.scheme
    if scheme == "MinCU":
        zeta = float(pk.peak.sum())
    elif scheme == "MinW":
        zeta = float(pk.w_act.sum())
    elif scheme == "MinT":
        zeta = sum((e + 1) / inst.requests[j].deadline for j, (_, _, _, _, e, _)
                   in pk.placed.items())
    else:
        zeta = float(blocked) + sum(1.0 - inst.rings[k].reliability
                                    for k, *_ in pk.placed.values())
    return blocked / nr + alpha * zeta


def _past(deadline: float | None) -> bool:
    """True once the :func:`time.perf_counter` instant ``deadline`` has passed (None: never)."""
    return deadline is not None and time.perf_counter() >= deadline


def _packer(inst: Instance, order: list[int], key: str, deadline: float | None = None):
    """One start: RDDA over ``order`` with the placement ``key`` (:data:`PACK_KEYS`); at
    ``deadline`` the requests not yet placed stay blocked and ``pk.cut`` is True."""
    from dmlopt.heuristics.rar_pack import _Packer

    pk = _Packer(inst, inst.scheme if key == "scheme" else "MinCU")
    pk.order = order
    pk.prefer = "valley" if key == "valley" else None
    pk.cut = False
    for j in order:
        if _past(deadline):
            pk.cut = True
            break
        best = pk.place(j)
        if best is not None:
            pk.commit(j, best)
    pk.scheme, pk.prefer = inst.scheme, None  # the moves use the instance's scheme key
    return pk


def _source_users(pk, j: int) -> list[int]:
    """Deployed requests computing on j's source node inside j's window, most CU-slots there
    first."""
    inst = pk.inst
    r = inst.requests[j]
    lo, hi = r.arrival - 1, r.deadline - 1
    out = []
    for i, (_k, sub, kk, s, e, _) in pk.placed.items():
        if r.source in sub and s <= hi and e >= lo:
            out.append((-(kk * (min(e, hi) - max(s, lo) + 1)), i))
    return [i for _, i in sorted(out)]


def _insert(pk, fewest: list[int], ejections: int, deadline: float | None = None) -> bool:
    """Step 2 of the module docstring (until ``deadline``); True if eq. (4) dropped."""
    changed = False
    blocked = sorted((j for j in range(len(pk.inst.requests)) if j not in pk.placed),
                     key=lambda j: (fewest[j], j))
    for j in blocked:
        if _past(deadline):
            break
        before = _cost(pk)
        best = pk.place(j)
        if best is not None:
            pk.commit(j, best)
            if _cost(pk) < before - 1e-12:
                changed = True
            else:
                pk.release(j)
            continue
        for i in _source_users(pk, j)[:ejections]:
            saved = pk.placed[i]
            pk.release(i)
            got = pk.place(j)
            if got is None:
                pk.commit(i, saved)
                continue
            pk.commit(j, got)
            back = pk.place(i)
            if back is not None:
                pk.commit(i, back)
            if _cost(pk) < before - 1e-12:
                changed = True
                break
            if back is not None:
                pk.release(i)
            pk.release(j)
            pk.commit(i, saved)
    return changed


def _moves(pk, deadline: float | None = None) -> bool:
    """Step 3 of the module docstring (until ``deadline``); True if eq. (4) dropped."""
    changed = False
    for j in sorted(pk.placed):
        if _past(deadline):
            break
        before = _cost(pk)
        saved = pk.placed[j]
        pk.release(j)
        if pk.inst.scheme == "MinW" and _cost(pk) < before - 1e-12:
            changed = True  # blocking it saves more wavelengths than blocking costs
            continue
        moved = pk.place(j)
        pk.commit(j, moved if moved is not None else saved)
        if _cost(pk) < before - 1e-12:
            changed = True
        elif moved is not None and moved != saved:
            pk.release(j)
            pk.commit(j, saved)
    return changed


def rdda_pack(instance: Instance, *, seed: int = 0, orders: Sequence[str] | None = None,
              keys: Sequence[str] = PACK_KEYS, ejections: int = 8, rounds: int = 3
              ) -> Solution:
    """RDDA from several starts, then insertions with ejection and the scheme's moves (ours).

    Parameters
    ----------
    instance : Instance
        A RAR instance, any scheme (meant for MinW, MinT and MaxR, where blocking dominates
        eq. (4); MinCU has ``rdda-ls``).
    seed : int
        Unused (deterministic); kept for the heuristic contract.
    orders : sequence of str or None
        Request orders of the MinCU-key starts (:data:`dmlopt.heuristics.rar.ORDERS`); default
        all four. The start with the instance's scheme key always runs in RDDA's order.
    keys : sequence of str
        Placement keys of the starts (:data:`PACK_KEYS`); default all three.
    ejections : int
        Deployed requests tried for ejection per blocked request (0: plain insertion), default
        8.
    rounds : int
        At most this many rounds of insertions and moves (0: the best start alone), default 3;
        a round that lowers nothing ends the search.

    Returns
    -------
    Solution
        The best start after the rounds; eq. (4) at most RDDA's (the first start is RDDA).

    References
    ----------
    Chen et al., JOCN 16(5), 2024 (paper 003): Algorithm 1, eqs. (4), (12). Ours: the starts
    with MinCU keys for the other schemes, insertion with one ejection and the scheme's moves
    (module docstring).
    """
    return pack_until(instance, None, orders=orders, keys=keys, ejections=ejections,
                      rounds=rounds)


def pack_until(instance: Instance, deadline: float | None, *,
               orders: Sequence[str] | None = None, keys: Sequence[str] = PACK_KEYS,
               ejections: int = 8, rounds: int = 3) -> Solution:
    """:func:`rdda_pack` that stops at ``deadline`` with the best feasible solution so far.

    Parameters
    ----------
    instance : Instance
        A RAR instance.
    deadline : float or None
        A :func:`time.perf_counter` instant, checked before each request placed (module
        docstring); None: none (exactly :func:`rdda_pack`).
    orders, keys, ejections, rounds
        As :func:`rdda_pack`.

    Returns
    -------
    Solution
        :func:`rdda_pack`'s solution when the deadline does not bind; otherwise the best
        complete start (RDDA's, possibly with the requests it had not reached blocked), improved
        by the steps done before the deadline. Always feasible.

    References
    ----------
    As :func:`rdda_pack`.
    """
    from dmlopt.errors import InstanceError
    from dmlopt.heuristics.rar import ORDERS, _request_order, fewest_cu_slots

    orders = ORDERS if orders is None else tuple(orders)
    for name, value, allowed in (("orders", orders, ORDERS), ("keys", keys, PACK_KEYS)):
        if not value or any(v not in allowed for v in value):
            raise InstanceError(name, list(value), f"must be a non-empty list of "
                                f"{', '.join(allowed)}")
    inst = instance
    nr = len(inst.requests)
    fewest = [fewest_cu_slots(inst, j) for j in range(nr)]
    arrival = _request_order(inst, "arrival", fewest)
    starts = [("arrival", "scheme")] + [(o, k) for k in keys for o in orders
                                        if (o, k) != ("arrival", "scheme")]
    best = None
    for name, key in starts:
        if best is not None and _past(deadline):
            break
        pk = _packer(inst, arrival if name == "arrival" else _request_order(inst, name, fewest),
                     key, deadline)
        if best is None or (not pk.cut and _cost(pk) < _cost(best) - 1e-12):
            best = pk
    assert best is not None
    for _ in range(rounds):
        if _past(deadline):
            break
        a = _insert(best, fewest, ejections, deadline)
        b = _moves(best, deadline)
        if not (a or b):
            break
    return best.solution()


class RddaPackOptions(Options):
    """Options of :func:`rdda_pack`."""

    orders: tuple[Literal["arrival", "fewest", "window", "density"], ...] = pydantic.Field(
        default=("arrival", "fewest", "window", "density"), min_length=1, max_length=4,
        description="request orders of the MinCU-key starts: arrival, fewest, window, density "
        "(as rdda-ls)")
    keys: tuple[Literal["scheme", "rdda", "valley"], ...] = pydantic.Field(
        default=PACK_KEYS, min_length=1, max_length=3,
        description="placement keys of the starts: scheme (RDDA's for the instance's scheme, "
        "arrival order), rdda (RDDA's MinCU key), valley (fewest new CUs, emptiest window)")
    ejections: int = pydantic.Field(default=8, ge=0, le=100,
                                    description="deployed requests tried for ejection per "
                                    "blocked request (0: plain insertion)")
    rounds: int = pydantic.Field(default=3, ge=0, le=20,
                                 description="rounds of insertions and moves (0: none)")


def rdda_pack_estimate(instance: Instance, options: RddaPackOptions) -> Size:
    """What :func:`rdda_pack` allocates and computes.

    Parameters
    ----------
    instance : Instance
        The RAR instance.
    options : RddaPackOptions
        The options of the run.

    Returns
    -------
    Size
        Bytes allocated and operations.

    Notes
    -----
    One plain RDDA pass (:func:`dmlopt.heuristics.rar.rdda_estimate`) per start; per round,
    one pass for the moves and ``ejections / 8`` passes for the insertions (only blocked
    requests are re-inserted, and an ejection ends at the first placement that fits; measured
    on ``cpn38`` with 125 and 250 requests, every scheme: 11-16 plain passes in all with the
    defaults, against 15 charged). Memory: two packers' state.

    References
    ----------
    .. [1] RAR paper, section 5 (Algorithm 1, RDDA), run from several starts.
    """
    from dmlopt.heuristics.rar import RddaOptions, rdda_estimate

    one = rdda_estimate(instance, RddaOptions())
    starts = 1 + len(options.orders) * len([k for k in options.keys if k != "scheme"])
    passes = starts + options.rounds * (1 + options.ejections / 8)
    return Size(2.0 * one.memory, float(passes) * one.work)
