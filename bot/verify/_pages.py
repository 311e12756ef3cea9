"""A cited page made searchable: its commands by program, its code lines by first token and
length, its words, each with the section (heading) it sits under. Built once per page
content and kept in a small in-process LRU (the same pages are cited again and again)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from bot.models import Document
from bot.verify._parse import (
    CODE_LANGS,
    HEADING_RE,
    INLINE_RE,
    SHELL_LANGS,
    Command,
    code_tokens,
    fences,
    logical_lines,
    looks_like_command,
    shell_commands,
    vocabulary,
)

#: page indexes kept in this process (by name and content)
MAX_INDEXED_PAGES = 256


@dataclass(slots=True)
class PageIndex:
    title: str
    uri: str
    #: (command, section) by program
    commands: dict[str, list[tuple[Command, str]]] = field(default_factory=dict)
    #: (tokens, section) by (first token, number of tokens)
    code: dict[tuple[str, int], list[tuple[tuple[str, ...], str]]] = field(default_factory=dict)
    content: str = ""
    _words: frozenset[str] | None = None

    @property
    def words(self) -> frozenset[str]:
        """Every word and flag of the page (computed when a check first needs it)."""
        if self._words is None:
            self._words = vocabulary(self.content)
        return self._words

    def add_command(self, command: Command, section: str) -> None:
        self.commands.setdefault(command.program, []).append((command, section))

    def add_code(self, tokens: tuple[str, ...], section: str) -> None:
        self.code.setdefault((tokens[0], len(tokens)), []).append((tokens, section))


def _sections(lines: list[str]) -> list[str]:
    """The heading each line is under ("" before the first)."""
    current, out = "", []
    in_fence = ""
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            in_fence = "" if in_fence == mark else (in_fence or mark)
        elif not in_fence and stripped.startswith("#"):
            match = HEADING_RE.match(line)
            if match:
                current = match.group(1).strip()
        out.append(current)
    return out


def build_index(doc: Document) -> PageIndex:
    lines = doc.content.splitlines()
    sections = _sections(lines)
    index = PageIndex(title=doc.title, uri=doc.uri, content=doc.content)
    in_code = [False] * len(lines)
    for fence in fences(lines):
        section = sections[fence.start]
        for i in range(fence.start, fence.end + 1):
            in_code[i] = True
        if fence.lang in SHELL_LANGS or fence.lang not in CODE_LANGS:
            for line in logical_lines(fence.lines):
                for command in shell_commands(line):
                    index.add_command(command, section)
        for line in fence.lines:
            tokens = code_tokens(line)
            if tokens is not None:
                index.add_code(tokens, section)
    for number, line in enumerate(lines):
        if in_code[number] or "`" not in line:
            continue
        for match in INLINE_RE.finditer(line):
            span = match.group(1).strip()
            if looks_like_command(span):
                for command in shell_commands(span.removeprefix("$ ")):
                    index.add_command(command, sections[number])
    return index


_CACHE: OrderedDict[tuple[str, int, int], PageIndex] = OrderedDict()


def page_index(doc: Document) -> PageIndex:
    """The page's index, from the LRU when its content was seen before."""
    key = (doc.name, len(doc.content), hash(doc.content))
    found = _CACHE.get(key)
    if found is not None:
        _CACHE.move_to_end(key)
        return found
    built = build_index(doc)
    _CACHE[key] = built
    if len(_CACHE) > MAX_INDEXED_PAGES:
        _CACHE.popitem(last=False)
    return built


def forget_pages() -> None:
    """Empty the LRU (the benchmark measures cold checks with it)."""
    _CACHE.clear()
