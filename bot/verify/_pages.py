"""A cited page made searchable, for one check: its shell lines and code lines with the
section (heading) each is under, parsed only when an answer asks for them."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from bot.models import Document
from bot.verify.parse import (
    CODE_LANGS,
    INLINE_RE,
    Command,
    code_tokens,
    has_word,
    logical_lines,
    looks_like_command,
    shell_commands,
)

_IDENT_RE = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(slots=True)
class PageIndex:
    title: str
    uri: str
    content: str
    #: logical shell lines (continuations joined) and command-like inline spans
    shell: list[tuple[str, str]] = field(default_factory=list)
    #: every fenced line, as written
    code: list[tuple[str, str]] = field(default_factory=list)

    def has(self, word: str) -> bool:
        """Whether the page has `word` as a whole word anywhere, prose included."""
        return has_word(self.content, word)

    def commands(self, program: str, word: str = "") -> list[tuple[Command, str]]:
        """The page's commands of `program` (on lines that have `word`), with their sections."""
        return [
            (command, section)
            for line, section in self.shell
            if program in line and word in line
            for command in shell_commands(line)
            if command.program == program
        ]

    def code_lines(self, key: str, size: int) -> list[tuple[tuple[str, ...], str]]:
        """The page's code lines of `size` tokens that contain the name `key`."""
        tokens = [(code_tokens(raw), section) for raw, section in self.code if key in raw]
        return [(t, section) for t, section in tokens if t is not None and len(t) == size]


def key_name(tokens: tuple[str, ...]) -> str:
    """The name a matching page line must contain (the longest one the line uses)."""
    names = [t for t in tokens if _IDENT_RE.fullmatch(t)]
    return max(names, key=len) if names else tokens[0]


# each starts with a literal newline (the page is searched with one put in front): the
# regex engine then skips to newlines instead of trying every position
_FENCE_LINE_RE = re.compile(r"\n[ \t]*(`{3,}|~{3,})[ \t]*([^`\s]*)[^\n]*")
_HEADINGS_RE = re.compile(r"\n {0,3}#{1,6}[ \t]+([^\n]+)")


def _blocks(content: str) -> list[tuple[int, int, str, list[str]]]:
    """Fenced blocks: start, end, language, lines (fence lines found by one regex, paired
    here; an unclosed fence runs to the end)."""
    out = []
    opened: re.Match[str] | None = None
    for match in _FENCE_LINE_RE.finditer(content):
        if opened is None:
            opened = match
        elif match.group(1).startswith(opened.group(1)) and not match.group(2):
            body = content[opened.end() + 1 : match.start()].splitlines()
            lang = opened.group(2).lower().strip("{}.")
            out.append((opened.start(), match.end(), lang, body))
            opened = None
    if opened is not None:
        lang = opened.group(2).lower().strip("{}.")
        out.append((opened.start(), len(content), lang, content[opened.end() + 1 :].splitlines()))
    return out


def page_index(doc: Document) -> PageIndex:
    """Regexes over the whole page (a line-by-line loop costs several times more)."""
    index = PageIndex(title=doc.title, uri=doc.uri, content=doc.content)
    content = "\n" + doc.content
    blocks = _blocks(content)
    starts = [start for start, _, _, _ in blocks]
    heads: list[tuple[int, str]] = []
    for h in _HEADINGS_RE.finditer(content):
        at = bisect_right(starts, h.start()) - 1
        if at < 0 or h.start() >= blocks[at][1]:  # a `# comment` in a block is no heading
            heads.append((h.start(), h.group(1).strip().rstrip("#").strip()))
    head_at = [p for p, _ in heads]

    def section(position: int) -> str:
        at = bisect_right(head_at, position) - 1
        return heads[at][1] if at >= 0 else ""

    for start, _, lang, body in blocks:
        where = section(start)
        index.code.extend((line, where) for line in body)
        if lang not in CODE_LANGS:
            index.shell.extend((line, where) for line in logical_lines(body))
    for span in INLINE_RE.finditer(content):
        at = bisect_right(starts, span.start()) - 1
        if at >= 0 and span.start() < blocks[at][1]:
            continue
        text = span.group(1).strip().removeprefix("$ ")
        if looks_like_command(text):
            index.shell.append((text, section(span.start())))
    return index
