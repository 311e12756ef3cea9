"""One answer checked against the pages it cites. What is checked: each command of its shell
blocks and inline spans, each code block in a programming language, each bare `--flag` it
names. Each is found (where), partly found (what is missing, or only elsewhere in the
pages), or not found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.models import Document, SnippetCheck, Verification
from bot.verify._pages import PageIndex, key_name, page_index
from bot.verify.parse import (
    CODE_LANGS,
    SHELL_LANGS,
    Command,
    code_token_ok,
    code_tokens,
    fences,
    flag_name,
    identifiers,
    inline_spans,
    is_placeholder,
    logical_lines,
    looks_like_command,
    shell_commands,
    value_ok,
)

#: most snippets one answer has checked (a longer answer's rest is left unmarked)
MAX_SNIPPETS = 40
_BARE_FLAG_CHARS = 60


@dataclass(frozen=True, slots=True)
class Snippet:
    kind: str  # "command", "code" or "flag"
    text: str
    anchor: int
    command: Command | None = None
    lines: tuple[tuple[str, ...], ...] = ()
    #: an inline span: a command named in passing (`gcloud run deploy`) may be a prefix
    inline: bool = False


def _paragraph_end(lines: list[str], number: int) -> int:
    end = number
    while (
        end + 1 < len(lines)
        and lines[end + 1].strip()
        and not lines[end + 1].lstrip().startswith(("```", "~~~"))
    ):
        end += 1
    return end


def _block_snippets(lang: str, body: tuple[str, ...], anchor: int) -> list[Snippet]:
    if lang in CODE_LANGS:
        kept = [t for t in (code_tokens(line) for line in body) if t is not None]
        if not kept:
            return []
        first = next(line.strip() for line in body if code_tokens(line) is not None)
        return [Snippet("code", first, anchor, lines=tuple(kept))]
    if lang not in SHELL_LANGS:
        return []  # configuration (YAML, JSON, XML…): values are the reader's own
    return [
        Snippet("command", command.text, anchor, command=command)
        for line in logical_lines(body)
        for command in shell_commands(line)
    ]


def snippets(markdown: str) -> list[Snippet]:
    """The answer's checkable snippets in reading order (at most MAX_SNIPPETS)."""
    text = "\n" + markdown.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")[1:]
    blocks = fences(text)
    found: list[Snippet] = []
    for fence in blocks:
        end = min(text.count("\n", 0, fence.end), len(lines) - 1)
        found.extend(_block_snippets(fence.lang, fence.lines, end))
    for at, span in inline_spans(text, blocks):
        anchor = _paragraph_end(lines, text.count("\n", 0, at) - 1)
        if span.startswith("--") and " " not in span and len(span) <= _BARE_FLAG_CHARS:
            found.append(Snippet("flag", span.split("=", 1)[0], anchor))
        elif looks_like_command(span):
            found.extend(
                Snippet("command", c.text, anchor, command=c, inline=True)
                for c in shell_commands(span)
            )
    found.sort(key=lambda s: s.anchor)
    return found[:MAX_SNIPPETS]


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


def count_commands(markdown: str) -> int:
    """How many commands and code blocks of `markdown` a check looks at (cheap: no pages)."""
    return len(snippets(markdown))


def check_answer(markdown: str, documents: Sequence[Document]) -> Verification:
    """Every snippet of the answer `markdown` matched against `documents` (the cited pages)."""
    found = snippets(markdown)
    if not found:
        return Verification(status="checked")
    pages = [page_index(doc) for doc in documents]
    checks = {"command": check_command, "code": check_code, "flag": check_flag}
    return Verification(status="checked", snippets=tuple(checks[s.kind](s, pages) for s in found))


def unchecked(markdown: str) -> Verification:
    """The answer's snippets, each 'unchecked' (the pages could not be had)."""
    return Verification(
        status="unchecked",
        snippets=tuple(
            SnippetCheck(snippet=s.text[:200], kind=s.kind, result="unchecked", anchor=s.anchor)
            for s in snippets(markdown)
        ),
    )
