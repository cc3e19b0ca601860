"""Hostile policy files for the learned Nara allocators (``nara``, ``nara-netfit``): each is
refused with an InstanceError naming ``policy`` (CLI exit 2), never a numpy error mid-rollout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import dmlopt

SHIPPED = {"nara": "nara-uniform.npz", "nara-netfit": "nara-netfit-uniform.npz"}


def shipped(method: str) -> Path:
    return Path(str(resources.files("dmlopt.data").joinpath("nara", "policies",
                                                             SHIPPED[method])))


def tampered(method: str, tmp_path: Path, how: str) -> Path:
    out = tmp_path / f"{method}-{how}.npz"
    if how == "truncated":
        out.write_bytes(shipped(method).read_bytes()[:3000])
    elif how == "garbage":
        out.write_bytes(b"PK\x03\x04 not a zip archive")
    else:
        with np.load(shipped(method)) as z:
            arrays = dict(z)
        key = sorted(k for k in arrays if not k.startswith("__"))[0]
        arrays[key] = np.zeros(3) if how == "shape" else arrays[key] * np.nan
        np.savez(out, **arrays)
    return out


@pytest.mark.parametrize("method", ["nara", "nara-netfit"])
@pytest.mark.parametrize("how, words", [("truncated", "is not a"), ("garbage", "is not a"),
                                        ("shape", "have shape (3,)"), ("nan", "NaN")])
def test_unusable_policy_files_are_refused_by_name(method, how, words, tmp_path):
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 4}, seed=0)
    path = tampered(method, tmp_path, how)
    with pytest.raises(dmlopt.InstanceError, match="policy") as err:
        dmlopt.heuristic(inst, method, seed=0, policy=str(path))
    assert words in str(err.value)


@pytest.mark.parametrize("method", ["nara", "nara-netfit"])
def test_the_other_kind_of_policy_is_refused(method, tmp_path):
    other = shipped("nara-netfit" if method == "nara" else "nara")
    inst = dmlopt.generate("nara", {"generator": "uniform", "topology": "alpha",
                                    "n_requests": 4}, seed=0)
    with pytest.raises(dmlopt.InstanceError, match="policy"):
        dmlopt.heuristic(inst, method, seed=0, policy=str(other))
