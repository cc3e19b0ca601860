"""Problem registry: the one place that knows which problems exist.

Each problem is two modules: ``dmlopt.models.<name>`` (the problem contract of DESIGN.md:
``Instance``, ``Solution``, ``evaluate``, ``FORMULATIONS``/``build``, ``estimate_size``,
``decode``, ``warm_start``, ``GENERATORS``/``generate``) and ``dmlopt.heuristics.<name>``
(``HEURISTICS``: name -> ``f(instance, *, seed=0, **options) -> Solution``). A scored-only
problem (``FORMULATIONS = {}``, e.g. topology inference) omits ``build``, ``estimate_size``,
``decode`` and ``warm_start``: the API refuses every formulation first. Adding a problem is
adding those two modules and one line to ``_PROBLEMS``. Modules are imported on first use so the
command line starts fast.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from dmlopt.errors import UnknownNameError

# name -> (model module, heuristics module)
_PROBLEMS: dict[str, tuple[str, str]] = {
    "tabgp": ("dmlopt.models.tabgp", "dmlopt.heuristics.tabgp"),
    "nara": ("dmlopt.models.nara", "dmlopt.heuristics.nara"),
    "inc_oxc": ("dmlopt.models.inc_oxc", "dmlopt.heuristics.inc_oxc"),
    "rar": ("dmlopt.models.rar", "dmlopt.heuristics.rar"),
    "tap": ("dmlopt.models.tap", "dmlopt.heuristics.tap"),
    "infer": ("dmlopt.models.infer", "dmlopt.heuristics.infer"),
    "infer_tap": ("dmlopt.models.infer_tap", "dmlopt.heuristics.infer_tap"),
}


@dataclass(frozen=True)
class Problem:
    """A registered problem: its model module and its heuristics."""

    name: str
    model: ModuleType
    heuristics: dict[str, Any]

    @property
    def formulations(self) -> list[str]:
        return list(self.model.FORMULATIONS)

    @property
    def generators(self) -> list[str]:
        return list(self.model.GENERATORS)

    @property
    def sense(self) -> str:
        return getattr(self.model, "SENSE", "min")

    def heuristic(self, name: str):
        try:
            return self.heuristics[name]
        except KeyError:
            raise UnknownNameError(
                f"heuristic: {name!r} is not a {self.name} heuristic "
                f"(available: {', '.join(sorted(self.heuristics))})"
            ) from None


def names() -> list[str]:
    """The registered problem names."""
    return sorted(_PROBLEMS)


@cache
def get(name: str) -> Problem:
    """The problem called ``name``; :class:`UnknownNameError` listing the known ones otherwise."""
    if name not in _PROBLEMS:
        raise UnknownNameError(
            f"problem: {name!r} is not a known problem (available: {', '.join(names())})"
        )
    model_mod, heur_mod = _PROBLEMS[name]
    model = importlib.import_module(model_mod)
    heuristics = dict(importlib.import_module(heur_mod).HEURISTICS)
    return Problem(name=name, model=model, heuristics=heuristics)


def of(instance: Any) -> Problem:
    """The problem an instance belongs to (its ``problem`` field)."""
    name = getattr(instance, "problem", None)
    if not isinstance(name, str):
        raise UnknownNameError(f"instance: {type(instance).__name__} is not a dmlopt instance")
    return get(name)
