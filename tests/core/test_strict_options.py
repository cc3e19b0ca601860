"""Options and parameters are strict: a boolean is not a number, a string is not a number, for
every heuristic, bound and generator of every problem."""

from __future__ import annotations

import pydantic
import pytest

from dmlopt import registry
from dmlopt.api import validate_options
from dmlopt.errors import DmloptError


def _numeric_fields():
    for name in registry.names():
        prob = registry.get(name)
        models = [(f"heuristic {h}", e.Options) for h, e in prob.heuristics.items()]
        models += [(f"bound {b}", e.Options) for b, e in prob.bound_entries.items()]
        models += [(f"generator {g}", e.Params) for g, e in prob.generator_entries.items()]
        for owner, model in models:
            for field, info in model.model_fields.items():
                if info.annotation in (int, float):
                    yield pytest.param(model, field, info.annotation,
                                       id=f"{name}-{owner}-{field}")


FIELDS = list(_numeric_fields())


def test_there_are_numeric_options_to_check():
    assert len(FIELDS) > 30


@pytest.mark.parametrize(("model", "field", "kind"), FIELDS)
@pytest.mark.parametrize("value", [True, "5"])
def test_booleans_and_strings_are_not_numbers(model, field, kind, value):
    with pytest.raises(DmloptError) as err:
        validate_options(model, {field: value}, "x")
    assert str(err.value).startswith(f"{field}: ")


@pytest.mark.parametrize(("model", "field", "kind"), FIELDS)
def test_the_validated_value_is_the_given_value(model, field, kind):
    """No coercion but int -> float: what is recorded is what runs."""
    default = model.model_fields[field].default
    if default is None or default is pydantic.fields.PydanticUndefined:
        pytest.skip("no default to try")
    opts = validate_options(model, {field: default}, "x")
    assert getattr(opts, field) == default and type(getattr(opts, field)) is type(default)
