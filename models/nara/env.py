"""Nara's DCN environment as a real :class:`gymnasium.Env` (paper 001, section 3.2, Appendix E.1).

Event-driven: one *step* is one action = one server picked for the awaiting request; the
episode ends after the last request. The transitions are those of
:class:`dmlopt.models.nara.sim.State` (section 3.2, rules (i)-(iv)):

(i)   a pick that breaks constraint 3 drops the request (reward y = -10);
(ii)  otherwise min(free, remaining) CPU and memory are taken from the server (reward z = 0);
(iii) once CPU and memory are covered, the bandwidth is reserved on the routes and the request
      is allocated (reward x = +10);
(iv)  releases happen before the next request is offered.

Observation (a :class:`gymnasium.spaces.Dict`, shapes fixed per environment instance; every
value is float32 in [0, 4] and the space declares these bounds):

* ``"state"``: the paper's 3-tuple <c_util, m_util, t_r> (section 3.2): CPU and memory
  utilisation of the DC (in [0, 1]) and the holding period of the awaiting request in units of
  U = the number of servers rounded up to a power of two (:func:`.policy.time_unit`: 64 on alpha
  and beta, 1024 on gamma, 4096 on delta), clipped to [0, 4]. The generators' mean holding
  period grows with the number of servers, so t_r / U stays below 1.5 on every shipped topology
  and request set at their default load; the power of two makes the scaling exact in float32;
* ``"nodes"``: (N, 8) raw features of every DCN node (servers, then switches, node order of the
  topology), scaled relative to the awaiting request (Appendix E.1 names [cpu, memory,
  bandwidth, selected] and gives dimension 8; our 8, a documented choice): free CPU / remaining
  c, free memory / remaining m, free access-link bandwidth / b (each clipped to [0, 4]),
  selected (0/1), free CPU and memory as fractions of the server's capacity, server (0/1), and
  the action mask (the pick is allowed). Switch nodes have all-zero features (their state
  reaches the GNN through the link features);
* ``"links"``: (L, 2) raw link features for the GNN's messages: free bandwidth / b (clipped to
  [0, 4]) and 1[free >= b].

After the last request (``terminated``) the node and link features are zero.

Action: ``Discrete(S)``, a server index (``reject=True``: ``Discrete(S + 1)``, action S rejects
the awaiting request with reward z = 0; not in the paper, for admission-control agents and for
replaying an allocator's decisions). An action that is not an integer (a float, a string, a
boolean) or lies outside the space raises :class:`dmlopt.errors.InstanceError` (a
``ValueError``) saying which.

Masks (sb3-contrib MaskablePPO convention): ``info["action_mask"]`` and
:meth:`NaraEnv.action_masks`, int8 arrays of 0/1 (what :meth:`gymnasium.spaces.Discrete.sample`
takes as ``mask``). With ``mask="feasible"`` (default) only servers that still give some of the
remaining CPU or memory *and* keep constraint 3 are allowed, so rule (i) never fires through a
masked policy; ``mask="useful"`` is the paper's mask (section 3.3.2: only servers with no
remaining resource are masked), under which rule (i) and its -10 happen. When no server is
allowed the request is dropped with reward 0 (our rule: the paper's agent always has an action; a
feasible-masked one may not). The mask returned with the terminal observation allows every
action (none is ever all zero, so a vector environment's finished sub-environment never hands
a policy an empty mask); the action taken there is ignored by the reset that follows.

A masked-out action: ``invalid_action="raise"`` (default) raises ``InstanceError`` naming the
server and why it is masked; ``invalid_action="drop"`` drops the awaiting request with rule
(i)'s reward y = -10, so every action of the space is legal (for agents without masking, e.g.
plain PPO or DQN, and for Stable-Baselines3's ``check_env``).

Episodes: with an ``instance`` every reset replays it; otherwise each reset draws a fresh
episode of ``n_requests`` requests of ``dataset`` on ``topology`` (generators of
:mod:`dmlopt.models.nara`) with a seed from the environment's ``np_random``. The arguments are
checked like ``dmlopt generate``'s (a boolean or a string is not a number; the generator's
estimate against the size limit) before anything is allocated.

Registered with Gymnasium as ``dmlopt/Nara-v0`` when ``dmlopt`` is imported
(``gymnasium.make("dmlopt/Nara-v0", topology="beta", dataset="azure", n_requests=64)``).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import gymnasium as gym
import numpy as np

from dmlopt.errors import InstanceError
from dmlopt.models import nara
from dmlopt.models.nara.policy import CLIP, LINK_FEATURES, NODE_FEATURES, graph_of, observe
from dmlopt.models.nara.sim import State

__all__ = ["NaraEnv", "graph_of", "observe"]
#: smallest generator seed of a drawn training episode
TRAIN_SEED_MIN = 10**6
#: what a masked-out action does (module docstring)
INVALID_ACTIONS = ("raise", "drop")
MASKS = ("feasible", "useful")


def _choice(field: str, value: Any, options: tuple[str, ...] | list[str]) -> str:
    if not isinstance(value, str) or value not in options:
        raise InstanceError(field, value, f"must be one of {', '.join(map(repr, options))}")
    return value


def _flag(field: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise InstanceError(field, value, "must be True or False")
    return bool(value)


def _rewards(value: Any) -> tuple[float, float, float]:
    rule = "must be three finite numbers (allocated x, dropped y, otherwise z)"
    if not isinstance(value, tuple | list) or len(value) != 3:
        raise InstanceError("rewards", value, rule)
    for r in value:
        if isinstance(r, bool | np.bool_) or not isinstance(r, Real) or not math.isfinite(r):
            raise InstanceError("rewards", value, rule)
    return (float(value[0]), float(value[1]), float(value[2]))


class NaraEnv(gym.Env):
    """Nara's event-driven DCN allocation environment (paper 001, section 3.2).

    Parameters
    ----------
    instance : dmlopt.models.nara.Instance, optional
        An episode to replay at every reset; None (default) draws a fresh one per reset.
    topology : {"alpha", "beta", "gamma", "delta"}
        Shipped topology of drawn episodes.
    dataset : {"uniform", "azure", "alibaba"}
        Request generator of drawn episodes.
    n_requests : int
        Requests per drawn episode (>= 1, within the size limit).
    mask : {"feasible", "useful"}
        The action mask (module docstring).
    reject : bool
        Add a reject action (index S).
    invalid_action : {"raise", "drop"}
        What a masked-out action does: raise, or drop the request with reward y.
    rewards : tuple of 3 floats
        (x, y, z): allocated, dropped by rule (i) or an invalid action, any other step.
    size_limit : optional
        As for :func:`dmlopt.generate` (:func:`dmlopt.contract.limits_from`).

    References
    ----------
    Shabka, Zervas: Nara (paper 001), section 3.2 (environment) and Appendix E.1 (features).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, instance: nara.Instance | None = None, *, topology: str = "alpha",
                 dataset: str = "uniform", n_requests: int = 32, mask: str = "feasible",
                 reject: bool = False, invalid_action: str = "raise",
                 rewards: tuple[float, float, float] = (10.0, -10.0, 0.0),
                 size_limit: Any = None, render_mode: str | None = None) -> None:
        if render_mode is not None:  # Gymnasium's make passes it to every environment
            raise InstanceError("render_mode", render_mode,
                                "must be None: NaraEnv has no render modes")
        self.render_mode = None
        self.mask_mode = _choice("mask", mask, MASKS)
        self.reject = _flag("reject", reject)
        self.invalid_action = _choice("invalid_action", invalid_action, INVALID_ACTIONS)
        self.rewards = _rewards(rewards)
        if instance is None:
            from dmlopt.api import validate_options
            from dmlopt.contract import Size, check_run_size, limits_from

            dataset = _choice("dataset", dataset, list(nara.GENERATORS))
            if n_requests is None:  # the generator's "per topology" default has no meaning here
                raise InstanceError("n_requests", None, "must be an integer number of requests "
                                    "per episode")
            entry = nara.GENERATORS[dataset]
            params = validate_options(entry.Params,
                                      {"topology": topology, "n_requests": n_requests},
                                      dataset, "param")
            n = int(params.n_requests)
            check_run_size(f"NaraEnv(topology={params.topology!r}, dataset={dataset!r}, "
                           f"n_requests={n}) (its generator, at every reset)",
                           Size(*entry.estimate(params)), limits_from(size_limit))
            # the topology and its candidate paths; the requests are drawn at every reset
            instance = entry(seed=0, topology=params.topology, n_requests=1)
            self.topology, self.n_requests, self._draw = params.topology, n, True
        elif isinstance(instance, nara.Instance):
            self.topology, self.n_requests, self._draw = topology, len(instance.requests), False
        else:
            raise InstanceError("instance", type(instance).__name__,
                                "must be a nara Instance (dmlopt.generate('nara', ...) or "
                                "dmlopt.load) or None")
        self.base = instance
        self.instance = instance
        self.dataset = dataset
        net = instance.net
        self.n_nodes, self.n_servers, self.n_links = net.n_nodes, net.n_servers, net.n_links
        self.graph = graph_of(instance)
        N, L = self.n_nodes, self.n_links
        self.observation_space = gym.spaces.Dict({
            "state": gym.spaces.Box(np.zeros(3, dtype=np.float32),
                                    np.array([1.0, 1.0, CLIP], dtype=np.float32),
                                    dtype=np.float32),
            "nodes": gym.spaces.Box(0.0, CLIP, (N, NODE_FEATURES), dtype=np.float32),
            "links": gym.spaces.Box(0.0, CLIP, (L, LINK_FEATURES), dtype=np.float32),
        })
        self.n_actions = self.n_servers + int(self.reject)
        self.action_space = gym.spaces.Discrete(self.n_actions)
        self.state: State | None = None
        self.j = 0
        self.accepted = 0
        self._mask = np.ones(self.n_actions, dtype=bool)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode (a fresh draw, or the instance again).

        Parameters
        ----------
        seed : int, optional
            Seeds ``np_random`` (which draws the episode's generator seed).
        options : dict, optional
            Unused (``None`` or a dict, as Gymnasium's API has it).

        Returns
        -------
        tuple
            The first request's observation and the info dict (``action_mask``, ``request``,
            ``outcome``, ``accepted``).
        """
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)
                                 or seed < 0):
            raise InstanceError("seed", seed, "must be None or a non-negative integer")
        if options is not None and not isinstance(options, dict):
            raise InstanceError("options", options, "must be None or a dict")
        super().reset(seed=None if seed is None else int(seed))
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
        """Pick a server for the awaiting request (or reject it).

        Parameters
        ----------
        action : int
            A server index in ``0..S-1``, or S (reject) with ``reject=True``; a Python or
            numpy integer (or a 0-d integer array).

        Returns
        -------
        tuple
            (observation, reward, terminated, truncated, info) with the awaiting request's
            observation (the next request's after a request is allocated, dropped or
            rejected); ``info["outcome"]`` is ``"partial"``, ``"allocated"``, ``"dropped"``,
            ``"stuck"`` (no allowed server left, dropped), ``"rejected"`` or ``"invalid"``
            (a masked-out action under ``invalid_action="drop"``).
        """
        st = self.state
        if st is None:
            raise RuntimeError("NaraEnv.step: call reset() first (no episode has started)")
        if st.req is None:
            raise RuntimeError("NaraEnv.step: the episode is over; call reset()")
        a = self._action(action)
        x, y, z = self.rewards
        if self.reject and a == self.n_servers:
            st.drop()
            return self._next(z, "rejected")
        if not self._mask[a]:
            if self.invalid_action == "raise":
                raise InstanceError("action", a, f"is masked out: {self._why(a)} (pass "
                                    "invalid_action='drop' to drop the request instead)")
            st.drop()
            return self._next(y, "invalid")
        if not st.add(a):  # rule (i), only under mask="useful"
            st.drop()
            return self._next(y, "dropped")
        if st.covered:  # rule (iii)
            st.finish()
            self.accepted += 1
            return self._next(x, "allocated")
        # rule (ii)
        self._mask = self._compute_mask()
        if self._mask.any():
            return self._obs(), z, False, False, self._info("partial")
        st.drop()  # no allowed server left: dropped, reward z (module docstring)
        return self._next(z, "stuck")

    def action_masks(self) -> np.ndarray:
        """The actions allowed now (sb3-contrib's MaskablePPO calls this).

        Returns
        -------
        numpy.ndarray
            (n_actions,) int8 of 0/1, never all zero (every action after the last request).
        """
        return self._mask.astype(np.int8)

    def solution(self) -> nara.Solution:
        """The episode's allocations so far (unplaced requests are None).

        Returns
        -------
        dmlopt.models.nara.Solution
            For :func:`dmlopt.models.nara.evaluate` (with ``env.instance``).
        """
        if self.state is None:
            raise RuntimeError("NaraEnv.solution: call reset() first (no episode has started)")
        return self.state.solution()

    # ------------------------------------------------------------------ internals
    def _action(self, action: Any) -> int:
        """The action as an int; InstanceError saying what is wrong otherwise."""
        ok = isinstance(action, int | np.integer) and not isinstance(action, bool)
        if not ok and isinstance(action, np.ndarray) and action.shape == () \
                and np.issubdtype(action.dtype, np.integer):
            action, ok = action.item(), True
        if not ok:
            raise InstanceError("action", action, f"is a {type(action).__name__}, not an "
                                f"integer action of {self.action_space}")
        a = int(action)
        if not 0 <= a < self.n_actions:
            raise InstanceError("action", a, f"is outside {self.action_space} (actions 0.."
                                f"{self.n_actions - 1})")
        return a

    def _why(self, a: int) -> str:
        """Why server ``a`` is masked out now."""
        st = self.state
        if a in st.selected:
            return f"server {a} is already picked for this request"
        if not st.is_useful(a):
            return f"server {a} has none of the CPU or memory the request still needs"
        return (f"picking server {a} breaks constraint 3 (no candidate path with >= "
                f"{st.req.b:g} free to the servers already picked)")

    def _next(self, reward: float, outcome: str) -> tuple[dict[str, np.ndarray], float, bool,
                                                          bool, dict[str, Any]]:
        """Move on to the next request (rule (iv)) after the awaiting one was decided."""
        self.j += 1
        done = self._begin()
        return self._obs(), reward, done, False, self._info(outcome)

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
        self._mask = np.ones(self.n_actions, dtype=bool)  # terminal: never an empty mask
        return True

    def _compute_mask(self) -> np.ndarray:
        st = self.state
        m = st.feasible() if self.mask_mode == "feasible" else st.useful()
        return np.append(m, True) if self.reject else m

    def _info(self, outcome: str = "") -> dict[str, Any]:
        return {"action_mask": self._mask.astype(np.int8), "request": self.j,
                "outcome": outcome, "accepted": self.accepted}

    def _obs(self) -> dict[str, np.ndarray]:
        return observe(self.state, self._mask[:self.n_servers])
