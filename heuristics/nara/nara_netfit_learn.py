"""Training of ``nara-netfit`` (ours, :mod:`.nara_netfit`): behaviour cloning of netfit-probe's
rule, then PPO (paper 001, Appendix E.3's algorithm; our settings below), numpy only.

``dmlopt train nara --arch netfit --dataset uniform --steps N --seed S -o policy.npz`` (the
``nara`` command's ``--arch`` option; :func:`dmlopt.heuristics.nara.learn.run` dispatches
here). The same outputs, checkpoint/resume, progress and validation as the paper policy's
trainer (:mod:`.learn`): both run the loop of :mod:`.trainer` and the update of :mod:`.ppo`:

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

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dmlopt.heuristics.nara import learn as L
from dmlopt.heuristics.nara import nara_netfit as NN
from dmlopt.heuristics.nara import trainer as T
from dmlopt.heuristics.nara.ppo import Adam, ppo_epochs
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


def clone(params: dict[str, np.ndarray], opt_pi: Adam, opt_v: Adam, g: P.Graph,
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


def ppo_update(params: dict[str, np.ndarray], opt_pi: Adam, opt_v: Adam, g: P.Graph,
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
    return T.validate(NN.rollout, params, topology, dataset, seeds, n_requests)


def train(topology: str, dataset: str, steps: int, seed: int, out: str | Path, *,
          episode: int = 128, lr: float = 5e-4, batch: int = 8192, minibatch: int = 256,
          epochs: int = 4, clip: float = 0.2, gamma: float = 0.95, lam: float = 0.9,
          kl_coeff: float = 0.2, kl_target: float = 0.01, init: str = "netfit-probe",
          bc_episodes: int = 64, bc_epochs: int = 20, eval_every: int = 5,
          validation: tuple[int, ...] = VALIDATION_SEEDS, resume: bool = True,
          progress: bool | None = None, size_limit: Any = None) -> dict[str, Any]:
    """Clone netfit-probe (``init``), then PPO for ``steps`` decisions; returns the model card
    (module docstring). Bad input: :class:`dmlopt.errors.InstanceError`; a run estimated above
    ``size_limit`` (:func:`.learn.estimate`, the ``--size-limit`` rules):
    :class:`dmlopt.errors.ModelTooLargeError`, before anything is allocated. The loop itself is
    :func:`.trainer.train_loop`; the cloning is its ``start`` (skipped on resume)."""
    from dmlopt.errors import InstanceError

    out = L._check(topology, dataset, steps, seed, out, episode, batch, minibatch, lr=lr,
                   clip=clip, gamma=gamma, lam=lam, epochs=epochs)
    if init not in ("netfit-probe", "random"):
        raise InstanceError("init", init, "must be 'netfit-probe' or 'random'")
    L._check_int("bc_episodes", bc_episodes, 0, 100_000)
    L._check_int("bc_epochs", bc_epochs, 0, 1000)
    validation = L._check_run(validation, eval_every)
    config = {"arch": "netfit", "topology": topology, "dataset": dataset, "steps": steps,
              "seed": seed, "episode": episode, "lr": lr, "batch": batch,
              "minibatch": minibatch, "epochs": epochs, "clip": clip, "gamma": gamma,
              "lambda": lam, "kl_coeff": kl_coeff, "kl_target": kl_target, "init": init,
              "bc_episodes": bc_episodes, "bc_epochs": bc_epochs,
              "validation_seeds": list(validation)}
    from dmlopt.contract import check_run_size, limits_from

    eps = Episodes(topology, dataset, episode)
    net = eps.base.net
    check_run_size(f"training nara-netfit on {topology}", L.estimate(
        net.n_nodes, net.n_links, net.n_servers, steps=steps + bc_episodes * episode * bc_epochs,
        batch=batch, minibatch=minibatch, epochs=epochs, episode_steps=episode,
        val_episodes=len(validation), eval_every=eval_every), limits_from(size_limit))
    g = eps.graph
    params = NN.init_params(seed=seed)
    opt_pi = Adam(params, NN.POLICY_KEYS, lr)
    opt_v = Adam(params, NN.VALUE_KEYS, lr)
    rng = np.random.default_rng(seed)
    state = T.TrainState(params, opt_pi, opt_v, rng, kl_coeff,
                         extra={"init_val": -1.0, "agree": -1.0}, episode_steps=episode)

    def val() -> float:
        return validate(params, topology, dataset, validation)

    def start(t0: float) -> dict[str, float]:
        """The initial policy: netfit-probe cloned (or random), validated."""
        init_val, agree = -1.0, -1.0
        if init == "netfit-probe" and bc_episodes and bc_epochs:
            tb = _teacher_batch(eps, rng, bc_episodes)
            agree = clone(params, Adam(params, NN.POLICY_KEYS, BC_LR),
                          Adam(params, NN.VALUE_KEYS, BC_LR), g, tb, rng, epochs=bc_epochs,
                          minibatch=minibatch, gamma=gamma)
        if validation:
            init_val = val()
        print(f"initial policy ({init}): teacher agreement {agree:.3f}, validation "
              f"{init_val:.3f}, {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
        return {"init_val": init_val, "agree": agree}

    def update(b: dict[str, Any], kl: float) -> dict[str, float]:
        return ppo_update(params, opt_pi, opt_v, g, b, rng, minibatch=minibatch, epochs=epochs,
                          clip=clip, kl_coeff=kl)

    def card(st: T.TrainState, wall: float) -> dict[str, Any]:
        init_val, agree = st.extra["init_val"], st.extra["agree"]
        return T.model_card(
            st, wall, config, selected="best validation PPO iterate",
            model="nara-netfit (ours, not the paper's agent): netfit-probe's candidates + "
                  "reject scored by an MLP (32, 16) on netfit features and the paper's "
                  "GraphSAGE 3x16 embedding of the candidate's servers; numpy",
            extra={"init": init, "teacher_agreement": agree if agree >= 0 else None,
                   "init_validation_acceptance": init_val if init_val >= 0 else None},
            command=f"dmlopt train nara --arch netfit --topology {topology} --dataset "
                    f"{dataset} --steps {steps} --seed {seed} --episode {episode} --batch "
                    f"{batch} --lr {lr:g} --epochs {epochs} --gamma {gamma:g} --lambda "
                    f"{lam:g} --init {init} -o {out.name}")

    arch = T.Arch(
        desc=f"nara-netfit {topology}/{dataset}",
        title=f"nara-netfit PPO, {topology} / {dataset}, seed {seed}",
        train_label=f"training (stochastic, {episode} req.)",
        collect=lambda n: collect(eps, params, rng, n),
        value_input=lambda b: NN.value_input(g, b),
        update=update, card=card, save=NN.save, start=start,
        validate=val if validation else None)
    return T.train_loop(arch, state, out, config, gamma=gamma, lam=lam, kl_target=kl_target,
                        eval_every=eval_every, resume=resume, progress=progress)


def _teacher_batch(eps: Episodes, rng: np.random.Generator, n_episodes: int
                   ) -> dict[str, Any]:
    """``n_episodes`` complete episodes played by the teacher."""
    parts = [collect(eps, None, rng, 1, teacher=True) for _ in range(n_episodes)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]
            if isinstance(parts[0][k], np.ndarray)}
