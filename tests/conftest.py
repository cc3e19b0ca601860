"""Shared fixtures and settings for every test file.

- tests/ is put on sys.path, so the helper modules (``helpers_rar``, ``toy_problem``) import the
  same way under ``pytest``, ``python -m pytest`` and from any working directory;
- a hypothesis profile "ci" (the default): derandomised, so every run draws the same examples,
  no deadline (a solver call's time is not the property under test), at most 20 examples per
  test (a test's own ``@settings(max_examples=...)`` lowers it); ``HYPOTHESIS_PROFILE=dev``
  draws fresh random examples;
- the toy problem fixture registers tests/toy_problem.py as problem "toy" for one test.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from dmlopt import registry

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=20, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def toy(monkeypatch):
    """Register tests/toy_problem.py as problem "toy" for one test."""
    monkeypatch.setitem(registry._PROBLEMS, "toy", ("toy_problem", "toy_problem"))
    registry.get.cache_clear()
    yield registry.get("toy")
    registry.get.cache_clear()
