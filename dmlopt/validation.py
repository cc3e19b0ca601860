"""Validation helpers shared by every problem's ``Instance`` and ``Solution``.

Problems define pydantic v2 models; :func:`parse` turns pydantic's ``ValidationError`` into one
:class:`~dmlopt.errors.InstanceError` naming the field path (``jobs[3].workers[0].gpu``), the
offending value and the rule, which is what the library and the command line report.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import pydantic

from dmlopt.errors import InstanceError

M = TypeVar("M", bound=pydantic.BaseModel)


class Frozen(pydantic.BaseModel):
    """Base of instances and solutions: immutable, unknown fields rejected."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")


def field_path(loc: tuple[Any, ...]) -> str:
    """``("jobs", 3, "gpu")`` -> ``"jobs[3].gpu"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def error_from_pydantic(exc: pydantic.ValidationError, prefix: str = "") -> InstanceError:
    """The first error of ``exc`` as an :class:`InstanceError`."""
    err = exc.errors(include_url=False)[0]
    path = field_path(tuple(err.get("loc", ())))
    if prefix:
        path = f"{prefix}.{path}" if path else prefix
    msg = str(err.get("msg", "invalid"))
    # our own rules are raised as ValueError("field: value rule"): keep them verbatim
    if err.get("type") == "value_error":
        msg = msg.removeprefix("Value error, ")
        if not path:
            return InstanceError("", message=msg)
        return InstanceError("", message=f"{path}: {msg}" if ": " not in msg else msg)
    if err.get("type") == "missing":
        return InstanceError(path, message=f"{path}: missing (the field is required)")
    if err.get("type") == "extra_forbidden":
        return InstanceError(path, message=f"{path}: unknown field")
    # pydantic's sentence with a lower-case first letter; the values it quotes keep their case
    return InstanceError(path, err.get("input"), f"({msg[:1].lower()}{msg[1:]})")


INT64 = (-(2**63), 2**63 - 1)


def check_numbers(data: Any, prefix: str = "") -> None:
    """Every integer within int64 and every float finite, anywhere in parsed JSON data
    (iterative, so deep data cannot exhaust the stack)."""
    stack: list[tuple[Any, str]] = [(data, prefix)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, bool) or node is None or isinstance(node, str):
            continue
        if isinstance(node, int):
            if not INT64[0] <= node <= INT64[1]:
                raise InstanceError(path or "value", node, "is outside the 64-bit integer range")
        elif isinstance(node, float):
            if node != node or node in (float("inf"), float("-inf")):
                raise InstanceError(path or "value", node, "must be a finite number")
        elif isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in node.items())
        elif isinstance(node, list | tuple):
            if _plain_numbers(node):  # a row of a matrix: checked in C loops
                continue
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node))


_NUMBER_TYPES = frozenset({int, float})


def _plain_numbers(row: list | tuple) -> bool:
    """Whether ``row`` holds only ints and floats (not bools), every one finite and within
    int64; False sends it through the per-entry checks, which name the offending entry."""
    if not row or not set(map(type, row)) <= _NUMBER_TYPES:
        return False
    try:
        if not all(map(math.isfinite, row)):
            return False
    except OverflowError:  # an int beyond a float's range
        return False
    return INT64[0] <= min(row) and max(row) <= INT64[1]


def parse(model: type[M], data: Any, prefix: str = "") -> M:
    """Validate ``data`` into ``model`` or raise :class:`InstanceError` (numbers checked
    first: integers within int64, floats finite)."""
    if isinstance(data, model):
        return data
    check_numbers(data, prefix)
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise error_from_pydantic(exc, prefix) from None


def rule(field: str, value: object, text: str) -> ValueError:
    """A ``ValueError`` for use inside pydantic validators, formatted like InstanceError."""
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return ValueError(f"{field}: {shown} {text}")


def spec_error(field: str, value: object, rule: str) -> InstanceError:
    """The error of a bad generator parameter: ``spec.FIELD: VALUE RULE``.

    Parameters
    ----------
    field : str
        The parameter's name (``n``, ``racks``...), reported as ``spec.<field>``.
    value : object
        The value given.
    rule : str
        What the value must satisfy, e.g. ``"must be >= 2"``.

    Returns
    -------
    InstanceError
        To be raised by the generator.
    """
    return InstanceError(f"spec.{field}", value, rule)


def one_of(value: object, names: tuple[str, ...], what: str) -> object:
    """``value`` unchanged unless it is a string outside ``names`` (a pydantic validator body).

    Parameters
    ----------
    value : object
        An option's value; non-strings (a solution, a list) pass through to the field's type.
    names : tuple of str
        The names a string may take.
    what : str
        What the names are, for the message (``"a starting heuristic"``).

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    ValueError
        ``'x' is not a starting heuristic (one of cle, abm, random)``.
    """
    if isinstance(value, str) and value not in names:
        raise ValueError(f"{value!r} is not {what} (one of {', '.join(names)})")
    return value


#: the longest time limit any option accepts, in seconds (a day)
MAX_SECONDS = 86_400


def time_limit_field(default: float | None, description: str) -> Any:
    """The ``time_limit`` option of a heuristic or bound: seconds, > 0, at most a day.

    Parameters
    ----------
    default : float or None
        Seconds, or None for no limit.
    description : str
        What the limit bounds and when it is checked (``dmlopt list`` shows it).

    Returns
    -------
    pydantic.fields.FieldInfo
        For ``time_limit: float | None = time_limit_field(...)`` in an ``Options`` class.
    """
    return pydantic.Field(default=default, gt=0, le=MAX_SECONDS, description=description)
