"""The shared PPO pieces of Nara's trainers (paper 001, Appendix E.3): heuristics/nara/ppo.py
(update) and heuristics/nara/trainer.py (loop), checked on their own with a toy policy.

Independent checks: the policy gradient handed to the backward pass against finite differences
of the PPO loss written out directly, GAE against its definition as a sum of discounted
TD errors, Adam's first step against its closed form, and the loop's interrupt/resume against an
uninterrupted run (bit-identical), with a toy "architecture" that needs no Nara environment.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dmlopt.heuristics.nara import ppo
from dmlopt.heuristics.nara import trainer as T
from dmlopt.models.nara import policy as P


def _loss(lg, mask, action, logp_old, A, pold, *, clip, kl_coeff, entropy):
    """The minimised PPO loss of one minibatch, as RLlib states it."""
    lp = P.log_softmax(np.where(mask, lg, -np.inf))
    pr = np.where(mask, np.exp(lp), 0.0)
    ratio = np.exp(lp[np.arange(len(action)), action] - logp_old)
    surrogate = np.minimum(ratio * A, np.clip(ratio, 1 - clip, 1 + clip) * A).mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(mask & (pold > 0), pold * (np.log(pold) - lp), 0.0).sum(1).mean()
        H = -np.where(mask, pr * lp, 0.0).sum(1).mean()
    return -surrogate + kl_coeff * kl - entropy * H


@pytest.mark.parametrize("entropy", [0.0, 0.05])
def test_policy_gradient_matches_finite_differences(entropy):
    rng = np.random.default_rng(0)
    B, K = 7, 5
    mask = rng.random((B, K)) < 0.7
    mask[:, 0] = True
    lg0 = rng.normal(size=(B, K))
    old = np.where(mask, np.exp(P.log_softmax(np.where(mask, lg0 + rng.normal(0, 0.3, (B, K)),
                                                       -np.inf))), 0.0)
    action = np.array([int(rng.choice(K, p=p)) for p in old])
    batch = {"mask": mask, "action": action, "logp": np.log(old[np.arange(B), action]),
             "probs": old, "adv": rng.normal(size=B), "ret": rng.normal(size=B) * 10}
    params = P.init_params(seed=1)
    params["L"] = lg0.copy()
    value_in = rng.normal(size=(B, params["V1"].shape[0]))
    seen = {}

    def logits(idx, cache):
        cache["idx"] = idx
        return np.where(mask[idx], params["L"][idx], -np.inf)

    def backward(cache, dlogit):
        seen["idx"], seen["dlogit"] = cache["idx"], dlogit
        grad = np.zeros_like(params["L"])
        grad[cache["idx"]] = dlogit
        return {"L": grad}

    kw = dict(clip=0.2, kl_coeff=0.3, entropy=entropy)
    stats = ppo.ppo_epochs(params, ppo.Adam(params, ["L"], 1e-3), ppo.Adam(params, P.VALUE_KEYS,
                           1e-3), batch, np.random.default_rng(5), logits, backward, value_in,
                           minibatch=B, epochs=1, **kw)
    idx = seen["idx"]
    assert sorted(idx) == list(range(B))
    A = batch["adv"][idx]
    A = (A - A.mean()) / (A.std() + 1e-8)
    args = (mask[idx], action[idx], batch["logp"][idx], A, old[idx])
    lg = lg0[idx]
    assert stats["policy_loss"] == pytest.approx(
        _loss(lg, *args, clip=0.2, kl_coeff=0.0, entropy=0.0))
    num = np.zeros_like(lg)
    for i, k in zip(*np.nonzero(mask[idx]), strict=True):
        up, down = lg.copy(), lg.copy()
        up[i, k] += 1e-6
        down[i, k] -= 1e-6
        num[i, k] = (_loss(up, *args, **kw) - _loss(down, *args, **kw)) / 2e-6
    np.testing.assert_allclose(seen["dlogit"], num, rtol=1e-4, atol=1e-7)
    assert not seen["dlogit"][~mask[idx]].any()


def test_gae_is_the_discounted_sum_of_td_errors():
    rng = np.random.default_rng(2)
    reward, values = rng.normal(size=11), rng.normal(size=11)
    done = np.zeros(11, dtype=bool)
    done[[3, 10]] = True
    gamma, lam = 0.9, 0.7
    adv, ret = ppo.advantages(reward, done, values, gamma, lam)
    for start, end in ((0, 4), (4, 11)):
        nxt = np.append(values[start + 1:end], 0.0)
        delta = reward[start:end] + gamma * nxt - values[start:end]
        for t in range(start, end):
            want = sum((gamma * lam) ** (u - t) * delta[u - start] for u in range(t, end))
            assert adv[t] == pytest.approx(want)
    np.testing.assert_array_equal(ret, adv + values)


def test_adam_first_step_and_clip_and_kl_coefficient():
    params = {"w": np.array([1.0, 2.0])}
    opt = ppo.Adam(params, ["w"], lr=0.1, clip=1.0)
    opt.step(params, {"w": np.array([3.0, -4.0])})  # norm 5, clipped to 1
    g = np.array([0.6, -0.8])
    np.testing.assert_allclose(params["w"], [1.0, 2.0] - 0.1 * g / (np.abs(g) + 1e-8))
    assert opt.t == 1 and set(opt.state("pi_")) == {"pi_m_w", "pi_v_w", "pi_t"}
    assert ppo.adapt_kl_coeff(0.03, 0.2, 0.01) == pytest.approx(0.3)
    assert ppo.adapt_kl_coeff(0.004, 0.2, 0.01) == pytest.approx(0.1)
    assert ppo.adapt_kl_coeff(0.01, 0.2, 0.01) == 0.2


def _toy_run(out: Path, steps: int, *, stop_at: int | None = None, validating: bool = True):
    """A toy architecture: 'episodes' of random rewards, an update that moves one weight by a
    random amount, a validation score that is a function of that weight."""
    params = P.init_params(seed=3)
    params["w"] = np.zeros(1)
    rng = np.random.default_rng(4)
    state = T.TrainState(params, ppo.Adam(params, ["w"], 0.1), ppo.Adam(params, P.VALUE_KEYS,
                         0.1), rng, 0.2, extra={"started": -1.0})
    config = {"topology": "toy", "dataset": "toy", "steps": steps, "seed": 3, "batch": 10,
              "validation_seeds": [1, 2] if validating else []}
    calls = {"update": 0, "start": 0}

    def collect(n):
        m = n + int(rng.integers(3))
        done = np.zeros(m, dtype=bool)
        done[[m // 2, m - 1]] = True
        return {"reward": rng.random(m), "done": done, "action": np.zeros(m, dtype=int),
                "episodes": 2, "acceptance": float(rng.random())}

    def update(b, kl):
        calls["update"] += 1
        if calls["update"] == stop_at:
            raise KeyboardInterrupt
        params["w"] += rng.normal() + b["adv"].mean()
        return {"policy_loss": float(params["w"][0]), "value_loss": 0.0,
                "kl": float(rng.random()) * 0.03}

    def start(t0):
        calls["start"] += 1
        return {"started": 1.0}

    def save(path, w):
        with open(path, "wb") as fh:
            np.savez(fh, **w)

    arch = T.Arch(desc="toy", title="toy", train_label="toy", collect=collect,
                  value_input=lambda b: np.ones((len(b["reward"]), params["V1"].shape[0])),
                  update=update, save=save, start=start,
                  card=lambda st, wall: T.model_card(st, wall, config, model="toy",
                                                     selected="best", command="toy"),
                  validate=(lambda: float((1 + np.cos(params["w"][0])) / 2)) if validating
                  else None)
    card = T.train_loop(arch, state, out, config, gamma=0.9, lam=0.8, kl_target=0.01,
                        eval_every=2, resume=True, progress=False)
    return card, state, calls


def _curve(path: Path) -> list[list[str]]:
    rows = [r.split(",") for r in path.read_text().splitlines()]
    i = rows[0].index("seconds")
    return [r[:i] + r[i + 1:] for r in rows]


def test_loop_resume_is_bit_identical_and_selects_the_best(tmp_path, capsys):
    ref, ref_state, calls = _toy_run(tmp_path / "a" / "p.npz", 60)
    assert calls["start"] == 1 and ref["iterations"] == calls["update"] >= 5
    vals = [r["val_acceptance"] for r in ref_state.rows]
    its = [r["iteration"] for r in ref_state.rows]
    assert [i for i, v in zip(its, vals, strict=True) if v >= 0] == \
        [i for i in its if i % 2 == 0 or i == its[-1]]
    assert ref["validation_acceptance"] == max(vals) and ref["selected"] == "best"
    with np.load(tmp_path / "a" / "p.npz") as z:
        assert (1 + np.cos(z["w"][0])) / 2 == max(vals)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == \
        ["p.curve.csv", "p.curve.png", "p.json", "p.npz"]
    assert json.loads((tmp_path / "a" / "p.json").read_text())["hyperparameters"]["steps"] == 60

    out = tmp_path / "b" / "p.npz"
    with pytest.raises(KeyboardInterrupt):
        _toy_run(out, 60, stop_at=4)
    assert (tmp_path / "b" / "p.ckpt.npz").is_file() and not out.exists()
    capsys.readouterr()
    card, state, calls = _toy_run(out, 60)
    assert calls["start"] == 0 and state.extra == {"started": 1.0}  # cloned etc. only once
    assert "resuming" in capsys.readouterr().err
    assert card["iterations"] == ref["iterations"] and card["steps"] == ref["steps"]
    with np.load(out) as z, np.load(tmp_path / "a" / "p.npz") as zr:
        assert z.files == zr.files
        assert all(np.array_equal(z[k], zr[k]) for k in z.files)
    assert _curve(tmp_path / "b" / "p.curve.csv") == _curve(tmp_path / "a" / "p.curve.csv")
    assert not (tmp_path / "b" / "p.ckpt.npz").exists()


def test_loop_without_validation_keeps_the_last_iterate(tmp_path):
    card, state, _ = _toy_run(tmp_path / "p.npz", 25, validating=False)
    assert card["validation_acceptance"] is None and card["validation"] is None
    assert card["selected"] == "last iterate"
    assert all(r["val_acceptance"] == -1.0 for r in state.rows)
    with np.load(tmp_path / "p.npz") as z:
        np.testing.assert_array_equal(z["w"], state.params["w"])
