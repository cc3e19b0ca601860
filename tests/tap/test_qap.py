"""TAP at QAPLIB scale: the ``rts`` kernel and search, ``faq-2opt``, QAPLIB data.

References are written here (numpy re-evaluation, brute force over permutations), not taken
from the package's helpers. No test depends on the machine's speed: runs are bounded by
iteration budgets with the clock off (``time_limit=0``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.heuristics import tap as heur
from dmlopt.heuristics.tap import robust_tabu as rts
from dmlopt.heuristics.tap import robust_tabu_kernel as kern
from dmlopt.models.tap import qaplib


def qap_cost(f: np.ndarray, b: np.ndarray, p: np.ndarray) -> float:
    return float(sum(f[i, j] * b[p[i], p[j]] for i in range(len(p)) for j in range(len(p))))


def random_sym(rng: np.random.Generator, n: int, high: int = 10) -> np.ndarray:
    a = np.triu(rng.integers(0, high, (n, n)), 1).astype(float)
    return a + a.T


def tap_brute_force(inst) -> float:
    """Optimum of TAP (8)-(12): every module -> VM map within capacity K."""
    best = math.inf
    for a in itertools.product(range(inst.n), repeat=inst.m):
        if max(np.bincount(a, minlength=inst.n)) > inst.K:
            continue
        a = np.asarray(a)
        best = min(best, float((inst.traffic * inst.distance[np.ix_(a, a)]).sum()))
    return best


def rand_tap(seed: int, m: int, n: int, K: int):
    rng = np.random.default_rng(seed)
    traffic = rng.integers(0, 9, (m, m)) * (rng.random((m, m)) < 0.7)  # asymmetric M
    np.fill_diagonal(traffic, 0)
    d = random_sym(rng, n, 6) + np.where(np.eye(n) > 0, 0, 1)
    return dmlopt.load({"problem": "tap", "M": traffic.tolist(), "D": d.tolist(), "K": K})


# ------------------------------------------------------------------------------ delta matrix


@pytest.mark.parametrize("m, n_vm, K", [(2, 2, 1), (3, 3, 1), (9, 9, 1), (5, 4, 2), (4, 3, 3),
                                         (3, 5, 1)])
def test_delta_matrix_stays_equal_to_recomputation_after_swaps(m, n_vm, K):
    """The fused kernel's delta matrix, its "no change" sentinels (two slots of one VM) and the
    tabu pair matrix t2 equal a from-scratch recomputation after every one of many swaps, also on
    a padded QAP (K > 1, dummy modules)."""
    from dmlopt.heuristics.tap import search as ts

    rng = np.random.default_rng(m * 100 + n_vm * 10 + K)
    traffic = rng.integers(0, 9, (m, m)).astype(float)
    np.fill_diagonal(traffic, 0)
    qap = ts.padded(traffic, random_sym(rng, n_vm, 6) + 1 - np.eye(n_vm), K)
    f, b, size, kc = qap.F, qap.B, qap.size, qap.kc
    st = kern.state(size)
    st.p[:] = rng.permutation(size)
    st.tabu[:] = rng.integers(-50, 50, (size, size))
    st.tabu_t[:] = st.tabu.T
    c0 = kern.reset(f, b, m, kc, st.p, st.bp, st.q, st.delta, st.tabu, st.t2, st.iwork)
    assert c0 == pytest.approx(qap_cost(f, b, st.p))

    def check() -> None:
        p = st.p
        assert sorted(p.tolist()) == list(range(size))
        np.testing.assert_allclose(st.bp, b[np.ix_(p, p)])
        np.testing.assert_allclose(st.q[:m], (f @ b[np.ix_(p, p)])[:m], atol=1e-9)
        base = qap_cost(f, b, p)
        for i in range(min(m, size - 1)):
            for j in range(i + 1, size):
                assert st.t2[i, j] == min(st.tabu[i, p[j]], st.tabu[j, p[i]]), (i, j)
                if p[i] // kc == p[j] // kc:
                    assert st.delta[i, j] == kern.BIG, (i, j)
                    continue
                q = p.copy()
                q[i], q[j] = q[j], q[i]
                assert st.delta[i, j] == pytest.approx(qap_cost(f, b, q) - base, abs=1e-9), (i, j)

    check()
    for _ in range(60):
        r, s = int(rng.integers(m)), int(rng.integers(size))
        if st.p[r] // kc == st.p[s] // kc:
            continue
        st.tabu[r, st.p[r]] = st.tabu_t[st.p[r], r] = rng.integers(-50, 50)  # as a move does
        kern.swap(f, m, kc, st.p, st.bp, st.q, st.delta, st.tabu, st.tabu_t, st.t2, st.work,
                  st.iwork, r, s)
        check()


# ---------------------------------------------------------------------------- optimality


@pytest.mark.parametrize("seed, m, n, K", [(0, 6, 6, 1), (1, 5, 7, 1), (2, 5, 3, 2), (3, 6, 3, 3),
                                           (4, 4, 6, 2)])
def test_rts_finds_brute_force_optimum_and_respects_capacity(seed, m, n, K):
    inst = rand_tap(seed, m, n, K)
    opt = tap_brute_force(inst)
    res = dmlopt.heuristic(inst, "rts", seed=seed, iterations=5000, time_limit=0)
    assert res.status == "feasible", res.message
    loads = np.bincount(res.solution.assignment, minlength=n)
    assert loads.max() <= K and len(res.solution.assignment) == m
    assert res.objective == pytest.approx(opt)


def test_qap_permutation_brute_force_n7():
    """A plain QAP (K = 1, m = n = 7): the optimum over all 5040 permutations."""
    rng = np.random.default_rng(7)
    f, b = rng.integers(0, 20, (7, 7)), random_sym(rng, 7, 9)
    np.fill_diagonal(f, 0)
    inst = dmlopt.load({"problem": "tap", "M": f.tolist(), "D": b.tolist(), "K": 1})
    opt = min(qap_cost(f, b, np.array(p)) for p in itertools.permutations(range(7)))
    sol = rts.rts(inst, seed=3, iterations=3000, time_limit=0)
    assert dmlopt.evaluate(inst, sol).objective == pytest.approx(opt)


# ------------------------------------------------------------------- stopping, determinism


def test_target_stops_early_with_fewer_iterations():
    inst = rand_tap(5, 6, 6, 1)
    opt = tap_brute_force(inst)
    o_full = rts.options(iterations=20_000, time_limit=0)
    o_target = rts.options(iterations=20_000, time_limit=0, target=opt)
    _, full = rts.solve(inst, 0, o_full)
    sol, hit = rts.solve(inst, 0, o_target)
    assert full.iterations == 20_000 and not full.reached_target
    assert hit.reached_target and hit.cost == pytest.approx(opt)
    assert hit.iterations < 20_000
    assert dmlopt.evaluate(inst, sol).objective <= opt
    # a target every solution meets: no tabu iteration at all
    _, easy = rts.solve(inst, 0, rts.options(iterations=20_000, time_limit=0, target=1e18))
    assert easy.iterations == 0 and easy.reached_target


def test_iteration_budget_is_exact_and_deterministic():
    inst = qaplib.load("chr12a")
    a = rts.solve(inst, 11, rts.options(iterations=3_000, time_limit=0, stall=2))
    b = rts.solve(inst, 11, rts.options(iterations=3_000, time_limit=0, stall=2))
    assert a[1].iterations == b[1].iterations == 3_000
    assert a[1].phases == b[1].phases > 1  # perturbation phases ran
    assert a[0].assignment == b[0].assignment and a[1].cost == b[1].cost


def test_restarts_happen_when_no_phase_improves():
    inst = rand_tap(6, 6, 6, 1)
    _, out = rts.solve(inst, 0, rts.options(iterations=5_000, time_limit=0, stall=0.5,
                                            restart=2))
    assert out.restarts > 0


def test_default_budget_on_tiny_instance_is_the_iteration_cap():
    inst = rand_tap(8, 5, 5, 1)
    _, out = rts.solve(inst, 0, rts.options())
    assert out.iterations == rts.default_iterations(5) == 2000 * 25
    assert rts.default_time_limit(100) == pytest.approx(10.0)
    assert rts.default_time_limit(20) == 1.0


@pytest.mark.parametrize("field, value", [("time_limit", -1.0), ("time_limit", float("nan")),
                                          ("iterations", 0), ("stall", 0.0), ("jump_min", 2.0),
                                          ("restart", 0), ("clock", "sundial"),
                                          ("target", float("nan"))])
def test_bad_options_raise_instance_error(field, value):
    inst = rand_tap(0, 4, 4, 1)
    with pytest.raises(InstanceError, match=field):
        dmlopt.heuristic(inst, "rts", **{field: value})


def test_unbounded_run_and_inverted_jumps_are_refused():
    inst = rand_tap(0, 4, 4, 1)
    with pytest.raises(InstanceError, match="time_limit"):
        rts.rts(inst, time_limit=0)
    with pytest.raises(InstanceError, match="jump_max"):
        rts.rts(inst, jump_min=0.5, jump_max=0.2, iterations=10)


def test_estimate_grows_with_size():
    small, big = rand_tap(0, 5, 5, 1), rand_tap(0, 10, 10, 1)
    (m1, w1), (m2, w2) = rts.estimate(small), rts.estimate(big)
    assert 0 < m1 < m2 and 0 < w1 < w2
    assert rts.estimate(small, rts.options(iterations=10))[1] < w1


# ------------------------------------------------------------------------------- faq-2opt


def test_faq_2opt_ends_in_a_swap_local_optimum():
    inst = rand_tap(9, 8, 8, 1)
    res = dmlopt.heuristic(inst, "faq-2opt", seed=0, restarts=2)
    assert res.status == "feasible"
    a = np.array(res.solution.assignment)
    base = dmlopt.evaluate(inst, {"assignment": a.tolist()}).objective
    for i, j in itertools.combinations(range(8), 2):
        q = a.copy()
        q[i], q[j] = q[j], q[i]
        assert dmlopt.evaluate(inst, {"assignment": q.tolist()}).objective >= base - 1e-9


def test_faq_2opt_capacity_and_fewer_modules():
    inst = rand_tap(10, 5, 3, 2)
    res = dmlopt.heuristic(inst, "faq-2opt", seed=1, restarts=3)
    assert res.status == "feasible"
    assert np.bincount(res.solution.assignment, minlength=3).max() <= 2
    with pytest.raises(InstanceError, match="restarts"):
        dmlopt.heuristic(inst, "faq-2opt", restarts=0)


def test_registered_names():
    assert heur.HEURISTICS["rts"].function is rts.rts
    assert "faq-2opt" in heur.HEURISTICS


# --------------------------------------------------------------------------- QAPLIB data


def test_generator_reads_any_dat_path(tmp_path):
    src = qaplib._resolve("nug12", ".dat")
    (tmp_path / "copy.dat").write_text(src.read_text())
    by_path = dmlopt.generate("tap", {"generator": "qaplib", "path": str(tmp_path / "copy.dat")})
    by_name = dmlopt.generate("tap", {"generator": "qaplib", "name": "nug12"})
    assert by_path.M == by_name.M and by_path.D == by_name.D
    with pytest.raises(InstanceError, match="path"):
        dmlopt.generate("tap", {"generator": "qaplib", "path": str(tmp_path / "x.txt")})


def test_zero_based_sln_and_best_known(tmp_path):
    (tmp_path / "z.sln").write_text("3 7\n 2 0 1\n")
    assert qaplib.read_sln(tmp_path / "z.sln") == (7.0, [2, 0, 1])
    # kra32.sln lists 88900; its permutation costs 88700, the proven optimum
    assert qaplib.read_sln(qaplib._resolve("kra32", ".sln"))[0] == 88900
    assert qaplib.best_known("kra32") == 88700
    assert qaplib.best_known("nug12") == 578


# --------------------------------------------------------------------------- table renderer


def _row(name, method, objective, seconds=1.0, seed=0, **opts):
    import json

    return {"problem": "tap", "instance": f"qaplib(name={name})#0", "method": method,
            "options": json.dumps(opts), "seed": seed, "status": "feasible",
            "objective": objective, "seconds": seconds}


def test_table_gaps_families_and_time_to_target(tmp_path):
    from dmlopt.benchmarks.store import Store
    from dmlopt.benchmarks.tables import tap as table

    rows = [_row("nug12", "rts", 578.0, clock="cpu"), _row("nug12", "cle", 578.0 * 1.5),
            _row("tai40a", "rts", 3139370 * 1.005, seconds=2.0),
            _row("kra32", "rts", 88700.0),  # best known 88700, below the listed 88900
            _row("nug12", "rts", 578.0, seconds=0.5, seed=1, target=578.0 * 1.01),
            _row("tai40a", "rts", 3139370 * 1.02, seconds=3.0, seed=1,
                 target=3139370 * 1.001)]
    df = table.frame(rows)
    assert table.family("tai40a") == "tai*a" and table.family("esc16c") == "esc"
    main = df[df["target"].isna()]
    gaps = dict(zip(main["name"] + " " + main["method"], main["gap_pct"], strict=True))
    assert gaps["nug12 rts"] == 0.0 and gaps["nug12 cle"] == pytest.approx(50.0)
    assert gaps["tai40a rts"] == pytest.approx(0.5) and gaps["kra32 rts"] == 0.0
    text = table.table(df)
    assert "| nug | 1 | 12-12 | 0.000 / 0.00 / 1.00 | 50.000 / 50.00 / 1.00 |" in text
    assert "max gap 0.50 % (goal <= 1 %: met" in text
    t = table.ttt(df).set_index("name")
    assert t.loc["nug12", "level"] == 1.0 and t.loc["nug12", "reached_at"] == 0.5
    assert t.loc["tai40a", "level"] == 0.1 and math.isinf(t.loc["tai40a", "reached_at"])
    store_path = tmp_path / "s.sqlite"
    with Store(store_path) as st:
        for i, r in enumerate(rows):
            st.put({**r, "instance_hash": f"h{i}", "kind": "heuristic", "feasible": True})
    out = tmp_path / "out"
    assert table.main([str(store_path), "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["tap-qaplib-runs.csv",
                                                     "tap-qaplib-ttt.png", "tap-qaplib.md"]
