"""docs/using.md lists the product names people may type (`in:PRODUCT`, `/gdocs channel
products …`) and quotes what the MCP backend says to a scoped question: both come from the
code, so the page cannot drift from bot/products.py or from the sentence the bot sends."""

from __future__ import annotations

import re
from pathlib import Path

from bot.errors import ErrorFacts, InvalidInput, Reason
from bot.products import ALIASES, PRODUCTS
from bot.render import error_sentence

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "using.md"


def _words(cell: str) -> set[str]:
    return {w.strip().strip("`") for w in cell.split(",") if w.strip()}


def _product_rows() -> dict[str, tuple[set[str], str, set[str]]]:
    """name → (aliases, label, sites) of each row of the page's products table."""
    table = PAGE.read_text(encoding="utf-8").partition("<!-- products:")[2]
    rows: dict[str, tuple[set[str], str, set[str]]] = {}
    for line in table.splitlines()[3:]:
        if not line.startswith("| `"):
            break
        name, also, label, sites = (cell.strip() for cell in line.split("|")[1:-1])
        rows[name.strip("`")] = (_words(also), label, _words(sites))
    return rows


def test_the_usage_guide_names_every_product_with_its_aliases_label_and_sites() -> None:
    """One row per product of bot/products.py, in its order, with the other words for it,
    its label and every host it stands for; no row for a name the bot does not know."""
    expected = {
        p.name: ({a for a, name in ALIASES.items() if name == p.name}, p.label, set(p.hosts))
        for p in PRODUCTS
    }
    rows = _product_rows()
    assert list(expected) == list(rows)
    assert expected == rows


def test_the_usage_guide_quotes_what_mcp_says_to_a_scoped_question() -> None:
    """The line a scoped question gets on the default backend, word for word."""
    error = InvalidInput(
        setting="DEVELOPER_KNOWLEDGE_API", facts=ErrorFacts(Reason.SCOPE_NEEDS_REST)
    )
    page = re.sub(r"\s+", " ", PAGE.read_text(encoding="utf-8"))
    assert error_sentence(error) in page
