"""A verified answer's marks (one verdict per command, under its block, naming it), and
what the gdocs-bot command line prints (Markdown, and check's table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from bot.models import Answer, Document, Reference, SearchHit, SnippetCheck, Verification
from bot.render._channels import scope_line
from bot.render._citations import cited_text, dated
from bot.render._inline import plain_text
from bot.render._notices import fallback_note
from bot.render._quota import at_time, in_about
from bot.render._text import escape_truncated
from bot.text import one_line, truncate
from bot.verify.parse import IDENT_RE, is_placeholder, shell_commands

if TYPE_CHECKING:
    from bot.quota import QuotaState


#: verdict lines under one block at most: the ✓ beyond them are counted, never a ⚠ first
MAX_MARK_LINES = 4
UNCHECKED = "Commands not checked (the cited pages could not be fetched)"
_NAME_CHARS = 60


def _short_name(check: SnippetCheck) -> str:
    """A command by its program and subcommands (`gcloud run deploy`), else as written."""
    text = one_line(check.snippet)
    command = next(shell_commands(text), None) if check.kind == "command" else None
    if command is None:
        return text
    words = [command.program]
    for word in command.path[:4]:
        if not IDENT_RE.match(word.replace("-", "_").replace(".", "_")) or is_placeholder(word):
            break
        words.append(word)
    return " ".join(words) if len(words) > 1 else text


def _code(text: str, terminal: bool) -> str:
    flat = one_line(text).replace("`", "'")
    cut = truncate(flat, _NAME_CHARS) if terminal else escape_truncated(flat, _NAME_CHARS)
    return "`" + cut + "`"


def _where(check: SnippetCheck, sources: Sequence[Reference], terminal: bool) -> str:
    """ "in source 2, under “Deploy a service”" (a section that is the page's name is left out)."""
    ref = next(((i, r) for i, r in enumerate(sources, 1) if r.uri == check.uri), None)
    place = f"in source {ref[0]}" if ref else "in a cited page"
    section = one_line(plain_text(check.section))
    titles = (check.title, ref[1].title if ref else "")
    if not section or any(_names(one_line(plain_text(t)).casefold(), section) for t in titles):
        return place
    shown = truncate(section, 100) if terminal else escape_truncated(section, 100)
    return f"{place}, under “{shown}”"


def _names(title: str, section: str) -> bool:
    """`section` is the page's name: the title itself, or before its site (`… | Cloud Run`)."""
    rest = title.removeprefix(section.casefold())
    return rest != title and (not rest or rest.lstrip()[:1] in ("|", "·", "-", "–", "—", ":", "¦"))


def _missing(check: SnippetCheck) -> tuple[str, ...]:
    """What to name as missing: the flags of a command a page shows (no page showing it is the
    finding whole), a code block's calls and lines; a bare flag is its own name."""
    if check.kind == "command":
        shown = check.result == "partly"
        return tuple(m for m in check.missing if shown and m.startswith("-"))
    return () if check.kind == "flag" else check.missing


def verdict(
    check: SnippetCheck, name: str, sources: Sequence[Reference], *, terminal: bool = False
) -> str:
    """One command's verdict, the same words in Slack, the stream and the CLI."""
    said = _code(name, terminal)
    if check.result == "found":
        return f"✓ {said} — {_where(check, sources, terminal)}"
    missing = _missing(check)
    written = " as written" if check.result == "partly" else ""
    if not missing:
        return f"⚠ {said} — not in the cited pages{written}"
    shown = ", ".join(_code(m, terminal) for m in missing)
    are = "are" if len(missing) > 1 else "is"
    if check.result == "partly" and check.elsewhere:
        if all(m.startswith("-") for m in missing):
            return f"⚠ {said} — {shown} {are} in the cited pages, but not with this command"
        return f"⚠ {said} — {shown} {are} not in the cited pages as written"
    return f"⚠ {said} — {shown} {are} not in the cited pages"


def _mark_lines(lines: list[tuple[bool, str]]) -> list[str]:
    """The verdicts under one block; past MAX_MARK_LINES the ⚠ first, the rest counted."""
    if len(lines) <= MAX_MARK_LINES:
        return [line for _, line in lines]
    said = set(sorted(range(len(lines)), key=lambda i: lines[i][0])[: MAX_MARK_LINES - 1])
    hidden = [ok for i, (ok, _) in enumerate(lines) if i not in said]
    found, warned = sum(hidden), len(hidden) - sum(hidden)
    rest = [f"✓ {found} more in the cited pages"] if found else []
    rest += [f"⚠ {warned} more not in the cited pages"] if warned else []
    return [line for i, (_, line) in enumerate(lines) if i in said] + ["; ".join(rest)]


def summary_line(verification: Verification | None) -> str | None:
    """The end of the answer says only what no mark can: that nothing was checked."""
    if verification is None or verification.status != "unchecked" or not verification.snippets:
        return None
    return UNCHECKED


def marks(
    verification: Verification | None, sources: Sequence[Reference], *, terminal: bool = False
) -> list[tuple[SnippetCheck, str]]:
    """Each check that gets a mark, with it; a verdict that reads like one said is not said."""
    if verification is None or verification.status != "checked":
        return []
    said: set[str] = set()
    out: list[tuple[SnippetCheck, str]] = []
    for check in verification.snippets:
        if check.result == "unchecked":
            continue
        name = _short_name(check)
        key = verdict(check, name, sources, terminal=True)  # the words shown, surface aside
        if key not in said:
            said.add(key)
            out.append((check, verdict(check, name, sources, terminal=terminal)))
    return out


def verify_counts(
    verification: Verification | None, sources: Sequence[Reference] = ()
) -> tuple[int, int]:
    """(✓, ⚠): how many verdicts of each kind the answer's marks say (with its `sources`)."""
    checks = [check for check, _ in marks(verification, sources)]
    found = sum(1 for c in checks if c.result == "found")
    return found, len(checks) - found


def verify_status(
    verification: Verification | None, sources: Sequence[Reference] = ()
) -> Literal["complete", "error"]:
    """The check's step: an error when a command is marked ⚠ or nothing could be checked."""
    unchecked = verification is not None and verification.status == "unchecked"
    return "error" if unchecked or verify_counts(verification, sources)[1] else "complete"


def marked_pieces(
    markdown: str,
    verification: Verification | None,
    sources: Sequence[Reference],
    *,
    terminal: bool = False,
) -> list[tuple[str, list[str]]]:
    """The answer's Markdown cut after each checked code block, with the verdicts under it."""
    groups: dict[int, list[tuple[bool, str]]] = {}
    for check, line in marks(verification, sources, terminal=terminal):
        groups.setdefault(check.anchor, []).append((check.result == "found", line))
    if not groups:
        return [(markdown, [])]
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    pieces: list[tuple[str, list[str]]] = []
    start = 0
    for anchor in sorted(a for a in groups if 0 <= a < len(lines)):
        pieces.append(("\n".join(lines[start : anchor + 1]), _mark_lines(groups[anchor])))
        start = anchor + 1
    rest = "\n".join(lines[start:])
    return [*pieces, (rest, [])] if rest.strip() or not pieces else pieces


def answer_markdown(answer: Answer, *, now: datetime | None = None) -> str:
    """An answer as Markdown: note (times in Pacific), text and numbered sources, or hits."""
    parts = [f"> {scope_line(answer.scope, from_channel=False)}"] if answer.scope else []
    if answer.fallback:
        parts.append(f"> Note: {fallback_note(answer.fallback, now=now)}")
    if answer.kind == "answer":
        parts.append(_marked_text(answer))
        summary = summary_line(answer.verification)
        if summary:
            parts.append(f"> {summary}")
        if answer.references:
            sources = [
                f"{i}. [{r.title}]({r.uri}){dated(r)}" for i, r in enumerate(answer.references, 1)
            ]
            parts.append("Sources:\n" + "\n".join(sources))
    elif answer.hits:
        parts.append("\n\n".join(_hit(i, hit) for i, hit in enumerate(answer.hits, 1)))
    else:
        parts.append(f"No results for “{answer.query}”.")
    return "\n\n".join(parts)


def _marked_text(answer: Answer) -> str:
    """The text, a cited span's sentence ending in `[1]` (the Sources list below, as printed)."""
    text = cited_text(answer, answer.references, lambda number, _: f"[{number}]")
    pieces = marked_pieces(text, answer.verification, answer.references, terminal=True)
    shown = [
        piece.strip("\n") + "".join(f"\n> {line}" for line in lines) for piece, lines in pieces
    ]
    return "\n\n".join(p for p in shown if p.strip()).strip()


def _hit(number: int, hit: SearchHit) -> str:
    snippet = f"\n   {hit.snippet}" if hit.snippet else ""
    return f"{number}. **{hit.title}**{dated(hit)}\n   {hit.uri}{snippet}"


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
