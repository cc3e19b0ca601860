"""PPO's update for Nara's policies (paper 001, section 3.3, Appendix E.3), in numpy.

Shared by the paper's policy (:mod:`.learn`) and ours, ``nara-netfit``
(:mod:`.nara_netfit_learn`): what differs between them is only the policy's forward and backward
pass, given here as two functions. PPO [30] as RLlib runs it: clipped surrogate, KL(old || new)
penalty with RLlib's adaptive coefficient, optional entropy bonus, GAE(gamma, lambda) over
complete episodes, a separate value network regressed on the returns. Our deviations (module
docstrings of the two trainers): advantages normalised per minibatch, value loss
0.5 ((V - R) / 10)^2 without RLlib's value-loss clip, gradients clipped to global norm 1 per
network (:class:`Adam`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dmlopt.models.nara import policy as P

#: the policy's batched forward pass: (minibatch indices, backward cache to fill) -> logits
Logits = Callable[[np.ndarray, dict[str, Any]], np.ndarray]
#: the policy's backward pass: (cache of the forward, d loss / d logits) -> gradients
Backward = Callable[[dict[str, Any], np.ndarray], dict[str, np.ndarray]]


class Adam:
    """Adam over a dict of arrays (Kingma & Ba), with global-norm gradient clipping."""

    def __init__(self, params: dict[str, np.ndarray], keys: list[str], lr: float,
                 clip: float = 1.0, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
        self.keys, self.lr, self.clip, self.b1, self.b2, self.eps = keys, lr, clip, b1, b2, eps
        self.m = {k: np.zeros_like(params[k]) for k in keys}
        self.v = {k: np.zeros_like(params[k]) for k in keys}
        self.t = 0

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        norm = np.sqrt(sum(float((grads[k] ** 2).sum()) for k in self.keys))
        scale = min(1.0, self.clip / max(norm, 1e-12)) if self.clip else 1.0
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for k in self.keys:
            gk = grads[k] * scale
            self.m[k] = self.b1 * self.m[k] + (1 - self.b1) * gk
            self.v[k] = self.b2 * self.v[k] + (1 - self.b2) * gk * gk
            params[k] -= self.lr * (self.m[k] / c1) / (np.sqrt(self.v[k] / c2) + self.eps)

    def state(self, prefix: str) -> dict[str, np.ndarray]:
        out = {f"{prefix}m_{k}": v for k, v in self.m.items()}
        out.update({f"{prefix}v_{k}": v for k, v in self.v.items()})
        out[f"{prefix}t"] = np.array(self.t)
        return out

    def load(self, z: dict[str, np.ndarray], prefix: str) -> None:
        for k in self.keys:
            self.m[k], self.v[k] = z[f"{prefix}m_{k}"], z[f"{prefix}v_{k}"]
        self.t = int(z[f"{prefix}t"])


def advantages(reward: np.ndarray, done: np.ndarray, values: np.ndarray, gamma: float,
               lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE(gamma, lambda) advantages and value targets over complete episodes."""
    adv = np.zeros(len(reward))
    last = 0.0
    for i in range(len(reward) - 1, -1, -1):
        nxt = 0.0 if done[i] else values[i + 1]
        delta = reward[i] + gamma * nxt - values[i]
        last = delta + (0.0 if done[i] else gamma * lam * last)
        adv[i] = last
    return adv, adv + values


def adapt_kl_coeff(kl: float, kl_coeff: float, kl_target: float) -> float:
    """RLlib's adaptive KL coefficient: x1.5 above twice the target, x0.5 below half of it."""
    if kl > 2 * kl_target:
        return kl_coeff * 1.5
    if kl < 0.5 * kl_target:
        return kl_coeff * 0.5
    return kl_coeff


def ppo_epochs(params: dict[str, np.ndarray], opt_pi: Adam, opt_v: Adam, batch: dict[str, Any],
               rng: np.random.Generator, logits: Logits, backward: Backward,
               value_in: np.ndarray, *, minibatch: int, epochs: int, clip: float,
               kl_coeff: float, entropy: float = 0.0) -> dict[str, float]:
    """One PPO update on ``batch`` (clipped surrogate + KL penalty [+ entropy]; value
    regression): ``epochs`` passes over random minibatches, one Adam step per network each.

    ``batch`` holds ``mask``, ``action``, ``logp`` and ``probs`` (the sampling policy's), ``adv``
    and ``ret`` (:func:`advantages`); ``value_in`` is the value network's input for all of it.
    Returns the mean policy loss, value loss and KL over the minibatches.
    """
    n = len(batch["action"])
    pl, vl, kls = [], [], []
    for _ in range(epochs):
        perm = rng.permutation(n)
        for s in range(0, n, minibatch):
            idx = perm[s:s + minibatch]
            B = len(idx)
            mask = batch["mask"][idx]
            cache: dict[str, Any] = {}
            lp = P.log_softmax(logits(idx, cache))
            pr = np.where(mask, np.exp(lp), 0.0)
            a = batch["action"][idx]
            ratio = np.exp(lp[np.arange(B), a] - batch["logp"][idx])
            A = batch["adv"][idx]
            A = (A - A.mean()) / (A.std() + 1e-8)
            unclipped, clipped = ratio * A, np.clip(ratio, 1 - clip, 1 + clip) * A
            pl.append(float(-np.minimum(unclipped, clipped).mean()))
            # d(-mean min(...))/d logp_a = -ratio A / B where min picks the unclipped term
            dlpa = np.where(unclipped <= clipped, -ratio * A, 0.0) / B
            onehot = np.zeros_like(pr)
            onehot[np.arange(B), a] = 1.0
            dlogit = dlpa[:, None] * (onehot - pr)
            # KL(old || new) penalty: d/dlogit = p_new - p_old
            pold = batch["probs"][idx]
            with np.errstate(divide="ignore", invalid="ignore"):
                kl = np.where(mask & (pold > 0), pold * (np.log(pold) - lp), 0.0).sum(1)
            kls.append(float(kl.mean()))
            dlogit += kl_coeff * (pr - pold) / B
            if entropy:
                lpm = np.where(mask, lp, 0.0)
                H = -(pr * lpm).sum(axis=1, keepdims=True)
                dlogit += entropy * pr * (lpm + H) / B  # d(-entropy * H)/dlogit
            opt_pi.step(params, backward(cache, np.where(mask, dlogit, 0.0)))
            vc: dict[str, Any] = {}
            v = P.value(params, value_in[idx], vc)
            err = (v - batch["ret"][idx]) / P.VALUE_SCALE
            vl.append(float(0.5 * (err ** 2).mean()))
            opt_v.step(params, P.backward_value(params, vc, err / P.VALUE_SCALE / B))
    return {"policy_loss": float(np.mean(pl)), "value_loss": float(np.mean(vl)),
            "kl": float(np.mean(kls))}
