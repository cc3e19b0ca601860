"""The learned Nara allocator (paper 001, section 3.3): a trained policy rolled out greedily.

numpy only: the weights are an .npz (:mod:`dmlopt.models.nara.policy`), the forward pass is
numpy, so ``pip install dmlopt`` (without the ``learn`` extra) runs the shipped policies
``data/nara/policies/nara-<dataset>.npz`` (trained on topology alpha by
:mod:`dmlopt.heuristics.nara.learn`).

Which policy: option ``policy`` (a path, or a dataset name for that shipped policy) when given;
otherwise the shipped policy of the instance's dataset, read from the generator's instance name
``<topology>-<dataset>-n<N>-s<seed>`` (:func:`dmlopt.models.nara.generators._generate`); an instance
whose name names no dataset uses the uniform policy (documented default; the instance JSON is
unchanged).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pydantic

from dmlopt.contract import Options as ContractOptions
from dmlopt.contract import Size
from dmlopt.models import nara
from dmlopt.models.nara import policy as P
from dmlopt.models.nara.sim import State, episode_memory

DATASETS = ("uniform", "azure", "alibaba")
DEFAULT_DATASET = "uniform"


class Options(ContractOptions):
    """Options of the ``nara`` heuristic."""

    policy: str | None = pydantic.Field(
        default=None, description="policy .npz path, or a dataset name (uniform, azure, "
        "alibaba) for that shipped policy; default: the shipped policy of the instance's dataset")


def shipped_policy(dataset: str) -> Path:
    """Path of the shipped policy trained on ``dataset`` (topology alpha)."""
    from dmlopt.errors import InstanceError

    if dataset not in DATASETS:
        raise InstanceError("dataset", dataset, f"is not one of {', '.join(DATASETS)}")
    from importlib import resources

    return Path(str(resources.files("dmlopt.data").joinpath("nara", "policies",
                                                            f"nara-{dataset}.npz")))


def dataset_of(instance: nara.Instance) -> str:
    """The dataset named in the instance's name (module docstring); uniform when none."""
    parts = instance.name.split("-")
    return parts[1] if len(parts) >= 2 and parts[1] in DATASETS else DEFAULT_DATASET


def load_policy(path: str | Path) -> dict[str, np.ndarray]:
    """Weights of a policy file; :class:`dmlopt.errors.InstanceError` when unusable."""
    from dmlopt.errors import InstanceError

    p = Path(path)
    if not p.is_file():
        raise InstanceError("policy", str(path), "is not a file")
    try:
        params = P.load(p)
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise InstanceError("policy", str(path), f"is not a Nara policy ({exc})") from None
    check_weights(params, P.load(shipped_policy(DEFAULT_DATASET)), path, "Nara")
    return params


def check_weights(params: dict[str, np.ndarray], reference: dict[str, np.ndarray],
                  path: str | Path, kind: str) -> None:
    """Refuse weights the fixed architecture cannot use: every array of ``reference`` (a
    shipped policy of the same kind) present with its shape, and every value finite.
    Raises :class:`dmlopt.errors.InstanceError` naming the array."""
    from dmlopt.errors import InstanceError

    for key, ref in reference.items():
        got = params.get(key)
        if got is None or got.shape != ref.shape:
            shape = None if got is None else got.shape
            raise InstanceError("policy", str(path), f"is not a {kind} policy (weights {key!r} "
                                f"have shape {shape}, the architecture needs {ref.shape})")
        if not np.isfinite(got).all():
            raise InstanceError("policy", str(path), f"is not a {kind} policy (weights {key!r} "
                                "hold NaN or infinite values)")


def rollout(instance: nara.Instance, params: dict[str, np.ndarray], *, greedy: bool = True,
            rng: np.random.Generator | None = None) -> nara.Solution:
    """One episode of the policy: greedy argmax (rollouts, section 3.3.2) or sampled.

    The transitions of :class:`dmlopt.models.nara.NaraEnv` with ``mask="feasible"`` run on
    the simulator directly (no gymnasium import; the tests check both give the same
    allocations): a request with no allowed server is dropped."""
    st = State(instance)
    g = P.Graph(P.graph_of(instance))
    for j in range(len(instance.requests)):
        st.begin(j)
        mask = st.feasible()
        while mask.any():
            obs = P.observe(st, mask)
            lg = P.logits_one(params, g, obs["nodes"], obs["links"], obs["state"], mask)
            if greedy:
                a = P.greedy_pick(lg)
            else:
                pr = np.exp(P.log_softmax(lg))
                a = int(rng.choice(len(pr), p=pr / pr.sum()))
            if not st.add(a):  # rule (i): cannot happen under the feasible mask
                break
            if st.covered:  # rule (iii)
                st.finish()
                break
            mask = st.feasible()
        if st.req is not None:
            st.drop()
    return st.solution()


def allocate_nara(instance: nara.Instance, *, seed: int = 0,
                  policy: str | None = None) -> nara.Solution:
    """Nara: the learned GNN policy rolled out greedily in the Gymnasium environment.

    Numpy only (no deep-learning framework); deterministic.

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`).
    seed : int, optional
        Unused (greedy rollout); default 0.
    policy : str or None, optional
        A policy ``.npz`` path, or a dataset name (``uniform``, ``azure``, ``alibaba``) for that
        shipped policy (the cross-dataset runs of Table 7); None (default): the shipped policy
        of the instance's dataset (trained on topology alpha, ``data/nara/policies``).

    Returns
    -------
    Solution
        One allocation per request (None when dropped or rejected).

    References
    ----------
    Paper 001 (Shabka and Zervas), section 3.3 (action representation GNN and policy model),
    Appendix E (training); our reading where the paper is open is in
    :mod:`dmlopt.models.nara.policy`.
    """
    del seed
    if policy is None:
        policy = dataset_of(instance)
    path = shipped_policy(policy) if policy in DATASETS else policy
    return rollout(instance, load_policy(path))


#: interpreted overhead charged per pick (a GNN pass is a few dozen small numpy calls and the
#: simulator's step): about twice the measured 0.18 ms per pick less its numeric terms (growth
#: series, alpha topology, 2,048-4,096 requests), in operations
PICK_OVERHEAD = 2e5
#: the GNN's multiply-adds per operation: sparse and dense products run several per
#: nanosecond (on delta, 2,560 servers, a pick took 1.0 ms of CPU for 9e6 of them)
FLOPS_PER_OP = 3


def estimate(instance: nara.Instance, options: Options | None = None) -> Size:
    """(memory bytes, work ops) of a rollout: per pick a GNN pass over the graph (its
    multiply-adds over :data:`FLOPS_PER_OP`) and :data:`PICK_OVERHEAD`; memory: the GNN's
    node and message arrays, the simulator (:func:`dmlopt.models.nara.sim.episode_memory`)
    and 1 KiB per request (its allocation in the episode and the Solution)."""
    del options
    net = instance.net
    n_msgs = net.n_nodes + 2 * net.n_links
    per_pick = (2 * n_msgs * P.HIDDEN * P.STAGES + 2 * net.n_nodes * 18 * P.HIDDEN * P.STAGES
                + 2 * net.n_servers * 40 * P.P2_HIDDEN) / FLOPS_PER_OP + PICK_OVERHEAD
    picks = int(sum(max(-(-r.c // 10), -(-r.m // 10)) for r in instance.requests))
    memory = 8 * (net.n_nodes * (8 + P.HIDDEN * P.STAGES) + 2 * n_msgs * P.HIDDEN) + 2.5e5 \
        + episode_memory(net) + 1024 * len(instance.requests)
    return Size(float(memory), float(picks * per_pick))


def describe(path: str | Path) -> dict[str, Any]:
    """The model card (JSON beside the weights) of a policy, {} when there is none."""
    import json

    card = Path(path).with_suffix(".json")
    return json.loads(card.read_text()) if card.is_file() else {}
