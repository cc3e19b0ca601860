"""Checks of the solver arguments: which solver names are allowed and installed, the settings
(time limit, gap, threads) and each solver option against the solver's own list, before any
model is built.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import sys
from functools import cache
from typing import Any

from dmlopt.errors import InstanceError, SolverError
from dmlopt.solvers.base import ALIASES, NAMED, PACKAGES, canonical


def installed(name: str) -> bool:
    """Whether the Python package of solver ``name`` is installed (found, not imported).

    Parameters
    ----------
    name : str
        One of :data:`dmlopt.solvers.base.NAMED`.

    Returns
    -------
    bool
        Whether ``PACKAGES[name]`` can be imported.

    References
    ----------
    Ours.
    """
    import importlib.util

    return importlib.util.find_spec(PACKAGES[name]) is not None


def available() -> list[str]:
    """Solver names usable here: those of :data:`NAMED` whose package is installed."""
    return [name for name in NAMED if installed(name)]


#: names of other Pyomo solvers the user opts in to, comma-separated (e.g. "gurobi,cplex")
OPT_IN_ENV = "DMLOPT_SOLVERS"

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}")

#: the relative gap at which a run counts as proven optimal, whatever the solver's settings
OPTIMALITY_GAP = 1e-4

#: the absolute gap that also proves it (HiGHS's default ``mip_abs_gap``; an objective near 0)
OPTIMALITY_ABS_GAP = 1e-6

#: the largest thread count accepted (a run asking for more would start that many threads)
MAX_THREADS = 256


def allowed() -> list[str]:
    """The solver names accepted: dmlopt's (:data:`NAMED`: highs, scip, gurobi, cplex, xpress,
    copt) and the other Pyomo solver names listed in ``DMLOPT_SOLVERS``."""
    extra = [x.strip() for x in os.environ.get(OPT_IN_ENV, "").split(",") if x.strip()]
    return list(NAMED) + [x for x in extra if _NAME.fullmatch(x) and x not in ALIASES
                          and not _persistent(x)]


def _persistent(solver: str) -> bool:
    """Pyomo's persistent interfaces (``gurobi_persistent``, ``cplex_persistent``) keep a model
    between solves and must be handed it first (``set_instance``): dmlopt does not drive them.
    (APPSI's ``appsi_*`` names come with a legacy wrapper that solves a model as given.)"""
    return solver.endswith("_persistent")


def check(solver: Any) -> None:
    """Raise :class:`SolverError` if ``solver`` is not an allowed, installed solver name.

    dmlopt's names (highs, scip, gurobi, cplex, xpress, copt; Pyomo's ``gurobi_direct``,
    ``cplex_direct``, ``xpress_direct`` and ``scip_direct`` stand for the same) are accepted
    whenever their Python package is installed, and refused in one line naming the package
    otherwise. Another Pyomo solver name is accepted only when the user opts in to it with
    ``DMLOPT_SOLVERS=name``; a name is never a path or an executable (``asl:/some/program``
    is refused before Pyomo sees it), nor a persistent interface (``gurobi_persistent``).
    """
    if not isinstance(solver, str) or not solver:
        raise SolverError(f"solver: {solver!r} must be a solver name (one of: "
                          f"{', '.join(allowed())})")
    name = canonical(solver)
    if name is not None:
        if not installed(name):
            raise SolverError(f"solver: {solver!r} needs the Python package {PACKAGES[name]}, "
                              f"not installed here (pip install {PACKAGES[name]}; "
                              "'dmlopt[solvers]' installs every commercial one)")
        return
    if _NAME.fullmatch(solver) and _persistent(solver):
        base = solver.removesuffix("_persistent")
        use = f"use {base!r}" if base in NAMED else f"use one of {', '.join(NAMED)}"
        raise SolverError(f"solver: {solver!r} is a persistent Pyomo interface (it must be "
                          f"handed its model first), which dmlopt does not drive: {use}")
    if solver not in allowed():
        hint = "" if _NAME.fullmatch(solver) else " (a solver name, never a path)"
        raise SolverError(
            f"solver: {solver!r} is not an allowed solver{hint} (allowed: "
            f"{', '.join(allowed())}; to use another Pyomo solver set {OPT_IN_ENV}=name)"
        )
    if not _quietly(lambda: _legacy_available(solver)):
        raise SolverError(
            f"solver: {solver!r} is not available to Pyomo here (is its executable or "
            "Python package installed and licensed?)"
        )


def _legacy_available(solver: str) -> bool:
    import pyomo.environ as pyo

    try:
        return bool(pyo.SolverFactory(solver).available(exception_flag=False))
    except Exception:  # noqa: BLE001 - Pyomo raises many kinds for unknown names
        return False


def _quietly(fn: Any) -> Any:
    """Run ``fn`` with file descriptors 1 and 2 on /dev/null and Pyomo's logging off (Pyomo
    warns on unknown solver names; HiGHS prints its banner from C++). Python's own streams are
    left in place (objects made inside may keep them) and flushed into /dev/null."""
    import logging

    logger = logging.getLogger("pyomo")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        return fn()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)
        logger.setLevel(level)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def check_settings(time_limit: Any = None, mip_gap: Any = None, threads: Any = None) -> None:
    """``time_limit`` finite and > 0, ``mip_gap`` in [0, 1), ``threads`` an integer in
    [1, MAX_THREADS] (each may be None: the solver's default)."""
    if time_limit is not None and not (_is_number(time_limit) and time_limit > 0):
        raise InstanceError("time_limit", time_limit, "must be a finite number of seconds > 0")
    if mip_gap is not None and not (_is_number(mip_gap) and 0 <= mip_gap < 1):
        raise InstanceError("mip_gap", mip_gap, "must be a relative gap in [0, 1)")
    if threads is not None and not (isinstance(threads, int) and not isinstance(threads, bool)
                                    and 1 <= threads <= MAX_THREADS):
        raise InstanceError("threads", threads, f"must be an integer in [1, {MAX_THREADS}]")


def writes_files(option: str) -> bool:
    """Whether a solver option names a file to read or write (refused in suites)."""
    low = option.lower()
    return "file" in low or low.startswith("write") or "/write" in low


def check_options(solver: str, options: Any, *, allow_files: bool = True) -> None:
    """Every option must be one of the solver's own, with a value of its type.

    HiGHS options are checked against ``Highs.getOptionType``, SCIP parameters against
    ``Model.getParams``, those of Gurobi, CPLEX, Xpress and COPT against the parameter names
    their packages list (:func:`dmlopt.solvers.commercial.check_option`); options of opted-in
    solvers are passed through unchecked. With
    ``allow_files=False`` (suites) an option that reads or writes a file is refused.
    """
    if options is None:
        return
    if not isinstance(options, dict):
        raise InstanceError("solver_options", options, "must be a table of option = value")
    for key, value in options.items():
        if not isinstance(key, str) or not key:
            raise InstanceError("solver_options", key, "must be option names")
        if not allow_files and writes_files(key):
            raise InstanceError(f"solver_options.{key}", value, "reads or writes a file: not "
                                "allowed in a suite (set it from Python, where you own the "
                                "process)")
        if isinstance(value, float) and not math.isfinite(value):
            raise InstanceError(f"solver_options.{key}", value, "must be finite")
        if isinstance(value, int) and not isinstance(value, bool) and \
                not -(2**63) <= value < 2**63:
            raise InstanceError(f"solver_options.{key}", value, "is outside the 64-bit range")
        if not isinstance(value, bool | int | float | str):
            raise InstanceError(f"solver_options.{key}", value, "must be a number, a boolean "
                                "or a string")
        name = ALIASES.get(solver, solver)
        if name == "highs":
            _check_highs_option(key, value)
        elif name == "scip_direct":
            _check_scip_option(key, value)
        elif canonical(solver) is not None:
            from dmlopt.solvers import commercial

            commercial.check_option(canonical(solver), key, value)


def _check_highs_option(key: str, value: Any) -> None:
    import highspy

    status, kind = _highs_probe().getOptionType(key)
    if status != highspy.HighsStatus.kOk:
        raise InstanceError(f"solver_options.{key}", value, "is not a HiGHS option (see "
                            "https://ergo-code.github.io/HiGHS/dev/options/definitions/)")
    types = {highspy.HighsOptionType.kBool: (bool,), highspy.HighsOptionType.kInt: (int,),
             highspy.HighsOptionType.kDouble: (int, float), highspy.HighsOptionType.kString:
             (str,)}
    ok = types.get(kind, (object,))
    if not isinstance(value, ok) or (bool not in ok and isinstance(value, bool)):
        raise InstanceError(f"solver_options.{key}", value,
                            f"must be of type {'/'.join(t.__name__ for t in ok)}")
    checker = _highs_checker()
    status, default = checker.getOptionValue(key)
    refused, said = _captured(lambda: checker.setOptionValue(key, value)
                              != highspy.HighsStatus.kOk)
    if not refused:
        checker.setOptionValue(key, default)
        return
    raise InstanceError(f"solver_options.{key}", value,
                        f"is refused by HiGHS: {_solver_words(said, 'ERROR:')}")


def _solver_words(text: str, marker: str) -> str:
    """The solver's own sentence about a refused value, from its log, in one line."""
    lines = [" ".join(line.split()) for line in text.splitlines() if marker in line]
    if not lines:
        return "out of its range or allowed values"
    said = lines[0].split(marker, 1)[1].strip()
    return said.removeprefix("checkOptionValue:").strip()


def _captured(fn: Any) -> tuple[Any, str]:
    """``fn()`` with file descriptors 1 and 2 captured (solvers write their refusals there from
    C) and Python's ``sys.stdout`` / ``sys.stderr`` too (once a SCIP model has sent its output
    through Python, SCIP's error messages go there, process-wide); returns its result and what
    it printed."""
    import tempfile

    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    relayed = io.StringIO()
    with tempfile.TemporaryFile() as tmp:
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            with contextlib.redirect_stdout(relayed), contextlib.redirect_stderr(relayed):
                out = fn()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
        tmp.seek(0)
        return out, tmp.read().decode("utf-8", "replace") + relayed.getvalue()


@cache
def _highs_checker() -> Any:
    """A HiGHS object whose log is on, to hear why it refuses an option value."""
    import highspy

    return _quietly(highspy.Highs)


@cache
def _highs_probe() -> Any:
    """One silent HiGHS object to look option names and types up in."""
    import highspy

    h = _quietly(highspy.Highs)
    h.setOptionValue("output_flag", False)
    return h


@cache
def _scip_params() -> dict[str, Any]:
    import pyscipopt

    return _quietly(lambda: pyscipopt.Model().getParams())


def _check_scip_option(key: str, value: Any) -> None:
    params = _scip_params()
    if key not in params:
        raise InstanceError(f"solver_options.{key}", value, "is not a SCIP parameter (see "
                            "https://www.scipopt.org/doc/html/PARAMETERS.php)")
    default = params[key]
    if isinstance(default, bool):
        ok: tuple[type, ...] = (bool,)
    elif isinstance(default, int):
        ok = (int,)
    elif isinstance(default, float):
        ok = (int, float)
    else:
        ok = (str,)
    if not isinstance(value, ok) or (bool not in ok and isinstance(value, bool)):
        raise InstanceError(f"solver_options.{key}", value,
                            f"must be of type {'/'.join(t.__name__ for t in ok)}")
    import pyscipopt

    def attempt() -> bool:
        model = pyscipopt.Model()
        model.hideOutput()
        try:
            model.setParam(key, value)
        except (ValueError, TypeError, OverflowError, LookupError):
            return False
        return True

    accepted, said = _captured(attempt)
    if not accepted:
        raise InstanceError(f"solver_options.{key}", value,
                            f"is refused by SCIP: {_scip_words(said)}")


def _scip_words(text: str) -> str:
    """SCIP's sentence on a refused parameter value (``Invalid value <v> for ... Must be in
    range [a,b].``), without its source locations."""
    for line in text.splitlines():
        if "Invalid value" in line:
            return line.split("ERROR:", 1)[-1].strip()
    return "out of its range or allowed values"
