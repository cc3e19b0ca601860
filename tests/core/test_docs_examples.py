"""Every ``dmlopt`` example of docs/interop.md and docs/benchmarks.md works (issue 54, item 7).

tests/core/test_readme.py runs the ``sh`` blocks of every page; the long examples of these two
pages are in ``text`` blocks, which it leaves alone. Here every ``dmlopt`` line of every block
of the two pages, in order, is either run on a tiny instance (the commands that act on one
instance file: ``export``, ``validate``, ``solve``, ...; ``inst.json`` is a small TABGP
instance, and a ``highs --model_file M --solution_file S`` line between them is done by
highspy when the ``highs`` program is not installed) or, for the long ones (``bench``,
``report``, ``reproduce``, ``references``), parsed by the command's own parser: every flag
and argument must exist. The commands quoted inline (in single backticks) in the prose of the
two pages must exist with every flag they name.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dmlopt
from dmlopt import cli, io, registry

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "interop.md", ROOT / "docs" / "benchmarks.md"]
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
INLINE = re.compile(r"(?<!`)`(dmlopt [^`]+)`(?!`)")

#: commands quick enough on a tiny instance to run for real
RUN = {"export", "validate", "solve", "heuristic", "bound", "generate", "list", "schema"}


def block_lines(page: Path) -> list[str]:
    """The lines of every fenced block of ``page`` (comments after `` #`` dropped), in order."""
    out = []
    for body in FENCE.findall(page.read_text()):
        for line in body.splitlines():
            line = line.split(" #")[0].strip()
            if line:
                out.append(line)
    return out


def inline_commands(page: Path) -> list[str]:
    """The ``dmlopt ...`` commands quoted inline in the prose (outside fenced blocks)."""
    prose = FENCE.sub("", page.read_text())
    return [m.group(1).strip() for m in INLINE.finditer(prose.replace("\n", " "))]


def parse(line: str) -> None:
    """Parse a ``dmlopt`` command line with dmlopt's parsers, without running it: a usage
    error (an unknown flag, a missing argument) raises :class:`cli.UsageError`."""
    argv = shlex.split(line)[1:]
    if len(argv) == 1 and not argv[0].startswith("-"):  # a command named in the prose
        assert argv[0] in _commands(), f"`{line}`: no such command"
        return
    args = cli.parser().parse_args(argv)
    if argv[0] in registry.commands():  # a contributed command parses its own arguments
        entry = registry.command(argv[0])
        p = cli._Parser(prog=f"dmlopt {argv[0]}", description=entry.help)
        entry.configure(p)
        _, extra = p.parse_known_args(args.rest)
        if any(e.startswith("-") for e in extra):
            raise cli.UsageError(f"`{line}`: unrecognized arguments: {' '.join(extra)}")


def _commands() -> set[str]:
    """The commands ``dmlopt --help`` lists."""
    import argparse

    sub = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def _highs(line: str, cwd: Path) -> None:
    """``highs --model_file M --solution_file S``: the program when installed, else highspy."""
    argv = shlex.split(line)
    if shutil.which("highs"):
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True, timeout=120)
        return
    opts = dict(zip(argv[1::2], argv[2::2], strict=False))
    # in a child process: HiGHS's thread scheduler is process-wide, and a run here with its
    # default threads would make a later test's threads=1 run fail
    script = ("import highspy, sys\nh = highspy.Highs()\nh.setOptionValue('output_flag', False)"
              "\nh.readModel(sys.argv[1])\nh.run()\n"
              "h.writeSolution(sys.argv[2], 0)\n")  # the raw style, as the program writes
    subprocess.run([sys.executable, "-c", script, opts["--model_file"], opts["--solution_file"]],
                   cwd=cwd, check=True, capture_output=True, timeout=120)


def _id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_dmlopt_example_runs_or_parses(page, tmp_path):
    io.save(dmlopt.generate("tabgp", {"generator": "er", "n": 8, "p": 0.4, "tau": 2}, seed=0),
            tmp_path / "inst.json")
    ran = parsed = 0
    for line in block_lines(page):
        if line.startswith("highs "):
            _highs(line, tmp_path)
            continue
        if not line.startswith("dmlopt "):
            continue
        command = shlex.split(line)[1]
        if command in RUN:
            proc = subprocess.run([sys.executable, "-m", "dmlopt", *shlex.split(line)[1:]],
                                  cwd=tmp_path, capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, f"`{line}` in {_id(page)} exited " \
                                         f"{proc.returncode}: {proc.stderr}"
            ran += 1
        else:
            parse(line)
            parsed += 1
    assert ran + parsed >= 4, f"{_id(page)}: fewer examples than expected ({ran + parsed})"
    if page.name == "interop.md":
        assert ran >= 2 and (tmp_path / "solution.json").is_file()  # export, validate -o


def command_parser(name: str):
    """The parser of command ``name`` (a contributed command's own, configured)."""
    import argparse

    if name in registry.commands():
        entry = registry.command(name)
        p = cli._Parser(prog=f"dmlopt {name}", description=entry.help)
        entry.configure(p)
        return p
    sub = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def check_flags(line: str) -> None:
    """The command quoted exists and has every flag the quote names (the prose uses
    placeholders such as ``STORE`` and ``N``, so the values are not parsed)."""
    argv = shlex.split(line)[1:]
    assert argv[0] in _commands(), f"`{line}`: no such command"
    flags = {s for a in command_parser(argv[0])._actions for s in a.option_strings}
    for token in argv[1:]:
        if token.startswith("-"):
            assert token.split("=")[0] in flags, f"`{line}`: {argv[0]} has no {token}"


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_inline_commands_exist_with_their_flags(page):
    commands = inline_commands(page)
    assert commands, f"{_id(page)} quotes no dmlopt command"
    for line in commands:
        check_flags(line)


def test_the_parse_check_catches_an_unknown_flag():
    with pytest.raises(cli.UsageError, match="--no-such-flag"):
        parse("dmlopt bench quick --no-such-flag")
    with pytest.raises(cli.UsageError):
        parse("dmlopt references --export")
    with pytest.raises(AssertionError, match="has no --nope"):
        check_flags("dmlopt report STORE --nope")


def test_export_and_validate_default_to_solves_formulation(tmp_path):
    """docs/interop.md: without ``-f``, export and validate use the formulation ``dmlopt
    solve`` uses (TABGP's ``pairs``), not the paper's."""
    inst = dmlopt.generate("tabgp", {"generator": "er", "n": 8, "p": 0.4, "tau": 2}, seed=0)
    prob = registry.of(inst)
    assert dmlopt.api.default_formulation(prob) == prob.model.DEFAULT_FORMULATION != "paper"
    counts = {}
    for name in (None, "pairs", "paper"):
        path = tmp_path / f"{name}.lp"
        counts[name] = dmlopt.api.write_model(dmlopt.build(inst, name), path)
    assert counts[None] == counts["pairs"] != counts["paper"]
    text = (ROOT / "docs" / "interop.md").read_text()
    assert "the formulation `dmlopt solve` uses" in text
