"""Shared fixtures: the toy problem registered for core tests only."""

from __future__ import annotations

import pytest

from dmlopt import registry


@pytest.fixture
def toy(monkeypatch):
    """Register tests/toy_problem.py as problem "toy" for one test."""
    monkeypatch.setitem(registry._PROBLEMS, "toy", ("toy_problem", "toy_problem"))
    registry.get.cache_clear()
    yield registry.get("toy")
    registry.get.cache_clear()
