"""Shared fixtures and settings for every test file.

- tests/ is a package (``tests.core``, ``tests.<problem>``, ``tests.helpers``): pytest puts the
  repository root on ``sys.path`` (importmode "prepend", the root being the first directory
  above tests/ without an ``__init__.py``), so a test imports the shared helpers as
  ``from tests.helpers.rar import ...`` under ``pytest``, ``python -m pytest`` and from any
  working directory;
- a hypothesis profile "ci" (the default): derandomised, so every run draws the same examples,
  no deadline (a solver call's time is not the property under test), at most 20 examples per
  test (a test's own ``@settings(max_examples=...)`` lowers it); ``HYPOTHESIS_PROFILE=dev``
  draws fresh random examples;
- the toy problem fixture registers tests/helpers/toy_problem.py as problem "toy" for one test;
- Ctrl-C reaches the commands the tests start: a shell starts a background job (``make test
  &``, ``nohup``) with SIGINT ignored, which every child would inherit, so the tests that send a
  real SIGINT would wait for a command that never sees it. A handler installed here is reset
  to the default in every child at exec, so each child's Python raises KeyboardInterrupt.
"""

from __future__ import annotations

import contextlib
import os
import signal

import pytest
from hypothesis import HealthCheck, settings

from dmlopt import registry

settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=20, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    with contextlib.suppress(ValueError):  # not the main thread: children inherit ours
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def toy(monkeypatch):
    """Register tests/helpers/toy_problem.py as problem "toy" for one test."""
    toy_problem = "tests.helpers.toy_problem"
    monkeypatch.setitem(registry._PROBLEMS, "toy", (toy_problem, toy_problem))
    registry.get.cache_clear()
    yield registry.get("toy")
    registry.get.cache_clear()
