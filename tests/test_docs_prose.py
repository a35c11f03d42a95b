"""The docs speak to a reader of this repository: no page cites a document or a tracker the
reader cannot open (a design file kept elsewhere, its section numbers, an issue number). A
page says the rule, or links the source text under docs/spec/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent

# what a reader of this repository cannot open, each with the way out the failure names
UNREADABLE = [
    (re.compile(r"\bDESIGN(\.md|\b)"), "a design document that is not in this repository"),
    (re.compile(r"§\s*\d"), "a section number of a document that is not in this repository"),
    (re.compile(r"\bspec\s+0\d\d\b", re.I), "a numbered spec that is not in this repository"),
    (re.compile(r"\b(issue|pull request)\s*#?\d+", re.I), "an issue number"),
]


def pages() -> list[Path]:
    """README and every docs page but the source specifications (docs/spec/, kept as written)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def citations(text: str) -> list[tuple[int, str, str]]:
    """(line, the text matched, why it cannot be opened) for each citation in `text`."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for pattern, why in UNREADABLE:
            found += [(n, m.group(0), why) for m in pattern.finditer(line)]
    return found


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_no_page_cites_what_its_reader_cannot_open(page):
    bad = citations(page.read_text())
    assert not bad, "\n".join(
        f"{page.relative_to(ROOT)}:{n}: {hit!r} is {why}: say the rule, or link docs/spec/..."
        for n, hit, why in bad
    )


@pytest.mark.parametrize(
    "line",
    [
        "The contract is DESIGN.md.",
        "as DESIGN says",
        "see spec 002 §8",
        "rule §7 applies",
        "fixed in issue 32",
        "since Issue #31",
        "(pull request #142)",
    ],
)
def test_each_kind_of_citation_is_caught(line):
    assert citations(line), line


@pytest.mark.parametrize(
    "line",
    [
        "`engine/credentials.issue_secret` issues a secret",
        "UAX #29 segmentation",
        'acomm task create --capability review "check PR 7"',
        "`review#42`, a routing incident's key",
        "see [spec/distributed-pipes.txt](spec/distributed-pipes.txt), 8) Notification",
        "a design it follows",
    ],
)
def test_what_is_not_a_citation_passes(line):
    assert not citations(line), line


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_no_page_keeps_a_merge_conflict(page):
    """A merge's conflict markers left in a page read as garbage to its reader."""
    marks = [
        n
        for n, line in enumerate(page.read_text().splitlines(), 1)
        if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "======="
    ]
    assert marks == [], f"{page.name}: conflict markers at lines {marks}"
