"""INC/OXC heuristics (paper 002): the placement state, worker placement (WCG, SWG, RWP) and
parameter servers."""

from __future__ import annotations

import numpy as np

from dmlopt.heuristics.inc_oxc.place import workers_balanced, workers_target
from dmlopt.models.inc_oxc import (
    Instance,
)

_EPS = 1e-9
#: neighbourhoods above this size are scanned bottleneck jobs first (wcg-ls)
_BIG_NEIGHBOURHOOD = 20_000
#: wcg: up to this many racks the target-f placement, above it the one-pass balancing rule
_TARGET_RACKS = 16


class _State:
    """Free resources, placed data size and free PDP slots per rack."""

    def __init__(self, instance: Instance):
        A = instance.arrays
        self.cap = A["cap"]
        self.free = A["cap"].copy()
        self.dload = np.zeros(instance.n_racks)
        self.slots = A["slots"].copy()

    def how_many(self, need: np.ndarray) -> np.ndarray:
        """Per rack, how many copies of ``need`` fit."""
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(need > 0, (self.free + _EPS) / np.where(need > 0, need, 1), np.inf)
        return np.floor(q.min(axis=1)).clip(0, 10**9)

    def balance_key(self, racks: np.ndarray) -> np.ndarray:
        """Sort key of the resource-balancing rule: (placed data, -smallest free fraction)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(self.cap > 0, self.free / np.where(self.cap > 0, self.cap, 1), 1)
        return np.lexsort((-frac[racks].min(axis=1), self.dload[racks]))

    def put(self, k: int, need: np.ndarray, count: int, data: float) -> None:
        self.free[k] -= need * count
        self.dload[k] += data * count


def _place_cluster(st: _State, members: list[int], need: np.ndarray, data: float,
                   wrack: np.ndarray, avoid: set[int]) -> int | None:
    """Place identical workers ``members`` by the balancing rule; the rack of the first piece."""
    left = list(members)
    first = None
    while left:
        fit = st.how_many(need)
        whole = np.flatnonzero(fit >= len(left))
        pref = np.array([k for k in whole if k not in avoid], np.int64)
        cands = pref if pref.size else whole
        if cands.size:
            k = int(cands[st.balance_key(cands)[0]])
            n = len(left)
        else:
            some = np.flatnonzero(fit >= 1)
            if not some.size:  # nothing fits anywhere: leave it to the evaluator to flag
                some = np.arange(len(fit))
                fit = np.ones(len(fit))
            most = some[fit[some] == fit[some].max()]
            k = int(most[st.balance_key(most)[0]])
            n = int(min(len(left), fit[k]))
        for j in left[:n]:
            wrack[j] = k
        st.put(k, need, n, data)
        left = left[n:]
        first = k if first is None else first
    return first


def _classes(instance: Instance, i: int, offset: int) -> list[tuple[list[int], np.ndarray]]:
    return [([offset + j for j in cls], instance.arrays["wdem"][offset + cls[0]])
            for cls in instance.worker_classes(i)]


def _workers_wcg(instance: Instance, st: _State, rng: np.random.Generator) -> np.ndarray:
    A = instance.arrays
    offs = np.concatenate([[0], np.cumsum(A["size"])])
    wrack = np.zeros(int(offs[-1]), np.int64)
    order = np.argsort(-(A["size"] * A["data"]), kind="stable")          # line 2
    R = instance.n_racks
    for g in range(0, len(order), R):                                      # line 3
        used: set[int] = set()
        for i in order[g:g + R]:                                           # lines 4-5
            for members, need in _classes(instance, int(i), int(offs[i])):
                k = _place_cluster(st, members, need, A["data"][i], wrack, used)
                if k is not None:
                    used.add(k)
    return wrack


def _workers_balanced(instance: Instance, st: _State, rng: np.random.Generator) -> np.ndarray:
    """The load-balancing rule; if it strands a worker, the literal rule from scratch."""
    wrack = None
    if instance.n_racks <= _TARGET_RACKS:
        wrack = workers_target(instance, st, rng)
    if wrack is None:
        st.__init__(instance)
        wrack = workers_balanced(instance, st, rng)
    if wrack is None:
        st.__init__(instance)
        wrack = _workers_wcg(instance, st, rng)
    return wrack


def _workers_swg(instance: Instance, st: _State, rng: np.random.Generator) -> np.ndarray:
    A = instance.arrays
    d = A["data"][A["job_of"]]
    wrack = np.zeros(d.size, np.int64)
    order = np.argsort(-d, kind="stable")
    R = instance.n_racks
    for g in range(0, len(order), R):
        used: set[int] = set()
        for n in order[g:g + R]:
            k = _place_cluster(st, [int(n)], A["wdem"][n], d[n], wrack, used)
            used.add(k)
    return wrack


def _workers_rwp(instance: Instance, st: _State, rng: np.random.Generator,
                 attempts: int = 100) -> np.ndarray:
    """Every worker to a uniformly random rack with room; a draw that strands a worker (no rack
    with room left) is redrawn, up to ``attempts`` times (then the last draw is returned)."""
    A = instance.arrays
    start = (st.free.copy(), st.dload.copy())
    for _ in range(attempts):
        st.free[:], st.dload[:] = start[0], start[1]
        wrack = np.zeros(A["job_of"].size, np.int64)
        stranded = False
        for n in range(wrack.size):
            ok = np.flatnonzero(st.how_many(A["wdem"][n]) >= 1)
            stranded |= not ok.size
            k = int(rng.choice(ok)) if ok.size else int(rng.integers(instance.n_racks))
            wrack[n] = k
            st.put(k, A["wdem"][n], 1, A["data"][A["job_of"][n]])
        if not stranded:
            break
    return wrack


def _place_ps(instance: Instance, st: _State, wrack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1, lines 7-24 (plus the fallback of the module docstring)."""
    A = instance.arrays
    J = len(instance.jobs)
    ps_rack = np.zeros(J, np.int64)
    server = np.zeros(J)
    job_of = A["job_of"]
    for i in np.argsort(-(A["size"] * A["data"]), kind="stable"):           # line 7
        counts = np.bincount(wrack[job_of == i], minlength=instance.n_racks)
        racks = np.flatnonzero(counts)
        racks = racks[np.argsort(-counts[racks], kind="stable")]           # line 9
        t = int(getattr(st, "anchor", np.full(J, -1))[i])
        if t >= 0:  # wcg: the anchor promised by the rack choice comes first
            racks = np.concatenate([[t], racks[racks != t]])
        need = A["psdem"][i]
        sw = [k for k in racks if st.slots[k] > 0]                          # lines 10-15
        if sw:
            ps_rack[i] = sw[0]
            st.slots[sw[0]] -= 1
            continue
        srv = [k for k in racks if st.how_many(need)[k] >= 1]               # lines 16-23
        if not srv:
            anysw = np.flatnonzero(st.slots > 0)
            if anysw.size:
                k = int(anysw[np.argmax(st.slots[anysw])])
                ps_rack[i] = k
                st.slots[k] -= 1
                continue
            ok = np.flatnonzero(st.how_many(need) >= 1)
            srv = [int(ok[st.balance_key(ok)[0]])] if ok.size else [_least_over(st, need)]
        ps_rack[i], server[i] = srv[0], 1.0
        st.put(srv[0], need, 1, 0.0)
    if _overflow(st) > 0:
        _repair(instance, st, wrack, ps_rack, server)
    return ps_rack, server


def _overflow(st: _State) -> float:
    """Sum over racks and resources of the use beyond capacity, as fractions of capacity."""
    over = np.maximum(-st.free - _EPS, 0.0)
    return float((over / np.where(st.cap > 0, st.cap, 1.0)).sum())


def _least_over(st: _State, need: np.ndarray) -> int:
    """The rack where ``need`` overflows least (no rack holds it)."""
    short = np.maximum(need - st.free, 0.0) / np.where(st.cap > 0, st.cap, 1.0)
    return int(np.argmin(short.sum(axis=1)))


def _repair(instance: Instance, st: _State, wrack: np.ndarray, ps_rack: np.ndarray,
            server: np.ndarray, budget: int = 200_000) -> None:
    """Move and swap placed workers and PS servers until no rack is over its capacity.

    Ours (module docstring of :mod:`dmlopt.heuristics.inc_oxc`, PS placement): runs only when
    the placement left a rack over (no rack had room for a PS server, or a worker was
    stranded). A change moves an item (worker or PS server) of an over-full rack to another
    rack or swaps it with an item there; a change is kept when it lowers the total overflow
    (:func:`_overflow`), alone or followed by a second change (an ejection chain of two).
    First improvement, until no rack is over, no change helps or ``budget`` overflow
    evaluations are spent (then the evaluator reports what is left).
    """
    A = instance.arrays
    data = A["data"][A["job_of"]]
    items = [(0, n, A["wdem"][n], data[n]) for n in range(wrack.size)]
    items += [(1, int(i), A["psdem"][i], 0.0) for i in np.flatnonzero(server == 1.0)]
    left = [budget]

    def where(it) -> int:
        return int(wrack[it[1]] if it[0] == 0 else ps_rack[it[1]])

    def move(it, k: int) -> None:
        st.put(where(it), it[2], -1, it[3])
        st.put(k, it[2], 1, it[3])
        (wrack if it[0] == 0 else ps_rack)[it[1]] = k

    def changes():
        hot = set(np.flatnonzero((st.free < -_EPS).any(axis=1)).tolist())
        for it in [it for it in items if where(it) in hot]:
            home = where(it)
            for k in range(instance.n_racks):
                if k != home:
                    yield ((it, k),)
                    yield from (((it, k), (o, home)) for o in items if where(o) == k)

    def improve(best: float, depth: int) -> bool:
        for change in list(changes()):
            if left[0] <= 0:
                return False
            undo = [(it, where(it)) for it, _ in change]
            for it, k in change:
                move(it, k)
            left[0] -= 1
            if _overflow(st) < best - 1e-12 or (depth > 1 and improve(best, depth - 1)):
                return True
            for it, k in reversed(undo):
                move(it, k)
        return False

    while _overflow(st) > 0 and improve(_overflow(st), 2):
        pass
