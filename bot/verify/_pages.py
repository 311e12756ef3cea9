"""A cited page made searchable, for one check: its shell lines and code lines with the
section (heading) each is under, parsed only when an answer asks for them."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from bot.models import Document
from bot.verify.parse import (
    CODE_LANGS,
    Command,
    code_tokens,
    fences,
    has_word,
    inline_spans,
    logical_lines,
    looks_like_command,
    outside,
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


_HEADINGS_RE = re.compile(r"\n {0,3}#{1,6}[ \t]+([^\n]+)")  # from the newline before


def page_index(doc: Document) -> PageIndex:
    """Regexes over the whole page (a line-by-line loop costs several times more)."""
    index = PageIndex(title=doc.title, uri=doc.uri, content=doc.content)
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
