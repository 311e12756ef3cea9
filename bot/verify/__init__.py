"""Verified answers: each command and code block of a generated answer looked up in the
pages it cites. Pure (text in, results out); nothing is run, fetched or stored here.

    verification = check_answer(answer.text, documents)
    count_commands(answer.text)  # how many snippets a check will look at

A command is *found* when one page shows it (placeholders, flag order and line breaks
aside), *partly* found when a page shows the command but not all its flags (or has all its
words, only not together), else *not found*. See docs/verified-answers.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.models import Document, SnippetCheck, Verification
from bot.verify._answer import MAX_SNIPPETS, Snippet, snippets
from bot.verify._match import check_code, check_command, check_flag
from bot.verify._pages import PageIndex, forget_pages, kept_pages, page_index

__all__ = [
    "MAX_SNIPPETS",
    "check_answer",
    "count_commands",
    "forget_pages",
    "kept_pages",
    "unchecked",
]


def count_commands(markdown: str) -> int:
    """How many commands and code blocks of `markdown` a check looks at (cheap: no pages)."""
    return len(snippets(markdown))


def _check(snippet: Snippet, pages: list[PageIndex]) -> SnippetCheck:
    if snippet.kind == "command":
        return check_command(snippet, pages)
    if snippet.kind == "code":
        return check_code(snippet, pages)
    return check_flag(snippet, pages)


def check_answer(markdown: str, documents: Sequence[Document]) -> Verification:
    """Every snippet of the answer `markdown` matched against `documents` (the cited pages)."""
    found = snippets(markdown)
    if not found:
        return Verification(status="checked")
    pages = [page_index(doc) for doc in documents]
    return Verification(status="checked", snippets=tuple(_check(s, pages) for s in found))


def unchecked(markdown: str) -> Verification:
    """The answer's snippets, each 'unchecked' (the pages could not be had)."""
    return Verification(
        status="unchecked",
        snippets=tuple(
            SnippetCheck(snippet=s.text[:200], kind=s.kind, result="unchecked", anchor=s.anchor)
            for s in snippets(markdown)
        ),
    )
