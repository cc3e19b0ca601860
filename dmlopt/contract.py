"""The problem contract: what a problem declares so the core can serve it.

A problem is a model module ``dmlopt.models.<p>`` and a heuristics module
``dmlopt.heuristics.<p>``. The model module declares

``Instance``, ``Solution``
    pydantic models (:class:`dmlopt.validation.Frozen`): immutable, JSON in and out, every rule
    raising :class:`~dmlopt.errors.InstanceError` that names field, value and rule.
``evaluate(instance, solution) -> Evaluation``
    the one evaluator: objective, feasibility, violated rules, metrics; no Pyomo.
``SENSE``, ``TITLE``, ``PAPER``
    ``"min"`` or ``"max"``, a one-line title, the paper.
``FORMULATIONS: dict[str, Formulation]``
    exact models (empty for a scored-only problem, e.g. topology inference).
``decode(model, instance) -> Solution``, ``warm_start(model, instance, solution)``
    when it has formulations (a :class:`Formulation` may bring its own).
``GENERATORS: dict[str, Generator]``
    instance generators, deterministic per seed.
``DEFAULT_FORMULATION`` (optional)
    the formulation ``dmlopt.solve`` uses when none is named: the fastest one the tests prove
    equal to the paper's (default: ``"paper"``).
``BOUNDS: dict[str, Bound]`` (optional)
    dual bounds (LP, Lagrangian, column generation, combinatorial), strongest first;
    :func:`dmlopt.bound` runs them (:mod:`dmlopt.bounds` builds the generic ones). A bound
    whose ``exact`` names formulations is an exact algorithm for them: :func:`dmlopt.solve`
    without a named formulation runs it before the MIP (see :class:`Bound`).
``RECOMMENDED_BOUND: str | ByInstance``
    the bound method to use (the best certified gap for its time at the papers' sizes):
    ``dmlopt.bound`` runs it when no method is named, ``dmlopt list`` marks it.
``EXAMPLE: dict``
    a tiny ``dmlopt.generate`` spec the contract tests run every entry on.

and the heuristics module

``HEURISTICS: dict[str, Heuristic]``
    the heuristics, each with its options model and estimate.
``RECOMMENDED: str | ByInstance``
    the heuristic to use (the best quality for its time at the papers' sizes, by the
    reproduced tables): ``dmlopt.heuristic(instance)`` runs it when no name is given and
    ``dmlopt list`` marks it; it runs at the papers' largest sizes under the default limits.
``PRELOAD: tuple[str, ...]`` (optional)
    modules the heuristics import lazily (compiled kernels): the benchmark harness imports
    them before it starts a run's clock, so compilation is not timed.

A problem adds a command line command (``dmlopt train nara``) with ``COMMANDS: dict[str,
Command]`` (:class:`Command`) in any of its modules, named by an entry point of the group
``dmlopt.commands`` (:mod:`dmlopt.registry`): the model module, or the module of the code the
command runs.

Options of heuristics and parameters of generators are pydantic models derived from
:class:`Options`: unknown keys are refused naming the valid ones, numbers must be finite and
integers within int64, and ``dmlopt list PROBLEM`` / ``dmlopt schema PROBLEM --options`` show them
with type, default and meaning. Each heuristic and generator also declares an ``estimate`` of
the memory and work it needs, from the instance (or the parameters) alone, so the core refuses a
run that would not fit before it allocates anything (:class:`Limits`).
"""

from __future__ import annotations

import math
import numbers
import os
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import pydantic

from dmlopt.errors import InstanceError, ModelTooLargeError

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


class Options(pydantic.BaseModel):
    """Base of a heuristic's options and a generator's parameters.

    Frozen; unknown keys refused; floats finite; every integer within int64 (checked over the
    validated values, so nested lists are covered too). Give each field a ``description``: it
    is what ``dmlopt list PROBLEM`` prints as the option's meaning.
    """

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    #: True for a model derived from a plain function's signature (registry.as_heuristic)
    derived: ClassVar[bool] = False

    @pydantic.model_validator(mode="before")
    @classmethod
    def _strict_scalars(cls, data: Any) -> Any:
        """A boolean is not a number, a string is not a number and a number is not a boolean
        (pydantic's lax mode would coerce them); lists stand for tuples (JSON and TOML have no
        tuples)."""
        if isinstance(data, dict):
            for name, value in data.items():
                info = cls.model_fields.get(name)
                if info is not None:
                    _check_scalar_kind(name, value, info.annotation)
        return data

    @pydantic.model_validator(mode="after")
    def _int64(self) -> Options:
        for name in type(self).model_fields:
            _check_int64(name, getattr(self, name))
        return self


def _kinds(annotation: Any) -> set[type]:
    """The scalar types (bool, int, float) an annotation admits at its top level."""
    import typing

    if annotation in (bool, int, float):
        return {annotation}
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        out: set[type] = set()
        for arg in typing.get_args(annotation):
            out |= _kinds(arg)
        return out
    return set()


def _items(annotation: Any) -> Any:
    """The element annotation of a list or tuple annotation (one type), else None."""
    import typing

    if typing.get_origin(annotation) in (list, tuple):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        if args and all(a == args[0] for a in args):
            return args[0]
    return None


def _check_scalar_kind(field: str, value: Any, annotation: Any) -> None:
    kinds = _kinds(annotation)
    if kinds and not _other_types(annotation):
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        if isinstance(value, bool) and bool not in kinds:
            raise ValueError(f"{field}: {value!r} is a boolean, not a number")
        if isinstance(value, str):
            raise ValueError(f"{field}: {value!r} is a string, not a "
                             f"{'boolean' if kinds == {bool} else 'number'}")
        if is_number and kinds == {bool}:
            raise ValueError(f"{field}: {value!r} is a number, not a boolean (true or false)")
    item = _items(annotation)
    if item is not None and isinstance(value, list | tuple):
        for element in value:
            _check_scalar_kind(field, element, item)


def _other_types(annotation: Any) -> bool:
    """Whether a union annotation admits something else than bool, int, float and None (a
    string, a literal): then a string may be valid and pydantic decides."""
    import typing

    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(a is not type(None) and a not in (bool, int, float)
                   for a in typing.get_args(annotation))
    return False


def _check_int64(field: str, value: Any) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{field}: {value} is outside the 64-bit integer range")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{field}: {value} must be finite")
    if isinstance(value, list | tuple):
        for item in value:
            _check_int64(field, item)
    if isinstance(value, dict):
        for item in value.values():
            _check_int64(field, item)


class NoOptions(Options):
    """A heuristic or generator without options."""


class Size(NamedTuple):
    """What a heuristic or generator needs, estimated before it runs.

    ``memory``: peak bytes of its arrays (order of magnitude, not counting the instance itself);
    ``work``: elementary operations (a numpy element operation or a Python loop step counts one)
    of its deterministic part, i.e. what it does before its own time limit can stop it.
    """

    memory: float
    work: float


def unbounded(*_: Any) -> Size:
    """The estimate of something whose cost does not grow with its input (tiny)."""
    return Size(0.0, 0.0)


@dataclass(frozen=True)
class Formulation:
    """An exact model of a problem.

    ``build(instance) -> pyomo model``; ``estimate_size(instance) -> (variables, constraints)``,
    exact or an upper bound, computed without building; ``solvers``: the solvers that can solve
    it (None: any, e.g. a linear model; ``("scip",)`` for a nonconvex quadratic one);
    ``decode`` / ``warm_start``: this formulation's own, when the problem's module-level ones
    do not fit it; ``solver_options``: per solver name, options this formulation needs by
    default (a workaround of a known solver fault), under the user's own ``solver_options``.
    """

    build: Callable[[Any], Any]
    estimate_size: Callable[[Any], tuple[int, int]]
    description: str
    solvers: tuple[str, ...] | None = None
    decode: Callable[[Any, Any], Any] | None = None
    warm_start: Callable[[Any, Any, Any], None] | None = None
    solver_options: Mapping[str, Mapping[str, Any]] | None = None


@dataclass(frozen=True)
class Heuristic:
    """A heuristic: ``function(instance, *, seed, **options) -> Solution``.

    ``Options``: the pydantic model of its options (:class:`Options`); ``estimate(instance,
    options) -> Size`` bounds what it allocates and computes before it can stop by itself.
    """

    function: Callable[..., Any]
    Options: type[Options]
    estimate: Callable[[Any, Any], Size]
    description: str

    def __call__(self, instance: Any, **kwargs: Any) -> Any:
        """Call the function directly (no boundary checks: use :func:`dmlopt.heuristic`)."""
        return self.function(instance, **kwargs)


@dataclass(frozen=True)
class BoundValue:
    """What a bound method returns: a valid dual ``bound`` (lower for a minimisation, upper
    for a maximisation), optionally a feasible ``solution`` found on the way (the core scores it
    with the evaluator; its objective is never taken from the method), and ``metrics`` saying
    how the bound was obtained (iterations, LP value, columns, ...)."""

    bound: float
    solution: Any = None
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Bound:
    """A dual bound: ``function(instance, *, time_limit, **options) -> BoundValue``.

    ``time_limit`` (seconds or None for the method's own default) stops an iterative method
    early; what it returns must still be a valid bound. ``Options``: the pydantic model of its
    options; ``estimate(instance, options) -> Size`` what it allocates and computes;
    ``description``: one line for ``dmlopt list``. A problem declares them in ``BOUNDS``,
    strongest first: ``dmlopt.bound(instance)`` takes the recommended one
    (``RECOMMENDED_BOUND``), else the first that fits the size limits.

    ``exact``: the formulations whose optimum this bound equals (within its own precision,
    finer than the optimality gap) while it returns, on the way, a solution reaching it: an
    exact algorithm for them. :func:`dmlopt.solve` with its default formulation runs such a
    method first (``share`` of the time limit, default half) and returns its solution as
    optimal when the evaluated objective and the bound meet within the optimality gap;
    otherwise the MIP runs with the rest of the time, warm-started from it, and the tighter
    of the two bounds holds.
    An exact method's function also takes ``start=`` (a solution or None: the user's warm
    start), which it may begin from; the solution it returns must lie in those formulations.

    ``heuristics``: the names, in the problem's ``HEURISTICS``, of the heuristics the bound
    runs (the primal one, whose solution it returns, first): a reader sees here where a
    bound's solution comes from, and the bound runs no other (a model module imports no
    heuristics module, so the function resolves these names when it runs).
    """

    function: Callable[..., BoundValue]
    Options: type[Options]
    estimate: Callable[[Any, Any], Size]
    description: str
    #: the formulation a relaxation builds: its model size is checked against the limits too
    formulation: str | None = None
    #: formulations whose optimum this bound reaches with a solution (an exact algorithm)
    exact: tuple[str, ...] = ()
    #: the share of dmlopt.solve's time limit an exact method gets before the MIP (None: the
    #: core's default, ``api.EXACT_SHARE``)
    share: float | None = None
    #: the problem's heuristics (names in its HEURISTICS) the bound runs, the primal one first
    heuristics: tuple[str, ...] = ()

    def __call__(self, instance: Any, **kwargs: Any) -> BoundValue:
        """Call the function directly (no boundary checks: use :func:`dmlopt.bound`)."""
        return self.function(instance, **kwargs)


@dataclass(frozen=True)
class ByInstance:
    """A recommendation that depends on the instance (``RECOMMENDED``, ``RECOMMENDED_BOUND``).

    ``choose(instance) -> str`` picks one of ``names`` (every name it may return, each
    registered); ``text`` says when each applies, for ``dmlopt list`` (e.g. ``"rdda-ls for
    MinCU, rdda-pack for MinW, MinT, MaxR"``).
    """

    choose: Callable[[Any], str]
    names: tuple[str, ...]
    text: str

    def __call__(self, instance: Any) -> str:
        """The name recommended for ``instance``."""
        return self.choose(instance)


def recommended_name(choice: str | ByInstance, instance: Any = None) -> str | None:
    """The name a ``RECOMMENDED`` (or ``RECOMMENDED_BOUND``) declaration picks.

    Parameters
    ----------
    choice : a name, or a :class:`ByInstance`.
    instance : the instance to choose for; None: only a plain name can be given.

    Returns
    -------
    str or None
        The name; None for a :class:`ByInstance` without an instance.

    References
    ----------
    Ours: issue 52, one recommended path per problem.
    """
    if isinstance(choice, ByInstance):
        return None if instance is None else choice(instance)
    return choice


def recommended_names(choice: str | ByInstance) -> tuple[str, ...]:
    """Every name a recommendation may pick.

    Parameters
    ----------
    choice : a name, or a :class:`ByInstance`.

    Returns
    -------
    tuple of str
        ``(choice,)`` for a name, ``choice.names`` otherwise.

    References
    ----------
    Ours: issue 52, one recommended path per problem.
    """
    return choice.names if isinstance(choice, ByInstance) else (choice,)


def recommended_text(choice: str | ByInstance) -> str:
    """What ``dmlopt list`` shows for a recommendation: the name, or when each name applies.

    Parameters
    ----------
    choice : a name, or a :class:`ByInstance`.

    Returns
    -------
    str
        The name, or ``choice.text``.

    References
    ----------
    Ours: issue 52, one recommended path per problem.
    """
    return choice.text if isinstance(choice, ByInstance) else choice


@dataclass(frozen=True)
class Generator:
    """An instance generator: ``function(*, seed, **params) -> Instance``, deterministic per
    seed. ``Params``: the pydantic model of its parameters; ``estimate(params) -> Size``."""

    function: Callable[..., Any]
    Params: type[Options]
    estimate: Callable[[Any], Size]
    description: str

    def __call__(self, **kwargs: Any) -> Any:
        """Call the function directly (no boundary checks: use :func:`dmlopt.generate`)."""
        return self.function(**kwargs)


@dataclass(frozen=True)
class Command:
    """A command a problem adds to the command line: ``dmlopt <name> ...``.

    ``configure(parser)`` adds its arguments; ``run(args) -> exit code``. The core registers it
    without importing anything else of the problem.
    """

    name: str
    help: str
    configure: Callable[[Any], None]
    run: Callable[[Any], int]


# ---------------------------------------------------------------------------------------------
# limits


class Limits(NamedTuple):
    """The size guard: models above ``variables`` or ``constraints``, heuristics or generators
    estimated above ``memory`` bytes or ``work`` operations are refused before they start."""

    variables: int = 1_000_000
    constraints: int = 2_000_000
    memory: float = 2 * 2**30
    work: float = 1e12


DEFAULT_LIMITS = Limits()

_UNITS = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40}


def _number(field: str, raw: str) -> float:
    text = raw.strip().lower()
    scale = 1.0
    for unit in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            scale, text = _UNITS[unit], text[: -len(unit)]
            break
    try:
        value = float(text) * scale
    except ValueError:
        raise InstanceError(field, raw, "must be a number (units k, M, G, KiB, MiB, GiB "
                            "allowed)") from None
    if not math.isfinite(value) or value <= 0:
        raise InstanceError(field, raw, "must be a positive finite number")
    return value


def parse_limits(raw: str, field: str = "size limit") -> Limits:
    """``"V,C"`` or ``"V,C,MEMORY,WORK"`` (e.g. ``"2e6,4e6,16GiB,1e12"``) -> :class:`Limits`.

    The first two bound models (variables, constraints), the last two heuristics and
    generators (peak bytes, elementary operations); omitted ones keep their defaults.
    """
    parts = [p for p in raw.split(",")]
    if len(parts) not in (2, 4) or any(not p.strip() for p in parts):
        raise InstanceError(field, raw, "must be V,C or V,C,MEMORY,WORK (e.g. 2000000,4000000 "
                            "or 2e6,4e6,16GiB,1e12)")
    values = [_number(field, p) for p in parts]
    out = list(DEFAULT_LIMITS)
    out[: len(values)] = values
    return Limits(int(out[0]), int(out[1]), float(out[2]), float(out[3]))


#: the limits of the API call in progress (set by :func:`limits_in_force`), so that code deep in a
#: problem (a lazily built path table, say) sees the ``size_limit`` the user passed
_IN_FORCE: ContextVar[Limits | None] = ContextVar("dmlopt_limits", default=None)


@contextmanager
def limits_in_force(limits: Limits) -> Iterator[Limits]:
    """Make ``limits`` what :func:`limits_from` (without an argument) returns inside the block."""
    token = _IN_FORCE.set(limits)
    try:
        yield limits
    finally:
        _IN_FORCE.reset(token)


def limits_from(size_limit: Any = None) -> Limits:
    """The limits in force: ``size_limit`` (a :class:`Limits`, a ``(V, C)`` pair or a string),
    else those of the API call in progress (:func:`limits_in_force`), else
    ``DMLOPT_SIZE_LIMIT``, else :data:`DEFAULT_LIMITS`."""
    if size_limit is None and _IN_FORCE.get() is not None:
        return _IN_FORCE.get()
    if size_limit is None:
        raw = os.environ.get("DMLOPT_SIZE_LIMIT")
        return parse_limits(raw, "DMLOPT_SIZE_LIMIT") if raw else DEFAULT_LIMITS
    if isinstance(size_limit, Limits):
        return size_limit
    if isinstance(size_limit, str):
        return parse_limits(size_limit)
    try:
        items = list(size_limit)
    except TypeError:
        items = None
    if items is None or any(isinstance(x, bool) or not isinstance(x, numbers.Real)
                            for x in items):
        raise InstanceError("size_limit", size_limit, "must be (variables, constraints) or "
                            "(variables, constraints, memory, work): numbers, not "
                            "booleans or text")
    try:
        values = [float(x) for x in items]
    except (TypeError, ValueError, OverflowError):
        raise InstanceError("size_limit", size_limit, "must hold 2 or 4 positive finite "
                            "numbers") from None
    if len(values) not in (2, 4) or not all(math.isfinite(v) and v > 0 for v in values):
        raise InstanceError("size_limit", size_limit, "must hold 2 or 4 positive finite "
                            "numbers")
    out = list(DEFAULT_LIMITS)
    out[: len(values)] = values
    return Limits(int(out[0]), int(out[1]), float(out[2]), float(out[3]))


def check_run_size(what: str, size: Size, limits: Limits) -> None:
    """Refuse a heuristic or generator run whose estimate is above the limits."""
    memory, work = float(size.memory), float(size.work)
    if memory > limits.memory or work > limits.work:
        raise ModelTooLargeError(
            f"too large: {what} needs about {_human_bytes(memory)} and {work:.3g} operations, "
            f"above the limit {_human_bytes(limits.memory)} / {limits.work:.3g}; pass "
            "size_limit=(V, C, MEMORY, WORK) (CLI: --size-limit V,C,MEMORY,WORK, or "
            "DMLOPT_SIZE_LIMIT) to run it anyway"
        )


def _human_bytes(n: float) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} bytes"
