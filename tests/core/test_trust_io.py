"""Issue 51 at the io layer: the writers (atomic, a link replaced not followed, names from data
one safe component), DMLOPT_MAX_FILE_BYTES checked lazily and by name, OS errors as typed
errors naming the path, and an interrupted ``references --export`` that can be re-run."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dmlopt import cli, io, references
from dmlopt.errors import ConfigError, InstanceError
from dmlopt.pyomo_log import pyomo_to_stderr

LONG = "n" * 300


@pytest.mark.parametrize("name", ["x/../../../NAME", "../up", "..", ".", "", "a\\b", "a\x00b",
                                  ".hidden", "é/ü", "x" * 400, "a b|c"])
def test_safe_name_is_one_component(name, tmp_path):
    out = io.safe_name(name)
    assert out and out not in (".", "..") and "/" not in out and "\x00" not in out
    assert not out.startswith(".") and len(out) <= 96
    assert (tmp_path / out).parent == tmp_path
    io.atomic_write_text(io.inside(tmp_path, name), "x")
    assert [p.parent for p in tmp_path.iterdir()] == [tmp_path]


def test_safe_name_keeps_clean_names_and_separates_changed_ones():
    assert io.safe_name("tabgp") == "tabgp"
    assert io.safe_name("er12-p03-tau1-s0.json") == "er12-p03-tau1-s0.json"
    assert io.safe_name("a/b") != io.safe_name("a_b")
    assert io.safe_name("a/b.png").endswith(".png")


def test_inside_refuses_a_link_out_of_the_destination(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out" / "tabgp").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InstanceError, match="leads out of"):
        io.inside(tmp_path / "out", "tabgp", "f.png")


@pytest.mark.parametrize("write", [
    lambda p: io.atomic_write_text(p, "new"),
    lambda p: io.write_bytes(p, b"new"),
    lambda p: io.write_json(p, {"a": 1}),
    lambda p: io.save_npz(p, a=__import__("numpy").zeros(2)),
    lambda p: io.write_csv(p, __import__("pandas").DataFrame({"a": [1]}), index=False),
])
def test_every_writer_replaces_a_link_and_never_writes_its_target(write, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "f").symlink_to(victim)
    write(out / "f")
    assert victim.read_text() == "keep me"
    assert (out / "f").is_file() and not (out / "f").is_symlink()
    assert sorted(p.name for p in out.iterdir()) == ["f"]  # no temporary file left


def test_copy_file_is_atomic_and_bounded(tmp_path):
    src = tmp_path / "src.png"
    src.write_bytes(b"\x89PNG" + bytes(range(256)) * 9000)
    io.copy_file(src, tmp_path / "d" / "dst.png")
    assert (tmp_path / "d" / "dst.png").read_bytes() == src.read_bytes()
    with pytest.raises(InstanceError, match="cannot be read"):
        io.copy_file(tmp_path / "missing", tmp_path / "x")


def test_an_os_error_while_writing_is_a_typed_error_naming_the_path(tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(io.os, "replace", refuse)
    with pytest.raises(InstanceError, match=r"out\.txt.*cannot be written \(Permission denied\)"):
        io.atomic_write_text(tmp_path / "out.txt", "x")
    assert list(tmp_path.iterdir()) == []  # the temporary file is removed


@pytest.mark.parametrize("text", ["abc", "1e3", "-5", "0", "12abc", "1" * 30])
def test_max_file_bytes_is_checked_naming_the_variable(text, monkeypatch, tmp_path):
    monkeypatch.setenv("DMLOPT_MAX_FILE_BYTES", text)
    with pytest.raises(ConfigError, match=r"^DMLOPT_MAX_FILE_BYTES: .* must be"):
        io.max_file_bytes()
    f = tmp_path / "i.json"
    f.write_text("{}")
    with pytest.raises(ConfigError):
        io.read_json(f)


def test_max_file_bytes_accepts_digits(monkeypatch, tmp_path):
    monkeypatch.setenv("DMLOPT_MAX_FILE_BYTES", "10")
    assert io.max_file_bytes() == 10
    f = tmp_path / "i.json"
    f.write_text('{"problem": "tabgp", "x": 12345}')
    with pytest.raises(InstanceError, match="above the limit 10"):
        io.read_json(f)
    monkeypatch.delenv("DMLOPT_MAX_FILE_BYTES")
    assert io.max_file_bytes() == io.DEFAULT_MAX_FILE_BYTES


@pytest.mark.parametrize("argv", [["--version"], ["validate", "tabgp/er12-p03-tau1-s0"]])
def test_a_bad_max_file_bytes_never_gives_a_traceback(argv):
    env = {**os.environ, "DMLOPT_MAX_FILE_BYTES": "abc"}
    p = subprocess.run([sys.executable, "-m", "dmlopt", *argv], env=env, capture_output=True,
                       text=True, timeout=120)
    if argv == ["--version"]:
        assert p.returncode == 0 and "dmlopt" in p.stdout
    else:
        assert p.returncode == 2, p.stderr
        assert p.stderr.count("\n") == 1 and "DMLOPT_MAX_FILE_BYTES" in p.stderr
    assert "Traceback" not in p.stderr


def test_validate_of_a_name_too_long_is_exit_2(capsys):
    assert cli.main(["validate", LONG]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "File name too long" in err


@pytest.mark.parametrize("case", ["dangling", "long", "readonly"])
def test_export_to_an_unusable_destination_is_exit_2(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    target = {"dangling": "dang", "long": LONG, "readonly": "ro/out"}[case]
    if case == "dangling":
        Path("dang").symlink_to(tmp_path / "nowhere" / "deeper")
    if case == "readonly":  # root ignores mode bits: the file system's refusal, simulated
        Path("ro").mkdir()

        def refuse(*a, **k):
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(io.tempfile, "mkstemp", refuse)
    assert cli.main(["references", "tabgp", "--export", target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--export" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == (["dang"] if case == "dangling"
                                                          else ["ro"] if case == "readonly"
                                                          else [])


def test_references_size_limit_takes_two_values(tmp_path, capsys):
    assert cli.main(["references", "tabgp", "--export", str(tmp_path / "o"),
                     "--size-limit", "1,2,3,4"]) == 2
    assert "must be V,C" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


SAMPLE = ["fig42-p01-tau1-s0", "fig42-p05-tau3-s3", "fig11-dcell-ps-v8-s0"]


def test_an_interrupted_export_is_resumed(tmp_path, monkeypatch):
    """Ctrl-C after the first model: the folder holds our marker; a re-run (refused before,
    the folder not being empty) completes it, keeping the model already written."""
    out = tmp_path / "set"
    real = references._export_one
    calls = []

    def interrupt_second(*a, **k):
        calls.append(a[1])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(references, "_export_one", interrupt_second)
    with pytest.raises(KeyboardInterrupt):
        references.export_set(out, ids=SAMPLE)
    assert (out / references.EXPORT_MARKER).is_file()
    assert not (out / "references.solu").exists()
    first = next(out.glob("*/*.mps.gz"))
    stamp = first.stat().st_mtime_ns
    monkeypatch.setattr(references, "_export_one", real)
    with pytest.raises(InstanceError, match="other arguments"):
        references.export_set(out, ids=SAMPLE[:1])
    done, skipped = references.export_set(out, ids=SAMPLE)
    assert len(done) + len(skipped) == len(SAMPLE)
    assert first.stat().st_mtime_ns == stamp  # resumed, not redone
    assert not (out / references.EXPORT_MARKER).exists()
    solu = (out / "references.solu").read_text().split("\n")
    assert len([ln for ln in solu if ln]) == len(done)
    assert (out / "README.md").is_file()
    assert not list(out.rglob("_tmp_*"))
    again, _ = references.export_set(out, ids=SAMPLE)  # finished: the same call completes
    assert [e.name for e in again] == [e.name for e in done]
    assert first.stat().st_mtime_ns == stamp  # from the finished state, nothing redone


def test_a_folder_of_other_files_is_still_refused(tmp_path):
    (tmp_path / "mine.txt").write_text("x")
    with pytest.raises(InstanceError, match="must not exist, be an empty directory"):
        references.export_set(tmp_path, ids=SAMPLE)
    (tmp_path / "mine.txt").unlink()
    (tmp_path / references.EXPORT_MARKER).write_text("not json")
    with pytest.raises(InstanceError, match="unreadable"):
        references.export_set(tmp_path, ids=SAMPLE)


def test_pyomo_logs_reach_stderr_not_stdout(capfd):
    import logging

    with pyomo_to_stderr():
        logging.getLogger("pyomo.core").error("Constructing component 'x' failed")
    out, err = capfd.readouterr()
    assert out == "" and "Constructing component" in err
    assert json.dumps(err)  # a line, not a traceback


def test_pyomo_first_imported_inside_the_block_stays_off_stdout():
    """Pyomo adds its stdout handler when it is first imported: a first import inside the block
    (a command's first model, built while exporting) must not bring it back (a Ctrl-C there
    printed "ERROR: Constructing component ..." on stdout)."""
    import subprocess
    import sys

    code = ("import logging, sys\n"
            "from dmlopt.pyomo_log import pyomo_to_stderr\n"
            "assert 'pyomo' not in sys.modules\n"
            "with pyomo_to_stderr():\n"
            "    import pyomo.environ\n"
            "    logging.getLogger('pyomo.core').error(\"Constructing component 'x' failed\")\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and "Constructing component 'x' failed" in run.stderr


def test_a_finished_export_re_run_with_the_same_arguments_completes(tmp_path, capsys):
    """A Ctrl-C that came as the export finished leaves a finished export: the same command
    completes at once (exit 0, the same files); other arguments are refused by name."""
    out = tmp_path / "set"
    assert cli.main(["references", "inc_oxc", "--export", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert not (out / references.EXPORT_MARKER).exists()
    assert cli.main(["references", "inc_oxc", "--export", str(out)]) == 0
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    capsys.readouterr()
    assert cli.main(["references", "tap", "--export", str(out)]) == 2
    assert "holds an export with other arguments" in capsys.readouterr().err
