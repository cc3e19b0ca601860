"""Every study in benchmarks/analysis/ is a module with ``--help`` and a required ``-o DIR``,
and writes only under that directory."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import dmlopt.benchmarks.analysis as analysis

MODULES = sorted(m.name for m in pkgutil.iter_modules(analysis.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_help_names_the_output_directory(name, tmp_path):
    proc = subprocess.run([sys.executable, "-m", f"dmlopt.benchmarks.analysis.{name}", "--help"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "-o" in proc.stdout and "DIR" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_harness_overhead_writes_only_under_its_directory(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "dmlopt.benchmarks.analysis.harness_overhead",
                           "-o", str(out)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "44 runs" in proc.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    afile = tmp_path / "file"
    afile.write_text("x")
    proc = subprocess.run([sys.executable, "-m", "dmlopt.benchmarks.analysis.harness_overhead",
                           "-o", str(afile)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "not a directory" in proc.stderr
    assert afile.read_text() == "x"


def test_rar_topologies_rebuild_the_shipped_files(tmp_path):
    """The CPN stand-ins of paper 003 are re-created byte for byte from their builder."""
    from importlib import resources

    proc = subprocess.run([sys.executable, "-m", "dmlopt.benchmarks.analysis.rar_topologies",
                           "-o", str(tmp_path / "topo")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    shipped = resources.files("dmlopt.data").joinpath("rar", "topology")
    for name in ("cpn6.json", "cpn38.json"):
        assert (tmp_path / "topo" / name).read_bytes() == shipped.joinpath(name).read_bytes()
