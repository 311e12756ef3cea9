"""Verified answers (docs/verified-answers.md): each command, code block and bare `--flag` of
a generated answer looked up in the pages it cites: found (where), partly found (what is
missing, or only elsewhere in the pages) or not found. Pure: nothing is run, fetched or stored."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.models import Document, SnippetCheck, Verification
from bot.verify.parse import (
    CODE_LANGS,
    IDENT_RE,
    SHELL_LANGS,
    Command,
    code_token_ok,
    code_tokens,
    fences,
    flag_name,
    has_word,
    identifiers,
    inline_spans,
    is_placeholder,
    logical_lines,
    looks_like_command,
    outside,
    shell_commands,
    value_ok,
)

#: most snippets one answer has checked (a longer answer's rest is left unmarked)
MAX_SNIPPETS = 40
#: most missing words named per snippet
MAX_MISSING = 3
_BARE_FLAG_CHARS = 60
_HEADINGS_RE = re.compile(r"\n {0,3}#{1,6}[ \t]+([^\n]+)")  # from the newline before


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
    for end in range(number, len(lines) - 1):
        following = lines[end + 1]
        if not following.strip() or following.lstrip().startswith(("```", "~~~")):
            return end
    return len(lines) - 1


def _block_snippets(lang: str, body: tuple[str, ...], anchor: int) -> list[Snippet]:
    if lang in CODE_LANGS:
        kept = [(line.strip(), t) for line in body if (t := code_tokens(line)) is not None]
        lines = tuple(t for _, t in kept)
        return [Snippet("code", kept[0][0], anchor, lines=lines)] if kept else []
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


@dataclass(slots=True)
class PageIndex:
    doc: Document
    #: logical shell lines (continuations joined) and command-like inline spans
    shell: list[tuple[str, str]] = field(default_factory=list)
    #: every fenced line, as written
    code: list[tuple[str, str]] = field(default_factory=list)

    def has(self, word: str) -> bool:  # anywhere, prose included
        return has_word(self.doc.content, word)

    def commands(self, program: str, word: str = "") -> list[tuple[Command, str]]:
        """The page's commands of `program` (on lines that have `word`), with their sections."""
        return [
            (command, section)
            for line, section in self.shell
            if program in line and word in line
            for command in shell_commands(line)
            if command.program == program
        ]

    def code_section(self, tokens: tuple[str, ...]) -> str | None:
        """The section of the first code line `tokens` can stand for (None: the page has none)."""
        names = [t for t in tokens if IDENT_RE.match(t)]
        key = max(names, key=len) if names else tokens[0]  # a quick filter
        for raw, section in self.code:
            line = code_tokens(raw) if key in raw else None
            if line and len(line) == len(tokens) and all(map(code_token_ok, tokens, line)):
                return section
        return None


def page_index(doc: Document) -> PageIndex:
    """Regexes over the whole page (a line-by-line loop costs several times more)."""
    index = PageIndex(doc)
    content = "\n" + doc.content
    blocks = fences(content)
    starts = [b.start for b in blocks]
    heads = [  # a `# comment` in a block is no heading
        (h.start(), h.group(1).strip().rstrip("#").strip())
        for h in _HEADINGS_RE.finditer(content)
        if outside(blocks, starts, h.start())
    ]
    head_at = [p for p, _ in heads]

    def section(position: int) -> str:
        at = bisect_right(head_at, position) - 1
        return heads[at][1] if at >= 0 else ""

    for block in blocks:
        where = section(block.start)
        index.code.extend((line, where) for line in block.lines)
        if block.lang not in CODE_LANGS:
            index.shell.extend((line, where) for line in logical_lines(block.lines))
    for at, text in inline_spans(content, blocks):
        if looks_like_command(text):
            index.shell.append((text, section(at)))
    return index


def _same_words(a: tuple[str, ...], d: tuple[str, ...]) -> bool:
    return len(a) == len(d) and all(value_ok(x, y) for x, y in zip(a, d, strict=True))


def path_ok(c: Command, d: Command, *, prefix: bool = False) -> bool:
    """The same words, whichever flags took values; `prefix`: the arguments may be left out."""
    if prefix and not c.flags and _same_words(c.path, d.path[: len(c.path)]):
        return True
    return any(_same_words(a, b) for a in (c.path, c.loose) for b in (d.path, d.loose))


def _agree(a: list[str] | tuple[str, ...], d: list[str] | tuple[str, ...]) -> int:
    n = 0
    while n < min(len(a), len(d)) and value_ok(a[n], d[n]):
        n += 1
    return n


def _departure(c: Command, shown: list[tuple[Command, str]]) -> str:
    """Where `c` leaves the closest command shown: up to its first word (or path segment)."""
    if not shown:
        return c.program
    depth, closest = max(((_agree(c.path, d.path), d) for d, _ in shown), key=lambda p: p[0])
    if depth >= len(c.path):
        return " ".join((c.program, *c.path))[:80]
    word = c.path[depth]
    if "/" in word and depth < len(closest.path) and "/" in closest.path[depth]:
        parts, shown_parts = word.split("/"), closest.path[depth].split("/")
        n = _agree(parts, shown_parts)  # the first segment the page's path does not have
        return parts[n] if n < min(len(parts), len(shown_parts)) else word
    return " ".join((c.program, *c.path[: depth + 1]))[:80]


def _result(s: Snippet, result: str, page: PageIndex | None = None, **extra: Any) -> SnippetCheck:
    if page is not None:
        extra |= {"title": page.doc.title, "uri": page.doc.uri}
    extra["missing"] = tuple(extra.get("missing", ())[:MAX_MISSING])
    return SnippetCheck(snippet=s.text[:200], kind=s.kind, result=result, anchor=s.anchor, **extra)


def check_command(s: Snippet, pages: list[PageIndex]) -> SnippetCheck:
    c = s.command
    assert c is not None
    best: tuple[int, PageIndex, str, list[str]] | None = None
    # a word on every page line whose command can match `c` ("" when none is sure)
    first = c.path[0] if c.path and c.loose and c.path[0] == c.loose[0] else ""
    if is_placeholder(first) or "/" in first or not first.isascii():
        first = ""
    for page in pages:
        for d, section in page.commands(c.program, first):
            if not path_ok(c, d, prefix=s.inline):
                continue
            missing = [f for f in c.flags if f not in d.flags]
            if not missing:
                return _result(s, "found", page, section=section)
            if best is None or len(missing) < best[0]:
                best = (len(missing), page, section, missing)
    if best is not None:
        _, page, section, missing = best
        elsewhere = all(any(p.has(f) for p in pages) for f in missing)
        return _result(s, "partly", page, missing=missing, section=section, elsewhere=elsewhere)
    # no page shows `c`: 'partly' where one page has all its words, else 'not_found'
    words = [w for w in (c.program, *c.path, *c.flags) if "/" not in w]
    fewest: list[str] | None = None
    for page in pages:
        unknown = [w for w in words if not is_placeholder(w) and w.isascii() and not page.has(w)]
        if not unknown:
            differs = _departure(c, page.commands(c.program))
            return _result(s, "partly", page, missing=[differs], elsewhere=True)
        if fewest is None or len(unknown) < len(fewest):
            fewest = unknown
    named = fewest if fewest else [c.program, *c.path[:2]]
    return _result(s, "not_found", missing=list(dict.fromkeys(named)))


def check_code(s: Snippet, pages: list[PageIndex]) -> SnippetCheck:
    best: tuple[int, PageIndex, str, list[tuple[str, ...]]] | None = None
    for page in pages:
        sections = [page.code_section(line) for line in s.lines]
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
        return _result(s, "not_found", missing=unknown)
    if unknown:
        return _result(s, "partly", page, missing=unknown, section=section)
    line = " ".join(unmatched[0])[:80]
    return _result(s, "partly", page, missing=[line], section=section, elsewhere=True)


def check_flag(s: Snippet, pages: list[PageIndex]) -> SnippetCheck:
    flag = flag_name(s.text)
    for page in pages:
        if page.has(flag):
            return _result(s, "found", page)
    return _result(s, "not_found", missing=[flag])


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
    checks = tuple(_result(s, "unchecked") for s in snippets(markdown))
    return Verification(status="unchecked", snippets=checks)
