"""Nara (paper 001): the exact offline method ``acceptance-sets``, what ``dmlopt.solve`` runs
by default.

The offline optimum of formulation ``offline`` is the largest U such that some set of U
requests can be allocated together. A set of U requests is allocatable only if every subset
is, so "is there an allocation of U requests?" is asked over the sets of exactly U requests
that the ``aggregate`` rows allow (:func:`dmlopt.models.nara.bounds.aggregate_rows`), by a
no-good loop (:func:`decide_target`):

1. the aggregate 0-1 program with ``sum_i acc_i = U`` and the cover cuts found so far gives a
   set S (HiGHS); when HiGHS proves the program *infeasible*, no allocation accepts U
   requests: U - 1 is an upper bound (a proof);
2. S is decided, each check a proof or nothing:

   * a step at which the requests of S held together are proven not to fit the empty data
     centre (:func:`dmlopt.models.nara.fitcuts.fit_bound`): the minimal cover of that set
     (:func:`dmlopt.models.nara.fitcuts.minimal_cover`) is a cut;
   * the ``schedule`` bound of the episode restricted to S (:func:`sub_episode`) below |S|:
     the cut is S itself (no allocation holds all of S);
   * formulation ``offline`` (its strong cuts, without the objective cut) restricted to S
     with every acceptance fixed to 1 (:func:`allocate_set`): a feasible point is an
     allocation of U requests (evaluated, then U is reached); HiGHS's status *Infeasible*
     makes S a cut; a time-out decides nothing, S is set aside (a temporary row that is
     never counted as a proof), and the value U can then neither be proven nor refuted by
     this loop;
   * with the set check "cpsat" (the default "auto" when the optional package ``ortools`` is
     installed, :func:`resolve_set_check`), the CP-SAT model of the restricted episode with
     every request accepted (:func:`dmlopt.models.nara.cpsat.allocate_set`) takes the
     feasibility MILP's place: a short first check (:data:`CPSAT_FIRST_SECONDS`) of every set
     the other checks leave open, then the share of the time left of the sets set aside;
     only CP-SAT's status INFEASIBLE makes S a cut, a solution is an allocation of U
     requests (evaluated), UNKNOWN at the time limit decides nothing.

The method starts from the better of the caller's start and ``offline-search`` (the allocator
of :mod:`dmlopt.heuristics.nara.offline`, declared in ``Bound.heuristics``) and the ``schedule``
bound (:func:`dmlopt.models.nara.bounds.schedule_bound`), then asks U = best + 1, best + 2,
... up to the bound from the top down: each refuted U lowers the bound to U - 1, each reached
U raises the incumbent. It ends when the two meet (the incumbent is then optimal) or at the
time limit (the bound then is the last proven one).

Every cut is valid for every allocation: a cover of a set proven not to fit, or a set S proven
not to be allocatable (no allocation accepts all of S, so every allocation accepts at most
|S| - 1 of S). Undecided sets are never cuts of the proof.
"""

from __future__ import annotations

import math
import time
from typing import Any, Literal

import numpy as np
import pydantic

from dmlopt import solvers
from dmlopt.contract import Bound, BoundValue, Options, Size
from dmlopt.models.nara.instance import Allocation, Instance, Request, Solution

#: outcomes of one decided set
FITS, CUT, UNDECIDED = "fits", "cut", "undecided"

#: seconds of the schedule bound of the whole episode (a stopped bound is still valid)
BOUND_SECONDS = 60.0

#: seconds of the ``offline-search`` allocator run first
SEARCH_SECONDS = 60.0

#: seconds of one fit proof of a step's set
FIT_SECONDS = 5.0

#: seconds of the schedule bound of an episode restricted to a set
SET_BOUND_SECONDS = 10.0

#: CPU seconds of the offline-search run on an episode restricted to a set
SET_SEARCH_SECONDS = 5.0

#: seconds of one feasibility MILP of a set
SET_MILP_SECONDS = 30.0

#: how a set left open is decided: "auto" ("cpsat" when OR-Tools is installed, else "milp"),
#: "milp" (the feasibility MILP of :func:`allocate_set`), "racks" (rack patterns,
#: :func:`dmlopt.models.nara.racks.decide_by_racks`) or "cpsat" (the CP-SAT model of
#: :func:`dmlopt.models.nara.cpsat.allocate_set`)
SET_CHECK = "auto"

#: seconds of the first CP-SAT check of a set the other checks leave open (set_check "cpsat")
CPSAT_FIRST_SECONDS = 10.0


def resolve_set_check(set_check: str) -> str:
    """The set check in force: "auto" is "cpsat" when ``ortools`` imports, else "milp".

    Parameters
    ----------
    set_check : {"auto", "milp", "racks", "cpsat"}
        The option.

    Returns
    -------
    str
        "milp", "racks" or "cpsat".

    Raises
    ------
    InstanceError
        ``set_check`` is "cpsat" and ``ortools`` cannot be imported, or an unknown name
        (field ``set_check``).

    References
    ----------
    Ours.
    """
    from dmlopt.errors import InstanceError
    from dmlopt.models.nara import cpsat

    if set_check == "auto":
        return "cpsat" if cpsat.available() else "milp"
    if set_check == "cpsat" and not cpsat.available():
        raise InstanceError("set_check", set_check, "needs the optional package ortools "
                            "(pip install ortools); use 'auto', 'milp' or 'racks'")
    if set_check not in ("milp", "racks", "cpsat"):
        raise InstanceError("set_check", set_check, "is not one of auto, milp, racks, cpsat")
    return set_check


class ExactOptions(Options):
    """Options of the exact method ``acceptance-sets``."""

    set_seconds: float = pydantic.Field(
        SET_MILP_SECONDS, gt=0, le=86400, description="seconds of one feasibility MILP of a "
        "set of requests without a time limit (with one, the sets left open share the time "
        "left); a time-out decides nothing, the set is never a cut")
    search_seconds: float = pydantic.Field(
        SEARCH_SECONDS, ge=0, le=86400, description="CPU seconds of the offline-search "
        "allocator run first (0: none; its allocation is only a start)")
    bound_seconds: float = pydantic.Field(
        BOUND_SECONDS, gt=0, le=86400, description="seconds of the schedule bound of the "
        "whole episode (the first upper bound)")
    set_check: Literal["auto", "milp", "racks", "cpsat"] = pydantic.Field(
        SET_CHECK, description="how a set left open is decided: 'milp' (the feasibility MILP "
        "of the set), 'racks' (rack relaxation and feasibility MILPs with the racks of "
        "every request fixed, logic-based Benders), 'cpsat' (the CP-SAT model of the set; "
        "needs the optional package ortools) or 'auto' ('cpsat' when ortools is installed, "
        "else 'milp'); a time-out decides nothing either way")


def sub_episode(instance: Instance, members: list[int]) -> Instance:
    """The episode restricted to the requests ``members``: the same requests in arrival
    order, each held exactly while the same members arrive as in ``instance``.

    Request q of the result is ``members[q]`` (sorted); it arrives at step q and is held until
    the arrival of the first member that arrives after its original holding period ends, so
    that at every step the active requests are those of ``members`` active at that member's
    arrival in ``instance``. Every step of ``instance`` holds a subset of one of these sets (the
    set at the last member's arrival before it), so an allocation of the members is feasible
    in ``instance`` (the others dropped) iff it is feasible in the result.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices (distinct, any order).

    Returns
    -------
    Instance
        The restricted episode, ``len(members)`` requests, on the same topology.

    References
    ----------
    Ours (paper 001, section 3.2: request j arrives at step j).
    """
    ms = sorted(members)
    out = []
    for q, i in enumerate(ms):
        r = instance.requests[i]
        end = i + r.t
        held = sum(1 for k in ms[q:] if k < end)
        out.append(Request(c=r.c, m=r.m, b=r.b, t=float(held)))
    return Instance(topology=instance.topology, k_paths=instance.k_paths, requests=out,
                    name=f"{instance.name}-sub{len(ms)}")


def lift(instance: Instance, members: list[int], allocations: list[Allocation | None]
         ) -> Solution:
    """An allocation of :func:`sub_episode` (``allocations``, one per member in sorted order)
    as a solution of ``instance`` (every other request dropped).

    Parameters
    ----------
    instance : Instance
        The episode.
    members : list of int
        The members of the restricted episode.
    allocations : list of Allocation or None
        Its allocations in the order of the sorted members.

    Returns
    -------
    Solution
        One entry per request of ``instance``.

    References
    ----------
    Ours.
    """
    out: list[Allocation | None] = [None] * len(instance.requests)
    for i, al in zip(sorted(members), allocations, strict=True):
        out[i] = al
    return Solution(allocations=out)


def allocate_set(instance: Instance, members: list[int], *, time_limit: float,
                 threads: int = 1) -> tuple[str, Solution | None]:
    """Decide whether the requests ``members`` can all be allocated together: formulation
    ``offline`` (the strong cuts and the rack symmetry, no objective cut) of
    :func:`sub_episode` with every acceptance fixed to 1, solved by HiGHS.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices.
    time_limit : float
        Seconds for HiGHS.
    threads : int
        HiGHS threads (default 1).

    Returns
    -------
    (outcome, solution)
        :data:`FITS` and the allocation (a solution of ``instance`` accepting exactly
        ``members``, to be evaluated by the caller), :data:`CUT` (HiGHS proved the model
        infeasible: no allocation accepts all of them) or :data:`UNDECIDED` (a time-out or a
        solver failure: nothing is proven), None.

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1 (constraints 1-3); the model of
    :func:`dmlopt.models.nara.formulations.build_offline`; ours: the acceptances fixed.
    """
    from dmlopt.models.nara import formulations as nf

    sub = sub_episode(instance, members)
    net = sub.net
    model = nf._model(net, list(sub.requests), sub.active_sets(), net.cpu, net.mem, net.cap,
                      "count", f"nara_set_{instance.name}", symmetry=True, cuts="strong")
    for i in model.I:
        model.acc[i].fix(1)
    run = solvers.run(model, "highs", time_limit=max(time_limit, 1e-2), threads=threads)
    if run.status == "infeasible":
        return CUT, None
    if run.has_solution:
        allocs = nf.decode_allocations(model, net)
        return FITS, lift(instance, members, allocs)
    return UNDECIDED, None


def _select(n: int, rows: tuple[list[list[int]], list[list[float]], list[float]],
            aside: list[list[int]], target: int, cost: np.ndarray, time_limit: float,
            threads: int) -> tuple[str, list[int] | None]:
    """A set of exactly ``target`` requests satisfying the aggregate ``rows`` (with the cuts)
    and not containing any set of ``aside``, of least ``cost`` (HiGHS); ("infeasible", None)
    when HiGHS proves there is none, ("undecided", None) at a stop without a set."""
    import highspy

    from dmlopt.models.nara.bounds import binary_program

    index, coef, rhs = rows
    idx = list(index) + list(aside) + [list(range(n))]
    cf = list(coef) + [[1.0] * len(a) for a in aside] + [[1.0] * n]
    up = list(rhs) + [float(len(a) - 1) for a in aside] + [float(target)]
    lo = [-highspy.kHighsInf] * (len(rhs) + len(aside)) + [float(target)]
    h = binary_program(n, (idx, cf, up), time_limit=time_limit, threads=threads, cost=cost,
                       sense="min", lower=lo)
    status = h.modelStatusToString(h.getModelStatus())
    if status == "Infeasible":
        return "infeasible", None
    sol = h.getSolution()
    if sol.value_valid and h.getInfo().primal_solution_status == 2:
        x = np.asarray(sol.col_value)
        return "set", [i for i in range(n) if x[i] > 0.5]
    return "undecided", None


def search_set(instance: Instance, members: list[int], *, deadline: float,
               seconds: float = SET_SEARCH_SECONDS) -> Solution | None:
    """An allocation accepting every request of ``members``, looked for by ``offline-search``
    (:mod:`dmlopt.heuristics.nara.offline`, declared in ``Bound.heuristics``) on
    :func:`sub_episode`.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices.
    deadline : float
        ``time.monotonic()`` value: nothing starts after it.
    seconds : float
        CPU seconds of the search (default :data:`SET_SEARCH_SECONDS`).

    Returns
    -------
    Solution or None
        The allocation (a solution of ``instance``, to be evaluated by the caller) when the
        search accepts every member, else None (which proves nothing).

    References
    ----------
    Ours: the offline allocator of :mod:`dmlopt.heuristics.nara.offline` as a primal check.
    """
    from dmlopt.models.nara.aggregate import heuristic

    left = deadline - time.monotonic()
    if left <= 0:
        return None
    sub = sub_episode(instance, members)
    got = heuristic("offline-search")(sub, time_limit=max(min(seconds, left), 1e-3))
    if sum(al is not None for al in got.allocations) < len(members):
        return None
    return lift(instance, members, list(got.allocations))


def decide_set(instance: Instance, members: list[int], *, deadline: float,
               set_seconds: float = SET_MILP_SECONDS, threads: int = 1,
               known_fit: set[tuple[int, ...]] | None = None, milp: bool = True
               ) -> tuple[str, list[int] | None, Solution | None, str]:
    """Decide whether the requests ``members`` can all be allocated together (module
    docstring, step 2).

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    members : list of int
        Request indices.
    deadline : float
        ``time.monotonic()`` value: no check starts after it, and none runs past it.
    set_seconds : float
        Seconds of the feasibility MILP at most (default :data:`SET_MILP_SECONDS`).
    threads : int
        HiGHS threads (default 1).
    known_fit : set of tuple, optional
        Step sets already found to fit (not proven infeasible by the fit proof): skipped,
        and the sets found now are added.
    milp : bool
        Run the feasibility MILP last (default True; False leaves a set that the other checks
        do not decide undecided).

    Returns
    -------
    (outcome, cut, solution, how)
        :data:`CUT` with a set no allocation accepts entirely (a minimal cover of a step, or
        ``members``), :data:`FITS` with an allocation accepting ``members`` (not yet
        evaluated), or :data:`UNDECIDED`; ``how`` names the check that decided ("fit",
        "schedule", "milp", or "" when undecided).

    References
    ----------
    Paper 001 (Shabka, Zervas), section 3.1; ours (module docstring).
    """
    from dmlopt.models.nara import fitcuts
    from dmlopt.models.nara.bounds import schedule_bound

    known_fit = set() if known_fit is None else known_fit
    mask = np.zeros(len(instance.requests), dtype=bool)
    mask[members] = True
    for step_set in fitcuts._chosen_sets(instance, mask):
        left = deadline - time.monotonic()
        if left <= 0:
            return UNDECIDED, None, None, ""
        if tuple(step_set) in known_fit:
            continue
        got = fitcuts.fit_bound(instance, step_set, time_limit=min(FIT_SECONDS, left),
                                threads=threads)
        if got < len(step_set):
            cover = fitcuts.minimal_cover(instance, step_set, time_limit=FIT_SECONDS,
                                          threads=threads, deadline=deadline)
            return CUT, sorted(cover), None, "fit"
        known_fit.add(tuple(step_set))
    left = deadline - time.monotonic()
    if left <= 0:
        return UNDECIDED, None, None, ""
    sub = sub_episode(instance, members)
    got = schedule_bound(sub, time_limit=min(SET_BOUND_SECONDS, left), threads=threads,
                         primal=False).bound
    if got < len(members):
        return CUT, sorted(members), None, "schedule"
    sol = search_set(instance, members, deadline=deadline)
    if sol is not None:
        return FITS, None, sol, "search"
    left = deadline - time.monotonic()
    if left <= 0 or not milp:
        return UNDECIDED, None, None, ""
    outcome, sol = allocate_set(instance, members, time_limit=min(set_seconds, left),
                                threads=threads)
    if outcome == CUT:
        return CUT, sorted(members), None, "milp"
    if outcome == FITS:
        return FITS, None, sol, "milp"
    return UNDECIDED, None, None, ""



def decide_target(instance: Instance, target: int, cuts: list[list[int]], *, deadline: float,
                  set_seconds: float = SET_MILP_SECONDS, threads: int = 1,
                  counts: dict[str, float] | None = None, known_fit: set[tuple[int, ...]] | None
                  = None, set_check: str = SET_CHECK) -> tuple[str, Solution | None]:
    """Is there an allocation accepting ``target`` requests? The no-good loop of the module
    docstring.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    target : int
        The number of requests asked.
    cuts : list of list of int
        Sets no allocation accepts entirely (valid for every target); the sets proven here are
        appended.
    deadline : float
        ``time.monotonic()`` value at which the loop stops undecided.
    set_seconds : float
        Seconds of one feasibility MILP of a set left open when there is no deadline (default
        :data:`SET_MILP_SECONDS`; with one, those sets share the time left).
    threads : int
        HiGHS threads (default 1).
    counts : dict, optional
        Counters updated in place: ``sets`` (sets decided or tried), ``fit``, ``schedule``,
        ``milp``, ``cpsat`` (cuts by each check), ``cpsat_fits`` (sets allocated by
        CP-SAT), ``undecided`` (sets set aside).
    known_fit : set of tuple, optional
        Step sets known not to be refuted by the fit proof (shared between calls).
    set_check : str
        How a set left open is decided (default :data:`SET_CHECK`, :func:`resolve_set_check`):
        "milp" (:func:`allocate_set`), "racks"
        (:func:`dmlopt.models.nara.racks.decide_by_racks`) or "cpsat" (a first CP-SAT check of
        :data:`CPSAT_FIRST_SECONDS` when the other checks leave a set open, then
        :func:`dmlopt.models.nara.cpsat.allocate_set` for the sets set aside).

    Returns
    -------
    (outcome, solution)
        ``"refuted"`` (HiGHS proved that no set of ``target`` requests passes the aggregate rows
        and the cuts: a proof that the optimum is below ``target``), ``"reached"`` and an
        allocation accepting ``target`` requests (not yet evaluated by the caller), or
        ``"undecided"`` (the deadline, or sets left undecided), None.

    References
    ----------
    Paper 001 (Shabka, Zervas), sections 3.1-3.2; the aggregate rows of
    :func:`dmlopt.models.nara.bounds.aggregate_rows`; ours (module docstring).
    """
    from dmlopt.models.nara import bounds as nb

    counts = {} if counts is None else counts
    set_check = resolve_set_check(set_check)
    for key in ("sets", "fit", "schedule", "milp", "cpsat", "cpsat_fits", "undecided"):
        counts.setdefault(key, 0.0)
    n = len(instance.requests)
    index, coef, rhs = nb.aggregate_rows(instance)
    net = instance.net
    c_tot, m_tot = max(float(net.cpu.sum()), 1.0), max(float(net.mem.sum()), 1.0)
    cost = np.array([(r.c / c_tot + r.m / m_tot) * min(r.t, n - i) + 1e-3
                     for i, r in enumerate(instance.requests)])
    aside: list[list[int]] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "undecided", None
        rows = (index + cuts, coef + [[1.0] * len(c) for c in cuts],
                rhs + [float(len(c) - 1) for c in cuts])
        status, members = _select(n, rows, aside, target, cost, left, threads)
        if status == "infeasible" and not aside:
            return "refuted", None
        if status == "infeasible":
            # only the sets set aside are left: each gets its share of the time left
            outcome, sol, aside = _retry(instance, aside, cuts, deadline=deadline,
                                         threads=threads, counts=counts,
                                         set_seconds=set_seconds, set_check=set_check)
            if outcome != "progress":
                return outcome, sol
            continue
        if members is None:
            return "undecided", None
        counts["sets"] += 1
        outcome, cut, sol, how = decide_set(instance, members, deadline=deadline,
                                            set_seconds=set_seconds, threads=threads,
                                            known_fit=known_fit, milp=False)
        if outcome == UNDECIDED and set_check == "cpsat" and deadline > time.monotonic():
            from dmlopt.models.nara import cpsat

            outcome, sol = cpsat.allocate_set(
                instance, members, workers=threads,
                time_limit=min(CPSAT_FIRST_SECONDS, deadline - time.monotonic()))
            cut, how = (sorted(members), "cpsat") if outcome == CUT else (None, "cpsat")
        if outcome == CUT and cut is not None:
            cuts.append(cut)
            counts[how] += 1
        elif outcome == FITS and sol is not None:
            counts["cpsat_fits"] += how == "cpsat"
            return "reached", sol
        else:
            counts["undecided"] += 1
            aside.append(members)


def _retry(instance: Instance, aside: list[list[int]], cuts: list[list[int]], *,
           deadline: float, threads: int, counts: dict[str, float], set_seconds: float,
           set_check: str = SET_CHECK) -> tuple[str, Solution | None, list[list[int]]]:
    """Decide the sets set aside (those the fit proofs, the schedule bound and a short search
    left open) with an equal share of the time left each: a quarter for ``offline-search`` on
    the restricted episode, the rest for the feasibility MILP (``set_check`` "milp") or the
    rack patterns ("racks"); ("reached", allocation, ...)
    when one fits, ("progress", None, the sets still undecided) when some were proven (their
    cuts appended), else ("undecided", None, ...)."""
    still: list[list[int]] = []
    for q, members in enumerate(aside):
        left = deadline - time.monotonic()
        if left <= 0:
            still += aside[q:]
            break
        share = left / (len(aside) - q) if math.isfinite(left) else set_seconds / 0.75
        found = search_set(instance, members, deadline=deadline, seconds=0.25 * share)
        if found is not None:
            return "reached", found, still
        left = deadline - time.monotonic()
        if set_check == "cpsat":
            from dmlopt.models.nara import cpsat

            outcome, sol = cpsat.allocate_set(instance, members, workers=threads,
                                              time_limit=max(min(0.75 * share, left), 1e-3))
        elif set_check == "racks":
            from dmlopt.models.nara.racks import decide_by_racks

            outcome, sol, _ = decide_by_racks(
                instance, members, deadline=time.monotonic() + min(0.75 * share, left),
                threads=threads)
        else:
            outcome, sol = allocate_set(instance, members, time_limit=min(0.75 * share, left),
                                        threads=threads)
        if outcome == FITS and sol is not None:
            counts["cpsat_fits"] = counts.get("cpsat_fits", 0.0) + (set_check == "cpsat")
            return "reached", sol, still
        if outcome == CUT:
            cuts.append(sorted(members))
            counts["cpsat" if set_check == "cpsat" else "milp"] += 1
            counts["undecided"] -= 1
        else:
            still.append(members)
    return ("progress" if len(still) < len(aside) else "undecided"), None, still


def _start(instance: Instance, start: Any, search_seconds: float) -> tuple[Solution | None,
                                                                           float]:
    """The better feasible one of ``start`` and ``offline-search`` (``search_seconds`` CPU
    seconds; netfit when 0), and its evaluated count."""
    from dmlopt.models.nara.aggregate import heuristic
    from dmlopt.models.nara.evaluation import evaluate

    found = []
    if start is not None:
        found.append(start)
    if search_seconds > 0:
        found.append(heuristic("offline-search")(instance, time_limit=search_seconds))
    else:
        found.append(heuristic("netfit")(instance))
    best, value = None, -math.inf
    for sol in found:
        try:
            ev = evaluate(instance, sol)
        except Exception:  # noqa: BLE001 - a start of another shape is no start
            continue
        if ev.feasible and ev.objective > value:
            best, value = sol, float(ev.objective)
    return best, value


def acceptance_sets(instance: Instance, *, time_limit: float | None = None, threads: int = 1,
                    start: Any = None, set_seconds: float = SET_MILP_SECONDS,
                    search_seconds: float = SEARCH_SECONDS,
                    bound_seconds: float = BOUND_SECONDS, set_check: str = SET_CHECK
                    ) -> BoundValue:
    """Offline optimum of a Nara episode by the no-good loop over acceptance sets (module
    docstring): exact for formulations ``offline``, ``offline-basic`` and ``offline-plain``.

    Parameters
    ----------
    instance : Instance
        A Nara episode.
    time_limit : float, optional
        Seconds in all (default None: no limit); at a stop the last proven bound and the best
        allocation found are returned.
    threads : int
        HiGHS threads (default 1).
    start : Solution, optional
        An allocation to begin from (``dmlopt.solve``'s warm start); used when the evaluator
        accepts it.
    set_seconds : float
        Seconds of one feasibility MILP of a set left open without a time limit (default
        :data:`SET_MILP_SECONDS`; with one, those sets share the time left).
    search_seconds : float
        CPU seconds of ``offline-search`` run first (default :data:`SEARCH_SECONDS`; 0: netfit
        alone).
    bound_seconds : float
        Seconds of the ``schedule`` bound of the episode (default :data:`BOUND_SECONDS`).
    set_check : str
        How the sets left open are decided (default :data:`SET_CHECK`, "auto": "cpsat" when
        ``ortools`` is installed, else "milp"; :func:`resolve_set_check`): "milp" (the
        feasibility MILP of :func:`allocate_set`), "racks" (rack patterns,
        :func:`dmlopt.models.nara.racks.decide_by_racks`) or "cpsat" (the CP-SAT model,
        :func:`dmlopt.models.nara.cpsat.allocate_set`).

    Returns
    -------
    BoundValue
        ``bound``: an integer upper bound on the accepted requests (the ``schedule`` bound,
        lowered by every target proven infeasible); ``solution``: the best allocation found
        (the core evaluates it; it is optimal when it meets the bound); metrics ``schedule``
        (the first bound), ``start`` (the starting count), ``targets`` (targets asked),
        ``sets``, ``fit``, ``schedule_cuts``, ``milp``, ``cpsat`` (cuts by each check),
        ``cpsat_fits`` (sets allocated by CP-SAT), ``undecided``, ``proven`` (1 when the
        bound meets the best count), ``seconds``.

    References
    ----------
    Paper 001 (Shabka, Zervas), sections 3.1-3.2 (the episode; formulation ``offline`` is
    ours); H. Crowder, E. L. Johnson and M. Padberg, Oper. Res. 31 (1983) 803-834 (cover
    inequalities); G. Codato and M. Fischetti, "Combinatorial Benders' cuts for mixed-integer
    linear programming", Oper. Res. 54 (2006) 756-766 (a master in the binaries, no-good cuts
    from subproblems proven infeasible); ours: the checks and the loop of the module
    docstring.
    """
    from dmlopt.models.nara.bounds import schedule_bound

    set_check = resolve_set_check(set_check)
    t0 = time.monotonic()
    deadline = math.inf if time_limit is None else t0 + float(time_limit)

    def left() -> float:
        return deadline - time.monotonic()

    upper = int(schedule_bound(instance, time_limit=max(min(bound_seconds, left()), 1e-3),
                               threads=threads, primal=False).bound)
    first = upper
    search = max(0.0, min(search_seconds, 0.25 * left())) if left() > 0 else 0.0
    best, value = _start(instance, start, search)
    lo = int(value) if math.isfinite(value) else 0
    counts: dict[str, float] = {}
    cuts: list[list[int]] = []
    known_fit: set[tuple[int, ...]] = set()
    targets = 0
    while lo < upper and left() > 0:
        targets += 1
        outcome, sol = decide_target(instance, upper, cuts, deadline=deadline,
                                     set_seconds=set_seconds, threads=threads, counts=counts,
                                     known_fit=known_fit, set_check=set_check)
        if outcome == "refuted":
            upper -= 1
        elif outcome == "reached" and sol is not None:
            from dmlopt.models.nara.evaluation import evaluate

            ev = evaluate(instance, sol)
            if not ev.feasible or ev.objective <= lo:
                break  # a decoding the evaluator refuses proves nothing
            best, lo = sol, int(ev.objective)
        else:
            break
    metrics = {"schedule": float(first), "start": float(value) if math.isfinite(value) else 0.0,
               "targets": float(targets), "sets": counts.get("sets", 0.0),
               "fit": counts.get("fit", 0.0), "schedule_cuts": counts.get("schedule", 0.0),
               "milp": counts.get("milp", 0.0), "cpsat": counts.get("cpsat", 0.0),
               "cpsat_fits": counts.get("cpsat_fits", 0.0),
               "undecided": counts.get("undecided", 0.0),
               "proven": float(lo >= upper), "seconds": time.monotonic() - t0}
    return BoundValue(float(upper), solution=best, metrics=metrics)


def _estimate(instance: Instance, options: Any) -> Size:
    """The schedule bound, the aggregate 0-1 programs and one feasibility MILP of formulation
    ``offline`` at a time (its variables and constraints, about a kilobyte and 10^4 operations
    each)."""
    from dmlopt.models.nara.bounds import _schedule_estimate
    from dmlopt.models.nara.formulations import _size_offline

    base = _schedule_estimate(instance, options)
    v, c = _size_offline(instance)
    return Size(memory=base.memory + 1000.0 * (v + c), work=2.0 * base.work + 1e4 * (v + c))


#: the share of dmlopt.solve's time limit the method gets before the MIP of formulation
#: ``offline`` (whose branch and bound does not move below its objective cut at 32 requests)
SHARE = 0.9

#: the exact method dmlopt.solve runs first (``Bound.exact``)
ACCEPTANCE_SETS = Bound(
    acceptance_sets, ExactOptions, _estimate,
    "exact offline optimum: no-good loop over the acceptance sets of the aggregate rows, each "
    "set decided by fit covers, the schedule bound or a feasibility model (CP-SAT when ortools "
    "is installed, else a MILP; dmlopt.solve runs it first)",
    exact=("offline", "offline-basic", "offline-plain"), share=SHARE,
    heuristics=("offline-search", "netfit"))
