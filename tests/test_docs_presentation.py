"""docs/presentation.md names the functions that implement each part of the presentation rule
and the tests that guard them: each name must exist, so the page cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import bot.render

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "presentation.md"


def _table_cells() -> list[tuple[str, str]]:
    """(implemented by, guarded by) of each row of the page's "Where each part lives" table."""
    table = PAGE.read_text(encoding="utf-8").partition("## Where each part lives")[2]
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ")]
    return [(cells[1], cells[2]) for cells in rows[1:] if len(cells) == 3]


def _defined_in_bot() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "bot").rglob("*.py"):
        names.update(re.findall(r"^\s*(?:async )?(?:def|class) (\w+)", path.read_text(), re.M))
    return names


def test_every_function_the_presentation_page_names_exists() -> None:
    """Each `name` in the table is a public name of bot.render or defined in bot/
    (`Class.method`: both parts); each test file it names is in tests/."""
    cells = _table_cells()
    assert len(cells) >= 8, "the table lost its rows"
    defined = _defined_in_bot()
    missing = []
    for implemented, guarded in cells:
        for name in re.findall(r"`([\w.]+)`", implemented):
            parts = name.split(".")
            if not (hasattr(bot.render, name) or all(p in defined for p in parts)):
                missing.append(name)
        for test in re.findall(r"`(tests/[\w/]+\.py)`", guarded):
            if not (ROOT / test).is_file():
                missing.append(test)
    assert [] == missing
