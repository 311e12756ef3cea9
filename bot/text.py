"""Text safety, in one place: every rule for cleaning text that came from outside.

- `strip_controls`: C0 controls (tab and newline kept), DEL, and the bidi embeddings,
  overrides and isolates that make text read in another order than it is written
  ("Trojan Source"). LRM/RLM/ALM and zero-width joiners stay: scripts and emoji need them.
- `one_line`: `strip_controls`, then `collapse_whitespace` (every run one space); optionally cut.
- `without_invisible`: control and format characters dropped (`clean_query` and the
  question key's words use it).
- `terminal_safe`: only printable characters, newlines and tabs, for the CLI's output, so
  no escape sequence from a document or a server reaches a terminal.
- `clean_query`: a user's question as sent upstream: every control and format character
  (zero-width ones included: they would make equal questions differ) dropped.
- `clean_language`: a BCP-47 language tag such as `it-IT`.

Escaping for Slack (`&`, `<`, `>`) is the renderer's job: `bot.render.escape`.
"""

from __future__ import annotations

import re
import unicodedata

from bot.errors import ErrorFacts, InvalidInput, Reason

# linear: single character classes (`_LANGUAGE_RE` runs on a tag of at most 35 characters)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
#: BCP-47-ish: "it", "it-IT", "pt-BR", "zh-Hant-TW", "es-419"
_LANGUAGE_RE = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,4}$")
_MAX_LANGUAGE_CHARS = 35
#: Unicode categories a query never needs: controls and invisible format characters
_INVISIBLE = frozenset({"Cc", "Cf"})


def strip_controls(text: str) -> str:
    """`text` without C0 control characters (tab and newline are kept), DEL or bidi overrides."""
    return _CONTROL_RE.sub("", text)


def truncate(text: str, limit: int, *, at_word: bool = False) -> str:
    """`text` cut to at most `limit` characters, ending in "…" when cut.

    With `at_word`, the cut moves back to the last space when one is reasonably close.
    """
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
    """Only printable characters, newlines and tabs: nothing a terminal would interpret."""
    return "".join(c for c in text if c in "\n\t" or c.isprintable())


def clean_text(text: str) -> str:
    """`strip_controls` and surrounding whitespace gone: a Slack text ready to route."""
    return strip_controls(text).strip()


def clean_query(text: str, max_chars: int) -> str:
    """The user's text without control or format characters; InvalidInput when empty or too
    long. Tabs and carriage returns become spaces; newlines stay."""
    spaced = text.replace("\t", " ").replace("\r", " ")
    cleaned = without_invisible(spaced, keep="\n").strip()
    if not cleaned:
        raise InvalidInput(facts=ErrorFacts(Reason.EMPTY_TEXT))
    if len(cleaned) > max_chars:
        facts = ErrorFacts(Reason.TEXT_TOO_LONG, count=len(cleaned), limit=max_chars)
        raise InvalidInput(facts=facts)
    return cleaned


def collapse_whitespace(text: str) -> str:
    """Every whitespace run as one space, none at the ends (no other character touched)."""
    return " ".join(text.split())


def without_invisible(text: str, *, keep: str = "") -> str:
    """`text` without control or format characters (zero-width ones included), except those
    in `keep`."""
    if text.isascii() and text.isprintable():  # the usual text: nothing to drop, no lookups
        return text
    return "".join(c for c in text if c in keep or unicodedata.category(c) not in _INVISIBLE)


def is_language_tag(tag: str) -> bool:
    """True for a BCP-47-shaped tag such as `it-IT` (underscores not accepted)."""
    return len(tag) <= _MAX_LANGUAGE_CHARS and _LANGUAGE_RE.match(tag) is not None


def clean_language(language: str | None) -> str | None:
    """A BCP-47 tag such as `it-IT` (`it_IT` mended), or None; InvalidInput for anything else."""
    if language is None or not language.strip():
        return None
    tag = language.strip().replace("_", "-")
    if not is_language_tag(tag):
        raise InvalidInput(facts=ErrorFacts(Reason.BAD_LANGUAGE, user_text=tag[:40]))
    return tag
