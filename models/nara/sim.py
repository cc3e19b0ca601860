"""Event-driven DCN simulator of Nara (paper 001, section 3.2 and Appendix G).

One arrival per step. At step j the requests whose holding period has ended (i + t_i <= j) are
released, then request j is offered to the allocator, which picks servers one at a time:

(i)   a pick that breaks constraint 3 (some pair of the proposed servers has no candidate path
      with >= b free on every link, access links included) drops the request;
(ii)  otherwise min(free, remaining) CPU and memory are taken from the picked server;
(iii) once CPU and memory are covered, the routes are fixed (one candidate per server pair) and
      b is reserved once on every link of the union of the routes (the charging rule of
      :mod:`dmlopt.models.nara`);
(iv)  releases happen at the start of the next step.

:class:`State` is the fast core (numpy arrays, used by the heuristics and by the Gymnasium
environment :class:`dmlopt.models.nara.NaraEnv`, module ``env``). Deterministic: the only
randomness is the allocator's.

Routes: ``"first"`` takes the first candidate (k-shortest order) with >= b free on every link
(Appendix G); ``"widest"`` the candidate with the largest bottleneck free bandwidth (the
bandwidth-weighted k-shortest paths of NALB/NULB, Appendix D.2). Both return the same
feasibility verdict: only which links are charged differs.
"""

from __future__ import annotations

import heapq
from itertools import combinations
from typing import Any

import numpy as np

from dmlopt.models import nara

TOL = nara.BW_TOL


def episode_memory(net: Any) -> float:
    """Bytes an episode's simulator holds besides its allocations: a :class:`State` on the
    topology ``net`` (free capacities, path incidences, its per-rack-pair rows).

    Parameters
    ----------
    net : Net
        The instance's topology (:attr:`dmlopt.models.nara.Instance.net`, built with the
        instance before an allocator runs, so not counted here).

    Returns
    -------
    float
        16 bytes per path-link entry, 256 per rack pair and 64 per server and link. Measured
        (tracemalloc of ``State(instance)``): 0.04 MiB on gamma and 0.79 MiB on delta, where
        this gives 0.12 and 1.36 MiB.

    References
    ----------
    Ours: the size estimate of the Nara allocators (paper 001) on the simulator of section 3.2.
    """
    nnz = sum(len(p) for v in net.cand.values() for p in v)
    R = net.n_racks
    return 16.0 * nnz + 256.0 * R * R + 64.0 * (net.n_servers + net.n_links)


class State:
    """Free capacities of the DCN and the requests being held."""

    def __init__(self, instance: nara.Instance, route: str = "first") -> None:
        if route not in ("first", "widest"):
            raise ValueError(f"route: {route!r} is not 'first' or 'widest'")
        self.instance = instance
        self.net = net = instance.net
        self.route_mode = route
        self.cpu_free = net.cpu.astype(np.int64).copy()
        self.mem_free = net.mem.astype(np.int64).copy()
        # free bandwidth per link plus a sentinel (+inf) at index n_links for padded paths
        self.bw = np.append(net.cap.astype(float), np.inf)
        self.heap: list[tuple[float, int]] = []
        self.held: dict[int, tuple[nara.Allocation, np.ndarray]] = {}
        R = net.n_racks
        self._eye = np.eye(R, dtype=bool)
        # candidate paths as a sparse (paths x links) incidence matrix, path p of rack pair
        # (ra, rb) at row p_of[ra, rb] + index: blocked paths = incidence @ (links short of b)
        rows, cols, self._pair_rows = [], [], []
        for (ra, rb), plist in net.cand.items():
            for links in plist:
                rows.extend([len(self._pair_rows)] * len(links))
                cols.extend(links)
                self._pair_rows.append((ra, rb))
        from scipy.sparse import csr_matrix

        n_paths = len(self._pair_rows)
        self._inc = csr_matrix((np.ones(len(rows)), (rows, cols)),
                               shape=(n_paths, net.n_links + 1))
        self._path_a = np.array([a for a, _ in self._pair_rows], dtype=np.int64)
        self._path_b = np.array([b for _, b in self._pair_rows], dtype=np.int64)
        self.allocations: list[nara.Allocation | None] = []
        self.step = 0
        # pending request
        self.req: nara.Request | None = None
        self.selected: list[int] = []
        self.taken_cpu: list[int] = []
        self.taken_mem: list[int] = []
        self.rem_c = 0
        self.rem_m = 0
        self._compat: np.ndarray | None = None
        self._access: np.ndarray | None = None

    # ---------------------------------------------------------------- network queries
    def compat(self, b: float) -> np.ndarray:
        """(R, R) bool: racks a, b have a candidate path with >= b free on every link."""
        short = (self.bw < b - TOL).astype(float)
        out = self._eye.copy()
        if not short.any():
            out[:] = True
            return out
        free_path = (self._inc @ short) == 0
        a, b_ = self._path_a[free_path], self._path_b[free_path]
        out[a, b_] = True
        out[b_, a] = True
        return out

    def access_ok(self, b: float) -> np.ndarray:
        """(S,) bool: the server's access link has >= b free."""
        return self.bw[self.net.access] >= b - TOL

    def route(self, s: int, t: int, b: float) -> int:
        """Candidate index for servers s, t under the route mode; -1 if none is feasible."""
        net = self.net
        ra, rb = int(net.rack[s]), int(net.rack[t])
        if ra == rb:
            return 0
        bott = self.bw[net.paths[ra, rb]].min(axis=-1)[: net.n_cand[ra, rb]]
        ok = np.flatnonzero(bott >= b - TOL)
        if not ok.size:
            return -1
        if self.route_mode == "first":
            return int(ok[0])
        return int(ok[np.argmax(bott[ok])])

    # ---------------------------------------------------------------- time
    def release(self, j: int) -> None:
        """Return the resources of the requests whose holding period ends by step j."""
        while self.heap and self.heap[0][0] <= j:
            _, i = heapq.heappop(self.heap)
            al, links = self.held.pop(i)
            self.cpu_free[al.servers] += al.cpu
            self.mem_free[al.servers] += al.mem
            self.bw[links] += self.instance.requests[i].b

    # ---------------------------------------------------------------- one request
    def begin(self, j: int) -> nara.Request:
        """Release up to step j and make request j the pending one."""
        self.step = j
        self.release(j)
        req = self.instance.requests[j]
        self.req = req
        self.selected, self.taken_cpu, self.taken_mem = [], [], []
        self.rem_c, self.rem_m = req.c, req.m
        self._compat = None
        self._access = None
        return req

    @property
    def compat_now(self) -> np.ndarray:
        if self._compat is None:
            self._compat = self.compat(self.req.b)
        return self._compat

    @property
    def access_now(self) -> np.ndarray:
        if self._access is None:
            self._access = self.access_ok(self.req.b)
        return self._access

    def useful(self) -> np.ndarray:
        """(S,) bool: unselected servers that can give some of the remaining CPU or memory."""
        m = ((self.cpu_free > 0) & (self.rem_c > 0)) | ((self.mem_free > 0) & (self.rem_m > 0))
        if self.selected:
            m[self.selected] = False
        return m

    def is_useful(self, s: int) -> bool:
        """Scalar :meth:`useful` for one server."""
        return s not in self.selected and (
            (self.cpu_free[s] > 0 and self.rem_c > 0) or (self.mem_free[s] > 0 and self.rem_m > 0))

    def feasible(self) -> np.ndarray:
        """(S,) bool: useful servers whose addition keeps constraint 3 satisfiable."""
        m = self.useful()
        if not self.selected:
            return m
        acc = self.access_now
        if not acc[self.selected].all():
            return np.zeros_like(m)
        racks = np.unique(self.net.rack[self.selected])
        ok_rack = self.compat_now[:, racks].all(axis=1)
        return m & acc & ok_rack[self.net.rack]

    def can_add(self, s: int) -> bool:
        """Constraint 3 holds for the selected servers plus s."""
        if not self.selected:
            return True
        acc = self.access_now
        if not acc[s] or not acc[self.selected].all():
            return False
        rs = self.net.rack[s]
        racks = self.net.rack[self.selected]
        if (racks == rs).all():  # one rack: the access links are the whole path
            return True
        return bool(self.compat_now[rs, racks].all())

    def add(self, s: int) -> bool:
        """Pick server s (transitions (i)-(ii)); False when constraint 3 fails (then drop)."""
        s = int(s)
        if not self.can_add(s):
            return False
        c = int(min(self.cpu_free[s], self.rem_c))
        m = int(min(self.mem_free[s], self.rem_m))
        self.selected.append(s)
        self.taken_cpu.append(c)
        self.taken_mem.append(m)
        self.rem_c -= c
        self.rem_m -= m
        return True

    @property
    def covered(self) -> bool:
        return self.rem_c <= 0 and self.rem_m <= 0

    def finish(self) -> nara.Allocation | None:
        """Commit the pending request (transition (iii)) when covered; else drop it."""
        if self.req is None:
            raise RuntimeError("no pending request")
        if not self.covered:
            return self.drop()
        return self.commit(nara.Allocation(servers=self.selected, cpu=self.taken_cpu,
                                           mem=self.taken_mem, routes=self._routes()))

    def _routes(self) -> list[int]:
        out = []
        for s, t in combinations(self.selected, 2):
            r = self.route(s, t, self.req.b)
            if r < 0:  # cannot happen after can_add; guarded for safety
                raise RuntimeError("no feasible route for an accepted pair")
            out.append(r)
        return out

    def commit(self, al: nara.Allocation) -> nara.Allocation:
        """Reserve an allocation of the pending request (any valid allocation, e.g. a MILP's)."""
        j, req = self.step, self.req
        links: set[int] = set()
        for (s, t), p in zip(combinations(al.servers, 2), al.routes, strict=True):
            links.update(self.net.pair_links(s, t, p))
        link_arr = np.array(sorted(links), dtype=np.int64)
        self.cpu_free[al.servers] -= al.cpu
        self.mem_free[al.servers] -= al.mem
        self.bw[link_arr] -= req.b
        self.held[j] = (al, link_arr)
        heapq.heappush(self.heap, (j + req.t, j))
        self._record(al)
        return al

    def drop(self) -> None:
        self._record(None)
        return None

    def _record(self, al: nara.Allocation | None) -> None:
        while len(self.allocations) < self.step:
            self.allocations.append(None)
        self.allocations.append(al)
        self.req = None

    def solution(self) -> nara.Solution:
        allocs = list(self.allocations)
        allocs += [None] * (len(self.instance.requests) - len(allocs))
        return nara.Solution(allocations=allocs)


def run_episode(instance: nara.Instance, choose: Any, *, route: str = "first",
                rng: np.random.Generator | None = None) -> nara.Solution:
    """Offer every request in turn to ``choose(state, rng)``, which picks servers with
    ``state.add``; the request is committed when covered, dropped otherwise."""
    state = State(instance, route=route)
    rng = rng if rng is not None else np.random.default_rng(0)
    for j in range(len(instance.requests)):
        state.begin(j)
        result = choose(state, rng)
        if state.req is None:  # the chooser committed or dropped itself
            continue
        if result is False:
            state.drop()
        else:
            state.finish()
    return state.solution()
