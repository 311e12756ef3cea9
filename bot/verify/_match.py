"""Matching one snippet against the cited pages: found (where), partly (what is missing, or
only elsewhere in the pages), or not found."""

from __future__ import annotations

from bot.models import SnippetCheck
from bot.verify._answer import Snippet
from bot.verify._pages import PageIndex, key_name
from bot.verify._parse import (
    Command,
    code_token_ok,
    flag_name,
    identifiers,
    is_placeholder,
    value_ok,
)

#: most missing words named per snippet
MAX_MISSING = 3


def _same_words(a: tuple[str, ...], d: tuple[str, ...]) -> bool:
    return len(a) == len(d) and all(value_ok(x, y) for x, y in zip(a, d, strict=True))


def path_ok(c: Command, d: Command, *, prefix: bool = False) -> bool:
    """The same subcommands and arguments (placeholders allowed), whichever flags took
    which values; with `prefix`, a command named without its arguments is enough."""
    if prefix and not c.flags and _same_words(c.path, d.path[: len(c.path)]):
        return True
    return (
        _same_words(c.path, d.path)
        or _same_words(c.loose, d.loose)
        or _same_words(c.path, d.loose)
        or _same_words(c.loose, d.path)
    )


def _prefix(c: Command, d: Command) -> int:
    n = 0
    for x, y in zip(c.path, d.path, strict=False):
        if not value_ok(x, y):
            break
        n += 1
    return n


def _segment(a: str, d: str) -> str:
    """The first segment of path `a` that path `d` does not have (all of `a` if none)."""
    for x, y in zip(a.split("/"), d.split("/"), strict=False):
        if not value_ok(x, y):
            return x
    return a


def _departure(c: Command, shown: list[tuple[Command, str]]) -> str:
    """Where the answer's command leaves the closest command the page shows: the
    subcommand up to the first word no such command has (or the path segment)."""
    if not shown:
        return c.program
    depth, closest = max(((_prefix(c, d), d) for d, _ in shown), key=lambda p: p[0])
    if depth >= len(c.path):
        return " ".join((c.program, *c.path))[:80]
    word = c.path[depth]
    if "/" in word and depth < len(closest.path) and "/" in closest.path[depth]:
        return _segment(word, closest.path[depth])
    return " ".join((c.program, *c.path[: depth + 1]))[:80]


def _result(
    s: Snippet, result: str, page: PageIndex | None = None, **extra: object
) -> SnippetCheck:
    where = {"title": page.title, "uri": page.uri} if page is not None else {}
    return SnippetCheck.model_validate(
        {"snippet": s.text[:200], "kind": s.kind, "result": result, "anchor": s.anchor}
        | where
        | extra
    )


def _unknown(words: tuple[str, ...] | list[str], page: PageIndex) -> list[str]:
    return [w for w in words if not is_placeholder(w) and w.isascii() and not page.has(w)]


def _first_word(c: Command) -> str:
    """A word every page command that can match `c` has on its line ("" when none is sure:
    a placeholder, a path, or a flag's value ahead of it)."""
    if not c.path or not c.loose or c.path[0] != c.loose[0]:
        return ""
    word = c.path[0]
    return "" if is_placeholder(word) or "/" in word or not word.isascii() else word


def check_command(s: Snippet, pages: list[PageIndex]) -> SnippetCheck:
    c = s.command
    assert c is not None
    best: tuple[int, PageIndex, str, list[str]] | None = None
    first = _first_word(c)
    for page in pages:
        for d, section in page.commands(c.program, first):
            if not path_ok(c, d, prefix=s.inline):
                continue
            have = set(d.flags)
            missing = [f for f in c.flags if f not in have]
            if not missing:
                return _result(s, "found", page, section=section)
            if best is None or len(missing) < best[0]:
                best = (len(missing), page, section, missing)
    if best is not None:
        _, page, section, missing = best
        elsewhere = all(any(p.has(f) for p in pages) for f in missing)
        return _result(
            s, "partly", page, section=section, missing=tuple(missing[:MAX_MISSING]),
            elsewhere=elsewhere,
        )  # fmt: skip
    return _scattered(s, c, pages)


def _scattered(s: Snippet, c: Command, pages: list[PageIndex]) -> SnippetCheck:
    """No page shows this command: its words in one page are 'partly' (the word where the
    closest command of the page differs is named), else not found (the unknown words)."""
    words = [w for w in (c.program, *c.path, *c.flags) if "/" not in w]
    fewest: list[str] | None = None
    for page in pages:
        unknown = _unknown(words, page)
        if not unknown:
            differs = _departure(c, page.commands(c.program))
            return _result(s, "partly", page, missing=(differs,), elsewhere=True)
        if fewest is None or len(unknown) < len(fewest):
            fewest = unknown
    named = fewest if fewest else [c.program, *c.path[:2]]
    return _result(s, "not_found", missing=tuple(dict.fromkeys(named))[:MAX_MISSING])


def _line_found(tokens: tuple[str, ...], page: PageIndex) -> str | None:
    for d, section in page.code_lines(key_name(tokens), len(tokens)):
        if all(code_token_ok(a, b) for a, b in zip(tokens, d, strict=True)):
            return section
    return None


def check_code(s: Snippet, pages: list[PageIndex]) -> SnippetCheck:
    best: tuple[int, PageIndex, str, list[tuple[str, ...]]] | None = None
    for page in pages:
        sections = [_line_found(line, page) for line in s.lines]
        matched = [sec for sec in sections if sec is not None]
        if len(matched) == len(s.lines):
            return _result(s, "found", page, section=matched[0])
        if best is None or len(matched) > best[0]:
            unmatched = [ln for ln, sec in zip(s.lines, sections, strict=True) if sec is None]
            best = (len(matched), page, matched[0] if matched else "", unmatched)
    if best is None:
        return _result(s, "not_found")
    count, page, section, unmatched = best
    names = [n for line in unmatched for n in identifiers(line)]
    unknown = [n for n in dict.fromkeys(names) if not any(p.has(n) for p in pages)]
    if count == 0 and unknown:
        return _result(s, "not_found", missing=tuple(unknown[:MAX_MISSING]))
    if unknown:
        return _result(s, "partly", page, section=section, missing=tuple(unknown[:MAX_MISSING]))
    line = " ".join(unmatched[0])[:80]
    return _result(s, "partly", page, section=section, missing=(line,), elsewhere=True)


def check_flag(s: Snippet, pages: list[PageIndex]) -> SnippetCheck:
    flag = flag_name(s.text)
    for page in pages:
        if page.has(flag):
            return _result(s, "found", page)
    return _result(s, "not_found", missing=(flag,))
