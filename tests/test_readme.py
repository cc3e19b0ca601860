"""Every example in README.md runs: the Python blocks in order (one namespace, in a temporary
directory) and every `dmlopt ...` line of the shell blocks (exit code 0)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"```(python|sh)\n(.*?)```", re.S)


def blocks(kind: str) -> list[str]:
    return [body for k, body in BLOCK.findall(README.read_text()) if k == kind]


def test_python_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    code = blocks("python")
    assert code, "README has no Python example"
    for i, body in enumerate(code):
        try:
            exec(compile(body, f"README.md python block {i}", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - report which block failed
            pytest.fail(f"README python block {i} failed: {type(exc).__name__}: {exc}\n{body}")


def cli_lines() -> list[str]:
    lines = []
    for body in blocks("sh"):
        for line in body.splitlines():
            line = line.split(" #")[0].strip()
            if line.startswith("dmlopt "):
                lines.append(line)
    return lines


def test_cli_examples_run(tmp_path):
    lines = cli_lines()
    assert lines, "README has no dmlopt command example"
    exe = [sys.executable, "-m", "dmlopt"]
    for line in lines:
        argv = shlex.split(line)[1:]
        proc = subprocess.run(exe + argv, cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)  # examples must be quick; long runs go in `text` blocks
        assert proc.returncode == 0, f"`{line}` exited {proc.returncode}: {proc.stderr}"
