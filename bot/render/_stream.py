"""Slack's agent surface: suggested prompts, thread status, and a streamed answer's task
timeline and Markdown, made inert and cut to Slack's per-call limit."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.models import Answer, Fallback, Reference, Verification
from bot.render._answer import AnswerParts, listed_pages
from bot.render._citations import cited_text, linkable
from bot.render._marks import marked_pieces, verify_counts
from bot.render._quota import quota_words
from bot.render._text import (
    Message,
    context,
    display_url,
    escape,
    escape_truncated,
    is_http_url,
    spoofs_host,
)
from bot.text import one_line

#: Slack's limit of `markdown_text` in one chat.appendStream call
_APPEND_CHARS = 12_000
STOPPED_TEXT = "_Stopped._"
#: the step each route's upstream call shows, in people's words (not the API's name)
_STEP_TITLES = {
    "answer": "Asking Google's docs",
    "search": "Searching Google's docs",
    "pay": "Searching the Google Pay & Wallet docs",
}
#: Slack's guidance for task titles, details and outputs
_TASK_CHARS = 256
#: `[label](url)`, the URL with balanced parentheses one deep (`javascript:alert(1)`)
_MD_LINK_RE = re.compile(
    r"(?<!\!)\[(?P<label>[^\[\]\n]{0,1000})\]\((?P<url>(?:[^()\s]|\([^()\s]{0,200}\)){1,3000})\)"
)


def task_text(text: str) -> str:
    """`text` escaped for a task chunk, in at most `_TASK_CHARS` characters."""
    return escape_truncated(one_line(text), _TASK_CHARS, at_word=True)


# A step's title and output are plain text: `task_chunk` escapes them, once.
def step_title(route_kind: str) -> str:
    return _STEP_TITLES.get(route_kind, _STEP_TITLES["search"])


def wait_title(seconds: float) -> str:
    return f"Waiting for a free answer slot (about {max(1, math.ceil(seconds))} s)"


def fallback_title(fallback: Fallback) -> str | None:
    """The step's title when generated answers gave way to search: `quota_words`' headline."""
    if fallback.reason != "answer_quota":
        return None
    return f"{quota_words(fallback.limit).headline} — searching instead"


def verify_title(commands: int) -> str:
    """No count: the output counts the verdicts (a command written twice gets one)."""
    noun = "command" if commands == 1 else "commands"
    return f"Checking the {noun} against the cited pages"


def verify_summary(
    verification: Verification | None, sources: Sequence[Reference] = ()
) -> str | None:
    """The step's output, the marks counted: "1 of 2 found"; None when there is no mark."""
    found, warned = verify_counts(verification, sources)
    return f"{found} of {found + warned} found" if found + warned else None


def task_found(answer: Answer) -> str:
    """The search step's output: how many pages (the Sources list says which)."""
    count = len(answer.references if answer.kind == "answer" else answer.hits)
    return f"{count} page{'s' if count != 1 else ''} found" if count else "No pages found"


def task_chunk(
    task_id: str,
    title: str,
    status: str,
    *,
    output: str | None = None,
    sources: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """One `task_update` chunk; `title` and `output` are plain text, escaped here. `sources`
    (url, title): pages found early, while the answer is written (the message's Sources list
    names the cited ones)."""
    chunk: dict[str, Any] = {"type": "task_update", "id": task_id, "title": task_text(title)}
    chunk |= {"status": status} | ({"output": task_text(output)} if output else {})
    shown = [(url, text) for url, text in sources if is_http_url(url)]
    if shown:
        chunk["sources"] = [{"type": "url", "url": u, "text": task_text(t)} for u, t in shown]
    return chunk


def _safe_link(match: re.Match[str]) -> str:
    label, url = match.group("label"), match.group("url")
    if not is_http_url(url):
        return label  # javascript:, mailto:, relative: the words only
    if spoofs_host(label, url):
        label = display_url(url)
    return f"[{label.replace('[', '(').replace(']', ')')}]({url})"


def _marker(number: int, uri: str) -> str:
    """`[[1](url)]`: Slack's Markdown reads `[1]`, the number linked; a label keeps no bracket
    (`_safe_link`), so the brackets stand outside the link. A word joiner (U+2060, unseen)
    comes first: after "It works!" a bare `![` would open an image for some Markdown readers,
    and Slack's is not one we can run."""
    return f"\u2060[[{number}]({uri})]" if linkable(uri) else f"\u2060[{number}]"


def _split(text: str) -> list[str]:
    """`text` in pieces Slack takes in one append, cut at a paragraph, line or space."""
    pieces: list[str] = []
    while len(text) > _APPEND_CHARS:
        cut = _cut_at(text, _APPEND_CHARS)
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text] if text else pieces


def _cut_at(text: str, limit: int) -> int:
    window = text[:limit]
    for mark in ("\n\n", "\n", " "):
        at = window.rfind(mark)
        if at > limit // 2:
            return at + len(mark)
    amp = window.rfind("&", max(0, limit - 5))
    return amp if amp > 0 and ";" not in window[amp:] else limit


@dataclass(frozen=True)
class StreamedAnswer:
    """Chunks to append, then the blocks chat.stopStream puts under them."""

    chunks: tuple[dict[str, Any], ...]
    end: Message

    @property
    def markdown(self) -> str:
        return "".join(c["text"] for c in self.chunks if c["type"] == "markdown_text")


def streamed_answer(answer: Answer, parts: AnswerParts) -> StreamedAnswer:
    """`parts` as a stream: the head, the answer's text with its marks, then the tail."""
    if answer.kind != "answer" or not answer.text.strip():
        whole = parts.head + parts.body + parts.tail
        return StreamedAnswer((), {"text": parts.text, "blocks": whole})
    chunks: list[dict[str, Any]] = [{"type": "blocks", "blocks": parts.head}] if parts.head else []
    marked = cited_text(answer, listed_pages(answer), _marker)
    for piece, lines in marked_pieces(marked, answer.verification, answer.references):
        for text in _split(escape(_MD_LINK_RE.sub(_safe_link, piece)).strip()):
            chunks.append({"type": "markdown_text", "text": text})
        if lines:
            chunks.append({"type": "blocks", "blocks": [context("\n".join(lines))]})
    return StreamedAnswer(tuple(chunks), {"text": parts.text, "blocks": parts.tail})


PROMPTS_TITLE = "Ask Google's developer documentation"
#: what `setStatus` takes to clear the status
CLEARED_STATUS = ""
#: (title, message); generated answers are scarce, so one prompt searches and one asks Pay
SUGGESTED_PROMPTS = (
    ("Create a Cloud Storage bucket", "How do I create a Cloud Storage bucket with gcloud?"),
    (
        "Firebase sign-in on Android",
        "How do I add Google sign-in to an Android app with Firebase Authentication?",
    ),
    ("Search the docs", "search Cloud Run environment variables"),
    ("Google Pay on a website", "pay How do I add a Google Pay button to my website?"),
)

#: "team": the team's answer given, Google's docs not asked
WorkKind = Literal["answer", "search", "pay", "doc", "team"]

#: Slack shows the status after the app's name: "gdocs is searching Google's docs…"
_STATUS: dict[WorkKind, str] = {
    "answer": "is searching Google's docs…",
    "search": "is searching Google's docs…",
    "pay": "is searching the Google Pay & Wallet docs…",
    "doc": "is fetching the page…",
    "team": "is getting your team's answer…",
}
#: Slack rotates through at most ten of these under the status
_LOADING: dict[WorkKind, list[str]] = {
    "answer": [
        "Reading Google's documentation…",
        "Checking the pages that answer this…",
        "Writing a short answer with sources…",
    ],
    "search": ["Searching Google's documentation…", "Collecting the best matching pages…"],
    "pay": [
        "Searching the Google Pay & Wallet documentation…",
        "Collecting the best matching pages…",
    ],
    "doc": ["Fetching the page from Google's documentation…", "Laying the page out for Slack…"],
    "team": ["Getting the answer your team saved…"],
}


def suggested_prompts() -> list[dict[str, str]]:
    """The prompts for setSuggestedPrompts (a fresh list: callers may change it)."""
    return [{"title": title, "message": text} for title, text in SUGGESTED_PROMPTS]


def assistant_status(kind: WorkKind = "answer") -> str:
    return _STATUS.get(kind, _STATUS["answer"])


def loading_messages(kind: WorkKind = "answer") -> list[str]:
    return list(_LOADING.get(kind, _LOADING["answer"]))
