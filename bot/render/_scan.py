"""The inline constructs of Markdown text (code, links, HTML, emphasis…), left to right and
not overlapping, in one linear pass (`scan`)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import NamedTuple

_URL_PART = r"(?:<[^<>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
_TITLE_PART = r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?"
#: `(url "title")` after a link's or image's `]`
_TAIL_RE = re.compile(r"\((?P<url>" + _URL_PART + r")" + _TITLE_PART + r"\s*\)")
#: a link's label: plain characters and `[simple]` bracket pairs (one deterministic path)
_LABEL_RE = re.compile(r"(?:[^\[\]\n]|\[[^\[\]\n]*\])*")
_AUTOLINK_RE = re.compile(r"<(?P<url>https?://[^\s<>|]+)>")
_IAL_RE = re.compile(r"\{:[ \t]*[.#][^{}\n]{0,200}\}")
_BR_RE = re.compile(r"<br\s*/?>")
_HTML_RE = re.compile(r"</?(?P<tag>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?:\s[^<>]*)?/?>")
_SPECIAL_RE = re.compile(r"[`!\[<{*_~\\]")
_ANGLE_RE = re.compile(r"[<>]")
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
#: where a closer can stand (zero-width: every position, overlapping ones too)
_CLOSERS = {
    "**": re.compile(r"(?<=\S)(?=\*\*(?!\*))"),
    "*": re.compile(r"(?<=[^\s*])(?=\*(?![\w*]))"),
    "__": re.compile(r"(?<=\S)(?=__(?!\w))"),
    "_": re.compile(r"(?<=[^\s_])(?=_(?!\w))"),
    "~~": re.compile(r"(?<=\S)(?=~~)"),
    "-->": re.compile(r"(?=-->)"),
    "]": re.compile(r"[\]\n]"),
}
#: longest code span body, emphasis body and comment the scanner looks across
_CODE_REACH, _EMPHASIS_REACH, _COMMENT_REACH = 2000, 1000, 5000


class Token(NamedTuple):
    """`a`/`b`: code body; image alt/url; link label/url; autolink url; anchor url/label;
    HTML tag name; strong, em or strike body; the escaped character."""

    kind: str
    start: int
    end: int
    a: str = ""
    b: str = ""


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"  # what `\w` matches in a str pattern


class _CodeRuns:
    def __init__(self, text: str) -> None:
        self.runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
        self.by_length: dict[int, list[int]] = {}
        for start, end in self.runs:
            self.by_length.setdefault(end - start, []).append(start)
        self.lengths = sorted(self.by_length)
        self.run_at = 0

    def _next_of_length(self, length: int, after: int) -> int | None:
        starts = self.by_length[length]
        at = bisect_right(starts, after)
        return starts[at] if at < len(starts) else None

    def span(self, pos: int) -> tuple[int, int, int] | int:
        """`(start, ticks, closer)` of the code span the regex `(`+)(.{1,2000}?)(?<!`)\\1(?!`)`
        would find first from `pos`, or the end of the run."""
        while self.runs[self.run_at][1] <= pos:
            self.run_at += 1
        end = self.runs[self.run_at][1]
        best: tuple[int, int, int] | None = None
        for length in self.lengths:  # at most min(run length, distinct lengths) rounds
            if length > end - pos:
                break
            closer = self._next_of_length(length, end)
            if closer is None:
                continue
            start = max(pos, closer - length - _CODE_REACH)  # the closer within reach
            if start <= end - length and (best is None or start <= best[0]):
                best = (start, length, closer)  # earliest start; longest opener there
        return best if best is not None else end


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.closers: dict[str, list[int]] = {}
        self.tails: dict[int, re.Match[str] | None] = {}
        self.code: _CodeRuns | None = None

    def closer(self, marker: str, low: int, reach: int) -> int | None:
        positions = self.closers.get(marker)
        if positions is None:
            found = [m.start() for m in _CLOSERS[marker].finditer(self.text)]
            positions = self.closers[marker] = found
        at = bisect_left(positions, low)
        return positions[at] if at < len(positions) and positions[at] <= low - 1 + reach else None

    def tail(self, pos: int) -> re.Match[str] | None:
        if pos not in self.tails:
            self.tails[pos] = _TAIL_RE.match(self.text, pos)
        return self.tails[pos]

    def code_span(self, pos: int) -> Token | int:
        if self.code is None:
            self.code = _CodeRuns(self.text)
        found = self.code.span(pos)
        if isinstance(found, int):
            return found
        start, ticks, closer = found
        return Token("code", start, closer + ticks, self.text[start + ticks : closer])

    def link_like(self, pos: int) -> Token | None:
        text = self.text
        if text.startswith("![", pos):
            end = self.closer("]", pos + 2, len(text))
            if end is None or text[end] != "]" or not (tail := self.tail(end + 1)):
                return None
            return Token("image", pos, tail.end(), text[pos + 2 : end], tail["url"])
        if text[pos] != "[":
            return None
        label = _LABEL_RE.match(text, pos + 1)
        assert label is not None  # it matches the empty string
        end = label.end()
        if not text.startswith("](", end) or not (tail := self.tail(end + 1)):
            return None
        return Token("link", pos, tail.end(), label.group(), tail["url"])

    def angle(self, pos: int) -> Token | None:
        text = self.text
        if (auto := _AUTOLINK_RE.match(text, pos)) is not None:
            return Token("autolink", pos, auto.end(), auto["url"])
        if text.startswith("<!--", pos):
            end = self.closer("-->", pos + 4, _COMMENT_REACH + 1)
            if end is not None:
                return Token("comment", pos, end + 3)
        if (br := _BR_RE.match(text, pos)) is not None:
            return Token("br", pos, br.end())
        if (anchor := self.anchor(pos)) is not None:
            return anchor
        if (html := _HTML_RE.match(text, pos)) is not None:
            return Token("html", pos, html.end(), html["tag"])
        return None

    def anchor(self, pos: int) -> Token | None:
        """`<a … href="url" …>label</a>`, read once."""
        text = self.text
        if not text.startswith("<a", pos) or pos + 2 >= len(text) or not text[pos + 2].isspace():
            return None
        edge = _ANGLE_RE.search(text, pos + 3)
        if edge is None or edge.group() != ">":
            return None
        href = text.find('href="', pos + 3, edge.start())
        quote = text.find('"', href + 6, edge.start()) if href >= 0 else -1
        if quote < 0:
            return None
        label_end = _ANGLE_RE.search(text, edge.end())
        if label_end is None or not text.startswith("</a>", label_end.start()):
            return None
        url, label = text[href + 6 : quote], text[edge.end() : label_end.start()]
        return Token("anchor", pos, label_end.start() + 4, url, label)

    def emphasis(self, pos: int) -> Token | None:
        text = self.text
        char = text[pos]
        before = text[pos - 1] if pos else " "
        double = text.startswith(char * 2, pos)
        if char == "~":
            if not double or pos + 2 >= len(text) or text[pos + 2].isspace():
                return None
            return self.body("strike", pos, "~~")
        if _is_word(before) or (char == "*" and before == "*"):
            return None
        if double and pos + 2 < len(text) and not text[pos + 2].isspace():
            strong = self.body("strong", pos, char * 2)
            if strong is not None:
                return strong
        after = text[pos + 1] if pos + 1 < len(text) else " "
        if after.isspace() or after == char:
            return None
        return self.body("em", pos, char)

    def body(self, kind: str, pos: int, marker: str) -> Token | None:
        opened = pos + len(marker)
        closer = self.closer(marker, opened + 1, _EMPHASIS_REACH)
        if closer is None:
            return None
        return Token(kind, pos, closer + len(marker), self.text[opened:closer])

    def at(self, pos: int) -> Token | int | None:
        char = self.text[pos]
        if char == "`":
            return self.code_span(pos)
        if char in "![":
            return self.link_like(pos)
        if char == "<":
            return self.angle(pos)
        if char == "{":
            ial = _IAL_RE.match(self.text, pos)
            return Token("ial", pos, ial.end()) if ial is not None else None
        if char in "*_~":
            return self.emphasis(pos)
        following = self.text[pos + 1 : pos + 2]  # a backslash
        return Token("escaped", pos, pos + 2, following) if following in _ESCAPABLE else None


def scan(text: str) -> list[Token]:
    """The inline constructs of `text`, left to right, not overlapping."""
    scanner = _Scanner(text)
    tokens: list[Token] = []
    pos = 0
    while (special := _SPECIAL_RE.search(text, pos)) is not None:
        found = scanner.at(special.start())
        if isinstance(found, Token):
            tokens.append(found)
            pos = found.end
        elif isinstance(found, int):  # a backtick run with no code span in it
            pos = found
        else:
            pos = special.start() + 1
    return tokens
