"""Nara's learned allocator: the Gymnasium environment, the numpy policy and its backward pass,
PPO training, the shipped policies (paper 001, section 3.2-3.3, Appendix E)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt.errors import InstanceError
from dmlopt.heuristics.nara import agent
from dmlopt.heuristics.nara import learn as L
from dmlopt.models import nara
from dmlopt.models.nara import NaraEnv
from dmlopt.models.nara import policy as P


def _inst(n: int = 12, seed: int = 1, dist: str = "uniform", topology: str = "alpha"):
    return nara.GENERATORS[dist](seed=seed, topology=topology, n_requests=n)


def _observations(inst, n_obs: int = 6, seed: int = 0):
    env = NaraEnv(inst)
    obs, info = env.reset()
    rng = np.random.default_rng(seed)
    out, done = [], False
    while not done and len(out) < n_obs:
        out.append((obs, info["action_mask"]))
        obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    batch = {k: np.stack([o[k] for o, _ in out]) for k in ("nodes", "links", "state")}
    batch["mask"] = np.stack([m for _, m in out])
    return env, batch


def test_check_env_passes():
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(NaraEnv(_inst(8)), skip_render_check=True)
        check_env(NaraEnv(topology="alpha", dataset="azure", n_requests=8),
                  skip_render_check=True)
    assert nara.NaraEnv is NaraEnv


@pytest.mark.parametrize("dist", ["uniform", "alibaba"])
def test_masks_never_allow_an_infeasible_server(dist):
    inst = _inst(40, seed=3, dist=dist)
    env = NaraEnv(inst)
    obs, info = env.reset()
    rng = np.random.default_rng(0)
    done, total, steps = False, 0.0, 0
    while not done:
        mask = info["action_mask"]
        assert (mask == env.action_masks()).all() and mask.any()
        assert np.array_equal(obs["nodes"][env.graph["server_node"], 7], mask)
        st = env.state
        for s in np.flatnonzero(mask):
            assert st.is_useful(int(s)) and st.can_add(int(s))
        assert env.observation_space.contains(obs)
        obs, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert r in (0.0, 10.0)  # rule (i) (-10) never fires under the feasible mask
        total += r
        steps += 1
    ev = nara.evaluate(inst, env.solution())
    assert ev.feasible and total == 10 * ev.objective and steps > len(inst.requests)
    with pytest.raises(ValueError):  # a masked action is refused
        env2 = NaraEnv(inst)
        env2.reset()
        env2.step(int(env2.graph["server_node"].size))


def test_env_rejects_bad_arguments():
    with pytest.raises(InstanceError, match="mask"):
        NaraEnv(_inst(4), mask="none")
    with pytest.raises(InstanceError, match="dataset"):
        NaraEnv(dataset="google")


def test_backward_matches_finite_differences():
    env, b = _observations(_inst(8), 6)
    g = P.Graph(env.graph)
    rng = np.random.default_rng(0)
    params = P.init_params(seed=3)
    for k in params:
        params[k] = params[k] + rng.normal(0, 0.1, params[k].shape)
    w = np.where(b["mask"], rng.normal(size=b["mask"].shape), 0.0)

    def loss(p):  # masked entries are -inf: where() keeps them out
        lp = P.log_softmax(P.logits(p, g, b["nodes"], b["links"], b["state"], b["mask"]))
        return float(np.where(b["mask"], np.where(b["mask"], lp, 0.0) * w, 0.0).sum())

    cache: dict = {}
    pr = np.exp(P.log_softmax(P.logits(params, g, b["nodes"], b["links"], b["state"],
                                       b["mask"], cache)))
    dlogit = np.where(b["mask"], w - pr * w.sum(1, keepdims=True), 0.0)
    grads = P.backward_policy(params, g, cache, dlogit)
    vin = P.value_input(g, b["nodes"], b["links"], b["state"])
    target = rng.normal(size=len(vin))
    vc: dict = {}
    v = P.value(params, vin, vc)
    grads.update(P.backward_value(params, vc, v - target))

    def vloss(p):
        return float(0.5 * ((P.value(p, vin) - target) ** 2).sum())

    for keys, f in ((P.POLICY_KEYS, loss), (P.VALUE_KEYS, vloss)):
        for k in keys:
            for _ in range(3):
                idx = tuple(int(rng.integers(s)) for s in params[k].shape)
                p2 = {kk: vv.copy() for kk, vv in params.items()}
                p2[k][idx] += 1e-6
                up = f(p2)
                p2[k][idx] -= 2e-6
                num = (up - f(p2)) / 2e-6
                assert abs(num - grads[k][idx]) <= 1e-5 + 1e-4 * abs(num), (k, idx)


def test_training_forward_equals_rollout_forward():
    """The batched training forward (dense operators, precomputed first stage, backward-pass
    cache) and the rollout forward (one observation, sparse operators, P2 on the allowed
    servers only) agree to 1e-6 on the same weights."""
    env, b = _observations(_inst(10, seed=4), 8)
    params = P.init_params(seed=5)
    g_dense = P.Graph(env.graph)
    assert isinstance(g_dense.A, np.ndarray)
    z0 = P.first_input(g_dense, b["nodes"], b["links"])
    batched = P.logits(params, g_dense, b["nodes"], b["links"], b["state"], b["mask"], {}, z0)
    dense_max = P.DENSE_MAX
    try:
        P.DENSE_MAX = 0
        g_sparse = P.Graph(env.graph)
    finally:
        P.DENSE_MAX = dense_max
    assert not isinstance(g_sparse.A, np.ndarray)
    for i in range(len(b["mask"])):
        one = P.logits_one(params, g_sparse, b["nodes"][i], b["links"][i], b["state"][i],
                           b["mask"][i])
        m = b["mask"][i]
        assert np.array_equal(np.isfinite(one), m)
        np.testing.assert_allclose(one[m], batched[i][m], rtol=0, atol=1e-6)


def test_rollout_equals_env_rollout_and_is_feasible():
    inst = _inst(24, seed=7, dist="alibaba")
    params = P.init_params(seed=1)
    sol = agent.rollout(inst, params)
    env = NaraEnv(inst)
    g = P.Graph(env.graph)
    obs, info = env.reset()
    done = False
    while not done:
        lg = P.logits_one(params, g, obs["nodes"], obs["links"], obs["state"],
                          info["action_mask"])
        obs, _, done, _, info = env.step(P.greedy_pick(lg))
    assert env.solution() == sol
    assert nara.evaluate(inst, sol).feasible


def test_tiny_training_improves_acceptance(tmp_path):
    """A few PPO iterations raise the acceptance of the (stochastic) policy on fixed episodes
    over the untrained policy (same initial weights, same sampling seeds)."""
    episodes = [_inst(32, seed=s) for s in (700, 701, 702, 703, 704, 705)]

    def score(params):
        rng = np.random.default_rng(0)
        return np.mean([agent.rollout(e, params, greedy=False, rng=rng).accepted
                        for e in episodes])

    before = score(P.init_params(seed=0))
    L.train("alpha", "uniform", 1200, 0, tmp_path / "p.npz", batch=400, minibatch=200,
            epochs=4, validation=(), progress=False)
    after = score({k: v for k, v in P.load(tmp_path / "p.npz").items()})
    assert after > before


def test_train_outputs_resume_and_bad_input(tmp_path, monkeypatch):
    out = tmp_path / "sub" / "pol.npz"
    calls = {"n": 0}
    real = L.ppo_update

    def interrupted(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(L, "ppo_update", interrupted)
    kw = dict(batch=64, minibatch=32, epochs=1, episode=4, validation=(700,), eval_every=1,
              progress=False)
    with pytest.raises(KeyboardInterrupt):
        L.train("alpha", "azure", 200, 3, out, **kw)
    ckpt = tmp_path / "sub" / "pol.ckpt.npz"
    assert ckpt.is_file() and not out.exists()
    monkeypatch.setattr(L, "ppo_update", real)
    card = L.train("alpha", "azure", 200, 3, out, **kw)
    rows = (tmp_path / "sub" / "pol.curve.csv").read_text().splitlines()
    assert [int(r.split(",")[0]) for r in rows[1:]] == list(range(1, card["iterations"] + 1))
    assert card["iterations"] >= 2 and card["steps"] >= 200
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == \
        ["pol.curve.csv", "pol.curve.png", "pol.json", "pol.npz"]
    saved = json.loads((tmp_path / "sub" / "pol.json").read_text())
    assert saved["dataset"] == "azure" and saved["seed"] == 3 and "numpy" in saved["versions"]
    assert list(tmp_path.iterdir()) == [tmp_path / "sub"]
    for bad, field in ((dict(dataset="google"), "dataset"), (dict(steps=0), "steps"),
                       (dict(out=tmp_path / "x.txt"), "out"),
                       (dict(topology="omega"), "topology")):
        args = dict(topology="alpha", dataset="uniform", steps=10, seed=0, out=out) | bad
        with pytest.raises(InstanceError, match=field):
            L.train(**args)


def test_cli_configure_run(tmp_path, capsys):
    import argparse

    parser = L.configure(argparse.ArgumentParser())
    args = parser.parse_args(["--dataset", "alibaba", "--steps", "40", "--batch", "40",
                              "--minibatch", "20", "--epochs", "1", "--episode", "4",
                              "--val-episodes", "0", "-o", str(tmp_path / "p.npz")])
    assert L.run(args) == 0
    assert (tmp_path / "p.npz").is_file()
    assert L.main(["--dataset", "alibaba", "--steps", "0", "-o", str(tmp_path / "q.npz")]) == 2
    assert "steps: 0 must be in 1..1000000000" in capsys.readouterr().err


def test_shipped_policies_roll_out_with_numpy_only():
    """Each shipped policy (with its model card) loads and rolls out an episode in a process
    where gymnasium and the learning frameworks cannot be imported."""
    for dataset in agent.DATASETS:
        path = agent.shipped_policy(dataset)
        card = json.loads(path.with_suffix(".json").read_text())
        assert card["topology"] == "alpha" and card["dataset"] == dataset
    code = (
        "import sys\n"
        "for m in ('gymnasium', 'torch', 'jax', 'tensorflow'): sys.modules[m] = None\n"
        "from dmlopt.heuristics.nara import agent as a\n"
        "from dmlopt.models import nara\n"
        "for d in a.DATASETS:\n"
        "    inst = nara.GENERATORS[d](seed=3, topology='beta', n_requests=24)\n"
        "    sol = a.allocate_nara(inst)\n"
        "    assert nara.evaluate(inst, sol).feasible and sol.accepted > 0\n"
        "    print(sol.accepted)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for dataset, got in zip(agent.DATASETS, res.stdout.split(), strict=True):
        inst = nara.GENERATORS[dataset](seed=3, topology="beta", n_requests=24)
        assert int(got) == dmlopt.heuristic(inst, "nara").objective


def test_heuristic_policy_option_and_dataset_default(tmp_path):
    inst = _inst(16, seed=2, dist="azure")
    assert agent.dataset_of(inst) == "azure"
    assert agent.dataset_of(inst.model_copy(update={"name": "mine"})) == "uniform"
    p = tmp_path / "w.npz"
    P.save(p, P.init_params(seed=2))
    got = dmlopt.heuristic(inst, "nara", policy=str(p))
    assert got.feasible
    with pytest.raises(InstanceError, match="policy"):
        agent.load_policy(tmp_path / "missing.npz")
    (tmp_path / "bad.npz").write_bytes(b"nope")
    with pytest.raises(InstanceError, match="policy"):
        agent.load_policy(tmp_path / "bad.npz")
    mem, ops = agent.estimate(inst, agent.Options())
    assert mem > 0 and ops > 0
    assert Path(agent.shipped_policy("uniform")).name == "nara-uniform.npz"


def _tables_module():
    from dmlopt.benchmarks.tables import nara

    return nara


def test_table_renderer(tmp_path, capsys):
    T = _tables_module()
    rows = []
    for seed in range(3):
        for method, acc, opts in (("tetris", 0.70, "{}"), ("netfit-probe", 0.78, "{}"),
                                  ("nara", 0.72 + 0.01 * seed, "{}"),
                                  ("nara", 0.6, '{"policy": "azure"}')):
            rows.append({"problem": "nara", "instance": f"uniform(topology=alpha)#{seed}",
                         "method": method, "options": opts, "status": "feasible",
                         "feasible": 1, "seconds": 0.5,
                         "metrics": {"acceptance_ratio": acc, "requests": 128}})
    df = T.frame(rows + rows[:1])  # a duplicated run counts once
    assert len(df) == 12
    t1 = T.table1(df)
    assert "| alpha uniform (128 req.) |" in t1 and "0.730 ± 0.025" in t1
    assert "1.043 | -0.050 | 0.71 / 0.61 |" in t1  # Nara / Tetris, Nara - best other, paper
    assert "Nara 0.730 < netfit-probe (ours) 0.780" in T.losses(df)
    assert "| Nara-Azure-like | 0.600 ± 0.000 |" in T.cross(df)
    with pytest.raises(SystemExit) as exc:
        T.main(["--help"])
    assert exc.value.code == 0
    assert T.main([str(tmp_path / "missing.sqlite"), "-o", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()


def test_dmlopt_train_nara_refuses_bad_hyper_parameters(tmp_path, capsys):
    """``dmlopt train nara`` is declared by the trainer (``heuristics.nara.learn.COMMANDS``):
    bad values are exit 2 with one line, before any environment step, and nothing is written."""
    from dmlopt.cli import main

    out = str(tmp_path / "p.npz")
    for flag, value, says in (("--lr", "nan", "lr: nan must be a finite number in (0, 1]"),
                              ("--entropy", "inf", "entropy: inf"),
                              ("--seed", str(2**64), "seed: "),
                              ("--steps", str(10**12), "steps: ")):
        code = main(["train", "nara", flag, value, "-o", out])
        captured = capsys.readouterr()
        assert code == 2 and captured.out == "" and says in captured.err, (flag, captured.err)
        assert len(captured.err.strip().splitlines()) == 1
    assert main(["train", "tap", "-o", out]) == 2
    assert list(tmp_path.iterdir()) == []
