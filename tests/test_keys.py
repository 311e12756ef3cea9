"""SECURITY.md's table of what is stored and bot/keys.py's list of key families agree."""

from __future__ import annotations

import re
from pathlib import Path

from bot import keys

_SECURITY = Path(__file__).resolve().parents[1] / "SECURITY.md"


def _stored_rows() -> dict[str, str]:
    """Each namespace in SECURITY.md's "What is kept" table -> its row's text."""
    rows: dict[str, str] = {}
    for line in _SECURITY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        for prefix in re.findall(r"`([a-z_]+:)`", cells[0]):
            rows[prefix] = rows.get(prefix, "") + " " + line
    return rows


def test_every_key_family_is_listed_in_security_md_and_nothing_else() -> None:
    """A family the bot stores is in SECURITY.md's table, and the table lists no other."""
    listed = set(_stored_rows())
    assert {f.prefix for f in keys.FAMILIES} == listed


def test_security_md_states_each_familys_retention() -> None:
    """Each family's row names the setting or span its TTL comes from."""
    rows = _stored_rows()
    for family in keys.FAMILIES:
        assert family.retention in rows[family.prefix], family.prefix


def test_family_prefixes_are_distinct_namespaces() -> None:
    """Each prefix is one namespace (the store bounds by the part before the first colon)."""
    prefixes = [f.prefix for f in keys.FAMILIES]
    assert len(prefixes) == len(set(prefixes))
    assert all(p.count(":") == 1 and p.endswith(":") for p in prefixes)


def test_key_joins_its_parts_after_the_prefix() -> None:
    """A key is the family's prefix and its parts, colon-separated."""
    assert "thread:C1:171.2" == keys.THREAD.key("C1", "171.2")
    assert "quota:day:2026-12-01" == keys.QUOTA.key("day", "2026-12-01")
