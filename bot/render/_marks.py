"""The marks of a verified answer: a line under each checked code block, and a summary."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.models import SnippetCheck, Verification
from bot.render._inline import plain_text
from bot.render._text import escape_truncated, link
from bot.text import one_line, truncate

#: mark lines under one block at most (the rest: "…and N more")
MAX_MARK_LINES = 4
_CODE_CHARS = 80
_SECTION_CHARS = 100
UNCHECKED = "Commands not checked (the cited pages could not be fetched)"
CHECK = "check before running"


@dataclass(frozen=True)
class _Style:
    code: Callable[[str], str]
    where: Callable[[SnippetCheck], str]


def _slack_code(text: str) -> str:
    return "`" + escape_truncated(one_line(text).replace("`", "'"), _CODE_CHARS) + "`"


def _slack_where(check: SnippetCheck) -> str:
    title = one_line(plain_text(check.title)) or "the cited page"
    place = f"_{link(check.uri, title)}_"
    section = one_line(plain_text(check.section))
    if section and section != title:
        place += " › " + escape_truncated(section, _SECTION_CHARS)
    return place


def _terminal_code(text: str) -> str:
    return "`" + truncate(one_line(text).replace("`", "'"), _CODE_CHARS) + "`"


def _terminal_where(check: SnippetCheck) -> str:
    title = one_line(check.title) or "the cited page"
    place = f"[{title}]({check.uri})" if check.uri else title
    if check.section and check.section != title:
        place += " › " + truncate(one_line(check.section), _SECTION_CHARS)
    return place


SLACK = _Style(_slack_code, _slack_where)
TERMINAL = _Style(_terminal_code, _terminal_where)


def _warning(check: SnippetCheck, style: _Style) -> str:
    named = check.missing or (check.snippet,)
    shown = ", ".join(style.code(m) for m in named)
    are = "are" if len(named) > 1 else "is"
    if check.result == "partly" and check.elsewhere:
        if all(m.startswith("-") for m in named):
            return f"⚠ {shown} {are} not shown with this command in the cited pages — {CHECK}"
        return f"⚠ {shown} {are} not in the cited pages as written — {CHECK}"
    return f"⚠ {shown} {are} not in the cited pages — {CHECK}"


def mark_lines(checks: list[SnippetCheck], style: _Style = SLACK) -> list[str]:
    """The lines under one block: where its commands were found, then what is not."""
    lines: list[str] = []
    for check in checks:
        if check.result == "found":
            line = "✓ in " + style.where(check)
        elif check.result in ("partly", "not_found"):
            line = _warning(check, style)
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


def marks_by_anchor(verification: Verification | None) -> dict[int, list[SnippetCheck]]:
    """The checked snippets grouped by the answer line their mark goes under."""
    if verification is None or verification.status != "checked":
        return {}
    groups: dict[int, list[SnippetCheck]] = {}
    for check in verification.snippets:
        groups.setdefault(check.anchor, []).append(check)
    return groups


def split_at_marks(markdown: str, anchors: list[int]) -> list[tuple[str, int | None]]:
    """The answer's Markdown cut after each anchor line: (piece, anchor) pairs, the last
    piece's anchor None when text follows the last mark."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    pieces: list[tuple[str, int | None]] = []
    start = 0
    for anchor in sorted(a for a in set(anchors) if 0 <= a < len(lines)):
        pieces.append(("\n".join(lines[start : anchor + 1]), anchor))
        start = anchor + 1
    rest = "\n".join(lines[start:])
    if rest.strip() or not pieces:
        pieces.append((rest, None))
    return pieces
