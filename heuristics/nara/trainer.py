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

from dmlopt.errors import InstanceError
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
    #: the most steps one episode can take (0: unknown); bounds the steps of one iteration
    #: when a checkpoint is read back
    episode_steps: int = 0

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
        step target may change between runs: stop early, or train on).

        Parameters
        ----------
        path : pathlib.Path
            The checkpoint (``<stem>.ckpt.npz``); nothing there: a fresh run.
        config : dict
            The configuration of this run.

        Returns
        -------
        bool
            Whether the state was restored (False: no checkpoint, or one of another
            configuration, which the run then replaces).

        Raises
        ------
        dmlopt.errors.InstanceError
            A checkpoint that cannot be used (:func:`read_checkpoint`), naming the file.
        """
        if not os.path.lexists(path):
            return False
        zz = read_checkpoint(path, self.checkpoint(config, 0.0), self.episode_steps)
        if zz is None:
            return False
        self.params.update({k: zz[f"p_{k}"] for k in self.params})
        self.opt_pi.load(zz, "pi_")
        self.opt_v.load(zz, "v_")
        self.rng.bit_generator.state = zz["rng"]
        self.rows = zz["rows"]
        self.steps, self.iteration = int(zz["steps"]), int(zz["iteration"])
        self.wall, self.kl_coeff = float(zz["wall"]), float(zz["kl_coeff"])
        self.extra = {k: float(zz[k]) for k in self.extra}
        self.best_score = float(zz["best_score"])
        self.best = {k: zz[f"b_{k}"] for k in self.params}
        return True


#: the JSON fields of a checkpoint, and its integer and real scalars
_JSON_KEYS = ("config", "rng", "rows")
_INT_KEYS = ("steps", "iteration", "pi_t", "v_t")
#: the least value of a scalar (integers: 0; others: any finite value)
_LOW = {"wall": 0.0, "kl_coeff": 0.0, "best_score": -1.0}


def _refuse(path: Path, rule: str) -> InstanceError:
    return InstanceError("checkpoint", str(path), f"is not a usable training checkpoint "
                         f"({rule}; delete it or pass --no-resume to start afresh)")


def _json(path: Path, key: str, value: np.ndarray) -> Any:
    """A JSON document stored as a 0-d string array (NaN and infinity refused)."""
    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    if value.shape != () or value.dtype.kind != "U":
        raise _refuse(path, f"{key!r} is not a JSON text")
    try:
        return json.loads(str(value), parse_constant=constant)
    except (ValueError, RecursionError) as exc:
        raise _refuse(path, f"{key!r} is not valid JSON: {exc}") from None


def read_checkpoint(path: Path, template: dict[str, Any], episode_steps: int = 0
                    ) -> dict[str, Any] | None:
    """Read and check a training checkpoint against what this run would write.

    The file is read by :func:`dmlopt.io.read_bytes` (a regular file, size-capped), opened as an
    .npz without pickles, and checked: every key of ``template`` present; the weights and Adam
    moments with the template's shapes and finite (the checks of shipped policy files,
    :func:`dmlopt.heuristics.nara.agent.check_weights`); the counters non-negative integers with
    the curve rows consistent with them (one row per iteration, steps increasing to the
    checkpoint's steps, the last iteration started below the step target of the run that wrote
    it, at least one batch per iteration); the other scalars finite; the random state one numpy
    accepts.

    Parameters
    ----------
    path : pathlib.Path
        The checkpoint file.
    template : dict
        :meth:`TrainState.checkpoint` of the fresh state of this run: the keys, shapes and kinds
        expected.
    episode_steps : int
        The most steps one episode can take (0: unknown): one iteration collects fewer than
        ``batch + episode_steps`` steps.

    Returns
    -------
    dict or None
        The arrays, with ``config``, ``rng`` and ``rows`` parsed from JSON; None when the
        checkpoint's configuration (the step target aside) is not this run's.

    Raises
    ------
    dmlopt.errors.InstanceError
        Field ``checkpoint``, the file and what is wrong with it.
    """
    import io as _io
    import zipfile
    import zlib

    from dmlopt.heuristics.nara.agent import check_weights
    from dmlopt.io import max_file_bytes, read_bytes

    data = read_bytes(path)
    try:
        with zipfile.ZipFile(_io.BytesIO(data)) as zf:
            declared = sum(i.file_size for i in zf.infolist())
        if declared > max_file_bytes():
            raise _refuse(path, f"its arrays declare {declared} bytes, above {max_file_bytes()}")
        with np.load(_io.BytesIO(data), allow_pickle=False) as z:
            zz = {k: z[k] for k in z.files}
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
        raise _refuse(path, f"not a readable .npz archive: {exc}") from None
    if "config" not in zz:
        raise _refuse(path, "missing 'config'")
    saved = _json(path, "config", zz["config"])
    if not isinstance(saved, dict):
        raise _refuse(path, "'config' is not a JSON object")
    mine = {k: v for k, v in json.loads(template["config"]).items() if k != "steps"}
    if {k: v for k, v in saved.items() if k != "steps"} != mine:
        return None
    missing = [k for k in template if k not in zz]
    if missing:
        raise _refuse(path, f"missing {', '.join(repr(k) for k in missing[:5])}"
                      + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))
    arrays = {k: v for k, v in template.items() if isinstance(v, np.ndarray) and v.ndim > 0}
    for key in arrays:
        if zz[key].dtype.kind not in "fiu":
            raise _refuse(path, f"{key!r} holds {zz[key].dtype} values, not numbers")
    try:
        check_weights({k: zz[k] for k in arrays}, arrays, path, "training")
    except InstanceError as exc:  # "is not a training policy (<why>)": keep the why
        raise _refuse(path, exc.rule.partition("(")[2].rstrip(")")) from None
    out: dict[str, Any] = {k: zz[k] for k in arrays}
    for key in (k for k in template if k not in arrays and k not in _JSON_KEYS):
        v = zz[key]
        if v.shape != () or v.dtype.kind not in "fiu":
            raise _refuse(path, f"{key!r} is not a number")
        if key in _INT_KEYS and v.dtype.kind not in "iu":
            raise _refuse(path, f"{key!r} = {v} is not an integer")
        low = _LOW.get(key, 0.0 if key in _INT_KEYS else -np.inf)
        if not np.isfinite(v) or v < low:
            raise _refuse(path, f"{key!r} = {v} is not a finite number >= {low:g}")
        out[key] = v
    steps, iteration = int(out["steps"]), int(out["iteration"])
    rows = _json(path, "rows", zz["rows"])
    if not isinstance(rows, list) or len(rows) != iteration or not all(
            isinstance(r, dict) and set(CURVE_FIELDS) <= set(r) and all(
                isinstance(r[f], int | float) and not isinstance(r[f], bool)
                for f in CURVE_FIELDS) for r in rows):
        raise _refuse(path, f"'rows' is not {iteration} learning-curve rows, one per iteration")
    counted = [int(r["steps"]) for r in rows]
    if [r["iteration"] for r in rows] != list(range(1, iteration + 1)) or \
            counted != sorted(set(counted)) or (rows and counted[-1] != steps) or \
            (not rows and steps != 0):
        raise _refuse(path, f"steps = {steps} after {iteration} iterations disagrees with the "
                      "learning-curve rows")
    before_last = counted[-2] if iteration >= 2 else 0
    target, batch = saved.get("steps"), saved.get("batch")
    if iteration and (not isinstance(target, int) or before_last >= target):
        raise _refuse(path, f"steps = {steps}: its last iteration started at {before_last} "
                      f"steps, not below the run's {target} steps")
    if isinstance(batch, int) and steps < iteration * batch:
        raise _refuse(path, f"steps = {steps} is fewer than {iteration} iterations of "
                      f"{batch} steps")
    most = batch + episode_steps - 1 if isinstance(batch, int) and episode_steps else None
    grown = [b - a for a, b in zip([0, *counted], counted, strict=False)]
    if most is not None and grown and max(grown) > most:
        raise _refuse(path, f"an iteration of {max(grown)} steps, one collects at most {most} "
                      f"(batch {batch} + an episode of at most {episode_steps} steps)")
    out["rows"] = rows
    state = _json(path, "rng", zz["rng"])
    try:
        np.random.default_rng().bit_generator.state = state
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise _refuse(path, f"'rng' is not a random generator state ({exc})") from None
    out["rng"], out["config"] = state, saved
    return out


# ---------------------------------------------------------------------- files
def paths_of(out: Path) -> dict[str, Path]:
    """The files of a run beside ``out``."""
    stem = out.with_suffix("")
    return {"weights": out, "card": stem.with_suffix(".json"),
            "csv": Path(f"{stem}.curve.csv"), "png": Path(f"{stem}.curve.png"),
            "ckpt": Path(f"{stem}.ckpt.npz")}


def save_npz(path: Path, arrays: dict[str, Any]) -> None:
    from dmlopt import io

    io.save_npz(path, **arrays)


def write_curve(paths: dict[str, Path], rows: list[dict[str, float]], title: str,
                train_label: str) -> None:
    """The learning curve: CSV of the rows and a PNG of training and validation acceptance."""
    from dmlopt.io import atomic_write_text, save_figure

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
    save_figure(fig, paths["png"], dpi=100)
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
    from dmlopt.io import atomic_write_text

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
            # the checkpoint first: a progress line means its iteration is safe on disk
            save_npz(paths["ckpt"], state.checkpoint(config, time.perf_counter() - t0))
            if bar is not None:
                bar.update(min(state.steps, steps) - bar.n)
                bar.set_postfix_str(f"acc {b['acceptance']:.3f} val {val:.3f}")
            else:
                print(f"it {it} steps {state.steps}/{steps} acc {b['acceptance']:.3f} "
                      f"val {val:.3f} kl {stats['kl']:.4f} {row['seconds']:.0f}s",
                      file=sys.stderr, flush=True)
            if it % eval_every == 0:
                write_curve(paths, state.rows, arch.title, arch.train_label)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    arch.save(paths["weights"], state.best if state.best_score >= 0 else state.params)
    if state.rows:
        write_curve(paths, state.rows, arch.title, arch.train_label)
    card = arch.card(state, wall)
    atomic_write_text(paths["card"], json.dumps(card, indent=2) + "\n")
    paths["ckpt"].unlink(missing_ok=True)
    return card
