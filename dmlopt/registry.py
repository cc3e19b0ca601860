"""Problem registry: the one place that knows which problems exist.

Problems are found through package entry points, so the core names none of them: the group
``dmlopt.problems`` maps a problem name to its model module (``tabgp =
"dmlopt.models.tabgp"`` in pyproject.toml), whose heuristics module is the same path with
``models`` replaced by ``heuristics``; the group ``dmlopt.commands`` maps a command a problem
adds to the command line (``train``) to the module that declares it in ``COMMANDS`` (the model
module, or the module next to the code the command runs: ``dmlopt train`` is declared by the
trainer, ``dmlopt.heuristics.nara.learn``). Together they declare the contract of
:mod:`dmlopt.contract` (``Instance``, ``Solution``, ``evaluate``, ``FORMULATIONS``,
``GENERATORS``, ``HEURISTICS`` ...). Adding a problem is adding its modules and one entry point
(another package can add problems the same way). Modules are imported on first use so the
command line starts fast.

A problem with a Gymnasium environment declares it in the group ``dmlopt.gym_envs`` (``Name-v0
= "package.module:Class"``); :func:`register_gym_envs` (called by ``import dmlopt``) registers
each as ``dmlopt/Name-v0`` with Gymnasium's lazy ``"module:Class"`` entry point, without
importing the environment's module, and without importing Gymnasium either: when Gymnasium is
not imported yet, the registration runs right after it is.

A plain function (a heuristic ``f(instance, *, seed, **options)`` named ``module:function`` in a
suite, say) is accepted where a :class:`~dmlopt.contract.Heuristic` is expected: its options
model is derived from its keyword-only parameters and its estimate is zero (:func:`as_heuristic`).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

import pydantic

from dmlopt.contract import (
    Bound,
    Formulation,
    Generator,
    Heuristic,
    NoOptions,
    Options,
    recommended_name,
    recommended_names,
    recommended_text,
    unbounded,
)
from dmlopt.errors import UnknownNameError

#: entry-point groups: problems (name -> model module) and problem commands (name -> the module
#: declaring it in ``COMMANDS``)
PROBLEMS_GROUP = "dmlopt.problems"
COMMANDS_GROUP = "dmlopt.commands"
#: Gymnasium environments (name -> "module:Class"), registered as "dmlopt/<name>"
GYM_GROUP = "dmlopt.gym_envs"
GYM_NAMESPACE = "dmlopt"


def _discover() -> tuple[dict[str, tuple[str, str]], dict[str, str], dict[str, str]]:
    """(problem -> (model module, heuristics module), command -> the module declaring it,
    Gymnasium id -> "module:Class") from the installed packages' entry points."""
    from importlib.metadata import entry_points

    eps = entry_points()
    problems: dict[str, tuple[str, str]] = {}
    for ep in eps.select(group=PROBLEMS_GROUP):
        model = ep.value.split(":")[0]
        parts = model.split(".")
        heur = ".".join("heuristics" if p == "models" else p for p in parts)
        problems[ep.name] = (model, heur)
    cmds = {ep.name: ep.value.split(":")[0] for ep in eps.select(group=COMMANDS_GROUP)}
    envs = {f"{GYM_NAMESPACE}/{ep.name}": ep.value for ep in eps.select(group=GYM_GROUP)}
    return problems, cmds, envs


# name -> (model module, heuristics module); command name -> the module declaring it in
# ``COMMANDS: dict[str, contract.Command]``; Gymnasium id -> "module:Class"; all known without
# importing any problem module
_PROBLEMS, _COMMANDS, _GYM_ENVS = _discover()


def gym_envs() -> dict[str, str]:
    """The Gymnasium environments the installed problems declare.

    Returns
    -------
    dict
        Gymnasium id (``"dmlopt/Name-v0"``) -> entry point (``"package.module:Class"``).
    """
    return dict(_GYM_ENVS)


def _register_with(gymnasium: ModuleType) -> None:
    for env_id, entry_point in _GYM_ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)


class _AfterImport:
    """A one-shot import hook (``sys.meta_path``) running ``callback(module)`` right after the
    module ``name`` is first imported."""

    def __init__(self, name: str, callback: Any) -> None:
        self.name, self.callback = name, callback

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        import sys
        from importlib.util import find_spec

        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = find_spec(fullname)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module, callback = loader.exec_module, self.callback

        def exec_then_call(module: ModuleType) -> None:
            try:
                exec_module(module)
            finally:
                loader.exec_module = exec_module  # the loader's own method again
            callback(module)

        loader.exec_module = exec_then_call
        return spec

    def invalidate_caches(self) -> None:
        """Nothing cached (``importlib.invalidate_caches`` calls every finder)."""


def register_gym_envs() -> None:
    """Register :func:`gym_envs` with Gymnasium (``gymnasium.make("dmlopt/Nara-v0", ...)``).

    Cheap at ``import dmlopt``: when Gymnasium is already imported the ids are added to its
    registry at once (lazy ``"module:Class"`` entry points: the environment's module is
    imported by ``gymnasium.make``); otherwise a one-shot import hook adds them right after
    Gymnasium's own import, so the command line never imports Gymnasium (nor numpy for it).
    Registering twice is harmless.

    Returns
    -------
    None
    """
    import sys

    if not _GYM_ENVS:
        return
    gymnasium = sys.modules.get("gymnasium")
    if gymnasium is not None and hasattr(gymnasium, "registry"):
        _register_with(gymnasium)
    elif "gymnasium" not in sys.modules and not any(
            isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("gymnasium", _register_with))


def commands() -> dict[str, str]:
    """Contributed command names -> the problem whose model or heuristics package declares each
    (the declaring module's name when it belongs to no problem)."""
    return {name: _owner(module) for name, module in _COMMANDS.items()}


def _owner(module: str) -> str:
    for problem, packages in _PROBLEMS.items():
        if any(module == p or module.startswith(p + ".") for p in packages):
            return problem
    return module


def command(name: str) -> Any:
    """The :class:`~dmlopt.contract.Command` called ``name`` (imports the module declaring it)."""
    return importlib.import_module(_COMMANDS[name]).COMMANDS[name]


@dataclass(frozen=True)
class Problem:
    """A registered problem: its model module and its typed entries."""

    name: str
    model: ModuleType
    heuristics: dict[str, Heuristic] = field(default_factory=dict)
    #: the heuristics module's ``RECOMMENDED`` (a name or a ``ByInstance``; None: undeclared)
    recommended: Any = None

    @property
    def recommended_bound(self) -> Any:
        """The model module's ``RECOMMENDED_BOUND`` (a name or a ``ByInstance``; None:
        undeclared)."""
        return getattr(self.model, "RECOMMENDED_BOUND", None)

    def recommended_heuristic_for(self, instance: Any) -> str:
        """The name of the heuristic recommended for ``instance`` (``RECOMMENDED``); the first
        registered one when the problem declares none."""
        if self.recommended is None:
            return next(iter(self.heuristics))
        return str(recommended_name(self.recommended, instance))

    def recommended_line(self) -> str:
        """``heuristic rts; bound hahn-grant``: what ``dmlopt list`` shows as recommended (a
        choice by instance as its text: ``heuristic rdda-ls for MinCU, ...``)."""
        parts = [f"{kind} {text}" for kind, text in self.recommended_texts().items() if text]
        return "; ".join(parts) or "-"

    def recommended_texts(self) -> dict[str, str | None]:
        """``{"heuristic": ..., "bound": ...}``: each recommendation's name, or its text when it
        depends on the instance (None: undeclared)."""
        return {kind: None if choice is None else recommended_text(choice)
                for kind, choice in (("heuristic", self.recommended),
                                     ("bound", self.recommended_bound))}

    def mark(self, kind: str, name: str) -> str:
        """`` [recommended]`` when the ``kind`` ("heuristic" or "bound") recommended may be
        ``name``, else ``""``."""
        choice = self.recommended if kind == "heuristic" else self.recommended_bound
        return " [recommended]" if choice is not None and name in recommended_names(choice) \
            else ""

    def recommended_bound_for(self, instance: Any) -> str | None:
        """The name of the bound method recommended for ``instance`` (``RECOMMENDED_BOUND``);
        None when the problem declares none."""
        choice = self.recommended_bound
        return None if choice is None else str(recommended_name(choice, instance))

    @property
    def formulation_entries(self) -> dict[str, Formulation]:
        return {k: as_formulation(v) for k, v in self.model.FORMULATIONS.items()}

    @property
    def generator_entries(self) -> dict[str, Generator]:
        return {k: as_generator(v, k) for k, v in self.model.GENERATORS.items()}

    @property
    def bound_entries(self) -> dict[str, Bound]:
        """The problem's ``BOUNDS`` (strongest first), empty when it declares none."""
        return dict(getattr(self.model, "BOUNDS", {}))

    def bound(self, name: str) -> Bound:
        try:
            return self.bound_entries[name]
        except KeyError:
            raise UnknownNameError(
                f"bound: {name!r} is not a {self.name} bound method "
                f"(available: {', '.join(self.bound_entries) or 'none'})"
            ) from None

    @property
    def formulations(self) -> list[str]:
        return list(self.formulation_entries)

    @property
    def generators(self) -> list[str]:
        return list(self.generator_entries)

    @property
    def sense(self) -> str:
        return getattr(self.model, "SENSE", "min")

    def heuristic(self, name: str) -> Heuristic:
        try:
            return self.heuristics[name]
        except KeyError:
            raise UnknownNameError(
                f"heuristic: {name!r} is not a {self.name} heuristic "
                f"(available: {', '.join(sorted(self.heuristics))})"
            ) from None

    def formulation(self, name: str) -> Formulation:
        try:
            return self.formulation_entries[name]
        except KeyError:
            raise UnknownNameError(
                f"formulation: {name!r} is not a {self.name} formulation "
                f"(available: {', '.join(self.formulations) or 'none, use a heuristic'})"
            ) from None

    def generator(self, name: str) -> Generator:
        try:
            return self.generator_entries[name]
        except KeyError:
            raise UnknownNameError(
                f"generator: {name!r} is not a {self.name} generator "
                f"(available: {', '.join(self.generators)})"
            ) from None


def names() -> list[str]:
    """The registered problem names."""
    if not _PROBLEMS:
        raise UnknownNameError("no problems are registered: dmlopt is not installed (its entry "
                               "points are missing); run `pip install -e .` or `make venv`")
    return sorted(_PROBLEMS)


@cache
def get(name: str) -> Problem:
    """The problem called ``name``; :class:`UnknownNameError` listing the known ones otherwise."""
    if not isinstance(name, str) or name not in _PROBLEMS:
        raise UnknownNameError(
            f"problem: {name!r} is not a known problem (available: {', '.join(names())})"
        )
    model_mod, heur_mod = _PROBLEMS[name]
    model = importlib.import_module(model_mod)
    heur = importlib.import_module(heur_mod)
    return Problem(name=name, model=model,
                   heuristics={k: as_heuristic(v, k) for k, v in heur.HEURISTICS.items()},
                   recommended=getattr(heur, "RECOMMENDED", None))


def of(instance: Any) -> Problem:
    """The problem an instance belongs to (its ``problem`` field)."""
    name = getattr(instance, "problem", None)
    if not isinstance(name, str):
        raise UnknownNameError(f"instance: {type(instance).__name__} is not a dmlopt instance")
    return get(name)


# ---------------------------------------------------------------------------------------------
# plain entries -> typed entries


def as_formulation(entry: Any) -> Formulation:
    """A :class:`Formulation`, or a ``(build, estimate_size)`` pair made into one."""
    if isinstance(entry, Formulation):
        return entry
    build, size = entry
    return Formulation(build=build, estimate_size=size, description=_first_line(build))


def as_heuristic(entry: Any, name: str = "") -> Heuristic:
    """A :class:`Heuristic`, or a plain function ``f(instance, *, seed, **options)`` made into
    one (options from its keyword-only parameters, zero estimate)."""
    if isinstance(entry, Heuristic):
        return entry
    return Heuristic(function=entry, Options=options_from_signature(entry, name, skip=("seed",)),
                     estimate=unbounded, description=_first_line(entry))


def as_generator(entry: Any, name: str = "") -> Generator:
    """A :class:`Generator`, or a plain function ``f(*, seed, **params)`` made into one."""
    if isinstance(entry, Generator):
        return entry
    return Generator(function=entry, Params=options_from_signature(entry, name, skip=("seed",)),
                     estimate=unbounded, description=_first_line(entry))


def options_from_signature(fn: Any, name: str, skip: tuple[str, ...] = ()) -> type[Options]:
    """An :class:`Options` model from ``fn``'s keyword-only parameters (type hints, defaults)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return NoOptions
    try:
        hints = _hints(fn)
    except Exception:  # noqa: BLE001 - unresolvable annotations: accept any value
        hints = {}
    fields: dict[str, Any] = {}
    for pname, param in sig.parameters.items():
        if param.kind is not inspect.Parameter.KEYWORD_ONLY or pname in skip:
            continue
        ann = hints.get(pname, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (ann, default)
    model_name = "".join(p.capitalize() for p in name.replace("-", "_").split("_")) or "Plain"
    model = pydantic.create_model(f"{model_name}Options", __base__=Options, **fields)
    model.derived = True  # the function's own defaults apply to options not given
    return model


def _hints(fn: Any) -> dict[str, Any]:
    import functools
    import typing

    target = fn.func if isinstance(fn, functools.partial) else fn
    return typing.get_type_hints(target)


def _first_line(fn: Any) -> str:
    import functools

    target = fn.func if isinstance(fn, functools.partial) else fn
    doc = inspect.getdoc(target) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""
