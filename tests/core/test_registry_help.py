"""Every entry the registry serves shows its own numpy docstring under ``help()``.

The registry is walked (every registered problem's FORMULATIONS builds, HEURISTICS, BOUNDS and
GENERATORS functions; no problem list written here), and each function must carry its own
docstring with a Parameters and a Returns section. A ``functools.partial`` (whose ``help()``
prints partial's own text) or a callable object documented only by its class fails, even when
the function it wraps is documented: ``help(entry.function)`` is what a user reads.
"""

from __future__ import annotations

import functools
import re

import pytest

from dmlopt import registry


def _entries() -> list[tuple[str, object]]:
    out = []
    for p in registry.names():
        prob = registry.get(p)
        for kind, entries, attr in (("formulation", prob.formulation_entries, "build"),
                                    ("heuristic", prob.heuristics, "function"),
                                    ("bound", prob.bound_entries, "function"),
                                    ("generator", prob.generator_entries, "function")):
            out += [(f"{p}/{kind}/{name}", getattr(e, attr)) for name, e in entries.items()]
    return out


def _own_doc(function: object) -> str | None:
    """The docstring ``help(function)`` shows as the function's own, or None."""
    if isinstance(function, functools.partial):
        return None
    doc = getattr(function, "__doc__", None)
    if not doc or doc is getattr(type(function), "__doc__", None):
        return None
    return doc


def _has_section(doc: str, title: str) -> bool:
    return re.search(rf"^\s*{title}\n\s*-{{{len(title)}}}\s*$", doc, re.M) is not None


ENTRIES = _entries()


def test_the_walk_sees_every_kind_of_entry():
    """The walk covers the four kinds on more than one problem (a walk that found nothing
    would pass the test below vacuously)."""
    kinds = {key.split("/")[1] for key, _ in ENTRIES}
    assert kinds == {"formulation", "heuristic", "bound", "generator"}
    assert len({key.split("/")[0] for key, _ in ENTRIES}) == len(registry.names()) > 1


@pytest.mark.parametrize("key,function", ENTRIES, ids=[k for k, _ in ENTRIES])
def test_entry_has_its_own_numpy_docstring(key, function):
    doc = _own_doc(function)
    assert doc is not None, f"{key}: no docstring of its own ({type(function).__name__})"
    missing = [t for t in ("Parameters", "Returns") if not _has_section(doc, t)]
    assert not missing, f"{key}: docstring without {', '.join(missing)}"


def test_a_partial_is_refused():
    """The check itself: a partial of a documented function has no docstring of its own."""
    def documented(x: int, y: int) -> int:
        """Add.

        Parameters
        ----------
        x, y : int

        Returns
        -------
        int
        """
        return x + y

    assert _own_doc(documented) is not None
    assert _own_doc(functools.partial(documented, 1)) is None


def test_declared_heuristics_of_every_bound_are_registered():
    """``Bound.heuristics`` names heuristics of the bound's own problem; at least one bound
    declares some (a field nobody fills would pass vacuously)."""
    declared = 0
    for p in registry.names():
        prob = registry.get(p)
        for name, entry in prob.bound_entries.items():
            assert isinstance(entry.heuristics, tuple), (p, name)
            unknown = [h for h in entry.heuristics if h not in prob.heuristics]
            assert not unknown, f"{p}/bound/{name} declares unknown heuristics {unknown}"
            declared += bool(entry.heuristics)
    assert declared >= 1
