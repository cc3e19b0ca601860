"""Train Nara's policy with PPO (paper 001, section 3.3, Appendix E.3), in numpy.

``dmlopt train nara --topology alpha --dataset uniform --steps N --seed S -o policy.npz``
(:func:`configure` + :func:`run`), or :func:`train` from Python. ``--arch netfit`` trains ours
instead, ``nara-netfit`` (:mod:`.nara_netfit_learn`; its defaults differ, see ``--help``). No
learning framework: the policy's backward pass is hand-written
(:func:`dmlopt.models.nara.policy.backward_policy`, checked against finite differences in the
tests) and Adam is in :mod:`.ppo`, so training needs only what ``pip install dmlopt`` installs (the
``learn`` extra adds nothing heavy, see the README).

PPO [30] as RLlib runs it with the paper's settings (Appendix E.3): learning rate 5e-3, train
batch 2048 steps of *complete episodes* (episodes of 32 requests on alpha), minibatch 256,
separate value network (``vf_share_layers=False``); RLlib's defaults otherwise: clip 0.3,
gamma 0.99, GAE lambda 1.0, adaptive KL penalty (coefficient 0.2, target 0.01), entropy 0.
Deviations (documented): 10 SGD epochs per batch instead of RLlib's 30 (2 shared CPU cores),
advantages normalised per minibatch, value loss 0.5 ((V - R) / 10)^2 without RLlib's value-loss
clip at 10, gradients clipped to global norm 1 per network.

Training episodes are drawn with generator seeds >= 10**6
(:class:`dmlopt.models.nara.NaraEnv`); every
``eval_every`` iterations the greedy policy is scored on 8 validation episodes of 128 requests
(seeds 900000-900007), and the weights written to ``out`` are those of the best validation
score (model selection on validation seeds; benchmark seeds 0-999 are never seen).

Outputs, all beside ``out`` and written atomically: ``out`` (.npz weights), ``<stem>.json``
(model card), ``<stem>.curve.csv`` and ``<stem>.curve.png`` (learning curve),
``<stem>.ckpt.npz`` (checkpoint after every iteration; removed when training completes; the
same command resumes from it after an interruption, also with another ``--steps``).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from dmlopt.contract import Command, Size, check_run_size, limits_from
from dmlopt.heuristics.nara import trainer as T
from dmlopt.heuristics.nara.agent import DATASETS, rollout
from dmlopt.heuristics.nara.ppo import Adam, ppo_epochs
from dmlopt.heuristics.nara.ppo import advantages as advantages  # re-exported
from dmlopt.models import nara
from dmlopt.models.nara import policy as P
from dmlopt.models.nara.env import NaraEnv

VALIDATION_SEEDS = tuple(range(900_000, 900_008))


# ---------------------------------------------------------------------- PPO pieces
def collect(env: NaraEnv, params: dict[str, np.ndarray], g: P.Graph, rng: np.random.Generator,
            n_steps: int) -> dict[str, Any]:
    """Complete episodes of the stochastic policy until >= ``n_steps`` steps (batch_mode =
    complete_episodes)."""
    keys = ("nodes", "links", "state", "mask", "action", "logp", "reward", "done", "probs")
    buf: dict[str, list] = {k: [] for k in keys}
    accepted, requests, episodes = 0, 0, 0
    while len(buf["action"]) < n_steps:
        obs, info = env.reset(seed=int(rng.integers(2**31 - 1)))
        done = False
        while not done:
            mask = info["action_mask"]
            lp = P.log_softmax(P.logits_one(params, g, obs["nodes"], obs["links"],
                                            obs["state"], mask))
            pr = np.exp(lp)
            a = int(rng.choice(len(pr), p=pr / pr.sum()))
            buf["nodes"].append(obs["nodes"])
            buf["links"].append(obs["links"])
            buf["state"].append(obs["state"])
            buf["mask"].append(mask)
            buf["action"].append(a)
            buf["logp"].append(lp[a])
            buf["probs"].append(pr)
            obs, r, done, _, info = env.step(a)
            buf["reward"].append(r)
            buf["done"].append(done)
        accepted += env.accepted
        requests += env.n_requests
        episodes += 1
    out = {k: np.asarray(v) for k, v in buf.items()}
    out.update(acceptance=accepted / requests, episodes=episodes)
    return out


def ppo_update(params: dict[str, np.ndarray], opt_pi: Adam, opt_v: Adam, g: P.Graph,
               batch: dict[str, Any], rng: np.random.Generator, *, minibatch: int,
               epochs: int, clip: float, kl_coeff: float, entropy: float) -> dict[str, float]:
    """One PPO update (clipped surrogate + KL penalty; value regression) on a batch:
    :func:`.ppo.ppo_epochs` with the paper policy's forward and backward pass."""
    z0_all = P.first_input(g, batch["nodes"], batch["links"])

    def logits(idx: np.ndarray, cache: dict[str, Any]) -> np.ndarray:
        return P.logits(params, g, batch["nodes"][idx], batch["links"][idx],
                        batch["state"][idx], batch["mask"][idx], cache, z0=z0_all[idx])

    return ppo_epochs(params, opt_pi, opt_v, batch, rng, logits,
                      lambda cache, dlogit: P.backward_policy(params, g, cache, dlogit),
                      P.value_input(g, batch["nodes"], batch["links"], batch["state"]),
                      minibatch=minibatch, epochs=epochs, clip=clip, kl_coeff=kl_coeff,
                      entropy=entropy)


def validate(params: dict[str, np.ndarray], topology: str, dataset: str,
             seeds: tuple[int, ...] = VALIDATION_SEEDS, n_requests: int = 128) -> float:
    """Greedy acceptance ratio on validation episodes."""
    return T.validate(rollout, params, topology, dataset, seeds, n_requests)


#: the largest training run accepted (environment steps; ~10^9 is years on 2 cores)
MAX_STEPS = 10**9


def _check_real(name: str, value: float, low: float, high: float, *, open_low: bool) -> None:
    """A finite hyper-parameter in (low, high] (``open_low``) or [low, high]."""
    from dmlopt.errors import InstanceError

    ok = isinstance(value, int | float) and math.isfinite(value) and value <= high and (
        value > low if open_low else value >= low)
    if not ok:
        raise InstanceError(name, value, f"must be a finite number in {'(' if open_low else '['}"
                            f"{low:g}, {high:g}]")


def _check_int(name: str, value: Any, low: int, high: int, unit: str = "") -> None:
    """An integer in [low, high]: a boolean or a string is not a number."""
    from dmlopt.errors import InstanceError

    kind = "a boolean" if isinstance(value, bool) else "a string" if isinstance(value, str) \
        else None if isinstance(value, int) else type(value).__name__
    if kind is not None:
        raise InstanceError(name, value, f"is {kind}, not an integer")
    if not low <= value <= high:
        raise InstanceError(name, value, f"must be in {low}..{high}{unit}")


def estimate(n_nodes: int, n_links: int, n_servers: int, *, steps: int, batch: int,
             minibatch: int, epochs: int, episode_steps: int, val_episodes: int,
             eval_every: int) -> Size:
    """What a training run needs, from its arguments and the topology alone.

    Parameters
    ----------
    n_nodes, n_links, n_servers : int
        The training topology's size.
    steps, batch, minibatch, epochs : int
        The run's step target, steps per iteration, minibatch and SGD epochs.
    episode_steps : int
        The most steps of one training episode.
    val_episodes : int
        Validation episodes (128 requests each) every ``eval_every`` iterations.
    eval_every : int
        Iterations between validations.

    Returns
    -------
    dmlopt.contract.Size
        Peak bytes (the batch of observations and the minibatch caches of the backward pass)
        and elementary operations of one iteration (the GNN forward passes of collection and
        validation, the forward and backward passes of the PPO epochs), an order of magnitude.
        A run is checkpointed after every iteration and the same command resumes it, so one
        iteration is what runs before a run can be stopped without loss; the number of
        iterations is bounded by ``steps`` <= :data:`MAX_STEPS`.
    """
    feats = P.NODE_FEATURES + P.LINK_FEATURES
    collected = float(batch + episode_steps)
    per_step = 4.0 * (n_nodes * P.NODE_FEATURES + n_links * P.LINK_FEATURES + 3) \
        + 17.0 * n_servers + 8.0 * n_nodes * feats + 64.0
    cache = 8.0 * n_nodes * (P.HIDDEN + feats) * P.STAGES * 3 + 8.0 * n_servers * 80
    memory = 3.0 * collected * per_step + min(minibatch, collected) * cache
    aggregate = n_nodes * min(n_nodes, P.DENSE_MAX) + n_links
    forward = P.STAGES * P.HIDDEN * (aggregate + n_nodes * (P.HIDDEN + feats)) \
        + n_servers * 60.0 * P.P2_HIDDEN
    del steps, eval_every  # the run is checkpointed after every iteration: work is counted
    # per iteration, the most a run does before it can be stopped and resumed without loss
    work = forward * (collected * (1.0 + 3.0 * epochs) + val_episodes * 128.0 * n_servers)
    return Size(memory, work)


def _check(topology: str, dataset: str, steps: int, seed: int, out: Any, episode: int,
           batch: int, minibatch: int, *, lr: float = 5e-3, entropy: float = 0.0,
           clip: float = 0.3, gamma: float = 0.99, lam: float = 1.0, epochs: int = 10) -> Path:
    from dmlopt.api import check_seed
    from dmlopt.errors import InstanceError

    if topology not in nara.EPISODE:
        nara.load_topology(topology)  # raises InstanceError when unknown
    if dataset not in DATASETS:
        raise InstanceError("dataset", dataset, f"is not one of {', '.join(DATASETS)}")
    _check_int("steps", steps, 1, MAX_STEPS)
    _check_int("seed", seed, 0, 2**63 - 1)
    check_seed(seed)
    _check_int("episode", episode, 1, 100_000, " requests")
    _check_int("batch", batch, 1, 10**7, " steps")
    _check_int("minibatch", minibatch, 1, batch, f" (batch {batch})")
    _check_int("epochs", epochs, 1, 1000)
    _check_real("lr", lr, 0.0, 1.0, open_low=True)
    _check_real("entropy", entropy, 0.0, 10.0, open_low=False)
    _check_real("clip", clip, 0.0, 1.0, open_low=True)
    _check_real("gamma", gamma, 0.0, 1.0, open_low=False)
    _check_real("lambda", lam, 0.0, 1.0, open_low=False)
    out = Path(out)
    if out.suffix != ".npz":
        raise InstanceError("out", str(out), "must end in .npz")
    if out.is_dir():
        raise InstanceError("out", str(out), "is a directory")
    return out


def _check_run(validation: Any, eval_every: Any) -> tuple[int, ...]:
    """The validation seeds (at most :data:`MAX_VALIDATION` integers) and ``eval_every``."""
    from dmlopt.errors import InstanceError

    _check_int("eval_every", eval_every, 1, 10**6)
    if not isinstance(validation, tuple | list | range):
        raise InstanceError("validation", validation, "must be a sequence of seeds")
    _check_int("val_episodes", len(validation), 0, MAX_VALIDATION)
    for s in validation:
        _check_int("validation", s, 0, 2**63 - 1)
    return tuple(validation)


#: the most validation episodes
MAX_VALIDATION = 10_000


# ---------------------------------------------------------------------- training
def train(topology: str, dataset: str, steps: int, seed: int, out: str | Path, *,
          episode: int = 32, lr: float = 5e-3, batch: int = 2048, minibatch: int = 256,
          epochs: int = 10, clip: float = 0.3, gamma: float = 0.99, lam: float = 1.0,
          kl_coeff: float = 0.2, kl_target: float = 0.01, entropy: float = 0.0,
          eval_every: int = 5, validation: tuple[int, ...] = VALIDATION_SEEDS,
          resume: bool = True, progress: bool | None = None, size_limit: Any = None
          ) -> dict[str, Any]:
    """Train a policy with PPO for ``steps`` environment steps; returns the model card.

    Every argument is checked (:class:`dmlopt.errors.InstanceError` on bad input) and the
    run's memory and work are estimated (:func:`estimate`) against ``size_limit`` (the
    ``--size-limit`` rules, :func:`dmlopt.contract.limits_from`:
    :class:`dmlopt.errors.ModelTooLargeError` above it) before anything is allocated; outputs go
    beside ``out`` only (module docstring). With ``resume`` an existing checkpoint of the same
    configuration is continued. The loop itself is :func:`.trainer.train_loop`.
    """
    out = _check(topology, dataset, steps, seed, out, episode, batch, minibatch, lr=lr,
                 entropy=entropy, clip=clip, gamma=gamma, lam=lam, epochs=epochs)
    validation = _check_run(validation, eval_every)
    config = {"topology": topology, "dataset": dataset, "steps": steps, "seed": seed,
              "episode": episode, "lr": lr, "batch": batch, "minibatch": minibatch,
              "epochs": epochs, "clip": clip, "gamma": gamma, "lambda": lam,
              "kl_coeff": kl_coeff, "kl_target": kl_target, "entropy": entropy,
              "validation_seeds": list(validation)}
    env = NaraEnv(topology=topology, dataset=dataset, n_requests=episode)
    check_run_size(f"training on {topology}", estimate(
        env.n_nodes, env.n_links, env.n_servers, steps=steps, batch=batch, minibatch=minibatch,
        epochs=epochs, episode_steps=episode * (env.n_servers + 1),
        val_episodes=len(validation), eval_every=eval_every), limits_from(size_limit))
    g = P.Graph(env.graph)
    params = P.init_params(seed=seed)
    opt_pi = Adam(params, P.POLICY_KEYS, lr)
    opt_v = Adam(params, P.VALUE_KEYS, lr)
    rng = np.random.default_rng(seed)
    state = T.TrainState(params, opt_pi, opt_v, rng, kl_coeff,
                         episode_steps=episode * (env.n_servers + 1))

    def update(b: dict[str, Any], kl: float) -> dict[str, float]:
        return ppo_update(params, opt_pi, opt_v, g, b, rng, minibatch=minibatch, epochs=epochs,
                          clip=clip, kl_coeff=kl, entropy=entropy)

    def card(st: T.TrainState, wall: float) -> dict[str, Any]:
        return T.model_card(
            st, wall, config, selected="best validation iterate",
            model="Nara policy (paper 001): GraphSAGE 3x16 + P1 (8, 8) + P2 (16, 1), numpy",
            command=f"dmlopt train nara --topology {topology} --dataset {dataset} "
                    f"--steps {steps} --seed {seed} -o {out.name}")

    arch = T.Arch(
        desc=f"nara {topology}/{dataset}",
        title=f"Nara PPO, {topology} / {dataset}, seed {seed}",
        train_label=f"training (stochastic, {episode} req.)",
        collect=lambda n: collect(env, params, g, rng, n),
        value_input=lambda b: P.value_input(g, b["nodes"], b["links"], b["state"]),
        update=update, card=card,
        save=lambda path, w: P.save(path, {k: w[k] for k in P.POLICY_KEYS}),
        validate=(lambda: validate(params, topology, dataset, validation)) if validation
        else None)
    return T.train_loop(arch, state, out, config, gamma=gamma, lam=lam, kl_target=kl_target,
                        eval_every=eval_every, resume=resume, progress=progress)


# ---------------------------------------------------------------------- command line
def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``dmlopt train nara``'s arguments to ``parser``."""
    parser.add_argument("--topology", default="alpha", help="training topology (alpha)")
    parser.add_argument("--dataset", default="uniform", choices=DATASETS,
                        help="request distribution of the training episodes (default: uniform)")
    parser.add_argument("--steps", type=int, default=150_000,
                        help="environment steps (one step = one server pick)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the weights and the episodes (default: 0)")
    parser.add_argument("-o", "--out", required=True, help="weights (.npz); the model card, "
                        "learning curve and checkpoint are written beside it")
    parser.add_argument("--arch", default="paper", choices=("paper", "netfit"),
                        help="paper: the paper's GNN policy, one action per server (heuristic "
                        "nara); netfit: ours, a policy over netfit-probe's candidates with "
                        "netfit's features, cloned from netfit-probe then PPO (heuristic "
                        "nara-netfit, dmlopt.heuristics.nara.nara_netfit_learn)")
    parser.add_argument("--episode", type=int, default=None,
                        help="requests per episode (paper 32, netfit 128)")
    parser.add_argument("--lr", type=float, default=None, help="(paper 5e-3, netfit 5e-4)")
    parser.add_argument("--batch", type=int, default=None,
                        help="steps per PPO iteration (paper 2048, netfit 8192)")
    parser.add_argument("--minibatch", type=int, default=256,
                        help="steps per SGD minibatch (default: 256)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="SGD epochs per batch (paper 10, netfit 4)")
    parser.add_argument("--gamma", type=float, default=None,
                        help="discount (paper 0.99, netfit 0.95)")
    parser.add_argument("--lambda", dest="lam", type=float, default=None,
                        help="GAE lambda (paper 1.0, netfit 0.9)")
    parser.add_argument("--entropy", type=float, default=0.0,
                        help="entropy coefficient (--arch paper only)")
    parser.add_argument("--init", default=None, choices=("netfit-probe", "random"),
                        help="--arch netfit: initial policy, netfit-probe's rule cloned "
                        "(default) or random weights")
    parser.add_argument("--val-episodes", type=int, default=None,
                        help="validation episodes (128 requests, seeds 900000...; paper 8, "
                        "netfit 16; 0: none, the last iterate is kept)")
    parser.add_argument("--no-resume", action="store_true", help="ignore a checkpoint")
    parser.add_argument("--size-limit", default=None, metavar="V,C,MEMORY,WORK",
                        help="refuse a run estimated above MEMORY bytes or WORK operations "
                        "(default 2GiB, 1e12; DMLOPT_SIZE_LIMIT)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``dmlopt train nara``; exit code 0, 130 on Ctrl-C (checkpoint kept: the same
    command resumes; SIGTERM is treated as Ctrl-C). Bad input raises
    :class:`dmlopt.errors.InstanceError` (exit 2 in the CLI)."""
    import signal

    def _term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    from dmlopt import io
    from dmlopt.errors import InstanceError

    io.check_output(args.out, "--out")  # before any training: a writable place for the weights
    arch = getattr(args, "arch", "paper")
    netfit = arch == "netfit"
    if not netfit and getattr(args, "init", None) is not None:
        raise InstanceError("init", args.init, "is an option of --arch netfit only")
    if netfit and args.entropy:
        raise InstanceError("entropy", args.entropy, "is an option of --arch paper only")

    def pick(name: str, paper: Any, ours: Any) -> Any:
        v = getattr(args, name, None)
        return v if v is not None else (ours if netfit else paper)

    n_val = pick("val_episodes", len(VALIDATION_SEEDS), 16)
    _check_int("val_episodes", n_val, 0, MAX_VALIDATION)
    from dmlopt.contract import parse_limits

    limit = getattr(args, "size_limit", None)
    kw = dict(episode=pick("episode", 32, 128), lr=pick("lr", 5e-3, 5e-4),
              batch=pick("batch", 2048, 8192), minibatch=args.minibatch,
              epochs=pick("epochs", 10, 4), gamma=pick("gamma", 0.99, 0.95),
              lam=pick("lam", 1.0, 0.9),
              validation=tuple(range(900_000, 900_000 + n_val)), resume=not args.no_resume,
              size_limit=None if limit is None else parse_limits(limit, "--size-limit"))
    old = signal.signal(signal.SIGTERM, _term)
    try:
        if netfit:
            from dmlopt.heuristics.nara import nara_netfit_learn

            card = nara_netfit_learn.train(args.topology, args.dataset, args.steps, args.seed,
                                           args.out, init=args.init or "netfit-probe", **kw)
        else:
            card = train(args.topology, args.dataset, args.steps, args.seed, args.out,
                         entropy=args.entropy, **kw)
    except KeyboardInterrupt:
        from dmlopt.heuristics.nara.trainer import paths_of

        ckpt = paths_of(Path(args.out))["ckpt"]
        kept = f"the checkpoint {ckpt} is kept; " if ckpt.exists() else ""
        print(f"dmlopt: interrupted; {kept}run the same command to resume", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, old)
    print(f"{args.out}: {card['steps']} steps in {card['wall_seconds']} s, validation "
          f"acceptance {card['validation_acceptance']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m dmlopt.heuristics.nara.learn`` (same arguments as ``dmlopt train nara``)."""
    parser = configure(argparse.ArgumentParser(prog="dmlopt train nara",
                                               description=__doc__.split("\n")[0]))
    args = parser.parse_args(argv)
    from dmlopt.errors import DmloptError

    try:
        return run(args)
    except DmloptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())


def _configure_train(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("problem", choices=["nara"], help="the problem whose policy is trained")
    configure(parser)


#: ``dmlopt train nara ...``: PPO training of the learned allocator (section 3.3, appendix E);
#: the entry point ``train`` of the group ``dmlopt.commands`` names this module
COMMANDS = {"train": Command("train", "train Nara's GNN policy with PPO (paper 001, section "
                             "3.3): dmlopt train nara --topology alpha --dataset uniform "
                             "--steps N --seed S -o policy.npz", _configure_train, run)}
