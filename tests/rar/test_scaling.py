"""RAR rdda: windows filtered before the arrays and sparse-table window maxima give the same
deployments as the full (start, end) grid.

``_old_rdda`` is the previous implementation, kept verbatim as the slow reference.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import rar as H
from dmlopt.heuristics.rar import SCHEMES, _subsets
from dmlopt.models.rar import (
    Assignment,
    Instance,
    Solution,
    assign_cu_ids,
    duration,
    fewest_cus_table,
)


@cache
def _old_pairs(width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (s, e) with 0 <= s <= e < width, and the mask s <= e of a width x width grid."""
    s, e = np.triu_indices(width)
    mask = np.triu(np.ones((width, width), dtype=bool))
    return s, e, mask


def _old_window_max(rows: np.ndarray, s: np.ndarray, e: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """max(rows[:, s..e]) for every pair (s, e): shape (len(rows), len(s))."""
    grid = np.where(mask[None, :, :], rows[:, None, :], np.iinfo(np.int64).min)
    np.maximum.accumulate(grid, axis=2, out=grid)
    return grid[:, s, e]


def _old_rdda(instance: Instance, *, seed: int = 0, scheme: str | None = None) -> Solution:
    """Algorithm 1 with the scheme's ordering (the instance's scheme unless ``scheme`` is given).

    Parameters
    ----------
    instance : the RAR instance.
    seed : unused (RDDA is deterministic); kept for the heuristic contract.
    scheme : "MinCU", "MinW", "MinT" or "MaxR" to override the instance's scheme ordering.

    Returns
    -------
    Solution
        Every request deployed or blocked; CU ids assigned per node in order of start.
    """
    from dmlopt.errors import InstanceError

    scheme = scheme or instance.scheme
    if scheme not in SCHEMES:
        raise InstanceError("scheme", scheme, f"is not one of {', '.join(SCHEMES)}")
    inst = instance
    T = inst.slots
    caps = np.array([nd.cus for nd in inst.nodes], dtype=np.int64)
    k_top = int(caps.max())
    used = np.zeros((len(inst.nodes), T), dtype=np.int64)
    peak = np.zeros(len(inst.nodes), dtype=np.int64)
    w_max = max(lk.wavelengths for lk in inst.links)
    exists = np.arange(w_max)[None, :] < np.array([lk.wavelengths for lk in inst.links])[:, None]
    load = np.zeros((len(inst.links), w_max, T), dtype=np.int64)
    w_act = np.zeros((len(inst.links), w_max), dtype=bool)
    order = sorted(range(len(inst.requests)),
                   key=lambda j: (inst.requests[j].arrival, inst.requests[j].deadline, j))
    plans: list[tuple[list[int], list[int], int, int] | None] = [None] * len(inst.requests)
    chosen: dict[int, tuple[tuple[int, ...], int]] = {}
    for j in order:
        r = inst.requests[j]
        rings = inst.candidate_rings(j)
        if not rings:
            continue
        lo, hi = r.arrival - 1, r.deadline - 1
        width = hi - lo + 1
        s_idx, e_idx, mask = _old_pairs(width)
        span = e_idx - s_idx + 1
        kvec = {}
        for nn in r.node_counts:
            table = fewest_cus_table(inst, j, nn, width, k_top)  # per window length d
            # only windows exactly as long as the fewest CUs need (never hold idle slots)
            exact = duration(inst, j, nn, np.minimum(table, k_top)) == np.arange(width + 1)
            kvec[nn] = np.where(exact & (table <= k_top), table, 1 << 40)[span]
        local = sorted({v for k in rings for v in inst.rings[k].nodes})
        pos = {v: i for i, v in enumerate(local)}
        loc = np.array(local)
        mu = _old_window_max(used[loc, lo:hi + 1], s_idx, e_idx, mask)  # (R, P) peak use in window
        free = caps[loc][:, None] - mu
        room = mu - peak[loc][:, None]  # (R, P) <= 0: activated CUs left unused in the window
        bad = (load[:, :, lo:hi + 1] >= inst.rho) | ~exists[:, :, None]
        best_key: tuple | None = None
        best: tuple | None = None
        for k in rings:
            ring = inst.rings[k]
            lk = list(ring.links)
            rb = bad[lk].any(axis=0)  # (W, width)
            cs = np.concatenate([np.zeros((w_max, 1), dtype=np.int64),
                                 np.cumsum(rb, axis=1)], axis=1)
            wl_ok = (cs[:, e_idx + 1] - cs[:, s_idx]) == 0  # (W, P)
            any_ok = wl_ok.any(axis=0)
            if not any_ok.any():
                continue
            if scheme == "MinW":
                new_w = (~w_act[lk]).sum(axis=0)  # (W,)
                cost = np.where(wl_ok, (new_w * w_max + np.arange(w_max))[:, None], 1 << 40)
                wl_cost = cost.min(axis=0)  # new * w_max + b
            for nn in r.node_counts:
                if nn > ring.size:
                    continue
                subsets = _subsets(ring.nodes, r.source, nn)
                idx = np.array([[pos[v] for v in sub] for sub in subsets])  # (n_sub, N)
                kk = kvec[nn]
                feas = (free[idx].min(axis=1) >= kk[None, :]) & any_ok[None, :]  # (n_sub, P)
                if not feas.any():
                    continue
                # one packed int64 key per cell, compared as the tuples of the docstring
                end = lo + e_idx  # (P,) < 2^14
                nk = nn * np.minimum(kk, k_top + 1)  # (P,) < 2^20
                if scheme == "MinCU":
                    # CUs newly activated: sum over the nodes of max(0, use + k - peak)
                    new = np.maximum(room[idx] + kk[None, None, :], 0).sum(axis=1)
                    packed = (np.minimum(new, (1 << 20) - 1) << 34) | (nk << 14) | end
                elif scheme == "MinW":
                    packed = (np.minimum(wl_cost // w_max, (1 << 20) - 1) << 34) | (end << 20) | nk
                else:  # MinT, MaxR: earliest end, then fewest CUs
                    packed = (end << 20) | nk
                packed = np.where(feas, packed, np.iinfo(np.int64).max)
                flat = int(np.argmin(packed))
                sub_i, p = divmod(flat, len(e_idx))
                cell = packed.flat[flat]
                e_p, nk_p = int(lo + e_idx[p]), int(nn * kk[p])
                if scheme == "MinCU":
                    key = (int(cell) >> 34, nn, nk_p, e_p)
                elif scheme == "MinW":
                    key = (int(wl_cost[p] // w_max), ring.size, nn, e_p, nk_p)
                elif scheme == "MinT":
                    key = (e_p, nk_p, nn)
                else:
                    key = (-ring.reliability, nn, e_p, nk_p)
                if best_key is None or key < best_key:
                    best_key = key
                    # MinW: the wavelength activating the fewest; otherwise first fit
                    b = int(wl_cost[p] % w_max) if scheme == "MinW" else int(
                        np.argmax(wl_ok[:, p]))
                    best = (k, subsets[sub_i], int(kk[p]), lo + int(s_idx[p]), e_p, b)
        if best is None:
            continue
        k, sub, kk_, s, e, b = best
        ring = inst.rings[k]
        nodes = [v for v in ring.nodes if v in sub]
        used[nodes, s:e + 1] += kk_
        peak[nodes] = np.maximum(peak[nodes], used[nodes, s:e + 1].max(axis=1))
        load[list(ring.links), b, s:e + 1] += 1
        w_act[list(ring.links), b] = True
        plans[j] = (nodes, [kk_] * len(nodes), s + 1, e + 1)
        chosen[j] = (ring.nodes, b)
    ids = assign_cu_ids(inst, plans)
    out: list[Assignment | None] = []
    for j, plan in enumerate(plans):
        if plan is None:
            out.append(None)
            continue
        ring_nodes, b = chosen[j]
        out.append(Assignment(ring=list(ring_nodes), nodes=plan[0], cus=ids[j], wavelength=b,
                              start=plan[2], end=plan[3]))
    return Solution(requests=out)




@pytest.mark.parametrize("scheme", SCHEMES)
def test_rdda_identical_to_the_full_window_grid(scheme):
    specs = [{"generator": "cpn38", "requests": 60, "slots": 30},
             {"generator": "cpn38", "requests": 40, "slots": 48},
             {"generator": "cpn6", "requests": 12},
             {"generator": "random", "nodes": 6, "requests": 8, "slots": 9, "flexible": True}]
    for k, spec in enumerate(specs):
        inst = dmlopt.generate("rar", {**spec, "scheme": scheme}, seed=k)
        assert H.rdda(inst) == _old_rdda(inst)


def test_window_max_equals_the_grid():
    rng = np.random.default_rng(0)
    for width in (1, 2, 3, 7, 16, 33):
        rows = rng.integers(0, 9, (4, width))
        s, e = np.triu_indices(width)
        _, _, mask = _old_pairs(width)
        assert np.array_equal(H._window_max(rows, s, e), _old_window_max(rows, s, e, mask))
