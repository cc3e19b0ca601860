"""Training of ``nara-netfit`` (ours, :mod:`.nara_netfit`): behaviour cloning of netfit-probe's
rule, then PPO (paper 001, Appendix E.3's algorithm; our settings below), numpy only.

``dmlopt train nara --arch netfit --dataset uniform --steps N --seed S -o policy.npz`` (the
``nara`` command's ``--arch`` option; :func:`dmlopt.heuristics.nara.learn.run` dispatches
here). The same outputs, checkpoint/resume, progress and validation as the paper policy's
trainer (:mod:`.learn`, whose Adam, GAE and file helpers are reused):

1. **Initial policy** (``init="netfit-probe"``, default): ``bc_episodes`` training episodes
   are played by netfit-probe's rule (:func:`.nara_netfit.teacher`) and the policy is fitted
   to its choices (cross-entropy, Adam, ``bc_epochs`` epochs), the value network to the
   episodes' discounted returns (Adam, learning rate :data:`BC_LR`). ``init="random"``:
   Glorot weights, no cloning.
2. **PPO**: one step = one request; reward +10 when the request is allocated, 0 when it is
   rejected or has no candidate (the paper's x and z; y = -10 cannot happen: every candidate
   keeps constraint 3). Clipped objective (0.2) with RLlib's adaptive KL penalty, GAE
   (gamma 0.95, lambda 0.9), separate value network, batch 8192 decisions, minibatch 256,
   ``epochs`` (4) per batch, advantages normalised per minibatch, gradient-norm clip 1.
   Deviations from the paper's settings (Appendix E.3), all ours: episodes of 128 requests
   (the benchmark length: a 32-request episode never loads the DC, so admission control could
   not pay off); learning rate 5e-4, clip 0.2 (fine-tuning a cloned policy); a shorter
   horizon (gamma 0.95: a decision's effect lasts about one holding period) and a larger batch
   (a first run with gamma 0.99, lambda 0.95, batch 2048, lr 1e-3 drifted below its start).

Validation (greedy, 16 episodes of 128 requests, seeds 900000-900015) before PPO (the cloned
policy: ``init_validation_acceptance`` in the model card) and every ``eval_every``
iterations; the weights written are the PPO iterate with the best validation score.
Training episodes use generator seeds >= 10**6; benchmark seeds 0-999 are never seen.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dmlopt.heuristics.nara import learn as L
from dmlopt.heuristics.nara import nara_netfit as NN
from dmlopt.heuristics.nara.ppo import ppo_epochs
from dmlopt.models import nara
from dmlopt.models.nara import policy as P
from dmlopt.models.nara.env import TRAIN_SEED_MIN
from dmlopt.models.nara.sim import State

VALIDATION_SEEDS = tuple(range(900_000, 900_016))
BC_LR = 2e-3  # Adam's learning rate while cloning
KEYS = ("nodes", "links", "cand", "req", "member", "mask")


class Episodes:
    """Fresh training episodes of one topology and request set (generator seeds >= 10**6),
    reusing the topology arrays of one base instance."""

    def __init__(self, topology: str, dataset: str, n_requests: int) -> None:
        self.dataset, self.topology, self.n = dataset, topology, n_requests
        self.base = nara.GENERATORS[dataset](seed=0, topology=topology, n_requests=n_requests)
        self.graph = P.Graph(P.graph_of(self.base))

    def draw(self, rng: np.random.Generator) -> nara.Instance:
        seed = int(rng.integers(TRAIN_SEED_MIN, 2**31 - 1))
        fresh = nara.GENERATORS[self.dataset](seed=seed, topology=self.topology,
                                              n_requests=self.n)
        return self.base.model_copy(update={"requests": fresh.requests})


def collect(eps: Episodes, params: dict[str, np.ndarray] | None, rng: np.random.Generator,
            n_steps: int, *, teacher: bool = False) -> dict[str, Any]:
    """Complete episodes of the stochastic policy (or of the teacher) until >= ``n_steps``
    decisions."""
    buf: dict[str, list] = {k: [] for k in (*KEYS, "action", "logp", "probs", "reward",
                                            "done", "teacher")}
    accepted = requests = episodes = 0
    g = eps.graph
    while len(buf["action"]) < n_steps:
        inst = eps.draw(rng)
        st = State(inst)
        feat = NN.Featurizer(inst, int(rng.integers(2**31 - 1)))
        start = len(buf["action"])
        for j in range(eps.n):
            st.begin(j)
            got = feat.observe(st)
            if got is None:
                st.drop()
                continue
            obs, cands = got
            t = NN.teacher(obs)
            if teacher:
                a, lp, pr = t, 0.0, np.zeros(NN.CMAX)
            else:
                lpv = P.log_softmax(NN.logits(params, g, NN.batch_of(obs))[0])
                pr = np.exp(lpv)
                a = int(rng.choice(NN.CMAX, p=pr / pr.sum()))
                lp = lpv[a]
            ok = NN.execute(st, cands, a)
            for k in KEYS:
                buf[k].append(obs[k])
            buf["action"].append(a)
            buf["logp"].append(lp)
            buf["probs"].append(pr)
            buf["teacher"].append(t)
            buf["reward"].append(10.0 if ok else 0.0)
            buf["done"].append(False)
        if len(buf["action"]) > start:
            buf["done"][-1] = True
        accepted += sum(a is not None for a in st.solution().allocations)
        requests += eps.n
        episodes += 1
    out = {k: np.asarray(v) for k, v in buf.items()}
    out.update(acceptance=accepted / requests, episodes=episodes)
    return out


def _sub(b: dict[str, Any], idx: np.ndarray) -> dict[str, np.ndarray]:
    return {k: b[k][idx] for k in KEYS}


def clone(params: dict[str, np.ndarray], opt_pi: L.Adam, opt_v: L.Adam, g: P.Graph,
          b: dict[str, Any], rng: np.random.Generator, *, epochs: int, minibatch: int,
          gamma: float) -> float:
    """Fit the policy to the teacher's actions (cross-entropy) and the value network to the
    discounted returns; returns the final agreement of the greedy policy with the teacher."""
    n = len(b["action"])
    ret = np.zeros(n)
    acc = 0.0
    for i in range(n - 1, -1, -1):
        acc = b["reward"][i] + (0.0 if b["done"][i] else gamma * acc)
        ret[i] = acc
    vin_all = NN.value_input(g, b)
    for _ in range(epochs):
        perm = rng.permutation(n)
        for s in range(0, n, minibatch):
            idx = perm[s:s + minibatch]
            B = len(idx)
            cache: dict[str, Any] = {}
            lg = NN.logits(params, g, _sub(b, idx), cache)
            pr = np.where(b["mask"][idx], np.exp(P.log_softmax(lg)), 0.0)
            onehot = np.zeros_like(pr)
            onehot[np.arange(B), b["teacher"][idx]] = 1.0
            opt_pi.step(params, NN.backward(params, g, cache, (pr - onehot) / B))
            vc: dict[str, Any] = {}
            v = P.value(params, vin_all[idx], vc)
            err = (v - ret[idx]) / P.VALUE_SCALE
            opt_v.step(params, P.backward_value(params, vc, err / P.VALUE_SCALE / B))
    agree = []
    for s in range(0, n, 1024):
        idx = np.arange(s, min(n, s + 1024))
        agree.append(np.argmax(NN.logits(params, g, _sub(b, idx)), axis=1)
                     == b["teacher"][idx])
    return float(np.concatenate(agree).mean())


def ppo_update(params: dict[str, np.ndarray], opt_pi: L.Adam, opt_v: L.Adam, g: P.Graph,
               b: dict[str, Any], rng: np.random.Generator, *, minibatch: int, epochs: int,
               clip: float, kl_coeff: float) -> dict[str, float]:
    """One PPO update (clipped surrogate + KL penalty; value regression):
    :func:`.ppo.ppo_epochs` with this policy's forward and backward pass."""
    z0_all = P.first_input(g, b["nodes"], b["links"])

    def logits(idx: np.ndarray, cache: dict[str, Any]) -> np.ndarray:
        return NN.logits(params, g, _sub(b, idx), cache, z0=z0_all[idx])

    return ppo_epochs(params, opt_pi, opt_v, b, rng, logits,
                      lambda cache, dlogit: NN.backward(params, g, cache, dlogit),
                      NN.value_input(g, b), minibatch=minibatch, epochs=epochs, clip=clip,
                      kl_coeff=kl_coeff)


def validate(params: dict[str, np.ndarray], topology: str, dataset: str,
             seeds: tuple[int, ...] = VALIDATION_SEEDS, n_requests: int = 128) -> float:
    """Greedy acceptance ratio on validation episodes."""
    acc = []
    for s in seeds:
        inst = nara.GENERATORS[dataset](seed=s, topology=topology, n_requests=n_requests)
        acc.append(NN.rollout(inst, params).accepted / n_requests)
    return float(np.mean(acc))


def train(topology: str, dataset: str, steps: int, seed: int, out: str | Path, *,
          episode: int = 128, lr: float = 5e-4, batch: int = 8192, minibatch: int = 256,
          epochs: int = 4, clip: float = 0.2, gamma: float = 0.95, lam: float = 0.9,
          kl_coeff: float = 0.2, kl_target: float = 0.01, init: str = "netfit-probe",
          bc_episodes: int = 64, bc_epochs: int = 20, eval_every: int = 5,
          validation: tuple[int, ...] = VALIDATION_SEEDS, resume: bool = True,
          progress: bool | None = None) -> dict[str, Any]:
    """Clone netfit-probe (``init``), then PPO for ``steps`` decisions; returns the model card
    (module docstring). Bad input: :class:`dmlopt.errors.InstanceError`."""
    from dmlopt.errors import InstanceError
    from dmlopt.io import atomic_path, atomic_write_text

    out = L._check(topology, dataset, steps, seed, out, episode, batch, minibatch, lr=lr,
                   clip=clip, gamma=gamma, lam=lam, epochs=epochs)
    if init not in ("netfit-probe", "random"):
        raise InstanceError("init", init, "must be 'netfit-probe' or 'random'")
    if not 0 <= bc_episodes <= 100_000 or not 0 <= bc_epochs <= 1000:
        raise InstanceError("bc_episodes", bc_episodes, "must be in 0..100000 (epochs 0..1000)")
    paths = L._paths(out)
    config = {"arch": "netfit", "topology": topology, "dataset": dataset, "steps": steps,
              "seed": seed, "episode": episode, "lr": lr, "batch": batch,
              "minibatch": minibatch, "epochs": epochs, "clip": clip, "gamma": gamma,
              "lambda": lam, "kl_coeff": kl_coeff, "kl_target": kl_target, "init": init,
              "bc_episodes": bc_episodes, "bc_epochs": bc_epochs,
              "validation_seeds": list(validation)}
    eps = Episodes(topology, dataset, episode)
    g = eps.graph
    params = NN.init_params(seed=seed)
    opt_pi = L.Adam(params, NN.POLICY_KEYS, lr)
    opt_v = L.Adam(params, NN.VALUE_KEYS, lr)
    rng = np.random.default_rng(seed)
    rows: list[dict[str, float]] = []
    done_steps, it, wall0 = 0, 0, 0.0
    init_val, agree = -1.0, -1.0
    best = (-1.0, {k: v.copy() for k, v in params.items()})
    resumed = False
    if resume and paths["ckpt"].is_file():
        with np.load(paths["ckpt"], allow_pickle=False) as z:
            zz = {k: z[k] for k in z.files}
        same = {k: v for k, v in json.loads(str(zz["config"])).items() if k != "steps"}
        if same == {k: v for k, v in config.items() if k != "steps"}:
            params.update({k: zz[f"p_{k}"] for k in params})
            opt_pi.load(zz, "pi_")
            opt_v.load(zz, "v_")
            rng.bit_generator.state = json.loads(str(zz["rng"]))
            rows = json.loads(str(zz["rows"]))
            done_steps, it, wall0 = int(zz["steps"]), int(zz["iteration"]), float(zz["wall"])
            kl_coeff = float(zz["kl_coeff"])
            init_val, agree = float(zz["init_val"]), float(zz["agree"])
            best = (float(zz["best_score"]), {k: zz[f"b_{k}"] for k in params})
            resumed = True
            print(f"resuming {out} at iteration {it}, {done_steps} steps", file=sys.stderr)
    interactive = sys.stderr.isatty() and not os.environ.get("CI")
    show = interactive if progress is None else progress and interactive
    t0 = time.perf_counter() - wall0
    if not resumed:
        if init == "netfit-probe" and bc_episodes and bc_epochs:
            tb = _teacher_batch(eps, rng, bc_episodes)
            agree = clone(params, L.Adam(params, NN.POLICY_KEYS, BC_LR),
                          L.Adam(params, NN.VALUE_KEYS, BC_LR), g, tb, rng, epochs=bc_epochs,
                          minibatch=minibatch, gamma=gamma)
        if validation:
            init_val = validate(params, topology, dataset, validation)
        print(f"initial policy ({init}): teacher agreement {agree:.3f}, validation "
              f"{init_val:.3f}, {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=steps, initial=min(done_steps, steps), unit="step",
                   desc=f"nara-netfit {topology}/{dataset}")
    title = f"nara-netfit PPO, {topology} / {dataset}, seed {seed}"
    try:
        while done_steps < steps:
            b = collect(eps, params, rng, batch)
            vals = P.value(params, NN.value_input(g, b))
            b["adv"], b["ret"] = L.advantages(b["reward"], b["done"], vals, gamma, lam)
            stats = ppo_update(params, opt_pi, opt_v, g, b, rng, minibatch=minibatch,
                               epochs=epochs, clip=clip, kl_coeff=kl_coeff)
            if stats["kl"] > 2 * kl_target:
                kl_coeff *= 1.5
            elif stats["kl"] < 0.5 * kl_target:
                kl_coeff *= 0.5
            it += 1
            done_steps += len(b["action"])
            val = -1.0
            if validation and (it % eval_every == 0 or done_steps >= steps):
                val = validate(params, topology, dataset, validation)
                if val > best[0]:
                    best = (val, {k: v.copy() for k, v in params.items()})
            row = {"iteration": it, "steps": done_steps, "episodes": b["episodes"],
                   "seconds": round(time.perf_counter() - t0, 2),
                   "train_acceptance": b["acceptance"],
                   "mean_reward": float(b["reward"].sum() / b["episodes"]),
                   **stats, "kl_coeff": kl_coeff, "val_acceptance": val}
            rows.append(row)
            if bar is not None:
                bar.update(min(done_steps, steps) - bar.n)
                bar.set_postfix_str(f"acc {b['acceptance']:.3f} val {val:.3f}")
            else:
                print(f"it {it} steps {done_steps}/{steps} acc {b['acceptance']:.3f} "
                      f"val {val:.3f} kl {stats['kl']:.4f} {row['seconds']:.0f}s",
                      file=sys.stderr, flush=True)
            ckpt = {f"p_{k}": v for k, v in params.items()}
            ckpt.update({f"b_{k}": v for k, v in best[1].items()})
            ckpt.update(opt_pi.state("pi_"))
            ckpt.update(opt_v.state("v_"))
            ckpt.update(config=json.dumps(config), rng=json.dumps(rng.bit_generator.state),
                        rows=json.dumps(rows), steps=done_steps, iteration=it,
                        wall=time.perf_counter() - t0, kl_coeff=kl_coeff,
                        best_score=best[0], init_val=init_val, agree=agree)
            L._save_npz(paths["ckpt"], ckpt)
            if it % eval_every == 0:
                L._write_curve(paths, rows, title, train_label=f"training (stochastic, "
                               f"{episode} req.)")
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    final = best[1] if best[0] >= 0 else params
    with atomic_path(paths["weights"]) as tmp:
        NN.save(tmp, final)
    if rows:
        L._write_curve(paths, rows, title, train_label=f"training (stochastic, {episode} req.)")
    card = {
        "model": "nara-netfit (ours, not the paper's agent): netfit-probe's candidates + "
                 "reject scored by an MLP (32, 16) on netfit features and the paper's "
                 "GraphSAGE 3x16 embedding of the candidate's servers; numpy",
        "topology": topology, "dataset": dataset, "steps": done_steps, "steps_requested": steps,
        "iterations": it, "seed": seed, "wall_seconds": round(wall, 1),
        "init": init, "teacher_agreement": agree if agree >= 0 else None,
        "init_validation_acceptance": init_val if init_val >= 0 else None,
        "final_training_acceptance": rows[-1]["train_acceptance"] if rows else None,
        "validation_acceptance": best[0] if best[0] >= 0 else None,
        "validation": f"greedy, {len(validation)} episodes of 128 requests, seeds "
                      f"{validation[0]}-{validation[-1]}" if validation else None,
        "selected": "best validation PPO iterate" if best[0] >= 0 else "last iterate",
        "training_episode_seeds": ">= 1000000 (generator seeds; never a benchmark seed)",
        "hyperparameters": config, "versions": L._versions(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, 1 thread",
        "command": f"dmlopt train nara --arch netfit --topology {topology} --dataset "
                   f"{dataset} --steps {steps} --seed {seed} --episode {episode} --batch "
                   f"{batch} --lr {lr:g} --epochs {epochs} --gamma {gamma:g} --lambda {lam:g} "
                   f"--init {init} -o {out.name}",
    }
    atomic_write_text(paths["card"], json.dumps(card, indent=2) + "\n")
    paths["ckpt"].unlink(missing_ok=True)
    return card


def _teacher_batch(eps: Episodes, rng: np.random.Generator, n_episodes: int
                   ) -> dict[str, Any]:
    """``n_episodes`` complete episodes played by the teacher."""
    parts = [collect(eps, None, rng, 1, teacher=True) for _ in range(n_episodes)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]
            if isinstance(parts[0][k], np.ndarray)}
