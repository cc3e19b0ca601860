"""Train Nara's policy with PPO (paper 001, section 3.3, Appendix E.3), in numpy.

``dmlopt train nara --topology alpha --dataset uniform --steps N --seed S -o policy.npz``
(:func:`configure` + :func:`run`), or :func:`train` from Python. ``--arch netfit`` trains ours
instead, ``nara-netfit`` (:mod:`.nara_netfit_learn`; its defaults differ, see ``--help``). No
learning framework: the policy's backward pass is hand-written
(:func:`dmlopt.models.nara.policy.backward_policy`, checked against finite differences in the
tests) and Adam is below, so training needs only what ``pip install dmlopt`` installs (the
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
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dmlopt.heuristics.nara.agent import DATASETS, rollout
from dmlopt.heuristics.nara.ppo import Adam, ppo_epochs
from dmlopt.heuristics.nara.ppo import advantages as advantages  # re-exported
from dmlopt.models import nara
from dmlopt.models.nara import policy as P
from dmlopt.models.nara.env import NaraEnv

VALIDATION_SEEDS = tuple(range(900_000, 900_008))
CURVE_FIELDS = ("iteration", "steps", "episodes", "seconds", "train_acceptance",
                "mean_reward", "policy_loss", "value_loss", "kl", "kl_coeff",
                "val_acceptance")


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
    acc = []
    for s in seeds:
        inst = nara.GENERATORS[dataset](seed=s, topology=topology, n_requests=n_requests)
        acc.append(rollout(inst, params).accepted / n_requests)
    return float(np.mean(acc))


# ---------------------------------------------------------------------- files
def _paths(out: Path) -> dict[str, Path]:
    stem = out.with_suffix("")
    return {"weights": out, "card": stem.with_suffix(".json"),
            "csv": Path(f"{stem}.curve.csv"), "png": Path(f"{stem}.curve.png"),
            "ckpt": Path(f"{stem}.ckpt.npz")}


def _save_npz(path: Path, arrays: dict[str, Any]) -> None:
    from dmlopt.io import atomic_path

    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def _write_curve(paths: dict[str, Path], rows: list[dict[str, float]], title: str, *,
                 train_label: str = "training (stochastic, 32 req.)") -> None:
    from dmlopt.io import atomic_path, atomic_write_text

    lines = [",".join(CURVE_FIELDS)]
    lines += [",".join(f"{r[k]:.6g}" if isinstance(r[k], float) else str(r[k])
                       for k in CURVE_FIELDS) for r in rows]
    atomic_write_text(paths["csv"], "\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps = [r["steps"] for r in rows]
    ax.plot(steps, [r["train_acceptance"] for r in rows], label=train_label)
    val = [(r["steps"], r["val_acceptance"]) for r in rows if r["val_acceptance"] >= 0]
    if val:
        ax.plot(*zip(*val, strict=True), "o-", label="validation (greedy, 128 req.)")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("acceptance ratio")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with atomic_path(paths["png"]) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("dmlopt", "numpy", "scipy", "gymnasium"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


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


def _check(topology: str, dataset: str, steps: int, seed: int, out: Any, episode: int,
           batch: int, minibatch: int, *, lr: float = 5e-3, entropy: float = 0.0,
           clip: float = 0.3, gamma: float = 0.99, lam: float = 1.0, epochs: int = 10) -> Path:
    from dmlopt.api import check_seed
    from dmlopt.errors import InstanceError

    if topology not in nara.EPISODE:
        nara.load_topology(topology)  # raises InstanceError when unknown
    if dataset not in DATASETS:
        raise InstanceError("dataset", dataset, f"is not one of {', '.join(DATASETS)}")
    if not 1 <= steps <= MAX_STEPS:
        raise InstanceError("steps", steps, f"must be in 1..{MAX_STEPS}")
    check_seed(seed)
    if not 1 <= episode <= 100_000:
        raise InstanceError("episode", episode, "must be in 1..100000 requests")
    if not 1 <= batch <= 10**7:
        raise InstanceError("batch", batch, "must be in 1..10000000 steps")
    if not 1 <= epochs <= 1000:
        raise InstanceError("epochs", epochs, "must be in 1..1000")
    _check_real("lr", lr, 0.0, 1.0, open_low=True)
    _check_real("entropy", entropy, 0.0, 10.0, open_low=False)
    _check_real("clip", clip, 0.0, 1.0, open_low=True)
    _check_real("gamma", gamma, 0.0, 1.0, open_low=False)
    _check_real("lambda", lam, 0.0, 1.0, open_low=False)
    if batch < 1 or not 1 <= minibatch <= batch:
        raise InstanceError("minibatch", minibatch, f"must be in 1..batch ({batch})")
    out = Path(out)
    if out.suffix != ".npz":
        raise InstanceError("out", str(out), "must end in .npz")
    if out.is_dir():
        raise InstanceError("out", str(out), "is a directory")
    return out


# ---------------------------------------------------------------------- training
def train(topology: str, dataset: str, steps: int, seed: int, out: str | Path, *,
          episode: int = 32, lr: float = 5e-3, batch: int = 2048, minibatch: int = 256,
          epochs: int = 10, clip: float = 0.3, gamma: float = 0.99, lam: float = 1.0,
          kl_coeff: float = 0.2, kl_target: float = 0.01, entropy: float = 0.0,
          eval_every: int = 5, validation: tuple[int, ...] = VALIDATION_SEEDS,
          resume: bool = True, progress: bool | None = None) -> dict[str, Any]:
    """Train a policy with PPO for ``steps`` environment steps; returns the model card.

    Every argument is checked (:class:`dmlopt.errors.InstanceError` on bad input); outputs go
    beside ``out`` only (module docstring). With ``resume`` an existing checkpoint of the same
    configuration is continued.
    """
    out = _check(topology, dataset, steps, seed, out, episode, batch, minibatch, lr=lr,
                 entropy=entropy, clip=clip, gamma=gamma, lam=lam, epochs=epochs)
    paths = _paths(out)
    config = {"topology": topology, "dataset": dataset, "steps": steps, "seed": seed,
              "episode": episode, "lr": lr, "batch": batch, "minibatch": minibatch,
              "epochs": epochs, "clip": clip, "gamma": gamma, "lambda": lam,
              "kl_coeff": kl_coeff, "kl_target": kl_target, "entropy": entropy,
              "validation_seeds": list(validation)}
    env = NaraEnv(topology=topology, dataset=dataset, n_requests=episode)
    g = P.Graph(env.graph)
    params = P.init_params(seed=seed)
    opt_pi = Adam(params, P.POLICY_KEYS, lr)
    opt_v = Adam(params, P.VALUE_KEYS, lr)
    rng = np.random.default_rng(seed)
    rows: list[dict[str, float]] = []
    done_steps, it, wall0 = 0, 0, 0.0
    best = (-1.0, {k: v.copy() for k, v in params.items()})
    if resume and paths["ckpt"].is_file():
        with np.load(paths["ckpt"], allow_pickle=False) as z:
            zz = {k: z[k] for k in z.files}
        # the step target may change between runs (stop early, or train on)
        same = {k: v for k, v in json.loads(str(zz["config"])).items() if k != "steps"}
        if same == {k: v for k, v in config.items() if k != "steps"}:
            params.update({k: zz[f"p_{k}"] for k in params})
            opt_pi.load(zz, "pi_")
            opt_v.load(zz, "v_")
            rng.bit_generator.state = json.loads(str(zz["rng"]))
            rows = json.loads(str(zz["rows"]))
            done_steps, it, wall0 = int(zz["steps"]), int(zz["iteration"]), float(zz["wall"])
            kl_coeff = float(zz["kl_coeff"])
            best = (float(zz["best_score"]), {k: zz[f"b_{k}"] for k in params})
            print(f"resuming {out} at iteration {it}, {done_steps} steps", file=sys.stderr)
    interactive = sys.stderr.isatty() and not os.environ.get("CI")
    show = interactive if progress is None else progress and interactive
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=steps, initial=min(done_steps, steps), unit="step",
                   desc=f"nara {topology}/{dataset}")
    t0 = time.perf_counter() - wall0
    try:
        while done_steps < steps:
            b = collect(env, params, g, rng, batch)
            vin = P.value_input(g, b["nodes"], b["links"], b["state"])
            vals = P.value(params, vin)
            b["adv"], b["ret"] = advantages(b["reward"], b["done"], vals, gamma, lam)
            stats = ppo_update(params, opt_pi, opt_v, g, b, rng, minibatch=minibatch,
                               epochs=epochs, clip=clip, kl_coeff=kl_coeff, entropy=entropy)
            # RLlib's adaptive KL coefficient
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
            msg = (f"it {it} steps {done_steps}/{steps} acc {b['acceptance']:.3f} "
                   f"val {val:.3f} kl {stats['kl']:.4f} {row['seconds']:.0f}s")
            if bar is not None:
                bar.update(min(done_steps, steps) - bar.n)
                bar.set_postfix_str(f"acc {b['acceptance']:.3f} val {val:.3f}")
            else:
                print(msg, file=sys.stderr, flush=True)
            ckpt = {f"p_{k}": v for k, v in params.items()}
            ckpt.update({f"b_{k}": v for k, v in best[1].items()})
            ckpt.update(opt_pi.state("pi_"))
            ckpt.update(opt_v.state("v_"))
            ckpt.update(config=json.dumps(config), rng=json.dumps(rng.bit_generator.state),
                        rows=json.dumps(rows), steps=done_steps, iteration=it,
                        wall=time.perf_counter() - t0, kl_coeff=kl_coeff,
                        best_score=best[0])
            _save_npz(paths["ckpt"], ckpt)
            if it % eval_every == 0:
                _write_curve(paths, rows, f"Nara PPO, {topology} / {dataset}, seed {seed}")
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    final = best[1] if best[0] >= 0 else params
    weights = {k: final[k] for k in P.POLICY_KEYS}
    from dmlopt.io import atomic_path, atomic_write_text

    with atomic_path(paths["weights"]) as tmp:
        P.save(tmp, weights)
    _write_curve(paths, rows, f"Nara PPO, {topology} / {dataset}, seed {seed}")
    card = {
        "model": "Nara policy (paper 001): GraphSAGE 3x16 + P1 (8, 8) + P2 (16, 1), numpy",
        "topology": topology, "dataset": dataset, "steps": done_steps, "steps_requested": steps,
        "iterations": it, "seed": seed, "wall_seconds": round(wall, 1),
        "final_training_acceptance": rows[-1]["train_acceptance"] if rows else None,
        "validation_acceptance": best[0] if best[0] >= 0 else None,
        "validation": f"greedy, {len(validation)} episodes of 128 requests, seeds "
                      f"{validation[0]}-{validation[-1]}" if validation else None,
        "selected": "best validation iterate" if best[0] >= 0 else "last iterate",
        "training_episode_seeds": ">= 1000000 (generator seeds; never a benchmark seed)",
        "hyperparameters": config, "versions": _versions(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, 1 thread",
        "command": f"dmlopt train nara --topology {topology} --dataset {dataset} "
                   f"--steps {steps} --seed {seed} -o {out.name}",
    }
    atomic_write_text(paths["card"], json.dumps(card, indent=2) + "\n")
    paths["ckpt"].unlink(missing_ok=True)
    return card


# ---------------------------------------------------------------------- command line
def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``dmlopt train nara``'s arguments to ``parser``."""
    parser.add_argument("--topology", default="alpha", help="training topology (alpha)")
    parser.add_argument("--dataset", default="uniform", choices=DATASETS)
    parser.add_argument("--steps", type=int, default=150_000,
                        help="environment steps (one step = one server pick)")
    parser.add_argument("--seed", type=int, default=0)
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
    parser.add_argument("--minibatch", type=int, default=256)
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
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``dmlopt train nara``; exit code 0, 130 on Ctrl-C (checkpoint kept: the same
    command resumes; SIGTERM is treated as Ctrl-C). Bad input raises
    :class:`dmlopt.errors.InstanceError` (exit 2 in the CLI)."""
    import signal

    def _term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    from dmlopt.errors import InstanceError

    arch = getattr(args, "arch", "paper")
    netfit = arch == "netfit"
    if not netfit and getattr(args, "init", None) is not None:
        raise InstanceError("init", args.init, "is an option of --arch netfit only")
    if netfit and args.entropy:
        raise InstanceError("entropy", args.entropy, "is an option of --arch paper only")

    def pick(name: str, paper: Any, ours: Any) -> Any:
        v = getattr(args, name, None)
        return v if v is not None else (ours if netfit else paper)

    n_val = max(pick("val_episodes", len(VALIDATION_SEEDS), 16), 0)
    kw = dict(episode=pick("episode", 32, 128), lr=pick("lr", 5e-3, 5e-4),
              batch=pick("batch", 2048, 8192), minibatch=args.minibatch,
              epochs=pick("epochs", 10, 4), gamma=pick("gamma", 0.99, 0.95),
              lam=pick("lam", 1.0, 0.9),
              validation=tuple(range(900_000, 900_000 + n_val)), resume=not args.no_resume)
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
        print("interrupted; run the same command to resume", file=sys.stderr)
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
