"""The hostile sweep's cases of issue 51: how one is run and judged (:func:`run_case`), and the
sandbox it runs in (:func:`snapshot`, :func:`changes`).

A :class:`Case` is one ``dmlopt`` command with what makes it hostile (environment, working
directory, a Ctrl-C after a delay) and its own rule (:attr:`Case.check`). It runs in a fresh
process (``python -c 'dmlopt.cli.main'``: the environment is read at import) in its own process
group, under an address-space limit and a watchdog. With :attr:`Case.watch` set, every file
under that tree (not following links; a link's target recorded by name) is snapshot before and
after, and a file created, modified or removed outside :attr:`Case.dest` is a fault.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: runs ``dmlopt`` in a fresh interpreter (the environment is read at import)
ENTRY = "import sys; from dmlopt.cli import main; sys.exit(main(sys.argv[1:]))"


@dataclass
class Outcome:
    """What a command did: its exit code (or ``"hang: ..."``/``"crash: ..."``), stdout, stderr,
    wall seconds, and the files it changed outside its destination."""

    code: int | str
    out: str
    err: str
    wall: float
    outside: list[str] = field(default_factory=list)


@dataclass
class Case:
    """One command of a round of the issue-51 kinds (module docstring)."""

    argv: list[str]
    check: Callable[[Outcome], str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    watch: Path | None = None
    dest: Path | None = None
    sigint_after: float | None = None
    timeout: float | None = None
    memory: float | None = None
    after: Callable[[], None] | None = None
    note: str = ""


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (links not followed): kind, size, mtime and a link's target.

    Parameters
    ----------
    root : Path
        The watched tree.

    Returns
    -------
    dict
        Relative path to ``(kind, size, mtime_ns, target)``.
    """
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if os.path.islink(p):
                out[os.path.relpath(p, root)] = ("link", 0, 0, os.readlink(p))
            elif os.path.isdir(p):
                out[os.path.relpath(p, root)] = ("dir", 0, 0, "")
            else:
                out[os.path.relpath(p, root)] = ("file", st.st_size, st.st_mtime_ns, "")
    return out


def changes(before: dict[str, tuple], after: dict[str, tuple], dest: str | None) -> list[str]:
    """The entries created, modified or removed between two snapshots, outside ``dest`` (a
    path relative to the watched root; the destination itself and what is under it are the
    command's to write).

    Parameters
    ----------
    before, after : dict
        Two :func:`snapshot` results of the same tree.
    dest : str or None
        The destination, relative to the watched root.

    Returns
    -------
    list of str
        ``"created X"``, ``"modified X"`` or ``"removed X"``, sorted.
    """
    def inside(rel: str) -> bool:
        return dest is not None and (rel == dest or rel.startswith(dest.rstrip("/") + "/"))

    out = []
    for rel in sorted(set(before) | set(after)):
        if inside(rel) or before.get(rel) == after.get(rel):
            continue
        what = ("created" if rel not in before else "removed" if rel not in after
                else "modified")
        if what == "modified" and before[rel][0] == after[rel][0] == "dir":
            continue
        out.append(f"{what} {rel}")
    return out


def _limit(memory: float) -> Callable[[], None]:
    def pre() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (int(memory), int(memory)))
        # a sweep started in the background inherits SIGINT ignored: Python would then never
        # see a Ctrl-C (the ``interrupt`` kind)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    return pre


def run_case(case: Case, watchdog: float, memory: float) -> Outcome:
    """Run ``case`` in a fresh process (module docstring) and return what it did.

    Parameters
    ----------
    case : Case
        The command, its environment and its sandbox.
    watchdog : float
        Seconds before the command is a hang (``case.timeout`` when set).
    memory : float
        Bytes the process may allocate (``case.memory`` when set).

    Returns
    -------
    Outcome
        Exit code, output, wall time and the changes outside the destination.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("DMLOPT_")}
    env.update(case.env)
    watch = case.watch
    before = snapshot(watch) if watch else {}
    limit = case.timeout or watchdog
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", ENTRY, *case.argv], cwd=case.cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_limit(case.memory or memory))
    try:
        if case.sigint_after is not None:
            try:
                proc.wait(case.sigint_after)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=max(1.0, limit - (time.perf_counter() - t0)))
        code: int | str = proc.returncode
        if isinstance(code, int) and code < 0:
            code = f"crash: ended by signal {signal.Signals(-code).name}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = f"hang: no result within {limit:g} s"
    wall = time.perf_counter() - t0
    outside: list[str] = []
    if watch:
        dest = os.path.relpath(case.dest, watch) if case.dest else None
        outside = changes(before, snapshot(watch), dest)
    if case.after:
        case.after()
    return Outcome(code, out, err, wall, outside)


def reset(path: Path) -> Path:
    """``path`` as an empty directory (write permission restored on what was made read-only).

    Parameters
    ----------
    path : Path
        The directory.

    Returns
    -------
    Path
        ``path``.
    """
    if path.exists() or path.is_symlink():
        for dirpath, dirnames, _ in os.walk(path):
            for d in dirnames:
                p = os.path.join(dirpath, d)
                if not os.path.islink(p):
                    os.chmod(p, 0o755)
        os.chmod(path, 0o755)
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def fault_of(code: Any, out: str, err: str) -> str:
    """Why a command's outcome breaks the boundary's rules, or "" (module docstring)."""
    if isinstance(code, str):
        return code
    if code in (0, 3):
        return ""
    if code != 2:
        return f"exit {code}: {err.strip().splitlines()[-1][:300] if err.strip() else ''}"
    lines = err.strip().splitlines()
    if len(lines) != 1 or not lines[0].startswith("dmlopt:"):
        return f"refusal of {len(lines)} lines: {err.strip()[:300]}"
    if out:
        return f"refusal with output on stdout: {out[:100]}"
    return ""
