"""Ctrl-C while numba compiles ends the process at once, exit 130 and one line (issue 51: a
Ctrl-C during the first compile of TAP's ``tabu`` exited -11, and in another run with an
internal error "no compiled object yet": the ``KeyboardInterrupt`` unwound through llvmlite's
callbacks). Outside a compile, Ctrl-C still stops a run gracefully.

numba's compiler is stood in for by code whose file lies in a ``numba`` folder (what
:func:`dmlopt.cli.in_compiler` recognises), so the test is exact and fast."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from dmlopt import cli

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}

SCRIPT = """
import os, signal, sys, time
from dmlopt import cli
cli._second_interrupt_stops()
src = '''
def compiling(done, presses):
    for _ in range(presses):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
    t = time.time()
    while time.time() - t < 0.5:
        pass
    done.append(True)
'''
ns = {"os": os, "signal": signal, "time": time}
exec(compile(src, os.path.join(os.sep, "site", "numba", "core", "compiler.py"), "exec"), ns)
done = []
try:
    ns["compiling"](done, int(sys.argv[1]))
    time.sleep(3)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted after the compile" if done else "interrupted inside the compile")
"""


def _run(presses: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, str(presses)], capture_output=True,
                          text=True, timeout=30, env=ENV,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_a_ctrl_c_during_a_compile_stops_at_once():
    proc = _run(1)
    assert proc.returncode == 130 and proc.stdout == ""
    assert proc.stderr.strip() == ("dmlopt: interrupted while numba compiles: stopped at once, "
                                   "nothing written")


def test_a_ctrl_c_outside_a_compile_is_a_keyboard_interrupt():
    proc = subprocess.run([sys.executable, "-c", SCRIPT.replace('"numba"', '"elsewhere"'), "1"],
                          capture_output=True, text=True, timeout=30, env=ENV,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.strip() == "interrupted inside the compile"


def test_only_the_compiler_frames_count_as_compiling():
    """numba's compiler counts; its run-time helpers (a kernel raising unpickles its exception
    in ``numba/core/serialize.py``) do not: a Ctrl-C there keeps the best solution so far."""
    import numba.core.compiler as numba_compiler
    import numba.core.serialize as numba_serialize

    def frame(function, back=None):
        return type("F", (), {"f_code": function.__code__, "f_back": back})()

    assert not cli.in_compiler(sys._getframe()) and not cli.in_compiler(None)
    assert cli.in_compiler(frame(numba_compiler.compile_extra))
    assert cli.in_compiler(frame(test_only_the_compiler_frames_count_as_compiling,
                                 frame(numba_compiler.compile_extra)))
    assert not cli.in_compiler(frame(numba_serialize._numba_unpickle))
