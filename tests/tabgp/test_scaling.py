"""The TABGP local search and ILS give the same results as before their speed-ups.

The reference below is the local search (heuristics/tabgp/ls.py) and ``ils`` as they were
before candidates were drawn lazily and clean steps skipped, kept verbatim (renamed only): a
slow reference. Both must produce identical assignments for the same start and seed.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics.tabgp import _graphs, _random_labels, _replicate, _start, _total, ils
from dmlopt.heuristics.tabgp import ls as new_ls
from dmlopt.heuristics.tabgp.graph import Graph

# ---------------------------------------------------------------------------------------------
# the reference, verbatim

class _OldSequence:
    """State of one local search: graphs, assignment, W matrices and cluster sizes."""

    def __init__(self, graphs: list[Graph], assign: np.ndarray, l: int, k: int, alpha: float,
                 before: np.ndarray | None, after: np.ndarray | None) -> None:
        self.graphs = graphs
        self.A = assign
        self.l, self.k, self.alpha = l, k, float(alpha)
        self.before, self.after = before, after
        self.W = [g.to_clusters(assign[s], l) for s, g in enumerate(graphs)]
        self.sizes = np.stack([np.bincount(assign[s], minlength=l) for s in range(len(graphs))])
        scale = max([1.0, self.alpha] + [g.max_weight for g in graphs])
        self.eps = 1e-9 * scale
        self.ar = np.arange(assign.shape[1])

    def neighbours_of(self, s: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        prev = self.A[s - 1] if s > 0 else self.before
        nxt = self.A[s + 1] if s + 1 < len(self.graphs) else self.after
        return prev, nxt

    # cost of each vertex in each cluster, up to a per-vertex constant
    def cost_matrix(self, s: int) -> np.ndarray:
        C = -self.W[s]
        prev, nxt = self.neighbours_of(s)
        if self.alpha:
            if prev is not None:
                C[self.ar, prev] -= self.alpha
            if nxt is not None:
                C[self.ar, nxt] -= self.alpha
        return C

    def cost_row(self, s: int, v: int) -> np.ndarray:
        row = -self.W[s][v]
        prev, nxt = self.neighbours_of(s)
        if self.alpha:
            if prev is not None:
                row[prev[v]] -= self.alpha
            if nxt is not None:
                row[nxt[v]] -= self.alpha
        return row

    def cost_at(self, s: int, v: int, c: int) -> float:
        val = -self.W[s][v, c]
        prev, nxt = self.neighbours_of(s)
        if prev is not None and prev[v] == c:
            val -= self.alpha
        if nxt is not None and nxt[v] == c:
            val -= self.alpha
        return float(val)

    def delta_matrix(self, s: int) -> np.ndarray:
        """D[v, c]: cost change of moving v to c at step s (+inf for its own cluster)."""
        C = self.cost_matrix(s)
        a = self.A[s]
        D = C - C[self.ar, a][:, None]
        D[self.ar, a] = np.inf
        return D

    def move(self, s: int, v: int, c: int) -> None:
        a = int(self.A[s, v])
        nb, w = self.graphs[s].neighbours(v)
        W = self.W[s]
        W[nb, a] -= w
        W[nb, c] += w
        self.sizes[s, a] -= 1
        self.sizes[s, c] += 1
        self.A[s, v] = c

    # ----------------------------------------------------------------------------------------

    def _moves(self, s: int, D: np.ndarray) -> int:
        sizes = self.sizes[s]
        free = sizes < self.k
        if not free.any():
            return 0
        Df = np.where(free[None, :], D, np.inf)
        best = Df.min(axis=1)
        cand = np.flatnonzero(best < -self.eps)
        done = 0
        for v in cand[np.argsort(best[cand], kind="stable")].tolist():
            row = self.cost_row(s, v)
            a = int(self.A[s, v])
            d = row - row[a]
            d[a] = np.inf
            d[sizes >= self.k] = np.inf
            c = int(np.argmin(d))
            if d[c] < -self.eps:
                self.move(s, v, c)
                done += 1
        return done

    def _swaps(self, s: int, D: np.ndarray) -> int:
        l = self.l
        if l < 2:
            return 0
        a_s = self.A[s]
        order = np.argsort(a_s, kind="stable")
        bounds = np.searchsorted(a_s[order], np.arange(l + 1))
        nonempty = np.flatnonzero(bounds[1:] > bounds[:-1])
        if nonempty.size < 2:
            return 0
        M = np.full((l, l), np.inf)  # M[a, b] = min over v in a of D[v, b]
        M[nonempty] = np.minimum.reduceat(D[order], bounds[nonempty], axis=0)
        lower = M + M.T
        pa, pb = np.nonzero(np.triu(lower < -self.eps, 1))
        done = 0
        g = self.graphs[s]
        for i in np.argsort(lower[pa, pb], kind="stable").tolist():
            a, b = int(pa[i]), int(pb[i])
            mem_a = order[bounds[a]:bounds[a + 1]]
            mem_b = order[bounds[b]:bounds[b + 1]]
            X = D[mem_a, b]
            Y = D[mem_b, a]
            xi = np.flatnonzero(X + Y.min() < -self.eps)
            yi = np.flatnonzero(Y + X.min() < -self.eps)
            S = X[xi][:, None] + Y[yi][None, :]
            ii, jj = np.nonzero(S + self.eps < 0)
            if not ii.size:
                continue
            vs, us = mem_a[xi[ii]], mem_b[yi[jj]]
            exact = S[ii, jj] + 2 * g.weight_between(vs, us)
            keep = np.flatnonzero(exact < -self.eps)
            used: set[int] = set()
            for j in keep[np.argsort(exact[keep], kind="stable")].tolist():
                v, u = int(vs[j]), int(us[j])
                if v in used or u in used or self.A[s, v] != a or self.A[s, u] != b:
                    continue
                delta = (self.cost_at(s, v, b) - self.cost_at(s, v, a)
                         + self.cost_at(s, u, a) - self.cost_at(s, u, b)
                         + 2 * float(g.weight_between(np.array([v]), np.array([u]))[0]))
                if delta < -self.eps:
                    self.move(s, v, b)
                    self.move(s, u, a)
                    used.update((v, u))
                    done += 1
        return done

    def improve_step(self, s: int) -> int:
        """Local search on step s until no improving move or swap is left there."""
        total = 0
        while True:
            changed = self._moves(s, self.delta_matrix(s))
            changed += self._swaps(s, self.delta_matrix(s))
            if not changed:
                return total
            total += changed

    def run(self, temporal: bool = False) -> int:
        """The paper's search to a local optimum; with ``temporal`` then the path moves (ours),
        alternating until neither finds an improvement."""
        total = 0
        while True:
            total += self._paper()
            if not temporal:
                return total
            changed = self._vertex_paths() + self._pair_paths()
            if not changed:
                return total
            total += changed

    def _paper(self) -> int:
        S = len(self.graphs)
        dirty = [True] * S
        total = 0
        while any(dirty):
            for s in range(S):
                if not dirty[s]:
                    continue
                dirty[s] = False
                changed = self.improve_step(s)
                total += changed
                if changed:
                    if s > 0:
                        dirty[s - 1] = True
                    if s + 1 < S:
                        dirty[s + 1] = True
        return total

    # ----------------------------------------------------------------------------------------
    # temporal neighbourhoods (ours, not in the paper)

    def _path_costs(self, verts: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Viterbi over the steps for the label path of each vertex in ``verts``, the others
        fixed: step cost -W_s[v, c] (cut), alpha per label change (and against before/after);
        labels allowed: the current one and clusters with free capacity. Returns the optimal
        path cost per vertex and the argmin tables for backtracking."""
        S, l, alpha = len(self.graphs), self.l, self.alpha
        F = None
        back: list[np.ndarray] = []
        rows = np.arange(verts.size)
        for s in range(S):
            cost = -self.W[s][verts]
            blocked = np.broadcast_to(self.sizes[s] >= self.k, cost.shape).copy()
            blocked[rows, self.A[s, verts]] = False
            cost[blocked] = np.inf
            if F is None:
                F = cost.copy()
                if self.before is not None:
                    F += alpha
                    F[rows, self.before[verts]] -= alpha
            else:
                arg = F.argmin(axis=1)
                jump = F[rows, arg][:, None] + alpha
                stay_or_jump = np.minimum(F, jump)
                back.append(np.where(F - jump <= 0, np.arange(l)[None, :], arg[:, None]))
                F = cost + stay_or_jump
        if self.after is not None:
            F = F + alpha
            F[rows, self.after[verts]] -= alpha
        return F, back

    def _current_path_cost(self, verts: np.ndarray) -> np.ndarray:
        S, alpha = len(self.graphs), self.alpha
        lab = self.A[:, verts]
        cost = -sum(self.W[s][verts, lab[s]] for s in range(S))
        cost = cost + alpha * (lab[1:] != lab[:-1]).sum(axis=0)
        if self.before is not None:
            cost = cost + alpha * (self.before[verts] != lab[0])
        if self.after is not None:
            cost = cost + alpha * (lab[-1] != self.after[verts])
        return cost

    def _vertex_paths(self) -> int:
        """Re-route single vertices through all steps at once (exact DP per vertex)."""
        n = self.A.shape[1]
        verts = np.arange(n)
        F, _ = self._path_costs(verts)
        gain = self._current_path_cost(verts) - F.min(axis=1)
        cand = np.flatnonzero(gain > self.eps)
        done = 0
        for v in cand[np.argsort(-gain[cand], kind="stable")].tolist():
            one = np.array([v])
            F, back = self._path_costs(one)
            if self._current_path_cost(one)[0] - F.min() <= self.eps:
                continue
            c = int(F[0].argmin())
            path = [c]
            for arg in reversed(back):
                c = int(arg[0, c])
                path.append(c)
            for s, c in enumerate(reversed(path)):
                if self.A[s, v] != c:
                    self.move(s, v, c)
            done += 1
        return done

    def _pair_gain(self, vs: np.ndarray, us: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best subset of steps at which to swap v and u (a DP over swap / no swap per step):
        returns the cost decrease and the 0/1 choice per step (S x pairs)."""
        S, alpha = len(self.graphs), self.alpha
        a = self.A[:, vs]
        b = self.A[:, us]
        dcut = np.empty(a.shape)
        for s in range(S):
            W, g = self.W[s], self.graphs[s]
            dcut[s] = (W[vs, a[s]] - W[vs, b[s]] + W[us, b[s]] - W[us, a[s]]
                       + 2 * g.weight_between(vs, us))
        dcut[a == b] = 0.0
        lab_v = np.stack([a, b])  # lab_v[x, s]: label of v at s in state x (u gets the other)
        lab_u = np.stack([b, a])

        def mig(x: int, s: int, y: int) -> np.ndarray:  # migrations of v and u from s to s+1
            return alpha * ((lab_v[x, s] != lab_v[y, s + 1]).astype(float)
                            + (lab_u[x, s] != lab_u[y, s + 1]))

        def end(x: int, s: int, other: np.ndarray | None) -> np.ndarray:
            if other is None:
                return np.zeros(vs.size)
            return alpha * ((lab_v[x, s] != other[vs]).astype(float) + (lab_u[x, s] != other[us]))

        F = [end(0, 0, self.before), end(1, 0, self.before) + dcut[0]]
        base = F[0].copy()
        choice = []
        for s in range(S - 1):
            base = base + mig(0, s, 0)
            new, arg = [], []
            for y in (0, 1):
                from0 = F[0] + mig(0, s, y)
                from1 = F[1] + mig(1, s, y)
                arg.append(from1 < from0)
                new.append(np.minimum(from0, from1) + (dcut[s + 1] if y else 0.0))
            choice.append(arg)
            F = new
        F = [F[0] + end(0, S - 1, self.after), F[1] + end(1, S - 1, self.after)]
        base = base + end(0, S - 1, self.after)
        x = (F[1] < F[0]).astype(int)
        best = np.where(x == 1, F[1], F[0])
        states = np.empty((S, vs.size), dtype=int)
        states[S - 1] = x
        for s in range(S - 2, -1, -1):
            x = np.where(x == 1, choice[s][1], choice[s][0]).astype(int)
            states[s] = x
        return base - best, states

    def _pair_paths(self, max_n: int = 400) -> int:
        """Swap two vertices at any subset of steps at once (all pairs; instances up to
        ``max_n`` vertices, the pair count being quadratic)."""
        n = self.A.shape[1]
        if n > max_n or self.l < 2 or n < 2:
            return 0
        vs, us = np.triu_indices(n, 1)
        gain, _ = self._pair_gain(vs, us)
        cand = np.flatnonzero(gain > self.eps)
        done = 0
        touched: set[int] = set()
        for j in cand[np.argsort(-gain[cand], kind="stable")].tolist():
            v, u = int(vs[j]), int(us[j])
            if v in touched or u in touched:
                continue
            g, states = self._pair_gain(np.array([v]), np.array([u]))
            if g[0] <= self.eps:
                continue
            for s in np.flatnonzero(states[:, 0]).tolist():
                a, b = int(self.A[s, v]), int(self.A[s, u])
                if a != b:
                    self.move(s, v, b)
                    self.move(s, u, a)
            touched.update((v, u))
            done += 1
        return done


def old_local_search(graphs: list[Graph], assign: np.ndarray, l: int, k: int, alpha: float,
                 before: np.ndarray | None = None, after: np.ndarray | None = None,
                 temporal: bool = False) -> np.ndarray:
    """Improve ``assign`` (S x n, every cluster at most k) to a local optimum; returns a copy.

    Parameters
    ----------
    graphs : one :class:`Graph` per (possibly compressed) step.
    assign : S x n cluster labels, feasible (sizes at most k).
    l, k, alpha : clusters, capacity, migration cost.
    before, after : fixed clusterings before the first / after the last step (their migration
        cost counts), or None.
    temporal : also use the path neighbourhoods (ours): a vertex re-routed through all steps at
        once (exact DP) and two vertices swapped at any subset of steps (exact DP per pair).
    """
    A = np.array(assign, dtype=np.int64, copy=True).reshape(len(graphs), -1)
    _OldSequence(graphs, A, l, k, alpha, before, after).run(temporal)
    return A


def _old_sequence_cost(graphs: list[Graph], assign: np.ndarray, alpha: float,
                  before: np.ndarray | None = None, after: np.ndarray | None = None) -> float:
    """The cost the local search minimises (cut of every step plus alpha per migration)."""
    A = np.asarray(assign)
    cost = sum(g.cut(A[s]) for s, g in enumerate(graphs))
    mig = int((A[1:] != A[:-1]).sum())
    if before is not None:
        mig += int((before != A[0]).sum())
    if after is not None:
        mig += int((A[-1] != after).sum())
    return cost + alpha * mig


def old_ils(instance, *, seed=0, start="dense-refine", iterations=100, strength=0.25):
    rng = np.random.default_rng(seed)
    graphs = _graphs(instance)[1]
    l, k, alpha, n, tau = instance.l, instance.k, instance.alpha, instance.n, instance.tau
    best = old_local_search(graphs, _start(instance, start, seed), l, k, alpha, temporal=True)
    best_cost = _total(instance, best)
    cur, cur_cost = best, best_cost
    size = max(2, int(round(strength * n)))
    for _ in range(iterations):
        trial = cur.copy()
        verts = rng.choice(n, size=min(size, n), replace=False)
        perm = rng.permutation(verts)
        if tau > 1 and rng.random() < 0.5:
            trial[:, verts] = cur[:, perm]  # a block of vertices changes places in every step
        else:
            t = int(rng.integers(tau))
            trial[t, verts] = cur[t, perm]
        trial = old_local_search(graphs, trial, l, k, alpha, temporal=True)
        cost = _total(instance, trial)
        if cost <= cur_cost + 1e-9:
            cur, cur_cost = trial, cost
            if cost < best_cost - 1e-9:
                best, best_cost = trial, cost
    return best


# ---------------------------------------------------------------------------------------------

# (n, m, tau, l, weighted, alpha): small clusters (the full enumeration) and large ones (the
# lazy candidates of a cluster pair), unit and integer weights, with and without migration cost
CASES = [(60, 200, 3, 4, False, 3.0), (200, 1000, 4, 4, True, 3.0), (300, 1500, 3, 8, False, 1.0),
         (400, 2000, 2, 2, True, 0.0)]


def _drift(n, m, tau, l, weighted, alpha, seed=1):
    return dmlopt.generate("tabgp", {"generator": "drift", "n": n, "m": m, "tau": tau, "l": l,
                                     "weighted": weighted, "alpha": alpha}, seed=seed)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("temporal", [False, True])
def test_local_search_same_as_reference(case, temporal):
    inst = _drift(*case)
    graphs = _graphs(inst)[1]
    for seed in range(2):
        start = _replicate(inst, _random_labels(inst, seed))
        want = old_local_search(graphs, start, inst.l, inst.k, inst.alpha, temporal=temporal)
        got = new_ls.local_search(graphs, start, inst.l, inst.k, inst.alpha, temporal=temporal)
        assert np.array_equal(got, want)


def test_lazy_pairs_are_exercised(monkeypatch):
    calls = []
    orig = new_ls._Sequence._lazy_pair
    monkeypatch.setattr(new_ls._Sequence, "_lazy_pair",
                        lambda self, *a: calls.append(1) or orig(self, *a))
    inst = _drift(*CASES[1])
    graphs = _graphs(inst)[1]
    new_ls.local_search(graphs, _replicate(inst, _random_labels(inst, 0)), inst.l, inst.k,
                        inst.alpha)
    assert calls


@pytest.mark.parametrize("case", CASES[:3])
def test_ils_same_as_reference(case):
    inst = _drift(*case)
    for seed in (0, 3):
        got = np.asarray(ils(inst, seed=seed, start="dense", iterations=6).assignment)
        assert np.array_equal(got, old_ils(inst, seed=seed, start="dense", iterations=6))


def test_clean_steps_change_nothing():
    """A local optimum changed at step 0 only: steps 2 and 3 marked clean, same result."""
    inst = _drift(*CASES[1])
    graphs = _graphs(inst)[1]
    opt = new_ls.local_search(graphs, _replicate(inst, _random_labels(inst, 0)), inst.l,
                              inst.k, inst.alpha)
    trial = opt.copy()
    trial[0] = np.roll(trial[0], 7)
    want = old_local_search(graphs, trial, inst.l, inst.k, inst.alpha)
    got = new_ls.local_search(graphs, trial, inst.l, inst.k, inst.alpha,
                              clean=np.array([False, False, True, True]))
    assert np.array_equal(got, want)
