"""Research studies: scripts that answer a question about a method, one folder per problem or
topic (benchmarks/studies/<topic>/, its NOTES.md says what each script is for).

Not installed: the wheel holds no ``benchmarks/studies`` code and no installed module imports it.
A study is not a paper table (those are ``dmlopt reproduce``). Each is run from the root of a
clone as ``python -m benchmarks.studies.<topic>.<name> -o DIR ...``, takes ``--help``, and writes
only under DIR (:func:`output_dir`; what it prints is also kept there by :func:`tee`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn


class ArgumentParser(argparse.ArgumentParser):
    """A study's argument parser: a usage error is one line on stderr naming the study, and
    exit code 2 (argparse prints the usage first)."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {self.prog}: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def output_dir(path: str) -> Path:
    """The study's output directory, created; an existing non-directory exits 2 with one line."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        print(f"error: -o: {out} exists and is not a directory", file=sys.stderr)
        sys.exit(2)
    out.mkdir(parents=True, exist_ok=True)
    return out


def refuse_bad(checks: Iterable[tuple[str, Any, bool, str]]) -> None:
    """Exit 2 with one line on stderr at the first failed check ``(flag, value, ok, rule)``:
    ``error: FLAG: VALUE must be RULE``."""
    for flag, value, ok, rule in checks:
        if not ok:
            print(f"error: {flag}: {value} must be {rule}", file=sys.stderr)
            sys.exit(2)


def parse_seeds(text: str, option: str = "--seeds") -> list[int]:
    """Seeds written as ranges and lists, ``0-9``, ``0,3,5`` or ``0-2,7``; anything else exits
    2 with one line naming ``option``.

    Parameters
    ----------
    text : str
        The option's value.
    option : str, default "--seeds"
        The option's name, for the error line.

    Returns
    -------
    list of int
        The seeds in the order written (each >= 0).
    """
    out: list[int] = []
    try:
        for part in text.split(","):
            lo, dash, hi = part.partition("-")
            a, b = int(lo), int(hi) if dash else int(lo)
            if a < 0 or b < a:
                raise ValueError(part)
            out += range(a, b + 1)
    except ValueError:
        out = []
    if not out:
        print(f"error: {option}: {text!r} is not a list of seeds >= 0 and ranges A-B (A <= B), "
              "as 0-9 or 0,3,5", file=sys.stderr)
        sys.exit(2)
    return out


class _Tee:
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text: str) -> int:
        for s in self.streams:
            s.write(text)
        return len(text)

    def flush(self) -> None:
        for s in self.streams:
            s.flush()


@contextlib.contextmanager
def tee(path: Path) -> Iterator[None]:
    """Print to stdout and to ``path`` (the study's record of what it printed)."""
    with open(path, "w") as fh, contextlib.redirect_stdout(_Tee(sys.stdout, fh)):
        yield
