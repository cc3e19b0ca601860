"""TABGP heuristics (paper 004, section 3): feasibility, Algorithm 3.1 by hand, the local search
(monotone, local optimum by brute force, delta evaluation = evaluator), determinism, and no
heuristic below the exact optimum computed by enumeration on tiny instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.heuristics import tabgp as H
from dmlopt.heuristics.tabgp.graph import compress, dense, metis, repair, step_matrices
from dmlopt.heuristics.tabgp.ls import _Sequence, local_search, sequence_cost
from dmlopt.models.tabgp import Instance, Solution, cost_parts, evaluate

FAST = {"ils": {"iterations": 5}, "best": {"iterations": 5},
        "memetic": {"population": 2, "generations": 3, "rounds": 3}}


def run(inst: Instance, name: str, seed: int = 0, **options) -> Solution:
    return H.HEURISTICS[name].function(inst, seed=seed, **{**FAST.get(name, {}), **options})


def total(inst: Instance, assign) -> float:
    cut, mig = cost_parts(inst, np.asarray(assign, dtype=np.int64))
    return cut + inst.alpha * mig


@st.composite
def instances(draw, max_n: int = 9, max_tau: int = 3, max_l: int = 4) -> Instance:
    n = draw(st.integers(1, max_n))
    l = draw(st.integers(1, max_l))
    k = draw(st.integers(-(-n // l), n))  # k*l >= n, k*l == n possible
    tau = draw(st.integers(1, max_tau))
    pairs = list(itertools.combinations(range(n), 2))
    weighted = draw(st.booleans())
    edges, weights = [], []
    for _ in range(tau):
        keep = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
        es = [pq for pq, b in zip(pairs, keep, strict=True) if b]
        edges.append(es)
        weights.append([draw(st.sampled_from([0.5, 1.0, 2.0, 7.0])) for _ in es])
    alpha = draw(st.sampled_from([0.0, 1.0, 3.0]))
    return Instance(n=n, edges=edges, weights=weights if weighted else None, l=l, k=k,
                    alpha=alpha)


def er(n=12, p=0.5, tau=3, l=4, seed=0) -> Instance:
    return dmlopt.generate("tabgp", {"generator": "er", "n": n, "p": p, "tau": tau, "l": l},
                           seed=seed)


# ---------------------------------------------------------------------------------------------
# feasibility, edge cases, determinism


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances())
def test_every_heuristic_is_feasible(inst):
    for name in H.HEURISTICS:
        ev = evaluate(inst, run(inst, name))
        assert ev.feasible, (name, ev.violations)


EDGE_CASES = {
    "tau=1": Instance(n=5, edges=[[(0, 1), (1, 2), (3, 4)]], l=2, k=3, alpha=3),
    "no edges": Instance(n=6, edges=[[], [], []], l=3, k=2, alpha=3),
    "l=1": Instance(n=4, edges=[[(0, 1)], [(2, 3)]], l=1, k=4, alpha=1),
    "k*l == n": Instance(n=6, edges=[[(0, 1), (2, 3), (4, 5), (0, 5)], [(1, 2), (3, 4)]], l=3,
                         k=2, alpha=2),
    "weighted": Instance(n=6, edges=[[(0, 1), (1, 2), (3, 4)], [(0, 3), (4, 5)]],
                         weights=[[5.5, 0.25, 2.0], [1.0, 9.0]], l=2, k=3, alpha=0.5),
    "n=1": Instance(n=1, edges=[[], []], l=2, k=1, alpha=3),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_edge_cases_feasible_through_the_api(case):
    inst = EDGE_CASES[case]
    for name in H.HEURISTICS:
        res = dmlopt.heuristic(inst, name, seed=3, **FAST.get(name, {}))
        assert res.status == "feasible" and res.feasible, (name, res.message)


def test_no_edges_costs_nothing():
    inst = EDGE_CASES["no edges"]
    for name in H.HEURISTICS:
        if name != "dense-online":
            assert evaluate(inst, run(inst, name)).objective == 0, name


@pytest.mark.parametrize("name", list(H.HEURISTICS))
def test_deterministic_for_a_seed(name):
    inst = er(n=10, p=0.4, tau=3, seed=5)
    assert run(inst, name, seed=2) == run(inst, name, seed=2)


def test_seed_changes_random_start():
    inst = er(n=12, p=0.3, tau=1)
    assert run(inst, "random", seed=0) != run(inst, "random", seed=1)


# ---------------------------------------------------------------------------------------------
# Algorithm 3.1 by hand


def test_dense_by_hand_unweighted():
    # path 0-1-2-3-4-5 plus chord 1-4; degrees 1,3,2,2,3,1; l=2, k=3.
    # Round 1: X={}: all scores (0,-deg): 0 (deg 1, smaller index than 5). Then 1 (the only
    # neighbour of X, score (1,-3)). Then N(1) n unused = {2 (1,-2), 4 (1,-3)}: 2. X={0,1,2}.
    # Round 2 takes the rest {3,4,5}.
    inst = Instance(n=6, edges=[[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (1, 4)]], l=2, k=3,
                    alpha=3)
    assert run(inst, "dense").assignment == [[0, 0, 0, 1, 1, 1]]


def test_dense_by_hand_weighted_and_partial_last_cluster():
    # weights: 01:1, 12:5, 23:1, 34:2, 04:1 -> weighted degrees 2, 6, 6, 3, 3; l=3, k=2.
    # Round 1: smallest wdeg is 0; then N(0) = {1 (1,-6), 4 (1,-3)} -> 4. X = {0, 4}.
    # Round 2: unused {1, 2, 3}, scores (0,-6), (0,-6), (0,-3) -> 3; then 2 (w 1) beats 1 (w 0).
    # Round 3: {1}. Dense does not keep the heavy edge 1-2 together: a faithful greedy.
    inst = Instance(n=5, edges=[[(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]],
                    weights=[[1, 5, 1, 2, 1]], l=3, k=2, alpha=3)
    assert run(inst, "dense").assignment == [[0, 2, 1, 1, 0]]


def test_dense_compresses_the_steps():
    # edge 0-1 in both steps (weight 2 compressed), 2-3 once: Dense sees weighted degrees
    # 2, 2, 1, 1 and starts with vertex 2; the clustering is kept at both steps.
    inst = Instance(n=4, edges=[[(0, 1), (2, 3)], [(0, 1)]], l=2, k=2, alpha=1)
    assert run(inst, "dense").assignment == [[1, 1, 0, 0], [1, 1, 0, 0]]


def test_dense_heap_equals_quadratic_reference():
    rng = np.random.default_rng(0)
    for trial in range(20):
        n = int(rng.integers(2, 25))
        l = int(rng.integers(1, 6))
        k = -(-n // l) + int(rng.integers(0, 3))
        pairs = [pq for pq in itertools.combinations(range(n), 2) if rng.random() < 0.3]
        w = rng.integers(1, 4, len(pairs)).astype(float).tolist()
        inst = Instance(n=n, edges=[pairs], weights=[w], l=l, k=k, alpha=1)
        adj = np.zeros((n, n))
        for (u, v), x in zip(pairs, w, strict=True):
            adj[u, v] = adj[v, u] = x
        deg = adj.sum(axis=1)
        used, expect = np.zeros(n, bool), np.full(n, -1)
        for c in range(l):  # the literal Algorithm 3.1, O(n^2) per round
            X: list[int] = []
            while len(X) < k and not used.all():
                cand = [v for v in range(n) if not used[v]]
                v = max(cand, key=lambda v: (adj[v, X].sum(), -deg[v], -v))
                X.append(v)
                used[v] = True
                expect[v] = c
        got = dense(compress(step_matrices(inst)), l, k)
        assert got.tolist() == expect.tolist(), trial


# ---------------------------------------------------------------------------------------------
# local search


def _brute_force_improvement(inst: Instance, assign: np.ndarray, tol: float = 1e-7):
    """An improving single move (into a cluster with free capacity) or swap, or None."""
    base = evaluate(inst, Solution(assignment=assign.tolist())).objective
    for t in range(inst.tau):
        sizes = np.bincount(assign[t], minlength=inst.l)
        for v in range(inst.n):
            for c in range(inst.l):
                if c != assign[t, v] and sizes[c] < inst.k:
                    trial = assign.copy()
                    trial[t, v] = c
                    if evaluate(inst, Solution(assignment=trial.tolist())).objective < base - tol:
                        return ("move", t, v, c)
        for u, v in itertools.combinations(range(inst.n), 2):
            if assign[t, u] != assign[t, v]:
                trial = assign.copy()
                trial[t, u], trial[t, v] = assign[t, v], assign[t, u]
                if evaluate(inst, Solution(assignment=trial.tolist())).objective < base - tol:
                    return ("swap", t, u, v)
    return None


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(max_n=8), seed=st.integers(0, 10))
def test_local_search_monotone_and_local_optimum(inst, seed):
    start = run(inst, "random", seed=seed)
    before = evaluate(inst, start).objective
    out = run(inst, "local-search", start=start)
    ev = evaluate(inst, out)
    assert ev.feasible and ev.objective <= before + 1e-9
    assert _brute_force_improvement(inst, np.asarray(out.assignment)) is None


@pytest.mark.parametrize("name", ["dense-refine", "dense-roll", "dense-ls", "metis-refine"])
def test_final_local_search_leaves_a_local_optimum(name):
    # alpha = 0.5: single-step moves and swaps pay off (with alpha = 3 they rarely do at n = 9)
    inst = Instance(n=9, edges=er(n=9, p=0.5, tau=3, l=3, seed=4).edges, l=3, k=3, alpha=0.5)
    assert _brute_force_improvement(inst, np.asarray(run(inst, name).assignment)) is None


def _brute_force_path_improvement(inst: Instance, assign: np.ndarray, tol: float = 1e-7):
    """An improving re-route of one vertex through all steps, or swap of two vertices at a
    subset of steps (the temporal neighbourhoods), by enumeration with the evaluator."""
    def value(a):
        return evaluate(inst, Solution(assignment=a.tolist())).objective

    base = value(assign)
    sizes = [np.bincount(assign[t], minlength=inst.l) for t in range(inst.tau)]
    for v in range(inst.n):
        for path in itertools.product(range(inst.l), repeat=inst.tau):
            if all(c == assign[t, v] or sizes[t][c] < inst.k for t, c in enumerate(path)):
                trial = assign.copy()
                trial[:, v] = path
                if value(trial) < base - tol:
                    return ("path", v, path)
    for u, v in itertools.combinations(range(inst.n), 2):
        for steps in itertools.product([False, True], repeat=inst.tau):
            trial = assign.copy()
            trial[steps, u], trial[steps, v] = assign[steps, v], assign[steps, u]
            if value(trial) < base - tol:
                return ("pair", u, v, steps)
    return None


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(max_n=6, max_l=3), seed=st.integers(0, 10))
def test_temporal_local_search_has_no_improving_path_move(inst, seed):
    start = run(inst, "random", seed=seed)
    out = run(inst, "local-search", start=start, temporal=True)
    assert evaluate(inst, out).objective <= evaluate(inst, start).objective + 1e-9
    assign = np.asarray(out.assignment)
    assert _brute_force_improvement(inst, assign) is None
    assert _brute_force_path_improvement(inst, assign) is None


def test_temporal_moves_escape_the_migration_barrier():
    # two steps, alpha = 3: vertex 0 belongs with {2, 3} at both steps but starts with {1}; a
    # single-step move pays 3 of migration for a gain of at most 2 per step, the path move wins.
    inst = Instance(n=4, edges=[[(0, 2), (0, 3), (2, 3)], [(0, 2), (0, 3), (2, 3)]], l=2, k=3,
                    alpha=3)
    start = Solution(assignment=[[0, 0, 1, 1], [0, 0, 1, 1]])
    assert run(inst, "local-search", start=start).assignment == start.assignment
    out = run(inst, "local-search", start=start, temporal=True)
    assert out.assignment == [[1, 0, 1, 1], [1, 0, 1, 1]]
    assert evaluate(inst, out).objective == 0
    # full clusters (k*l == n): only swapping 0 and 1 at both steps at once helps
    inst = Instance(n=4, edges=[[(0, 3), (1, 2)], [(0, 3), (1, 2)]], l=2, k=2, alpha=3)
    start = Solution(assignment=[[0, 1, 0, 1], [0, 1, 0, 1]])
    assert run(inst, "local-search", start=start).assignment == start.assignment
    out = run(inst, "local-search", start=start, temporal=True)
    assert out.assignment == [[1, 0, 0, 1], [1, 0, 0, 1]]


@settings(max_examples=20, deadline=None)
@given(inst=instances(max_n=8), seed=st.integers(0, 1000), ends=st.booleans())
def test_delta_evaluation_equals_evaluator(inst, seed, ends):
    rng = np.random.default_rng(seed)
    graphs = [compress([m]) for m in step_matrices(inst)]
    A = np.asarray(run(inst, "random", seed=seed).assignment)
    before = rng.integers(0, inst.l, inst.n) if ends else None
    after = rng.integers(0, inst.l, inst.n) if ends else None
    seq = _Sequence(graphs, A.copy(), inst.l, inst.k, inst.alpha, before, after)
    base = sequence_cost(graphs, seq.A, inst.alpha, before, after)
    if not ends:  # the sequence cost is the evaluator's objective
        assert base == pytest.approx(total(inst, seq.A))
    for _ in range(10):
        t = int(rng.integers(inst.tau))
        D = seq.delta_matrix(t)
        v, u, c = (int(x) for x in rng.integers(0, [inst.n, inst.n, inst.l]))
        if c != seq.A[t, v]:  # a move (capacity ignored: the delta is about cost)
            trial = seq.A.copy()
            trial[t, v] = c
            diff = sequence_cost(graphs, trial, inst.alpha, before, after) - base
            assert D[v, c] == pytest.approx(diff, abs=1e-9)
        a, b = int(seq.A[t, v]), int(seq.A[t, u])
        if a != b:  # a swap: D[v, b] + D[u, a] + 2 w(u, v)
            trial = seq.A.copy()
            trial[t, v], trial[t, u] = b, a
            diff = sequence_cost(graphs, trial, inst.alpha, before, after) - base
            w = graphs[t].weight_between(np.array([v]), np.array([u]))[0]
            assert D[v, b] + D[u, a] + 2 * w == pytest.approx(diff, abs=1e-9)
        if c != seq.A[t, v] and seq.sizes[t, c] < inst.k:  # apply; W stays exact
            seq.move(t, v, c)
            base = sequence_cost(graphs, seq.A, inst.alpha, before, after)
            for s, g in enumerate(graphs):
                assert np.allclose(seq.W[s], g.to_clusters(seq.A[s], inst.l))


def test_local_search_with_a_fixed_previous_step():
    # Roll_x's step problem: the previous step is fixed; the search pays alpha per change.
    inst = er(n=12, p=0.5, tau=2, seed=7)
    graphs = [compress([m]) for m in step_matrices(inst)]
    prev = np.asarray(run(inst, "dense").assignment[0])
    for alpha in (0.0, 3.0, 100.0):
        out = local_search(graphs[1:], prev[None, :], inst.l, inst.k, alpha, before=prev)
        assert sequence_cost(graphs[1:], out, alpha, before=prev) <= graphs[1].cut(prev)
        if alpha == 100.0:  # no cut gain can pay a migration of 100
            assert out[0].tolist() == prev.tolist()


def test_online_ignores_the_future():
    # same first two steps, another future; alpha small so that the clusterings do move
    a = Instance(n=12, edges=er(n=12, tau=4, seed=1).edges, l=4, k=3, alpha=0.5)
    b = Instance(n=12, edges=a.edges[:2] + er(n=12, tau=2, seed=0).edges, l=4, k=3, alpha=0.5)
    online_a, online_b = run(a, "dense-online").assignment, run(b, "dense-online").assignment
    assert online_a[:2] == online_b[:2]
    assert online_a[2:] != online_b[2:]
    # Roll_1 looks one step ahead: without the final search step 1 already sees the change
    assert H.roll(a, x=1, final=False).assignment[1] != H.roll(b, x=1, final=False).assignment[1]


def test_metis_is_repaired_to_capacity():
    inst = er(n=40, p=0.2, tau=2, l=5)
    g = compress(step_matrices(inst))
    labels = metis(g, inst.l, inst.k, seed=1)
    assert np.bincount(labels, minlength=inst.l).max() <= inst.k
    crowded = np.zeros(inst.n, dtype=np.int64)  # everything in cluster 0
    fixed = repair(g, crowded, inst.l, inst.k)
    assert np.bincount(fixed, minlength=inst.l).max() <= inst.k
    assert repair(g, labels, inst.l, inst.k).tolist() == labels.tolist()


def _own_cut(inst: Instance, labels) -> float:
    """Cut weight from the instance's own edge lists (not the package's graphs)."""
    total = 0.0
    for t, edges in enumerate(inst.edges):
        weights = inst.weights[t] if inst.weights else [1.0] * len(edges)
        total += sum(w for (u, v), w in zip(edges, weights, strict=True)
                     if labels[u] != labels[v])
    return total


@pytest.mark.parametrize("seed", range(20))
def test_repair_makes_the_cheapest_single_move(seed):
    """One cluster one vertex over capacity k = 3, three clusters with room: repair must make
    the single move (a vertex out of it into a cluster with room) of least cut, found here by
    enumerating every such move. Moving to the first cluster with room instead of the best one
    changes the result on most of these seeds."""
    inst = er(n=10, p=0.5, tau=1, l=4, seed=seed)
    assert inst.k == 3
    rng = np.random.default_rng(seed)
    labels = rng.permutation([0] * 4 + [1] * 2 + [2] * 2 + [3] * 2)
    fixed = repair(compress(step_matrices(inst)), labels, inst.l, inst.k)
    assert np.bincount(fixed, minlength=inst.l).max() <= inst.k
    assert (fixed != labels).sum() == 1
    moves = [(v, c) for v in np.flatnonzero(labels == 0) for c in (1, 2, 3)]
    best = min(_own_cut(inst, np.where(np.arange(inst.n) == v, c, labels)) for v, c in moves)
    assert _own_cut(inst, fixed) == best


def test_local_search_start_options():
    inst = er(n=12, p=0.5, tau=3)
    for start in ("metis", "dense-online", run(inst, "random", seed=1),
                  run(inst, "random", seed=1).model_dump()):
        out = run(inst, "local-search", start=start)
        assert evaluate(inst, out).feasible
    crowded = Solution(assignment=[[0] * 12] * 3)  # over capacity: repaired first
    assert evaluate(inst, run(inst, "local-search", start=crowded)).feasible
    for bad in ("nope", "best", Solution(assignment=[[0] * 11] * 3)):
        with pytest.raises(InstanceError, match="start"):
            run(inst, "local-search", start=bad)
    with pytest.raises(InstanceError, match="x: -1"):
        run(inst, "dense-roll", x=-1)


def test_unknown_option_is_refused():
    with pytest.raises(dmlopt.errors.UnknownNameError, match="option"):
        dmlopt.heuristic(er(), "dense-refine", x=3)


# ---------------------------------------------------------------------------------------------
# no heuristic below the optimum (exact enumeration on tiny instances)


def exact_optimum(inst: Instance) -> float:
    """Enumerate every capacity-feasible labelling per step and run a DP over the steps."""
    labs = np.array(list(itertools.product(range(inst.l), repeat=inst.n)), dtype=np.int64)
    ok = np.stack([np.bincount(r, minlength=inst.l) for r in labs]).max(axis=1) <= inst.k
    labs = labs[ok]
    mig = (labs[:, None, :] != labs[None, :, :]).sum(axis=2) * inst.alpha
    cost = None
    for t, edges in enumerate(inst.edges):
        cut = np.zeros(len(labs))
        for j, (u, v) in enumerate(edges):
            cut += inst.weight(t, j) * (labs[:, u] != labs[:, v])
        cost = cut if cost is None else cut + (cost[:, None] + mig).min(axis=0)
    return float(cost.min())


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances(max_n=6, max_tau=3, max_l=3))
def test_no_heuristic_below_the_optimum(inst):
    opt = exact_optimum(inst)
    values = {name: evaluate(inst, run(inst, name)).objective for name in H.HEURISTICS}
    assert min(values.values()) >= opt - 1e-9, values


def test_improvers_never_worse_than_their_start():
    for seed in range(3):
        inst = er(n=14, p=0.4, tau=3, seed=seed)
        value = {name: evaluate(inst, run(inst, name)).objective for name in H.HEURISTICS}
        assert value["ils"] <= value["dense-refine"]
        assert value["best"] <= min(value[name] for name in (
            "dense-refine", "metis-refine", "dense-roll", "dense-roll10", "dense-ls", "metis-ls",
            "random-ls"))
        assert value["local-search"] <= value["dense"]


@pytest.mark.parametrize("seed", range(3))
def test_best_finds_the_optimum_on_tiny_instances(seed):
    inst = er(n=6, p=0.5, tau=3, l=3, seed=seed)
    opt = exact_optimum(inst)
    got = evaluate(inst, run(inst, "best", iterations=30)).objective
    assert opt <= got <= opt + 1e-9
