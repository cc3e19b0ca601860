"""``dmlopt train nara``: arguments that are not numbers are refused, and a run too large for
the size limits is refused within a second from its arguments and the topology, before
anything is allocated (the ``--size-limit`` rules)."""

from __future__ import annotations

import time

import pytest

from dmlopt import cli
from dmlopt.errors import InstanceError, ModelTooLargeError
from dmlopt.heuristics.nara import learn as L
from dmlopt.heuristics.nara import nara_netfit_learn as NL


@pytest.mark.parametrize("train", [L.train, NL.train])
@pytest.mark.parametrize("bad, words", [
    (dict(batch=True), "batch: True is a boolean"), (dict(steps="5"), "steps: '5' is a string"),
    (dict(minibatch=2.5), "minibatch: 2.5 is float"), (dict(episode=True), "episode: True"),
    (dict(validation=tuple(range(20_000))), "val_episodes: 20000 must be in 0..10000"),
])
def test_arguments_that_are_not_numbers_are_refused(train, bad, words, tmp_path):
    kw = dict(batch=64, minibatch=32, episode=4) | bad
    steps = kw.pop("steps", 100)
    with pytest.raises(InstanceError) as err:
        train("alpha", "uniform", steps, 0, tmp_path / "p.npz", **kw)
    assert words in str(err.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, words", [
    (["--steps", "1000000000", "--batch", "10000000", "--minibatch", "10000000"], "too large"),
    (["--steps", "1000000", "--val-episodes", "10000"], "too large"),
    (["--steps", "100000", "--size-limit", "1e6,1e6,1MiB,1e12"], "too large"),
    (["--steps", "1000", "--val-episodes", "1000000000"], "val_episodes: 1000000000"),
    (["--arch", "netfit", "--steps", "1000000000", "--batch", "10000000"], "too large"),
])
def test_runs_too_large_are_refused_within_a_second(argv, words, tmp_path, capsys):
    t0 = time.perf_counter()
    code = cli.main(["train", "nara", *argv, "-o", str(tmp_path / "p.npz")])
    assert time.perf_counter() - t0 < 1.0 + 2.0  # + importing the trainer once
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_the_default_run_fits_the_default_limits():
    size = L.estimate(50, 52, 40, steps=150_000, batch=2048, minibatch=256, epochs=10,
                      episode_steps=32 * 41, val_episodes=8, eval_every=5)
    with pytest.raises(ModelTooLargeError):
        L.check_run_size("x", size._replace(memory=3 * 2**30), L.limits_from())
    L.check_run_size("training", size, L.limits_from())
