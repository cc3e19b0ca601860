"""The QAPLIB tool saved in a script without a main guard fails fast with one clear line (its
spawned workers re-run the script while they start) instead of respawning them for minutes;
with the guard it runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from importlib import resources

SCRIPT = """
from pathlib import Path
from dmlopt.benchmarks.qaplib_check import check, find
{guard}check(find(Path({folder!r}), None), {{}}, 1, 1, None)
"""


def _folder(tmp_path):
    data = resources.files("dmlopt.data") / "qaplib"
    folder = tmp_path / "q"
    folder.mkdir()
    for name in ("chr12a.dat", "chr12a.sln"):
        shutil.copy(str(data / name), folder / name)
    return folder


def test_without_a_main_guard_it_fails_fast(tmp_path):
    script = tmp_path / "check.py"
    script.write_text(SCRIPT.format(guard="", folder=str(_folder(tmp_path))))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert time.monotonic() - t0 < 120
    assert proc.returncode != 0
    assert "if __name__ == '__main__':" in proc.stderr


def test_with_a_main_guard_it_runs(tmp_path):
    script = tmp_path / "check.py"
    script.write_text(SCRIPT.format(guard="if __name__ == '__main__':\n    ",
                                    folder=str(_folder(tmp_path))))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "chr12a" in proc.stdout and "1 instances, 1 runs" in proc.stdout
