"""The number checks of every instance read (``dmlopt.validation.check_numbers``) and the depth
check (``dmlopt.io.check_depth``) take whole rows of plain numbers at once; an offending entry
is still named by its path, whatever its kind and place."""

from __future__ import annotations

import json

import pytest

from dmlopt.errors import InstanceError
from dmlopt.io import check_depth
from dmlopt.validation import check_numbers


def _matrix(n: int = 6) -> list[list[float]]:
    return [[float(i * n + j) if (i + j) % 2 else i * n + j for j in range(n)] for i in range(n)]


@pytest.mark.parametrize(("bad", "rule"), [
    (float("nan"), "must be a finite number"), (float("inf"), "must be a finite number"),
    (float("-inf"), "must be a finite number"), (2**63, "outside the 64-bit integer range"),
    (-(2**63) - 1, "outside the 64-bit integer range"), (10**400, "outside the 64-bit"),
])
def test_an_entry_anywhere_in_a_row_is_named(bad, rule):
    for i, j in ((0, 0), (3, 5), (5, 2)):
        data = {"traffic": _matrix()}
        data["traffic"][i][j] = bad
        with pytest.raises(InstanceError, match=rf"traffic\[{i}\]\[{j}\].*{rule}"):
            check_numbers(data)


def test_rows_within_the_limits_and_other_kinds_pass():
    check_numbers({"a": _matrix(), "b": [2**63 - 1, -(2**63), 0.5, True, None, "x"], "c": []})
    # bools, None and text beside numbers go through the per-entry checks: still refused
    with pytest.raises(InstanceError, match=r"b\[2\]"):
        check_numbers({"b": [True, None, float("nan")]})


def test_depth_is_counted_through_rows_of_numbers():
    deep: list = [1, 2, 3]
    for _ in range(40):
        deep = [0.5, deep, 7]
    with pytest.raises(InstanceError, match="nested deeper than 8 levels"):
        check_depth({"x": deep}, "f.json", limit=8)
    check_depth({"x": _matrix(), "y": [[[1, 2], [3, 4]]]}, "f.json", limit=4)
    with pytest.raises(InstanceError, match="nested deeper than 3 levels"):
        check_depth({"x": _matrix(), "y": [[[1, 2], [3, 4]]]}, "f.json", limit=3)
    assert json.dumps(_matrix())  # plain JSON data
