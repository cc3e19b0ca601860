"""The papers the harness re-creates: one module per paper declares everything about it.

A paper's module holds ``PAPER = Paper(...)``: its title, the modules declaring its tables
(``TABLES`` lists of :class:`~dmlopt.benchmarks.tables.Table`), its cost-growth series
(:class:`Plan`), the specs of its reference-library entries (:mod:`dmlopt.benchmarks.library`),
its groups of the shipped ``quick`` suite and the documentation pages that describe its
problems. The module is found through the entry-point group ``dmlopt.papers`` (paper key ->
module, ``tap = "dmlopt.benchmarks.papers.tap"`` in pyproject.toml), so the shared harness code
(``dmlopt reproduce``, the library builder, the growth tables, the ``quick`` suite) names no
paper, and another package can add one the same way it adds a problem. A paper's key is the
name of its main problem (what ``dmlopt reproduce`` and the library builder take).

A paper module is imported when the command line builds ``dmlopt reproduce``'s help: it imports
nothing heavy at module level (tables modules, which import pandas, are named by string).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dmlopt.errors import DmloptError

#: the entry-point group: paper key -> the module declaring ``PAPER``
PAPERS_GROUP = "dmlopt.papers"


@dataclass(frozen=True)
class Plan:
    """The size series of one paper's cost-growth table (``dmlopt reproduce PAPER growth``).

    Parameters
    ----------
    unit : what the size counts (``racks``, ``requests``, ...).
    spec : size -> generator spec (``{"generator": name, **params}``) of the paper's problem.
    sizes, quick_sizes : the series of the full and the quick table.
    cap, quick_cap : CPU seconds per run after which a series stops (default 5 and 1).
    peak_seconds : the peak memory is measured at the largest size that ran within this
        (seconds, default 2).
    minutes, quick_minutes : wall minutes the full and the quick table took (shown by
        ``dmlopt reproduce --list``; default 0, not measured).
    skip : heuristics left out of the series -> why (shown in the table; default none).
    """

    unit: str
    spec: Callable[[int], dict]
    sizes: tuple[int, ...]
    quick_sizes: tuple[int, ...]
    cap: float = 5.0
    quick_cap: float = 1.0
    peak_seconds: float = 2.0
    minutes: float = 0.0
    quick_minutes: float = 0.0
    skip: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Paper:
    """Everything the harness needs about one paper.

    Parameters
    ----------
    key : the paper's key, the name of its main problem (``dmlopt reproduce KEY``).
    number : its number in the project's paper collection (``"000"``); papers are listed in
        this order.
    name : short title (``"TAP (task allocation) and Flow Tracking"``).
    tables : modules declaring ``TABLES`` (lists of ``Table``) with tables of this paper, in
        the order ``dmlopt reproduce --list`` shows them; a module may hold other papers'
        tables too (only those whose ``paper`` is ``key`` are taken).
    growth : the series of the cost-growth table (appended as table ``growth``), or None.
    library : ``library() -> iterator of dmlopt.benchmarks.library.Spec``: the paper's entries
        of the reference library (``python -m dmlopt.benchmarks.library KEY``), or None.
    quick : the paper's groups of the shipped ``quick`` suite (each a ``[[groups]]`` table of
        a suite file as a dict: ``problem``, ``instances``, ``methods``).
    pages : documentation page stem (``docs/<stem>.md``) -> the problems whose registered
        names the page may use (default: ``{key: (key,)}``).
    """

    key: str
    number: str
    name: str
    tables: tuple[str, ...] = ()
    growth: Plan | None = None
    library: Callable[[], Iterator[Any]] | None = None
    quick: tuple[dict, ...] = ()
    pages: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """``paper 000: TAP (task allocation) and Flow Tracking``: the heading of its tables."""
        return f"paper {self.number}: {self.name}"

    @property
    def docs(self) -> dict[str, tuple[str, ...]]:
        """Documentation page stem -> the problems it may name (:attr:`pages` or the default)."""
        return dict(self.pages) or {self.key: (self.key,)}


def _discover() -> dict[str, str]:
    """paper key -> module, from the installed packages' entry points."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value.split(":")[0] for ep in entry_points(group=PAPERS_GROUP)}


#: paper key -> the module declaring ``PAPER`` (known without importing any of them)
_MODULES: dict[str, str] = _discover()


def all_papers() -> dict[str, Paper]:
    """Every registered paper by key, in paper-number order.

    Returns
    -------
    dict
        key -> :class:`Paper` (imports each paper's module: light, no tables).

    Raises
    ------
    DmloptError
        A registered module declares no ``PAPER`` or one with another key.
    """
    found = [_load(key, module) for key, module in _MODULES.items()]
    return {p.key: p for p in sorted(found, key=lambda p: (p.number, p.key))}


def _load(key: str, module: str) -> Paper:
    paper = getattr(importlib.import_module(module), "PAPER", None)
    if not isinstance(paper, Paper):
        raise DmloptError(f"paper {key!r}: module {module} declares no PAPER = Paper(...)")
    if paper.key != key:
        raise DmloptError(f"paper {key!r}: module {module} declares paper {paper.key!r}")
    return paper


def names() -> list[str]:
    """The registered paper keys, in paper-number order."""
    return list(all_papers())


def get(key: str) -> Paper:
    """The paper ``key``; :class:`~dmlopt.errors.DmloptError` naming the known ones otherwise."""
    papers = all_papers()
    if key not in papers:
        known = ", ".join(papers) or ("none: dmlopt's entry points are missing; run `pip "
                                      "install -e .` or `make venv`")
        raise DmloptError(f"reproduce: paper {key!r} is not one of {known}")
    return papers[key]
