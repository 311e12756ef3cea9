"""Text safety in one place: every rule for cleaning text that came from outside. Escaping
for Slack is the renderer's job (`bot.render.escape`)."""

from __future__ import annotations

import re
import unicodedata

from bot.errors import ErrorFacts, InvalidInput, Reason

# C0 controls but tab and newline, DEL, and the bidi embeddings, overrides and isolates
# ("Trojan Source"); LRM/RLM and zero-width joiners stay: scripts and emoji need them
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
#: BCP-47-ish: "it", "it-IT", "pt-BR", "zh-Hant-TW", "es-419"
_LANGUAGE_RE = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}$")
_MAX_LANGUAGE_CHARS = 35
_INVISIBLE = frozenset({"Cc", "Cf"})


def strip_controls(text: str) -> str:
    return _CONTROL_RE.sub("", text)


def truncate(text: str, limit: int, *, at_word: bool = False) -> str:
    """At most `limit` characters, ending in "…" when cut (`at_word`: at a near space)."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    if at_word:
        space = cut.rfind(" ")
        if space >= limit // 2:
            cut = cut[:space]
    return cut.rstrip() + "…"


def one_line(text: str, limit: int | None = None) -> str:
    """Text on one line, control characters gone (so "\\x08" is empty, not a blank)."""
    flat = collapse_whitespace(strip_controls(text))
    return flat if limit is None else truncate(flat, limit)


def terminal_safe(text: str) -> str:
    """Only printable characters, newlines and tabs: no escape sequence reaches a terminal."""
    return "".join(c for c in text if c in "\n\t" or c.isprintable())


def clean_text(text: str) -> str:
    """`strip_controls` and surrounding whitespace gone: a Slack text ready to route."""
    return strip_controls(text).strip()


def clean_query(text: str, max_chars: int) -> str:
    """A question as sent upstream: no control or format characters (zero-width ones would
    make equal questions differ); InvalidInput when empty or too long."""
    spaced = text.replace("\t", " ").replace("\r", " ")
    cleaned = without_invisible(spaced, keep="\n").strip()
    if not cleaned:
        raise InvalidInput(facts=ErrorFacts(Reason.EMPTY_TEXT))
    if len(cleaned) > max_chars:
        facts = ErrorFacts(Reason.TEXT_TOO_LONG, count=len(cleaned), limit=max_chars)
        raise InvalidInput(facts=facts)
    return cleaned


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def without_invisible(text: str, *, keep: str = "") -> str:
    if text.isascii() and text.isprintable():  # the usual text: nothing to drop, no lookups
        return text
    return "".join(c for c in text if c in keep or unicodedata.category(c) not in _INVISIBLE)


def is_language_tag(tag: str) -> bool:
    return len(tag) <= _MAX_LANGUAGE_CHARS and _LANGUAGE_RE.match(tag) is not None


def clean_language(language: str | None) -> str | None:
    """A BCP-47 tag such as `it-IT` (`it_IT` mended), or None; InvalidInput for anything else."""
    if language is None or not language.strip():
        return None
    tag = language.strip().replace("_", "-")
    if not is_language_tag(tag):
        raise InvalidInput(facts=ErrorFacts(Reason.BAD_LANGUAGE, user_text=tag[:40]))
    return tag


# linear, line-anchored: runs of disjoint classes
_LINE_MARKS_RE = re.compile(
    r"^\s*(?:#{1,6}\s+|(?:>\s?)+|(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?|\|)"
)
#: a fence line (with its language tag), a heading (read inline it runs into the text, and the
#: first is mostly the page's title, shown already), a rule or a table's delimiter row
_NOT_WORDS_RE = re.compile(
    r"^[ \t]*(?:`{3,}|~{3,}|#{1,6}(?:[ \t]|$)|\|?[ \t]*:?-{3,}[-:| \t]*$).*$", re.MULTILINE
)


def markdown_lines(markdown: str) -> list[str]:
    """The lines of `markdown` read as plain words: no heading, fence, rule, or list, quote or
    table marks (a snippet shown in Slack or printed by the CLI)."""
    lines = [_LINE_MARKS_RE.sub("", line) for line in _NOT_WORDS_RE.sub("", markdown).splitlines()]
    return [line.replace("|", " ") if line.rstrip().endswith("|") else line for line in lines]
