"""Reference pages say what a thing is, when to use it, what it reaches and where it comes from;
the story of how it was found (dates, machine loads, what was tried and not kept) belongs in
the studies' NOTES.md. Generated blocks (``<!-- reproduce: ... -->`` and ``<!-- frontier -->``
up to their closing comment) are exempt: they state the conditions of their own run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: docs/ pages that are not references: the contributors' guide and the architecture notes
NOT_REFERENCE = {"development.md", "architecture.md"}
PAGES = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in NOT_REFERENCE)
STORY = re.compile(r"\b20\d\d-\d\d-\d\d\b|\bload average\b|\bat load\b|\bloads? \d|"
                   r"\bloaded machine\b|\bnot kept\b|\bwe tried\b|\bwas tried\b", re.I)
OPEN = re.compile(r"<!-- (reproduce: [\w./-]+|frontier) -->")
CLOSE = re.compile(r"<!-- /(reproduce|frontier) -->")


def story_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of ``text`` outside generated blocks that tell a story."""
    out, inside = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if OPEN.search(line):
            inside = True
        elif CLOSE.search(line):
            inside = False
        elif not inside and STORY.search(line):
            out.append((i, line.strip()))
    return out


def test_the_rule_finds_a_story_and_spares_generated_blocks():
    text = ("Measured on 2026-11-25 at load 4.\n<!-- reproduce: rar/bounds -->\n"
            "run on 2026-11-25, load 3-5\n<!-- /reproduce -->\nThe bound was not kept.\n"
            "<!-- frontier -->\n*Written on 2026-11-26.*\n<!-- /frontier -->\n"
            "A plain line about workloads and 2026 requests.\n")
    assert [n for n, _ in story_lines(text)] == [1, 5]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_reference_page_keeps_its_story_in_the_notes(page):
    found = story_lines(page.read_text(encoding="utf-8"))
    assert not found, (f"{page.name}: move dates, loads and what was tried to the study's "
                       f"NOTES.md: {found[:5]}")
