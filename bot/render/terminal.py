"""What the `gdocs-bot` command line prints: answers and documents as Markdown, `check` as
an aligned table. Pure; the CLI makes the result terminal-safe before printing it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.models import Answer, Document, SearchHit
from bot.render.notices import fallback_note


def answer_markdown(answer: Answer, *, now: datetime | None = None) -> str:
    """An answer as Markdown: note (times in Pacific, as of `now`), text and numbered
    sources, or the hits."""
    parts = []
    if answer.fallback:
        parts.append(f"> Note: {fallback_note(answer.fallback, now=now)}")
    if answer.kind == "answer":
        parts.append(answer.text.strip())
        if answer.references:
            sources = [f"{i}. [{r.title}]({r.uri})" for i, r in enumerate(answer.references, 1)]
            parts.append("Sources:\n" + "\n".join(sources))
    elif answer.hits:
        parts.append("\n\n".join(_hit(i, hit) for i, hit in enumerate(answer.hits, 1)))
    else:
        parts.append(f"No results for “{answer.query}”.")
    return "\n\n".join(parts)


def _hit(number: int, hit: SearchHit) -> str:
    snippet = f"\n   {hit.snippet}" if hit.snippet else ""
    return f"{number}. **{hit.title}**\n   {hit.uri}{snippet}"


def documents_markdown(documents: Sequence[Document]) -> str:
    """Whole documents as Markdown, each with its title and source URL."""
    rendered = []
    for doc in documents:
        content = doc.content.strip()
        head = "" if content.startswith("# ") else f"# {doc.title}\n\n"
        rendered.append(f"{head}Source: {doc.uri}\n\n{content}")
    return "\n\n---\n\n".join(rendered)


@dataclass(frozen=True)
class CheckRow:
    check: str
    status: str  # "ok", "FAIL" or "not configured"
    detail: str


def check_table(rows: Sequence[CheckRow]) -> str:
    """An aligned table: what works, and what to fix."""
    header = CheckRow("CHECK", "STATUS", "DETAIL")
    width_check = max(len(r.check) for r in [header, *rows])
    width_status = max(len(r.status) for r in [header, *rows])
    return "\n".join(
        f"{r.check:<{width_check}}  {r.status:<{width_status}}  {r.detail}".rstrip()
        for r in [header, *rows]
    )
