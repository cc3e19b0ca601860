"""Every example in README.md and docs/*.md runs: each page's Python blocks in order (one
namespace per page, in a temporary directory) and every `dmlopt ...` line of its shell blocks
(exit code 0). Long runs belong in ``text`` blocks, which are not run."""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```(python|sh)\n(.*?)```", re.S)


def blocks(page: Path, kind: str) -> list[str]:
    return [body for k, body in BLOCK.findall(page.read_text()) if k == kind]


def _id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_python_examples_run(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}  # as a saved script runs
    code = blocks(page, "python")
    if page.name == "README.md":
        assert code, "README has no Python example"
    for i, body in enumerate(code):
        try:
            exec(compile(body, f"{_id(page)} python block {i}", "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - report which block failed
            pytest.fail(f"{_id(page)} python block {i} failed: {type(exc).__name__}: {exc}\n"
                        f"{body}")


def cli_lines(page: Path) -> list[str]:
    lines = []
    for body in blocks(page, "sh"):
        for line in body.splitlines():
            line = line.split(" #")[0].strip()
            if line.startswith("dmlopt "):
                lines.append(line)
    return lines


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_cli_examples_run(page, tmp_path, monkeypatch, capsys):
    """Each line through ``dmlopt.cli.main`` (what the ``dmlopt`` script and ``python -m
    dmlopt`` call) in this process, in the page's folder: one Python start-up for the page,
    not one per line (``python -m dmlopt`` itself: tests/core/test_cli.py)."""
    from dmlopt import cli

    lines = cli_lines(page)
    if page.name == "README.md":
        assert lines, "README has no dmlopt command example"
    monkeypatch.chdir(tmp_path)
    for line in lines:
        argv = shlex.split(line)[1:]
        t0 = time.monotonic()
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse: --help, --version, a usage error
            code = exc.code if isinstance(exc.code, int) else 2
        err = capsys.readouterr().err
        assert code == 0, f"`{line}` in {_id(page)} exited {code}: {err}"
        # examples must be quick; long runs go in `text` blocks
        assert time.monotonic() - t0 < 120, f"`{line}` in {_id(page)} took over 120 s"


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_links_stay_in_the_repository(page):
    """No link points outside the repository (../shared is not there for a user)."""
    for target in re.findall(r"\]\(([^)#\s]+)", page.read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        path = (page.parent / target).resolve()
        assert path.is_relative_to(ROOT), f"{_id(page)} links {target}, outside the repository"
        assert path.exists(), f"{_id(page)} links {target}, which does not exist"


def test_catalogue_names_every_registered_entry():
    """Every formulation, heuristic and generator `dmlopt list` shows is in the README catalogue,
    in its problem's row, and the README stays short (details live in docs/)."""
    from dmlopt import registry

    text = README_TEXT()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z_]+)` .*$", text, re.M)}
    for name in registry.names():
        assert name in rows, f"problem {name} is not in the README catalogue"
        prob = registry.get(name)
        for entry in [*prob.formulations, *prob.heuristics, *prob.generators]:
            assert f"`{entry}`" in rows[name], f"{name}: `{entry}` missing from the catalogue"
    assert len(text.splitlines()) <= 250


def README_TEXT() -> str:  # noqa: N802 - reads like the constant it replaces
    return (ROOT / "README.md").read_text()
