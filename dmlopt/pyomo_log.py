"""Pyomo's log kept off stdout: while dmlopt writes models for a command whose stdout is data
(``dmlopt references --export``), Pyomo's messages (its own handler prints on stdout, e.g.
"ERROR: Constructing component ... KeyboardInterrupt") go to stderr."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def pyomo_to_stderr() -> Iterator[None]:
    """Pyomo's log (its own handler prints on stdout) sent to stderr, one ``dmlopt: pyomo:``
    line per record, for the duration of the block.

    Returns
    -------
    Iterator[None]
        A context manager; the "pyomo" logger's handlers are restored when it ends.

    References
    ----------
    Python's :mod:`logging`; Pyomo's "pyomo" logger.
    """
    # Pyomo adds its stdout handler when pyomo.common.log is first imported: import it before
    # the swap, or a first import inside the block (a model built there) adds it back
    import pyomo.common.log  # noqa: F401

    log = logging.getLogger("pyomo")
    handlers, propagate = log.handlers[:], log.propagate
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("dmlopt: pyomo: %(levelname)s: %(message)s"))
    log.handlers = [handler]
    log.propagate = False
    try:
        yield
    finally:
        log.handlers = handlers
        log.propagate = propagate
