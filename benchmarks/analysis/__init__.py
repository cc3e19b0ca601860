"""Diagnostic studies (benchmarks/analysis/<p>_<what>.py), one module each.

A study is not a paper table (those are ``dmlopt reproduce``): a bound study, a drop analysis,
a data builder, the harness's overhead. Each is run as ``python -m
dmlopt.benchmarks.analysis.<name> -o DIR ...``, takes ``--help``, and writes only under DIR
(:func:`output_dir`; what it prints is also kept there by :func:`tee`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path


def output_dir(path: str) -> Path:
    """The study's output directory, created; an existing non-directory exits 2 with one line."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        print(f"error: -o: {out} exists and is not a directory", file=sys.stderr)
        sys.exit(2)
    out.mkdir(parents=True, exist_ok=True)
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
