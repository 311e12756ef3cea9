"""Markdown to one mrkdwn string, or to section blocks within Slack's 3000 characters: split
between paragraphs, then lines, then inside a line; a split code block is reopened."""

from __future__ import annotations

import re

from bot.render._convert import Part, part_text, to_parts
from bot.render._text import SECTION_CHARS, Block, divider, section

#: markup the renderer wrote (a link, a mention, an entity), never cut inside; linear
_TOKEN_RE = re.compile(r"<[^<>\n]*>|&(?:amp|lt|gt);")
_LINK_TOKEN_RE = re.compile(r"<[^<>|\n]*\|(?P<label>[^<>\n]*)>")
_OPEN, _CLOSE = "```\n", "\n```"
_MIN_MAX_CHARS = 40


def cut_source(md: str, limit: int) -> tuple[str, int]:
    """`md` cut to `limit` (at a late line break), and how many characters were left out."""
    if len(md) <= limit:
        return md, 0
    cut = md.rfind("\n", limit * 3 // 4, limit)
    cut = cut if cut > 0 else limit
    return md[:cut], len(md) - cut


def markdown_to_blocks(
    md: str, *, max_chars: int = SECTION_CHARS, base_url: str | None = None
) -> list[Block]:
    """Section and divider blocks, each at most `max_chars`; callers fit the count."""
    if not _MIN_MAX_CHARS <= max_chars <= 3000:
        raise ValueError(f"max_chars must be between {_MIN_MAX_CHARS} and 3000")
    packer = _Packer(max_chars)
    for part in to_parts(md, base_url):
        packer.add(part)
    packer.flush()
    return packer.blocks


class _Packer:
    """Fills sections up to `max_chars`, part by part, then line by line."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.blocks: list[Block] = []
        self.buf = ""
        self.tight = False  # the last part added was a heading
        self.heading = ""  # that heading, carried to the next section if its body moves

    def flush(self) -> None:
        if self.buf.strip():
            self.blocks.append(section(self.buf))
        self.buf = ""

    def add(self, part: Part) -> None:
        if part.kind == "divider":
            self.flush()
            if self.blocks and self.blocks[-1]["type"] != "divider":
                self.blocks.append(divider())
            self.tight, self.heading = False, ""
            return
        sep = ("\n" if self.tight else "\n\n") if self.buf else ""
        whole = part_text(part)
        if len(self.buf) + len(sep) + len(whole) <= self.max_chars:
            self.buf += sep + whole
        elif len(whole) + len(self.heading) + 1 <= self.max_chars:
            self.move_to_new_section(whole)
        elif part.kind == "code":
            self.add_code(part, sep)
        else:
            self.add_lines(part, sep)
        self.tight = part.tight
        self.heading = whole if part.tight else ""

    def move_to_new_section(self, whole: str) -> None:
        """Start a new section with `whole`, taking along a heading that would be orphaned."""
        carried = ""
        if self.heading and self.buf.endswith(self.heading):
            self.buf = self.buf[: -len(self.heading)].rstrip("\n")
            carried = self.heading + "\n"
        self.flush()
        self.buf = carried + whole

    def add_lines(self, part: Part, sep: str) -> None:
        for index, line in enumerate(part.lines):
            joiner = sep if index == 0 else "\n"
            for piece in hard_split(line, self.max_chars):
                if self.buf and len(self.buf) + len(joiner) + len(piece) <= self.max_chars:
                    self.buf += joiner + piece
                else:
                    self.flush()
                    self.buf = piece
                joiner = "\n"

    def add_code(self, part: Part, sep: str) -> None:
        room = self.max_chars - len(self.buf) - len(sep) - len(_OPEN) - len(_CLOSE)
        if room < self.max_chars // 4:
            self.flush()
            sep = ""
        self.buf += sep + _OPEN
        empty = True  # nothing in the current ``` block yet
        limit = self.max_chars - len(_OPEN) - len(_CLOSE)
        for line in part.lines:
            for piece in hard_split(line, limit):
                joiner = "" if empty else "\n"
                if len(self.buf) + len(joiner) + len(piece) + len(_CLOSE) > self.max_chars:
                    if empty:  # no room for even one line here: start the block afresh
                        self.buf = self.buf.removesuffix(_OPEN).rstrip("\n")
                    else:
                        self.buf += _CLOSE
                    self.flush()
                    self.buf, joiner = _OPEN, ""
                self.buf += joiner + piece
                empty = False
        self.buf += _CLOSE


def hard_split(line: str, limit: int) -> list[str]:
    """`line` in pieces of at most `limit`, never cut inside a link, mention or entity."""
    if len(line) <= limit:
        return [line]
    quoted = line.startswith("> ")
    line = _LINK_TOKEN_RE.sub(
        lambda m: m.group() if len(m.group()) < limit // 2 else m["label"], line
    )
    pieces: list[str] = []
    while len(line) > limit:
        cut = _cut_point(line, limit)
        pieces.append(line[:cut])
        line = line[cut:]
        if quoted:  # keep the rest of a quoted line inside the quote
            line = "> " + line
    pieces.append(line)
    return pieces


def _cut_point(line: str, limit: int) -> int:
    cut = limit
    space = line.rfind(" ", limit // 2, limit)
    if space > 0:
        cut = space + 1
    for token in _TOKEN_RE.finditer(line, max(0, cut - limit // 2 - 1), cut + limit // 2 + 1):
        if token.start() < cut < token.end():
            return token.start() if token.start() > 0 else token.end()
    return cut
