"""The PPO training loop of Nara's policies (paper 001, section 3.3, Appendix E.3), shared by the
paper's policy (:mod:`.learn`) and ours, ``nara-netfit`` (:mod:`.nara_netfit_learn`).

:func:`train_loop` runs iterations of collect (complete episodes of the stochastic policy),
GAE, PPO update and RLlib's adaptive KL coefficient (:mod:`.ppo`) until the step budget is
spent, with greedy validation every ``eval_every`` iterations (and at the end) keeping the
best-so-far weights, one progress line (or a bar on a TTY) per iteration, a checkpoint after
every iteration that the same command resumes from, the learning curve and the model card.
What differs between the two policies comes in an :class:`Arch` of plain functions.

Outputs, all beside ``out`` and written atomically: ``out`` (.npz weights), ``<stem>.json``
(model card), ``<stem>.curve.csv`` and ``<stem>.curve.png`` (learning curve),
``<stem>.ckpt.npz`` (checkpoint; removed when training completes).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dmlopt.heuristics.nara.ppo import Adam, adapt_kl_coeff, advantages
from dmlopt.models import nara
from dmlopt.models.nara import policy as P

CURVE_FIELDS = ("iteration", "steps", "episodes", "seconds", "train_acceptance",
                "mean_reward", "policy_loss", "value_loss", "kl", "kl_coeff",
                "val_acceptance")
Params = dict[str, np.ndarray]


@dataclass
class Arch:
    """The policy-specific pieces of a training run (closures over its weights and rng)."""

    desc: str  #: progress bar prefix
    title: str  #: learning curve title
    train_label: str  #: learning curve label of the training acceptance
    collect: Callable[[int], dict[str, Any]]  #: n_steps -> batch of complete episodes
    value_input: Callable[[dict[str, Any]], np.ndarray]  #: batch -> value network input
    update: Callable[[dict[str, Any], float], dict[str, float]]  #: (batch, kl_coeff) -> stats
    save: Callable[[Path, Params], None]  #: write the selected weights to a path
    card: Callable[[TrainState, float], dict[str, Any]]  #: (state, wall seconds) -> model card
    validate: Callable[[], float] | None = None  #: greedy validation acceptance; None: none
    #: before the first iteration of a fresh run (not on resume), given the start time:
    #: returns values to keep in :attr:`TrainState.extra`
    start: Callable[[float], dict[str, float]] | None = None


@dataclass
class TrainState:
    """What a checkpoint holds: weights, optimisers, rng, curve rows, counters, best-so-far."""

    params: Params
    opt_pi: Adam
    opt_v: Adam
    rng: np.random.Generator
    kl_coeff: float
    extra: dict[str, float] = field(default_factory=dict)  #: more scalars to checkpoint
    rows: list[dict[str, float]] = field(default_factory=list)
    steps: int = 0
    iteration: int = 0
    wall: float = 0.0
    best_score: float = -1.0
    best: Params = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.best:
            self.best = {k: v.copy() for k, v in self.params.items()}

    def checkpoint(self, config: dict[str, Any], wall: float) -> dict[str, Any]:
        ckpt: dict[str, Any] = {f"p_{k}": v for k, v in self.params.items()}
        ckpt.update({f"b_{k}": v for k, v in self.best.items()})
        ckpt.update(self.opt_pi.state("pi_"))
        ckpt.update(self.opt_v.state("v_"))
        ckpt.update(config=json.dumps(config), rng=json.dumps(self.rng.bit_generator.state),
                    rows=json.dumps(self.rows), steps=self.steps, iteration=self.iteration,
                    wall=wall, kl_coeff=self.kl_coeff, best_score=self.best_score,
                    **self.extra)
        return ckpt

    def resume(self, path: Path, config: dict[str, Any]) -> bool:
        """Continue from the checkpoint at ``path`` when it has the same configuration (the
        step target may change between runs: stop early, or train on)."""
        if not path.is_file():
            return False
        with np.load(path, allow_pickle=False) as z:
            zz = {k: z[k] for k in z.files}
        same = {k: v for k, v in json.loads(str(zz["config"])).items() if k != "steps"}
        if same != {k: v for k, v in config.items() if k != "steps"}:
            return False
        self.params.update({k: zz[f"p_{k}"] for k in self.params})
        self.opt_pi.load(zz, "pi_")
        self.opt_v.load(zz, "v_")
        self.rng.bit_generator.state = json.loads(str(zz["rng"]))
        self.rows = json.loads(str(zz["rows"]))
        self.steps, self.iteration = int(zz["steps"]), int(zz["iteration"])
        self.wall, self.kl_coeff = float(zz["wall"]), float(zz["kl_coeff"])
        self.extra = {k: float(zz[k]) for k in self.extra}
        self.best_score = float(zz["best_score"])
        self.best = {k: zz[f"b_{k}"] for k in self.params}
        return True


# ---------------------------------------------------------------------- files
def paths_of(out: Path) -> dict[str, Path]:
    """The files of a run beside ``out``."""
    stem = out.with_suffix("")
    return {"weights": out, "card": stem.with_suffix(".json"),
            "csv": Path(f"{stem}.curve.csv"), "png": Path(f"{stem}.curve.png"),
            "ckpt": Path(f"{stem}.ckpt.npz")}


def save_npz(path: Path, arrays: dict[str, Any]) -> None:
    from dmlopt.io import atomic_path

    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def write_curve(paths: dict[str, Path], rows: list[dict[str, float]], title: str,
                train_label: str) -> None:
    """The learning curve: CSV of the rows and a PNG of training and validation acceptance."""
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


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("dmlopt", "numpy", "scipy", "gymnasium"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def model_card(state: TrainState, wall: float, config: dict[str, Any], *, model: str,
               selected: str, command: str, extra: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """The model card; ``extra`` fields stand after ``wall_seconds``, ``selected`` names the
    iterate kept when a validation score exists."""
    validation = config["validation_seeds"]
    best = state.best_score
    return {
        "model": model, "topology": config["topology"], "dataset": config["dataset"],
        "steps": state.steps, "steps_requested": config["steps"],
        "iterations": state.iteration, "seed": config["seed"], "wall_seconds": round(wall, 1),
        **(extra or {}),
        "final_training_acceptance": state.rows[-1]["train_acceptance"] if state.rows else None,
        "validation_acceptance": best if best >= 0 else None,
        "validation": f"greedy, {len(validation)} episodes of 128 requests, seeds "
                      f"{validation[0]}-{validation[-1]}" if validation else None,
        "selected": selected if best >= 0 else "last iterate",
        "training_episode_seeds": ">= 1000000 (generator seeds; never a benchmark seed)",
        "hyperparameters": config, "versions": versions(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, 1 thread",
        "command": command,
    }


def validate(rollout: Callable[[nara.Instance, Params], nara.Solution], params: Params,
             topology: str, dataset: str, seeds: tuple[int, ...], n_requests: int) -> float:
    """Greedy acceptance ratio of ``rollout`` on validation episodes (generator seeds
    ``seeds``, never a training or benchmark seed)."""
    acc = []
    for s in seeds:
        inst = nara.GENERATORS[dataset](seed=s, topology=topology, n_requests=n_requests)
        acc.append(rollout(inst, params).accepted / n_requests)
    return float(np.mean(acc))


# ---------------------------------------------------------------------- the loop
def train_loop(arch: Arch, state: TrainState, out: Path, config: dict[str, Any], *,
               gamma: float, lam: float, kl_target: float, eval_every: int, resume: bool,
               progress: bool | None) -> dict[str, Any]:
    """PPO until ``config["steps"]`` environment steps are done; writes the outputs beside
    ``out`` (module docstring) and returns the model card."""
    from dmlopt.io import atomic_path, atomic_write_text

    steps, paths = config["steps"], paths_of(out)
    if resume and state.resume(paths["ckpt"], config):
        print(f"resuming {out} at iteration {state.iteration}, {state.steps} steps",
              file=sys.stderr)
        resumed = True
    else:
        resumed = False
    interactive = sys.stderr.isatty() and not os.environ.get("CI")
    show = interactive if progress is None else progress and interactive
    t0 = time.perf_counter() - state.wall
    if not resumed and arch.start is not None:
        state.extra.update(arch.start(t0))
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=steps, initial=min(state.steps, steps), unit="step", desc=arch.desc)
    try:
        while state.steps < steps:
            b = arch.collect(config["batch"])
            vals = P.value(state.params, arch.value_input(b))
            b["adv"], b["ret"] = advantages(b["reward"], b["done"], vals, gamma, lam)
            stats = arch.update(b, state.kl_coeff)
            state.kl_coeff = adapt_kl_coeff(stats["kl"], state.kl_coeff, kl_target)
            state.iteration += 1
            state.steps += len(b["action"])
            it, val = state.iteration, -1.0
            if arch.validate is not None and (it % eval_every == 0 or state.steps >= steps):
                val = arch.validate()
                if val > state.best_score:
                    state.best_score = val
                    state.best = {k: v.copy() for k, v in state.params.items()}
            row = {"iteration": it, "steps": state.steps, "episodes": b["episodes"],
                   "seconds": round(time.perf_counter() - t0, 2),
                   "train_acceptance": b["acceptance"],
                   "mean_reward": float(b["reward"].sum() / b["episodes"]),
                   **stats, "kl_coeff": state.kl_coeff, "val_acceptance": val}
            state.rows.append(row)
            if bar is not None:
                bar.update(min(state.steps, steps) - bar.n)
                bar.set_postfix_str(f"acc {b['acceptance']:.3f} val {val:.3f}")
            else:
                print(f"it {it} steps {state.steps}/{steps} acc {b['acceptance']:.3f} "
                      f"val {val:.3f} kl {stats['kl']:.4f} {row['seconds']:.0f}s",
                      file=sys.stderr, flush=True)
            save_npz(paths["ckpt"], state.checkpoint(config, time.perf_counter() - t0))
            if it % eval_every == 0:
                write_curve(paths, state.rows, arch.title, arch.train_label)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    with atomic_path(paths["weights"]) as tmp:
        arch.save(tmp, state.best if state.best_score >= 0 else state.params)
    if state.rows:
        write_curve(paths, state.rows, arch.title, arch.train_label)
    card = arch.card(state, wall)
    atomic_write_text(paths["card"], json.dumps(card, indent=2) + "\n")
    paths["ckpt"].unlink(missing_ok=True)
    return card
