"""A verified answer's marks (a line under each checked code block, one summary line), and
what the gdocs-bot command line prints (Markdown, and check's table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.models import Answer, Document, SearchHit, SnippetCheck, Verification
from bot.render._inline import plain_text
from bot.render._notices import fallback_note
from bot.render._quota import at_time, in_about
from bot.render._text import escape_truncated, link
from bot.text import one_line, truncate

if TYPE_CHECKING:
    from bot.quota import QuotaState


#: mark lines under one block at most (the rest: "…and N more")
MAX_MARK_LINES = 4
UNCHECKED = "Commands not checked (the cited pages could not be fetched)"
CHECK = "check before running"


def _code(text: str, terminal: bool) -> str:
    flat = one_line(text).replace("`", "'")
    return "`" + (truncate(flat, 80) if terminal else escape_truncated(flat, 80)) + "`"


def _where(check: SnippetCheck, terminal: bool) -> str:
    if terminal:
        title = one_line(check.title) or "the cited page"
        place = f"[{title}]({check.uri})" if check.uri else title
        if check.section and check.section != title:
            place += " › " + truncate(one_line(check.section), 100)
        return place
    title = one_line(plain_text(check.title)) or "the cited page"
    section = one_line(plain_text(check.section))
    more = f" › {escape_truncated(section, 100)}" if section and section != title else ""
    return f"_{link(check.uri, title)}_{more}"


def _warning(check: SnippetCheck, terminal: bool) -> str:
    named = check.missing or (check.snippet,)
    shown = ", ".join(_code(m, terminal) for m in named)
    are = "are" if len(named) > 1 else "is"
    if check.result == "partly" and check.elsewhere:
        if all(m.startswith("-") for m in named):
            return f"⚠ {shown} {are} not shown with this command in the cited pages — {CHECK}"
        return f"⚠ {shown} {are} not in the cited pages as written — {CHECK}"
    return f"⚠ {shown} {are} not in the cited pages — {CHECK}"


def _mark_lines(checks: list[SnippetCheck], *, terminal: bool = False) -> list[str]:
    """The lines under one block: where its commands were found, then what is not."""
    lines: list[str] = []
    for check in checks:
        if check.result == "found":
            line = "✓ in " + _where(check, terminal)
        elif check.result in ("partly", "not_found"):
            line = _warning(check, terminal)
        else:
            continue
        if line not in lines:
            lines.append(line)
    if len(lines) > MAX_MARK_LINES:
        rest = len(lines) - MAX_MARK_LINES + 1
        lines = [*lines[: MAX_MARK_LINES - 1], f"…and {rest} more"]
    return lines


def summary_line(verification: Verification | None) -> str | None:
    """One line for the end of the answer, or None (no code, or not verified)."""
    if verification is None or not verification.snippets:
        return None
    if verification.status == "unchecked":
        return UNCHECKED
    total = len(verification.snippets)
    found = verification.count("found")
    partly = verification.count("partly")
    noun = "command" if total == 1 else "commands"
    verb = "appears" if total == 1 else "appear"
    line = f"{found} of {total} {noun} {verb} in the cited pages"
    return line + (f", {partly} only in part" if partly else "")


def marked_pieces(
    markdown: str, verification: Verification | None, *, terminal: bool = False
) -> list[tuple[str, list[str]]]:
    """The answer's Markdown cut after each checked code block, with the marks under it."""
    groups: dict[int, list[SnippetCheck]] = {}
    for check in verification.snippets if verification and verification.status == "checked" else ():
        groups.setdefault(check.anchor, []).append(check)
    if not groups:
        return [(markdown, [])]
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    pieces: list[tuple[str, list[str]]] = []
    start = 0
    for anchor in sorted(a for a in groups if 0 <= a < len(lines)):
        pieces.append(
            ("\n".join(lines[start : anchor + 1]), _mark_lines(groups[anchor], terminal=terminal))
        )
        start = anchor + 1
    rest = "\n".join(lines[start:])
    return [*pieces, (rest, [])] if rest.strip() or not pieces else pieces


def answer_markdown(answer: Answer, *, now: datetime | None = None) -> str:
    """An answer as Markdown: note (times in Pacific), text and numbered sources, or hits."""
    parts = []
    if answer.fallback:
        parts.append(f"> Note: {fallback_note(answer.fallback, now=now)}")
    if answer.kind == "answer":
        parts.append(_marked_text(answer))
        summary = summary_line(answer.verification)
        if summary:
            parts.append(f"> {summary}")
        if answer.references:
            sources = [f"{i}. [{r.title}]({r.uri})" for i, r in enumerate(answer.references, 1)]
            parts.append("Sources:\n" + "\n".join(sources))
    elif answer.hits:
        parts.append("\n\n".join(_hit(i, hit) for i, hit in enumerate(answer.hits, 1)))
    else:
        parts.append(f"No results for “{answer.query}”.")
    return "\n\n".join(parts)


def _marked_text(answer: Answer) -> str:
    pieces = marked_pieces(answer.text, answer.verification, terminal=True)
    shown = [
        piece.strip("\n") + "".join(f"\n> {line}" for line in lines) for piece, lines in pieces
    ]
    return "\n\n".join(p for p in shown if p.strip()).strip()


def _hit(number: int, hit: SearchHit) -> str:
    snippet = f"\n   {hit.snippet}" if hit.snippet else ""
    return f"{number}. **{hit.title}**\n   {hit.uri}{snippet}"


def documents_markdown(documents: Sequence[Document]) -> str:
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
    header = CheckRow("CHECK", "STATUS", "DETAIL")
    width_check = max(len(r.check) for r in [header, *rows])
    width_status = max(len(r.status) for r in [header, *rows])
    return "\n".join(
        f"{r.check:<{width_check}}  {r.status:<{width_status}}  {r.detail}".rstrip()
        for r in [header, *rows]
    )


def store_detail(report: Mapping[str, object]) -> str:
    """`check`'s line about the state store (`report`: backend, url, ok, detail)."""
    backend, url = str(report.get("backend", "?")), str(report.get("url", ""))
    if report.get("missing"):
        return f"no state file yet — `serve` creates it ({url})"
    if backend == "memory":
        return "memory:// (this process only: nothing is kept or shared)"
    if report.get("ok"):
        return f"{backend} at {url}: reachable"
    return f"{backend} at {url}: not answering ({report.get('detail', 'no answer')})"


def missing_tools_detail(missing: Sequence[str], listed: Sequence[str]) -> str:
    offered = f"it lists {len(listed)}: {', '.join(listed)}" if listed else "it lists none"
    return f"missing tools: {', '.join(missing)} ({offered}) — check DEVELOPER_KNOWLEDGE_MCP_URL"


def quota_detail(state: QuotaState, *, now: datetime) -> str:
    """`check`'s line about answer_query's quota."""
    if state.left_today is None:
        today = f"{state.used_today} used today (no daily limit set)"
    else:
        today = f"{state.left_today} of {state.per_day} left today"
    pause = state.pause if state.pause is not None and state.pause.until > now else None
    if state.left_this_minute is None:
        minute = "this minute not limited"
    else:
        minute = f"{state.left_this_minute} of {state.per_minute} free this minute"
        if state.left_this_minute == 0 and state.next_slot is not None and pause is None:
            minute += f" (the next {in_about((state.next_slot - now).total_seconds())})"
    parts = [today, minute]
    if pause is not None and pause.kind == "day":
        until = pause.until.astimezone(UTC)
        parts.append(f"paused (Google says today's answers are used up) until {until:%H:%M} UTC")
    elif pause is not None:
        why = "Google's per-minute limit" if pause.kind == "minute" else "an unclear 429"
        parts.append(f"paused ({why}) back {in_about((pause.until - now).total_seconds())}")
    reset = state.next_reset
    at = at_time(reset, tz=None, now=now)
    return ", ".join(parts) + f"; resets {at} ({reset.astimezone(UTC):%H:%M} UTC)"


def quota_unknown_detail() -> str:
    return "unknown: the state store is not answering (the ledger lives there)"
