"""Slack messages for answers, search results, help, errors and progress."""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple, TypedDict, Unpack

from bot.errors import ErrorCode, GdocsError
from bot.models import Answer, Reference, Scope, SearchHit
from bot.render._channels import scope_note
from bot.render._citations import cited_text, dated, linkable
from bot.render._documents import FILE_CHARS, page_title, show_doc_actions
from bot.render._errors import error_sentence, passing_trouble, try_again_value
from bot.render._feedback import feedback_block_for
from bot.render._inline import plain_text
from bot.render._markdown import cut_source, markdown_to_blocks
from bot.render._marks import marked_pieces, summary_line
from bot.render._notices import fallback_note
from bot.render._team_answer import ask_google_block, team_line
from bot.render._text import (
    MAX_BLOCKS,
    MAX_FALLBACK_CHARS,
    MAX_MESSAGE_CHARS,
    SECTION_CHARS,
    Block,
    Message,
    blocks_chars,
    button,
    context,
    escape,
    escape_truncated,
    link,
    mention,
    safe_command,
    section,
)
from bot.text import markdown_lines, one_line

#: questions, snippets and titles are shown cut to this many characters
_SHOWN_CHARS = 300
#: an answer's Markdown beyond this is cut before it is converted: a message shows at most
#: MAX_MESSAGE_CHARS, and markup that disappears is rarely two thirds of an answer
_ANSWER_SOURCE_CHARS = 3 * MAX_MESSAGE_CHARS
#: a fence inside a line: snippets cached flat before fences were dropped
_INLINE_FENCE_RE = re.compile(r"(?:`{3,}|~{3,})[\w+-]*|\|(?:[ \t]*:?-{3,}:?[ \t]*\|)+")
#: what to do about an error that is not trouble passing by itself (`passing_trouble`)
_HINTS: dict[ErrorCode, str] = {
    ErrorCode.AUTH: "An admin needs to fix the bot's configuration.",
    ErrorCode.CONFIG: "An admin needs to fix the bot's configuration.",
    ErrorCode.NOT_FOUND: "Check the name or URL, or look the page up with `search`.",
}
#: the Try again button under an error (its value: `try_again_value`)
ACTION_TRY_AGAIN = "try_again"


def _plain_summary(markdown: str, limit: int) -> str:
    """Readable words without Markdown's marks (`markdown_lines`), inline Markdown read."""
    start = cut_source(markdown, max(20 * limit, 4000))[0]  # plenty to read the start from
    words = plain_text(_INLINE_FENCE_RE.sub(" ", "\n".join(markdown_lines(start))))
    return escape_truncated(one_line(words), limit, at_word=True)


def _asked(asker: str | None, question: str | None, about: str | None = None) -> str | None:
    who = mention(asker) if asker else ""
    shown = escape_truncated(one_line(question), _SHOWN_CHARS, at_word=True) if question else ""
    author = mention(about) if about else ""
    if who and shown and author:  # the message shortcut: someone's message asked about
        whose = "their own" if about == asker else f"{author}'s"
        return f"{who} asked about {whose} message:\n> {shown}"
    if who and shown:
        return f"{who} asked:\n> {shown}"
    if shown:
        return f"> {shown}"
    return f"{who} asked:" if who else None


def _cited(answer: Answer) -> list[Reference | SearchHit]:
    """The pages the message names, each once (by address), in the order they came."""
    pages: dict[str, Reference | SearchHit] = {}
    for page in answer.references if answer.kind == "answer" else answer.hits:
        pages.setdefault(page.uri.strip(), page)
    return list(pages.values())


def _sources(pages: list[Reference | SearchHit]) -> tuple[Block | None, int]:
    """The Sources list, and how many pages it names (the rest: "…and 3 more")."""
    lines: list[str] = []
    for number, page in enumerate(pages, start=1):
        # untitled: the address
        line = f"{number}. {link(page.uri, page_title(page.title))}{dated(page)}"
        if len("\n".join(["*Sources*", *lines, line])) > SECTION_CHARS - 40:
            lines.append(f"…and {len(pages) - number + 1} more")
            return section("\n".join(["*Sources*", *lines])), number - 1
        lines.append(line)
    return (section("\n".join(["*Sources*", *lines])) if lines else None), len(lines)


def listed_pages(answer: Answer) -> list[Reference | SearchHit]:
    """The pages an answer's Sources list names, in its order: what markers may point at."""
    pages = _cited(answer)
    return pages[: _sources(pages)[1]] if answer.kind == "answer" else []


def _source_marker(number: int, uri: str) -> str:
    """A marker in the answer's Markdown: `[[1]](url)` becomes `<url|[1]>` (`link`)."""
    return f"[[{number}]]({uri})" if linkable(uri) else f"[{number}]"


def _hit_block(number: int, hit: SearchHit) -> Block:
    head = f"*{number}. {link(hit.uri, page_title(hit.title)) or 'Untitled page'}*{dated(hit)}"
    snippet = _plain_summary(hit.snippet, _SHOWN_CHARS)
    text = f"{head}\n{snippet}" if snippet else head
    return section(text if len(text) <= SECTION_CHARS else head)


def _fit(
    body: list[Block], budget_chars: int, budget_blocks: int, what: str, left_out: int = 0
) -> list[Block]:
    """`body`, or the leading blocks that fit and a note saying how much was left out."""
    if not left_out and len(body) <= budget_blocks and blocks_chars(body) <= budget_chars:
        return body
    shown: list[Block] = []
    used = 0
    for block in body:
        size = blocks_chars(block)
        if len(shown) + 2 > budget_blocks or used + size > budget_chars - 120:
            break
        shown.append(block)
        used += size
    rest = body[len(shown) :]
    if what == "answer":
        more = left_out + sum(len(block.get("text", {}).get("text", "")) for block in rest)
        note = f"(answer shortened — {more} more characters)"
    else:
        note = f"({len(rest)} more {what} not shown)"
    return [*shown, context(note)]


class AnswerParts(NamedTuple):
    """Head (who asked, fallback note), body (answer or hits), tail (sources, buttons)."""

    text: str
    head: list[Block]
    body: list[Block]
    tail: list[Block]


class Asked(TypedDict, total=False):
    """`about`: the author of a message asked about; `feedback_id` adds feedback buttons."""

    asker: str | None
    question: str | None
    tz: str | None
    now: datetime | None
    feedback_id: str | None
    about: str | None
    #: the channel's products, when they were meant to apply (the scope line says so)
    channel_scope: Scope
    #: a page longer than this comes as a file (`Settings.doc_file_threshold_chars`)
    file_chars: int
    #: under a team answer: what "Ask Google's docs too" asks (as typed, routed the same)
    ask_google: str | None


def render_answer(answer: Answer, **asked: Unpack[Asked]) -> Message:
    parts = answer_parts(answer, **asked)
    return {"text": parts.text, "blocks": parts.head + parts.body + parts.tail}


def answer_size(answer: Answer) -> int:
    """How much text rendering `answer` reads (a long one is rendered off the event loop)."""
    hits = sum(len(hit.title) + len(hit.snippet) for hit in answer.hits)
    return len(answer.text) + hits + sum(len(ref.title) for ref in answer.references)


def answer_parts(answer: Answer, **asked: Unpack[Asked]) -> AnswerParts:
    asker, question = asked.get("asker"), asked.get("question")
    if asker and question is None:
        question = answer.query
    said = _asked(asker, question, asked.get("about"))
    head = [section(said)] if said else []
    head += [context(team_line(answer.team))] if answer.team else []
    # the team's answer was limited to no product: nothing to say about the channel's
    scope = scope_note(answer.scope, () if answer.team else asked.get("channel_scope", ()))
    head += [context(scope)] if scope else []
    if answer.fallback:
        note = fallback_note(answer.fallback, tz=asked.get("tz"), now=asked.get("now"))
        note = escape_truncated(one_line(note), 600)
        head += [context(note)] if note else []
    tail: list[Block] = []
    summary = summary_line(answer.verification) if answer.kind == "answer" else None
    if summary:  # in the fixed part: the answer may be shortened, never its summary
        tail.append(context(escape(summary)))
    pages = _cited(answer)
    sources = _sources(pages)[0] if answer.kind == "answer" else None
    tail += [sources] if sources else []
    numbered = [(n, p.name, p.title, p.size) for n, p in enumerate(pages, start=1) if p.name]
    buttons = show_doc_actions(numbered, file_chars=asked.get("file_chars", FILE_CHARS))
    if buttons:
        tail.append(buttons)
    google = ask_google_block(q) if answer.team and (q := asked.get("ask_google")) else None
    tail += [google] if google else []
    if (feedback_id := asked.get("feedback_id")) is not None:
        tail.append(feedback_block_for(feedback_id))

    text = _fallback_text(answer, question)
    fixed = len(text) + blocks_chars(head + tail)
    budget_blocks = MAX_BLOCKS - len(head) - len(tail)
    left_out = 0
    if answer.kind == "answer":
        marked = cited_text(answer, listed_pages(answer), _source_marker)
        source, left_out = cut_source(marked, _ANSWER_SOURCE_CHARS)
        body = _answer_blocks(answer, source) or [section(_no_answer(answer))]
        what = "answer"
    else:
        hits = enumerate(pages, start=1)
        body = [_hit_block(n, hit) for n, hit in hits if isinstance(hit, SearchHit)]
        body = body or [section(_no_answer(answer))]
        what = "results"
    body = _fit(body, MAX_MESSAGE_CHARS - fixed, budget_blocks, what, left_out)
    return AnswerParts(text, head, body, tail)


def _answer_blocks(answer: Answer, source: str) -> list[Block]:
    """`source` as blocks, each checked code block followed by its marks."""
    blocks: list[Block] = []
    for piece, lines in marked_pieces(source, answer.verification, answer.references):
        blocks += markdown_to_blocks(piece)
        blocks += [context("\n".join(lines))] if lines else []
    return blocks


def _no_answer(answer: Answer) -> str:
    if answer.kind == "answer":
        return "I couldn't find an answer to that in Google's documentation."
    return f"No documentation pages matched “{escape_truncated(one_line(answer.query), 300)}”."


def _fallback_text(answer: Answer, question: str | None) -> str:
    """The notification: the answer's first words, or what a search found."""
    if answer.kind == "answer":
        return _plain_summary(answer.text, MAX_FALLBACK_CHARS) or _no_answer(answer)
    asked = escape_truncated(one_line(question or answer.query), 200, at_word=True)
    count = len(answer.hits)
    return f"{count} documentation page{'s' if count != 1 else ''} for “{asked}”"


def render_help(command: str = "/gdocs") -> Message:
    cmd = safe_command(command)
    usage = "\n".join(
        [
            "*Ask Google's developer documentation*",
            f"• `{cmd} <question>` — a short answer with links to the docs it comes from",
            f"• `{cmd} search <query>` — matching documentation pages",
            f"• `{cmd} pay <query>` — search the Google Pay & Wallet developer docs",
            f"• `{cmd} doc <URL or documents/…>` — a whole documentation page, here",
            f"• `{cmd} private <question>` (or `{cmd} -p …`) — an answer only you see, "
            "with a button to share it in the channel",
            f"• `{cmd} quota` — how many generated answers the team has left today",
            f"• `{cmd} report` — the week's questions and gaps (workspace admins)",
            f"• `{cmd} team` — the team's own answers given here, saved with the message "
            "shortcut *Save as team answer*",
            f"• `{cmd} help` — this message",
        ]
    )
    where = (
        "You can also @-mention me in a channel I'm in (I answer in the thread), "
        "or send me a direct message. Use *Show full doc* under an answer to read a cited page."
    )
    text = f"Usage: {cmd} <question> | {cmd} search <query> | {cmd} pay <query> | {cmd} doc <URL>"
    # the `<question>` placeholders are escaped like any text, so Slack prints them as typed
    return {"text": escape(text), "blocks": [section(escape(usage)), context(escape(where))]}


def render_error(
    error: GdocsError, *, question: str | None = None, retry: str | None = None
) -> Message:
    """One sentence; for trouble that passes, a Try again button asking `retry` (as typed)
    again. `question`: quoted, where the message replaces it."""
    passing = passing_trouble(error)
    said = escape_truncated(one_line(passing or error_sentence(error)), 500)
    said = said or "Something went wrong."
    hint = None if passing else _HINTS.get(error.code)
    quoted = escape_truncated(one_line(question), _SHOWN_CHARS, at_word=True) if question else ""
    block = section(
        f":warning: {said}" + (f"\n{hint}" if hint else "") + (f"\n> {quoted}" if quoted else "")
    )
    value = try_again_value(retry) if passing and retry else None
    if value:
        block["accessory"] = button("Try again", ACTION_TRY_AGAIN, value)
    return {"text": said + (f" {hint}" if hint else ""), "blocks": [block]}


def render_progress(question: str | None = None) -> Message:
    blocks: list[Block] = [section(":hourglass_flowing_sand: Looking that up…")]
    if question:
        blocks.append(context(f"“{escape_truncated(one_line(question), _SHOWN_CHARS)}”"))
    return {"text": "Looking that up…", "blocks": blocks}
