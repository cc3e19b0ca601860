"""The migration-aware local search of paper 004, section 3 ("Extension to temporal variant").

The search works on a sequence of S (possibly compressed) steps, each a weighted graph, with one
clustering per step, and minimises

    sum_s cut_s(A_s) + alpha * sum_{s<S-1} #{v : A_s[v] != A_{s+1}[v]}
                     + alpha * #{v : before[v] != A_0[v]} + alpha * #{v : A_{S-1}[v] != after[v]}

where ``before``/``after`` are optional fixed clusterings around the sequence (Roll_x fixes the
previous step). One local search step selects a single step s and either moves a single vertex
into a cluster with free capacity or swaps two vertices of different clusters; a change is made
only if it decreases this cost (cut and migration to both neighbouring steps). This is repeated
until no improving move or swap is left in any step.

Delta evaluation. For step s the n x l matrix ``W[v, c]`` (weight of v's edges into cluster c)
is maintained incrementally: moving v from a to c updates the rows of v's neighbours only. The
cost of putting v into c is ``C[v, c] = -W[v, c] - alpha [A_{s-1}[v] = c] - alpha [A_{s+1}[v]
= c]`` up to a constant, so a move costs ``D[v, c] = C[v, c] - C[v, A_s[v]]`` and a swap of v (in
a) and u (in b) costs ``D[v, b] + D[u, a] + 2 w(u, v)``.

Search order (the paper leaves it open; documented choice): per step, rounds of (1) all moves
whose recomputed D is improving, best first, each re-checked against the current state before
it is applied, then (2) swaps: a cluster pair (a, b) is examined only if ``min_{v in a} D[v, b]
+ min_{u in b} D[u, a] < 0`` (a swap's cost is at least that since w >= 0); inside a pair the
candidate pairs whose lower bound is negative get their exact cost (edge weight looked up in the
CSR keys) and are applied best first, re-checked. Rounds repeat until a round changes nothing;
steps are revisited while a neighbouring step changed. Every applied change decreases the cost
by more than a tolerance, so the search terminates, and it stops only at a local optimum: no
improving move or swap is left in any step (tests check this by brute force).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from dmlopt.heuristics.tabgp.graph import Graph

#: a cluster pair's swap candidates are drawn lazily (:meth:`_Sequence._lazy_pair`) when its
#: candidate combinations exceed _LAZY_FACTOR x its candidate vertices + _LAZY_MIN
_LAZY_FACTOR, _LAZY_MIN = 4, 64
#: combinations enumerated at once for the other pairs (memory: a few arrays of this length)
_CHUNK = 2**20
#: work done by every local search of this process so far (:func:`work`)
_WORK = [0.0]
#: what :func:`work` charges, in units of about a microsecond of CPU time: fitted (non-negative
#: least squares on relative error) to 80 searches of the constructions and ILS rounds on
#: drift instances (m = 5n, tau 10, l 16, n = 500-4,000, seeds 0 and 1), where the fit is
#: within 15 % of the CPU time of each run's searches taken together; the costs of the pair
#: path moves (n <= 400 only) are fitted on er instances
W_CALL = 350.0        # one search: its W matrices and sizes
W_PASS = 60.0         # one move-and-swap pass over a step (two delta matrices, pair bounds)
W_ELEMENTS = 10.0     # 1,000 elements of a delta matrix (and the pass's other numpy arrays)
W_MOVE = 25.0         # a move candidate examined (its cost row)
W_LISTED = 0.75       # a swap candidate listed (skipped when an endpoint was used)
W_SWAP = 16.0         # a swap candidate costed exactly
W_POP = 3.5           # a heap pop of the lazy swap enumeration
W_PATH = 540.0        # a vertex whose path is recomputed (a DP over the steps)
W_PATH_ELEMENTS = 7.0  # 1,000 elements of the all-vertex path DP
W_PAIR_ELEMENTS = 100.0  # 1,000 (pair, step) entries of the pair path DP
W_PAIR = 300.0        # a vertex pair whose swap steps are recomputed (a DP over the steps)


def work() -> float:
    """The local search's work counter, in units of about a microsecond of CPU time: each
    search, pass, delta-matrix element, candidate examined and path recomputed is charged its
    fitted cost (``W_*`` above), summed over every search of this process.

    Returns
    -------
    float
        The work so far. Deterministic for the same inputs (a count, not a clock): differences
        between two readings budget a search (:func:`local_search`'s ``stop_at``).

    References
    ----------
    Ours: budgets the iterated local search of ``best`` (:func:`dmlopt.heuristics.tabgp.best_of`).
    """
    return _WORK[0]


class _Sequence:
    """State of one local search: graphs, assignment, W matrices and cluster sizes."""

    def __init__(self, graphs: list[Graph], assign: np.ndarray, l: int, k: int, alpha: float,
                 before: np.ndarray | None, after: np.ndarray | None,
                 clean: np.ndarray | None = None, stop_at: float = math.inf) -> None:
        _WORK[0] += W_CALL
        self.stop_at = stop_at
        self.graphs = graphs
        self.A = assign
        self.l, self.k, self.alpha = l, k, float(alpha)
        self.before, self.after = before, after
        self.W = [g.to_clusters(assign[s], l) for s, g in enumerate(graphs)]
        self.sizes = np.stack([np.bincount(assign[s], minlength=l) for s in range(len(graphs))])
        scale = max([1.0, self.alpha] + [g.max_weight for g in graphs])
        self.eps = 1e-9 * scale
        self.ar = np.arange(assign.shape[1])
        # clean[s]: step s has no improving move or swap (checked, nothing changed since at
        # s - 1, s, s + 1); the search skips such steps, which would change nothing
        self.clean = (np.zeros(len(graphs), dtype=bool) if clean is None
                      else np.array(clean, dtype=bool))

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
        _WORK[0] += W_ELEMENTS * C.size / 1000
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
        self.clean[max(s - 1, 0):s + 2] = False

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
        _WORK[0] += W_MOVE * cand.size
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

    def _swap_candidates(self, s: int, D: np.ndarray) -> list[tuple]:
        """The improving swap candidates of step s by the delta matrix D, per cluster pair.

        A cluster pair a < b is examined only if its lower bound ``min_{v in a} D[v, b] +
        min_{u in b} D[u, a]`` is improving; the pairs come in the order of that bound (ties to
        the smaller pair). Inside a pair, the candidates are the (v in a, u in b) whose exact
        cost ``D[v, b] + D[u, a] + 2 w(u, v)`` is improving, to be tried best first (ties by v,
        then u). A vertex v of cluster a enters pair (a, c) only if ``D[v, c] + min_{u in c}
        D[u, a]`` is improving (a prune that loses no candidate).

        Returns ``(a, b, "list", vs, us)`` with the candidates in that order, or, for a pair
        with many more candidate combinations than vertices, ``(a, b, "lazy", left, x, right,
        y, adjacent)``: the vertices of each side with their D, and the candidates that are
        edges (their exact cost, v, u); :meth:`_lazy_pair` then enumerates the non-edge
        candidates in order from the sorted sides without listing all combinations.
        """
        l, eps = self.l, self.eps
        a_s = self.A[s]
        order = np.argsort(a_s, kind="stable")
        bounds = np.searchsorted(a_s[order], np.arange(l + 1))
        nonempty = np.flatnonzero(bounds[1:] > bounds[:-1])
        if nonempty.size < 2:
            return []
        M = np.full((l, l), np.inf)  # M[a, b] = min over v in a of D[v, b]
        M[nonempty] = np.minimum.reduceat(D[order], bounds[nonempty], axis=0)
        lower = M + M.T
        pa, pb = np.nonzero(np.triu(lower < -eps, 1))
        if not pa.size:
            return []
        rank = np.empty(pa.size, dtype=np.int64)
        rank[np.argsort(lower[pa, pb], kind="stable")] = np.arange(pa.size)
        pid = np.full((l, l), -1, dtype=np.int64)
        pid[pa, pb] = np.arange(pa.size)
        pid[pb, pa] = np.arange(pa.size)
        # (v, c): v may be the endpoint in its cluster A[v] of a swap with cluster c
        rows_p = pid[a_s]  # (n, l): the pair id of (A[v], c)
        ok = (rows_p >= 0) & (D + M.T[a_s] < -eps)
        v_e, c_e = np.nonzero(ok)
        if not v_e.size:
            return []
        p_e = rows_p[v_e, c_e]
        side = (a_s[v_e] > c_e).astype(np.int64)  # 0: v in the pair's smaller cluster
        srt = np.argsort(2 * p_e + side, kind="stable")  # v ascending inside each group
        v_e, c_e, p_e = v_e[srt], c_e[srt], p_e[srt]
        x_e = D[v_e, c_e]
        counts = np.bincount(2 * p_e + side[srt], minlength=2 * pa.size).reshape(-1, 2)
        starts = np.concatenate(([0], np.cumsum(counts.ravel())[:-1])).reshape(-1, 2)
        n_l, n_r = counts[:, 0], counts[:, 1]
        per = n_l * n_r
        lazy = per > _LAZY_FACTOR * (n_l + n_r) + _LAZY_MIN
        g = self.graphs[s]
        plans: dict[int, tuple] = {}
        # small pairs: all combinations at once, in chunks of about 2**20 (memory)
        live = np.flatnonzero((per > 0) & ~lazy)
        found: list[tuple[np.ndarray, ...]] = []
        chunk_end = np.cumsum(per[live])
        lo = 0
        while lo < live.size:
            hi = int(np.searchsorted(chunk_end, chunk_end[lo] - per[live[lo]] + _CHUNK,
                                     side="right"))
            ps = live[lo:max(hi, lo + 1)]
            lo = max(hi, lo + 1)
            p_c = np.repeat(ps, per[ps])
            off = np.arange(p_c.size) - np.repeat(np.cumsum(per[ps]) - per[ps], per[ps])
            li = off // n_r[p_c]
            iv = starts[p_c, 0] + li
            iu = starts[p_c, 1] + off - li * n_r[p_c]
            S = x_e[iv] + x_e[iu]
            hit = np.flatnonzero(S + eps < 0)
            if not hit.size:
                continue
            vs, us = v_e[iv[hit]], v_e[iu[hit]]
            exact = S[hit] + 2 * g.weight_between(vs, us)
            keep = np.flatnonzero(exact < -eps)
            if keep.size:
                found.append((p_c[hit[keep]], vs[keep], us[keep], exact[keep],
                              iv[hit[keep]] * v_e.size + iu[hit[keep]]))
        if found:
            p_k, vs, us, exact, tie = (np.concatenate(x) for x in zip(*found, strict=True))
            srt = np.lexsort((tie, exact, p_k))
            p_k, vs, us = p_k[srt], vs[srt], us[srt]
            cut = np.flatnonzero(np.diff(p_k)) + 1
            for i, j in zip(np.concatenate(([0], cut)).tolist(),
                            np.concatenate((cut, [p_k.size])).tolist(), strict=True):
                plans[int(p_k[i])] = ("list", vs[i:j], us[i:j])
        # large pairs: the sides sorted, and the edges between them
        big = np.flatnonzero(lazy & (per > 0))
        if big.size:
            src, dst = g.rows, g.indices
            la, lb = a_s[src], a_s[dst]
            e_p = pid[la, lb]
            sel = np.flatnonzero((la < lb) & (e_p >= 0))
            sel = sel[lazy[e_p[sel]] & ok[src[sel], lb[sel]] & ok[dst[sel], la[sel]]]
            ev, eu, ep = src[sel], dst[sel], e_p[sel]
            eS = D[ev, lb[sel]] + D[eu, la[sel]]
            eX = eS + 2 * g.data[sel]
            good = (eS + eps < 0) & (eX < -eps)
            for p in big.tolist():
                i0, i1 = int(starts[p, 0]), int(starts[p, 1])
                mine = ep == p
                plans[p] = ("lazy", v_e[i0:i0 + n_l[p]], x_e[i0:i0 + n_l[p]],
                            v_e[i1:i1 + n_r[p]], x_e[i1:i1 + n_r[p]],
                            (ev[mine], eu[mine], eX[mine], good[mine]))
        return [(int(pa[p]), int(pb[p]), *plans[p])
                for p in sorted(plans, key=lambda q: rank[q])]

    def _lazy_pair(self, s: int, a: int, b: int, left: np.ndarray, x: np.ndarray,
                   right: np.ndarray, y: np.ndarray, edges: tuple) -> int:
        """The swaps of one cluster pair in the order of :meth:`_swap_candidates`, candidates
        drawn lazily: ``right`` sorted by (D, index), and per v of ``left`` a cursor into it (a
        non-edge pair costs x[v] + y[u], nondecreasing along the order), merged in a heap with
        the edge candidates; used vertices are skipped by a union-find of "next unused"
        positions. A run of equal sums over several D values (rounding) is listed and sorted by
        index, so ties go to the smaller u as in the full enumeration."""
        eps, g = self.eps, self.graphs[s]
        o = np.lexsort((right, y))
        rs, ys = right[o].tolist(), y[o].tolist()
        n_r = len(rs)
        pos = {u: p for p, u in enumerate(rs)}
        yo = y[o]
        blk = np.searchsorted(yo, yo, side="right").tolist()  # end of each D value's block
        nxt = list(range(n_r + 1))

        def find(p: int) -> int:  # first unused position >= p
            root = p
            while nxt[root] != root:
                root = nxt[root]
            while nxt[p] != root:
                nxt[p], p = root, nxt[p]
            return root

        ev, eu, ex, good = edges
        adj = set(zip(ev.tolist(), eu.tolist(), strict=True))
        heap = [(e, v, u, -1) for e, v, u, ok in zip(ex.tolist(), ev.tolist(), eu.tolist(),
                                                      good.tolist(), strict=True) if ok]
        xs = dict(zip(left.tolist(), x.tolist(), strict=True))
        cur = dict.fromkeys(xs, 0)  # next stream position to consider
        run: dict[int, list[int]] = {}  # a sorted run of equal sums (rounding), when listed
        used: set[int] = set()

        def advance(v: int) -> None:  # push v's next candidate, if any
            lst = run.get(v)
            if lst is not None:
                while lst and (lst[-1] in used):
                    lst.pop()
                if lst:
                    u = lst.pop()
                    heapq.heappush(heap, (xs[v] + ys[pos[u]], v, u, 0))
                    return
                del run[v]
            p, xv = find(cur[v]), xs[v]
            while p < n_r and (v, rs[p]) in adj:
                p = find(p + 1)
            if p == n_r:
                return
            s0 = xv + ys[p]
            if not (s0 + eps < 0 and s0 < -eps):
                return
            q = blk[p]
            if q < n_r and xv + ys[q] == s0:  # equal sums across D values: list the run
                while q < n_r and xv + ys[q] == s0:
                    q += 1
                lst = sorted((rs[t] for t in range(p, q)
                              if rs[t] not in used and (v, rs[t]) not in adj), reverse=True)
                cur[v] = q
                run[v] = lst
                advance(v)
                return
            cur[v] = p + 1
            heapq.heappush(heap, (s0, v, rs[p], 0))

        heapq.heapify(heap)
        for v in xs:
            advance(v)
        done = pops = 0
        while heap:
            pops += 1
            _, v, u, tag = heapq.heappop(heap)
            if self.A[s, v] != a:
                used.add(v)
            if self.A[s, u] != b and u not in used:
                used.add(u)
                nxt[pos[u]] = pos[u] + 1
            if v in used:
                continue
            if u not in used:
                _WORK[0] += W_SWAP
                delta = (self.cost_at(s, v, b) - self.cost_at(s, v, a)
                         + self.cost_at(s, u, a) - self.cost_at(s, u, b)
                         + 2 * float(g.weight_between(np.array([v]), np.array([u]))[0]))
                if delta < -eps:
                    self.move(s, v, b)
                    self.move(s, u, a)
                    used.update((v, u))
                    nxt[pos[u]] = pos[u] + 1
                    done += 1
                    continue
            if tag == 0:
                advance(v)
        _WORK[0] += W_POP * pops
        return done

    def _swaps(self, s: int, D: np.ndarray) -> int:
        if self.l < 2:
            return 0
        done = 0
        g = self.graphs[s]
        for a, b, kind, *rest in self._swap_candidates(s, D):
            if kind == "lazy":
                done += self._lazy_pair(s, a, b, *rest)
                continue
            vs, us = rest
            _WORK[0] += W_LISTED * vs.size
            used: set[int] = set()
            for v, u in zip(vs.tolist(), us.tolist(), strict=True):
                if v in used or u in used or self.A[s, v] != a or self.A[s, u] != b:
                    continue
                _WORK[0] += W_SWAP
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
            _WORK[0] += W_PASS
            changed = self._moves(s, self.delta_matrix(s))
            changed += self._swaps(s, self.delta_matrix(s))
            if not changed:
                self.clean[s] = True
                return total
            total += changed

    def stopped(self) -> bool:
        """Whether the work counter has reached ``stop_at`` (the search then returns)."""
        return _WORK[0] >= self.stop_at

    def run(self, temporal: bool = False) -> int:
        """The paper's search to a local optimum; with ``temporal`` then the path moves (ours),
        alternating until neither finds an improvement (or until :meth:`stopped`)."""
        total = 0
        while True:
            total += self._paper()
            if not temporal or self.stopped():
                return total
            changed = self._vertex_paths() + self._pair_paths()
            if not changed:
                return total
            total += changed

    def _paper(self) -> int:
        S = len(self.graphs)
        dirty = (~self.clean).tolist()
        total = 0
        while any(dirty):
            for s in range(S):
                if not dirty[s]:
                    continue
                if self.stopped():
                    return total
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
        _WORK[0] += (W_PATH_ELEMENTS * n * len(self.graphs) * self.l / 1000
                     + W_PATH * cand.size)
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
        _WORK[0] += W_PAIR_ELEMENTS * vs.size * len(self.graphs) / 1000
        gain, _ = self._pair_gain(vs, us)
        cand = np.flatnonzero(gain > self.eps)
        done = 0
        touched: set[int] = set()
        for j in cand[np.argsort(-gain[cand], kind="stable")].tolist():
            v, u = int(vs[j]), int(us[j])
            if v in touched or u in touched:
                continue
            _WORK[0] += W_PAIR
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


def local_search(graphs: list[Graph], assign: np.ndarray, l: int, k: int, alpha: float,
                 before: np.ndarray | None = None, after: np.ndarray | None = None,
                 temporal: bool = False, clean: np.ndarray | None = None,
                 stop_at: float = math.inf) -> np.ndarray:
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
    clean : optional bool per step: True where the step is known to have no improving move
        or swap (e.g. a local optimum changed at other steps only); such steps are searched
        only once a neighbouring step changes. The result is the same as without it.
    stop_at : the search returns once :func:`work` reaches this reading (checked before each
        step is searched and before the path moves), with an improved but possibly not locally
        optimal assignment (default: no limit).

    Returns
    -------
    The improved S x n assignment.
    """
    A = np.array(assign, dtype=np.int64, copy=True).reshape(len(graphs), -1)
    _Sequence(graphs, A, l, k, alpha, before, after, clean, stop_at).run(temporal)
    return A


def sequence_cost(graphs: list[Graph], assign: np.ndarray, alpha: float,
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
