"""Hostile training checkpoints (``<stem>.ckpt.npz``, what ``dmlopt train nara`` resumes from):
each is refused with an InstanceError naming ``checkpoint``, the file and the problem, before
any training, never a numpy error or a resumed run with impossible counters."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dmlopt.errors import InstanceError
from dmlopt.heuristics.nara import learn as L

KW = dict(batch=16, minibatch=8, epochs=1, episode=4, validation=(), progress=False)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """The checkpoint after one iteration of a tiny run (interrupted in the second)."""
    d = tmp_path_factory.mktemp("ckpt")
    real, calls = L.ppo_update, {"n": 0}

    def interrupted(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    L.ppo_update = interrupted
    try:
        with pytest.raises(KeyboardInterrupt):
            L.train("alpha", "uniform", 200, 0, d / "pol.npz", **KW)
    finally:
        L.ppo_update = real
    return (d / "pol.ckpt.npz").read_bytes()


def _edit(arrays: dict, how: str) -> None:
    rows = json.loads(str(arrays["rows"]))
    if how == "nan":
        arrays["p_W0"] = arrays["p_W0"] * np.nan
    elif how == "shape":
        arrays["b_C1"] = np.zeros(3)
    elif how == "missing":
        del arrays["pi_t"]
    elif how == "negative":
        arrays["steps"] = np.array(-5)
    elif how == "float":
        arrays["iteration"] = np.array(1.5)
    elif how == "beyond":  # three iterations, the third started past the 200-step target
        rows = [dict(rows[0], iteration=i, steps=150 * i) for i in (1, 2, 3)]
        arrays.update(rows=json.dumps(rows), steps=np.array(450), iteration=np.array(3))
    elif how == "huge-iteration":  # one iteration cannot collect a million steps
        rows[0]["steps"] = 10**6
        arrays.update(rows=json.dumps(rows), steps=np.array(10**6))
    elif how == "rng":
        arrays["rng"] = np.array(json.dumps({"bit_generator": "nonsense"}))


@pytest.mark.parametrize("how, words", [
    ("truncated", "not a readable .npz"), ("garbage", "not a readable .npz"),
    ("nan", "'p_W0' hold NaN"), ("shape", "'b_C1' have shape (3,)"),
    ("missing", "missing 'pi_t'"), ("negative", "'steps' = -5"),
    ("float", "'iteration' = 1.5 is not an integer"),
    ("beyond", "started at 300 steps, not below the run's 200"),
    ("huge-iteration", "an iteration of 1000000 steps"), ("rng", "random generator state"),
])
def test_unusable_checkpoints_are_refused_by_name(checkpoint, tmp_path, how, words):
    ckpt = tmp_path / "pol.ckpt.npz"
    if how == "truncated":
        ckpt.write_bytes(checkpoint[: len(checkpoint) // 2])
    elif how == "garbage":
        ckpt.write_bytes(b"PK\x03\x04 not a zip archive")
    else:
        ckpt.write_bytes(checkpoint)
        with np.load(ckpt) as z:
            arrays = dict(z)
        _edit(arrays, how)
        np.savez(ckpt, **arrays)
    with pytest.raises(InstanceError, match="checkpoint") as err:
        L.train("alpha", "uniform", 200, 0, tmp_path / "pol.npz", **KW)
    assert words in str(err.value) and str(ckpt) in str(err.value)
    assert not (tmp_path / "pol.npz").exists()


def test_the_checkpoint_itself_resumes(checkpoint, tmp_path):
    (tmp_path / "pol.ckpt.npz").write_bytes(checkpoint)
    card = L.train("alpha", "uniform", 40, 0, tmp_path / "pol.npz", **KW)
    assert card["iterations"] >= 1 and (tmp_path / "pol.npz").is_file()
