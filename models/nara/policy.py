"""Nara's policy in numpy: GraphSAGE action representations + P1/P2 (paper 001, section 3.3,
Appendix E.1-E.2), the forward pass used for rollouts and its hand-written backward pass used by
:mod:`dmlopt.models.nara_learn` (PPO). numpy only, so a shipped policy (.npz) rolls out without
any learning framework.

Architecture (our reading where the paper is open, tested in ``tests/nara/test_learn.py``):

* Message passing (section 3.3.1): node v receives [h_u, e_uv] from every neighbour u (the raw
  link features, :mod:`.env`) and keeps [h_v, 0] for itself; stage i computes
  h_v <- ReLU(W_i mean_{x in M_v} x + b_i) with M_v the mailbox plus the self entry
  (mean-pool aggregation 1/(|N(v)|+1) sum, Appendix E.1's ReLU per aggregation layer). With a
  linear W_i, "W_i applied to each message then averaged" and "W_i applied to the average" are
  the same map, which is why the mean is taken first (cheaper). 3 stages of 16 units.
* The mean of the embeddings of the servers already selected for the awaiting request
  (zeros when none) is concatenated to every server's embedding: v = [h_v, mean_{V'} h] (32).
* P1 (section 3.3.2, E.2): s' = A2 ReLU(A1 s + a1) + a2, hidden 8, output 8, on the state
  <c_util, m_util, t_r / S> (t_r in units of the number of servers S, so that the policy sees
  the same scale on every topology: the generators' mean holding period grows with S). The
  observation carries t_r / U with U = :func:`time_unit` (S rounded up to a power of two, an
  exact scaling in float32, clipped to [0, CLIP]); :func:`state_input` turns it into t_r / S
  with the same bits as dividing the raw t_r by S.
* P2: logit_v = C2 ReLU(C1 [s', v] + c1) + c2 with a hidden layer of 16. Deviation: the paper's
  P2 is a single layer, but a single linear layer gives logit_v = w_s . s' + w_v . v, whose
  s'-term is the same for every action and cancels in the softmax (the observation could not
  influence the choice); one hidden layer makes s' matter.
* Logits of masked servers are -inf (action masking, section 3.3.2); stochastic (softmax
  sampling) in training, greedy in rollouts (:func:`greedy_pick`: near-ties within 1e-9 go to
  the lowest index, so a shipped policy decides the same on every BLAS kernel).
* Value network (not shared, RLlib's ``vf_share_layers=False``): a separate MLP 13 -> 32 -> 32
  -> 1 on [state, mean node features of the servers, mean link features], output x 10 (the
  scale of the +10 reward). Deviation: RLlib would copy the whole GNN for the value function;
  a pooled-feature MLP keeps the backward pass small.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # scipy is imported where it is used: `dmlopt list` stays light
    import scipy.sparse as sp

from dmlopt.models import nara
from dmlopt.models.nara.sim import State

HIDDEN = 16  # GNN stage width (Appendix E.1)
STAGES = 3  # message-passing stages (Appendix E.1)
P1_HIDDEN = 8  # Appendix E.2
P1_OUT = 8
P2_HIDDEN = 16
VALUE_HIDDEN = 32
VALUE_SCALE = 10.0
VERSION = 1
#: features per node and per link (:mod:`.env`'s docstring: Appendix E.1, our 8)
NODE_FEATURES = 8
LINK_FEATURES = 2
#: relative features are clipped to [0, CLIP]
CLIP = 4.0
DENSE_MAX = 400  # graphs up to this many nodes use dense aggregation matrices


class Graph:
    """Aggregation operators of one DCN graph (fixed per topology)."""

    def __init__(self, graph: dict[str, np.ndarray]) -> None:
        import scipy.sparse as sp

        N = int(graph["n_nodes"])
        src, dst, link = graph["src"], graph["dst"], graph["link"]
        n_links = int(link.max()) + 1 if link.size else 0
        deg = np.bincount(dst, minlength=N).astype(float)
        inv = 1.0 / (deg + 1.0)
        # A_hat: (I + adjacency) / (deg + 1), rows = receivers
        rows = np.concatenate([np.arange(N), dst])
        cols = np.concatenate([np.arange(N), src])
        self.A = sp.csr_matrix((inv[rows], (rows, cols)), shape=(N, N))
        self.AT = self.A.T.tocsr()
        # E_agg: (N, L) sums the features of the links a node receives messages over
        self.E = sp.csr_matrix((inv[dst], (dst, link)), shape=(N, n_links))
        self.server_node = np.asarray(graph["server_node"], dtype=np.int64)
        self.N, self.S, self.L = N, len(self.server_node), n_links
        # small graphs: dense operators (a batched matmul beats scipy's per-call overhead)
        if N <= DENSE_MAX:
            self.A, self.AT, self.E = (M.toarray() for M in (self.A, self.AT, self.E))


def _spmm(M: sp.csr_matrix | np.ndarray, X: np.ndarray) -> np.ndarray:
    """M (N, K) applied to a batch X (B, K, F) -> (B, N, F)."""
    if isinstance(M, np.ndarray):
        return np.matmul(M, X)
    B, K, F = X.shape
    Y = M @ X.transpose(1, 0, 2).reshape(K, B * F)
    # contiguous: numpy's stacked matmul on a transposed view bypasses BLAS (slow)
    return np.ascontiguousarray(np.asarray(Y).reshape(M.shape[0], B, F).transpose(1, 0, 2))


def init_params(node_features: int = NODE_FEATURES, link_features: int = LINK_FEATURES,
                seed: int = 0
                ) -> dict[str, np.ndarray]:
    """Glorot-uniform weights, zero biases."""
    rng = np.random.default_rng(seed)

    def dense(i: int, o: int, gain: float = 1.0) -> np.ndarray:
        lim = gain * np.sqrt(6.0 / (i + o))
        return rng.uniform(-lim, lim, (i, o))

    p: dict[str, np.ndarray] = {}
    fin = node_features
    for i in range(STAGES):
        p[f"W{i}"] = dense(fin + link_features, HIDDEN)
        p[f"b{i}"] = np.zeros(HIDDEN)
        fin = HIDDEN
    p["A1"], p["a1"] = dense(3, P1_HIDDEN), np.zeros(P1_HIDDEN)
    p["A2"], p["a2"] = dense(P1_HIDDEN, P1_OUT), np.zeros(P1_OUT)
    p["C1"], p["c1"] = dense(P1_OUT + 2 * HIDDEN, P2_HIDDEN), np.zeros(P2_HIDDEN)
    p["C2"], p["c2"] = dense(P2_HIDDEN, 1, 0.1), np.zeros(1)
    vin = 3 + node_features + link_features
    p["V1"], p["v1"] = dense(vin, VALUE_HIDDEN), np.zeros(VALUE_HIDDEN)
    p["V2"], p["v2"] = dense(VALUE_HIDDEN, VALUE_HIDDEN), np.zeros(VALUE_HIDDEN)
    p["V3"], p["v3"] = dense(VALUE_HIDDEN, 1, 0.1), np.zeros(1)
    return p


POLICY_KEYS = [f"{k}{i}" for i in range(STAGES) for k in "Wb"] + \
    ["A1", "a1", "A2", "a2", "C1", "c1", "C2", "c2"]
VALUE_KEYS = ["V1", "v1", "V2", "v2", "V3", "v3"]


def time_unit(n_servers: int) -> float:
    """The unit of the observed holding period: the number of servers rounded up to a power
    of two.

    Parameters
    ----------
    n_servers : int
        Servers of the topology (S).

    Returns
    -------
    float
        2 ** ceil(log2 S). Dividing by a power of two is exact in float32, so
        :func:`state_input` recovers the float32 holding period exactly.
    """
    return float(2 ** max(int(n_servers) - 1, 0).bit_length())


def state_input(state: np.ndarray, n_servers: int) -> np.ndarray:
    """P1's input <c_util, m_util, t_r / S> from observed states (module docstring).

    Parameters
    ----------
    state : numpy.ndarray
        (3,) or (B, 3) observed states <c_util, m_util, t_r / U>, U = :func:`time_unit`.
    n_servers : int
        Servers of the topology (S).

    Returns
    -------
    numpy.ndarray
        (B, 3) float64: the third column is t_r / S, bit for bit float64(float32(t_r)) / S
        (multiplying by U undoes the exact scaling of :func:`observe`).
    """
    s = np.array(state, dtype=float, copy=True).reshape(-1, 3)
    s[:, 2] = s[:, 2] * time_unit(n_servers) / n_servers
    return s


def first_input(g: Graph, nodes: np.ndarray, links: np.ndarray) -> np.ndarray:
    """The first stage's aggregated input [A_hat X, E_agg links] (B, N, F + 2); it depends
    on the observation only, so training computes it once per batch."""
    X = np.asarray(nodes, dtype=float)
    return np.concatenate([_spmm(g.A, X), _spmm(g.E, np.asarray(links, dtype=float))], axis=2)


def logits(params: dict[str, np.ndarray], g: Graph, nodes: np.ndarray, links: np.ndarray,
           state: np.ndarray, mask: np.ndarray, cache: dict[str, Any] | None = None,
           z0: np.ndarray | None = None) -> np.ndarray:
    """Masked logits (B, S) of a batch of observations (-inf where masked).

    ``nodes`` (B, N, F), ``links`` (B, L, 2), ``state`` (B, 3), ``mask`` (B, S) bool. When
    ``cache`` is a dict the intermediate values for :func:`backward_policy` are stored in it;
    ``z0`` is :func:`first_input` of the batch when precomputed.
    """
    X = np.asarray(nodes, dtype=float)
    if X.ndim == 2:
        X, links, state, mask = X[None], np.asarray(links)[None], np.asarray(state)[None], \
            np.asarray(mask)[None]
    gc: dict[str, Any] = {}
    h = gnn_forward(params, g, X, links, gc, z0)
    hs = h[:, g.server_node]  # (B, S, 16)
    sel = X[:, g.server_node, 3]  # selected flag (feature 3)
    cnt = np.maximum(sel.sum(axis=1), 1.0)
    msel = (sel[:, :, None] * hs).sum(axis=1) / cnt[:, None]  # (B, 16)
    s_in = state_input(state, g.S)
    p1h = np.maximum(s_in @ params["A1"] + params["a1"], 0.0)
    sp_ = p1h @ params["A2"] + params["a2"]  # s' (B, 8)
    B, S = hs.shape[:2]
    u = np.concatenate([hs, np.broadcast_to(msel[:, None], (B, S, HIDDEN)),
                        np.broadcast_to(sp_[:, None], (B, S, P1_OUT))], axis=2)
    qpre = u @ params["C1"] + params["c1"]
    q = np.maximum(qpre, 0.0)
    out = (q @ params["C2"])[..., 0] + params["c2"][0]
    out = np.where(mask, out, -np.inf)
    if cache is not None:
        cache.update(zs=gc["zs"], pres=gc["pres"], sel=sel, cnt=cnt, s_in=s_in, p1h=p1h, u=u, q=q,
                     B=B, N=X.shape[1])
    return out


def logits_one(params: dict[str, np.ndarray], g: Graph, nodes: np.ndarray, links: np.ndarray,
               state: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """:func:`logits` of one observation, the rollout's forward pass: the same maps, with P2
    evaluated on the allowed servers only (C1 split into its h, mean-selected and s' blocks),
    so a pick on delta costs one GNN pass plus P2 on the candidates (tests: equal to the
    batched training forward to 1e-6)."""
    X = np.asarray(nodes, dtype=float)
    Be = g.E @ np.asarray(links, dtype=float)
    h = X
    for i in range(STAGES):
        z = np.concatenate([np.asarray(g.A @ h), np.asarray(Be)], axis=1)
        h = np.maximum(z @ params[f"W{i}"] + params[f"b{i}"], 0.0)
    hs = h[g.server_node]
    sel = X[g.server_node, 3]
    msel = sel @ hs / max(float(sel.sum()), 1.0)
    s_in = state_input(state, g.S)[0]
    sp_ = np.maximum(s_in @ params["A1"] + params["a1"], 0.0) @ params["A2"] + params["a2"]
    C1 = params["C1"]
    idx = np.flatnonzero(mask)
    const = msel @ C1[HIDDEN:2 * HIDDEN] + sp_ @ C1[2 * HIDDEN:] + params["c1"]
    q = np.maximum(hs[idx] @ C1[:HIDDEN] + const, 0.0)
    out = np.full(g.S, -np.inf)
    out[idx] = q @ params["C2"][:, 0] + params["c2"][0]
    return out


#: logits within this relative distance of the largest count as tied in a greedy pick. The
#: forward pass is a chain of BLAS products whose rounding differs with the kernel (Haswell,
#: SkylakeX, ...) and the thread count, by about 1e-15 relative; servers that are equal for the
#: policy (same features) get logits equal up to that noise. A tolerance far above the noise
#: and far below the gaps between distinct logits makes the pick the same on every machine.
TIE_RTOL = 1e-9


def greedy_pick(lg: np.ndarray) -> int:
    """The greedy action of a masked logit vector, the same on every BLAS kernel.

    Parameters
    ----------
    lg : numpy.ndarray
        Logits, ``-inf`` where the action is masked; at least one is finite.

    Returns
    -------
    int
        The lowest index whose logit is within ``TIE_RTOL * max(1, |max|)`` of the largest
        (``numpy.argmax`` would let float noise of the order of 1e-15 decide between servers
        the policy scores alike).

    References
    ----------
    Paper 001, section 3.3.2 (greedy rollouts); the tie rule is ours.
    """
    lg = np.asarray(lg, dtype=float)
    finite = np.isfinite(lg)
    top = float(lg[finite].max())
    return int(np.flatnonzero(finite & (lg >= top - TIE_RTOL * max(1.0, abs(top))))[0])


def log_softmax(lg: np.ndarray) -> np.ndarray:
    m = lg.max(axis=-1, keepdims=True)
    z = lg - m
    with np.errstate(invalid="ignore"):
        return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def backward_policy(params: dict[str, np.ndarray], g: Graph, cache: dict[str, Any],
                    dlogit: np.ndarray) -> dict[str, np.ndarray]:
    """Gradients of the policy parameters given d(loss)/d(logits) (B, S), zero where masked."""
    grads: dict[str, np.ndarray] = {}
    q, u = cache["q"], cache["u"]
    dl = dlogit[..., None]
    grads["C2"] = q.reshape(-1, q.shape[-1]).T @ dl.reshape(-1, 1)
    grads["c2"] = np.array([dlogit.sum()])
    dq = dl * params["C2"][:, 0]
    dqpre = dq * (q > 0)
    grads["C1"] = u.reshape(-1, u.shape[-1]).T @ dqpre.reshape(-1, dqpre.shape[-1])
    grads["c1"] = dqpre.sum(axis=(0, 1))
    du = dqpre @ params["C1"].T
    dhs = du[..., :HIDDEN].copy()
    dmsel = du[..., HIDDEN:2 * HIDDEN].sum(axis=1)
    dsp = du[..., 2 * HIDDEN:].sum(axis=1)
    dhs += cache["sel"][:, :, None] * (dmsel / cache["cnt"][:, None])[:, None, :]
    p1h = cache["p1h"]
    grads["A2"] = p1h.T @ dsp
    grads["a2"] = dsp.sum(axis=0)
    dp1 = (dsp @ params["A2"].T) * (p1h > 0)
    grads["A1"] = cache["s_in"].T @ dp1
    grads["a1"] = dp1.sum(axis=0)
    dh = np.zeros((cache["B"], cache["N"], HIDDEN))
    dh[:, g.server_node] = dhs
    grads.update(gnn_backward(params, g, cache, dh))
    return grads


def gnn_forward(params: dict[str, np.ndarray], g: Graph, X: np.ndarray, links: np.ndarray,
                cache: dict[str, Any] | None = None, z0: np.ndarray | None = None
                ) -> np.ndarray:
    """The message-passing stages (section 3.3.1, module docstring) of a batch: node
    embeddings (B, N, 16) from node features ``X`` (B, N, F) and ``links`` (B, L, 2). When
    ``cache`` is a dict, the stage inputs and pre-activations for :func:`gnn_backward` are
    stored in it (keys ``zs``, ``pres``); ``z0`` is :func:`first_input` when precomputed."""
    # (B, N, 2): mean link features of the messages (3.3.1)
    Be = _spmm(g.E, np.asarray(links, dtype=float)) if z0 is None else z0[..., -2:]
    h = X
    zs, pres = [], []
    for i in range(STAGES):
        z = z0 if i == 0 and z0 is not None else np.concatenate([_spmm(g.A, h), Be], axis=2)
        pre = z @ params[f"W{i}"] + params[f"b{i}"]
        h = np.maximum(pre, 0.0)
        zs.append(z)
        pres.append(pre)
    if cache is not None:
        cache.update(zs=zs, pres=pres)
    return h


def gnn_backward(params: dict[str, np.ndarray], g: Graph, cache: dict[str, Any],
                 dh: np.ndarray) -> dict[str, np.ndarray]:
    """Gradients of the stage weights W_i, b_i given d(loss)/d(embeddings) ``dh`` (B, N, 16)
    and the cache of :func:`gnn_forward`."""
    grads: dict[str, np.ndarray] = {}
    for i in reversed(range(STAGES)):
        dpre = dh * (cache["pres"][i] > 0)
        z = cache["zs"][i]
        grads[f"W{i}"] = z.reshape(-1, z.shape[-1]).T @ dpre.reshape(-1, HIDDEN)
        grads[f"b{i}"] = dpre.sum(axis=(0, 1))
        if i > 0:
            dz = dpre @ params[f"W{i}"].T  # d z_i = [A_hat h_i, Be]; Be is an input
            dh = _spmm(g.AT, dz[..., :HIDDEN])
    return grads


def value_input(g: Graph, nodes: np.ndarray, links: np.ndarray, state: np.ndarray
                ) -> np.ndarray:
    """Value network input: [state, mean server features, mean link features] (B, 13)."""
    X = np.asarray(nodes, dtype=float)
    if X.ndim == 2:
        X, links, state = X[None], np.asarray(links)[None], np.asarray(state)[None]
    return np.concatenate([state_input(state, g.S), X[:, g.server_node].mean(axis=1),
                           np.asarray(links, dtype=float).mean(axis=1)], axis=1)


def value(params: dict[str, np.ndarray], vin: np.ndarray,
          cache: dict[str, Any] | None = None) -> np.ndarray:
    """State values (B,)."""
    h1 = np.maximum(vin @ params["V1"] + params["v1"], 0.0)
    h2 = np.maximum(h1 @ params["V2"] + params["v2"], 0.0)
    out = VALUE_SCALE * ((h2 @ params["V3"])[:, 0] + params["v3"][0])
    if cache is not None:
        cache.update(vin=vin, h1=h1, h2=h2)
    return out


def backward_value(params: dict[str, np.ndarray], cache: dict[str, Any], dv: np.ndarray
                   ) -> dict[str, np.ndarray]:
    """Gradients of the value parameters given d(loss)/d(value) (B,)."""
    d3 = VALUE_SCALE * dv[:, None]
    h1, h2 = cache["h1"], cache["h2"]
    g = {"V3": h2.T @ d3, "v3": d3.sum(axis=0)}
    d2 = (d3 @ params["V3"].T) * (h2 > 0)
    g["V2"], g["v2"] = h1.T @ d2, d2.sum(axis=0)
    d1 = (d2 @ params["V2"].T) * (h1 > 0)
    g["V1"], g["v1"] = cache["vin"].T @ d1, d1.sum(axis=0)
    return g


# ---------------------------------------------------------------------- features
def graph_of(instance: nara.Instance) -> dict[str, np.ndarray]:
    """The DCN graph for the GNN: node ids of the servers (in server order) and both directions
    of every link as (src, dst, link index) arrays."""
    net = instance.net
    src = np.concatenate([net.link_u, net.link_v])
    dst = np.concatenate([net.link_v, net.link_u])
    lid = np.concatenate([np.arange(net.n_links)] * 2)
    return {"n_nodes": np.int64(net.n_nodes), "server_node": net.server_node.copy(),
            "src": src, "dst": dst, "link": lid}


def observe(st: State, mask: np.ndarray) -> dict[str, np.ndarray]:
    """Observation of a :class:`State` (the environment's, :mod:`.env`).

    Parameters
    ----------
    st : State
        The simulator; without a pending request the node and link features are zero and the
        holding period 0.
    mask : numpy.ndarray
        (S,) the allowed servers (node feature 7).

    Returns
    -------
    dict
        ``state`` (3,) <c_util, m_util, min(t_r / U, CLIP)> with U = :func:`time_unit`,
        ``nodes`` (N, 8) and ``links`` (L, 2), float32, every value in [0, CLIP].
    """
    net = st.net
    req = st.req
    N, S = net.n_nodes, net.n_servers
    nodes = np.zeros((N, NODE_FEATURES), dtype=np.float32)
    links = np.zeros((net.n_links, LINK_FEATURES), dtype=np.float32)
    c_util = 1 - st.cpu_free.sum() / max(net.cpu.sum(), 1)
    m_util = 1 - st.mem_free.sum() / max(net.mem.sum(), 1)
    if req is None:
        return {"state": np.array([c_util, m_util, 0.0], dtype=np.float32), "nodes": nodes,
                "links": links}
    b = max(req.b, 1e-3)
    bw = st.bw[:-1]
    sv = net.server_node
    f = np.zeros((S, NODE_FEATURES))
    f[:, 0] = st.cpu_free / max(st.rem_c, 1) if st.rem_c > 0 else 0.0
    f[:, 1] = st.mem_free / max(st.rem_m, 1) if st.rem_m > 0 else 0.0
    f[:, 2] = bw[net.access] / b
    if st.selected:
        f[st.selected, 3] = 1.0
    f[:, 4] = st.cpu_free / np.maximum(net.cpu, 1)
    f[:, 5] = st.mem_free / np.maximum(net.mem, 1)
    f[:, 6] = 1.0
    f[:, 7] = mask
    nodes[sv] = np.clip(f, 0.0, CLIP)
    links[:, 0] = np.clip(bw / b, 0.0, CLIP)
    links[:, 1] = bw >= b - nara.BW_TOL
    # float32 first, then the exact power-of-two scaling (state_input undoes it bit for bit)
    t = np.float32(req.t) / np.float32(time_unit(S))
    return {"state": np.array([c_util, m_util, min(t, np.float32(CLIP))], dtype=np.float32),
            "nodes": nodes, "links": links}


# ---------------------------------------------------------------------- files
def save(path: Any, params: dict[str, np.ndarray]) -> None:
    """Write the weights as .npz (numpy only; ``path`` is written as given, atomically)."""
    from dmlopt import io

    io.save_npz(path, __version__=np.array(VERSION), **params)


def load(path: Any) -> dict[str, np.ndarray]:
    """Read weights written by :func:`save`; raises ValueError on a foreign file."""
    with np.load(path) as z:
        if "__version__" not in z or int(z["__version__"]) != VERSION:
            raise ValueError(f"{path}: not a Nara policy file (version {VERSION})")
        p = {k: z[k].astype(float) for k in z.files if k != "__version__"}
    missing = [k for k in POLICY_KEYS if k not in p]
    if missing:
        raise ValueError(f"{path}: missing weights {missing}")
    return p
