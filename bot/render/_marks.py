"""The marks of a verified answer, in words: a line under each checked code block ("✓ in
*Deploying to Cloud Run*", "⚠ `--service-acount` is not in the cited pages — check before
running") and one summary line, in Slack mrkdwn (escaped) or terminal Markdown."""

from __future__ import annotations

from bot.models import SnippetCheck, Verification
from bot.render._inline import plain_text
from bot.render._text import escape_truncated, link
from bot.text import one_line, truncate

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


def mark_lines(checks: list[SnippetCheck], *, terminal: bool = False) -> list[str]:
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
