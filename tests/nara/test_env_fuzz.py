"""The environment's boundary under hypothesis: any constructor argument and any action either
works or is refused with a DmloptError naming the field (never another exception, never slow)."""

from __future__ import annotations

import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dmlopt.errors import DmloptError
from dmlopt.models.nara import NaraEnv

ANY = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                st.lists(st.integers(-3, 3), max_size=3))


@settings(max_examples=60, deadline=None)
@given(field=st.sampled_from(["topology", "dataset", "n_requests", "mask", "reject",
                              "invalid_action", "rewards"]),
       value=ANY)
def test_constructor_works_or_refuses_by_name(field, value):
    t0 = time.perf_counter()
    kwargs = {"n_requests": 4, field: value}
    try:
        env = NaraEnv(**kwargs)
    except DmloptError as exc:
        assert field in str(exc) or "too large" in str(exc)
    else:
        env.reset(seed=0)
    assert time.perf_counter() - t0 < 5.0


@settings(max_examples=80, deadline=None)
@given(action=st.one_of(ANY, st.integers(-50, 100).map(np.int64),
                        st.floats(-5, 50).map(np.float32)),
       drop=st.booleans())
def test_step_works_or_refuses_by_name(action, drop):
    env = NaraEnv(n_requests=4, invalid_action="drop" if drop else "raise")
    env.reset(seed=1)
    try:
        obs, reward, terminated, truncated, info = env.step(action)
    except DmloptError as exc:
        assert str(exc).startswith("action: ")
    else:
        assert np.isfinite(reward) and info["action_mask"].dtype == np.int8
