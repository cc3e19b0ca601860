"""Nara's DCN environment as a real :class:`gymnasium.Env` (paper 001, section 3.2, Appendix E.1).

Event-driven: one *step* is one action = one server picked for the awaiting request; the
episode ends after the last request. The transitions are those of
:class:`dmlopt.models.nara.sim.State` (section 3.2, rules (i)-(iv)):

(i)   a pick that breaks constraint 3 drops the request (reward y = -10);
(ii)  otherwise min(free, remaining) CPU and memory are taken from the server (reward z = 0);
(iii) once CPU and memory are covered, the bandwidth is reserved on the routes and the request
      is allocated (reward x = +10);
(iv)  releases happen before the next request is offered.

Observation (a :class:`gymnasium.spaces.Dict`, shapes fixed per environment instance):

* ``"state"``: the paper's 3-tuple <c_util, m_util, t_r> (section 3.2): CPU and memory
  utilisation of the DC and the holding period of the awaiting request (raw steps);
* ``"nodes"``: (N, 8) raw features of every DCN node (servers, then switches, node order of the
  topology), scaled relative to the awaiting request (Appendix E.1 names [cpu, memory,
  bandwidth, selected] and gives dimension 8; our 8, a documented choice): free CPU / remaining
  c, free memory / remaining m, free access-link bandwidth / b (each clipped to [0, 4]),
  selected (0/1), free CPU and memory as fractions of the server's capacity, server (0/1), and
  the action mask (the pick is allowed). Switch nodes have all-zero features (their state
  reaches the GNN through the link features);
* ``"links"``: (L, 2) raw link features for the GNN's messages: free bandwidth / b (clipped to
  [0, 4]) and 1[free >= b].

Action: ``Discrete(S)``, a server index (``reject=True``: ``Discrete(S + 1)``, action S rejects
the awaiting request with reward z = 0; not in the paper, for admission-control agents and for
replaying an allocator's decisions). Masks (sb3-contrib MaskablePPO convention):
``info["action_mask"]`` and :meth:`NaraEnv.action_masks`. With ``mask="feasible"`` (default)
only servers that still give some of the remaining CPU or memory *and* keep constraint 3 are
allowed, so rule (i) never fires through a masked policy; ``mask="useful"`` is the paper's mask
(section 3.3.2: only servers with no remaining resource are masked), under which rule (i) and
its -10 happen. When no server is allowed the request is dropped with reward 0 (our rule: the
paper's agent always has an action; a feasible-masked one may not).

Episodes: with an ``instance`` every reset replays it; otherwise each reset draws a fresh
episode of ``n_requests`` requests of ``dataset`` on ``topology`` (generators of
:mod:`dmlopt.models.nara`) with a seed from the environment's ``np_random``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from dmlopt.models import nara
from dmlopt.models.nara.policy import CLIP, LINK_FEATURES, NODE_FEATURES, graph_of, observe
from dmlopt.models.nara.sim import State

__all__ = ["NaraEnv", "graph_of", "observe"]
#: smallest generator seed of a drawn training episode
TRAIN_SEED_MIN = 10**6


class NaraEnv(gym.Env):
    """Nara's event-driven DCN allocation environment (module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, instance: nara.Instance | None = None, *, topology: str = "alpha",
                 dataset: str = "uniform", n_requests: int = 32, mask: str = "feasible",
                 reject: bool = False,
                 rewards: tuple[float, float, float] = (10.0, -10.0, 0.0)) -> None:
        from dmlopt.errors import InstanceError

        if mask not in ("feasible", "useful"):
            raise InstanceError("mask", mask, "must be 'feasible' or 'useful'")
        if instance is None:
            if dataset not in nara.GENERATORS:
                raise InstanceError("dataset", dataset,
                                    f"is not one of {', '.join(nara.GENERATORS)}")
            if n_requests < 1:
                raise InstanceError("n_requests", n_requests, "must be >= 1")
            instance = nara.GENERATORS[dataset](seed=0, topology=topology,
                                                n_requests=n_requests)
            self._draw = True
        else:
            self._draw = False
        self.base = instance
        self.topology = topology
        self.instance = instance
        self.dataset = dataset
        self.n_requests = len(instance.requests)
        self.mask_mode = mask
        self.reject = reject
        self.rewards = rewards
        net = instance.net
        self.n_nodes, self.n_servers, self.n_links = net.n_nodes, net.n_servers, net.n_links
        self.graph = graph_of(instance)
        N, L = self.n_nodes, self.n_links
        self.observation_space = gym.spaces.Dict({
            "state": gym.spaces.Box(0.0, 1e9, (3,), dtype=np.float32),
            "nodes": gym.spaces.Box(0.0, CLIP, (N, NODE_FEATURES), dtype=np.float32),
            "links": gym.spaces.Box(0.0, CLIP, (L, LINK_FEATURES), dtype=np.float32),
        })
        self.n_actions = self.n_servers + int(reject)
        self.action_space = gym.spaces.Discrete(self.n_actions)
        self.state: State | None = None
        self.j = 0
        self._mask = np.zeros(self.n_actions, dtype=bool)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        if self._draw:
            # generator seeds >= 10**6: never a benchmark seed (those are < 1000)
            ep_seed = int(self.np_random.integers(TRAIN_SEED_MIN, 2**31 - 1))
            fresh = nara.GENERATORS[self.dataset](seed=ep_seed, topology=self.topology,
                                                  n_requests=self.n_requests)
            # reuse the topology arrays of the base instance (candidate paths are costly)
            self.instance = self.base.model_copy(update={"requests": fresh.requests})
        self.state = State(self.instance)
        self.j = 0
        self.accepted = 0
        self._begin()
        return self._obs(), self._info()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool,
                                         dict[str, Any]]:
        st = self.state
        if st is None or st.req is None:
            raise RuntimeError("call reset() first; the episode is over")
        x, y, z = self.rewards
        a = int(action)
        if self.reject and a == self.n_servers:
            st.drop()
            self.j += 1
            return self._obs(), z, self._begin(), False, self._info("rejected")
        if not 0 <= a < self.n_servers or not st.is_useful(a):
            raise ValueError(f"action: {a} is masked out")
        if self.mask_mode == "feasible" and not self._mask[a]:
            raise ValueError(f"action: {a} is masked out (breaks constraint 3)")
        if not st.add(a):  # rule (i)
            st.drop()
            reward, outcome = y, "dropped"
        elif st.covered:  # rule (iii)
            st.finish()
            self.accepted += 1
            reward, outcome = x, "allocated"
        else:  # rule (ii)
            self._mask = self._compute_mask()
            if self._mask.any():
                return self._obs(), z, False, False, self._info("partial")
            st.drop()  # no allowed server left: dropped, reward z (module docstring)
            reward, outcome = z, "stuck"
        self.j += 1
        done = self._begin()
        return self._obs(), reward, done, False, self._info(outcome)

    def action_masks(self) -> np.ndarray:
        """(n_actions,) bool: the actions allowed now (sb3-contrib convention)."""
        return self._mask.copy()

    def solution(self) -> nara.Solution:
        """The episode's allocations (for :func:`dmlopt.models.nara.evaluate`)."""
        return self.state.solution()

    # ------------------------------------------------------------------ internals
    def _begin(self) -> bool:
        """Offer the next request that has an allowed server (rule (iv) first); requests with
        none are dropped on arrival. True when the episode is over."""
        st = self.state
        while self.j < self.n_requests:
            st.begin(self.j)
            self._mask = self._compute_mask()
            if self._mask.any():
                return False
            st.drop()
            self.j += 1
        self._mask = np.zeros(self.n_actions, dtype=bool)
        return True

    def _compute_mask(self) -> np.ndarray:
        st = self.state
        m = st.feasible() if self.mask_mode == "feasible" else st.useful()
        return np.append(m, True) if self.reject else m

    def _info(self, outcome: str = "") -> dict[str, Any]:
        return {"action_mask": self._mask.copy(), "request": self.j, "outcome": outcome,
                "accepted": self.accepted}

    def _obs(self) -> dict[str, np.ndarray]:
        return observe(self.state, self._mask[:self.n_servers])
