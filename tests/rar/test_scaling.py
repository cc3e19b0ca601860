"""RAR rdda: windows filtered before the arrays and sparse-table window maxima give the same
deployments as the full (start, end) grid.

golden/scaling.json holds the deployments of the previous implementation (every (start, end)
pair of a request's window on a dense grid), computed once by that code on the instances below;
the window maxima are checked against a plain loop over the windows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import dmlopt
from dmlopt.heuristics import rar as H
from dmlopt.heuristics.rar import SCHEMES


@pytest.mark.parametrize("scheme", SCHEMES)
def test_rdda_identical_to_the_full_window_grid(scheme):
    specs = [{"generator": "cpn38", "requests": 60, "slots": 30},
             {"generator": "cpn38", "requests": 40, "slots": 48},
             {"generator": "cpn6", "requests": 12},
             {"generator": "random", "nodes": 6, "requests": 8, "slots": 9, "flexible": True}]
    want = json.loads((Path(__file__).parent / "golden" / "scaling.json").read_text())
    for k, spec in enumerate(specs):
        inst = dmlopt.generate("rar", {**spec, "scheme": scheme}, seed=k)
        assert H.rdda(inst).model_dump(mode="json") == want[f"{scheme}/{k}"], k


def test_window_max_equals_the_grid():
    rng = np.random.default_rng(0)
    for width in (1, 2, 3, 7, 16, 33):
        rows = rng.integers(0, 9, (4, width))
        s, e = np.triu_indices(width)
        loop = np.array([rows[:, a:b + 1].max(axis=1) for a, b in zip(s, e, strict=True)]).T
        assert np.array_equal(H._window_max(rows, s, e), loop)
