"""Checks of the arguments of the public entry points that Python itself does not make:
an option named after one of the call's own arguments (``--option seed=3`` on the command
line), an integer too large for a float (``time_limit=10**400``), a method name that is not a
string (``method=["lp"]``). Each is an :class:`~dmlopt.errors.InstanceError` naming the field,
the value and the rule, so the command line exits 2 with one line.
"""

from __future__ import annotations

import sys
from typing import Any

from dmlopt.errors import InstanceError

#: the arguments of each entry point that take no ``**options``: an option may not be named
#: after one (``--option seed=3`` on the command line would give it twice)
OWN_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "heuristic": ("instance", "name", "seed", "size_limit"),
    "bound": ("instance", "method", "time_limit", "size_limit"),
}

#: how the command line gives each of those arguments (named by the refusal)
CLI_FLAGS: dict[str, str] = {
    "instance": "the INSTANCE argument", "name": "the NAME argument", "seed": "--seed",
    "size_limit": "--size-limit", "method": "--method", "time_limit": "--time-limit",
}

#: the rule of each setting whose value may be a Python int too large for a float
_SETTING_RULES = {"time_limit": "must be a finite number of seconds > 0",
                  "mip_gap": "must be a relative gap in [0, 1)"}


def check_option_names(options: dict[str, Any], call: str,
                       flags: dict[str, str] | None = None) -> None:
    """Refuse an option named after an argument of the call itself (:data:`OWN_ARGUMENTS`).

    Parameters
    ----------
    options : the options about to be passed as ``**options`` to ``dmlopt.<call>``.
    call : ``"heuristic"`` or ``"bound"``.
    flags : how each argument is given where the options came from (the command line's
        :data:`CLI_FLAGS`); default: ``name=`` (the library).

    Returns
    -------
    None

    Raises
    ------
    InstanceError
        Naming the option, its value and the argument to use instead, e.g. ``option seed: 3 is
        an argument of dmlopt heuristic, not an option of its method (use --seed)``.

    References
    ----------
    Ours: issue 51, item 4 (option names that clash with a call's own arguments).
    """
    own = OWN_ARGUMENTS[call]
    for key, value in options.items():
        if key in own:
            use = (flags or {}).get(key, f"{key}=")
            raise InstanceError(f"option {key}", value, f"is an argument of dmlopt {call}, not "
                                f"an option of its method (use {use})")


def check_huge(**settings: Any) -> None:
    """Refuse an integer setting beyond the largest float with the setting's own rule, before
    anything converts it (where it would raise OverflowError).

    Parameters
    ----------
    **settings : ``time_limit`` and ``mip_gap`` values (None or any value: only integers above
        the largest float are refused here, the rest by the solver options' checks).

    Returns
    -------
    None

    Raises
    ------
    InstanceError
        ``time_limit: 1000...0 must be a finite number of seconds > 0``.

    References
    ----------
    Ours: issue 51, item 8.
    """
    for field, value in settings.items():
        if isinstance(value, int) and not isinstance(value, bool) and \
                abs(value) > sys.float_info.max:
            raise InstanceError(field, value, _SETTING_RULES[field])


def check_name(field: str, value: Any, what: str) -> None:
    """A method name is a string or None (``method=["lp"]`` is refused naming the field).

    Parameters
    ----------
    field : the argument's name (``method``, ``name``).
    value : its value.
    what : what it names, for the message (``bound method``, ``heuristic``).

    Returns
    -------
    None

    Raises
    ------
    InstanceError
        ``method: ['lp'] must be the name of a bound method (a string; ...)``.

    References
    ----------
    Ours: issue 51, item 8.
    """
    if value is not None and not isinstance(value, str):
        raise InstanceError(field, value, f"must be the name of a {what} (a string; see "
                            "`dmlopt list PROBLEM`)")
