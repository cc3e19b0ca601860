"""``nara-netfit``: ours, a learned policy over netfit-probe's candidates with netfit's features
(Nara, paper 001; **not** the paper's agent, named apart from ``nara`` for that reason).

It is the other route to a learned allocator that beats netfit-probe: where the paper's
architecture does not, a learned policy over netfit's candidates with netfit's features. It
keeps the paper's machinery where it can (section 3.3: the GraphSAGE stages of
:mod:`dmlopt.models.nara.policy` on the raw node and link features of Appendix E.1, masked
logits, softmax in training and argmax in rollouts; PPO of Appendix E.3 in
:mod:`.nara_netfit_learn`) and changes what an action is:

* **One decision per request**, not one per server (deviation from section 3.2's one action =
  one server). The actions are the candidate allocations of ``netfit-probe``
  (:func:`dmlopt.heuristics.nara.probe._candidates`, ``max_cand`` = 4: up to 5 one-server
  best fits, or up to 8 one-rack orders, or netfit's several-rack plan; every one already
  checked against constraint 3) padded to :data:`CMAX` - 1 slots, plus a **reject** action
  (admission control, which is what makes netfit-probe better than netfit). A request with
  no candidate is dropped.
* **Features** (our "netfit features"). Per candidate (:data:`CF` = 12): the fraction of
  :data:`N_PROBE` probe requests (drawn, seeded, from the requests seen so far; never from
  future ones) that stay placeable after it (netfit-probe's relaxed test,
  :class:`dmlopt.heuristics.nara.probe.Probes`), the fraction placeable locally, the two
  losses against the current state, servers / 5, racks used / 4, one-server, netfit's own plan
  (rank 0), rank / CMAX, the mean free CPU/memory fraction left on its servers, their mean free
  access bandwidth fraction after it, reject. Per request (:data:`RF` = 10): volume / mean
  volume seen (netfit-probe's admission measure), big (> 1.8 x), c, m and b over a server's
  mean capacity, holding period / mean seen, CPU and memory utilisation (the paper's state
  3-tuple without t_r, which the ratio replaces), the probe fractions placeable now.
* **Score**: logit_c = D3 ReLU(D2 ReLU(D1 [f_c, f_r, g_c] + d1) + d2) + d3, with g_c the
  mean GNN embedding of the candidate's servers (the paper's action representation, section
  3.3.1, pooled over the servers of an allocation; zeros for reject) and hidden layers of
  :data:`H1`, :data:`H2`; the value network is :func:`dmlopt.models.nara.policy.value` on
  [f_r, mean server features, mean link features].

The initial policy of training is netfit-probe's rule cloned (:func:`teacher`: the candidate
with the most placeable probes + 0.5 x local ones, reject a big request that makes >= 10 % of
the probes unplaceable), then PPO; both are reported. Rollouts are numpy only.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pydantic

from dmlopt.contract import Options as ContractOptions
from dmlopt.contract import Size
from dmlopt.heuristics.nara import probe as PR
from dmlopt.heuristics.nara.agent import FLOPS_PER_OP
from dmlopt.models import nara
from dmlopt.models.nara import policy as P
from dmlopt.models.nara.sim import State, episode_memory

MAX_CAND = 4  # netfit-probe's default
CMAX = 2 * MAX_CAND + 1  # candidate slots (at most 2 x max_cand one-rack orders) + reject
REJECT = CMAX - 1  # the reject action's slot
N_PROBE = 32
CF = 12
RF = 10
H1, H2 = 32, 16
VERSION = 1
KIND = "nara-netfit"
#: netfit-probe's rule (the teacher of the initial policy): its defaults
W_LOCAL, ADMIT_K, ADMIT_LOSS = 0.5, 1.8, 0.1
POLICY_KEYS = [f"{k}{i}" for i in range(P.STAGES) for k in "Wb"] + \
    ["D1", "d1", "D2", "d2", "D3", "d3"]
VALUE_KEYS = list(P.VALUE_KEYS)
DATASETS = ("uniform", "azure", "alibaba")


# ---------------------------------------------------------------------- features
class Featurizer:
    """Per-episode feature builder: the requests seen so far and the probe generator."""

    def __init__(self, instance: nara.Instance, seed: int = 0) -> None:
        net = instance.net
        self.net = net
        self.rng = np.random.default_rng(seed)
        self.seen = np.zeros((len(instance.requests), 5))  # c, m, b, t, volume
        self.n_seen = 0
        self.C, self.M = max(int(net.cpu.sum()), 1), max(int(net.mem.sum()), 1)
        self.cpu_mean = max(float(net.cpu.mean()), 1.0)
        self.mem_mean = max(float(net.mem.mean()), 1.0)
        self.acc_cap = np.maximum(net.cap[net.access].astype(float), 1e-9)
        self.acc_mean = float(self.acc_cap.mean())
        # the widest-path table and compatibility matrices, kept across the episode's requests
        self.cache = PR.Cache(net)

    def observe(self, state: State) -> tuple[dict[str, np.ndarray], list[list[int]]] | None:
        """Features of the pending request (module docstring) and its candidates; None when
        there is no candidate (the request is dropped)."""
        net, req = self.net, state.req
        vol = (req.c / self.C + req.m / self.M) / 2 * req.t
        self.seen[self.n_seen] = (req.c, req.m, req.b, req.t, vol)
        self.n_seen += 1
        cands, _ = PR._candidates(state, MAX_CAND)
        if not cands:
            return None
        seen = self.seen[:self.n_seen]
        idx = self.rng.integers(0, self.n_seen, N_PROBE)
        pc, pm, pb = (seen[idx, 0].astype(np.int64), seen[idx, 1].astype(np.int64),
                      seen[idx, 2])
        probes = PR.Probes(state, None, pc, pm, pb, self.cache)
        pl0, loc0 = probes.base()
        pl0, loc0 = float(pl0.mean()), float(loc0.mean())
        pl_all, loc_all = probes.after_all(state, cands)   # (candidates, probes)
        cand = np.zeros((CMAX, CF))
        member = np.zeros((CMAX, net.n_servers))
        mask = np.zeros(CMAX, dtype=bool)
        for i, c in enumerate(cands):
            cf, mf, acc = PR.taken(state, probes.acc0, c)
            racks = {int(net.rack[s]) for s in c}
            pl, loc = float(pl_all[i].mean()), float(loc_all[i].mean())
            left = (cf / np.maximum(net.cpu[c], 1) + mf / np.maximum(net.mem[c], 1)) / 2
            cand[i] = (pl, loc, pl0 - pl, loc0 - loc, min(len(c) / 5, 4.0),
                       min(len(racks) / 4, 4.0), len(c) == 1, i == 0, i / CMAX,
                       float(left.mean()), float((np.maximum(acc, 0) / self.acc_cap[c]).mean()),
                       0.0)
            member[i, c] = 1.0 / len(c)
            mask[i] = True
        cand[REJECT, :2] = pl0, loc0
        cand[REJECT, 11] = 1.0
        mask[REJECT] = True
        mean_v = float(seen[:, 4].mean())
        mean_t = max(float(seen[:, 3].mean()), 1e-9)
        c_util = 1 - state.cpu_free.sum() / max(net.cpu.sum(), 1)
        m_util = 1 - state.mem_free.sum() / max(net.mem.sum(), 1)
        reqf = np.array([min(vol / max(mean_v, 1e-12), 4.0), float(vol > ADMIT_K * mean_v),
                         min(req.c / self.cpu_mean, 4.0), min(req.m / self.mem_mean, 4.0),
                         min(req.b / self.acc_mean, 4.0), min(req.t / mean_t, 4.0),
                         c_util, m_util, pl0, loc0])
        g = P.observe(state, state.feasible())
        obs = {"nodes": g["nodes"], "links": g["links"], "cand": cand, "req": reqf,
               "member": member, "mask": mask}
        return obs, cands


def teacher(obs: dict[str, np.ndarray]) -> int:
    """netfit-probe's choice on these features (:mod:`.probe`'s rule with its defaults): the
    candidate with the largest placeable + 0.5 x local probe fraction (ties to the lower rank);
    reject when the request is big and that candidate makes >= 10 % of the probes
    unplaceable."""
    cand, mask = obs["cand"], obs["mask"].copy()
    mask[REJECT] = False
    score = np.where(mask, cand[:, 0] + W_LOCAL * cand[:, 1], -np.inf)
    best = int(np.argmax(score))
    if obs["req"][1] > 0 and cand[best, 2] >= ADMIT_LOSS - 1e-9:
        return REJECT
    return best


# ---------------------------------------------------------------------- network
def init_params(seed: int = 0) -> dict[str, np.ndarray]:
    """Glorot-uniform weights, zero biases; the GNN stages as in the paper's policy."""
    base = P.init_params(seed=seed)
    rng = np.random.default_rng(seed + 1)

    def dense(i: int, o: int, gain: float = 1.0) -> np.ndarray:
        lim = gain * np.sqrt(6.0 / (i + o))
        return rng.uniform(-lim, lim, (i, o))

    p = {k: base[k] for k in POLICY_KEYS if k in base}
    p["D1"], p["d1"] = dense(CF + RF + P.HIDDEN, H1), np.zeros(H1)
    p["D2"], p["d2"] = dense(H1, H2), np.zeros(H2)
    p["D3"], p["d3"] = dense(H2, 1, 0.1), np.zeros(1)
    vin = RF + P.NODE_FEATURES + P.LINK_FEATURES
    p["V1"], p["v1"] = dense(vin, P.VALUE_HIDDEN), np.zeros(P.VALUE_HIDDEN)
    p["V2"], p["v2"] = dense(P.VALUE_HIDDEN, P.VALUE_HIDDEN), np.zeros(P.VALUE_HIDDEN)
    p["V3"], p["v3"] = dense(P.VALUE_HIDDEN, 1, 0.1), np.zeros(1)
    return p


def logits(params: dict[str, np.ndarray], g: P.Graph, b: dict[str, np.ndarray],
           cache: dict[str, Any] | None = None, z0: np.ndarray | None = None) -> np.ndarray:
    """Masked logits (B, CMAX) of a batch (keys nodes, links, cand, req, member, mask, each
    with a leading batch axis); ``cache`` collects what :func:`backward` needs."""
    gc: dict[str, Any] = {}
    h = P.gnn_forward(params, g, np.asarray(b["nodes"], dtype=float), b["links"], gc, z0)
    hs = h[:, g.server_node]  # (B, S, 16)
    member = b["member"]
    gcand = np.matmul(member, hs)  # (B, C, 16)
    B = hs.shape[0]
    u = np.concatenate([b["cand"], np.broadcast_to(b["req"][:, None], (B, CMAX, RF)), gcand],
                       axis=2)
    a1 = u @ params["D1"] + params["d1"]
    q1 = np.maximum(a1, 0.0)
    a2 = q1 @ params["D2"] + params["d2"]
    q2 = np.maximum(a2, 0.0)
    out = (q2 @ params["D3"])[..., 0] + params["d3"][0]
    out = np.where(b["mask"], out, -np.inf)
    if cache is not None:
        cache.update(gnn=gc, u=u, q1=q1, q2=q2, member=member, B=B, N=h.shape[1])
    return out


def backward(params: dict[str, np.ndarray], g: P.Graph, cache: dict[str, Any],
             dlogit: np.ndarray) -> dict[str, np.ndarray]:
    """Gradients of :data:`POLICY_KEYS` given d(loss)/d(logits) (B, CMAX), zero where masked."""
    q1, q2, u = cache["q1"], cache["q2"], cache["u"]
    dl = dlogit[..., None]
    grads = {"D3": q2.reshape(-1, H2).T @ dl.reshape(-1, 1), "d3": np.array([dlogit.sum()])}
    da2 = dl * params["D3"][:, 0] * (q2 > 0)
    grads["D2"] = q1.reshape(-1, H1).T @ da2.reshape(-1, H2)
    grads["d2"] = da2.sum(axis=(0, 1))
    da1 = (da2 @ params["D2"].T) * (q1 > 0)
    grads["D1"] = u.reshape(-1, u.shape[-1]).T @ da1.reshape(-1, H1)
    grads["d1"] = da1.sum(axis=(0, 1))
    dg = (da1 @ params["D1"].T)[..., CF + RF:]  # (B, C, 16)
    dhs = np.matmul(cache["member"].transpose(0, 2, 1), dg)  # (B, S, 16)
    dh = np.zeros((cache["B"], cache["N"], P.HIDDEN))
    dh[:, g.server_node] = dhs
    grads.update(P.gnn_backward(params, g, cache["gnn"], dh))
    return grads


def value_input(g: P.Graph, b: dict[str, np.ndarray]) -> np.ndarray:
    """Value network input [f_r, mean server node features, mean link features] (B, 20)."""
    nodes = np.asarray(b["nodes"], dtype=float)
    return np.concatenate([b["req"], nodes[:, g.server_node].mean(axis=1),
                           np.asarray(b["links"], dtype=float).mean(axis=1)], axis=1)


def batch_of(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One observation as a batch of one."""
    return {k: np.asarray(v)[None] for k, v in obs.items()}


# ---------------------------------------------------------------------- rollout
def execute(state: State, cands: list[list[int]], action: int) -> bool:
    """Apply an action to the pending request: allocate candidate ``action`` (True) or
    reject (False)."""
    if action == REJECT or action >= len(cands):
        state.drop()
        return False
    for s in cands[action]:
        if not state.add(s):  # never happens: candidates are checked against constraint 3
            state.drop()
            return False
    state.finish()
    return True


def rollout(instance: nara.Instance, params: dict[str, np.ndarray] | None, *,
            greedy: bool = True, rng: np.random.Generator | None = None, seed: int = 0,
            use_teacher: bool = False) -> nara.Solution:
    """One episode: the policy's greedy (or sampled) choice per request; with
    ``use_teacher`` netfit-probe's rule on the same features instead (:func:`teacher`)."""
    st = State(instance)
    g = P.Graph(P.graph_of(instance))
    feat = Featurizer(instance, seed)
    for j in range(len(instance.requests)):
        st.begin(j)
        got = feat.observe(st)
        if got is None:
            st.drop()
            continue
        obs, cands = got
        if use_teacher:
            a = teacher(obs)
        else:
            lg = logits(params, g, batch_of(obs))[0]
            if greedy:
                a = P.greedy_pick(lg)
            else:
                pr = np.exp(P.log_softmax(lg))
                a = int(rng.choice(CMAX, p=pr / pr.sum()))
        execute(st, cands, a)
    return st.solution()


# ---------------------------------------------------------------------- files
def save(path: Any, params: dict[str, np.ndarray]) -> None:
    """Write the policy weights as .npz (numpy only, atomically)."""
    from dmlopt import io

    io.save_npz(path, __version__=np.array(VERSION), __kind__=np.array(KIND),
                **{k: params[k] for k in POLICY_KEYS})


def load(path: Any) -> dict[str, np.ndarray]:
    """Read weights written by :func:`save`; ValueError on another file (a ``nara`` policy
    included)."""
    with np.load(path) as z:
        if "__kind__" not in z or str(z["__kind__"]) != KIND or int(z["__version__"]) != VERSION:
            raise ValueError(f"{path}: not a {KIND} policy file (version {VERSION})")
        p = {k: z[k].astype(float) for k in z.files if not k.startswith("__")}
    missing = [k for k in POLICY_KEYS if k not in p]
    if missing:
        raise ValueError(f"{path}: missing weights {missing}")
    return p


def shipped_policy(dataset: str) -> Path:
    """Path of the shipped ``nara-netfit`` policy trained on ``dataset`` (topology alpha)."""
    from importlib import resources

    from dmlopt.errors import InstanceError

    if dataset not in DATASETS:
        raise InstanceError("dataset", dataset, f"is not one of {', '.join(DATASETS)}")
    return Path(str(resources.files("dmlopt.data").joinpath("nara", "policies",
                                                            f"{KIND}-{dataset}.npz")))


def load_policy(path: str | Path) -> dict[str, np.ndarray]:
    """Weights of a policy file; :class:`dmlopt.errors.InstanceError` when unusable."""
    from dmlopt.errors import InstanceError

    p = Path(path)
    if not p.is_file():
        raise InstanceError("policy", str(path), "is not a file")
    try:
        params = load(p)
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise InstanceError("policy", str(path), f"is not a {KIND} policy ({exc})") from None
    from dmlopt.heuristics.nara.agent import check_weights

    check_weights(params, load(shipped_policy("uniform")), path, KIND)
    return params


# ---------------------------------------------------------------------- heuristic
class Options(ContractOptions):
    """Options of the ``nara-netfit`` heuristic."""

    policy: str | None = pydantic.Field(
        default=None, description="policy .npz path, or a dataset name (uniform, azure, "
        "alibaba) for that shipped nara-netfit policy; default: the shipped policy of the "
        "instance's dataset (uniform when it has none)")


def allocate(instance: nara.Instance, *, seed: int = 0, policy: str | None = None
             ) -> nara.Solution:
    """A learned policy that picks one of netfit-probe's candidate allocations, or rejects (ours).

    GNN embedding + MLP over netfit's features, cloned from netfit-probe and then trained by
    PPO (``dmlopt train nara --arch netfit``); rolled out greedily, numpy only.

    Parameters
    ----------
    instance : Instance
        A Nara episode (:class:`dmlopt.models.nara.Instance`).
    seed : int, optional
        Seed of the probe draws, as netfit-probe's (default 0).
    policy : str or None, optional
        A policy ``.npz`` path, or a dataset name (``uniform``, ``azure``, ``alibaba``) for
        that shipped nara-netfit policy; None (default): the shipped policy of the instance's
        dataset (uniform when it has none).

    Returns
    -------
    Solution
        One allocation per request (None when dropped or rejected).

    References
    ----------
    Ours, not paper 001's agent: its learning setup (section 3.3, PPO of Appendix E) on a
    different action space, netfit-probe's candidates
    (:func:`dmlopt.heuristics.nara.allocate_netfit_probe`).
    """
    from dmlopt.heuristics.nara.agent import dataset_of

    name = policy if policy is not None else dataset_of(instance)
    path = shipped_policy(name) if name in DATASETS else name
    return rollout(instance, load_policy(path), seed=seed)


#: interpreted overhead charged per request (the probed candidates in Python, the GNN's small
#: numpy calls, the simulator's step): about twice the measured 0.83-0.90 ms per request
#: (alpha topology, 4,096 requests), in operations
REQUEST_OVERHEAD = 1.7e6


def estimate(instance: nara.Instance, options: Options | None = None) -> Size:
    """(memory, work) of a rollout: per request netfit-probe's candidates and probe tests
    (:func:`dmlopt.heuristics.nara.probe_estimate`'s terms) plus one GNN pass (its
    multiply-adds over :data:`~dmlopt.heuristics.nara.agent.FLOPS_PER_OP`), and
    :data:`REQUEST_OVERHEAD`; memory: the probe arrays and the episode's
    :class:`~dmlopt.heuristics.nara.probe.Cache`, the GNN's arrays, the
    simulator (:func:`dmlopt.models.nara.sim.episode_memory`) and 2 KiB per request
    (allocation and Solution: its plans span several servers)."""
    del options
    net = instance.net
    S, R, N = net.n_servers, net.n_racks, net.n_nodes
    n = len(instance.requests)
    gnn = (2 * (N + 2 * net.n_links) * P.HIDDEN * P.STAGES
           + 2 * N * 18 * P.HIDDEN * P.STAGES) / FLOPS_PER_OP
    per = (R * R + S) * N_PROBE + gnn + CMAX * (S * P.HIDDEN + 38 * H1) + S * R \
        + REQUEST_OVERHEAD
    n_msgs = N + 2 * net.n_links
    memory = 8.0 * (3 * N_PROBE * R * R + S * R + CMAX * S + N * (8 + P.HIDDEN * P.STAGES)
                    + 2 * n_msgs * P.HIDDEN) \
        + 2.5e5 + 2048.0 * n + episode_memory(net) + PR.cache_memory(net, N_PROBE)
    return Size(memory, float(n * per))
