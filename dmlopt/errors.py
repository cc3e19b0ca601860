"""Exceptions raised by dmlopt.

Every error a user can cause by bad input derives from :class:`DmloptError` and carries a
message that names the field, the value and the rule, so the command line can print it as
one line and exit with code 2.
"""

from __future__ import annotations

import os


class DmloptError(Exception):
    """Base class of every error dmlopt raises on purpose."""


class InstanceError(DmloptError, ValueError):
    """An instance, solution or spec breaks a rule: ``field: value rule``."""

    def __init__(self, field: str, value: object = None, rule: str = "", *, message: str = ""):
        self.field = field
        self.value = value
        self.rule = rule
        if not message:
            shown = repr(value)
            # a path or name is shown whole (cut, it would hide the file name), anything else
            # (a matrix, a long list) is cut at 80 characters
            limit = 1000 if isinstance(value, str | os.PathLike) else 80
            if len(shown) > limit:
                shown = shown[: limit - 3] + "..."
            message = f"{field}: {shown} {rule}".strip() if field else f"{shown} {rule}"
        super().__init__(message)


class ConfigError(InstanceError):
    """An environment variable (or other setting) breaks its rule: ``NAME: 'text' rule``."""


class SolverError(DmloptError):
    """The solver named is unknown or not available here."""


class ModelTooLargeError(DmloptError):
    """The estimated model size is above the configured limit."""


class ObjectiveMismatchError(DmloptError):
    """The solver's objective disagrees with the evaluator: a modelling bug, never ignored."""


class UnknownNameError(DmloptError, KeyError):
    """A problem, heuristic, formulation or generator name that does not exist."""

    def __str__(self) -> str:  # KeyError would add quotes
        return str(self.args[0]) if self.args else ""


class UserFunctionError(DmloptError):
    """A function of one's own given to :func:`dmlopt.heuristic` raised an exception: the
    message names the function and the exception, which is chained (``__cause__``)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a long run that kept its best solution so far (``solution``; the API adds
    ``result``, that solution evaluated). A :class:`KeyboardInterrupt`, so code that does not
    know it still stops; the command line writes the solution and exits 130."""

    def __init__(self, solution: object, result: object = None) -> None:
        super().__init__("interrupted")
        self.solution = solution
        self.result = result


def interrupt_of(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C: a :class:`KeyboardInterrupt`, or the ``SystemError`` numba
    raises when the interrupt arrives while a compiled function runs (the interrupt is its
    cause).

    Parameters
    ----------
    exc : BaseException
        An exception caught around a long computation.

    Returns
    -------
    bool
        True if the computation should stop as Ctrl-C asked.
    """
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, SystemError) and isinstance(exc.__cause__ or exc.__context__,
                                                       KeyboardInterrupt)
