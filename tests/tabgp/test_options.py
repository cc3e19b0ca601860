"""TABGP's ``start`` options: a name must be a construction heuristic (the shared
``dmlopt.validation.one_of`` rule), a Solution passes through."""

from __future__ import annotations

import pytest

import dmlopt
from dmlopt.errors import DmloptError
from dmlopt.heuristics.tabgp import HEURISTICS, IlsOptions, LocalSearchOptions
from dmlopt.models.tabgp import EXAMPLE, Solution

#: the construction heuristics, listed by hand (not read from the module under test)
CONSTRUCTIONS = ("dense", "dense-ls", "dense-online", "dense-roll", "dense-roll10",
                 "dense-refine", "random", "random-ls", "metis", "metis-ls", "metis-refine")


@pytest.mark.parametrize("heuristic", ["local-search", "ils"])
@pytest.mark.parametrize("bad", ["dense-lss", "ils", "local-search", "best", ""])
def test_start_outside_the_constructions_is_refused_with_the_valid_names(heuristic, bad):
    """Catches a check that lets any heuristic name (or a typo) through as a start, and a
    message that does not name the field, the value and the valid names."""
    assert bad not in CONSTRUCTIONS
    inst = dmlopt.generate("tabgp", EXAMPLE, seed=0)
    with pytest.raises(DmloptError) as err:
        dmlopt.heuristic(inst, heuristic, start=bad)
    text = str(err.value)
    assert text.startswith("start: ") and repr(bad) in text
    assert "is not a starting heuristic (one of " + ", ".join(CONSTRUCTIONS) + ")" in text


@pytest.mark.parametrize("model", [LocalSearchOptions, IlsOptions])
def test_every_construction_and_a_solution_are_valid_starts(model):
    """Catches a check that refuses a construction heuristic or a given Solution."""
    for name in CONSTRUCTIONS:
        assert name in HEURISTICS
        assert model(start=name).start == name
    sol = Solution(assignment=[[0, 0, 1, 1], [0, 0, 1, 1]])
    assert model(start=sol).start == sol
