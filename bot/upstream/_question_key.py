"""One cache key for questions that differ only in form (the rule is in the README): case,
Unicode forms, spacing, invisible characters, punctuation around words, simple plurals and
filler phrases do not count; a verb, a name or a number always does."""

from __future__ import annotations

import re
import unicodedata

from bot.text import without_invisible

#: filler phrases, longest first so that "how do i" wins over a shorter overlap
_FILLER_TEXT = "how do i|how can i|how should i|how to|can you|could you|would you|please|a|an|the"
FILLERS: tuple[tuple[str, ...], ...] = tuple(tuple(f.split()) for f in _FILLER_TEXT.split("|"))
#: words that look plural but are names or singular nouns
NOT_PLURAL = frozenset(
    {"https", "ios", "macos", "chromeos", "kubernetes", "redis", "windows", "series", "news"}
)
#: plurals the rules above would miss
PLURALS = {"apis": "api", "cpus": "cpu", "gpus": "gpu", "tpus": "tpu"}
_OPENERS = "([{\"'`“‘«¿¡"
_CLOSERS = ")]}\"'`”’»"
_PAIRS = dict(zip("([{“‘«", ")]}”’»", strict=True))
#: sentence punctuation that ends a word without being part of it
_TRAILING = "?!.,;:…"
#: one character class, greedy: linear in the question (the rest of the key is str methods)
_LETTERS = re.compile(r"[^\W\d_]+")
#: the control characters that are whitespace: they separate words, so they stay
_CONTROL_SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85"


def question_key(text: str) -> str:
    """The normalised form of a question."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    # control and format characters (zero-width spaces, bidi marks) go; whitespace stays
    stripped = (_strip(w) for w in without_invisible(folded, keep=_CONTROL_SPACES).split())
    words = [_singular(w) for w in stripped if any(c.isalnum() for c in w)]
    kept = _without_fillers(words)
    return " ".join(kept or words)


def _strip(word: str) -> str:
    """`word` without the punctuation around it (brackets only when they do not pair up
    with one inside it: "f()" keeps its brackets)."""
    while True:
        before = word
        word = word.rstrip(_TRAILING)
        if len(word) >= 2 and _PAIRS.get(word[0]) == word[-1]:
            word = word[1:-1]
        if word[:1] in _OPENERS and not any(c in word[1:] for c in _CLOSERS):
            word = word[1:]
        if word[-1:] in _CLOSERS and not any(c in word[:-1] for c in _OPENERS):
            word = word[:-1]
        if word == before:
            return word


def _singular(word: str) -> str:
    if word in PLURALS:
        return PLURALS[word]
    if len(word) < 4 or word in NOT_PLURAL or not _LETTERS.fullmatch(word):
        return word
    if word.endswith(("ss", "us", "is")) or not word.endswith("s"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    return word[:-1]


def _without_fillers(words: list[str]) -> list[str]:
    """`words` with every filler phrase taken out, until none is left (taking one out can
    join the words around it into another)."""
    while True:
        kept: list[str] = []
        i = 0
        while i < len(words):
            match = next((f for f in FILLERS if tuple(words[i : i + len(f)]) == f), None)
            if match is None:
                kept.append(words[i])
                i += 1
            else:
                i += len(match)
        if kept == words:
            return kept
        words = kept
