"""NaraEnv as RL libraries use it: Gymnasium registration, the reject observation, the "drop"
mode for unmasked agents, int8 masks, vector environments, bounded observations, action and
argument checks, and the shipped policies' golden decisions on every BLAS kernel."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import time
import warnings

import gymnasium as gym
import numpy as np
import pytest

import dmlopt
from dmlopt.errors import InstanceError, ModelTooLargeError
from dmlopt.heuristics.nara import agent
from dmlopt.models import nara
from dmlopt.models.nara import NaraEnv
from dmlopt.models.nara import policy as P
from dmlopt.models.nara.generators import DISTRIBUTIONS, holding_mean, load_topology
from dmlopt.models.nara.sim import State

TOPOLOGIES = ("alpha", "beta", "gamma", "delta")
DATASETS = ("uniform", "azure", "alibaba")


def _inst(n: int = 24, seed: int = 1, dist: str = "uniform", topology: str = "alpha"):
    return nara.GENERATORS[dist](seed=seed, topology=topology, n_requests=n)


# ------------------------------------------------------------------------------ registration
def test_import_dmlopt_registers_without_importing_gymnasium():
    """Both import orders register dmlopt/Nara-v0; `import dmlopt` alone imports no
    gymnasium."""
    code = ("import sys, dmlopt\n"
            "print('gymnasium' in sys.modules)\n"
            "import gymnasium\n"
            "print('dmlopt/Nara-v0' in gymnasium.registry)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]
    code = "import gymnasium, dmlopt\nprint('dmlopt/Nara-v0' in gymnasium.registry)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True"]


def test_registered_ids_are_the_declared_entry_points():
    import tomllib
    from pathlib import Path

    from dmlopt import registry

    root = Path(__file__).resolve().parents[2]
    eps = tomllib.loads((root / "pyproject.toml").read_text())["project"]["entry-points"]
    declared = {f"dmlopt/{k}": v for k, v in eps["dmlopt.gym_envs"].items()}
    assert registry.gym_envs() == declared
    for env_id, entry in declared.items():
        assert gym.spec(env_id).entry_point == entry
    registry.register_gym_envs()  # a second registration changes nothing, warns nothing
    assert gym.spec("dmlopt/Nara-v0").entry_point == declared["dmlopt/Nara-v0"]


def test_gym_make_passes_kwargs_and_sets_spec():
    env = gym.make("dmlopt/Nara-v0", topology="beta", dataset="azure", n_requests=9,
                   reject=True, invalid_action="drop")
    assert env.spec.id == "dmlopt/Nara-v0"
    assert env.spec.kwargs == {"topology": "beta", "dataset": "azure", "n_requests": 9,
                               "reject": True, "invalid_action": "drop"}
    raw = env.unwrapped
    assert isinstance(raw, NaraEnv)
    beta = load_topology("beta")
    assert raw.n_servers == sum(n.kind == "server" for n in beta.nodes) == 40
    assert raw.n_requests == 9
    assert env.action_space == gym.spaces.Discrete(raw.n_servers + 1)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    # the episode is the azure generator's, drawn with a seed >= 10**6
    assert len(raw.instance.requests) == 9
    assert all(r.c in {1, 2, 4, 8, 17, 25, 50} for r in raw.instance.requests)


# ------------------------------------------------------------------------------ transitions
def test_reject_observation_is_the_next_requests():
    inst = _inst(12, seed=4)
    env = NaraEnv(inst, reject=True)
    env.reset()
    assert env.j == 0
    obs, r, done, _, info = env.step(env.n_servers)  # reject request 0
    assert (r, done, info["outcome"], info["request"]) == (0.0, False, "rejected", 1)
    # the simulator by hand: request 0 dropped, request 1 offered on the empty DC
    st = State(inst)
    st.begin(0)
    st.drop()
    req = st.begin(1)
    free = st.feasible()
    assert free.any()
    S = inst.net.n_servers
    sv = env.graph["server_node"]
    assert obs["state"][2] == np.float32(req.t) / np.float32(64)  # alpha: U = 64
    cpu = np.clip(st.cpu_free / req.c, 0, 4).astype(np.float32)
    assert np.array_equal(obs["nodes"][sv, 0], cpu)
    assert np.array_equal(obs["nodes"][sv, 7], np.append(free, True)[:S].astype(np.float32))
    assert obs["nodes"][sv, 6].sum() == S  # server flags: not the all-zero terminal features
    assert np.array_equal(info["action_mask"], np.append(free, True).astype(np.int8))


@pytest.mark.parametrize(("mask", "reject"), [("feasible", False), ("useful", True)])
def test_drop_mode_runs_whole_episodes_of_unmasked_random_actions(mask, reject):
    inst = _inst(40, seed=2)
    env = NaraEnv(inst, mask=mask, reject=reject, invalid_action="drop")
    rng = np.random.default_rng(0)
    for episode in range(2):
        obs, info = env.reset(seed=episode)
        done, total, counts = False, 0.0, {}
        while not done:
            a = int(rng.integers(env.action_space.n))  # no mask
            was_allowed = bool(info["action_mask"][a])
            obs, r, done, trunc, info = env.step(a)
            assert env.observation_space.contains(obs) and not trunc
            counts[info["outcome"]] = counts.get(info["outcome"], 0) + 1
            assert (info["outcome"] == "invalid") == (not was_allowed)
            assert r == {"invalid": -10.0, "dropped": -10.0, "allocated": 10.0}.get(
                info["outcome"], 0.0)
            total += r
        assert counts.get("invalid", 0) > 0
        ev = nara.evaluate(inst, env.solution())
        assert ev.feasible and ev.objective == counts.get("allocated", 0) == env.accepted
        assert total == 10 * (counts.get("allocated", 0) - counts.get("invalid", 0)
                              - counts.get("dropped", 0))
        with pytest.raises(RuntimeError, match="episode is over"):
            env.step(0)


def test_int8_masks_sample_allowed_actions_and_terminal_mask_allows_all():
    inst = _inst(30, seed=5, dist="alibaba")
    env = NaraEnv(inst)
    obs, info = env.reset(seed=0)
    env.action_space.seed(0)
    done = False
    while not done:
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and set(np.unique(mask)) <= {0, 1}
        assert np.array_equal(mask, env.action_masks())
        st = env.state  # allowed = useful and keeps constraint 3, checked server by server
        want = [int(st.is_useful(s) and st.can_add(s)) for s in range(env.n_servers)]
        assert mask.tolist() == want
        a = env.action_space.sample(mask=mask)
        assert mask[a] == 1
        obs, _, done, _, info = env.step(a)
    assert info["action_mask"].dtype == np.int8
    assert info["action_mask"].all() and env.action_masks().all()
    assert not obs["nodes"].any() and not obs["links"].any()
    assert env.observation_space.contains(obs)


def test_vector_env_masks_are_never_all_zero():
    envs = gym.vector.SyncVectorEnv(
        [lambda n=n, d=d: NaraEnv(topology="alpha", dataset=d, n_requests=n)
         for n, d in ((3, "uniform"), (4, "azure"), (5, "alibaba"))])
    obs, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(150):
        masks = infos["action_mask"]
        assert masks.dtype == np.int8 and masks.shape == (3, 40)
        assert masks.any(axis=1).all()
        assert all(m.any() for m in envs.call("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, _, term, trunc, infos = envs.step(actions)
        assert envs.observation_space.contains(obs)
        finished += int(term.sum())
    assert finished >= 6  # every sub-environment ended (and was reset) at least twice
    envs.close()


# ------------------------------------------------------------------------------ observations
def test_holding_period_scaling_stays_small_on_every_shipped_setting():
    """t_r / U < 1.5 for the largest holding period any shipped generator draws (the
    generators' upper end round(2 T - 1), T by Little's law), so the clip at 4 never acts."""
    for topology in TOPOLOGIES:
        topo = load_topology(topology)
        S = sum(n.kind == "server" for n in topo.nodes)
        unit = 2 ** math.ceil(math.log2(S))
        assert P.time_unit(S) == unit
        for dataset in DATASETS:
            t_max = round(2 * holding_mean(topo, dataset, DISTRIBUTIONS[dataset]["load"]) - 1)
            assert 0 < t_max / unit < 1.5


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_observations_are_bounded_on_every_topology_and_dataset(topology):
    rng = np.random.default_rng(1)
    n = 12 if topology in ("alpha", "beta") else 4
    for dataset in DATASETS:
        env = NaraEnv(topology=topology, dataset=dataset, n_requests=n)
        S = env.n_servers
        space = env.observation_space
        for name in ("state", "nodes", "links"):
            assert np.isfinite(space[name].high).all() and space[name].high.max() <= 4
            assert space[name].low.min() == 0
        obs, info = env.reset(seed=0)
        done = False
        while not done:
            assert space.contains(obs)
            req = env.state.req
            assert obs["state"][2] == np.float32(req.t) / np.float32(P.time_unit(S))
            assert obs["state"][2] < 1.5 and obs["state"][:2].max() <= 1
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, _, done, _, info = env.step(a)
        assert space.contains(obs)


def test_state_input_undoes_the_scaling_bit_for_bit():
    """The policy's P1 input equals float64(float32(t)) / S exactly, as before the scaling."""
    t = np.arange(1, 20_000, dtype=np.float64)
    t = np.concatenate([t, t + 0.37])
    for S in (1, 17, 40, 640, 2560):
        U = np.float32(2 ** math.ceil(math.log2(S)))
        scaled = np.minimum(t.astype(np.float32) / U, np.float32(P.CLIP))
        states = np.stack([np.zeros_like(scaled), np.zeros_like(scaled), scaled], axis=1)
        got = P.state_input(states, S)[:, 2]
        keep = t / U <= P.CLIP
        want = t.astype(np.float32).astype(np.float64)[keep] / S
        assert np.array_equal(got[keep], want)


def test_check_env_passes_for_every_mode():
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(NaraEnv(_inst(8), reject=True, invalid_action="drop"), skip_render_check=True)
        check_env(NaraEnv(_inst(8), mask="useful"), skip_render_check=True)
        check_env(gym.make("dmlopt/Nara-v0", n_requests=6).unwrapped, skip_render_check=True)


# ------------------------------------------------------------------------------ errors
def test_bad_actions_say_what_is_wrong():
    env = NaraEnv(_inst(10, seed=3))
    with pytest.raises(RuntimeError, match="call reset"):
        env.solution()
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    env.reset()
    cases = [(3.0, "is a float, not an integer action of Discrete\\(40\\)"),
             ("3", "is a str, not an integer action"),
             (True, "is a bool, not an integer action"),
             (np.array([1, 2]), "is a ndarray, not an integer action"),
             (40, "40 is outside Discrete\\(40\\) \\(actions 0..39\\)"),
             (-1, "-1 is outside Discrete\\(40\\)")]
    for action, message in cases:
        with pytest.raises(InstanceError, match=f"^action: .*{message}") as exc:
            env.step(action)
        assert exc.value.field == "action"
    assert env.solution().allocations == [None] * 10  # nothing happened
    # numpy integers and 0-d integer arrays are actions (what vector envs and SB3 pass)
    free = np.flatnonzero(env.action_masks())
    env.step(np.int64(free[0]))
    assert env.j == 0  # request 0 (c = 41) needs 5 servers: the pick was partial
    with pytest.raises(InstanceError, match=f"server {free[0]} is already picked.*"
                       "invalid_action='drop'"):
        env.step(np.array(free[0]))
    assert env.j == 0 and env.state.selected == [free[0]]  # a refused action changes nothing


def test_constructor_refuses_bad_arguments_quickly():
    bad = [({"n_requests": True}, "n_requests: True is a boolean, not a number"),
           ({"n_requests": "32"}, "n_requests: '32' is a string, not a number"),
           ({"n_requests": 0}, "n_requests: 0"),
           ({"n_requests": 2.5}, "n_requests: 2.5"),
           ({"n_requests": 10**30}, "outside the 64-bit integer range"),
           ({"topology": "omega"}, "topology: 'omega'"),
           ({"topology": 1}, "topology: 1"),
           ({"dataset": "google"}, "dataset: 'google' must be one of"),
           ({"dataset": None}, "dataset: None must be one of"),
           ({"mask": "none"}, "mask: 'none' must be one of 'feasible', 'useful'"),
           ({"reject": "yes"}, "reject: 'yes' must be True or False"),
           ({"reject": 1}, "reject: 1 must be True or False"),
           ({"invalid_action": "ignore"}, "invalid_action: 'ignore' must be one of"),
           ({"rewards": (True, -10, 0)}, "rewards: .* must be three finite numbers"),
           ({"rewards": (10, float("nan"), 0)}, "rewards: .* must be three finite numbers"),
           ({"rewards": (10, -10)}, "rewards: .* must be three finite numbers")]
    for kwargs, message in bad:
        t0 = time.perf_counter()
        with pytest.raises(InstanceError, match=message):
            NaraEnv(**kwargs)
        assert time.perf_counter() - t0 < 1.0
    with pytest.raises(InstanceError, match="instance: 'str' must be a nara Instance"):
        NaraEnv("alpha")
    for n in (10**7, 10**12, 2**62):  # refused by the generator's estimate, before allocating
        t0 = time.perf_counter()
        with pytest.raises(ModelTooLargeError, match=f"n_requests={n}.*above the limit"):
            NaraEnv(n_requests=n)
        assert time.perf_counter() - t0 < 1.0
    # the same size limit as dmlopt.generate: refused there too, and accepted with a limit
    with pytest.raises(ModelTooLargeError):
        dmlopt.generate("nara", {"generator": "uniform", "n_requests": 10**7})
    env = NaraEnv(n_requests=3, size_limit=(1, 1, 1e6, 1e9))
    assert env.n_requests == 3
    with pytest.raises(ModelTooLargeError):
        NaraEnv(n_requests=3000, size_limit=(1, 1, 1e6, 1e9))
    assert NaraEnv(n_requests=np.int64(5)).n_requests == 5


# ------------------------------------------------------------------------------ shipped policies
#: accepted requests and sha256 (first 16 hex digits) of the solution JSON of each shipped
#: learned policy, golden values of the greedy rollout with its near-tie rule
#: (:func:`dmlopt.models.nara.policy.greedy_pick`); the same under every BLAS kernel and thread
#: count (test_shipped_policies_decide_alike_on_every_blas_kernel runs them under two)
GOLDEN = {
    "alpha-azure-64": {
        "uniform": (59, "4ccf1940451fae37"),
        "azure": (59, "e1d27be4b4b7ffa0"),
        "alibaba": (60, "100b3d2ed218ea37"),
    },
    "beta-alibaba-64": {
        "uniform": (49, "854e3cd035544017"),
        "azure": (49, "4342a5e24e4e7846"),
        "alibaba": (48, "271813dae81b075f"),
    },
    "nara/alpha-uniform-r16-s0": {
        "uniform": (13, "cc78625f18ea4ec4"),
        "azure": (14, "f5f10627740a4edc"),
        "alibaba": (14, "67cb3a0fec77407e"),
    },
    "nara/alpha-uniform-r16-s1": {
        "uniform": (14, "128427b90ebe8827"),
        "azure": (13, "7f4dc9a8f50e7f92"),
        "alibaba": (13, "c75a8adeaef4ca98"),
    },
    "nara/alpha-uniform-r16-s2": {
        "uniform": (12, "5881332b68e648ce"),
        "azure": (14, "04a81e5f38594d81"),
        "alibaba": (13, "b2abc966732928f6"),
    },
    "nara/alpha-uniform-r16-s3": {
        "uniform": (15, "86f894e8fb3bf02d"),
        "azure": (13, "a7f2ea896b1a7dec"),
        "alibaba": (15, "3db5b42995c66b28"),
    },
    "nara/alpha-uniform-r16-s4": {
        "uniform": (11, "b31562fd05d2358d"),
        "azure": (10, "6a3bb2f5334503a6"),
        "alibaba": (11, "7275facca0637617"),
    },
    "nara/alpha-uniform-r16-s5": {
        "uniform": (15, "f33f186dac1b7c86"),
        "azure": (11, "d7fb6fa49e964159"),
        "alibaba": (15, "101eacec80c9fe12"),
    },
    "nara/alpha-uniform-r16-s6": {
        "uniform": (13, "7d7429929fb5ea7e"),
        "azure": (11, "39bb8eae9e48b5ce"),
        "alibaba": (14, "196b0d809ea6608d"),
    },
    "nara/alpha-uniform-r16-s7": {
        "uniform": (14, "5c38d260447527d7"),
        "azure": (14, "2867ad193d2582f5"),
        "alibaba": (12, "d016f15fc297998a"),
    },
    "nara/alpha-uniform-r16-s8": {
        "uniform": (14, "322d4b5cdad65cb4"),
        "azure": (15, "9ed050a5586bfc78"),
        "alibaba": (14, "834aa48c629641d3"),
    },
    "nara/alpha-uniform-r16-s9": {
        "uniform": (12, "1715a65f8da28431"),
        "azure": (7, "be0931f844d56926"),
        "alibaba": (11, "724fe47fb8ea2b3b"),
    },
}

def _digest(sol) -> tuple[int, str]:
    return (sum(a is not None for a in sol.allocations),
            hashlib.sha256(sol.model_dump_json().encode()).hexdigest()[:16])


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_shipped_policies_golden_decisions(name):
    inst = dmlopt.load(name) if "/" in name else _inst(
        64, seed=0, dist=name.split("-")[1], topology=name.split("-")[0])
    for policy, want in GOLDEN[name].items():
        assert _digest(agent.allocate_nara(inst, policy=policy)) == want


_KERNEL_SCRIPT = """
import hashlib, json, sys
import dmlopt
from dmlopt.heuristics.nara import agent
out = {}
for name in sys.argv[1:]:
    sol = agent.allocate_nara(dmlopt.load(name), policy="azure")
    out[name] = [sum(a is not None for a in sol.allocations),
                 hashlib.sha256(sol.model_dump_json().encode()).hexdigest()[:16]]
print(json.dumps(out))
"""


@pytest.mark.parametrize("blas_env", [
    {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "2"},
    {"OPENBLAS_CORETYPE": None, "OPENBLAS_NUM_THREADS": "1"},  # the kernel OpenBLAS detects
], ids=["haswell-2-threads", "detected-1-thread"])
def test_shipped_policies_decide_alike_on_every_blas_kernel(blas_env):
    """Issue: with numpy.argmax, servers the policy scores alike were told apart by the BLAS
    kernel's rounding (52 requests accepted instead of 49 under OPENBLAS_CORETYPE=Haswell)."""
    import json

    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env.update({k: v for k, v in blas_env.items() if v is not None})
    names = ["nara/alpha-uniform-r16-s6", "nara/alpha-uniform-r16-s9"]
    run = subprocess.run([sys.executable, "-c", _KERNEL_SCRIPT, *names], env=env,
                         capture_output=True, text=True, timeout=300)
    if run.returncode < 0:  # e.g. SIGILL: this processor cannot run that kernel
        pytest.skip(f"OpenBLAS kernel {blas_env} does not run here ({run.returncode})")
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got == {n: list(GOLDEN[n]["azure"]) for n in names}


def test_greedy_pick_breaks_near_ties_by_index():
    from dmlopt.models.nara.policy import greedy_pick

    inf = np.inf
    assert greedy_pick(np.array([1.0, 1.0 + 1e-14, 0.5])) == 0  # float noise: a tie
    assert greedy_pick(np.array([1.0, 1.0 + 1e-6, 0.5])) == 1  # a real difference
    assert greedy_pick(np.array([-inf, 3.0, 3.0 - 1e-13, -inf])) == 1
    assert greedy_pick(np.array([-inf, -2e6, -2e6 * (1 - 1e-13)])) == 1
    assert greedy_pick(np.array([-inf, 0.0, 5e-10])) == 1  # near 0 the tolerance is 1e-9


def test_gym_make_render_mode_and_reset_arguments_checked():
    """gym.make passes render_mode to every environment; reset's seed and options are
    Gymnasium's types, a bool seed or a non-dict options is refused naming the argument."""
    env = gym.make("dmlopt/Nara-v0", render_mode=None, n_requests=2)
    env.reset(seed=3)
    with pytest.raises(InstanceError, match="^render_mode: 'human' must be None"):
        gym.make("dmlopt/Nara-v0", render_mode="human", n_requests=2)
    raw = NaraEnv(_inst(2))
    for bad, field in ((True, "seed"), (-1, "seed"), (1.5, "seed"), ("3", "seed")):
        with pytest.raises(InstanceError, match=f"^{field}: "):
            raw.reset(seed=bad)
    with pytest.raises(InstanceError, match="^options: 5 must be None or a dict"):
        raw.reset(options=5)
    obs, info = raw.reset(seed=np.int64(4), options={})
    assert info["accepted"] == 0
