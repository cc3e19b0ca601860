"""A solver run in a forked child process (:func:`forked`).

SCIP 10.0 has ended its process with a segmentation fault on small models (in its symmetry
handling, not on every run of the same model), which in-process would end the user's program.
The child sends the result back pickled; a crash becomes :class:`Crashed` naming the signal.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import Any

from dmlopt.errors import SolverError


class Crashed(SolverError):
    """A solver ended the (child) process running it, e.g. with a segmentation fault."""


def forked(fn: Callable[[], Any], what: str = "SCIP", stop: int = signal.SIGINT) -> Any:
    """``fn()`` run in a forked child process; its result (or exception) comes back pickled.

    Parameters
    ----------
    fn : callable
        Called without arguments in the child; its return value must pickle.
    what : str, optional
        The solver's name for the error message (default ``"SCIP"``).
    stop : int, optional
        The signal Ctrl-C in the parent sends the child (default SIGINT: the solver stops
        with its best solution; SIGKILL for a solver that ignores SIGINT, e.g. Xpress).

    Returns
    -------
    object
        What ``fn`` returned; an exception it raised is raised here.

    Raises
    ------
    Crashed
        When the child ended without a result (a signal such as SIGSEGV, or an exit).

    References
    ----------
    Ours: isolates a solver fault (SCIP 10.0's symmetry handling segfaulted on small TAP and
    TABGP models) from the caller's process. Ctrl-C in the parent is passed to the child,
    whose solver then stops with its best solution.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(rfd)
        # text written to a stream that is no file (a capture, a notebook's) goes back to the
        # parent; a real file descriptor is shared and shows the log as it comes
        held = {name: io.StringIO() for name in ("stdout", "stderr")
                if not _has_fd(getattr(sys, name))}
        for name, buf in held.items():
            setattr(sys, name, buf)
        try:
            out: tuple[str, Any] = ("ok", fn())
        except BaseException as exc:  # noqa: BLE001 (re-raised in the parent)
            out = ("raise", exc)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            text = {name: buf.getvalue() for name, buf in held.items()}
            with os.fdopen(wfd, "wb") as fh:
                try:
                    pickle.dump((*out, text), fh)
                except Exception as exc:  # noqa: BLE001 (an unpicklable exception)
                    pickle.dump(("raise", SolverError(f"{what}: {exc}"), text), fh)
        finally:
            os._exit(0)
    os.close(wfd)
    chunks: list[bytes] = []
    interrupted = False
    with os.fdopen(rfd, "rb") as fh:
        while True:
            try:
                chunk = fh.read(1 << 16)
            except KeyboardInterrupt:
                interrupted = True  # the child stops with its best solution: wait for it
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, stop)
                continue
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        how = (signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status)
               else f"exit status {os.WEXITSTATUS(status)}")
        if interrupted:
            raise KeyboardInterrupt
        raise Crashed(f"{what} ended its process ({how}); no result")
    kind, value, text = pickle.loads(b"".join(chunks))
    for name, written in text.items():
        getattr(sys, name).write(written)
    if kind == "raise":
        raise value
    return value


def _has_fd(stream: Any) -> bool:
    """Whether ``stream`` writes to a file descriptor (shared with a forked child)."""
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
    return True
