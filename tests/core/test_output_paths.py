"""Outputs fail before the work, never outside: every writer checks its destination first (a
parent that is a file, an unwritable folder, a name too long, a NUL byte: exit 2, one line,
nothing left behind), and a symbolic link at the destination is replaced, never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dmlopt.cli import main

INST = "tabgp/er12-p03-tau1-s0"


def _bad_destinations(tmp_path: Path) -> dict[str, str]:
    afile = tmp_path / "afile"
    afile.write_text("x")
    ro = tmp_path / "ro"
    ro.mkdir()
    return {
        "parent is a file": str(afile / "out.json"),
        "name too long": str(tmp_path / ("x" * 300 + ".json")),
        "nul byte": str(tmp_path / "a\x00b.json"),
        "unwritable folder": "/proc/dmlopt-out.json",
    }


WRITERS = [
    lambda out: ["solve", INST, "-f", "pairs", "-o", out],
    lambda out: ["heuristic", INST, "dense-refine", "-o", out],
    lambda out: ["bound", INST, "-m", "lp", "-o", out],
    lambda out: ["generate", "tabgp", "-o", out],
    lambda out: ["export", INST, out + ".lp" if "\x00" not in out else out],
    lambda out: ["report", "/nonexistent.sqlite", "-o", out],
    lambda out: ["reproduce", "tabgp", "--quick", "-o", out],
    lambda out: ["train", "nara", "--steps", "1", "-o", out + ".npz"],
]


@pytest.mark.parametrize("writer", range(len(WRITERS)))
def test_bad_destinations_are_refused_before_any_work(tmp_path, capsys, writer):
    before = sorted(p.name for p in tmp_path.iterdir())
    for why, dest in _bad_destinations(tmp_path).items():
        argv = WRITERS[writer](dest)
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 2, (why, argv, err)
        assert out == "" and len(err.strip().splitlines()) == 1, (why, out, err)
        if why != "unwritable folder" or writer != 5:  # report names the store first
            assert any(w in err for w in ("is a file", "too long", "NUL", "not writable",
                                          "cannot be written")), (why, err)
    after = sorted(p.name for p in tmp_path.iterdir())
    assert after == before + ["afile", "ro"] or after == sorted(before + ["afile", "ro"])


def test_a_symlink_is_replaced_never_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "precious.json"
    target.write_text("keep me")
    dest = tmp_path / "dest"
    dest.mkdir()
    link = dest / "sol.json"
    os.symlink(target, link)
    assert main(["heuristic", INST, "dense-refine", "-o", str(link)]) == 0
    assert target.read_text() == "keep me"
    assert not link.is_symlink() and link.read_text().startswith("{")
